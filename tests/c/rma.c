/* One-sided communication (MPI-3.1 chapter 11) with active target synchronization:
 * windows made by MPI_Win_create and MPI_Win_allocate, their attributes, name and group;
 * each round, between fences, every rank puts a strided vector into its right
 * neighbour's window, gets its left neighbour's odd slots, adds into rank 0's counter,
 * takes a ticket from it with MPI_Fetch_and_op and races for a flag with
 * MPI_Compare_and_swap; then a post/start/complete/wait epoch around the ring. Every
 * value is checked; errors (no epoch, out of range) come back with MPI_ERRORS_RETURN.
 * Usage: rma [ROUNDS [WORK_MS]]; prints "rma: ok size N checksum X". */
#include <mpi.h>
#include <string.h>

#include "check.h"

#define SLOTS 16

int main(int argc, char **argv) {
    int rank, size;
    struct test_run t = test_start(&argc, &argv, 64, 20, &rank, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double checksum = 0;

    /* A window over the program's array, in ints. */
    int a[SLOTS];
    memset(a, 0, sizeof a);
    MPI_Win wa;
    CHECK_OK(MPI_Win_create(a, sizeof a, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wa));
    CHECK_OK(MPI_Win_set_errhandler(wa, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Win_set_name(wa, "ring"));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_OK(MPI_Win_get_name(wa, name, &len));
    CHECK(strcmp(name, "ring") == 0 && len == 4);

    /* A window MPI allocates: counters, at rank 0. */
    long *c;
    MPI_Win wc;
    CHECK_OK(MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &c, &wc));
    void *base;
    MPI_Aint *wsize;
    int *unit, *flavor, *model, flag;
    CHECK_OK(MPI_Win_get_attr(wc, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == c);
    CHECK_OK(MPI_Win_get_attr(wc, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == 4 * (MPI_Aint)sizeof(long));
    CHECK_OK(MPI_Win_get_attr(wc, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == (int)sizeof(long));
    CHECK_OK(MPI_Win_get_attr(wc, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE);
    CHECK_OK(MPI_Win_get_attr(wc, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE));
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0);
    MPI_Group g, world;
    int cmp;
    CHECK_OK(MPI_Win_get_group(wc, &g));
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_OK(MPI_Group_compare(g, world, &cmp));
    CHECK(cmp == MPI_IDENT);
    CHECK_OK(MPI_Group_free(&g));

    /* Outside an epoch, and outside the window: errors, returned. */
    int one = 1;
    CHECK(MPI_Put(&one, 1, MPI_INT, right, 0, 1, MPI_INT, wa) == MPI_ERR_RMA_SYNC);
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, wa));
    CHECK(MPI_Put(&one, 1, MPI_INT, right, SLOTS, 1, MPI_INT, wa) == MPI_ERR_RMA_RANGE);
    CHECK(MPI_Put(&one, 1, MPI_INT, size, 0, 1, MPI_INT, wa) == MPI_ERR_RANK);
    CHECK_OK(MPI_Put(&one, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, wa));

    MPI_Datatype even;
    CHECK_OK(MPI_Type_vector(SLOTS / 2, 1, 2, MPI_INT, &even));
    CHECK_OK(MPI_Type_commit(&even));
    MPI_Group lg, rg;
    CHECK_OK(MPI_Group_incl(world, 1, &left, &lg));
    CHECK_OK(MPI_Group_incl(world, 1, &right, &rg));

    CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, wc));
    for (int k = 0; k < t.rounds; k++) {
        int v[SLOTS / 2], got[SLOTS / 2];
        for (int i = 0; i < SLOTS / 2; i++) {
            v[i] = 1000 * k + 100 * rank + i;
            a[2 * i + 1] = -v[i]; /* my odd slots, before the epoch */
        }
        CHECK_OK(MPI_Win_fence(0, wa));
        CHECK_OK(MPI_Put(v, SLOTS / 2, MPI_INT, right, 0, 1, even, wa));
        CHECK_OK(MPI_Get(got, SLOTS / 2, MPI_INT, left, 1, 1, even, wa));
        /* Of no bytes: still answered (its origin waits for the answer). */
        CHECK_OK(MPI_Get(got, 0, MPI_INT, right, 0, 0, MPI_INT, wa));
        long add = rank + 1, before = -1, ticket = -1, cas = -1, cmp_to = k, next = k + 1;
        CHECK_OK(MPI_Accumulate(&add, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, wc));
        CHECK_OK(MPI_Fetch_and_op(NULL, &before, MPI_LONG, 0, 1, MPI_NO_OP, wc));
        CHECK_OK(MPI_Win_fence(0, wc));
        CHECK(before == (long)k * size);
        /* A ticket: the counter before this rank's increment, in some order. */
        long inc = 1;
        CHECK_OK(MPI_Fetch_and_op(&inc, &ticket, MPI_LONG, 0, 1, MPI_SUM, wc));
        CHECK_OK(MPI_Compare_and_swap(&next, &cmp_to, &cas, MPI_LONG, 0, 2, wc));
        CHECK_OK(MPI_Win_fence(0, wa));
        CHECK_OK(MPI_Win_fence(0, wc));
        for (int i = 0; i < SLOTS / 2; i++) {
            CHECK(a[2 * i] == 1000 * k + 100 * left + i);
            CHECK(got[i] == -(1000 * k + 100 * left + i));
        }
        CHECK(ticket >= (long)k * size && ticket < (long)(k + 1) * size);
        long tickets, wins, won = cas == k;
        CHECK(cas == k || cas == k + 1);
        CHECK_OK(MPI_Allreduce(&ticket, &tickets, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(tickets == (long)k * size * size + (long)size * (size - 1) / 2);
        CHECK_OK(MPI_Allreduce(&won, &wins, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(wins == 1);
        if (rank == 0) {
            CHECK(c[0] == (long)(k + 1) * size * (size + 1) / 2);
            CHECK(c[1] == (long)(k + 1) * size);
            CHECK(c[2] == k + 1);
        }
        checksum += a[0] + got[0] + ticket + cas;

        /* Around the ring with post/start/complete/wait: my left neighbour puts into me,
         * I put into and get from my right one. */
        int mark = 7 * k + rank, seen = -1;
        a[1] = -mark;
        CHECK_OK(MPI_Win_post(lg, 0, wa));
        CHECK_OK(MPI_Win_start(rg, 0, wa));
        CHECK_OK(MPI_Put(&mark, 1, MPI_INT, right, 0, 1, MPI_INT, wa));
        CHECK_OK(MPI_Get(&seen, 1, MPI_INT, right, 1, 1, MPI_INT, wa));
        CHECK_OK(MPI_Win_complete(wa));
        CHECK_OK(MPI_Win_wait(wa));
        CHECK(a[0] == 7 * k + left);
        CHECK(seen == -(7 * k + right));
        checksum += a[0] - seen;
        nanosleep(&t.work, NULL);
    }
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, wa));
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, wc));
    CHECK_OK(MPI_Group_free(&lg));
    CHECK_OK(MPI_Group_free(&rg));
    CHECK_OK(MPI_Group_free(&world));
    CHECK_OK(MPI_Type_free(&even));
    CHECK_OK(MPI_Win_free(&wa));
    CHECK_OK(MPI_Win_free(&wc));
    CHECK(wa == MPI_WIN_NULL && wc == MPI_WIN_NULL);
    return test_finish("rma", checksum);
}
