/* Large immediate sends whose buffers the program changes as soon as their requests
 * complete: every message arrives as it was when it was sent. Volpex lends such a
 * buffer to its sender log instead of copying it (docs/TCP.md), so a request that
 * completed too early, or a log that kept reading the buffer after it, would deliver
 * the changed bytes. Ranks pair up (0 with 1, 2 with 3, ...; an odd last rank only
 * joins the barriers); every round, each even rank sends WINDOW messages of LEN bytes
 * to its partner twice:
 * - to receives posted before the sends (a barrier between), completed with
 *   MPI_Waitall, one with MPI_Test in a loop, and one freed with MPI_Request_free
 *   (its buffer is left alone until the end of the round);
 * - to a partner that sleeps WORK_MS (at least 20) before it posts its receives, so
 *   no receiver confirms a message before its request completes.
 * Rank 0 prints one line. Arguments: [ROUNDS [WORK_MS]] (4, 20). */
#include <mpi.h>
#include <string.h>
#include "check.h"

#define WINDOW 8
#define LEN (1 << 20)

static unsigned char byte_of(int round, int phase, int i, size_t k) {
    return (unsigned char)(round * 31 + phase * 17 + i * 7 + (k % 251));
}

static void fill(unsigned char *b, int round, int phase, int i) {
    for (size_t k = 0; k < LEN; k++) b[k] = byte_of(round, phase, i, k);
}

static int intact(const unsigned char *b, int round, int phase, int i) {
    for (size_t k = 0; k < LEN; k++)
        if (b[k] != byte_of(round, phase, i, k)) return 0;
    return 1;
}

int main(int argc, char **argv) {
    int rank, size;
    struct test_run t = test_start(&argc, &argv, 64, 4, &rank, &size);
    if (t.work.tv_sec == 0 && t.work.tv_nsec < 20000000L) t.work.tv_nsec = 20000000L;
    MPI_Comm comm = MPI_COMM_WORLD;
    int partner = rank ^ 1;
    int sender = rank % 2 == 0 && partner < size;
    int receiver = rank % 2 == 1;
    unsigned char *bufs[WINDOW];
    for (int i = 0; i < WINDOW; i++) {
        bufs[i] = malloc(LEN);
        CHECK(bufs[i] != NULL);
    }
    MPI_Request reqs[WINDOW];
    long checked = 0;
    for (int round = 0; round < t.rounds; round++) {
        /* Receives posted first. */
        if (receiver)
            for (int i = 0; i < WINDOW; i++)
                CHECK_OK(MPI_Irecv(bufs[i], LEN, MPI_BYTE, partner, 1, comm, &reqs[i]));
        CHECK_OK(MPI_Barrier(comm));
        if (sender) {
            for (int i = 0; i < WINDOW; i++) {
                fill(bufs[i], round, 0, i);
                CHECK_OK(MPI_Isend(bufs[i], LEN, MPI_BYTE, partner, 1, comm, &reqs[i]));
            }
            /* The last one completes by MPI_Test, the one before is freed. */
            int flag = 0;
            while (!flag) CHECK_OK(MPI_Test(&reqs[WINDOW - 1], &flag, MPI_STATUS_IGNORE));
            memset(bufs[WINDOW - 1], 0xEE, LEN);
            CHECK_OK(MPI_Request_free(&reqs[WINDOW - 2]));
            CHECK_OK(MPI_Waitall(WINDOW - 2, reqs, MPI_STATUSES_IGNORE));
            for (int i = 0; i < WINDOW - 2; i++) memset(bufs[i], 0xEE, LEN);
        }
        if (receiver) {
            CHECK_OK(MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE));
            for (int i = 0; i < WINDOW; i++) {
                CHECK(intact(bufs[i], round, 0, i));
                checked++;
            }
        }
        CHECK_OK(MPI_Barrier(comm));

        /* Receives posted late: the sends complete before any receiver confirms. */
        if (sender) {
            for (int i = 0; i < WINDOW; i++) {
                fill(bufs[i], round, 1, i);
                CHECK_OK(MPI_Isend(bufs[i], LEN, MPI_BYTE, partner, 2, comm, &reqs[i]));
            }
            CHECK_OK(MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE));
            for (int i = 0; i < WINDOW; i++) memset(bufs[i], 0xDD, LEN);
        }
        if (receiver) {
            nanosleep(&t.work, NULL);
            for (int i = 0; i < WINDOW; i++) {
                CHECK_OK(MPI_Recv(bufs[i], LEN, MPI_BYTE, partner, 2, comm, MPI_STATUS_IGNORE));
                CHECK(intact(bufs[i], round, 1, i));
                checked++;
            }
        }
        CHECK_OK(MPI_Barrier(comm));
    }
    long total = 0;
    CHECK_OK(MPI_Reduce(&checked, &total, 1, MPI_LONG, MPI_SUM, 0, comm));
    if (rank == 0) {
        CHECK(total == (long)(size / 2) * t.rounds * 2 * WINDOW);
        printf("p2p_lent: ok size %d\n", size);
    }
    for (int i = 0; i < WINDOW; i++) free(bufs[i]);
    CHECK_OK(MPI_Finalize());
    return 0;
}
