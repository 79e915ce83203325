/* MPI_Cancel of receives (MPI-3.1 section 3.8.4) and MPI_Test_cancelled, in a ring,
 * every round: a receive nobody matches (specific, MPI_ANY_SOURCE, MPI_ANY_SOURCE with
 * MPI_ANY_TAG on a communicator nobody sends on), cancelled, completes with the cancelled
 * flag; a receive that completed is not cancelled and keeps its data; a receive
 * cancelled while its message may be on its way is either cancelled (the message then
 * goes to the next receive) or not (it has the data), never both; of two receives of
 * one stream with one message, the first cancelled, exactly one gets it; a persistent
 * receive is cancelled, started again and cancelled again; cancelling a send changes
 * nothing. Whatever timing decides, every replica of a rank must take the same outcome,
 * or the ring's data would not add up. Rank 0 prints one line that the test compares.
 * Arguments: [ROUNDS [WORK_MS]] (20, 0). */
#include <mpi.h>
#include <time.h>
#include "check.h"

#define N 64

static int cancelled(MPI_Request *r) {
    MPI_Status st;
    int flag = -1;
    CHECK_OK(MPI_Cancel(r));
    CHECK_OK(MPI_Wait(r, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0 || flag == 1);
    return flag;
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int work_ms = argc > 2 ? atoi(argv[2]) : 0;
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Comm quiet;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &quiet));
    double sum = 0;
    int x = -1;
    MPI_Request r, r2;
    MPI_Status st;

    for (int round = 0; round < rounds; round++) {
        /* Receives nobody matches. */
        CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, prev, 900, MPI_COMM_WORLD, &r));
        CHECK(cancelled(&r) == 1 && r == MPI_REQUEST_NULL && x == -1);
        CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 901, MPI_COMM_WORLD, &r));
        CHECK(cancelled(&r) == 1 && x == -1);
        CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &r));
        CHECK(cancelled(&r) == 1 && x == -1);

        /* A receive that completed: not cancelled, data intact. */
        double out[N], in[N];
        for (int i = 0; i < N; i++) out[i] = rank * 1000.0 + round + i * 0.25;
        CHECK_OK(MPI_Irecv(in, N, MPI_DOUBLE, prev, round, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Send(out, N, MPI_DOUBLE, next, round, MPI_COMM_WORLD));
        int done = 0;
        while (!done) CHECK_OK(MPI_Request_get_status(r, &done, &st));
        CHECK(cancelled(&r) == 0);
        for (int i = 0; i < N; i++) CHECK(in[i] == prev * 1000.0 + round + i * 0.25);
        sum += in[N - 1];

        /* Cancelled while the message may be on its way: either outcome, the data once. */
        for (int i = 0; i < N; i++) in[i] = -1;
        CHECK_OK(MPI_Irecv(in, N, MPI_DOUBLE, prev, 1000 + round, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Send(out, N, MPI_DOUBLE, next, 1000 + round, MPI_COMM_WORLD));
        if (cancelled(&r)) {
            CHECK(in[0] == -1);
            CHECK_OK(MPI_Recv(in, N, MPI_DOUBLE, prev, 1000 + round, MPI_COMM_WORLD, &st));
        }
        for (int i = 0; i < N; i++) CHECK(in[i] == prev * 1000.0 + round + i * 0.25);
        sum += in[1];

        /* Two receives of one stream, one message, the first cancelled. */
        int a = -1, b = -1, v = rank * 10 + round;
        CHECK_OK(MPI_Irecv(&a, 1, MPI_INT, prev, 904, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Irecv(&b, 1, MPI_INT, prev, 904, MPI_COMM_WORLD, &r2));
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, next, 904, MPI_COMM_WORLD));
        if (cancelled(&r)) {
            CHECK_OK(MPI_Wait(&r2, &st));
            CHECK(a == -1 && b == prev * 10 + round && st.MPI_TAG == 904);
        } else {
            CHECK(a == prev * 10 + round && cancelled(&r2) == 1 && b == -1);
        }
        sum += prev * 10 + round;

        /* A persistent receive, cancelled twice. */
        CHECK_OK(MPI_Recv_init(&x, 1, MPI_INT, prev, 902, MPI_COMM_WORLD, &r));
        for (int k = 0; k < 2; k++) {
            CHECK_OK(MPI_Start(&r));
            CHECK(cancelled(&r) == 1 && r != MPI_REQUEST_NULL && x == -1);
        }
        CHECK_OK(MPI_Request_free(&r));

        /* Cancelling a send changes nothing: it completed when it was made. */
        CHECK_OK(MPI_Isend(&v, 1, MPI_INT, next, 905, MPI_COMM_WORLD, &r));
        CHECK(cancelled(&r) == 0);
        CHECK_OK(MPI_Recv(&b, 1, MPI_INT, prev, 905, MPI_COMM_WORLD, &st));
        CHECK(b == prev * 10 + round);

        if (work_ms > 0) nanosleep(&work, NULL);
    }

    CHECK_OK(MPI_Comm_free(&quiet));
    double all = 0;
    CHECK_OK(MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("cancel: ok size %d checksum %.2f\n", size, all);
    CHECK_OK(MPI_Finalize());
    return 0;
}
