/* Shared-memory windows (MPI-3.1 section 11.2.3): MPI_Win_allocate_shared and
 * MPI_Win_shared_query. A contiguous window where rank 1 has no memory: every rank's
 * size, unit and address from MPI_Win_shared_query (MPI_PROC_NULL: rank 0's), each
 * rank's memory right after the previous one's (a rank without memory: NULL), the window's attributes; each round
 * under MPI_Win_lock_all every rank stores straight into a slot of its own in every
 * rank's memory, accumulates into a counter of rank 0's with
 * MPI_Accumulate and a flush, then MPI_Win_sync + MPI_Barrier + MPI_Win_sync and loads
 * what the others stored. A second window with info alloc_shared_noncontig: every
 * rank's memory starts on a page; a fence epoch of stores and puts. Every value is
 * checked; the checksum holds only what does not depend on timing.
 * Usage: rma_shared [ROUNDS [WORK_MS]]; prints "rma_shared: ok size N checksum X". */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#define SLOTS 8

int main(int argc, char **argv) {
    int rank, size;
    struct test_run t = test_start(&argc, &argv, SLOTS - 2, 10, &rank, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double checksum = 0;

    /* Rank 1 has no memory; the others SLOTS ints each. */
    MPI_Aint mine = rank == 1 ? 0 : SLOTS * sizeof(int);
    int *a;
    MPI_Win w;
    CHECK_OK(MPI_Win_allocate_shared(mine, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &a, &w));
    CHECK_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    int *base[SLOTS];
    for (int r = 0; r < size; r++) {
        MPI_Aint sz;
        int unit;
        CHECK_OK(MPI_Win_shared_query(w, r, &sz, &unit, &base[r]));
        CHECK(sz == (r == 1 ? 0 : SLOTS * (MPI_Aint)sizeof(int)) && unit == sizeof(int));
        if (r == 1) CHECK(base[r] == NULL);
        if (r > 1) CHECK((char *)base[r] == (char *)base[0] + (r - 1) * SLOTS * sizeof(int));
    }
    CHECK(base[rank] == a);
    {
        MPI_Aint sz;
        int unit;
        int *p;
        CHECK_OK(MPI_Win_shared_query(w, MPI_PROC_NULL, &sz, &unit, &p));
        CHECK(p == base[0] && sz == SLOTS * (MPI_Aint)sizeof(int));
        CHECK(MPI_Win_shared_query(w, size, &sz, &unit, &p) == MPI_ERR_RANK);
    }
    int flag, *flavor, *model;
    void *b;
    CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED);
    CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED);
    CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && b == a);
    for (int s = 0; rank != 1 && s < SLOTS; s++) CHECK(a[s] == 0);

    /* Only shared windows answer MPI_Win_shared_query. */
    {
        int x[1];
        MPI_Win wx;
        MPI_Aint sz;
        int unit;
        int *p;
        CHECK_OK(MPI_Win_create(x, sizeof x, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wx));
        CHECK_OK(MPI_Win_set_errhandler(wx, MPI_ERRORS_RETURN));
        CHECK(MPI_Win_shared_query(wx, 0, &sz, &unit, &p) == MPI_ERR_RMA_FLAVOR);
        CHECK_OK(MPI_Win_free(&wx));
    }

    CHECK_OK(MPI_Win_lock_all(0, w));
    for (int k = 0; k < t.rounds; k++) {
        /* Slot r of every memory but rank 1's is rank r's to store into. */
        for (int q = 0; q < size; q++)
            if (q != 1) base[q][rank] = 1000 * k + 100 * q + rank;
        int one = 1;
        CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, SLOTS - 1, 1, MPI_INT, MPI_SUM, w));
        CHECK_OK(MPI_Win_flush(0, w));
        CHECK_OK(MPI_Win_sync(w));
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_OK(MPI_Win_sync(w));
        for (int q = 0; q < size; q++)
            for (int r = 0; q != 1 && r < size; r++) CHECK(base[q][r] == 1000 * k + 100 * q + r);
        CHECK(base[0][SLOTS - 1] == (k + 1) * size);
        checksum += base[0][size - 1] + base[0][SLOTS - 1];
        /* Nobody stores the next round's values before everyone loaded these. */
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        nanosleep(&t.work, NULL);
    }
    CHECK_OK(MPI_Win_unlock_all(w));
    CHECK_OK(MPI_Win_free(&w));

    /* Not contiguous: every rank's memory on a page; a fence epoch. */
    MPI_Info info;
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    double *d;
    CHECK_OK(MPI_Win_allocate_shared(3 * sizeof(double), sizeof(double), info, MPI_COMM_WORLD, &d,
                                     &w));
    CHECK_OK(MPI_Info_free(&info));
    for (int r = 0; r < size; r++) {
        MPI_Aint sz;
        int unit;
        double *p;
        CHECK_OK(MPI_Win_shared_query(w, r, &sz, &unit, &p));
        CHECK(sz == 3 * sizeof(double) && unit == sizeof(double) && (uintptr_t)p % 4096 == 0);
        if (r == right) {
            CHECK_OK(MPI_Win_fence(0, w));
            p[0] = rank + 0.5;
            double v = rank * 2.0;
            CHECK_OK(MPI_Put(&v, 1, MPI_DOUBLE, right, 1, 1, MPI_DOUBLE, w));
            CHECK_OK(MPI_Win_fence(0, w));
        }
    }
    CHECK(d[0] == left + 0.5 && d[1] == left * 2.0);
    checksum += d[0] + d[1];
    CHECK_OK(MPI_Win_free(&w));
    return test_finish("rma_shared", checksum);
}
