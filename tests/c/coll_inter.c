/* The immediate collectives on an inter-communicator (MPI-3.1 sections 5.2.2 and 5.12)
 * and MPI_Alltoallw on one, blocking and immediate; and the collectives the standard
 * does not define there (MPI_Scan, MPI_Exscan, their immediate forms, the
 * neighbourhood collectives) answering MPI_ERR_COMM, as do the topology constructors.
 * MPI_COMM_WORLD splits into a left group (the first half, rounded down) and a right
 * group joined by MPI_Intercomm_create. Every round starts MPI_Igather(v),
 * MPI_Iscatter(v), MPI_Iallgather(v), MPI_Ialltoall(v/w), MPI_Ireduce,
 * MPI_Iallreduce, MPI_Ireduce_scatter(_block), MPI_Ibcast and MPI_Ibarrier at once (the
 * rooted ones rooted in the left group in even rounds, in the right group in odd ones),
 * completes them with one MPI_Waitall, and checks every result. Rank 0 prints a
 * checksum of everything received. Alone (one process: no second group) only the
 * checks on MPI_COMM_WORLD run. Arguments: [ROUNDS [WORK_MS]] (3, 0). */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

#define K 2     /* elements per rank */
#define MAXP 8  /* most processes */

static int rank, size, nleft, is_left, lsize, rsize, lrank;
static MPI_Datatype one_int; /* MPI_Type_contiguous(1, MPI_INT) */

/* World rank of rank r of the left (left) or the right group. */
static int world_of(int left, int r) { return left ? r : nleft + r; }

/* What world rank w sends as element i in round `round`. */
static int val(int w, int i, int round) { return w * 100 + i + round * 10000; }

/* The root argument of a rooted collective rooted at rank 0 of the left group (or of
 * the right one). */
static int root_arg(int root_left) {
    if (is_left == root_left) return lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    return 0;
}

