/* Process topologies (MPI-3.1 chapter 7) and their neighbourhood collectives (section
 * 7.6): graph topologies (MPI_Graph_create and every query), distributed graphs
 * (MPI_Dist_graph_create_adjacent with weights and with MPI_UNWEIGHTED,
 * MPI_Dist_graph_create from edges any rank names, MPI_WEIGHTS_EMPTY, the queries) and
 * Cartesian grids (a periodic ring, where on 1 or 2 ranks one neighbour is both the one
 * below and the one above, and a non-periodic grid, whose edges are MPI_PROC_NULL); on
 * each, MPI_Neighbor_allgather(v) and MPI_Neighbor_alltoall(v/w), blocking and
 * immediate, checked block by block against the order the standard defines. Each rank
 * checks its results; rank 0 prints a checksum. Arguments: [ROUNDS [WORK_MS]] (3, 0). */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

#define MAXN 8
#define MAXD 16 /* most neighbours of a rank in any topology here */

static int rank, size, round_;
static double checksum = 0;

/* What rank `s` sends in its block `j` (for the all-to-alls) or to everyone. */
static int value(int s, int j) { return 1000 * s + 10 * j + round_ + 1; }

/* Where a message received from source i came from: the sender and its block. The
 * graph kinds pair the k-th edge s -> r with the k-th time r lists s; a Cartesian
 * grid pairs the block to the one above with the block from the one below. */
struct topo {
    int cart;                    /* 1: Cartesian (pair by direction) */
    int indeg, outdeg;
    int src[MAXD], dst[MAXD];    /* this rank's, in the order the standard gives */
    int all_dst[MAXN][MAXD];     /* every rank's destinations (graph kinds) */
    int all_outdeg[MAXN];
};

static int sender_block(const struct topo *t, int i) {
    if (t->cart) return i ^ 1;
    int s = t->src[i], k = 0;
    for (int p = 0; p < i; p++) k += t->src[p] == s;
    for (int j = 0; j < t->all_outdeg[s]; j++)
        if (t->all_dst[s][j] == rank && k-- == 0) return j;
    CHECK(!"no matching edge");
    return -1;
}

