/* Shared by the C test programs: CHECK fails the program (exit 1) with a line naming
 * the rank, the file, the line and the condition. */
#ifndef VOLPEX_TEST_CHECK_H
#define VOLPEX_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int check_rank = -1;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            printf("rank %d: FAILED %s:%d: %s\n", check_rank, __FILE__, __LINE__, #cond); \
            fflush(stdout);                                                          \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#define CHECK_OK(call) CHECK((call) == MPI_SUCCESS)

/* The start of a test program run as `PROGRAM [ROUNDS [WORK_MS]]`: MPI_Init, this
 * process's rank and the size of MPI_COMM_WORLD (at most `max_size`) into `*rank` and
 * `*size`, and the rounds (else `rounds_default`) and the work per round. */
struct test_run {
    int rounds;
    struct timespec work;
};

static inline struct test_run test_start(int *argc, char ***argv, int max_size,
                                         int rounds_default, int *rank, int *size) {
    struct test_run t;
    CHECK_OK(MPI_Init(argc, argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, size));
    check_rank = *rank;
    CHECK(*size <= max_size);
    t.rounds = *argc > 1 ? atoi((*argv)[1]) : rounds_default;
    int work_ms = *argc > 2 ? atoi((*argv)[2]) : 0;
    t.work.tv_sec = work_ms / 1000;
    t.work.tv_nsec = (work_ms % 1000) * 1000000L;
    return t;
}

/* The end of a test program: rank 0 prints "NAME: ok size N checksum X" with the sum of
 * every rank's `checksum`, then MPI_Finalize. */
static inline int test_finish(const char *name, double checksum) {
    int rank, size;
    double total;
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_OK(MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("%s: ok size %d checksum %.2f\n", name, size, total);
    CHECK_OK(MPI_Finalize());
    return 0;
}
#endif
