/* The profiling interface (MPI-3.1 chapter 14), used as a tool like mpiP uses it: this
 * program defines MPI_Send and MPI_Recv itself, counting calls and passing them on to
 * PMPI_Send and PMPI_Recv, and calls a few PMPI_ functions directly. A ring checks that
 * the wrappers ran and the data went through the library. */
#include <mpi.h>
#include "check.h"

static int sends, recvs;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm) {
    sends++;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Status *status) {
    recvs++;
    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(PMPI_Init(&argc, &argv));
    CHECK_OK(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    for (int i = 0; i < 10; i++) {
        int v = rank * 100 + i;
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, next, i, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(&got, 1, MPI_INT, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == prev * 100 + i);
    }
    CHECK(sends == 10 && recvs == 10);
    int total = 0;
    CHECK_OK(PMPI_Allreduce(&sends, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == 10 * size);
    CHECK(PMPI_Wtime() > 0);
    CHECK_OK(PMPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("pmpi: ok size %d\n", size);
    CHECK_OK(PMPI_Finalize());
    return 0;
}
