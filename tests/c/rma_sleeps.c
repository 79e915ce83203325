/* How often a passive-target origin and its target sleep in the kernel while the origin
 * puts and flushes and the target waits in MPI_Barrier (osu_put_latency's loop). A
 * serving call waits as a blocking receive does: it polls for VOLPEX_SPIN_US before it
 * sleeps, so with a spin longer than any wait of the run neither side sleeps (sleeping,
 * each flush costs two wake-ups of an idle core: the target's for the request, the
 * origin's for the answer). Counted: the voluntary context switches of the calling
 * thread (getrusage RUSAGE_THREAD), which a sleep in poll is and a yield is not, over
 * ROUNDS put-and-flush pairs after a warm-up, on each side; every put is checked.
 * Usage: rma_sleeps [ROUNDS]; prints "rma_sleeps: origin R target T flushes N". */
#define _GNU_SOURCE
#include <mpi.h>
#include <sys/resource.h>

#include "check.h"

static long sleeps(void) {
    struct rusage ru;
    CHECK(getrusage(RUSAGE_THREAD, &ru) == 0);
    return ru.ru_nvcsw;
}

int main(int argc, char **argv) {
    int rank, size;
    struct test_run t = test_start(&argc, &argv, 2, 200, &rank, &size);
    CHECK(size == 2);
    int *a;
    MPI_Win w;
    CHECK_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &a, &w));
    *a = -1;
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    const int warm = 20;
    long slept = 0;
    if (rank == 0) {
        CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w));
        long before = 0;
        for (int i = 0; i < warm + t.rounds; i++) {
            if (i == warm) before = sleeps();
            CHECK_OK(MPI_Put(&i, 1, MPI_INT, 1, 0, 1, MPI_INT, w));
            CHECK_OK(MPI_Win_flush(1, w));
        }
        slept = sleeps() - before;
        int last = -2;
        CHECK_OK(MPI_Get(&last, 1, MPI_INT, 1, 0, 1, MPI_INT, w));
        CHECK_OK(MPI_Win_unlock(1, w));
        CHECK(last == warm + t.rounds - 1);
    }
    long before = sleeps();
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        slept = sleeps() - before;
        CHECK(*a == warm + t.rounds - 1);
    }
    long both[2];
    CHECK_OK(MPI_Gather(&slept, 1, MPI_LONG, both, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("rma_sleeps: origin %ld target %ld flushes %d\n", both[0], both[1], t.rounds);
    CHECK_OK(MPI_Win_free(&w));
    CHECK_OK(MPI_Finalize());
    return 0;
}
