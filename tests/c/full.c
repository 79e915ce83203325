/* A disk that refuses a rank's output: each rank writes BYTES bytes to DIR/out-RANK.dat
 * through MPIX_Output_open and stdio, fcloses it and commits it, then writes
 * DIR/plain-RANK.dat with open, write and close. It prints what each call said (the
 * test runs it on a file system too small to hold it, or read-only): a refused write
 * must reach the program as its call's error and never be published whole-looking.
 * Arguments: DIR BYTES. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv) {
    int rank, cls;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    check_rank = rank;
    CHECK(argc > 2);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    long bytes = atol(argv[2]);
    char path[1024], tmp[MPIX_MAX_OUTPUT_PATH], buf[4096];
    memset(buf, 'x', sizeof buf);
    snprintf(path, sizeof path, "%s/out-%d.dat", argv[1], rank);
    int rc = MPIX_Output_open(path, tmp, sizeof tmp);
    CHECK_OK(MPI_Error_class(rc, &cls));
    if (rc != MPI_SUCCESS) {
        printf("rank %d output open: class %d\n", rank, cls);
    } else {
        FILE *f = fopen(tmp, "w");
        CHECK(f != NULL);
        for (long put = 0; put < bytes && fwrite(buf, 1, sizeof buf, f) == sizeof buf;)
            put += (long)sizeof buf;
        int fc = fclose(f), ferr = errno;
        rc = MPIX_Output_commit(path);
        CHECK_OK(MPI_Error_class(rc, &cls));
        printf("rank %d fclose: %s; commit: class %d\n", rank, fc ? strerror(ferr) : "ok", cls);
    }
    snprintf(path, sizeof path, "%s/plain-%d.dat", argv[1], rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        printf("rank %d open: %s\n", rank, strerror(errno));
    } else {
        long put = 0;
        while (put < bytes && write(fd, buf, sizeof buf) == (ssize_t)sizeof buf)
            put += (long)sizeof buf;
        int c = close(fd), cerr = errno;
        printf("rank %d close: %s\n", rank, c ? strerror(cerr) : "ok");
    }
    CHECK_OK(MPI_Finalize());
    return 0;
}
