/* Collective timings with MPI: the same method as `volpex-bench collectives`
 * (volpex-bench/src/collectives.rs).
 * Operations: allreduce of doubles with MPI_SUM, bcast of bytes, alltoall of bytes (the
 * size is the bytes each rank sends in all), and on request allgather of bytes (the bytes
 * each rank receives in all), inclusive scan of doubles with MPI_SUM, and barrier (the
 * size is ignored). Sizes grow by 4x from --min-bytes, and
 * --max-bytes itself is always the last size. The root of the i-th bcast of a size is
 * rank i mod size (as in the Intel MPI Benchmarks).
 * Methods, after a warm-up of iters/10 (at least 2) operations and a barrier:
 * - loop: every rank times a loop of `iters` operations followed by a barrier and divides
 *   by `iters`; the reported time is the maximum of the ranks' times (throughput).
 * - single: every operation starts after a barrier and is timed alone on every rank; the
 *   reported time is the mean over operations of the maximum over ranks (latency).
 * The ranks' times are reduced to rank 0 after the clocks stopped.
 * Usage: collectives [--csv] [--iters N] [--min-bytes B] [--max-bytes B]
 *                    [--method loop|single]
 *                    [--ops allreduce,broadcast,alltoall,allgather,scan,barrier] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_ITERS 20

static long iters_for(long size, long base) {
    long n = size <= 8192 ? base : base * 8192 / size;
    return n < MIN_ITERS ? MIN_ITERS : n;
}

static long nth = 0;

/* Whether `name` is one of the comma-separated names in `list`. */
static int listed(const char *list, const char *name) {
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, name, len)) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

static void one(int op, long n, int size, char *a, char *b) {
    long block = n / size > 0 ? n / size : 1;
    nth++;
    if (op == 0) MPI_Allreduce(a, b, (int)(n / 8 > 0 ? n / 8 : 1), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else if (op == 1) MPI_Bcast(a, (int)n, MPI_BYTE, (int)(nth % size), MPI_COMM_WORLD);
    else if (op == 2) MPI_Alltoall(a, (int)block, MPI_BYTE, b, (int)block, MPI_BYTE, MPI_COMM_WORLD);
    else if (op == 3) MPI_Allgather(a, (int)block, MPI_BYTE, b, (int)block, MPI_BYTE, MPI_COMM_WORLD);
    else if (op == 4) MPI_Scan(a, b, (int)(n / 8 > 0 ? n / 8 : 1), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    int csv = 0, single = 0;
    const char *only = "allreduce,broadcast,alltoall";
    long base = 500, min_bytes = 8, max_bytes = 1L << 20;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv")) csv = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) base = atol(argv[++i]);
        else if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc) min_bytes = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) max_bytes = atol(argv[++i]);
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--method") && i + 1 < argc && !strcmp(argv[i + 1], "loop")) single = 0, i++;
        else if (!strcmp(argv[i], "--method") && i + 1 < argc && !strcmp(argv[i + 1], "single")) single = 1, i++;
        else {
            fprintf(stderr, "collectives: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (min_bytes < 1) min_bytes = 1;
    if (max_bytes < 1) max_bytes = 1;
    if (min_bytes > max_bytes) min_bytes = max_bytes;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Doubles for the all-reduce, blocks of max_bytes / size for the all-to-all. */
    size_t cap = (size_t)max_bytes + 8 * (size_t)size + 8;
    char *a = calloc(cap, 1), *b = calloc(cap, 1);
    if (!a || !b) {
        fprintf(stderr, "collectives: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Real pages on both sides, as the Rust side's buffers: an untouched calloc'd buffer
     * reads as the kernel's one zero page, which stays in cache, so sends and the own
     * block's copy would read from cache instead of memory. */
    memset(a, 7, cap);
    memset(b, 0, cap);
    if (rank == 0) {
        if (csv) printf("op,size_bytes,time_us\n");
        else printf("%-10s %12s %12s\n", "op", "bytes", "time_us");
    }
    const char *ops[] = {"allreduce", "broadcast", "alltoall", "allgather", "scan", "barrier"};
    for (int op = 0; op < 6; op++) {
        if (!listed(only, ops[op])) continue;
        for (long n = min_bytes;; n = n * 4 < max_bytes ? n * 4 : max_bytes) {
            long iters = iters_for(n, base), warm = iters / 10 < 2 ? 2 : iters / 10;
            nth = 0;
            for (long i = 0; i < warm; i++) one(op, n, size, a, b);
            MPI_Barrier(MPI_COMM_WORLD);
            /* Per-rank times: one per operation (single) or one for the loop. */
            long k = single ? iters : 1;
            double *mine = malloc(sizeof(double) * k), *worst = malloc(sizeof(double) * k);
            if (!mine || !worst) {
                fprintf(stderr, "collectives: out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (single) {
                for (long i = 0; i < iters; i++) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    double t0 = MPI_Wtime();
                    one(op, n, size, a, b);
                    mine[i] = (MPI_Wtime() - t0) * 1e6;
                }
            } else {
                double t0 = MPI_Wtime();
                for (long i = 0; i < iters; i++) one(op, n, size, a, b);
                MPI_Barrier(MPI_COMM_WORLD);
                mine[0] = (MPI_Wtime() - t0) / iters * 1e6;
            }
            MPI_Reduce(mine, worst, (int)k, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            double t = 0;
            for (long i = 0; i < k; i++) t += worst[i];
            t /= k;
            free(mine);
            free(worst);
            if (rank == 0) {
                if (csv) printf("%s,%ld,%.3f\n", ops[op], n, t);
                else printf("%-10s %12ld %12.3f\n", ops[op], n, t);
                fflush(stdout);
            }
            if (n >= max_bytes) break;
        }
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