/* Runs every neighbourhood collective on `comm` and checks it against `t`. */
static void neighborhood(MPI_Comm comm, const struct topo *t) {
    int in = t->indeg, out = t->outdeg;
    int sendall = value(rank, 0), sendv[MAXD], recv[MAXD * 3], recv2[MAXD * 3];
    MPI_Request r;
    for (int j = 0; j < out; j++) sendv[j] = value(rank, j);

    /* Allgather: the same value from each source; MPI_PROC_NULL leaves -1. */
    for (int i = 0; i < in; i++) recv[i] = recv2[i] = -1;
    CHECK_OK(MPI_Neighbor_allgather(&sendall, 1, MPI_INT, recv, 1, MPI_INT, comm));
    CHECK_OK(MPI_Ineighbor_allgather(&sendall, 1, MPI_INT, recv2, 1, MPI_INT, comm, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < in; i++) {
        int want = t->src[i] == MPI_PROC_NULL ? -1 : value(t->src[i], 0);
        CHECK(recv[i] == want && recv2[i] == want);
        checksum += recv[i];
    }

    /* Alltoall: block j to destination j. */
    for (int i = 0; i < in; i++) recv[i] = recv2[i] = -1;
    CHECK_OK(MPI_Neighbor_alltoall(sendv, 1, MPI_INT, recv, 1, MPI_INT, comm));
    CHECK_OK(MPI_Ineighbor_alltoall(sendv, 1, MPI_INT, recv2, 1, MPI_INT, comm, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < in; i++) {
        int want = t->src[i] == MPI_PROC_NULL ? -1 : value(t->src[i], sender_block(t, i));
        CHECK(recv[i] == want && recv2[i] == want);
        checksum += recv[i] * 0.5;
    }

    /* Allgatherv: from source i into slot 2 (in - 1 - i) (reversed, spaced). */
    int counts[MAXD], displs[MAXD];
    for (int i = 0; i < in; i++) {
        counts[i] = 1;
        displs[i] = 2 * (in - 1 - i);
    }
    for (int i = 0; i < 2 * in; i++) recv[i] = recv2[i] = -2;
    CHECK_OK(MPI_Neighbor_allgatherv(&sendall, 1, MPI_INT, recv, counts, displs, MPI_INT, comm));
    CHECK_OK(MPI_Ineighbor_allgatherv(&sendall, 1, MPI_INT, recv2, counts, displs, MPI_INT,
                                      comm, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < in; i++) {
        int want = t->src[i] == MPI_PROC_NULL ? -2 : value(t->src[i], 0);
        CHECK(recv[displs[i]] == want && recv2[displs[i]] == want);
        CHECK(recv[displs[i] + 1] == -2);
    }

    /* Alltoallv: 2 values to each destination, from sendv2 at reversed places. */
    int sendv2[2 * MAXD], sc[MAXD], sd[MAXD], rc[MAXD], rd[MAXD];
    for (int j = 0; j < out; j++) {
        sc[j] = 2;
        sd[j] = 2 * (out - 1 - j);
        sendv2[sd[j]] = value(rank, j);
        sendv2[sd[j] + 1] = -value(rank, j);
    }
    for (int i = 0; i < in; i++) {
        rc[i] = 2;
        rd[i] = 3 * i;
    }
    for (int i = 0; i < 3 * in; i++) recv[i] = recv2[i] = -3;
    CHECK_OK(MPI_Neighbor_alltoallv(sendv2, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm));
    CHECK_OK(MPI_Ineighbor_alltoallv(sendv2, sc, sd, MPI_INT, recv2, rc, rd, MPI_INT, comm, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < in; i++) {
        int want = t->src[i] == MPI_PROC_NULL ? -3 : value(t->src[i], sender_block(t, i));
        int want2 = t->src[i] == MPI_PROC_NULL ? -3 : -want;
        CHECK(recv[3 * i] == want && recv[3 * i + 1] == want2 && recv[3 * i + 2] == -3);
        CHECK(memcmp(recv, recv2, 3 * in * sizeof(int)) == 0);
        checksum += recv[3 * i] * 0.25;
    }

    /* Alltoallw: an int to even destinations, a double to odd ones, at byte places. */
    MPI_Datatype st[MAXD], rt[MAXD];
    MPI_Aint sdw[MAXD], rdw[MAXD];
    char sbuf[MAXD * 8], rbuf[MAXD * 8], rbuf2[MAXD * 8];
    for (int j = 0; j < out; j++) {
        sc[j] = 1;
        sdw[j] = 8 * j;
        if (j % 2 == 0) {
            st[j] = MPI_INT;
            *(int *)(sbuf + 8 * j) = value(rank, j);
        } else {
            st[j] = MPI_DOUBLE;
            *(double *)(sbuf + 8 * j) = value(rank, j) + 0.5;
        }
    }
    for (int i = 0; i < in; i++) {
        rc[i] = 1;
        rdw[i] = 8 * (in - 1 - i);
        /* The sender's block decides the type. */
        int j = t->src[i] == MPI_PROC_NULL ? 0 : sender_block(t, i);
        rt[i] = j % 2 == 0 ? MPI_INT : MPI_DOUBLE;
    }
    memset(rbuf, 0, sizeof rbuf);
    memset(rbuf2, 0, sizeof rbuf2);
    CHECK_OK(MPI_Neighbor_alltoallw(sbuf, sc, sdw, st, rbuf, rc, rdw, rt, comm));
    CHECK_OK(MPI_Ineighbor_alltoallw(sbuf, sc, sdw, st, rbuf2, rc, rdw, rt, comm, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(memcmp(rbuf, rbuf2, sizeof rbuf) == 0);
    for (int i = 0; i < in; i++) {
        char *e = rbuf + rdw[i];
        if (t->src[i] == MPI_PROC_NULL) {
            CHECK(*(int *)e == 0);
            continue;
        }
        int j = sender_block(t, i);
        if (j % 2 == 0) CHECK(*(int *)e == value(t->src[i], j));
        else CHECK(*(double *)e == value(t->src[i], j) + 0.5);
        checksum += j;
    }
}

/* A graph: rank i's neighbours are i + 1 and i - 1 (mod n), and i + 2 for even i
 * (repeated edges and self-loops on few ranks: MPI allows a multigraph). */
static void graph(void) {
    int index[MAXN], edges[MAXN * 3], m = 0;
    struct topo t = {0};
    for (int i = 0; i < size; i++) {
        int *d = t.all_dst[i], k = 0;
        d[k++] = (i + 1) % size;
        d[k++] = (i + size - 1) % size;
        if (i % 2 == 0) d[k++] = (i + 2) % size;
        t.all_outdeg[i] = k;
        for (int j = 0; j < k; j++) edges[m++] = d[j];
        index[i] = m;
    }
    MPI_Comm g;
    CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    int kind, nn, ne;
    CHECK_OK(MPI_Topo_test(g, &kind));
    CHECK(kind == MPI_GRAPH);
    CHECK_OK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == size && ne == m);
    int gi[MAXN], ge[MAXN * 3];
    CHECK_OK(MPI_Graph_get(g, MAXN, MAXN * 3, gi, ge));
    CHECK(memcmp(gi, index, size * sizeof(int)) == 0 && memcmp(ge, edges, m * sizeof(int)) == 0);
    int cnt, nb[MAXD];
    CHECK_OK(MPI_Graph_neighbors_count(g, rank, &cnt));
    CHECK(cnt == t.all_outdeg[rank]);
    CHECK_OK(MPI_Graph_neighbors(g, rank, MAXD, nb));
    CHECK(memcmp(nb, t.all_dst[rank], cnt * sizeof(int)) == 0);
    int newrank;
    CHECK_OK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &newrank));
    CHECK(newrank == rank);
    /* A graph query on a communicator without one is MPI_ERR_TOPOLOGY. */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int err = MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), cls;
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_TOPOLOGY);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* The neighbourhood collectives: a graph rank's neighbours are its sources and its
     * destinations, so every edge must be listed by both ends (rank r's k-th listing
     * of s pairs with s's k-th listing of r): the symmetric part, i +- 1. */
    MPI_Comm sym;
    int sidx[MAXN], sedg[MAXN * 2], sm = 0;
    struct topo st = {0};
    for (int i = 0; i < size; i++) {
        st.all_dst[i][0] = sedg[sm++] = (i + 1) % size;
        st.all_dst[i][1] = sedg[sm++] = (i + size - 1) % size;
        st.all_outdeg[i] = 2;
        sidx[i] = sm;
    }
    CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, size, sidx, sedg, 1, &sym));
    st.indeg = st.outdeg = 2;
    memcpy(st.src, st.all_dst[rank], sizeof st.src);
    memcpy(st.dst, st.all_dst[rank], sizeof st.dst);
    neighborhood(sym, &st);
    CHECK_OK(MPI_Comm_free(&sym));
    CHECK_OK(MPI_Comm_free(&g));
    /* A graph of fewer nodes than ranks: the others get MPI_COMM_NULL. */
    int one_index[1] = {0};
    CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, 1, one_index, edges, 0, &g));
    CHECK((rank == 0) == (g != MPI_COMM_NULL));
    if (g != MPI_COMM_NULL) CHECK_OK(MPI_Comm_free(&g));
}

