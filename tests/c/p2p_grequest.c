/* Generalized requests (MPI-3.1 section 12.2) and statuses (section 12.3), every round:
 * a request not complete yet tests not done (MPI_Test, MPI_Request_get_status); once the
 * program completes it, MPI_Request_get_status calls its query function and not its free
 * function, and MPI_Wait both, in that order, the status being the query function's
 * (MPI_Status_set_elements, MPI_Status_set_cancelled, MPI_Get_count, MPI_Get_elements);
 * MPI_Cancel calls the cancel function with whether it was complete; MPI_Request_free
 * before MPI_Grequest_complete defers the free function to it, after it calls it at
 * once; MPI_Waitany, MPI_Waitsome, MPI_Testall over generalized requests and receives
 * report only completed ones; a query function's error comes back from MPI_Wait, and
 * from MPI_Waitall as MPI_ERR_IN_STATUS with each status saying which. Also
 * MPI_Status_set_elements_x beyond 32 bits. Rank 0 prints one line that the test
 * compares. Arguments: [ROUNDS [WORK_MS]] (20, 0). */
#include <mpi.h>
#include <time.h>
#include "check.h"

struct greq {
    int id, value;
    int queried, freed, cancels, complete_at_cancel;
    int query_error;
};

static int query_fn(void *extra, MPI_Status *st) {
    struct greq *g = extra;
    g->queried++;
    st->MPI_SOURCE = g->id;
    st->MPI_TAG = g->value;
    MPI_Status_set_elements(st, MPI_INT, g->value % 5);
    MPI_Status_set_cancelled(st, g->cancels > 0);
    return g->query_error;
}

static int free_fn(void *extra) {
    ((struct greq *)extra)->freed++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete) {
    struct greq *g = extra;
    g->cancels++;
    g->complete_at_cancel = complete;
    return MPI_SUCCESS;
}

