/* Inter-communicators (MPI-3.1 section 6.6) and the collectives on them (section 5.2.2).
 * MPI_COMM_WORLD splits into a left group (the first half, rounded down, at least one
 * rank) and a right group; every round makes an inter-communicator of the two with
 * MPI_Intercomm_create (a new tag each round), and checks: MPI_Comm_test_inter, the
 * local and remote sizes and groups, MPI_Comm_compare; point-to-point (ranks name the
 * remote group, MPI_ANY_SOURCE takes only remote processes, statuses report remote
 * ranks); every blocking collective with MPI_ROOT / MPI_PROC_NULL roots, both ways;
 * MPI_Ibarrier, MPI_Ibcast, MPI_Iallreduce; MPI_Comm_dup, MPI_Comm_split and
 * MPI_Comm_create on the inter-communicator; MPI_Intercomm_merge (the group passing
 * high = 0 first). Each rank checks its results; rank 0 prints a checksum.
 * Arguments: [ROUNDS [WORK_MS]] (5, 0). */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

/* Associative, not commutative: a o b = a (the reduction of v0..vn-1 is v0). */
static void take_left(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] = ((int *)in)[i];
}

static int rank, size, nleft;

/* World rank of rank r of the left (is_left) or the right group. */
static int world_of(int is_left, int r) { return is_left ? r : nleft + r; }