/* Distributed graphs: rank i receives from i - 1 and i - 2 and sends to i + 1 and
 * i + 2 (mod n), weighted i * 10 + k, then unweighted; then the same graph named by
 * rank 0 alone through MPI_Dist_graph_create. */
static void dist_graph(void) {
    struct topo t = {0};
    for (int s = 0; s < size; s++) {
        t.all_dst[s][0] = (s + 1) % size;
        t.all_dst[s][1] = (s + 2) % size;
        t.all_outdeg[s] = 2;
    }
    t.indeg = t.outdeg = 2;
    t.src[0] = (rank + size - 1) % size;
    t.src[1] = (rank + size - 2) % size;
    memcpy(t.dst, t.all_dst[rank], 2 * sizeof(int));
    int sw[2] = {rank * 10, rank * 10 + 1}, dw[2] = {rank * 10 + 2, rank * 10 + 3};
    MPI_Comm d;
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, t.src, sw, 2, t.dst, dw,
                                            MPI_INFO_NULL, 0, &d));
    int kind, indeg, outdeg, weighted;
    CHECK_OK(MPI_Topo_test(d, &kind));
    CHECK(kind == MPI_DIST_GRAPH);
    CHECK_OK(MPI_Dist_graph_neighbors_count(d, &indeg, &outdeg, &weighted));
    CHECK(indeg == 2 && outdeg == 2 && weighted);
    int s[2], sws[2], ds[2], dws[2];
    CHECK_OK(MPI_Dist_graph_neighbors(d, 2, s, sws, 2, ds, dws));
    CHECK(memcmp(s, t.src, sizeof s) == 0 && memcmp(ds, t.dst, sizeof ds) == 0);
    CHECK(memcmp(sws, sw, sizeof sws) == 0 && memcmp(dws, dw, sizeof dws) == 0);
    neighborhood(d, &t);
    CHECK_OK(MPI_Comm_free(&d));

    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, t.src, MPI_UNWEIGHTED, 2, t.dst,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &d));
    CHECK_OK(MPI_Dist_graph_neighbors_count(d, &indeg, &outdeg, &weighted));
    CHECK(indeg == 2 && outdeg == 2 && !weighted);
    CHECK_OK(MPI_Dist_graph_neighbors(d, 2, s, MPI_UNWEIGHTED, 2, ds, MPI_UNWEIGHTED));
    CHECK(memcmp(s, t.src, sizeof s) == 0 && memcmp(ds, t.dst, sizeof ds) == 0);
    neighborhood(d, &t);
    CHECK_OK(MPI_Comm_free(&d));

    /* Rank 0 names every edge s -> s + 1 and s -> s + 2 (weight 7s + k); the others
     * name none (MPI_WEIGHTS_EMPTY). Each end learns its edges, ordered by who named
     * them and then as named: here sources ascending from rank 0's list. */
    int nodes[MAXN], degrees[MAXN], targets[2 * MAXN], weights[2 * MAXN];
    for (int i = 0; i < size; i++) {
        nodes[i] = i;
        degrees[i] = 2;
        targets[2 * i] = (i + 1) % size;
        targets[2 * i + 1] = (i + 2) % size;
        weights[2 * i] = 7 * i;
        weights[2 * i + 1] = 7 * i + 1;
    }
    if (rank == 0)
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, size, nodes, degrees, targets, weights,
                                       MPI_INFO_NULL, 0, &d));
    else
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, nodes, degrees, targets,
                                       MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &d));
    CHECK_OK(MPI_Dist_graph_neighbors_count(d, &indeg, &outdeg, &weighted));
    CHECK(indeg == 2 && outdeg == 2 && weighted);
    CHECK_OK(MPI_Dist_graph_neighbors(d, 2, s, sws, 2, ds, dws));
    /* Out-edges as rank 0 listed them; in-edges from the sources in rank 0's order. */
    CHECK(ds[0] == t.dst[0] && ds[1] == t.dst[1] && dws[0] == 7 * rank && dws[1] == 7 * rank + 1);
    struct topo u = t;
    for (int i = 0, k = 0; i < 2 * size && k < 2; i++)
        if (targets[i] == rank) {
            u.src[k] = i / 2;
            CHECK(s[k] == i / 2 && sws[k] == weights[i]);
            k++;
        }
    neighborhood(d, &u);
    CHECK_OK(MPI_Comm_free(&d));
}

