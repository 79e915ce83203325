/* Nonblocking collectives (MPI-3.1 section 5.12): each one against its blocking twin on
 * the same inputs, on MPI_INT and on a strided (vector) receive type, with MPI_IN_PLACE
 * where the standard allows it; then every kind outstanding at once on two
 * communicators, completed together with point-to-point requests by MPI_Waitall, and a
 * window of them completed by MPI_Testany / MPI_Waitany / MPI_Testsome. Each rank checks
 * its results; rank 0 prints a checksum of everything received.
 * Arguments: [ROUNDS [WORK_MS]] (3, 0). */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

#define K 5 /* elements per rank in the data-moving collectives */
#define MAXN 8

static double checksum = 0;
static int rank, size;

static void sum_into(const int *a, int n) {
    for (int i = 0; i < n; i++) checksum += a[i] * (double)((i % 7) + 1);
}

/* Compares the immediate form's result with the blocking one's, adds it to the sum. */
static void same(const int *blocking, const int *immediate, int n) {
    for (int i = 0; i < n; i++) CHECK(blocking[i] == immediate[i]);
    sum_into(immediate, n);
}

static void wait1(MPI_Request *r) {
    MPI_Status st;
    CHECK_OK(MPI_Wait(r, &st));
    CHECK(*r == MPI_REQUEST_NULL);
}

