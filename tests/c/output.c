/* MPIX_Output_open / MPIX_Output_commit: each rank writes DIR/out-RANK.txt with stdio,
 * one line every WORK_MS milliseconds (an all-reduce between lines keeps the ranks in
 * step), then commits it. Under replication exactly one complete copy must appear at
 * each path, whatever replicas die mid-write, and no temporary may stay behind: the test
 * checks the directory. Arguments: DIR [LINES [WORK_MS]] (DIR, 20, 0). */
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
    int lines = argc > 2 ? atoi(argv[2]) : 20;
    int work_ms = argc > 3 ? atoi(argv[3]) : 0;
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    char path[1024], tmp[MPIX_MAX_OUTPUT_PATH];
    snprintf(path, sizeof path, "%s/out-%d.txt", argv[1], rank);

    /* A tmp_path buffer too small is refused (MPI_ERR_ARG), and nothing is begun. */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char tiny[4];
    CHECK(MPIX_Output_open(path, tiny, sizeof tiny) == MPI_ERR_ARG);
    CHECK(MPIX_Output_commit(path) == MPI_ERR_ARG);

    CHECK_OK(MPIX_Output_open(path, tmp, sizeof tmp));
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL);
    long sum = 0;
    for (int i = 0; i < lines; i++) {
        long mine = rank + i, all = 0;
        CHECK_OK(MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(fprintf(f, "rank %d line %d sum %ld\n", rank, i, all) > 0);
        CHECK(fflush(f) == 0);
        sum += all;
        if (work_ms > 0) nanosleep(&work, NULL);
    }
    CHECK(fclose(f) == 0);
    CHECK_OK(MPIX_Output_commit(path));
    /* Committed once: a second commit has nothing to commit. */
    CHECK(MPIX_Output_commit(path) == MPI_ERR_ARG);
    if (rank == 0) printf("output: ok size %d sum %ld\n", size, sum);
    CHECK_OK(MPI_Finalize());
    return 0;
}
