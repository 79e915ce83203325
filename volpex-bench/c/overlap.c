/* Communication while the sender computes, with MPI: the same method as
 * `volpex-bench overlap` (volpex-bench/src/overlap.rs), for the side-by-side comparison.
 * Compute phases are busy spins on CLOCK_MONOTONIC that never call MPI.
 * - arrival (2 ranks on one host): for each size S, burst length M and compute time C,
 *   after a barrier rank 0 reads CLOCK_MONOTONIC, does M MPI_Isend of S bytes, spins C
 *   us, MPI_Waitall, and sends its clock reading (tag 1); rank 1 receives the M messages
 *   and reads the clock; the row is the median over iterations of the difference.
 * - pipeline (N ranks): K times, receive S bytes from the left (not rank 0), spin W us,
 *   send S bytes to the right (not the last rank); the slowest rank's time from a
 *   barrier to its last step.
 * Output rows: test,size_bytes,messages,compute_us,time_us (pipeline: messages = K).
 * Usage: overlap [--part arrival|pipeline] [--csv] [--sizes B,...] [--compute-us C,...]
 *                [--messages M,...] [--iters N] [--bytes B] [--work-us W]
 *                [--steps K] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP_ITERS 3 /* WARMUP_ITERS in overlap.rs */
#define MAX_LIST 32
#define CLOCK_TAG 1 /* CLOCK_TAG in overlap.rs */
#define SETTLE_US 100 /* SETTLE_US in overlap.rs */

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void spin(long us) {
    double end = now_us() + (double)us;
    while (now_us() < end) {
    }
}

/* Parses a comma-separated list of non-negative integers into `out`; returns the count,
 * or -1 when the list is malformed or too long. */
static int parse_list(const char *s, long *out) {
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || n == MAX_LIST) return -1;
        out[n++] = v;
        if (*end == ',') end++;
        else if (*end) return -1;
        s = end;
    }
    return n;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, long n) {
    if (n == 0) return 0.0 / 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void header(int csv) {
    if (csv) printf("test,size_bytes,messages,compute_us,time_us\n");
    else printf("%-10s %10s %10s %12s %14s\n", "test", "bytes", "messages", "compute_us", "time_us");
}

static void row(int csv, const char *test, long size, long m, long c, double t) {
    if (csv) printf("%s,%ld,%ld,%ld,%.3f\n", test, size, m, c, t);
    else printf("%-10s %10ld %10ld %12ld %14.3f\n", test, size, m, c, t);
    fflush(stdout);
}

static void usage_error(const char *arg) {
    fprintf(stderr, "overlap: bad or unknown argument %s\n", arg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv) {
    int csv = 0, pipeline = 0;
    long sizes[MAX_LIST] = {8, 65536}, compute[MAX_LIST] = {0, 100, 1000, 10000};
    long messages[MAX_LIST] = {1, 2};
    int nsizes = 2, ncompute = 4, nmessages = 2;
    long iters = 30, bytes = 1024, work_us = 100, steps = 1000;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--csv")) csv = 1;
        else if (!v) usage_error(a);
        else if (!strcmp(a, "--part")) {
            if (!strcmp(v, "pipeline")) pipeline = 1;
            else if (strcmp(v, "arrival")) usage_error(v);
            i++;
        } else if (!strcmp(a, "--sizes")) {
            if ((nsizes = parse_list(v, sizes)) < 0) usage_error(v);
            i++;
        } else if (!strcmp(a, "--compute-us")) {
            if ((ncompute = parse_list(v, compute)) < 0) usage_error(v);
            i++;
        } else if (!strcmp(a, "--messages")) {
            if ((nmessages = parse_list(v, messages)) < 0) usage_error(v);
            i++;
        } else if (!strcmp(a, "--iters")) iters = atol(argv[++i]);
        else if (!strcmp(a, "--bytes")) bytes = atol(argv[++i]);
        else if (!strcmp(a, "--work-us")) work_us = atol(argv[++i]);
        else if (!strcmp(a, "--steps")) steps = atol(argv[++i]);
        else usage_error(a);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!pipeline) {
        if (size != 2) {
            if (rank == 0) fprintf(stderr, "overlap --part arrival needs exactly 2 ranks\n");
            MPI_Finalize();
            return 2;
        }
        long max = 1;
        for (int s = 0; s < nsizes; s++)
            if (sizes[s] > max) max = sizes[s];
        char *buf = calloc((size_t)max, 1);
        double *samples = calloc((size_t)(iters > 0 ? iters : 1), sizeof(double));
        if (rank == 1) header(csv);
        MPI_Request reqs[MAX_LIST];
        for (int m = 0; m < nmessages; m++)
            if (messages[m] > MAX_LIST) usage_error("--messages (at most 32)");
        for (int s = 0; s < nsizes; s++)
            for (int m = 0; m < nmessages; m++)
                for (int c = 0; c < ncompute; c++) {
                    long n = 0;
                    for (long i = 0; i < iters + WARMUP_ITERS; i++) {
                        MPI_Barrier(MPI_COMM_WORLD);
                        if (rank == 0) {
                            spin(SETTLE_US);
                            double sent = now_us();
                            for (long j = 0; j < messages[m]; j++)
                                MPI_Isend(buf, (int)sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD, &reqs[j]);
                            spin(compute[c]);
                            MPI_Waitall((int)messages[m], reqs, MPI_STATUSES_IGNORE);
                            MPI_Send(&sent, 1, MPI_DOUBLE, 1, CLOCK_TAG, MPI_COMM_WORLD);
                        } else {
                            for (long j = 0; j < messages[m]; j++)
                                MPI_Recv(buf, (int)sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                                         MPI_STATUS_IGNORE);
                            double arrived = now_us(), sent;
                            MPI_Recv(&sent, 1, MPI_DOUBLE, 0, CLOCK_TAG, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE);
                            if (i >= WARMUP_ITERS) samples[n++] = arrived - sent;
                        }
                    }
                    if (rank == 1) row(csv, "arrival", sizes[s], messages[m], compute[c], median(samples, n));
                }
        free(samples);
        free(buf);
    } else {
        char *buf = calloc((size_t)(bytes > 0 ? bytes : 1), 1);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_us();
        for (long k = 0; k < steps; k++) {
            if (rank > 0)
                MPI_Recv(buf, (int)bytes, MPI_BYTE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            spin(work_us);
            if (rank + 1 < size) MPI_Send(buf, (int)bytes, MPI_BYTE, rank + 1, 0, MPI_COMM_WORLD);
        }
        double mine = now_us() - t0, worst = 0;
        MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            header(csv);
            row(csv, "pipeline", bytes, steps, work_us, worst);
        }
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
