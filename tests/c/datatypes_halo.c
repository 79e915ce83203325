/* The buffer-overlap rule (MPI-3.1 sections 2.3 and 3.10): a send and a receive buffer
 * of one call may interleave as long as no byte is both sent and received.
 *
 * A halo exchange on a ring: each rank holds a ROWS x COLS matrix of doubles whose
 * first and last columns are halos; MPI_Sendrecv sends a column of the matrix (an
 * MPI_Type_vector) and receives into another column of the same matrix, so the two
 * buffers' extents interleave and their bytes do not. Each exchange is checked against
 * the same exchange done with contiguous copies. Then MPI_Allgather and MPI_Alltoall
 * whose send and receive types are interleaved columns of one matrix, and the calls
 * that do share bytes, which must fail with MPI_ERR_BUFFER. Rank 0 prints a checksum.
 * Arguments: [ROUNDS [WORK_MS]] (5, 0). */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

#define ROWS 8
#define COLS 6

static double a[ROWS][COLS];

/* Column c of `a` into `out`. */
static void column(int c, double *out) {
    for (int i = 0; i < ROWS; i++) out[i] = a[i][c];
}

static void halo_exchange(MPI_Datatype col, int left, int right, int round) {
    double want_left[ROWS], want_right[ROWS], mine_first[ROWS], mine_last[ROWS];
    /* The reference: the same exchange with contiguous copies. */
    column(1, mine_first);
    column(COLS - 2, mine_last);
    CHECK_OK(MPI_Sendrecv(mine_last, ROWS, MPI_DOUBLE, right, 100 + round, want_left, ROWS,
                          MPI_DOUBLE, left, 100 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Sendrecv(mine_first, ROWS, MPI_DOUBLE, left, 200 + round, want_right, ROWS,
                          MPI_DOUBLE, right, 200 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* In place: my last interior column to the right, the left halo from the left. */
    MPI_Status st;
    CHECK_OK(MPI_Sendrecv(&a[0][COLS - 2], 1, col, right, round, &a[0][0], 1, col, left, round,
                          MPI_COMM_WORLD, &st));
    int n;
    CHECK_OK(MPI_Get_count(&st, col, &n));
    CHECK(n == 1);
    CHECK_OK(MPI_Sendrecv(&a[0][1], 1, col, left, round, &a[0][COLS - 1], 1, col, right, round,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < ROWS; i++) {
        CHECK(a[i][0] == want_left[i]);
        CHECK(a[i][COLS - 1] == want_right[i]);
        /* The interior was not touched. */
        CHECK(a[i][1] == mine_first[i] && a[i][COLS - 2] == mine_last[i]);
    }
}

/* One Jacobi-like step on the interior. */
static void relax(void) {
    double b[ROWS][COLS];
    memcpy(b, a, sizeof a);
    for (int i = 0; i < ROWS; i++)
        for (int j = 1; j < COLS - 1; j++) a[i][j] = (b[i][j - 1] + 2 * b[i][j] + b[i][j + 1]) / 4;
}

/* A matrix of ROWS x 2*size doubles: odd columns hold what a rank sends, even columns
 * what it receives; the column type is resized so that element k is column 2k. */
static void interleaved_collectives(int rank, int size, int round) {
    int w = 2 * size;
    double *m = malloc(sizeof(double) * ROWS * w);
    MPI_Datatype col, col2;
    CHECK_OK(MPI_Type_vector(ROWS, 1, w, MPI_DOUBLE, &col));
    CHECK_OK(MPI_Type_create_resized(col, 0, 2 * sizeof(double), &col2));
    CHECK_OK(MPI_Type_commit(&col));
    CHECK_OK(MPI_Type_commit(&col2));
    for (int i = 0; i < ROWS * w; i++) m[i] = -1;
    for (int i = 0; i < ROWS; i++) m[i * w + 2 * rank + 1] = rank * 1000 + i + round;
    /* All-gather: my odd column to everyone, column 2r from rank r. */
    CHECK_OK(MPI_Allgather(&m[2 * rank + 1], 1, col, &m[0], 1, col2, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < ROWS; i++) CHECK(m[i * w + 2 * r] == r * 1000 + i + round);
    /* All-to-all: odd column 2k+1 goes to rank k, even column 2k comes from rank k. */
    for (int i = 0; i < ROWS; i++)
        for (int k = 0; k < size; k++) {
            m[i * w + 2 * k + 1] = rank * 100 + k * 10 + i + round;
            m[i * w + 2 * k] = -1;
        }
    CHECK_OK(MPI_Alltoall(&m[1], 1, col2, &m[0], 1, col2, MPI_COMM_WORLD));
    for (int i = 0; i < ROWS; i++)
        for (int k = 0; k < size; k++) {
            CHECK(m[i * w + 2 * k] == k * 100 + rank * 10 + i + round);
            CHECK(m[i * w + 2 * k + 1] == rank * 100 + k * 10 + i + round);
        }
    /* The same with displacements (the blocks one after the other). */
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    for (int k = 0; k < size; k++) {
        counts[k] = 1;
        displs[k] = k;
        for (int i = 0; i < ROWS; i++) m[i * w + 2 * k] = -1;
    }
    CHECK_OK(MPI_Alltoallv(&m[1], counts, displs, col2, &m[0], counts, displs, col2,
                           MPI_COMM_WORLD));
    for (int i = 0; i < ROWS; i++)
        for (int k = 0; k < size; k++) CHECK(m[i * w + 2 * k] == k * 100 + rank * 10 + i + round);
    free(counts);
    free(displs);
    /* A reduction whose input and output interleave: odd columns summed into even. */
    CHECK_OK(MPI_Allreduce(&m[1], &m[0], size, col2, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < ROWS; i++)
        for (int k = 0; k < size; k++) {
            double sum = 0;
            for (int r = 0; r < size; r++) sum += r * 100 + k * 10 + i + round;
            CHECK(m[i * w + 2 * k] == sum);
        }
    CHECK_OK(MPI_Type_free(&col));
    CHECK_OK(MPI_Type_free(&col2));
    free(m);
}

/* Calls whose buffers do share bytes are erroneous: MPI_ERR_BUFFER, nothing received. */
static void shared_bytes_are_refused(MPI_Datatype col, int rank) {
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls, err;
    double keep = a[ROWS - 1][2];
    err = MPI_Sendrecv(&a[0][2], 1, col, 0, 1, &a[ROWS - 1][2], 1, MPI_DOUBLE, 0, 1,
                       MPI_COMM_SELF, MPI_STATUS_IGNORE);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_BUFFER && a[ROWS - 1][2] == keep);
    double v[16];
    err = MPI_Sendrecv(v, 10, MPI_DOUBLE, 0, 2, v + 5, 10, MPI_DOUBLE, 0, 2, MPI_COMM_SELF,
                       MPI_STATUS_IGNORE);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_BUFFER);
    err = MPI_Allreduce(v, v + 3, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_BUFFER);
    /* Side by side (one byte apart) is fine. */
    for (int i = 0; i < 16; i++) v[i] = rank + i;
    CHECK_OK(MPI_Sendrecv(v, 8, MPI_DOUBLE, 0, 3, v + 8, 8, MPI_DOUBLE, 0, 3, MPI_COMM_SELF,
                          MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++) CHECK(v[8 + i] == rank + i);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    int work_ms = argc > 2 ? atoi(argv[2]) : 0;
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) a[i][j] = (j == 0 || j == COLS - 1) ? -1 : rank * 10 + i + j;
    MPI_Datatype col;
    CHECK_OK(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &col));
    CHECK_OK(MPI_Type_commit(&col));
    shared_bytes_are_refused(col, rank);
    for (int round = 0; round < rounds; round++) {
        halo_exchange(col, left, right, round);
        relax();
        interleaved_collectives(rank, size, round);
        if (work_ms) nanosleep(&work, NULL);
    }
    double local = 0, total;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) local += a[i][j] * (i + 1) * (j + 1);
    CHECK_OK(MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    CHECK_OK(MPI_Type_free(&col));
    if (rank == 0) printf("datatypes_halo: ok size %d checksum %.9e\n", size, total);
    CHECK_OK(MPI_Finalize());
    return 0;
}
