/* The overlap rule (MPI-3.1 sections 2.3 and 3.10) in the collectives, blocking and
 * immediate: a send and a receive buffer may interleave as long as no byte is both sent
 * and received. Every call here sends from the even slots of one array of doubles and
 * receives into its odd slots (`strided`: MPI_DOUBLE resized to two slots; `pair`: two
 * of them), so the two extents overlap and the bytes do not: MPI_Allgather,
 * MPI_Alltoall(v), MPI_Allreduce, MPI_Gather, MPI_Scatter, MPI_Reduce,
 * MPI_Reduce_scatter_block, MPI_Alltoallw (a datatype per block) and the neighbourhood
 * MPI_Neighbor_alltoall / MPI_Neighbor_allgather on a periodic ring, each checked
 * element by element, the even slots untouched. Sending and receiving the same bytes
 * is MPI_ERR_BUFFER (MPI_Allgather, MPI_Alltoallw, MPI_Neighbor_alltoall, blocking and
 * immediate). Rank 0 prints a checksum of everything received.
 * Arguments: [ROUNDS [WORK_MS]] (2, 0). */
#include <mpi.h>
#include <time.h>
#include "check.h"

#define K 3       /* elements per rank */
#define MAXP 8    /* most processes */
#define SLOTS (2 * 2 * K * MAXP + 8)

static int rank, size;
static double m[SLOTS];
static MPI_Datatype strided, pair;

/* What rank `r` sends as element `i` in round `round`. */
static double sent(int r, int i, int round) { return r * 1000 + i + round * 0.5; }

/* The send elements in the even slots, -1 in the odd ones. */
static void fill(int round) {
    for (int i = 0; i < SLOTS / 2; i++) {
        m[2 * i] = sent(rank, i, round);
        m[2 * i + 1] = -1;
    }
}

/* Checks that receive element i (odd slot 2i+1) holds want[i] for i < n, that the
 * odd slots after it are untouched and that no even slot changed; returns their sum. */
static double received(const double *want, int n, int round) {
    double sum = 0;
    for (int i = 0; i < SLOTS / 2; i++) {
        CHECK(m[2 * i] == sent(rank, i, round));
        CHECK(m[2 * i + 1] == (i < n ? want[i] : -1));
        if (i < n) sum += want[i];
    }
    return sum;
}

/* Runs the blocking call, or the immediate one (which sets `q`) and waits for it. */
#define RUN(imm, blocking, immediate)                          \
    do {                                                       \
        if (imm) {                                             \
            MPI_Request q;                                     \
            CHECK_OK(immediate);                               \
            CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));         \
        } else {                                               \
            CHECK_OK(blocking);                                \
        }                                                      \
    } while (0)

/* Expects MPI_ERR_BUFFER from the blocking call and from the immediate one. */
#define REFUSED(blocking, immediate)                           \
    do {                                                       \
        MPI_Request q = MPI_REQUEST_NULL;                      \
        int code = blocking, cls;                              \
        CHECK_OK(MPI_Error_class(code, &cls));                 \
        CHECK(cls == MPI_ERR_BUFFER);                          \
        code = immediate;                                      \
        CHECK_OK(MPI_Error_class(code, &cls));                 \
        CHECK(cls == MPI_ERR_BUFFER && q == MPI_REQUEST_NULL); \
    } while (0)

