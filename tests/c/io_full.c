/* MPI-IO on a full disk: `io_full DIR BYTES`. Every rank writes BYTES bytes of its own
 * block of DIR/full.dat collectively, then closes the file; the disk (a small tmpfs)
 * refuses them. The error reaches the program as MPI_ERR_NO_SPACE, from the write or at
 * the latest from MPI_File_close (as for close(2) on NFS), under MPI_ERRORS_RETURN, the
 * default on files. Prints "rank R write class W close class C". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
    int rank, size, wc, cc;
    CHECK(argc > 2);
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    char path[4096];
    snprintf(path, sizeof path, "%s/full.dat", argv[1]);
    int n = atoi(argv[2]);
    char *data = malloc(n);
    memset(data, 'a' + rank, n);
    MPI_File fh;
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                           &fh));
    int w = MPI_File_write_at_all(fh, (MPI_Offset)rank * n, data, n, MPI_CHAR, MPI_STATUS_IGNORE);
    int c = MPI_File_close(&fh);
    MPI_Error_class(w, &wc);
    MPI_Error_class(c, &cc);
    printf("rank %d write class %d close class %d\n", rank, wc, cc);
    free(data);
    CHECK_OK(MPI_Finalize());
    return 0;
}
