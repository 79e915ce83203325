/* A passive target serves in every blocking collective and in MPI_Finalize (MPI-3.1
 * section 11.5.3 and 11.7.3: progress inside MPI calls). Each round rank 0 locks one
 * target exclusively, puts and accumulates into it and unlocks (which waits until the
 * target applied them), then joins a collective the target entered at once: the
 * target must apply rank 0's requests inside MPI_Allreduce, MPI_Reduce, MPI_Bcast,
 * MPI_Gather, MPI_Allgather, MPI_Alltoall or MPI_Scan (one each round), or rank 0
 * never joins. At the end the targets go into MPI_Finalize while rank 0 locks, puts and
 * gets at each of them. Every value is checked.
 * Usage: rma_serving [ROUNDS [WORK_MS]]; prints "rma_serving: ok size N checksum X". */
#include <mpi.h>
#include <string.h>

#include "check.h"

#define SLOTS 4

int main(int argc, char **argv) {
    int rank, size;
    struct test_run t = test_start(&argc, &argv, 64, 14, &rank, &size);
    CHECK(size >= 2);
    double checksum = 0;
    int *a;
    MPI_Win w;
    CHECK_OK(MPI_Win_allocate(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &a,
                              &w));
    int all[64], mine[64];
    for (int k = 0; k < t.rounds; k++) {
        int target = 1 + k % (size - 1), v = 100 * k + 1, one = 1;
        if (rank == 0) {
            CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w));
            CHECK_OK(MPI_Put(&v, 1, MPI_INT, target, 0, 1, MPI_INT, w));
            CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, target, 1, 1, MPI_INT, MPI_SUM, w));
            CHECK_OK(MPI_Win_unlock(target, w));
        }
        int x = rank + k, r = 0;
        for (int i = 0; i < size; i++) mine[i] = 10 * rank + i;
        switch (k % 7) {
        case 0:
            CHECK_OK(MPI_Allreduce(&x, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            CHECK(r == size * k + size * (size - 1) / 2);
            break;
        case 1:
            CHECK_OK(MPI_Reduce(&x, &r, 1, MPI_INT, MPI_MAX, target, MPI_COMM_WORLD));
            if (rank == target) CHECK(r == size - 1 + k);
            break;
        case 2:
            /* From rank 0: a broadcast's root waits for nobody. */
            r = rank == 0 ? 7 * k : -1;
            CHECK_OK(MPI_Bcast(&r, 1, MPI_INT, 0, MPI_COMM_WORLD));
            CHECK(r == 7 * k);
            break;
        case 3:
            CHECK_OK(MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, target, MPI_COMM_WORLD));
            for (int i = 0; rank == target && i < size; i++) CHECK(all[i] == i + k);
            r = rank == target ? all[size - 1] : 0;
            break;
        case 4:
            CHECK_OK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
            for (int i = 0; i < size; i++) CHECK(all[i] == i + k);
            r = all[0];
            break;
        case 5:
            CHECK_OK(MPI_Alltoall(mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
            for (int i = 0; i < size; i++) CHECK(all[i] == 10 * i + rank);
            r = all[size - 1];
            break;
        case 6:
            CHECK_OK(MPI_Scan(&x, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            CHECK(r == (rank + 1) * k + rank * (rank + 1) / 2);
            break;
        }
        checksum += r;
        if (rank == target) {
            /* Rank 0 may already have locked this target for a later round: a root's
             * MPI_Bcast and a leaf's MPI_Reduce or MPI_Gather wait for nobody, and its
             * exclusive lock and this shared one are granted in either order (section
             * 11.5.3). So this round's put and accumulate must have applied (a[1]
             * counts the rounds applied here), and a[0] must be the put of the round
             * a[1] names, never a mix. The checksum takes this round's values. */
            int applied = k / (size - 1) + 1;
            CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w));
            CHECK(a[1] >= applied);
            CHECK(a[0] == 100 * (rank - 1 + (a[1] - 1) * (size - 1)) + 1);
            CHECK_OK(MPI_Win_unlock(rank, w));
            checksum += v + applied;
        }
        nanosleep(&t.work, NULL);
    }
    double total;
    CHECK_OK(MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        printf("rma_serving: ok size %d checksum %.2f\n", size, total);
        fflush(stdout);
        /* The targets are on their way into MPI_Finalize, which must serve. */
        for (int target = 1; target < size; target++) {
            int v = 5000 + target, got = -1;
            CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w));
            CHECK_OK(MPI_Put(&v, 1, MPI_INT, target, 2, 1, MPI_INT, w));
            CHECK_OK(MPI_Win_flush(target, w));
            CHECK_OK(MPI_Get(&got, 1, MPI_INT, target, 2, 1, MPI_INT, w));
            CHECK_OK(MPI_Win_unlock(target, w));
            CHECK(got == v);
        }
    }
    /* The window is not freed: the targets' last call is MPI_Finalize. */
    CHECK_OK(MPI_Finalize());
    return 0;
}
