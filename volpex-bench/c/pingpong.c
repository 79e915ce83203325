/* Ping-pong between ranks 0 and 1 with Open MPI: the same method as
 * `volpex-bench pingpong`, for the side-by-side comparison.
 * One-way latency = half the round trip, averaged after a warm-up;
 * bandwidth = size / one-way time (MB = 1e6 bytes).
 * Usage: pingpong [--csv] [--iters N] [--min-bytes B] [--max-bytes B] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long iters_for(long size, long base) {
    long n = size <= 8192 ? base : base * 8192 / size;
    return n < 100 ? 100 : n; /* MIN_ITERS in pingpong.rs */
}

int main(int argc, char **argv) {
    int csv = 0;
    long base = 2000, min_bytes = 1, max_bytes = 4L << 20;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv")) csv = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) base = atol(argv[++i]);
        else if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc) min_bytes = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) max_bytes = atol(argv[++i]);
        else {
            fprintf(stderr, "pingpong: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "pingpong: needs exactly 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc((size_t)max_bytes > 0 ? (size_t)max_bytes : 1, 1);
    if (rank == 0) {
        if (csv) printf("size_bytes,lat_us,mbps\n");
        else printf("%12s %12s %12s\n", "bytes", "latency_us", "MB/s");
    }
    for (long n = min_bytes; n <= max_bytes; n *= 2) {
        long iters = iters_for(n, base), warm = iters / 10 < 2 ? 2 : iters / 10;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        for (long i = 0; i < iters + warm; i++) {
            if (i == warm) t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double one_way = (MPI_Wtime() - t0) / iters / 2;
        if (rank == 0) {
            if (csv) printf("%ld,%.3f,%.1f\n", n, one_way * 1e6, n / one_way / 1e6);
            else printf("%12ld %12.3f %12.1f\n", n, one_way * 1e6, n / one_way / 1e6);
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