/* Checks everything on inter-communicator `ic`; returns a checksum of what it saw. */
static double exercise(MPI_Comm ic, int is_left, int round, MPI_Op first) {
    int lsize, rsize, lrank, flag;
    double sum = 0;
    CHECK_OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag);
    CHECK_OK(MPI_Comm_size(ic, &lsize));
    CHECK_OK(MPI_Comm_remote_size(ic, &rsize));
    CHECK_OK(MPI_Comm_rank(ic, &lrank));
    CHECK(lsize == (is_left ? nleft : size - nleft));
    CHECK(rsize == size - lsize);
    CHECK(world_of(is_left, lrank) == rank);

    /* The remote group: its ranks are the other side's world ranks, in order. */
    MPI_Group rg, wg;
    CHECK_OK(MPI_Comm_remote_group(ic, &rg));
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int r = 0; r < rsize; r++) {
        int w;
        CHECK_OK(MPI_Group_translate_ranks(rg, 1, &r, wg, &w));
        CHECK(w == world_of(!is_left, r));
    }
    CHECK_OK(MPI_Group_free(&rg));
    CHECK_OK(MPI_Group_free(&wg));

    /* Point-to-point: one message to every remote rank, taken with MPI_ANY_SOURCE. */
    for (int r = 0; r < rsize; r++) {
        int msg[3] = {lrank, r, round};
        CHECK_OK(MPI_Send(msg, 3, MPI_INT, r, 5, ic));
    }
    int seen = 0;
    for (int i = 0; i < rsize; i++) {
        int msg[3];
        MPI_Status st;
        CHECK_OK(MPI_Recv(msg, 3, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && st.MPI_TAG == 5);
        CHECK(msg[0] == st.MPI_SOURCE && msg[1] == lrank && msg[2] == round);
        CHECK(!(seen & (1 << st.MPI_SOURCE)));
        seen |= 1 << st.MPI_SOURCE;
    }
    /* Every process sends to remote rank 0; each leader takes them in rank order (its
     * own counterpart's with MPI_Sendrecv), and MPI_PROC_NULL is a no-op. */
    int one = rank * 10 + round, got = -1;
    MPI_Status st;
    if (lrank == 0) {
        CHECK_OK(MPI_Sendrecv(&one, 1, MPI_INT, 0, 6, &got, 1, MPI_INT, 0, 6, ic, &st));
        CHECK(st.MPI_SOURCE == 0 && got == world_of(!is_left, 0) * 10 + round);
        for (int r = 1; r < rsize; r++) {
            CHECK_OK(MPI_Recv(&got, 1, MPI_INT, r, 6, ic, &st));
            CHECK(st.MPI_SOURCE == r && got == world_of(!is_left, r) * 10 + round);
        }
    } else {
        CHECK_OK(MPI_Send(&one, 1, MPI_INT, 0, 6, ic));
    }
    CHECK_OK(MPI_Send(&one, 1, MPI_INT, MPI_PROC_NULL, 6, ic));
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, MPI_PROC_NULL, 6, ic, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);

    /* Broadcast, both ways: rank 0 of each group is the root in turn. */
    for (int from_left = 0; from_left < 2; from_left++) {
        int sender = is_left == from_left;
        int root = sender ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        double b[20];
        for (int i = 0; i < 20; i++) b[i] = root == MPI_ROOT ? round + i * 0.5 + from_left : -1;
        CHECK_OK(MPI_Bcast(b, 20, MPI_DOUBLE, root, ic));
        if (!sender)
            for (int i = 0; i < 20; i++) CHECK(b[i] == round + i * 0.5 + from_left);
        if (root == MPI_PROC_NULL) CHECK(b[0] == -1);
        sum += b[19];
    }

    /* All-reduce: each group gets the other group's sum, and (with a non-commutative
     * operation) the value of the other group's rank 0. */
    int mine = rank + 1, total, left;
    CHECK_OK(MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, ic));
    int want = 0;
    for (int r = 0; r < rsize; r++) want += world_of(!is_left, r) + 1;
    CHECK(total == want);
    CHECK_OK(MPI_Allreduce(&mine, &left, 1, MPI_INT, first, ic));
    CHECK(left == world_of(!is_left, 0) + 1);
    sum += total;

    /* Reduce to the right group's last rank. */
    int rroot = is_left ? rsize - 1 : (lrank == lsize - 1 ? MPI_ROOT : MPI_PROC_NULL);
    long lv[2] = {rank, round}, lr[2] = {-1, -1};
    CHECK_OK(MPI_Reduce(lv, lr, 2, MPI_LONG, MPI_SUM, rroot, ic));
    if (rroot == MPI_ROOT) {
        CHECK(lr[0] == (long)nleft * (nleft - 1) / 2 && lr[1] == (long)round * nleft);
        sum += lr[0];
    }

    /* Gather and scatter, rooted at the left group's rank 0. */
    int groot = is_left ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int g[8] = {0}, s2 = rank * 3 + round;
    CHECK_OK(MPI_Gather(&s2, 1, MPI_INT, g, 1, MPI_INT, groot, ic));
    if (groot == MPI_ROOT)
        for (int r = 0; r < rsize; r++) CHECK(g[r] == world_of(0, r) * 3 + round);
    int sc[8], back = -1;
    for (int r = 0; r < 8; r++) sc[r] = 100 * r + round;
    CHECK_OK(MPI_Scatter(sc, 1, MPI_INT, &back, 1, MPI_INT, groot, ic));
    if (!is_left) CHECK(back == 100 * lrank + round);
    /* Gatherv with holes: remote rank r sends r + 1 ints to displacement 10 r. */
    int gv[80], counts[8], displs[8], vs[8];
    for (int r = 0; r < 8; r++) counts[r] = r + 1, displs[r] = 10 * r;
    for (int i = 0; i < 8; i++) vs[i] = rank * 100 + i;
    for (int i = 0; i < 80; i++) gv[i] = -1;
    CHECK_OK(MPI_Gatherv(vs, lrank + 1, MPI_INT, gv, counts, displs, MPI_INT, groot, ic));
    if (groot == MPI_ROOT)
        for (int r = 0; r < rsize; r++)
            for (int i = 0; i < 10; i++)
                CHECK(gv[10 * r + i] == (i <= r ? world_of(0, r) * 100 + i : -1));

    /* All-gather and all-to-all. */
    int ag[8], aa[8], as[8];
    CHECK_OK(MPI_Allgather(&mine, 1, MPI_INT, ag, 1, MPI_INT, ic));
    for (int r = 0; r < rsize; r++) CHECK(ag[r] == world_of(!is_left, r) + 1);
    for (int r = 0; r < rsize; r++) as[r] = rank * 1000 + r;
    CHECK_OK(MPI_Alltoall(as, 1, MPI_INT, aa, 1, MPI_INT, ic));
    for (int r = 0; r < rsize; r++) CHECK(aa[r] == world_of(!is_left, r) * 1000 + lrank);
    sum += aa[rsize - 1];

    /* Reduce-scatter-block: the other group's vectors, summed, one element each. The
     * vectors have lsize * k elements here and rsize * k' there: both sides pass the
     * same total, so the block is total / lsize here. */
    int total_len = lsize * rsize;
    int vec[64], blk[8];
    for (int i = 0; i < total_len; i++) vec[i] = rank + i;
    CHECK_OK(MPI_Reduce_scatter_block(vec, blk, rsize, MPI_INT, MPI_SUM, ic));
    for (int i = 0; i < rsize; i++) {
        int w = 0;
        for (int r = 0; r < rsize; r++) w += world_of(!is_left, r) + lrank * rsize + i;
        CHECK(blk[i] == w);
    }

    CHECK_OK(MPI_Barrier(ic));

    /* Immediate forms. */
    MPI_Request reqs[3];
    int ib = is_left && lrank == 0 ? 77 + round : -1, ia;
    int ibroot = is_left ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    CHECK_OK(MPI_Ibcast(&ib, 1, MPI_INT, ibroot, ic, &reqs[0]));
    CHECK_OK(MPI_Iallreduce(&mine, &ia, 1, MPI_INT, MPI_SUM, ic, &reqs[1]));
    CHECK_OK(MPI_Ibarrier(ic, &reqs[2]));
    CHECK_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    if (!is_left) CHECK(ib == 77 + round);
    CHECK(ia == want);
    return sum;
}

