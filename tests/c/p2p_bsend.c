/* Buffered and ready sends (MPI-3.1 sections 3.4 and 3.6), in a ring, every round: a
 * buffered send with no buffer attached is MPI_ERR_BUFFER; with one attached, messages
 * that fit with MPI_BSEND_OVERHEAD go (MPI_Bsend, MPI_Ibsend, MPI_Bsend_init), one that
 * does not is MPI_ERR_BUFFER and sends nothing; a second attach is MPI_ERR_BUFFER;
 * MPI_Buffer_detach returns the buffer and size attached (and null and 0 with none);
 * MPI_Rsend to a posted receive. Every message that went arrives, in order. Rank 0 prints
 * one line that the test compares. Arguments: [ROUNDS [WORK_MS]] (20, 0). */
#include <mpi.h>
#include <time.h>
#include "check.h"

#define N 100

static int error_class(int code) {
    int c = -1;
    CHECK_OK(MPI_Error_class(code, &c));
    return c;
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int work_ms = argc > 2 ? atoi(argv[2]) : 0;
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Comm comm;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* Room for three messages of N ints. */
    int bufsize = 3 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buf = malloc(bufsize), *other = malloc(64);
    CHECK(buf && other);
    int out[4][N], in[N], big[4 * N];
    double sum = 0;
    MPI_Request r, pers;
    MPI_Status st;
    void *back;
    int backsize;

    for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < N; i++) out[k][i] = rank * 10000 + round * 10 + k + i;

        CHECK(error_class(MPI_Bsend(out[0], N, MPI_INT, next, 1, comm)) == MPI_ERR_BUFFER);
        CHECK_OK(MPI_Buffer_detach(&back, &backsize));
        CHECK(back == NULL && backsize == 0);

        CHECK_OK(MPI_Buffer_attach(buf, bufsize));
        CHECK(error_class(MPI_Buffer_attach(other, 64)) == MPI_ERR_BUFFER);
        CHECK_OK(MPI_Bsend(out[0], N, MPI_INT, next, 1, comm));
        CHECK_OK(MPI_Ibsend(out[1], N, MPI_INT, next, 1, comm, &r));
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK_OK(MPI_Bsend_init(out[2], N, MPI_INT, next, 1, comm, &pers));
        CHECK_OK(MPI_Start(&pers));
        CHECK_OK(MPI_Wait(&pers, &st));
        CHECK_OK(MPI_Request_free(&pers));
        /* Larger than the whole buffer: refused, nothing sent. */
        CHECK(error_class(MPI_Bsend(big, 4 * N, MPI_INT, next, 1, comm)) == MPI_ERR_BUFFER);
        CHECK(error_class(MPI_Ibsend(big, 4 * N, MPI_INT, next, 1, comm, &r)) == MPI_ERR_BUFFER);
        CHECK_OK(MPI_Buffer_detach(&back, &backsize));
        CHECK(back == buf && backsize == bufsize);
        CHECK(error_class(MPI_Bsend(out[3], N, MPI_INT, next, 1, comm)) == MPI_ERR_BUFFER);

        for (int k = 0; k < 3; k++) {
            CHECK_OK(MPI_Recv(in, N, MPI_INT, prev, 1, comm, &st));
            for (int i = 0; i < N; i++) CHECK(in[i] == prev * 10000 + round * 10 + k + i);
            sum += in[N - 1];
        }

        /* Ready mode: the receive is posted before the barrier, the send after it. */
        CHECK_OK(MPI_Irecv(in, N, MPI_INT, prev, 2, comm, &r));
        CHECK_OK(MPI_Barrier(comm));
        CHECK_OK(MPI_Rsend(out[3], N, MPI_INT, next, 2, comm));
        CHECK_OK(MPI_Wait(&r, &st));
        for (int i = 0; i < N; i++) CHECK(in[i] == prev * 10000 + round * 10 + 3 + i);
        sum += in[0];

        if (work_ms > 0) nanosleep(&work, NULL);
    }
    /* Nothing else was sent on the ring's tag: the refused messages never went. */
    CHECK_OK(MPI_Barrier(comm));
    CHECK_OK(MPI_Iprobe(prev, 1, comm, &backsize, &st));
    CHECK(!backsize);
    CHECK_OK(MPI_Comm_free(&comm));
    free(buf);
    free(other);

    double all = 0;
    CHECK_OK(MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("p2p_bsend: ok size %d checksum %.2f\n", size, all);
    CHECK_OK(MPI_Finalize());
    return 0;
}
