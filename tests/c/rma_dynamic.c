/* Dynamic windows (MPI-3.1 section 11.2.4): MPI_Win_create_dynamic, memory attached
 * and detached while the window lives, target displacements that are addresses from
 * MPI_Get_address at the target, sent to the origins by the program. Each round every
 * rank puts into its right neighbour's attached array and gets from its left one's
 * between fences, then accumulates into rank 0's second region under a lock. The
 * addresses are part of the checksum: they must be the same in every replica and every
 * run (window addresses, not where a replica's memory happens to be).
 * Usage: rma_dynamic [ROUNDS [WORK_MS]]; prints "rma_dynamic: ok size N checksum X". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SLOTS 4

int main(int argc, char **argv) {
    int rank, size;
    struct test_run t = test_start(&argc, &argv, 64, 10, &rank, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double checksum = 0;

    MPI_Win w;
    CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    CHECK_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    int *flavor, flag;
    CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC);

    int *a = calloc(SLOTS, sizeof(int));
    long *sum = calloc(1, sizeof(long));
    CHECK(a && sum);
    CHECK_OK(MPI_Win_attach(w, a, SLOTS * sizeof(int)));
    CHECK_OK(MPI_Win_attach(w, sum, sizeof(long)));
    MPI_Aint mine[2], *all = malloc(2 * size * sizeof(MPI_Aint));
    CHECK(all);
    CHECK_OK(MPI_Get_address(a, &mine[0]));
    CHECK_OK(MPI_Get_address(sum, &mine[1]));
    MPI_Aint second;
    CHECK_OK(MPI_Get_address(&a[1], &second));
    CHECK(second - mine[0] == sizeof(int));
    CHECK_OK(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) checksum += (double)(all[2 * r] % 1000003 + all[2 * r + 1] % 1000003);

    CHECK_OK(MPI_Win_fence(0, w));
    for (int k = 0; k < t.rounds; k++) {
        int mark = 100 * k + rank, seen = -1;
        a[1] = -mark;
        CHECK_OK(MPI_Win_fence(0, w));
        CHECK_OK(MPI_Put(&mark, 1, MPI_INT, right, all[2 * right], 1, MPI_INT, w));
        CHECK_OK(MPI_Get(&seen, 1, MPI_INT, left, all[2 * left] + sizeof(int), 1, MPI_INT, w));
        CHECK_OK(MPI_Win_fence(0, w));
        CHECK(a[0] == 100 * k + left);
        CHECK(seen == -(100 * k + left));

        long add = rank + 1;
        CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w));
        CHECK_OK(MPI_Accumulate(&add, 1, MPI_LONG, 0, all[1], 1, MPI_LONG, MPI_SUM, w));
        CHECK_OK(MPI_Win_unlock(0, w));
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) CHECK(*sum == (long)(k + 1) * size * (size + 1) / 2);
        checksum += a[0] - seen + (rank == 0 ? *sum : 0);
        nanosleep(&t.work, NULL);
    }
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));

    /* Detached memory is not the window's any more; attaching it again works. */
    CHECK_OK(MPI_Win_detach(w, sum));
    CHECK(MPI_Win_detach(w, sum) != MPI_SUCCESS);
    CHECK_OK(MPI_Win_attach(w, sum, sizeof(long)));
    CHECK_OK(MPI_Win_detach(w, sum));
    CHECK_OK(MPI_Win_detach(w, a));
    CHECK_OK(MPI_Win_free(&w));
    free(a);
    free(sum);
    free(all);
    return test_finish("rma_dynamic", checksum);
}
