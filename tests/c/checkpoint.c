/* The MPIX_ fault-tolerance extensions from C: an iterative computation whose state is
 * a plain struct, checkpointed with MPIX_Checkpoint every iteration; a regenerated
 * replica gets it back with MPIX_Restored and goes on from there; the starting values
 * come from MPIX_Seed (equal in every replica of a rank). Each iteration a rank mixes
 * in its ring neighbours' first values and the sum over all ranks. At the end rank 0
 * recomputes the whole run serially from every rank's seed: the job's result must
 * equal it. Rank 0 prints a line every 10 iterations (each must appear once).
 * Arguments: [ITERS [PAUSE_MS]] (40, 20). */
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "check.h"

#define LEN 16
#define MAX_RANKS 64

struct state {
    uint64_t iter;
    uint64_t seed;
    uint64_t x[LEN];
    uint64_t sums;
};

static void start(struct state *s, uint64_t seed) {
    memset(s, 0, sizeof *s);
    s->seed = seed;
    for (int i = 0; i < LEN; i++) s->x[i] = seed ^ (uint64_t)(i * 977);
}

static void mix(struct state *s, uint64_t left, uint64_t right, uint64_t sum) {
    for (int i = 0; i < LEN; i++)
        s->x[i] = s->x[i] * 6364136223846793005ULL + (left ^ (right << 1) ^ (uint64_t)i ^ s->iter);
    s->sums += sum;
    s->iter++;
}

static uint64_t digest(const struct state *s) {
    uint64_t d = s->sums;
    for (int i = 0; i < LEN; i++) d = d * 1000003ULL + s->x[i];
    return d;
}

int main(int argc, char **argv) {
    int rank, size, flag, bytes;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    CHECK(size <= MAX_RANKS);
    long iters = argc > 1 ? atol(argv[1]) : 40;
    long pause_ms = argc > 2 ? atol(argv[2]) : 20;
    struct timespec pause = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};

    struct state s;
    CHECK_OK(MPIX_Restored(&s, (int)sizeof s, &bytes, &flag));
    int regenerated;
    CHECK_OK(MPIX_Regenerated(&regenerated));
    if (flag) {
        CHECK(bytes == (int)sizeof s && regenerated);
        fprintf(stderr, "rank %d restored at iteration %lu\n", rank, (unsigned long)s.iter);
    } else {
        uint64_t seed;
        CHECK_OK(MPIX_Seed(MPI_COMM_WORLD, 42, &seed));
        start(&s, seed);
    }
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    while (s.iter < (uint64_t)iters) {
        uint64_t mine = s.x[0], from_left, from_right, sum;
        CHECK_OK(MPI_Sendrecv(&mine, 1, MPI_UINT64_T, right, 1, &from_left, 1, MPI_UINT64_T,
                              left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Sendrecv(&mine, 1, MPI_UINT64_T, left, 2, &from_right, 1, MPI_UINT64_T,
                              right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
        mix(&s, from_left, from_right, sum);
        if (rank == 0 && s.iter % 10 == 0) printf("iteration %lu\n", (unsigned long)s.iter);
        nanosleep(&pause, NULL);
        CHECK_OK(MPIX_Checkpoint(&s, (int)sizeof s, MPI_COMM_WORLD));
    }

    uint64_t mine[2] = {s.seed, digest(&s)}, all[2 * MAX_RANKS];
    CHECK_OK(MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        struct state serial[MAX_RANKS];
        for (int r = 0; r < size; r++) start(&serial[r], all[2 * r]);
        for (long it = 0; it < iters; it++) {
            uint64_t firsts[MAX_RANKS], sum = 0;
            for (int r = 0; r < size; r++) sum += firsts[r] = serial[r].x[0];
            for (int r = 0; r < size; r++)
                mix(&serial[r], firsts[(r + size - 1) % size], firsts[(r + 1) % size], sum);
        }
        uint64_t result = 0;
        for (int r = 0; r < size; r++) {
            CHECK(digest(&serial[r]) == all[2 * r + 1]);
            result ^= all[2 * r + 1];
        }
        for (int r = 1; r < size; r++) CHECK(all[2 * r] != all[0]);
        printf("checkpoint: ok size %d result %016lx\n", size, (unsigned long)result);
    }
    CHECK_OK(MPI_Finalize());
    return 0;
}
