/* Reductions and the w form (MPI-3.1 sections 5.8, 5.9, 5.10): a user operation over a
 * struct datatype in MPI_Allreduce (called with the datatype and a count, section
 * 5.9.5), over a strided vector type and in MPI_Reduce / MPI_Scan / MPI_Reduce_scatter,
 * large enough for the halving algorithms; non-commutative operations (2x2 matrix
 * products) applied in rank order; MPI_Reduce_local, MPI_Op_commutative,
 * MPI_Reduce_scatter_block (and in place); MPI_Alltoallw with a different datatype per
 * rank (ints, doubles, a struct), blocking and immediate, and in place. Each rank
 * checks its results; rank 0 prints a checksum. Arguments: [ROUNDS [WORK_MS]] (3, 0). */
#include <mpi.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "check.h"

#define MAXN 8

static int rank, size;
static double checksum = 0;
static MPI_Datatype particle_type, m22_type;
static int particle_calls = 0;

/* The example: a struct with padding inside, reduced field by field. */
struct particle {
    char tag;      /* max */
    double mass;   /* sum */
    int count;     /* sum */
    short id;      /* min */
};

static void particle_op(void *in, void *inout, int *len, MPI_Datatype *t) {
    CHECK(*t == particle_type);
    particle_calls++;
    struct particle *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[i].tag = a[i].tag > b[i].tag ? a[i].tag : b[i].tag;
        b[i].mass += a[i].mass;
        b[i].count += a[i].count;
        b[i].id = a[i].id < b[i].id ? a[i].id : b[i].id;
    }
}

/* 2x2 integer matrices (mod 10007), multiplied: associative, not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t) {
    CHECK(*t == m22_type || *t == MPI_INT);
    int *a = in, *b = inout;
    int n = *t == MPI_INT ? *len / 4 : *len;
    for (int i = 0; i < n; i++) {
        int *x = a + 4 * i, *y = b + 4 * i, r[4];
        r[0] = (x[0] * y[0] + x[1] * y[2]) % 10007;
        r[1] = (x[0] * y[1] + x[1] * y[3]) % 10007;
        r[2] = (x[2] * y[0] + x[3] * y[2]) % 10007;
        r[3] = (x[2] * y[1] + x[3] * y[3]) % 10007;
        memcpy(y, r, sizeof r);
    }
}

static void mat_of(int r, int i, int m[4]) {
    m[0] = (r + 2 + i) % 10007;
    m[1] = (r * 3 + i) % 10007;
    m[2] = (i + 1) % 10007;
    m[3] = (r + 1) % 10007;
}

/* The product of ranks lo..hi-1's matrices, in rank order. */
static void mat_prod(int lo, int hi, int i, int out[4]) {
    int acc[4] = {1, 0, 0, 1}, m[4], one = 1;
    for (int r = lo; r < hi; r++) {
        mat_of(r, i, m);
        /* acc = acc o m: matmul(in = acc, inout = m) leaves acc * m in m. */
        matmul(acc, m, &one, &m22_type);
        memcpy(acc, m, sizeof acc);
    }
    memcpy(out, acc, sizeof acc);
}

/* Sum of doubles over a strided type: the function sees elements of the vector type. */
static MPI_Datatype pairs_type;
static void pairs_sum(void *in, void *inout, int *len, MPI_Datatype *t) {
    CHECK(*t == pairs_type);
    double *a = in, *b = inout;
    /* Each element: 2 doubles, a hole of one, 2 doubles (vector 2 x 2, stride 3);
     * consecutive elements one extent (5 doubles) apart. */
    for (int e = 0; e < *len; e++)
        for (int k = 0; k < 5; k++)
            if (k != 2) b[5 * e + k] += a[5 * e + k];
}

