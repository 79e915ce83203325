/* A collective MPI-IO write, timed: `io_write DIR MIB [contiguous|strided [BLOCK_KIB]]`.
 * Every rank writes MIB / size MiB of DIR/io_write.dat with one MPI_File_write_at_all
 * per 64 MiB of its data: `contiguous`, each rank its own contiguous part of the file
 * (the accesses do not interleave: every rank writes its own runs); `strided` (the
 * default), a view of BLOCK_KIB (64) KiB blocks, rank r's at r, r + size, ... (they
 * interleave: the two-phase path, aggregators writing large runs). The time is from a
 * barrier before MPI_File_open to the end of MPI_File_close (which waits for the data to
 * be written: the file layer's writer applied it, at -r > 1 too); rank 0 prints
 * "io_write: MIB MiB PATTERN in S s (R MiB/s)" and removes the file. DIR must be one the
 * file layer replicates: not under /dev, /proc or /sys (a file in /dev/shm is written by
 * every replica itself, docs/FILES.md); for a RAM disk mount a tmpfs elsewhere. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: io_write DIR MIB [contiguous|strided [BLOCK_KIB]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/io_write.dat", argv[1]);
    long long total = atoll(argv[2]) << 20;
    int strided = argc < 4 || strcmp(argv[3], "contiguous") != 0;
    long long block = (argc > 4 ? atoll(argv[4]) : 64) << 10;
    long long mine = total / size;
    const long long chunk = 64LL << 20;
    char *buf = malloc(chunk);
    for (long long i = 0; i < chunk; i++) buf[i] = (char)(rank + i);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh))
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Datatype blk, ft;
    if (strided) {
        MPI_Type_contiguous((int)block, MPI_BYTE, &blk);
        MPI_Type_create_resized(blk, 0, block * size, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, rank * block, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    }
    for (long long done = 0; done < mine; done += chunk) {
        long long n = mine - done < chunk ? mine - done : chunk;
        MPI_Offset at = strided ? done : rank * mine + done;
        if (MPI_File_write_at_all(fh, at, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE))
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (MPI_File_close(&fh)) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (rank == 0) {
        printf("io_write: %lld MiB %s in %.3f s (%.0f MiB/s)\n", total >> 20,
               strided ? "strided" : "contiguous", t, (double)(total >> 20) / t);
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
