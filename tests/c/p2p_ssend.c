/* Synchronous sends (MPI-3.1 section 3.4: complete only once the matching receive has
 * started) in a ring, every round:
 * - MPI_Issend, MPI_Ssend_init + MPI_Start: not complete (MPI_Test,
 *   MPI_Request_get_status) before the next rank posts its receive, which it does only
 *   after a barrier this rank enters after testing; complete after;
 * - the second of two synchronous sends of one stream, which the receiver pulls ahead
 *   of its receive once it took the first: not complete either;
 * - MPI_Ssend to a rank whose receive is posted (no deadlock), to MPI_PROC_NULL;
 * - MPI_Issend to a rank that computes WORK_MS before it receives (a replica killed
 *   while it waits changes nothing);
 * - MPI_Cancel of a pending MPI_Issend: the wait returns, not cancelled, and the message
 *   is still delivered;
 * - MPI_Waitany over a synchronous send and a receive.
 * Rank 0 prints one line that the test compares. Arguments: [ROUNDS [WORK_MS [STRICT]]]
 * (20, 0, 1). STRICT 0 leaves out the checks that a send is not complete yet: a replica
 * regenerated from the start replays sends whose receives were posted long before, so
 * its MPI_Test may find them complete where its sibling's did not (as a replayed
 * receive's may find its message there). */
#include <mpi.h>
#include <time.h>
#include "check.h"

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int work_ms = argc > 2 ? atoi(argv[2]) : 0;
    int strict = argc > 3 ? atoi(argv[3]) : 1;
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Comm comm = MPI_COMM_WORLD;
    double sum = 0;
    int flag, x, y;
    MPI_Request req, reqs[2];
    MPI_Status st;

    int v = rank;
    MPI_Request pers;
    CHECK_OK(MPI_Ssend_init(&v, 1, MPI_INT, next, 6, comm, &pers));
    for (int round = 0; round < rounds; round++) {
        v = rank * 1000 + round;

        /* Not complete before the receive is posted. */
        CHECK_OK(MPI_Issend(&v, 1, MPI_INT, next, 1, comm, &req));
        CHECK_OK(MPI_Test(&req, &flag, &st));
        CHECK(!strict || flag == 0);
        if (!flag) {
            CHECK_OK(MPI_Request_get_status(req, &flag, &st));
            CHECK(!strict || flag == 0);
        }
        CHECK_OK(MPI_Barrier(comm));
        CHECK_OK(MPI_Recv(&x, 1, MPI_INT, prev, 1, comm, &st));
        CHECK(x == prev * 1000 + round);
        CHECK_OK(MPI_Wait(&req, &st));
        CHECK(req == MPI_REQUEST_NULL);
        sum += x;

        /* The second of two of one stream, pulled ahead of its receive. */
        CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, prev, 2, comm, &req));
        CHECK_OK(MPI_Ssend(&v, 1, MPI_INT, next, 2, comm));
        CHECK_OK(MPI_Wait(&req, &st));
        CHECK(x == prev * 1000 + round);
        int w = v + 1;
        CHECK_OK(MPI_Issend(&w, 1, MPI_INT, next, 2, comm, &req));
        CHECK_OK(MPI_Test(&req, &flag, &st));
        CHECK(!strict || flag == 0);
        CHECK_OK(MPI_Barrier(comm));
        CHECK_OK(MPI_Recv(&y, 1, MPI_INT, prev, 2, comm, &st));
        CHECK(y == x + 1);
        CHECK_OK(MPI_Wait(&req, &st));
        sum += y;

        /* The persistent form. */
        CHECK_OK(MPI_Start(&pers));
        CHECK_OK(MPI_Test(&pers, &flag, &st));
        CHECK(!strict || flag == 0);
        CHECK_OK(MPI_Barrier(comm));
        CHECK_OK(MPI_Recv(&x, 1, MPI_INT, prev, 6, comm, &st));
        CHECK(x == prev * 1000 + round);
        CHECK_OK(MPI_Wait(&pers, &st));
        CHECK(pers != MPI_REQUEST_NULL);

        /* To MPI_PROC_NULL: at once. */
        CHECK_OK(MPI_Ssend(&v, 1, MPI_INT, MPI_PROC_NULL, 3, comm));

        /* To a rank that computes first. */
        CHECK_OK(MPI_Issend(&v, 1, MPI_INT, next, 4, comm, &req));
        if (work_ms > 0) nanosleep(&work, NULL);
        CHECK_OK(MPI_Recv(&x, 1, MPI_INT, prev, 4, comm, &st));
        CHECK_OK(MPI_Wait(&req, &st));
        CHECK(x == prev * 1000 + round);
        sum += x;

        /* Cancelled while it waits: it completes, not cancelled, and is delivered. */
        CHECK_OK(MPI_Issend(&v, 1, MPI_INT, next, 5, comm, &req));
        CHECK_OK(MPI_Cancel(&req));
        CHECK_OK(MPI_Wait(&req, &st));
        CHECK_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0);
        CHECK_OK(MPI_Barrier(comm));
        CHECK_OK(MPI_Recv(&x, 1, MPI_INT, prev, 5, comm, &st));
        CHECK(x == prev * 1000 + round);

        /* Waitany over a synchronous send and a receive: both, in either order. */
        CHECK_OK(MPI_Issend(&v, 1, MPI_INT, next, 7, comm, &reqs[0]));
        CHECK_OK(MPI_Irecv(&y, 1, MPI_INT, prev, 7, comm, &reqs[1]));
        int seen = 0;
        for (int k = 0; k < 2; k++) {
            int i = -1;
            CHECK_OK(MPI_Waitany(2, reqs, &i, &st));
            CHECK((i == 0 || i == 1) && !(seen & (1 << i)) && reqs[i] == MPI_REQUEST_NULL);
            seen |= 1 << i;
        }
        CHECK(y == prev * 1000 + round);
        sum += y;
    }
    CHECK_OK(MPI_Request_free(&pers));

    double all = 0;
    CHECK_OK(MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, comm));
    if (rank == 0) printf("p2p_ssend: ok size %d checksum %.2f\n", size, all);
    CHECK_OK(MPI_Finalize());
    return 0;
}