int main(int argc, char **argv) {
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    int work_ms = argc > 2 ? atoi(argv[2]) : 0;
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    if (size < 2) {
        /* An inter-communicator needs two groups. */
        int flag;
        CHECK_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
        CHECK(!flag);
        printf("comm_inter: ok size 1\n");
        CHECK_OK(MPI_Finalize());
        return 0;
    }
    nleft = size / 2;
    int is_left = rank < nleft;
    MPI_Op first;
    CHECK_OK(MPI_Op_create(take_left, 0, &first));
    MPI_Comm half;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, is_left, rank, &half));
    double checksum = 0;
    for (int round = 0; round < rounds; round++) {
        MPI_Comm ic, dup, merged, split, created;
        /* Leaders: world rank 0 and world rank nleft; the peer is MPI_COMM_WORLD. */
        int remote_leader = is_left ? nleft : 0;
        CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 100 + round, &ic));
        checksum += exercise(ic, is_left, round, first);

        int result;
        CHECK_OK(MPI_Comm_dup(ic, &dup));
        CHECK_OK(MPI_Comm_compare(ic, dup, &result));
        CHECK(result == MPI_CONGRUENT);
        CHECK_OK(MPI_Comm_compare(ic, MPI_COMM_WORLD, &result));
        CHECK(result == MPI_UNEQUAL);
        checksum += exercise(dup, is_left, round, first);

        /* Merge: the right group passes high = 0 this time, so it comes first. */
        CHECK_OK(MPI_Intercomm_merge(ic, is_left, &merged));
        int mrank, msize, flag;
        CHECK_OK(MPI_Comm_rank(merged, &mrank));
        CHECK_OK(MPI_Comm_size(merged, &msize));
        CHECK_OK(MPI_Comm_test_inter(merged, &flag));
        CHECK(!flag && msize == size);
        CHECK(mrank == (is_left ? (size - nleft) + rank : rank - nleft));
        int msum;
        CHECK_OK(MPI_Allreduce(&mrank, &msum, 1, MPI_INT, MPI_SUM, merged));
        CHECK(msum == size * (size - 1) / 2);

        /* Split by parity of the world rank: an inter-communicator between the even
         * (odd) ranks of both groups, or MPI_COMM_NULL where the other group has none. */
        CHECK_OK(MPI_Comm_split(ic, rank % 2, -rank, &split));
        int other = 0;
        for (int w = 0; w < size; w++)
            if (w % 2 == rank % 2 && (w < nleft) != is_left) other++;
        if (other == 0) {
            CHECK(split == MPI_COMM_NULL);
        } else {
            int s, rs, r;
            CHECK_OK(MPI_Comm_size(split, &s));
            CHECK_OK(MPI_Comm_remote_size(split, &rs));
            CHECK_OK(MPI_Comm_rank(split, &r));
            CHECK(rs == other);
            /* Keys -rank: the highest world rank first. */
            int before = 0;
            for (int w = rank + 1; w < size; w++)
                if (w % 2 == rank % 2 && (w < nleft) == is_left) before++;
            CHECK(r == before);
            int x = rank, y;
            CHECK_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, split));
            checksum += y;
            CHECK_OK(MPI_Comm_free(&split));
        }

        /* Create over the whole local group: the same groups again. */
        MPI_Group lg;
        CHECK_OK(MPI_Comm_group(ic, &lg));
        CHECK_OK(MPI_Comm_create(ic, lg, &created));
        CHECK_OK(MPI_Group_free(&lg));
        CHECK_OK(MPI_Comm_compare(ic, created, &result));
        CHECK(result == MPI_CONGRUENT);
        checksum += exercise(created, is_left, round, first);

        CHECK_OK(MPI_Comm_free(&created));
        CHECK_OK(MPI_Comm_free(&merged));
        CHECK_OK(MPI_Comm_free(&dup));
        CHECK_OK(MPI_Comm_free(&ic));
        nanosleep(&work, NULL);
    }
    double all;
    CHECK_OK(MPI_Reduce(&checksum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("comm_inter: ok size %d checksum %.2f\n", size, all);
    CHECK_OK(MPI_Op_free(&first));
    CHECK_OK(MPI_Comm_free(&half));
    CHECK_OK(MPI_Finalize());
    return 0;
}
