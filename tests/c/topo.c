/* Cartesian topologies (MPI-3.1 chapter 7): MPI_Dims_create, a periodic 2-D grid, halo
 * exchange along both dimensions with MPI_Cart_shift, rows and columns with
 * MPI_Cart_sub; and MPI_Reduce_local. Each rank checks its results. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;

    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CHECK_OK(MPI_Dims_create(size, 2, dims));
    CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1]);
    MPI_Comm grid;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    int status, nd, gr;
    CHECK_OK(MPI_Topo_test(grid, &status));
    CHECK(status == MPI_CART);
    CHECK_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED);
    CHECK_OK(MPI_Cartdim_get(grid, &nd));
    CHECK(nd == 2);
    CHECK_OK(MPI_Comm_rank(grid, &gr));
    int d2[2], p2[2], c[2], back;
    CHECK_OK(MPI_Cart_get(grid, 2, d2, p2, c));
    CHECK(d2[0] == dims[0] && d2[1] == dims[1] && p2[0] == 1 && p2[1] == 0);
    CHECK(gr == c[0] * dims[1] + c[1]);
    CHECK_OK(MPI_Cart_rank(grid, c, &back));
    CHECK(back == gr);
    int cc[2];
    CHECK_OK(MPI_Cart_coords(grid, gr, 2, cc));
    CHECK(cc[0] == c[0] && cc[1] == c[1]);

    /* Shift along the periodic dimension 0: always a neighbour. */
    int src, dst;
    CHECK_OK(MPI_Cart_shift(grid, 0, 1, &src, &dst));
    int up[2] = {(c[0] + 1) % dims[0], c[1]}, down[2] = {(c[0] + dims[0] - 1) % dims[0], c[1]}, r_up, r_down;
    CHECK_OK(MPI_Cart_rank(grid, up, &r_up));
    CHECK_OK(MPI_Cart_rank(grid, down, &r_down));
    CHECK(dst == r_up && src == r_down);
    int got = -1;
    CHECK_OK(MPI_Sendrecv(&gr, 1, MPI_INT, dst, 1, &got, 1, MPI_INT, src, 1, grid, MPI_STATUS_IGNORE));
    CHECK(got == r_down);
    /* Along dimension 1 (not periodic): MPI_PROC_NULL at the edges. */
    CHECK_OK(MPI_Cart_shift(grid, 1, 1, &src, &dst));
    CHECK((c[1] == 0) == (src == MPI_PROC_NULL));
    CHECK((c[1] == dims[1] - 1) == (dst == MPI_PROC_NULL));
    got = -1;
    CHECK_OK(MPI_Sendrecv(&gr, 1, MPI_INT, dst, 2, &got, 1, MPI_INT, src, 2, grid, MPI_STATUS_IGNORE));
    CHECK(src == MPI_PROC_NULL ? got == -1 : got == gr - 1);

    /* Rows: keep dimension 1. */
    int keep[2] = {0, 1};
    MPI_Comm row;
    CHECK_OK(MPI_Cart_sub(grid, keep, &row));
    int rr, rs, rowsum;
    CHECK_OK(MPI_Comm_rank(row, &rr));
    CHECK_OK(MPI_Comm_size(row, &rs));
    CHECK(rr == c[1] && rs == dims[1]);
    CHECK_OK(MPI_Allreduce(&gr, &rowsum, 1, MPI_INT, MPI_SUM, row));
    CHECK(rowsum == c[0] * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2);
    CHECK_OK(MPI_Comm_free(&row));

    /* Reduce_local: inout = in op inout. */
    int in[3] = {1, 5, -2}, io[3] = {4, 2, -7};
    CHECK_OK(MPI_Reduce_local(in, io, 3, MPI_INT, MPI_MAX));
    CHECK(io[0] == 4 && io[1] == 5 && io[2] == -2);

    CHECK_OK(MPI_Comm_free(&grid));
    if (rank == 0) printf("topo: ok size %d grid %dx%d\n", size, dims[0], dims[1]);
    CHECK_OK(MPI_Finalize());
    return 0;
}
