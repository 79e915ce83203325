/* Collective timings with MPI: the same method as `volpex-bench collectives`.
 * For each operation (allreduce of doubles with MPI_SUM, bcast of bytes from rank 0,
 * alltoall of bytes) and each size (bytes per rank), rank 0 reports the mean time of
 * one operation over the iterations after a warm-up.
 * Usage: collectives [--csv] [--iters N] [--min-bytes B] [--max-bytes B] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long iters_for(long size, long base) {
    long n = size <= 8192 ? base : base * 8192 / size;
    return n < 10 ? 10 : n;
}

int main(int argc, char **argv) {
    int csv = 0;
    long base = 500, min_bytes = 8, max_bytes = 1L << 20;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv")) csv = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) base = atol(argv[++i]);
        else if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc) min_bytes = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) max_bytes = atol(argv[++i]);
        else {
            fprintf(stderr, "collectives: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *a = calloc((size_t)max_bytes * size + 8, 1), *b = calloc((size_t)max_bytes * size + 8, 1);
    if (rank == 0) {
        if (csv) printf("op,size_bytes,time_us\n");
        else printf("%-10s %12s %12s\n", "op", "bytes", "time_us");
    }
    const char *ops[] = {"allreduce", "broadcast", "alltoall"};
    for (int op = 0; op < 3; op++) {
        for (long n = min_bytes; n <= max_bytes; n *= 4) {
            long iters = iters_for(n, base), warm = iters / 10 < 2 ? 2 : iters / 10;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = 0;
            for (long i = 0; i < iters + warm; i++) {
                if (i == warm) t0 = MPI_Wtime();
                if (op == 0) MPI_Allreduce(a, b, (int)(n / 8 > 0 ? n / 8 : 1), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else if (op == 1) MPI_Bcast(a, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
                else MPI_Alltoall(a, (int)(n / size > 0 ? n / size : 1), MPI_BYTE, b, (int)(n / size > 0 ? n / size : 1), MPI_BYTE, MPI_COMM_WORLD);
            }
            double t = (MPI_Wtime() - t0) / iters;
            if (rank == 0) {
                if (csv) printf("%s,%ld,%.3f\n", ops[op], n, t * 1e6);
                else printf("%-10s %12ld %12.3f\n", ops[op], n, t * 1e6);
                fflush(stdout);
            }
        }
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