static double one_round(MPI_Comm ring, int round, int imm) {
    double want[2 * K * MAXP], sum = 0;
    const int n = size * K;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    fill(round);
    RUN(imm, MPI_Allgather(m, K, strided, m + 1, K, strided, MPI_COMM_WORLD),
        MPI_Iallgather(m, K, strided, m + 1, K, strided, MPI_COMM_WORLD, &q));
    for (int i = 0; i < n; i++) want[i] = sent(i / K, i % K, round);
    sum += received(want, n, round);

    fill(round);
    RUN(imm, MPI_Alltoall(m, K, strided, m + 1, K, strided, MPI_COMM_WORLD),
        MPI_Ialltoall(m, K, strided, m + 1, K, strided, MPI_COMM_WORLD, &q));
    for (int i = 0; i < n; i++) want[i] = sent(i / K, rank * K + i % K, round);
    sum += received(want, n, round);

    /* Blocks sent in reverse rank order. */
    int counts[MAXP], sdispls[MAXP], rdispls[MAXP];
    for (int r = 0; r < size; r++) {
        counts[r] = K;
        sdispls[r] = (size - 1 - r) * K;
        rdispls[r] = r * K;
    }
    fill(round);
    RUN(imm,
        MPI_Alltoallv(m, counts, sdispls, strided, m + 1, counts, rdispls, strided,
                      MPI_COMM_WORLD),
        MPI_Ialltoallv(m, counts, sdispls, strided, m + 1, counts, rdispls, strided,
                       MPI_COMM_WORLD, &q));
    for (int i = 0; i < n; i++) want[i] = sent(i / K, (size - 1 - rank) * K + i % K, round);
    sum += received(want, n, round);

    fill(round);
    RUN(imm, MPI_Allreduce(m, m + 1, K, strided, MPI_SUM, MPI_COMM_WORLD),
        MPI_Iallreduce(m, m + 1, K, strided, MPI_SUM, MPI_COMM_WORLD, &q));
    for (int j = 0; j < K; j++) {
        want[j] = 0;
        for (int r = 0; r < size; r++) want[j] += sent(r, j, round);
    }
    sum += received(want, K, round);

    fill(round);
    RUN(imm, MPI_Reduce_scatter_block(m, m + 1, K, strided, MPI_SUM, MPI_COMM_WORLD),
        MPI_Ireduce_scatter_block(m, m + 1, K, strided, MPI_SUM, MPI_COMM_WORLD, &q));
    for (int j = 0; j < K; j++) {
        want[j] = 0;
        for (int r = 0; r < size; r++) want[j] += sent(r, rank * K + j, round);
    }
    sum += received(want, K, round);

    /* Rooted: the root's two buffers interleave; the others use one of them. */
    int root = round % size;
    fill(round);
    RUN(imm, MPI_Gather(m, K, strided, m + 1, K, strided, root, MPI_COMM_WORLD),
        MPI_Igather(m, K, strided, m + 1, K, strided, root, MPI_COMM_WORLD, &q));
    for (int i = 0; i < n; i++) want[i] = sent(i / K, i % K, round);
    sum += received(want, rank == root ? n : 0, round);

    fill(round);
    RUN(imm, MPI_Scatter(m, K, strided, m + 1, K, strided, root, MPI_COMM_WORLD),
        MPI_Iscatter(m, K, strided, m + 1, K, strided, root, MPI_COMM_WORLD, &q));
    for (int j = 0; j < K; j++) want[j] = sent(root, rank * K + j, round);
    sum += received(want, K, round);

    fill(round);
    RUN(imm, MPI_Reduce(m, m + 1, K, strided, MPI_SUM, root, MPI_COMM_WORLD),
        MPI_Ireduce(m, m + 1, K, strided, MPI_SUM, root, MPI_COMM_WORLD, &q));
    for (int j = 0; j < K; j++) {
        want[j] = 0;
        for (int r = 0; r < size; r++) want[j] += sent(r, j, round);
    }
    sum += received(want, rank == root ? K : 0, round);

    /* Alltoallw: two doubles for each rank, as `pair` or as two `strided`, the block to
     * rank r at byte 32r (even slots 4r and 4r+2), the one from rank s at byte 8 + 32s
     * (odd slots 4s+1 and 4s+3). */
    int wcounts[2][MAXP], wdispls[2][MAXP];
    MPI_Datatype wtypes[2][MAXP];
    for (int r = 0; r < size; r++) {
        wtypes[0][r] = r % 2 ? pair : strided;
        wcounts[0][r] = r % 2 ? 1 : 2;
        wdispls[0][r] = 32 * r;
        wtypes[1][r] = r % 2 ? strided : pair;
        wcounts[1][r] = r % 2 ? 2 : 1;
        wdispls[1][r] = 8 + 32 * r;
    }
    fill(round);
    RUN(imm,
        MPI_Alltoallw(m, wcounts[0], wdispls[0], wtypes[0], m, wcounts[1], wdispls[1],
                      wtypes[1], MPI_COMM_WORLD),
        MPI_Ialltoallw(m, wcounts[0], wdispls[0], wtypes[0], m, wcounts[1], wdispls[1],
                       wtypes[1], MPI_COMM_WORLD, &q));
    for (int i = 0; i < 2 * size; i++) want[i] = sent(i / 2, 2 * rank + i % 2, round);
    sum += received(want, 2 * size, round);

    /* The ring: block 0 goes to (and comes from) the left neighbour, block 1 the right
     * one; what arrives from the left is what it sent rightwards. */
    fill(round);
    RUN(imm, MPI_Neighbor_alltoall(m, K, strided, m + 1, K, strided, ring),
        MPI_Ineighbor_alltoall(m, K, strided, m + 1, K, strided, ring, &q));
    for (int j = 0; j < K; j++) {
        want[j] = sent(left, K + j, round);
        want[K + j] = sent(right, j, round);
    }
    sum += received(want, 2 * K, round);

    fill(round);
    RUN(imm, MPI_Neighbor_allgather(m, K, strided, m + 1, K, strided, ring),
        MPI_Ineighbor_allgather(m, K, strided, m + 1, K, strided, ring, &q));
    for (int j = 0; j < K; j++) {
        want[j] = sent(left, j, round);
        want[K + j] = sent(right, j, round);
    }
    sum += received(want, 2 * K, round);
    return sum;
}

