/* Gets of a passive target's window whose answers the target lends to its sender log
 * straight from the window (where replicated: docs/PROTOCOL.md, "Passive target"), then
 * changes that window: every replica of the origin gets the bytes the window held when
 * its get applied, also a regenerated one that replays its gets from the start, long
 * after the target changed the window (it pulls the answers from the target's retained
 * log entries, which must be copies by then). Rank 0 gets LEN bytes from rank 1 each
 * round under a shared lock and checks every byte; then rank 1 writes the next round's
 * bytes into its window under its own exclusive lock and works WORK_MS. Other ranks
 * only join the barriers. Rank 0 prints one line. Arguments: [ROUNDS [WORK_MS]] (40, 10). */
#include <mpi.h>
#include <string.h>
#include "check.h"

#define LEN (1 << 20)

static unsigned char byte_of(int round, size_t k) {
    return (unsigned char)(round * 37 + (k % 251));
}

int main(int argc, char **argv) {
    int rank, size;
    struct test_run t = test_start(&argc, &argv, 64, 40, &rank, &size);
    if (t.work.tv_sec == 0 && t.work.tv_nsec == 0) t.work.tv_nsec = 10000000L;
    CHECK(size >= 2);
    unsigned char *base = NULL;
    MPI_Win win;
    MPI_Aint len = rank == 1 ? LEN : 0;
    CHECK_OK(MPI_Win_allocate(len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    unsigned char *buf = malloc(LEN);
    CHECK(buf != NULL);
    if (rank == 1) {
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        for (size_t k = 0; k < LEN; k++) base[k] = byte_of(0, k);
        CHECK_OK(MPI_Win_unlock(1, win));
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    double checksum = 0;
    for (int round = 0; round < t.rounds; round++) {
        if (rank == 0) {
            CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
            CHECK_OK(MPI_Get(buf, LEN, MPI_BYTE, 1, 0, LEN, MPI_BYTE, win));
            CHECK_OK(MPI_Win_unlock(1, win));
            for (size_t k = 0; k < LEN; k++) CHECK(buf[k] == byte_of(round, k));
            checksum += buf[round];
        }
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            for (size_t k = 0; k < LEN; k++) base[k] = byte_of(round + 1, k);
            CHECK_OK(MPI_Win_unlock(1, win));
        }
        /* Only the target works: a replaying origin finds every round's messages
         * waiting and catches up. */
        if (rank == 1) nanosleep(&t.work, NULL);
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_OK(MPI_Win_free(&win));
    free(buf);
    return test_finish("rma_lent", checksum);
}
