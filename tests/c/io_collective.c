/* A long two-phase collective write, for the aggregator's replicas dying in it:
 * `io_collective DIR CALLS WORK_MS [CB_KIB [PRIVATE]]`. Every rank views DIR/io.dat as blocks of
 * 4 KiB dealt to the ranks in turn and writes 64 of them per MPI_File_write_at_all (bytes
 * that name the rank, the call and the place; the buffer is rewritten for each call),
 * CALLS times, WORK_MS of sleep between calls; `cb_buffer_size` of CB_KIB (64) KiB makes
 * each call 16 rounds of one aggregator (rank 0, one host); 1024 makes it one round in
 * which each rank sends the aggregator 256 KiB, a block lent to the transport for the
 * call, not copied into its sender log. Under replication the follower of rank 0
 * receives no block while its writer lives (docs/FILES.md, "Writes without their
 * bytes"); killed mid-write, the writer leaves the follower to fetch the blocks of the
 * writes it did not report applied. With PRIVATE 1, each rank also rewrites a file of
 * its own, DIR/priv.RANK, with stdio after each call and reads it back: a new
 * incarnation replaying the calls reads what it wrote then, not what its writer has
 * written since. Prints "io_collective: ok size BYTES". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"

enum { BLOCK = 4096, PER_CALL = 64, PRIV_LINES = 200 };

/* Rewrites DIR/priv.RANK with call `c`'s lines and reads them back. */
static void private_file(const char *dir, int rank, int c) {
    char path[4096], want[64], got[64];
    snprintf(path, sizeof path, "%s/priv.%d", dir, rank);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int l = 0; l < PRIV_LINES; l++)
        CHECK(fprintf(f, "rank %d call %d line %d\n", rank, c, l) > 0);
    CHECK(fclose(f) == 0);
    f = fopen(path, "r");
    CHECK(f != NULL);
    for (int l = 0; l < PRIV_LINES; l++) {
        snprintf(want, sizeof want, "rank %d call %d line %d\n", rank, c, l);
        CHECK(fgets(got, sizeof got, f) != NULL);
        if (strcmp(got, want) != 0) {
            printf("rank %d: FAILED priv.%d line %d reads '%s' after call %d\n", rank, rank, l,
                   got, c);
            fflush(stdout);
            exit(1);
        }
    }
    CHECK(fgets(got, sizeof got, f) == NULL);
    CHECK(fclose(f) == 0);
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK(argc > 3);
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    char path[4096];
    snprintf(path, sizeof path, "%s/io.dat", argv[1]);
    int calls = atoi(argv[2]);
    int work_ms = atoi(argv[3]);
    int priv = argc > 5 && atoi(argv[5]) != 0;
    MPI_Info info;
    CHECK_OK(MPI_Info_create(&info));
    char cb[32];
    snprintf(cb, sizeof cb, "%d", (argc > 4 ? atoi(argv[4]) : 64) * 1024);
    CHECK_OK(MPI_Info_set(info, "cb_buffer_size", cb));
    MPI_File fh;
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    MPI_Datatype one, filetype;
    CHECK_OK(MPI_Type_contiguous(BLOCK, MPI_BYTE, &one));
    CHECK_OK(MPI_Type_create_resized(one, 0, (MPI_Aint)BLOCK * size, &filetype));
    CHECK_OK(MPI_Type_commit(&filetype));
    CHECK_OK(MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, filetype, "native", info));
    unsigned char *buf = malloc((size_t)BLOCK * PER_CALL);
    CHECK(buf != NULL);
    for (int c = 0; c < calls; c++) {
        for (size_t i = 0; i < (size_t)BLOCK * PER_CALL; i++)
            buf[i] = (unsigned char)(rank * 67 + c * 13 + i * 7 + i / BLOCK);
        MPI_Status st;
        CHECK_OK(MPI_File_write_at_all(fh, (MPI_Offset)c * BLOCK * PER_CALL, buf, BLOCK * PER_CALL,
                                       MPI_BYTE, &st));
        if (priv)
            private_file(argv[1], rank, c);
        struct timespec t = {0, (long)work_ms * 1000000L};
        nanosleep(&t, NULL);
    }
    MPI_Offset bytes;
    CHECK_OK(MPI_File_get_size(fh, &bytes));
    CHECK_OK(MPI_File_close(&fh));
    CHECK_OK(MPI_Type_free(&filetype));
    CHECK_OK(MPI_Type_free(&one));
    CHECK_OK(MPI_Info_free(&info));
    free(buf);
    if (rank == 0)
        printf("io_collective: ok size %lld\n", (long long)bytes);
    CHECK_OK(MPI_Finalize());
    return 0;
}
