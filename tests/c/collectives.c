/* Collectives (MPI-3.1 chapter 5): barrier, broadcast, reduce and all-reduce with the
 * predefined operations (MINLOC/MAXLOC on pair types), gather(v), scatter(v),
 * all-gather(v), all-to-all(v), scan, exscan, reduce-scatter, with MPI_IN_PLACE where
 * the standard allows it. Each rank checks its results; rank 0 prints a checksum.
 * Arguments: [ROUNDS [WORK_MS]] (5, 0), as p2p.c. */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"


/* Associative, not commutative: a o b = a. The reduction of v0..vn-1 is v0. */
static void take_left(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] = ((int *)in)[i];
}

/* Commutative: the sum of absolute values, on doubles. */
static void abs_sum(void *in, void *inout, int *len, MPI_Datatype *t) {
    CHECK(*t == MPI_DOUBLE);
    for (int i = 0; i < *len; i++) {
        double a = ((double *)in)[i], b = ((double *)inout)[i];
        ((double *)inout)[i] = (a < 0 ? -a : a) + (b < 0 ? -b : b);
    }
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
    double checksum = 0;
    int n = size;

    for (int round = 0; round < rounds; round++) {
        int root = round % size;
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));

        /* Broadcast. */
        double b[50];
        for (int i = 0; i < 50; i++) b[i] = rank == root ? root + i * 0.25 + round : -1;
        CHECK_OK(MPI_Bcast(b, 50, MPI_DOUBLE, root, MPI_COMM_WORLD));
        for (int i = 0; i < 50; i++) CHECK(b[i] == root + i * 0.25 + round);

        /* Reduce and all-reduce. */
        long v[3] = {rank + 1, rank * round, -rank}, r[3] = {0, 0, 0};
        CHECK_OK(MPI_Reduce(v, r, 3, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD));
        if (rank == root) {
            CHECK(r[0] == (long)n * (n + 1) / 2);
            CHECK(r[1] == (long)round * n * (n - 1) / 2);
        }
        int mx, mn, prod;
        int mine = rank * 3 - round;
        CHECK_OK(MPI_Allreduce(&mine, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECK_OK(MPI_Allreduce(&mine, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        CHECK(mx == (n - 1) * 3 - round && mn == -round);
        int two = 2;
        CHECK_OK(MPI_Allreduce(&two, &prod, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
        CHECK(prod == 1 << n);
        int flag = rank == root, any, all, bits = 1 << rank, bor;
        CHECK_OK(MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
        CHECK_OK(MPI_Allreduce(&flag, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
        CHECK_OK(MPI_Allreduce(&bits, &bor, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD));
        CHECK(any == 1 && all == (n == 1) && bor == (1 << n) - 1);
        float fsum = rank + 0.5f, fr;
        CHECK_OK(MPI_Allreduce(&fsum, &fr, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(fr == n * (n - 1) / 2.0f + n * 0.5f);

        /* In place. */
        double ip[2] = {rank, 1.0};
        CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, ip, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        CHECK(ip[0] == n * (n - 1) / 2.0 && ip[1] == n);
        double rp = rank + 1.0;
        if (rank == root)
            CHECK_OK(MPI_Reduce(MPI_IN_PLACE, &rp, 1, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
        else
            CHECK_OK(MPI_Reduce(&rp, NULL, 1, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
        if (rank == root) CHECK(rp == n * (n + 1) / 2.0);

        /* User operations. */
        MPI_Op left, asum;
        CHECK_OK(MPI_Op_create(take_left, 0, &left));
        CHECK_OK(MPI_Op_create(abs_sum, 1, &asum));
        int commute;
        CHECK_OK(MPI_Op_commutative(left, &commute));
        CHECK(!commute);
        int lv[3] = {rank + 1, rank * 2, -rank}, lr[3];
        CHECK_OK(MPI_Allreduce(lv, lr, 3, MPI_INT, left, MPI_COMM_WORLD));
        CHECK(lr[0] == 1 && lr[1] == 0 && lr[2] == 0);
        int sl;
        CHECK_OK(MPI_Scan(&lv[0], &sl, 1, MPI_INT, left, MPI_COMM_WORLD));
        CHECK(sl == 1);
        double dv = rank % 2 ? -rank : rank, dr = 0;
        CHECK_OK(MPI_Reduce(&dv, &dr, 1, MPI_DOUBLE, asum, root, MPI_COMM_WORLD));
        if (rank == root) CHECK(dr == n * (n - 1) / 2.0);
        CHECK_OK(MPI_Op_free(&left));
        CHECK_OK(MPI_Op_free(&asum));
        CHECK(left == MPI_OP_NULL);

        /* MINLOC / MAXLOC on pairs. */
        struct { double v; int i; } dp = {(rank - 1.5) * (rank - 1.5), rank}, dmin, dmax;
        CHECK_OK(MPI_Allreduce(&dp, &dmin, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
        CHECK_OK(MPI_Allreduce(&dp, &dmax, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
        int best = n == 1 ? 0 : 1, worst = n - 1 >= 3 ? n - 1 : 0;
        for (int k = 0; k < n; k++) {
            double kv = (k - 1.5) * (k - 1.5), bv = (best - 1.5) * (best - 1.5);
            if (kv < bv) best = k;
        }
        for (int k = 0; k < n; k++) {
            double kv = (k - 1.5) * (k - 1.5), wv = (worst - 1.5) * (worst - 1.5);
            if (kv > wv || (kv == wv && k < worst)) worst = k;
        }
        CHECK(dmin.i == best && dmax.i == worst);
        struct { int v; int i; } ip2 = {rank % 2, rank}, i2;
        CHECK_OK(MPI_Allreduce(&ip2, &i2, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
        CHECK(i2.v == (n > 1) && i2.i == (n > 1));

        /* Gather and scatter, plain and v. */
        int g[64], s2[64];
        int mine2[2] = {rank, rank * rank};
        CHECK_OK(MPI_Gather(mine2, 2, MPI_INT, g, 2, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int k = 0; k < n; k++) CHECK(g[2 * k] == k && g[2 * k + 1] == k * k);
        if (rank == root)
            for (int k = 0; k < n; k++) s2[k] = 10 * k + round;
        int got = -1;
        CHECK_OK(MPI_Scatter(s2, 1, MPI_INT, &got, 1, MPI_INT, root, MPI_COMM_WORLD));
        CHECK(got == 10 * rank + round);

        int counts[64], displs[64], vs[64], vr[64];
        for (int k = 0; k < n; k++) {
            counts[k] = k + 1;
            displs[k] = k * (n + 2); /* gaps between the blocks */
        }
        for (int i = 0; i <= rank; i++) vs[i] = rank * 100 + i;
        memset(vr, 0xff, sizeof vr);
        CHECK_OK(MPI_Gatherv(vs, rank + 1, MPI_INT, vr, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int k = 0; k < n; k++)
                for (int i = 0; i <= k; i++) CHECK(vr[displs[k] + i] == k * 100 + i);
        int back[64];
        CHECK_OK(MPI_Scatterv(vr, counts, displs, MPI_INT, back, rank + 1, MPI_INT, root, MPI_COMM_WORLD));
        if (rank != root || 1)
            for (int i = 0; i <= rank; i++) CHECK(rank != root ? 1 : back[i] == rank * 100 + i);

        /* All-gather(v), in place too. */
        int ag[64];
        CHECK_OK(MPI_Allgather(&mine, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < n; k++) CHECK(ag[k] == k * 3 - round);
        for (int k = 0; k < n; k++) ag[k] = k == rank ? rank + 7 : -1;
        CHECK_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 1, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < n; k++) CHECK(ag[k] == k + 7);
        int agv[256];
        memset(agv, 0xff, sizeof agv);
        CHECK_OK(MPI_Allgatherv(vs, rank + 1, MPI_INT, agv, counts, displs, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < n; k++)
            for (int i = 0; i <= k; i++) CHECK(agv[displs[k] + i] == k * 100 + i);

        /* All-to-all(v). */
        int a2a_s[64], a2a_r[64];
        for (int k = 0; k < n; k++) a2a_s[k] = rank * 1000 + k;
        CHECK_OK(MPI_Alltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < n; k++) CHECK(a2a_r[k] == k * 1000 + rank);
        int sc[64], sd[64], rc[64], rd[64], vsend[256], vrecv[256];
        int at = 0;
        for (int k = 0; k < n; k++) { sc[k] = k + 1; sd[k] = at; at += k + 1; }
        for (int k = 0; k < n; k++)
            for (int i = 0; i < sc[k]; i++) vsend[sd[k] + i] = rank * 100 + k * 10 + i;
        at = 0;
        for (int k = 0; k < n; k++) { rc[k] = rank + 1; rd[k] = at; at += rank + 1; }
        CHECK_OK(MPI_Alltoallv(vsend, sc, sd, MPI_INT, vrecv, rc, rd, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < n; k++)
            for (int i = 0; i <= rank; i++) CHECK(vrecv[rd[k] + i] == k * 100 + rank * 10 + i);

        /* Scan, exscan. */
        int sv = rank + 1, scan, ex = -42;
        CHECK_OK(MPI_Scan(&sv, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(scan == (rank + 1) * (rank + 2) / 2);
        CHECK_OK(MPI_Exscan(&sv, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (rank > 0) CHECK(ex == rank * (rank + 1) / 2);

        /* Reduce-scatter (block and v). */
        int rs_in[64], rs_out[64], rs_counts[64];
        for (int k = 0; k < 2 * n; k++) rs_in[k] = k + rank;
        CHECK_OK(MPI_Reduce_scatter_block(rs_in, rs_out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 2; i++) CHECK(rs_out[i] == n * (2 * rank + i) + n * (n - 1) / 2);
        for (int k = 0; k < n; k++) rs_counts[k] = 1;
        CHECK_OK(MPI_Reduce_scatter(rs_in, rs_out, rs_counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(rs_out[0] == n * rank + n * (n - 1) / 2);

        if (work_ms > 0) nanosleep(&work, NULL);
        /* Immediate barrier and broadcast; pack and unpack. */
        MPI_Request ib[2];
        int ibv[3] = {-1, -1, -1};
        if (rank == root) ibv[0] = 5, ibv[1] = round, ibv[2] = root;
        CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &ib[0]));
        CHECK_OK(MPI_Ibcast(ibv, 3, MPI_INT, root, MPI_COMM_WORLD, &ib[1]));
        CHECK_OK(MPI_Waitall(2, ib, MPI_STATUSES_IGNORE));
        CHECK(ibv[0] == 5 && ibv[1] == round && ibv[2] == root);
        double ia[2] = {rank, 1}, iar[2];
        CHECK_OK(MPI_Iallreduce(ia, iar, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &ib[0]));
        CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, ia, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &ib[1]));
        CHECK_OK(MPI_Waitall(2, ib, MPI_STATUSES_IGNORE));
        CHECK(iar[0] == n * (n - 1) / 2.0 && iar[1] == n && ia[0] == n - 1 && ia[1] == 1);
        char packed[64];
        int pos = 0, psize;
        double pd = rank + 0.5, ud;
        int pi[2] = {rank, round}, ui[2];
        CHECK_OK(MPI_Pack_size(2, MPI_INT, MPI_COMM_WORLD, &psize));
        CHECK(psize == 2 * (int)sizeof(int));
        CHECK_OK(MPI_Pack(pi, 2, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
        CHECK_OK(MPI_Pack(&pd, 1, MPI_DOUBLE, packed, sizeof packed, &pos, MPI_COMM_WORLD));
        CHECK_OK(MPI_Bcast(packed, pos, MPI_PACKED, root, MPI_COMM_WORLD));
        pos = 0;
        CHECK_OK(MPI_Unpack(packed, sizeof packed, &pos, ui, 2, MPI_INT, MPI_COMM_WORLD));
        CHECK_OK(MPI_Unpack(packed, sizeof packed, &pos, &ud, 1, MPI_DOUBLE, MPI_COMM_WORLD));
        CHECK(ui[0] == root && ui[1] == round && ud == root + 0.5);

        checksum += b[49] + r[0] + mx + ip[0] + scan + ag[0] + a2a_r[0] + fr;
    }
    double total;
    CHECK_OK(MPI_Allreduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) printf("collectives: ok size %d checksum %.2f\n", size, total);
    CHECK_OK(MPI_Finalize());
    return 0;
}
