/* A program that ends badly on purpose, for volpexrun's diagnostics (tests/faults.rs,
 * tests/diagnostics.rs). Arguments: MODE [ROUNDS [WORK_MS]].
 *   segv: every rank all-reduces ROUNDS (200) times, WORK_MS (5) apart; halfway, rank 1
 *         dereferences a null pointer, so every replica of rank 1 dies of SIGSEGV at
 *         about the same moment.
 *   exitN: the same, but halfway rank 1 calls exit(N) (the program's own exit code,
 *         which may be one of the codes the runtime also exits with).
 *   nofinalize: every rank all-reduces once, prints its result line, waits in a barrier
 *         until every rank printed (the first exit fails the job and ends the others)
 *         and returns from main without MPI_Finalize. */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    CHECK(argc > 1);
    int rounds = argc > 2 ? atoi(argv[2]) : 200;
    int work_ms = argc > 3 ? atoi(argv[3]) : 5;
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    long sum = 0;
    if (strcmp(argv[1], "nofinalize") == 0) {
        long mine = rank;
        CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        printf("misbehave: rank %d of %d sum %ld\n", rank, size, sum);
        fflush(stdout);
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        return 0;
    }
    int exit_code = -1;
    CHECK(strcmp(argv[1], "segv") == 0 || sscanf(argv[1], "exit%d", &exit_code) == 1);
    for (int i = 0; i < rounds; i++) {
        long mine = rank + i, all = 0;
        if (rank == 1 && i == rounds / 2) {
            if (exit_code >= 0) exit(exit_code);
            volatile int *nowhere = NULL;
            *nowhere = 1;
        }
        CHECK_OK(MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        sum += all;
        nanosleep(&work, NULL);
    }
    if (rank == 0) printf("misbehave: sum %ld\n", sum);
    CHECK_OK(MPI_Finalize());
    return 0;
}