static void user_ops(int round) {
    /* Allreduce of a struct with a user operation. */
    enum { NP = 3 };
    struct particle p[NP], q[NP];
    for (int i = 0; i < NP; i++) {
        p[i].tag = (char)('a' + (rank + i) % 26);
        p[i].mass = rank * 0.5 + i + round;
        p[i].count = rank + 1;
        p[i].id = (short)(100 - rank - i);
    }
    MPI_Op pop;
    CHECK_OK(MPI_Op_create(particle_op, 1, &pop));
    int commute = -1;
    CHECK_OK(MPI_Op_commutative(pop, &commute));
    CHECK(commute == 1);
    CHECK_OK(MPI_Allreduce(p, q, NP, particle_type, pop, MPI_COMM_WORLD));
    for (int i = 0; i < NP; i++) {
        char tmax = 0;
        for (int r = 0; r < size; r++) {
            char t = (char)('a' + (r + i) % 26);
            if (t > tmax) tmax = t;
        }
        CHECK(q[i].tag == tmax);
        CHECK(q[i].mass == 0.5 * size * (size - 1) / 2 + size * (i + round));
        CHECK(q[i].count == size * (size + 1) / 2);
        CHECK(q[i].id == 100 - (size - 1) - i);
        checksum += q[i].mass + q[i].count + q[i].id + q[i].tag;
    }
    /* The same, immediate and in place. */
    memcpy(q, p, sizeof p);
    MPI_Request r;
    CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, q, NP, particle_type, pop, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < NP; i++) CHECK(q[i].count == size * (size + 1) / 2);
    /* Many structs: the large-vector (halving) algorithms cut between elements. */
    enum { BIG = 20000 };
    static struct particle bp[BIG], bq[BIG];
    for (int i = 0; i < BIG; i++) {
        bp[i].tag = (char)(rank + 1);
        bp[i].mass = i;
        bp[i].count = rank;
        bp[i].id = (short)(rank + (i % 100));
    }
    CHECK_OK(MPI_Allreduce(bp, bq, BIG, particle_type, pop, MPI_COMM_WORLD));
    for (int i = 0; i < BIG; i++) {
        CHECK(bq[i].tag == size && bq[i].mass == (double)i * size);
        CHECK(bq[i].count == size * (size - 1) / 2 && bq[i].id == i % 100);
    }
    CHECK_OK(MPI_Reduce(bp, bq, BIG, particle_type, pop, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1)
        for (int i = 0; i < BIG; i++) CHECK(bq[i].mass == (double)i * size);
    CHECK_OK(MPI_Op_free(&pop));
    CHECK(pop == MPI_OP_NULL);

    /* Non-commutative: matrix products in rank order, in every reduction. */
    MPI_Op mop;
    CHECK_OK(MPI_Op_create(matmul, 0, &mop));
    CHECK_OK(MPI_Op_commutative(mop, &commute));
    CHECK(commute == 0);
    enum { NM = 3 };
    int mine[NM * 4], got[NM * 4], want[4];
    for (int i = 0; i < NM; i++) mat_of(rank, i + round, mine + 4 * i);
    CHECK_OK(MPI_Allreduce(mine, got, NM, m22_type, mop, MPI_COMM_WORLD));
    for (int i = 0; i < NM; i++) {
        mat_prod(0, size, i + round, want);
        CHECK(memcmp(got + 4 * i, want, sizeof want) == 0);
        checksum += got[4 * i] + got[4 * i + 3];
    }
    int root = round % size;
    CHECK_OK(MPI_Reduce(mine, got, NM, m22_type, mop, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int i = 0; i < NM; i++) {
            mat_prod(0, size, i + round, want);
            CHECK(memcmp(got + 4 * i, want, sizeof want) == 0);
        }
    CHECK_OK(MPI_Scan(mine, got, NM, m22_type, mop, MPI_COMM_WORLD));
    for (int i = 0; i < NM; i++) {
        mat_prod(0, rank + 1, i + round, want);
        CHECK(memcmp(got + 4 * i, want, sizeof want) == 0);
    }
    CHECK_OK(MPI_Exscan(mine, got, NM, m22_type, mop, MPI_COMM_WORLD));
    if (rank > 0)
        for (int i = 0; i < NM; i++) {
            mat_prod(0, rank, i + round, want);
            CHECK(memcmp(got + 4 * i, want, sizeof want) == 0);
        }
    /* On MPI_INT: the function gets 4 ints per matrix. */
    CHECK_OK(MPI_Allreduce(mine, got, 4 * NM, MPI_INT, mop, MPI_COMM_WORLD));
    for (int i = 0; i < NM; i++) {
        mat_prod(0, size, i + round, want);
        CHECK(memcmp(got + 4 * i, want, sizeof want) == 0);
    }
    /* Many matrices: a non-commutative operation never takes the halving path. */
    enum { BM = 5000 };
    static int bmine[BM * 4], bgot[BM * 4];
    for (int i = 0; i < BM; i++) mat_of(rank, i, bmine + 4 * i);
    CHECK_OK(MPI_Allreduce(bmine, bgot, BM, m22_type, mop, MPI_COMM_WORLD));
    for (int i = 0; i < BM; i += 97) {
        mat_prod(0, size, i, want);
        CHECK(memcmp(bgot + 4 * i, want, sizeof want) == 0);
    }
    /* Reduce_scatter with counts (rank i gets i + 1 matrices), and its block form. */
    int counts[MAXN], total = 0;
    for (int i = 0; i < size; i++) total += counts[i] = i + 1;
    static int rs_in[MAXN * MAXN * 4], rs_out[MAXN * 4];
    for (int i = 0; i < total; i++) mat_of(rank, i, rs_in + 4 * i);
    CHECK_OK(MPI_Reduce_scatter(rs_in, rs_out, counts, m22_type, mop, MPI_COMM_WORLD));
    int first = rank * (rank + 1) / 2;
    for (int i = 0; i < rank + 1; i++) {
        mat_prod(0, size, first + i, want);
        CHECK(memcmp(rs_out + 4 * i, want, sizeof want) == 0);
    }
    CHECK_OK(MPI_Reduce_scatter_block(rs_in, rs_out, 1, m22_type, mop, MPI_COMM_WORLD));
    mat_prod(0, size, rank, want);
    CHECK(memcmp(rs_out, want, sizeof want) == 0);
    CHECK_OK(MPI_Op_free(&mop));

    /* Reduce_local: inout = in o inout, for a user and a predefined operation. */
    int a[4], b[4];
    mat_of(1, 2, a);
    mat_of(5, 7, b);
    int expect[4];
    memcpy(expect, b, sizeof b);
    int one = 1;
    matmul(a, expect, &one, &m22_type);
    CHECK_OK(MPI_Op_create(matmul, 0, &mop));
    CHECK_OK(MPI_Reduce_local(a, b, 1, m22_type, mop));
    CHECK(memcmp(b, expect, sizeof b) == 0);
    CHECK_OK(MPI_Op_free(&mop));
    double x[3] = {1, 2, 3}, y[3] = {10, 20, 30};
    CHECK_OK(MPI_Reduce_local(x, y, 3, MPI_DOUBLE, MPI_SUM));
    CHECK(y[0] == 11 && y[1] == 22 && y[2] == 33);
    CHECK_OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1);

    /* A user operation on a strided type: the function sees the memory layout. */
    MPI_Op sop;
    CHECK_OK(MPI_Op_create(pairs_sum, 1, &sop));
    double v[2 * 5], w[2 * 5];
    for (int k = 0; k < 10; k++) {
        v[k] = rank + k;
        w[k] = -1;
    }
    CHECK_OK(MPI_Allreduce(v, w, 2, pairs_type, sop, MPI_COMM_WORLD));
    for (int k = 0; k < 10; k++) {
        if (k % 5 == 2) CHECK(w[k] == -1);
        else CHECK(w[k] == size * (size - 1) / 2.0 + size * k);
    }
    checksum += w[0] + w[9];
    CHECK_OK(MPI_Op_free(&sop));

    /* Reduce_scatter_block with a predefined operation, and in place. */
    int rb_in[MAXN * 2], rb_out[2];
    for (int i = 0; i < 2 * size; i++) rb_in[i] = rank * 1000 + i;
    CHECK_OK(MPI_Reduce_scatter_block(rb_in, rb_out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 2; j++)
        CHECK(rb_out[j] == 1000 * size * (size - 1) / 2 + size * (2 * rank + j));
    CHECK_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, rb_in, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    for (int j = 0; j < 2; j++) CHECK(rb_in[j] == 1000 * (size - 1) + 2 * rank + j);
}

/* Alltoallw: to rank j this rank sends j + 1 values of type (j % 3): ints, doubles or
 * particles, each block at its own byte displacement in one buffer. */
static void alltoallw(int round) {
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, particle_type};
    size_t sizes[3] = {sizeof(int), sizeof(double), sizeof(struct particle)};
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
    static char sbuf[MAXN * MAXN * 32 + 64], rbuf[MAXN * MAXN * 32 + 64], rbuf2[sizeof rbuf];
    int at = 8; /* an odd start, so blocks are not at multiples of their type */
    for (int j = 0; j < size; j++) {
        sc[j] = j + 1;
        st[j] = types[j % 3];
        at = (int)((at + sizes[j % 3] - 1) / sizes[j % 3] * sizes[j % 3]);
        sd[j] = at;
        for (int k = 0; k < sc[j]; k++) {
            char *e = sbuf + at + k * sizes[j % 3];
            switch (j % 3) {
            case 0: *(int *)e = rank * 100 + j * 10 + k + round; break;
            case 1: *(double *)e = rank + j * 0.5 + k + round; break;
            default: {
                struct particle p = {(char)('A' + rank), rank + k * 0.25, j, (short)(k + round)};
                memcpy(e, &p, sizeof p);
            }
            }
        }
        at += sc[j] * (int)sizes[j % 3];
    }
    /* From rank i this rank gets rank + 1 values of type (rank % 3). */
    at = 0;
    for (int i = size - 1; i >= 0; i--) { /* blocks in reverse order in memory */
        rc[i] = rank + 1;
        rt[i] = types[rank % 3];
        rd[i] = at;
        at += rc[i] * (int)sizes[rank % 3];
    }
    memset(rbuf, 0, sizeof rbuf);
    CHECK_OK(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        for (int k = 0; k < rank + 1; k++) {
            char *e = rbuf + rd[i] + k * sizes[rank % 3];
            switch (rank % 3) {
            case 0: CHECK(*(int *)e == i * 100 + rank * 10 + k + round); checksum += *(int *)e; break;
            case 1: CHECK(*(double *)e == i + rank * 0.5 + k + round); checksum += *(double *)e; break;
            default: {
                struct particle p;
                memcpy(&p, e, sizeof p);
                CHECK(p.tag == 'A' + i && p.mass == i + k * 0.25 && p.count == rank && p.id == k + round);
                checksum += p.mass;
            }
            }
        }
    MPI_Request r;
    memset(rbuf2, 0, sizeof rbuf2);
    CHECK_OK(MPI_Ialltoallw(sbuf, sc, sd, st, rbuf2, rc, rd, rt, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(memcmp(rbuf, rbuf2, sizeof rbuf) == 0);
    /* In place: the same type everywhere (MPI_INT), a block of 2 per rank. */
    int ip[MAXN * 2];
    for (int i = 0; i < size; i++) {
        ip[2 * i] = rank * 10 + i;
        ip[2 * i + 1] = -rank;
        rc[i] = 2;
        rd[i] = 2 * i * (int)sizeof(int);
        rt[i] = MPI_INT;
    }
    CHECK_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, ip, rc, rd, rt, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++) CHECK(ip[2 * i] == i * 10 + rank && ip[2 * i + 1] == -i);
    /* Zero counts with MPI_DATATYPE_NULL: nothing moves. */
    for (int i = 0; i < size; i++) {
        sc[i] = rc[i] = 0;
        st[i] = rt[i] = MPI_DATATYPE_NULL;
    }
    CHECK_OK(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    struct test_run run = test_start(&argc, &argv, MAXN, 3, &rank, &size);
    /* The particle struct, its padding included in the extent. */
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint disp[4] = {offsetof(struct particle, tag), offsetof(struct particle, mass),
                        offsetof(struct particle, count), offsetof(struct particle, id)};
    MPI_Datatype ft[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT}, raw;
    CHECK_OK(MPI_Type_create_struct(4, bl, disp, ft, &raw));
    CHECK_OK(MPI_Type_create_resized(raw, 0, sizeof(struct particle), &particle_type));
    CHECK_OK(MPI_Type_commit(&particle_type));
    CHECK_OK(MPI_Type_free(&raw));
    CHECK_OK(MPI_Type_contiguous(4, MPI_INT, &m22_type));
    CHECK_OK(MPI_Type_commit(&m22_type));
    MPI_Datatype vec;
    CHECK_OK(MPI_Type_vector(2, 2, 3, MPI_DOUBLE, &vec));
    CHECK_OK(MPI_Type_create_resized(vec, 0, 5 * sizeof(double), &pairs_type));
    CHECK_OK(MPI_Type_commit(&pairs_type));
    CHECK_OK(MPI_Type_free(&vec));
    for (int round = 0; round < run.rounds; round++) {
        user_ops(round);
        alltoallw(round);
        nanosleep(&run.work, NULL);
    }
    CHECK_OK(MPI_Type_free(&particle_type));
    CHECK_OK(MPI_Type_free(&m22_type));
    CHECK_OK(MPI_Type_free(&pairs_type));
    /* Some rank called the struct operation, with its datatype (checked inside). */
    int calls;
    CHECK_OK(MPI_Allreduce(&particle_calls, &calls, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(size == 1 || calls > 0);
    return test_finish("coll_ops", checksum);
}
