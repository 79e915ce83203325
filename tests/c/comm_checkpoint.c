/* Communicators across checkpoints: an inter-communicator (MPI_Intercomm_create over a
 * split of MPI_COMM_WORLD) and a communicator made with MPI_Comm_create_group are made
 * once, before the loop; every iteration mixes what crosses them into a plain-struct
 * state, checkpointed with MPIX_Checkpoint. A regenerated replica restored from its
 * sibling's snapshot (MPIX_Restored) makes the same communicators again, answered from
 * the snapshot without a message (the leaders' exchange and the split's all-gather may
 * be long gone from the senders' logs), and goes on from the checkpointed iteration.
 * Rank 0 prints "iteration N" every 10 iterations and "checkpoint: ok size N digest D"
 * at the end, as tests/c/checkpoint.c does. Arguments: [ITERS [PAUSE_MS]] (40, 20). */
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "check.h"

struct state {
    uint64_t iter;
    uint64_t x[4];
};

int main(int argc, char **argv) {
    int rank, size, flag, bytes;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    CHECK(size >= 2 && size <= 64);
    long iters = argc > 1 ? atol(argv[1]) : 40;
    long pause_ms = argc > 2 ? atol(argv[2]) : 20;
    struct timespec pause = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};

    struct state s;
    CHECK_OK(MPIX_Restored(&s, (int)sizeof s, &bytes, &flag));
    if (flag) {
        CHECK(bytes == (int)sizeof s);
        fprintf(stderr, "rank %d restored at iteration %lu\n", rank, (unsigned long)s.iter);
    } else {
        memset(&s, 0, sizeof s);
        for (int i = 0; i < 4; i++) s.x[i] = (uint64_t)(rank * 31 + i);
    }

    /* The same calls whether restored or not. */
    int nleft = size / 2, is_left = rank < nleft;
    MPI_Comm half, ic, evens;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, is_left, rank, &half));
    CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, is_left ? nleft : 0, 9, &ic));
    MPI_Group world, g;
    int members[64], n = 0;
    for (int r = rank % 2; r < size; r += 2) members[n++] = r;
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_OK(MPI_Group_incl(world, n, members, &g));
    CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, rank % 2, &evens));
    CHECK_OK(MPI_Group_free(&g));
    CHECK_OK(MPI_Group_free(&world));

    while (s.iter < (uint64_t)iters) {
        uint64_t other[4], mine = s.x[0], in_group, lead;
        /* Each group gets the sum of the other group's vectors. */
        CHECK_OK(MPI_Allreduce(s.x, other, 4, MPI_UINT64_T, MPI_SUM, ic));
        /* The left leader's first value to the right group. */
        int root = is_left ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        lead = mine;
        CHECK_OK(MPI_Bcast(&lead, 1, MPI_UINT64_T, root, ic));
        CHECK_OK(MPI_Allreduce(&mine, &in_group, 1, MPI_UINT64_T, MPI_SUM, evens));
        for (int i = 0; i < 4; i++)
            s.x[i] = s.x[i] * 6364136223846793005ULL + (other[i] ^ (in_group << 1) ^ s.iter);
        if (!is_left) s.x[0] ^= lead;
        s.iter++;
        if (rank == 0 && s.iter % 10 == 0) printf("iteration %lu\n", (unsigned long)s.iter);
        nanosleep(&pause, NULL);
        CHECK_OK(MPIX_Checkpoint(&s, (int)sizeof s, MPI_COMM_WORLD));
    }

    uint64_t d = 0, all[64];
    for (int i = 0; i < 4; i++) d = d * 1000003ULL + s.x[i];
    CHECK_OK(MPI_Gather(&d, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        uint64_t digest = 0;
        for (int r = 0; r < size; r++) digest = digest * 1000003ULL + all[r];
        printf("checkpoint: ok size %d digest %llu\n", size, (unsigned long long)digest);
    }
    CHECK_OK(MPI_Comm_free(&evens));
    CHECK_OK(MPI_Comm_free(&ic));
    CHECK_OK(MPI_Comm_free(&half));
    CHECK_OK(MPI_Finalize());
    return 0;
}