/* Non-commutative: a o b = a * 3 + b (mod 1000003): the rank order shows. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *t) {
    CHECK(*t == MPI_INT);
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = (int)((((long)((int *)in)[i]) * 3 + ((int *)inout)[i]) % 1000003);
}

static void twins(MPI_Comm comm, int round, MPI_Op nc) {
    int n = size, root = round % size;
    int send[MAXN * K], a[MAXN * K], b[MAXN * K];
    MPI_Request r;
    for (int i = 0; i < n * K; i++) send[i] = rank * 100 + i + round;

    CHECK_OK(MPI_Barrier(comm));
    CHECK_OK(MPI_Ibarrier(comm, &r));
    wait1(&r);

    /* Ibcast. */
    for (int i = 0; i < K; i++) a[i] = b[i] = rank == root ? send[i] : -1;
    CHECK_OK(MPI_Bcast(a, K, MPI_INT, root, comm));
    CHECK_OK(MPI_Ibcast(b, K, MPI_INT, root, comm, &r));
    wait1(&r);
    same(a, b, K);

    /* Ireduce, with a predefined and a non-commutative user operation, and in place. */
    MPI_Op ops[2] = {MPI_SUM, nc};
    for (int o = 0; o < 2; o++) {
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        CHECK_OK(MPI_Reduce(send, a, K, MPI_INT, ops[o], root, comm));
        CHECK_OK(MPI_Ireduce(send, b, K, MPI_INT, ops[o], root, comm, &r));
        wait1(&r);
        if (rank == root) same(a, b, K);
    }
    memcpy(b, send, K * sizeof(int));
    if (rank == root)
        CHECK_OK(MPI_Ireduce(MPI_IN_PLACE, b, K, MPI_INT, MPI_SUM, root, comm, &r));
    else
        CHECK_OK(MPI_Ireduce(send, NULL, K, MPI_INT, MPI_SUM, root, comm, &r));
    wait1(&r);
    CHECK_OK(MPI_Reduce(send, a, K, MPI_INT, MPI_SUM, root, comm));
    if (rank == root) same(a, b, K);

    /* Iallreduce, Iscan, Iexscan, with both operations and in place. */
    for (int o = 0; o < 2; o++) {
        CHECK_OK(MPI_Allreduce(send, a, K, MPI_INT, ops[o], comm));
        CHECK_OK(MPI_Iallreduce(send, b, K, MPI_INT, ops[o], comm, &r));
        wait1(&r);
        same(a, b, K);
        CHECK_OK(MPI_Scan(send, a, K, MPI_INT, ops[o], comm));
        CHECK_OK(MPI_Iscan(send, b, K, MPI_INT, ops[o], comm, &r));
        wait1(&r);
        same(a, b, K);
        CHECK_OK(MPI_Exscan(send, a, K, MPI_INT, ops[o], comm));
        CHECK_OK(MPI_Iexscan(send, b, K, MPI_INT, ops[o], comm, &r));
        wait1(&r);
        if (rank > 0) same(a, b, K);
    }
    memcpy(b, send, K * sizeof(int));
    CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, b, K, MPI_INT, MPI_MAX, comm, &r));
    wait1(&r);
    CHECK_OK(MPI_Allreduce(send, a, K, MPI_INT, MPI_MAX, comm));
    same(a, b, K);
    memcpy(b, send, K * sizeof(int));
    CHECK_OK(MPI_Iscan(MPI_IN_PLACE, b, K, MPI_INT, MPI_SUM, comm, &r));
    wait1(&r);
    CHECK_OK(MPI_Scan(send, a, K, MPI_INT, MPI_SUM, comm));
    same(a, b, K);

    /* Ireduce_scatter_block, Ireduce_scatter (rank i gets i + 1 elements). */
    CHECK_OK(MPI_Reduce_scatter_block(send, a, K, MPI_INT, MPI_SUM, comm));
    CHECK_OK(MPI_Ireduce_scatter_block(send, b, K, MPI_INT, MPI_SUM, comm, &r));
    wait1(&r);
    same(a, b, K);
    int counts[MAXN], displs[MAXN], total = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = i + 1;
        displs[i] = total;
        total += counts[i];
    }
    CHECK_OK(MPI_Reduce_scatter(send, a, counts, MPI_INT, nc, comm));
    CHECK_OK(MPI_Ireduce_scatter(send, b, counts, MPI_INT, nc, comm, &r));
    wait1(&r);
    same(a, b, rank + 1);
    memcpy(b, send, total * sizeof(int));
    CHECK_OK(MPI_Ireduce_scatter(MPI_IN_PLACE, b, counts, MPI_INT, MPI_SUM, comm, &r));
    wait1(&r);
    CHECK_OK(MPI_Reduce_scatter(send, a, counts, MPI_INT, MPI_SUM, comm));
    same(a, b, rank + 1);

    /* Igather(v), Iscatter(v). */
    CHECK_OK(MPI_Gather(send, K, MPI_INT, a, K, MPI_INT, root, comm));
    CHECK_OK(MPI_Igather(send, K, MPI_INT, b, K, MPI_INT, root, comm, &r));
    wait1(&r);
    if (rank == root) same(a, b, n * K);
    CHECK_OK(MPI_Gatherv(send, rank + 1, MPI_INT, a, counts, displs, MPI_INT, root, comm));
    CHECK_OK(MPI_Igatherv(send, rank + 1, MPI_INT, b, counts, displs, MPI_INT, root, comm, &r));
    wait1(&r);
    if (rank == root) same(a, b, total);
    CHECK_OK(MPI_Scatter(send, K, MPI_INT, a, K, MPI_INT, root, comm));
    CHECK_OK(MPI_Iscatter(send, K, MPI_INT, b, K, MPI_INT, root, comm, &r));
    wait1(&r);
    same(a, b, K);
    CHECK_OK(MPI_Scatterv(send, counts, displs, MPI_INT, a, rank + 1, MPI_INT, root, comm));
    CHECK_OK(MPI_Iscatterv(send, counts, displs, MPI_INT, b, rank + 1, MPI_INT, root, comm, &r));
    wait1(&r);
    same(a, b, rank + 1);
    /* In place at the root. */
    for (int i = 0; i < n * K; i++) b[i] = rank == root ? send[i] : 0;
    if (rank == root)
        CHECK_OK(MPI_Igather(MPI_IN_PLACE, K, MPI_INT, b, K, MPI_INT, root, comm, &r));
    else
        CHECK_OK(MPI_Igather(send + rank * K, K, MPI_INT, NULL, 0, MPI_INT, root, comm, &r));
    wait1(&r);
    if (rank == root)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < K; j++)
                CHECK(b[i * K + j] == (i == root ? send[i * K + j] : i * 100 + i * K + j + round));

    /* Iallgather(v), Ialltoall(v), into a strided receive type too. */
    CHECK_OK(MPI_Allgather(send, K, MPI_INT, a, K, MPI_INT, comm));
    CHECK_OK(MPI_Iallgather(send, K, MPI_INT, b, K, MPI_INT, comm, &r));
    wait1(&r);
    same(a, b, n * K);
    CHECK_OK(MPI_Allgatherv(send, rank + 1, MPI_INT, a, counts, displs, MPI_INT, comm));
    CHECK_OK(MPI_Iallgatherv(send, rank + 1, MPI_INT, b, counts, displs, MPI_INT, comm, &r));
    wait1(&r);
    same(a, b, total);
    CHECK_OK(MPI_Alltoall(send, K, MPI_INT, a, K, MPI_INT, comm));
    CHECK_OK(MPI_Ialltoall(send, K, MPI_INT, b, K, MPI_INT, comm, &r));
    wait1(&r);
    same(a, b, n * K);
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], st = 0, rt = 0;
    for (int i = 0; i < n; i++) {
        sc[i] = (rank + i) % 3 + 1;
        rc[i] = (i + rank) % 3 + 1;
        sd[i] = st;
        rd[i] = rt;
        st += sc[i];
        rt += rc[i];
    }
    CHECK_OK(MPI_Alltoallv(send, sc, sd, MPI_INT, a, rc, rd, MPI_INT, comm));
    CHECK_OK(MPI_Ialltoallv(send, sc, sd, MPI_INT, b, rc, rd, MPI_INT, comm, &r));
    wait1(&r);
    same(a, b, rt);
    /* Every other int: a vector type with a hole after each element. */
    MPI_Datatype every_other;
    CHECK_OK(MPI_Type_vector(K, 1, 2, MPI_INT, &every_other));
    CHECK_OK(MPI_Type_commit(&every_other));
    int wide[2 * MAXN * K];
    for (int i = 0; i < 2 * n * K; i++) wide[i] = -7;
    CHECK_OK(MPI_Iallgather(send, K, MPI_INT, wide, 1, every_other, comm, &r));
    /* A datatype may be freed while an operation using it is pending (section 4.1.9). */
    CHECK_OK(MPI_Type_free(&every_other));
    wait1(&r);
    CHECK_OK(MPI_Allgather(send, K, MPI_INT, a, K, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < K; j++) {
            /* Block i of the strided type starts at its extent, 2K - 1 ints. */
            int at = i * (2 * K - 1) + 2 * j;
            CHECK(wide[at] == a[i * K + j]);
        }
    sum_into(wide, 2 * n * K - 1);
    /* Ialltoall in place. */
    memcpy(b, send, n * K * sizeof(int));
    CHECK_OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, K, MPI_INT, comm, &r));
    wait1(&r);
    CHECK_OK(MPI_Alltoall(send, K, MPI_INT, a, K, MPI_INT, comm));
    same(a, b, n * K);
}