/* Cartesian grids: a periodic ring of every rank, and a non-periodic 2-D grid. */
static void cartesian(void) {
    struct topo t = {0};
    t.cart = 1;
    int dims[2] = {size, 0}, periods[2] = {1, 0};
    MPI_Comm ring, grid;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    t.indeg = t.outdeg = 2;
    CHECK_OK(MPI_Cart_shift(ring, 0, 1, &t.src[0], &t.src[1]));
    memcpy(t.dst, t.src, sizeof t.dst);
    neighborhood(ring, &t);
    CHECK_OK(MPI_Comm_free(&ring));

    dims[0] = 0;
    dims[1] = 0;
    CHECK_OK(MPI_Dims_create(size, 2, dims));
    int open[2] = {0, 0};
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open, 0, &grid));
    t.indeg = t.outdeg = 4;
    for (int d = 0; d < 2; d++)
        CHECK_OK(MPI_Cart_shift(grid, d, 1, &t.src[2 * d], &t.src[2 * d + 1]));
    memcpy(t.dst, t.src, sizeof t.dst);
    int kind;
    CHECK_OK(MPI_Topo_test(grid, &kind));
    CHECK(kind == MPI_CART);
    neighborhood(grid, &t);
    CHECK_OK(MPI_Comm_free(&grid));
}

int main(int argc, char **argv) {
    struct test_run run = test_start(&argc, &argv, MAXN, 3, &rank, &size);
    int kind;
    CHECK_OK(MPI_Topo_test(MPI_COMM_WORLD, &kind));
    CHECK(kind == MPI_UNDEFINED);
    for (round_ = 0; round_ < run.rounds; round_++) {
        graph();
        dist_graph();
        cartesian();
        nanosleep(&run.work, NULL);
    }
    return test_finish("coll_topo", checksum);
}