/* Every immediate collective at once on `ic`; returns a checksum of what arrived. */
static double immediate_round(MPI_Comm ic, int round) {
    int root_left = round % 2 == 0;
    int at_root = is_left == root_left && lrank == 0;
    int rooted_leaf = is_left != root_left;
    int rw = world_of(!is_left, 0); /* the remote root's world rank */
    int me = rank;

    /* Send data: element i of what this process sends. */
    int send[K * MAXP], sendv[MAXP + 1];
    for (int i = 0; i < K * MAXP; i++) send[i] = val(me, i, round);
    for (int i = 0; i <= MAXP; i++) sendv[i] = val(me, i, round);

    int gath[K * MAXP], gathv[MAXP * (MAXP + 2)], scat[K], scatv[MAXP + 1];
    int ag[K * MAXP], agv[MAXP * (MAXP + 2)], a2a[MAXP], a2av[2 * MAXP], a2aw[2 * MAXP];
    int red[K], allred[K], rs[MAXP * MAXP], rsb[MAXP], bc[K];
    memset(gath, -1, sizeof gath);
    memset(gathv, -1, sizeof gathv);
    memset(scat, -1, sizeof scat);
    memset(scatv, -1, sizeof scatv);
    memset(red, -1, sizeof red);
    memset(rs, -1, sizeof rs);

    /* v forms: remote rank r contributes r + 1 elements, placed with a gap of one. */
    int rcounts[MAXP], rdispls[MAXP], off = 0;
    for (int r = 0; r < rsize; r++) {
        rcounts[r] = r + 1;
        rdispls[r] = off;
        off += r + 2;
    }
    /* Alltoallv: to remote rank r go 1 + (lrank + r) % 2 elements. */
    int a2c[MAXP], a2d[MAXP], a2rc[MAXP], a2rd[MAXP], so = 0, ro = 0;
    for (int r = 0; r < rsize; r++) {
        a2c[r] = 1 + (lrank + r) % 2;
        a2d[r] = so;
        so += a2c[r];
        a2rc[r] = a2c[r];
        a2rd[r] = ro;
        ro += a2rc[r] + 1;
    }
    /* Alltoallw: one int to each remote rank, received in reverse order, as MPI_INT
     * or as a derived type of one int. */
    int wc[MAXP], wsd[MAXP], wrd[MAXP];
    MPI_Datatype wst[MAXP], wrt[MAXP];
    for (int r = 0; r < rsize; r++) {
        wc[r] = 1;
        wsd[r] = (int)(r * sizeof(int));
        wrd[r] = (int)((rsize - 1 - r) * sizeof(int));
        wst[r] = MPI_INT;
        wrt[r] = r % 2 ? MPI_INT : one_int;
    }
    /* Reduce_scatter: both groups reduce vectors of lsize * rsize elements; the local
     * rank i gets `other` of them (one more at rank 0, one fewer at the last). */
    int rscounts[MAXP], total = lsize * rsize, before = 0;
    for (int i = 0; i < lsize; i++) rscounts[i] = rsize;
    if (lsize > 1) {
        rscounts[0]++;
        rscounts[lsize - 1]--;
    }
    for (int i = 0; i < lrank; i++) before += rscounts[i];
    int bsend[MAXP * MAXP];
    for (int i = 0; i < total; i++) bsend[i] = val(me, i, round);
    for (int i = 0; i < K; i++) bc[i] = at_root ? val(me, i, round) : -1;

    MPI_Request q[16];
    int n = 0, root = root_arg(root_left);
    CHECK_OK(MPI_Igather(send, K, MPI_INT, gath, K, MPI_INT, root, ic, &q[n++]));
    CHECK_OK(MPI_Igatherv(sendv, lrank + 1, MPI_INT, gathv, rcounts, rdispls, MPI_INT, root,
                          ic, &q[n++]));
    CHECK_OK(MPI_Iscatter(send, K, MPI_INT, scat, K, MPI_INT, root, ic, &q[n++]));
    CHECK_OK(MPI_Iscatterv(send, rcounts, rdispls, MPI_INT, scatv, lrank + 1, MPI_INT, root,
                           ic, &q[n++]));
    CHECK_OK(MPI_Ireduce(send, red, K, MPI_INT, MPI_SUM, root, ic, &q[n++]));
    CHECK_OK(MPI_Ibcast(bc, K, MPI_INT, root, ic, &q[n++]));
    CHECK_OK(MPI_Iallgather(send, K, MPI_INT, ag, K, MPI_INT, ic, &q[n++]));
    CHECK_OK(MPI_Iallgatherv(sendv, lrank + 1, MPI_INT, agv, rcounts, rdispls, MPI_INT, ic,
                             &q[n++]));
    CHECK_OK(MPI_Ialltoall(send, 1, MPI_INT, a2a, 1, MPI_INT, ic, &q[n++]));
    CHECK_OK(MPI_Ialltoallv(send, a2c, a2d, MPI_INT, a2av, a2rc, a2rd, MPI_INT, ic, &q[n++]));
    CHECK_OK(MPI_Ialltoallw(send, wc, wsd, wst, a2aw, wc, wrd, wrt, ic, &q[n++]));
    CHECK_OK(MPI_Iallreduce(send, allred, K, MPI_INT, MPI_SUM, ic, &q[n++]));
    CHECK_OK(MPI_Ireduce_scatter(bsend, rs, rscounts, MPI_INT, MPI_SUM, ic, &q[n++]));
    /* Block form: each group's vectors have lsize * rsize elements, rsize per rank here. */
    CHECK_OK(MPI_Ireduce_scatter_block(bsend, rsb, rsize, MPI_INT, MPI_SUM, ic, &q[n++]));
    CHECK_OK(MPI_Ibarrier(ic, &q[n++]));
    CHECK_OK(MPI_Waitall(n, q, MPI_STATUSES_IGNORE));

    double sum = 0;
    for (int r = 0; r < rsize; r++) {
        int w = world_of(!is_left, r);
        for (int i = 0; i < K; i++) {
            CHECK(gath[r * K + i] == (at_root ? val(w, i, round) : -1));
            CHECK(ag[r * K + i] == val(w, i, round));
        }
        for (int i = 0; i < rcounts[r]; i++) {
            CHECK(gathv[rdispls[r] + i] == (at_root ? val(w, i, round) : -1));
            CHECK(agv[rdispls[r] + i] == val(w, i, round));
        }
        CHECK(a2a[r] == val(w, lrank, round));
        /* Remote rank r sent its block for this rank from its offset for lrank. */
        int roff = 0;
        for (int j = 0; j < lrank; j++) roff += 1 + (r + j) % 2;
        for (int i = 0; i < a2rc[r]; i++) CHECK(a2av[a2rd[r] + i] == val(w, roff + i, round));
        CHECK(a2aw[rsize - 1 - r] == val(w, lrank, round));
        sum += ag[r * K] + agv[rdispls[r]] + a2a[r] + a2aw[r];
    }
    for (int i = 0; i < K; i++) {
        int all = 0;
        for (int r = 0; r < rsize; r++) all += val(world_of(!is_left, r), i, round);
        CHECK(allred[i] == all);
        CHECK(red[i] == (at_root ? all : -1));
        CHECK(scat[i] == (rooted_leaf ? val(rw, lrank * K + i, round) : -1));
        CHECK(bc[i] == (is_left == root_left && lrank != 0 ? -1 : val(root_left ? 0 : nleft, i, round)));
        sum += allred[i] + bc[i];
    }
    /* The root's rcounts are per remote rank: this rank's block starts at its
     * displacement there, sum over j < lrank of (j + 2). */
    int sdisp = lrank * (lrank + 3) / 2;
    for (int i = 0; i <= lrank; i++)
        CHECK(scatv[i] == (rooted_leaf ? val(rw, sdisp + i, round) : -1));
    for (int i = 0; i < rscounts[lrank]; i++) {
        int all = 0;
        for (int r = 0; r < rsize; r++) all += val(world_of(!is_left, r), before + i, round);
        CHECK(rs[i] == all);
        sum += rs[i];
    }
    for (int i = 0; i < rsize; i++) {
        int all = 0;
        for (int r = 0; r < rsize; r++) all += val(world_of(!is_left, r), lrank * rsize + i, round);
        CHECK(rsb[i] == all);
    }
    return sum;
}