/* Every kind at once on `comms`, with point-to-point requests in the same MPI_Waitall. */
static void all_at_once(MPI_Comm *comms, int round) {
    enum { KINDS = 12 };
    int n = size, root = (round + 1) % size;
    static int send[KINDS][MAXN * K], got[2][KINDS][MAXN * K];
    static int ring_out[2], ring_in[2];
    MPI_Request reqs[2 * KINDS + 4];
    int q = 0;
    for (int k = 0; k < KINDS; k++)
        for (int i = 0; i < n * K; i++) send[k][i] = (k + 1) * 1000 + rank * 10 + i + round;
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = comms[c];
        int (*g)[MAXN * K] = got[c];
        for (int i = 0; i < K; i++) g[0][i] = rank == root ? send[0][i] : 0;
        CHECK_OK(MPI_Ibcast(g[0], K, MPI_INT, root, comm, &reqs[q++]));
        CHECK_OK(MPI_Ireduce(send[1], g[1], K, MPI_INT, MPI_SUM, root, comm, &reqs[q++]));
        CHECK_OK(MPI_Iallreduce(send[2], g[2], K, MPI_INT, MPI_SUM, comm, &reqs[q++]));
        CHECK_OK(MPI_Igather(send[3], K, MPI_INT, g[3], K, MPI_INT, root, comm, &reqs[q++]));
        CHECK_OK(MPI_Iscatter(send[4], K, MPI_INT, g[4], K, MPI_INT, root, comm, &reqs[q++]));
        CHECK_OK(MPI_Iallgather(send[5], K, MPI_INT, g[5], K, MPI_INT, comm, &reqs[q++]));
        CHECK_OK(MPI_Ialltoall(send[6], K, MPI_INT, g[6], K, MPI_INT, comm, &reqs[q++]));
        CHECK_OK(MPI_Iscan(send[7], g[7], K, MPI_INT, MPI_SUM, comm, &reqs[q++]));
        CHECK_OK(MPI_Iexscan(send[8], g[8], K, MPI_INT, MPI_SUM, comm, &reqs[q++]));
        CHECK_OK(MPI_Ireduce_scatter_block(send[9], g[9], K, MPI_INT, MPI_SUM, comm, &reqs[q++]));
        CHECK_OK(MPI_Ibarrier(comm, &reqs[q++]));
        CHECK_OK(MPI_Iallreduce(send[11], g[11], K, MPI_INT, MPI_MAX, comm, &reqs[q++]));
    }
    /* A ring of point-to-point messages in the same completion call. */
    ring_out[0] = rank * 7 + round;
    ring_out[1] = -rank;
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    CHECK_OK(MPI_Irecv(ring_in, 2, MPI_INT, left, 9, comms[0], &reqs[q++]));
    CHECK_OK(MPI_Isend(ring_out, 2, MPI_INT, right, 9, comms[0], &reqs[q++]));
    MPI_Status sts[2 * KINDS + 4];
    CHECK_OK(MPI_Waitall(q, reqs, sts));
    for (int i = 0; i < q; i++) CHECK(reqs[i] == MPI_REQUEST_NULL);
    CHECK(ring_in[0] == left * 7 + round && ring_in[1] == -left);
    /* The same results on both communicators, and the blocking twins'. */
    int a[MAXN * K];
    for (int c = 0; c < 2; c++) {
        int (*g)[MAXN * K] = got[c];
        for (int i = 0; i < K; i++) CHECK(g[0][i] == send[0][i] - rank * 10 + root * 10);
        CHECK_OK(MPI_Reduce(send[1], a, K, MPI_INT, MPI_SUM, root, comms[c]));
        if (rank == root) same(a, g[1], K);
        CHECK_OK(MPI_Allreduce(send[2], a, K, MPI_INT, MPI_SUM, comms[c]));
        same(a, g[2], K);
        CHECK_OK(MPI_Gather(send[3], K, MPI_INT, a, K, MPI_INT, root, comms[c]));
        if (rank == root) same(a, g[3], n * K);
        CHECK_OK(MPI_Scatter(send[4], K, MPI_INT, a, K, MPI_INT, root, comms[c]));
        same(a, g[4], K);
        CHECK_OK(MPI_Allgather(send[5], K, MPI_INT, a, K, MPI_INT, comms[c]));
        same(a, g[5], n * K);
        CHECK_OK(MPI_Alltoall(send[6], K, MPI_INT, a, K, MPI_INT, comms[c]));
        same(a, g[6], n * K);
        CHECK_OK(MPI_Scan(send[7], a, K, MPI_INT, MPI_SUM, comms[c]));
        same(a, g[7], K);
        CHECK_OK(MPI_Exscan(send[8], a, K, MPI_INT, MPI_SUM, comms[c]));
        if (rank > 0) same(a, g[8], K);
        CHECK_OK(MPI_Reduce_scatter_block(send[9], a, K, MPI_INT, MPI_SUM, comms[c]));
        same(a, g[9], K);
        CHECK_OK(MPI_Allreduce(send[11], a, K, MPI_INT, MPI_MAX, comms[c]));
        same(a, g[11], K);
    }
}

