/* Shared by the C test programs: CHECK fails the program (exit 1) with a line naming
 * the rank, the file, the line and the condition. */
#ifndef VOLPEX_TEST_CHECK_H
#define VOLPEX_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>

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
#endif