/* Calls that send and receive the same bytes: every rank refuses them before sending. */
static void shared_bytes_refused(MPI_Comm ring) {
    int counts[MAXP], sdispls[MAXP], rdispls[MAXP];
    MPI_Datatype types[MAXP];
    for (int r = 0; r < size; r++) {
        counts[r] = 2;
        types[r] = strided;
        sdispls[r] = 32 * r;
        rdispls[r] = 8 + 32 * r;
    }
    /* The last receive block on the even slots 4(size-1)+2 and +4, the first of them
     * also sent (the last send block has slots 4(size-1) and +2). */
    rdispls[size - 1] = 32 * (size - 1) + 16;
    fill(0);
    REFUSED(MPI_Allgather(m, K, strided, m + 2, K, strided, MPI_COMM_WORLD),
            MPI_Iallgather(m, K, strided, m + 2, K, strided, MPI_COMM_WORLD, &q));
    REFUSED(MPI_Alltoallw(m, counts, sdispls, types, m, counts, rdispls, types,
                          MPI_COMM_WORLD),
            MPI_Ialltoallw(m, counts, sdispls, types, m, counts, rdispls, types,
                           MPI_COMM_WORLD, &q));
    REFUSED(MPI_Neighbor_alltoall(m, K, strided, m + 2, K, strided, ring),
            MPI_Ineighbor_alltoall(m, K, strided, m + 2, K, strided, ring, &q));
    CHECK(received(NULL, 0, 0) == 0);
}

int main(int argc, char **argv) {
    struct test_run t = test_start(&argc, &argv, MAXP, 2, &rank, &size);
    CHECK_OK(MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &strided));
    CHECK_OK(MPI_Type_commit(&strided));
    MPI_Datatype two;
    CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &two));
    CHECK_OK(MPI_Type_create_resized(two, 0, 32, &pair));
    CHECK_OK(MPI_Type_commit(&pair));
    CHECK_OK(MPI_Type_free(&two));
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));

    double checksum = 0;
    for (int round = 0; round < t.rounds; round++) {
        checksum += one_round(ring, round, 0);
        checksum += one_round(ring, round, 1);
        nanosleep(&t.work, NULL);
    }
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    shared_bytes_refused(ring);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    CHECK_OK(MPI_Comm_free(&ring));
    CHECK_OK(MPI_Type_free(&strided));
    CHECK_OK(MPI_Type_free(&pair));
    return test_finish("coll_overlap", checksum);
}