/* A window of all-reduces completed by MPI_Testany, MPI_Waitany and MPI_Testsome in
 * turn: every one completes once, with its own result. */
static void window(MPI_Comm comm, int round) {
    enum { W = 6, TOTAL = 40 };
    int in[W], out[W], id[W];
    MPI_Request reqs[W];
    int posted = 0, done = 0;
    for (int i = 0; i < W; i++) {
        id[i] = posted++;
        in[i] = rank + id[i] * 10 + round;
        CHECK_OK(MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, comm, &reqs[i]));
    }
    int turn = 0;
    while (done < TOTAL) {
        int idx[W], cnt = 0, flag = 0, one;
        switch (turn++ % 3) {
        case 0:
            CHECK_OK(MPI_Testany(W, reqs, &one, &flag, MPI_STATUS_IGNORE));
            if (flag && one != MPI_UNDEFINED) idx[cnt++] = one;
            break;
        case 1:
            CHECK_OK(MPI_Waitany(W, reqs, &one, MPI_STATUS_IGNORE));
            if (one != MPI_UNDEFINED) idx[cnt++] = one;
            break;
        default:
            CHECK_OK(MPI_Testsome(W, reqs, &cnt, idx, MPI_STATUSES_IGNORE));
            if (cnt == MPI_UNDEFINED) cnt = 0;
        }
        for (int j = 0; j < cnt; j++) {
            int i = idx[j];
            CHECK(reqs[i] == MPI_REQUEST_NULL);
            CHECK(out[i] == size * (size - 1) / 2 + size * (id[i] * 10 + round));
            checksum += out[i] % 97;
            done++;
            if (posted < TOTAL) {
                id[i] = posted++;
                in[i] = rank + id[i] * 10 + round;
                CHECK_OK(MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, comm, &reqs[i]));
            }
        }
    }
    for (int i = 0; i < W; i++) CHECK(reqs[i] == MPI_REQUEST_NULL);
}

int main(int argc, char **argv) {
    struct test_run run = test_start(&argc, &argv, MAXN, 3, &rank, &size);
    MPI_Op nc;
    CHECK_OK(MPI_Op_create(affine, 0, &nc));
    MPI_Comm comms[2];
    comms[0] = MPI_COMM_WORLD;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    for (int round = 0; round < run.rounds; round++) {
        twins(comms[round % 2], round, nc);
        all_at_once(comms, round);
        window(comms[1], round);
        nanosleep(&run.work, NULL);
    }
    CHECK_OK(MPI_Op_free(&nc));
    CHECK_OK(MPI_Comm_free(&comms[1]));
    return test_finish("coll_nonblocking", checksum);
}