static MPI_Request start(struct greq *g, int id, int value) {
    *g = (struct greq){id, value, 0, 0, 0, -1, MPI_SUCCESS};
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, g, &r));
    CHECK(r != MPI_REQUEST_NULL);
    return r;
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
    double sum = 0;
    struct greq g[3];
    MPI_Request r, rs[3];
    MPI_Status st, sts[3];
    int flag, n, i, outcount, idx[3];
    MPI_Count big;

    for (int round = 0; round < rounds; round++) {
        int v = rank * 100 + round;

        /* Not done until the program says so; the query function then makes the status. */
        r = start(&g[0], rank, v);
        CHECK_OK(MPI_Test(&r, &flag, &st));
        CHECK(!flag && r != MPI_REQUEST_NULL);
        CHECK_OK(MPI_Request_get_status(r, &flag, &st));
        CHECK(!flag && g[0].queried == 0);
        CHECK_OK(MPI_Grequest_complete(r));
        CHECK_OK(MPI_Request_get_status(r, &flag, &st));
        CHECK(flag && g[0].queried == 1 && g[0].freed == 0 && st.MPI_SOURCE == rank);
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK(r == MPI_REQUEST_NULL && g[0].queried == 2 && g[0].freed == 1);
        CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == v);
        CHECK_OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == v % 5);
        CHECK_OK(MPI_Get_elements(&st, MPI_INT, &n));
        CHECK(n == v % 5);
        CHECK_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(!flag);
        sum += st.MPI_TAG;

        /* MPI_STATUS_IGNORE: the query function gets a status all the same. */
        r = start(&g[0], rank, v);
        CHECK_OK(MPI_Grequest_complete(r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(g[0].queried == 1 && g[0].freed == 1);

        /* MPI_Cancel before and after completion. */
        r = start(&g[0], rank, v);
        CHECK_OK(MPI_Cancel(&r));
        CHECK(g[0].cancels == 1 && g[0].complete_at_cancel == 0);
        CHECK_OK(MPI_Grequest_complete(r));
        CHECK_OK(MPI_Cancel(&r));
        CHECK(g[0].cancels == 2 && g[0].complete_at_cancel == 1);
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag);

        /* MPI_Request_free before and after completion. */
        r = start(&g[0], rank, v);
        MPI_Request keep = r;
        CHECK_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL && g[0].freed == 0);
        CHECK_OK(MPI_Grequest_complete(keep));
        CHECK(g[0].freed == 1 && g[0].queried == 0);
        r = start(&g[0], rank, v);
        CHECK_OK(MPI_Grequest_complete(r));
        CHECK_OK(MPI_Request_free(&r));
        CHECK(g[0].freed == 1 && g[0].queried == 0);

        /* With receives: only completed ones are reported. */
        int x = -1;
        rs[0] = start(&g[0], rank, v);
        CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &rs[1]));
        rs[2] = start(&g[2], rank, v + 1);
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, next, 7, MPI_COMM_WORLD));
        CHECK_OK(MPI_Grequest_complete(rs[2]));
        int seen = 0;
        for (int k = 0; k < 2; k++) {
            CHECK_OK(MPI_Waitany(3, rs, &i, &st));
            CHECK((i == 1 || i == 2) && !(seen & (1 << i)) && rs[i] == MPI_REQUEST_NULL);
            if (i == 2) CHECK(st.MPI_TAG == v + 1 && g[2].freed == 1);
            if (i == 1) CHECK(st.MPI_SOURCE == prev && x == prev * 100 + round);
            seen |= 1 << i;
        }
        CHECK_OK(MPI_Testall(3, rs, &flag, sts));
        CHECK(!flag && rs[0] != MPI_REQUEST_NULL && g[0].queried == 0);
        CHECK_OK(MPI_Grequest_complete(rs[0]));
        CHECK_OK(MPI_Waitsome(3, rs, &outcount, idx, sts));
        CHECK(outcount == 1 && idx[0] == 0 && sts[0].MPI_TAG == v && g[0].freed == 1);
        CHECK_OK(MPI_Waitsome(3, rs, &outcount, idx, sts));
        CHECK(outcount == MPI_UNDEFINED);
        sum += x;

        /* A query function's error. */
        CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        r = start(&g[0], rank, v);
        g[0].query_error = MPI_ERR_ARG;
        CHECK_OK(MPI_Grequest_complete(r));
        CHECK(MPI_Wait(&r, &st) == MPI_ERR_ARG && r == MPI_REQUEST_NULL && g[0].freed == 1);
        rs[0] = start(&g[0], rank, v);
        rs[1] = start(&g[1], rank, v);
        g[0].query_error = MPI_ERR_ARG;
        CHECK_OK(MPI_Grequest_complete(rs[0]));
        CHECK_OK(MPI_Grequest_complete(rs[1]));
        int code = MPI_Waitall(2, rs, sts), class_ = -1;
        CHECK_OK(MPI_Error_class(code, &class_));
        CHECK(class_ == MPI_ERR_IN_STATUS);
        CHECK(sts[0].MPI_ERROR == MPI_ERR_ARG && sts[1].MPI_ERROR == MPI_SUCCESS);
        CHECK(g[0].freed == 1 && g[1].freed == 1);
        CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

        /* Counts beyond 32 bits. */
        MPI_Count want = ((MPI_Count)3 << 33) + round;
        CHECK_OK(MPI_Status_set_elements_x(&st, MPI_DOUBLE, want));
        CHECK_OK(MPI_Get_elements_x(&st, MPI_DOUBLE, &big));
        CHECK(big == want);
        CHECK_OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
        CHECK(n == MPI_UNDEFINED);
        CHECK_OK(MPI_Status_set_elements(&st, MPI_DOUBLE, 2));
        CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(n == 16);

        if (work_ms > 0) nanosleep(&work, NULL);
    }

    double all = 0;
    CHECK_OK(MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("p2p_grequest: ok size %d checksum %.2f\n", size, all);
    CHECK_OK(MPI_Finalize());
    return 0;
}
