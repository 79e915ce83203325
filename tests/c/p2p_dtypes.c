/* Receives into derived datatypes (MPI-3.1 sections 3.7, 3.8.3, 3.9 and chapter 4), in a
 * ring, every round: an immediate receive (MPI_Irecv) into a matrix column (a vector
 * type), a persistent one (MPI_Recv_init, started every round) into an indexed type, a
 * matched one (MPI_Mprobe + MPI_Mrecv) into a struct with gaps, an immediate matched one
 * (MPI_Improbe + MPI_Imrecv) into a resized vector, MPI_Waitall over immediate receives
 * into two different derived types; each checked element by element, with every byte
 * between the elements left as it was. A message shorter than the receive fills its
 * first basic elements (MPI_Get_elements counts them, MPI_Get_count says
 * MPI_UNDEFINED); a longer one is MPI_ERR_TRUNCATE; MPI_PROC_NULL gives
 * MPI_MESSAGE_NO_PROC and a request that completes at once. Rank 0 prints one line that
 * the test compares. Arguments: [ROUNDS [WORK_MS]] (20, 0). */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

#define ROWS 8
#define COLS 6
#define GAP -7.0

struct item {
    int a;
    double b;
    char c;
};

static double value(int rank, int round, int i) { return rank * 1000.0 + round * 10.0 + i; }

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
    MPI_Comm errs;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &errs));
    CHECK_OK(MPI_Comm_set_errhandler(errs, MPI_ERRORS_RETURN));

    /* A matrix column; the same resized to one double, so that element k starts in
     * column k: two elements are the first two columns. */
    MPI_Datatype column, columns, indexed, item_raw, item_t;
    CHECK_OK(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column));
    CHECK_OK(MPI_Type_commit(&column));
    CHECK_OK(MPI_Type_create_resized(column, 0, sizeof(double), &columns));
    CHECK_OK(MPI_Type_commit(&columns));
    /* 2 + 1 + 3 ints at 0, 4 and 9: extent 12 ints. */
    int lens[3] = {2, 1, 3}, displs[3] = {0, 4, 9};
    CHECK_OK(MPI_Type_indexed(3, lens, displs, MPI_INT, &indexed));
    CHECK_OK(MPI_Type_commit(&indexed));
    int blocks[3] = {1, 1, 1};
    MPI_Aint offs[3] = {offsetof(struct item, a), offsetof(struct item, b),
                        offsetof(struct item, c)};
    MPI_Datatype kinds[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    CHECK_OK(MPI_Type_create_struct(3, blocks, offs, kinds, &item_raw));
    CHECK_OK(MPI_Type_create_resized(item_raw, 0, sizeof(struct item), &item_t));
    CHECK_OK(MPI_Type_commit(&item_t));

    double m[ROWS * COLS], out[2 * ROWS];
    int ints[24], iout[12];
    struct item items[3], iitems[3];
    double sum = 0;
    MPI_Request req, reqs[2], pers;
    MPI_Status st, sts[2];
    MPI_Message msg;
    int n;

    CHECK_OK(MPI_Recv_init(ints, 2, indexed, prev, 20, MPI_COMM_WORLD, &pers));
    for (int round = 0; round < rounds; round++) {
        int col = round % COLS;
        for (int i = 0; i < 2 * ROWS; i++) out[i] = value(rank, round, i);

        /* MPI_Irecv into one column; the other columns keep their GAP. */
        for (int i = 0; i < ROWS * COLS; i++) m[i] = GAP;
        CHECK_OK(MPI_Irecv(&m[col], 1, column, prev, 10, MPI_COMM_WORLD, &req));
        CHECK_OK(MPI_Send(out, ROWS, MPI_DOUBLE, next, 10, MPI_COMM_WORLD));
        CHECK_OK(MPI_Wait(&req, &st));
        CHECK_OK(MPI_Get_count(&st, column, &n));
        CHECK(n == 1 && st.MPI_SOURCE == prev && st.MPI_TAG == 10);
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++)
                CHECK(m[r * COLS + c] == (c == col ? value(prev, round, r) : GAP));
        sum += m[(ROWS - 1) * COLS + col];

        /* MPI_Start of the persistent receive into two indexed elements. */
        for (int i = 0; i < 24; i++) ints[i] = -1;
        for (int i = 0; i < 12; i++) iout[i] = rank * 100 + round + i;
        CHECK_OK(MPI_Start(&pers));
        CHECK_OK(MPI_Send(iout, 12, MPI_INT, next, 20, MPI_COMM_WORLD));
        CHECK_OK(MPI_Wait(&pers, &st));
        CHECK(pers != MPI_REQUEST_NULL);
        const int at[6] = {0, 1, 4, 9, 10, 11};
        for (int e = 0; e < 2; e++)
            for (int k = 0; k < 6; k++) {
                CHECK(ints[12 * e + at[k]] == prev * 100 + round + 6 * e + k);
                ints[12 * e + at[k]] = -1;
            }
        for (int i = 0; i < 24; i++) CHECK(ints[i] == -1);
        sum += prev * 100 + round;

        /* MPI_Mprobe + MPI_Mrecv into structs (sent from structs too). */
        for (int i = 0; i < 3; i++) {
            iitems[i] = (struct item){rank + i, value(rank, round, i), (char)('a' + i)};
            memset(&items[i], 0x5a, sizeof items[i]);
        }
        CHECK_OK(MPI_Send(iitems, 3, item_t, next, 30, MPI_COMM_WORLD));
        CHECK_OK(MPI_Mprobe(prev, 30, MPI_COMM_WORLD, &msg, &st));
        CHECK_OK(MPI_Get_count(&st, item_t, &n));
        CHECK(n == 3 && msg != MPI_MESSAGE_NULL);
        CHECK_OK(MPI_Mrecv(items, 3, item_t, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NULL);
        for (int i = 0; i < 3; i++) {
            CHECK(items[i].a == prev + i && items[i].b == value(prev, round, i));
            CHECK(items[i].c == 'a' + i);
            /* The padding after `a` is not data: left as it was. */
            CHECK(((unsigned char *)&items[i])[sizeof(int)] == 0x5a);
        }
        sum += items[2].b;

        /* MPI_Improbe + MPI_Imrecv into the first two columns. */
        for (int i = 0; i < ROWS * COLS; i++) m[i] = GAP;
        CHECK_OK(MPI_Send(out, 2 * ROWS, MPI_DOUBLE, next, 40, MPI_COMM_WORLD));
        int found = 0;
        while (!found) CHECK_OK(MPI_Improbe(prev, 40, MPI_COMM_WORLD, &found, &msg, &st));
        CHECK_OK(MPI_Imrecv(m, 2, columns, &msg, &req));
        CHECK(msg == MPI_MESSAGE_NULL);
        CHECK_OK(MPI_Wait(&req, &st));
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 40);
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++)
                CHECK(m[r * COLS + c] == (c == 0   ? value(prev, round, r)
                                          : c == 1 ? value(prev, round, ROWS + r)
                                                   : GAP));
        sum += m[0];

        /* MPI_Waitall over receives into two derived types at once. */
        for (int i = 0; i < ROWS * COLS; i++) m[i] = GAP;
        for (int i = 0; i < 24; i++) ints[i] = -1;
        CHECK_OK(MPI_Irecv(&m[COLS - 1], 1, column, prev, 50, MPI_COMM_WORLD, &reqs[0]));
        CHECK_OK(MPI_Irecv(ints, 1, indexed, prev, 51, MPI_COMM_WORLD, &reqs[1]));
        CHECK_OK(MPI_Send(iout, 6, MPI_INT, next, 51, MPI_COMM_WORLD));
        CHECK_OK(MPI_Send(out, ROWS, MPI_DOUBLE, next, 50, MPI_COMM_WORLD));
        CHECK_OK(MPI_Waitall(2, reqs, sts));
        for (int r = 0; r < ROWS; r++) CHECK(m[r * COLS + COLS - 1] == value(prev, round, r));
        for (int k = 0; k < 6; k++) CHECK(ints[at[k]] == prev * 100 + round + k);
        CHECK(ints[2] == -1 && ints[8] == -1);

        /* A shorter message: 3 of the 8 doubles of a column. */
        for (int i = 0; i < ROWS * COLS; i++) m[i] = GAP;
        CHECK_OK(MPI_Irecv(m, 1, column, prev, 60, MPI_COMM_WORLD, &req));
        CHECK_OK(MPI_Send(out, 3, MPI_DOUBLE, next, 60, MPI_COMM_WORLD));
        CHECK_OK(MPI_Wait(&req, &st));
        CHECK_OK(MPI_Get_count(&st, column, &n));
        CHECK(n == MPI_UNDEFINED);
        CHECK_OK(MPI_Get_elements(&st, column, &n));
        CHECK(n == 3);
        for (int r = 0; r < ROWS; r++) CHECK(m[r * COLS] == (r < 3 ? value(prev, round, r) : GAP));

        /* A longer one: MPI_ERR_TRUNCATE from the wait. */
        CHECK_OK(MPI_Irecv(m, 1, column, prev, 70, errs, &req));
        CHECK_OK(MPI_Send(out, ROWS + 1, MPI_DOUBLE, next, 70, errs));
        int code = MPI_Wait(&req, &st), class_ = -1;
        CHECK_OK(MPI_Error_class(code, &class_));
        CHECK(class_ == MPI_ERR_TRUNCATE && req == MPI_REQUEST_NULL);

        /* MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, a request complete at once, no data. */
        CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
        m[0] = GAP;
        CHECK_OK(MPI_Imrecv(m, 1, column, &msg, &req));
        CHECK(msg == MPI_MESSAGE_NULL);
        int done = 0;
        CHECK_OK(MPI_Test(&req, &done, &st));
        CHECK(done && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
        CHECK_OK(MPI_Get_count(&st, column, &n));
        CHECK(n == 0 && m[0] == GAP);

        if (work_ms > 0) nanosleep(&work, NULL);
    }
    CHECK_OK(MPI_Request_free(&pers));
    CHECK_OK(MPI_Type_free(&column));
    CHECK_OK(MPI_Type_free(&columns));
    CHECK_OK(MPI_Type_free(&indexed));
    CHECK_OK(MPI_Type_free(&item_raw));
    CHECK_OK(MPI_Type_free(&item_t));
    CHECK_OK(MPI_Comm_free(&errs));

    double all = 0;
    CHECK_OK(MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("p2p_dtypes: ok size %d checksum %.2f\n", size, all);
    CHECK_OK(MPI_Finalize());
    return 0;
}