/* MPI_Alltoallw, blocking: one int to each remote rank, in reverse order. */
static double blocking_alltoallw(MPI_Comm ic, int round) {
    int send[MAXP], recv[MAXP], c[MAXP], sd[MAXP], rd[MAXP];
    MPI_Datatype t[MAXP];
    for (int r = 0; r < rsize; r++) {
        send[r] = val(rank, r, round);
        c[r] = 1;
        sd[r] = (int)((rsize - 1 - r) * sizeof(int));
        rd[r] = (int)(r * sizeof(int));
        t[r] = MPI_INT;
    }
    /* send[] holds the block for remote rank r at r; sent from index rsize - 1 - r. */
    int rev[MAXP];
    for (int r = 0; r < rsize; r++) rev[rsize - 1 - r] = send[r];
    CHECK_OK(MPI_Alltoallw(rev, c, sd, t, recv, c, rd, t, ic));
    double sum = 0;
    for (int r = 0; r < rsize; r++) {
        CHECK(recv[r] == val(world_of(!is_left, r), lrank, round));
        sum += recv[r];
    }
    return sum;
}

/* The collectives an inter-communicator does not have, and topologies on one. */
static void undefined_here(MPI_Comm ic) {
    int in[1] = {1}, out[2], cls, code;
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Comm made = MPI_COMM_NULL;
    CHECK_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
#define NOT_HERE(call)                            \
    do {                                          \
        code = (call);                            \
        CHECK_OK(MPI_Error_class(code, &cls));    \
        CHECK(cls == MPI_ERR_COMM);               \
    } while (0)
    NOT_HERE(MPI_Scan(in, out, 1, MPI_INT, MPI_SUM, ic));
    NOT_HERE(MPI_Exscan(in, out, 1, MPI_INT, MPI_SUM, ic));
    NOT_HERE(MPI_Iscan(in, out, 1, MPI_INT, MPI_SUM, ic, &q));
    NOT_HERE(MPI_Iexscan(in, out, 1, MPI_INT, MPI_SUM, ic, &q));
    NOT_HERE(MPI_Neighbor_allgather(in, 1, MPI_INT, out, 1, MPI_INT, ic));
    NOT_HERE(MPI_Ineighbor_alltoall(in, 1, MPI_INT, out, 1, MPI_INT, ic, &q));
    int dims[1] = {1}, periods[1] = {0}, index[1] = {0}, edges[1] = {0};
    NOT_HERE(MPI_Cart_create(ic, 1, dims, periods, 0, &made));
    NOT_HERE(MPI_Graph_create(ic, 1, index, edges, 0, &made));
    NOT_HERE(MPI_Dist_graph_create_adjacent(ic, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &made));
#undef NOT_HERE
    CHECK(q == MPI_REQUEST_NULL && made == MPI_COMM_NULL);
    CHECK_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    struct test_run t = test_start(&argc, &argv, MAXP, 3, &rank, &size);
    double checksum = 0;
    if (size < 2) {
        /* An inter-communicator needs two groups; MPI_Scan is defined here. */
        int in = 5, out = 0;
        CHECK_OK(MPI_Scan(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(out == 5);
        return test_finish("coll_inter", out);
    }
    nleft = size / 2;
    is_left = rank < nleft;
    CHECK_OK(MPI_Type_contiguous(1, MPI_INT, &one_int));
    CHECK_OK(MPI_Type_commit(&one_int));
    MPI_Comm half, ic;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, is_left, rank, &half));
    CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, is_left ? nleft : 0, 7, &ic));
    CHECK_OK(MPI_Comm_size(ic, &lsize));
    CHECK_OK(MPI_Comm_remote_size(ic, &rsize));
    CHECK_OK(MPI_Comm_rank(ic, &lrank));
    CHECK(lsize == (is_left ? nleft : size - nleft) && rsize == size - lsize);
    for (int round = 0; round < t.rounds; round++) {
        checksum += immediate_round(ic, round);
        checksum += blocking_alltoallw(ic, round);
        nanosleep(&t.work, NULL);
    }
    undefined_here(ic);
    CHECK_OK(MPI_Comm_free(&ic));
    CHECK_OK(MPI_Comm_free(&half));
    CHECK_OK(MPI_Type_free(&one_int));
    return test_finish("coll_inter", checksum);
}
