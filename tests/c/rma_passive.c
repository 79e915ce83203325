/* One-sided communication with passive target synchronization (MPI-3.1 section
 * 11.5.3). Each round: every rank takes a ticket from rank 0's counter under an
 * exclusive lock; increments a second counter by a get, a flush and a put under one
 * exclusive lock (no update may be lost); under MPI_Win_lock_all puts into its right
 * neighbour's window, gets from its left one with MPI_Rget and accumulates into rank 0
 * with MPI_Raccumulate; reads its own window under a lock on itself; the targets do
 * nothing but wait in MPI_Barrier, MPI_Recv, MPI_Wait or MPI_Win_sync. A window made
 * with info no_locks cannot be locked. First, gets of more than 4 MiB from the left
 * neighbour, into a contiguous buffer and into a strided one. Every value is
 * checked; the checksum holds only what does not depend on timing.
 * Usage: rma_passive [ROUNDS [WORK_MS]]; prints "rma_passive: ok size N checksum X". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SLOTS 8

int main(int argc, char **argv) {
    int rank, size;
    struct test_run t = test_start(&argc, &argv, 64, 10, &rank, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double checksum = 0;

    /* Counters at rank 0: [0] tickets, [1] read-modify-write, [2] accumulated. */
    long *c;
    MPI_Win wc;
    CHECK_OK(MPI_Win_allocate(3 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &c,
                              &wc));
    CHECK_OK(MPI_Win_set_errhandler(wc, MPI_ERRORS_RETURN));
    int a[SLOTS];
    memset(a, 0, sizeof a);
    MPI_Win wa;
    CHECK_OK(MPI_Win_create(a, sizeof a, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wa));
    CHECK_OK(MPI_Win_set_errhandler(wa, MPI_ERRORS_RETURN));

    /* Errors: no lock, a lock twice, a bad lock type, unlock of what is not locked. */
    long one = 1, ticket;
    CHECK(MPI_Put(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, wc) == MPI_ERR_RMA_SYNC);
    CHECK(MPI_Win_lock(12345, 0, 0, wc) == MPI_ERR_LOCKTYPE);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wc));
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wc) == MPI_ERR_RMA_SYNC);
    CHECK_OK(MPI_Win_unlock(0, wc));
    CHECK(MPI_Win_unlock(0, wc) == MPI_ERR_RMA_SYNC);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* A window that says it is never locked cannot be. */
    MPI_Info info;
    MPI_Win wn;
    int nb[1];
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_set(info, "no_locks", "true"));
    CHECK_OK(MPI_Win_create(nb, sizeof nb, sizeof(int), info, MPI_COMM_WORLD, &wn));
    CHECK_OK(MPI_Win_set_errhandler(wn, MPI_ERRORS_RETURN));
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wn) == MPI_ERR_RMA_SYNC);
    CHECK_OK(MPI_Win_free(&wn));
    CHECK_OK(MPI_Info_free(&info));

    /* Gets of 4 MiB and more: the answer travels in pieces (rma/passive.rs,
     * ANSWER_PIECED_FROM), into a contiguous buffer (it lands in place) and into a strided
     * one (it is copied there). BIG is not a multiple of a piece. */
    enum { BIG = (5 << 20) / 4 + 7 };
    int *big, *got = malloc(2 * (size_t)BIG * sizeof(int));
    CHECK(got != NULL);
    MPI_Win wb;
    CHECK_OK(MPI_Win_allocate(BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &big,
                              &wb));
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, wb));
    for (int i = 0; i < BIG; i++)
        big[i] = rank * 1000003 + i;
    CHECK_OK(MPI_Win_unlock(rank, wb));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Datatype every_other;
    CHECK_OK(MPI_Type_vector(BIG, 1, 2, MPI_INT, &every_other));
    CHECK_OK(MPI_Type_commit(&every_other));
    memset(got, 0xff, 2 * (size_t)BIG * sizeof(int));
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, wb));
    CHECK_OK(MPI_Get(got, BIG, MPI_INT, left, 0, BIG, MPI_INT, wb));
    CHECK_OK(MPI_Win_flush(left, wb));
    for (int i = 0; i < BIG; i++)
        CHECK(got[i] == left * 1000003 + i);
    memset(got, 0xff, 2 * (size_t)BIG * sizeof(int));
    CHECK_OK(MPI_Get(got, 1, every_other, left, 0, BIG, MPI_INT, wb));
    CHECK_OK(MPI_Win_unlock(left, wb));
    for (int i = 0; i < BIG; i++)
        CHECK(got[2 * i] == left * 1000003 + i && got[2 * i + 1] == -1);
    checksum += got[2 * (BIG - 1)];
    CHECK_OK(MPI_Type_free(&every_other));
    CHECK_OK(MPI_Win_free(&wb));
    free(got);

    for (int k = 0; k < t.rounds; k++) {
        /* A ticket, under an exclusive lock: all of them differ. */
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wc));
        CHECK_OK(MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, 0, MPI_SUM, wc));
        CHECK_OK(MPI_Win_unlock(0, wc));
        CHECK(ticket >= (long)k * size && ticket < (long)(k + 1) * size);

        /* Read, flush, write back one more: the exclusive lock holds across the flush. */
        long x = -1;
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wc));
        CHECK_OK(MPI_Get(&x, 1, MPI_LONG, 0, 1, 1, MPI_LONG, wc));
        CHECK_OK(MPI_Win_flush(0, wc));
        CHECK(x >= (long)k * size && x < (long)(k + 1) * size);
        x += 1;
        CHECK_OK(MPI_Put(&x, 1, MPI_LONG, 0, 1, 1, MPI_LONG, wc));
        CHECK_OK(MPI_Win_unlock(0, wc));

        /* Everyone at once under shared locks. */
        int mark = 100 * k + rank, seen = -1;
        long add = rank + 1;
        MPI_Request r[2];
        CHECK_OK(MPI_Win_lock_all(0, wa));
        CHECK_OK(MPI_Put(&mark, 1, MPI_INT, right, 0, 1, MPI_INT, wa));
        CHECK_OK(MPI_Win_flush_all(wa));
        CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wc));
        CHECK_OK(MPI_Raccumulate(&add, 1, MPI_LONG, 0, 2, 1, MPI_LONG, MPI_SUM, wc, &r[0]));
        CHECK_OK(MPI_Win_unlock(0, wc));
        CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Win_unlock_all(wa));

        /* Everyone's put is in when the barrier ends; then a get of the left one's. */
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(a[0] == 100 * k + left);
        a[1] = -(100 * k + rank);
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, wa));
        CHECK_OK(MPI_Rget(&seen, 1, MPI_INT, left, 1, 1, MPI_INT, wa, &r[1]));
        CHECK_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Win_unlock(left, wa));
        CHECK(seen == -(100 * k + left));

        /* Rank 1 writes rank 0's window while rank 0 waits in MPI_Recv for its word. */
        if (size > 1 && rank == 1) {
            long v = 7 * k;
            CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wa));
            CHECK_OK(MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, wa));
            CHECK_OK(MPI_Win_unlock(0, wa));
            CHECK_OK(MPI_Send(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD));
        } else if (size > 1 && rank == 0) {
            long v;
            CHECK_OK(MPI_Recv(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_OK(MPI_Win_sync(wa));
            CHECK(a[2] == 7 * k);
        }

        /* My own window, under a lock on myself. */
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, wa));
        CHECK(a[0] == 100 * k + left);
        /* Read under the lock: after it the left neighbour may already put its next
         * round's mark here (it does not wait for this rank), so a later read of a[0]
         * would depend on timing. */
        int from_left = a[0];
        a[3] = k;
        CHECK_OK(MPI_Put(&mark, 1, MPI_INT, rank, 4, 1, MPI_INT, wa));
        CHECK_OK(MPI_Win_unlock(rank, wa));
        CHECK(a[4] == mark && a[3] == k);

        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wc));
            CHECK(c[0] == (long)(k + 1) * size);
            CHECK(c[1] == (long)(k + 1) * size);
            CHECK(c[2] == (long)(k + 1) * size * (size + 1) / 2);
            checksum += c[0] + c[1] + c[2];
            CHECK_OK(MPI_Win_unlock(0, wc));
        }
        long tickets;
        CHECK_OK(MPI_Allreduce(&ticket, &tickets, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(tickets == (long)k * size * size + (long)size * (size - 1) / 2);
        checksum += tickets + from_left + seen + a[4];
        nanosleep(&t.work, NULL);
    }
    CHECK_OK(MPI_Win_free(&wa));
    CHECK_OK(MPI_Win_free(&wc));
    return test_finish("rma_passive", checksum);
}
