/* The shared file pointer (MPI-3.1 section 13.4.4) through a leader's death:
 * `io_shared DIR ROUNDS`. Every round, the ranks one after the other (a barrier between)
 * write rank + 1 bytes at the shared pointer (MPI_File_write_shared) and read it
 * (MPI_File_get_position_shared: past their own bytes). At the end every rank checks
 * that the pointer is past every write, and rank 0 reads DIR/shared.dat back: each
 * round's bytes in rank order, no hole, nothing twice. Under replication each move of
 * the pointer is a choice of the rank's leader replica; run with `--fault
 * R.0:exit@choices=N`, the leader dies right after a move, before its siblings learn
 * where it went, and the next leader must not move it again.
 * Prints "io_shared: ok BYTES". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
    int rank, size;
    CHECK(argc > 2);
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    CHECK(size <= 16);
    char path[4096];
    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
    int rounds = atoi(argv[2]);
    const MPI_Offset per_round = (MPI_Offset)size * (size + 1) / 2;
    MPI_File fh;
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh));
    char mine[16];
    for (int r = 0; r < rounds; r++) {
        for (int q = 0; q < size; q++) {
            if (q == rank) {
                memset(mine, 'a' + (r + rank) % 26, sizeof mine);
                MPI_Status st;
                int count;
                CHECK_OK(MPI_File_write_shared(fh, mine, rank + 1, MPI_CHAR, &st));
                CHECK_OK(MPI_Get_count(&st, MPI_CHAR, &count));
                CHECK(count == rank + 1);
                MPI_Offset at;
                CHECK_OK(MPI_File_get_position_shared(fh, &at));
                CHECK(at == r * per_round + (MPI_Offset)(rank + 1) * (rank + 2) / 2);
                CHECK_OK(MPI_File_sync(fh));
            }
            CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    MPI_Offset end;
    CHECK_OK(MPI_File_get_position_shared(fh, &end));
    CHECK(end == rounds * per_round);
    CHECK_OK(MPI_File_sync(fh));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_OK(MPI_File_sync(fh));
    if (rank == 0) {
        MPI_Offset n;
        CHECK_OK(MPI_File_get_size(fh, &n));
        CHECK(n == end);
        char *all = malloc(n);
        MPI_Status st;
        CHECK_OK(MPI_File_read_at(fh, 0, all, (int)n, MPI_CHAR, &st));
        MPI_Offset at = 0;
        for (int r = 0; r < rounds; r++)
            for (int q = 0; q < size; q++)
                for (int i = 0; i <= q; i++, at++) CHECK(all[at] == 'a' + (r + q) % 26);
        free(all);
    }
    CHECK_OK(MPI_File_close(&fh));
    if (rank == 0) printf("io_shared: ok %lld\n", (long long)end);
    CHECK_OK(MPI_Finalize());
    return 0;
}
