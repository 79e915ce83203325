/* Error handling (MPI-3.1 section 8.3): with MPI_ERRORS_RETURN on MPI_COMM_WORLD every
 * bad argument comes back as its error class and the program goes on; MPI_Error_string
 * and MPI_Error_class describe it. With the argument "fatal", rank 1 (or 0 alone) sends to
 * a rank that does not exist under the default MPI_ERRORS_ARE_FATAL, which must end the
 * program with a message naming MPI_Send. */
#include <mpi.h>
#include <string.h>
#include "check.h"

static void expect(int code, int cls) {
    int got;
    CHECK(code != MPI_SUCCESS);
    CHECK_OK(MPI_Error_class(code, &got));
    if (got != cls) {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(code, s, &len);
        printf("rank %d: FAILED expected class %d, got %d (%s)\n", check_rank, cls, got, s);
        exit(1);
    }
}

static int handler_calls = 0, handler_code = 0;
static MPI_Comm handler_comm = MPI_COMM_NULL;

static void count_errors(MPI_Comm *comm, int *code, ...) {
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;

    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        int v = 1;
        if (rank == (size > 1 ? 1 : 0)) MPI_Send(&v, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        printf("fatal: not reached\n");
        MPI_Finalize();
        return 0;
    }

    MPI_Errhandler eh;
    CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);

    int v[4] = {1, 2, 3, 4};
    expect(MPI_Send(v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    expect(MPI_Send(v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    expect(MPI_Recv(v, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    expect(MPI_Send(v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    expect(MPI_Send(v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    expect(MPI_Send(v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    expect(MPI_Send(NULL, 3, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    expect(MPI_Send(v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    expect(MPI_Send(v, 1, (MPI_Datatype)MPI_COMM_WORLD, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    expect(MPI_Send(v, 1, MPI_INT, 0, 0, (MPI_Comm)12345), MPI_ERR_COMM);
    expect(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    expect(MPI_Bcast(v, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    double d = 1, e;
    expect(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    expect(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    expect(MPI_Allreduce(v, v + 1, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Comm world = MPI_COMM_WORLD;
    expect(MPI_Comm_free(&world), MPI_ERR_COMM);
    MPI_Datatype t;
    CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    expect(MPI_Send(v, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* not committed */
    CHECK_OK(MPI_Type_free(&t));
    expect(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    expect(MPI_Cancel(NULL), MPI_ERR_ARG);
    expect(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, NULL), MPI_ERR_TOPOLOGY); /* no graph */
    MPI_Request r = MPI_REQUEST_NULL;
    expect(MPI_Cancel(&r), MPI_ERR_REQUEST);
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* Truncation: 4 ints into room for 2. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    CHECK_OK(MPI_Send(v, 4, MPI_INT, next, 9, MPI_COMM_WORLD));
    int small[2];
    expect(MPI_Recv(small, 2, MPI_INT, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);

    char s[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_OK(MPI_Error_string(MPI_ERR_RANK, s, &len));
    CHECK(len > 0 && strstr(s, "rank") != NULL);
    CHECK_OK(MPI_Error_string(MPI_SUCCESS, s, &len));

    /* An error of a request is answered by its communicator's handler: MPI_COMM_WORLD is
     * fatal again, the duplicate returns. */
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_OK(MPI_Comm_get_errhandler(dup, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    MPI_Request tr;
    CHECK_OK(MPI_Irecv(small, 2, MPI_INT, prev, 10, dup, &tr));
    CHECK_OK(MPI_Send(v, 4, MPI_INT, next, 10, dup));
    expect(MPI_Wait(&tr, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    CHECK_OK(MPI_Comm_free(&dup));

    /* A handler of the program's own. */
    MPI_Errhandler mine;
    MPI_Comm dup2;
    CHECK_OK(MPI_Comm_create_errhandler(count_errors, &mine));
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup2));
    CHECK_OK(MPI_Comm_set_errhandler(dup2, mine));
    CHECK_OK(MPI_Errhandler_free(&mine));
    CHECK(mine == MPI_ERRHANDLER_NULL);
    expect(MPI_Send(v, 1, MPI_INT, size + 3, 0, dup2), MPI_ERR_RANK);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_RANK && handler_comm == dup2);
    CHECK_OK(MPI_Comm_free(&dup2));

    /* Still working after all that. */
    int one = 1, n;
    CHECK_OK(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(n == size);
    if (rank == 0) printf("errors: ok size %d\n", size);
    CHECK_OK(MPI_Finalize());
    return 0;
}
