/* MPI-IO (MPI-3.1 chapter 13) under replication: `io DIR [ROUNDS [WORK_MS [diverge]]]`.
 *
 * Every rank opens DIR/io.dat (collective, MPI_MODE_CREATE) and, each round, writes
 * into its own region of the file:
 *   - a strided view (etype MPI_INT, a filetype of B ints resized to the ranks' stride),
 *     written collectively (MPI_File_write_all: the ranks' pieces interleave, so the
 *     two-phase path runs) and with a nonblocking collective (MPI_File_iwrite_at_all);
 *   - a struct filetype (an int and a double, resized) written independently at
 *     explicit offsets (MPI_File_write_at) and nonblocking (MPI_File_iwrite_at);
 *   - an ordered part (MPI_File_write_ordered: rank r writes r + 1 bytes, in rank order),
 *     and the same at the shared pointer with independent calls (MPI_File_write_shared,
 *     MPI_File_iwrite_shared), one rank after the other;
 *   - a split collective (MPI_File_write_at_all_begin / _end);
 *   - external32 (a file of MPI_COMM_SELF, removed at close).
 * Then MPI_File_sync, a barrier, and every rank reads back its neighbour's strided
 * blocks (MPI_File_read_all), its own struct records (MPI_File_read_at) and the ordered
 * part (MPI_File_read_ordered) and checks them. Errors: opening a missing file
 * (MPI_ERR_NO_SUCH_FILE), a bad amode (MPI_ERR_AMODE), MPI_MODE_EXCL on an existing file
 * (MPI_ERR_FILE_EXISTS), a write to a read-only file (MPI_ERR_READ_ONLY), a data
 * representation other than "native" and "external32" (MPI_ERR_UNSUPPORTED_DATAREP), a file error
 * handler of the program's. The file of the failure-free run is what every run must
 * leave. `diverge`: replica 1 of rank 0 writes other bytes (VOLPEX_VERIFY_OUTPUT=1 must
 * catch it at the file). */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define B 64   /* ints per strided block */
#define K 8    /* blocks per rank per round */
#define RECS 16

struct rec {
    int i;
    double d;
};

static int handler_calls = 0;
static void on_file_error(MPI_File *fh, int *code, ...) {
    (void)fh;
    (void)code;
    handler_calls++;
}

static int err_class(int code) {
    int c;
    MPI_Error_class(code, &c);
    return c;
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK(argc > 1);
    const char *dir = argv[1];
    struct test_run t = test_start(&argc, &argv, 16, 3, &rank, &size);
    /* test_start reads ROUNDS and WORK_MS from argv[1..]: shift by the directory. */
    t.rounds = argc > 2 ? atoi(argv[2]) : 3;
    int work_ms = argc > 3 ? atoi(argv[3]) : 0;
    t.work.tv_sec = work_ms / 1000;
    t.work.tv_nsec = (work_ms % 1000) * 1000000L;
    const char *rep = getenv("VOLPEX_REPLICA");
    int diverge = argc > 4 && !strcmp(argv[4], "diverge") && rank == 0 && rep && !strcmp(rep, "1");

    char path[4096], missing[4096];
    snprintf(path, sizeof path, "%s/io.dat", dir);
    snprintf(missing, sizeof missing, "%s/no-such-dir/x.dat", dir);

    /* Errors: the default file error handler returns them (section 13.7). */
    MPI_File fh;
    CHECK(err_class(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) ==
          MPI_ERR_NO_SUCH_FILE);
    CHECK(err_class(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE,
                                  MPI_INFO_NULL, &fh)) == MPI_ERR_AMODE);
    CHECK(err_class(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_WRONLY,
                                  MPI_INFO_NULL, &fh)) == MPI_ERR_AMODE);

    MPI_Info info;
    CHECK_OK(MPI_Info_create(&info));
    /* Rounds of 1 KiB of each aggregator's domain: a strided collective access takes three. */
    CHECK_OK(MPI_Info_set(info, "cb_buffer_size", "1024"));
    /* Two aggregators (the default is one per host: the Fortran program has that). */
    CHECK_OK(MPI_Info_set(info, "cb_nodes", "2"));
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_OK(MPI_Info_free(&info));
    int amode;
    CHECK_OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR));
    MPI_Group g;
    int gsize;
    CHECK_OK(MPI_File_get_group(fh, &g));
    CHECK_OK(MPI_Group_size(g, &gsize));
    CHECK(gsize == size);
    CHECK_OK(MPI_Group_free(&g));
    MPI_Info used;
    int flag;
    char val[64];
    CHECK_OK(MPI_File_get_info(fh, &used));
    CHECK_OK(MPI_Info_get(used, "cb_buffer_size", sizeof val - 1, val, &flag));
    CHECK(flag && !strcmp(val, "1024"));
    CHECK_OK(MPI_Info_free(&used));

    /* The file exists now: MPI_MODE_EXCL fails on every rank. */
    MPI_File other;
    CHECK(err_class(MPI_File_open(MPI_COMM_WORLD, path,
                                  MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL,
                                  &other)) == MPI_ERR_FILE_EXISTS);

    /* The program's error handler on the file. */
    MPI_Errhandler eh;
    CHECK_OK(MPI_File_create_errhandler(on_file_error, &eh));
    CHECK_OK(MPI_File_set_errhandler(fh, eh));
    CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL) != MPI_SUCCESS);
    CHECK(handler_calls == 1);
    CHECK_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handler_calls == 2);
    CHECK_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Errhandler_free(&eh));
    CHECK(err_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL)) ==
          MPI_ERR_UNSUPPORTED_DATAREP);

    /* The types. */
    MPI_Datatype blk, strided, rec_t, rec_file;
    CHECK_OK(MPI_Type_contiguous(B, MPI_INT, &blk));
    CHECK_OK(MPI_Type_create_resized(blk, 0, (MPI_Aint)size * B * sizeof(int), &strided));
    CHECK_OK(MPI_Type_commit(&strided));
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype raw;
    CHECK_OK(MPI_Type_create_struct(2, lens, displs, types, &raw));
    CHECK_OK(MPI_Type_create_resized(raw, 0, sizeof(struct rec), &rec_t));
    CHECK_OK(MPI_Type_commit(&rec_t));
    /* In the file: one record per rank per stride, 12 bytes of data each (no padding). */
    MPI_Datatype rec_packed;
    MPI_Aint pdispls[2] = {0, 4};
    CHECK_OK(MPI_Type_create_struct(2, lens, pdispls, types, &raw));
    CHECK_OK(MPI_Type_create_resized(raw, 0, (MPI_Aint)size * 12, &rec_file));
    CHECK_OK(MPI_Type_commit(&rec_file));
    CHECK_OK(MPI_Type_contiguous(12, MPI_BYTE, &rec_packed));
    CHECK_OK(MPI_Type_commit(&rec_packed));

    /* Layout of one round: strided part (2 writes), records, split part, ordered part. */
    const MPI_Offset strided_bytes = (MPI_Offset)size * B * K * sizeof(int);
    const MPI_Offset rec_bytes = (MPI_Offset)size * RECS * 12;
    const MPI_Offset split_bytes = (MPI_Offset)size * B * sizeof(int);
    const MPI_Offset ordered_bytes = (MPI_Offset)size * (size + 1) / 2;
    const MPI_Offset round_bytes = 2 * strided_bytes + rec_bytes + split_bytes + 2 * ordered_bytes;

    int *data = malloc(sizeof(int) * B * K);
    int *back = malloc(sizeof(int) * B * K);
    struct rec recs[RECS], recs_back[RECS];
    double checksum = 0;
    for (int r = 0; r < t.rounds; r++) {
        MPI_Offset base = r * round_bytes;
        MPI_Status st;
        int count;
        /* Strided, collective: rank's blocks at base + rank * B ints, every size * B. */
        for (int i = 0; i < B * K; i++) data[i] = (r * 1000 + rank) * 100000 + i;
        if (diverge && r == 0) data[3] = -1;
        CHECK_OK(MPI_File_set_view(fh, base + (MPI_Offset)rank * B * sizeof(int), MPI_INT, strided,
                                   "native", MPI_INFO_NULL));
        CHECK_OK(MPI_File_write_all(fh, data, B * K, MPI_INT, &st));
        CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == B * K);
        MPI_Offset pos;
        CHECK_OK(MPI_File_get_position(fh, &pos));
        CHECK(pos == B * K);
        MPI_Offset byte;
        CHECK_OK(MPI_File_get_byte_offset(fh, B, &byte));
        CHECK(byte == base + (MPI_Offset)rank * B * sizeof(int) + (MPI_Offset)size * B * sizeof(int));
        /* The same pattern again, nonblocking collective at an explicit offset. */
        for (int i = 0; i < B * K; i++) data[i] = -data[i];
        MPI_Request req;
        CHECK_OK(MPI_File_iwrite_at_all(fh, B * K, data, B * K, MPI_INT, &req));
        CHECK_OK(MPI_Wait(&req, &st));
        CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == B * K);

        /* Records: struct filetype, independent at explicit offsets, and nonblocking. */
        for (int i = 0; i < RECS; i++) {
            recs[i].i = r * 100 + rank * 10 + i;
            recs[i].d = 0.5 * (r + 1) * (rank + 1) + i;
        }
        MPI_Offset rbase = base + 2 * strided_bytes + (MPI_Offset)rank * 12;
        CHECK_OK(MPI_File_set_view(fh, rbase, rec_packed, rec_file, "native", MPI_INFO_NULL));
        MPI_Aint lb, ext;
        CHECK_OK(MPI_File_get_type_extent(fh, rec_t, &ext));
        CHECK_OK(MPI_Type_get_extent(rec_t, &lb, &ext));
        CHECK_OK(MPI_File_write_at(fh, 0, recs, RECS / 2, rec_t, &st));
        CHECK_OK(MPI_File_iwrite_at(fh, RECS / 2, recs + RECS / 2, RECS / 2, rec_t, &req));
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

        /* Split collective: one block per rank, contiguous view. */
        MPI_Offset sbase = base + 2 * strided_bytes + rec_bytes;
        CHECK_OK(MPI_File_set_view(fh, sbase, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
        for (int i = 0; i < B; i++) data[i] = r * 7 + rank * 3 + i;
        CHECK_OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * B, data, B, MPI_INT));
        CHECK_OK(MPI_File_write_at_all_end(fh, data, &st));
        CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == B);

        /* Ordered: rank r writes r + 1 bytes after the ranks before it. */
        MPI_Offset obase = sbase + split_bytes;
        CHECK_OK(MPI_File_set_view(fh, obase, MPI_CHAR, MPI_CHAR, "native", MPI_INFO_NULL));
        char mine[17];
        for (int i = 0; i <= rank; i++) mine[i] = 'a' + (r + rank) % 26;
        CHECK_OK(MPI_File_write_ordered(fh, mine, rank + 1, MPI_CHAR, &st));
        MPI_Offset shared;
        CHECK_OK(MPI_File_get_position_shared(fh, &shared));
        CHECK(shared == ordered_bytes);

        /* Independent accesses at the shared pointer, one rank after the other. */
        MPI_Offset shbase = obase + ordered_bytes;
        CHECK_OK(MPI_File_set_view(fh, shbase, MPI_CHAR, MPI_CHAR, "native", MPI_INFO_NULL));
        for (int q = 0; q < size; q++) {
            if (q == rank) {
                if (rank % 2) {
                    CHECK_OK(MPI_File_write_shared(fh, mine, rank + 1, MPI_CHAR, &st));
                } else {
                    CHECK_OK(MPI_File_iwrite_shared(fh, mine, rank + 1, MPI_CHAR, &req));
                    CHECK_OK(MPI_Wait(&req, &st));
                }
                CHECK_OK(MPI_Get_count(&st, MPI_CHAR, &count));
                CHECK(count == rank + 1);
                CHECK_OK(MPI_File_sync(fh));
            }
            CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        CHECK_OK(MPI_File_get_position_shared(fh, &shared));
        CHECK(shared == ordered_bytes);

        /* Sync, barrier, sync: every rank's bytes are there (section 13.6.1). */
        CHECK_OK(MPI_File_sync(fh));
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_OK(MPI_File_sync(fh));

        /* Read back: the neighbour's strided blocks, collectively. */
        int nb = (rank + 1) % size;
        CHECK_OK(MPI_File_set_view(fh, base + (MPI_Offset)nb * B * sizeof(int), MPI_INT, strided,
                                   "native", MPI_INFO_NULL));
        CHECK_OK(MPI_File_read_all(fh, back, B * K, MPI_INT, &st));
        CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == B * K);
        for (int i = 0; i < B * K; i++) {
            int want = (r * 1000 + nb) * 100000 + i;
            if (!(r == 0 && nb == 0 && i == 3)) CHECK(back[i] == want);
            checksum += back[i] % 1000;
        }
        CHECK_OK(MPI_File_read_at_all(fh, B * K, back, B * K, MPI_INT, &st));
        for (int i = 0; i < B * K; i++) CHECK(back[i] == -((r * 1000 + nb) * 100000 + i));
        /* Own records, through the struct view. */
        CHECK_OK(MPI_File_set_view(fh, rbase, rec_packed, rec_file, "native", MPI_INFO_NULL));
        memset(recs_back, 0, sizeof recs_back);
        CHECK_OK(MPI_File_read_at(fh, 0, recs_back, RECS, rec_t, &st));
        for (int i = 0; i < RECS; i++) {
            CHECK(recs_back[i].i == recs[i].i && recs_back[i].d == recs[i].d);
            checksum += recs_back[i].d;
        }
        /* The ordered part, read in order: every rank gets its own bytes back. */
        CHECK_OK(MPI_File_set_view(fh, obase, MPI_CHAR, MPI_CHAR, "native", MPI_INFO_NULL));
        char got[17] = {0};
        CHECK_OK(MPI_File_read_ordered(fh, got, rank + 1, MPI_CHAR, &st));
        CHECK(!memcmp(got, mine, rank + 1));
        /* The whole part, independently, from rank 0's ordered bytes on. */
        char all[256];
        CHECK_OK(MPI_File_read_at(fh, 0, all, (int)ordered_bytes, MPI_CHAR, &st));
        CHECK_OK(MPI_Get_count(&st, MPI_CHAR, &count));
        CHECK(count == ordered_bytes);
        for (int q = 0, at = 0; q < size; at += ++q)
            for (int i = 0; i <= q; i++) CHECK(all[at + i] == 'a' + (r + q) % 26);
        /* The shared part, read back at the shared pointer by rank 0 alone. */
        CHECK_OK(MPI_File_set_view(fh, shbase, MPI_CHAR, MPI_CHAR, "native", MPI_INFO_NULL));
        if (rank == 0) {
            char sh[256];
            CHECK_OK(MPI_File_read_shared(fh, sh, (int)ordered_bytes, MPI_CHAR, &st));
            CHECK_OK(MPI_Get_count(&st, MPI_CHAR, &count));
            CHECK(count == ordered_bytes && !memcmp(sh, all, ordered_bytes));
        }
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        nanosleep(&t.work, NULL);
    }

    /* Size, seek, a read past the end. */
    MPI_Offset fsize;
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == t.rounds * round_bytes);
    CHECK_OK(MPI_File_seek(fh, -4, MPI_SEEK_END));
    MPI_Offset pos;
    CHECK_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == fsize - 4);
    char tail[16];
    MPI_Status st;
    int count;
    CHECK_OK(MPI_File_read(fh, tail, 16, MPI_CHAR, &st));
    CHECK_OK(MPI_Get_count(&st, MPI_CHAR, &count));
    CHECK(count == 4);
    int atom;
    CHECK_OK(MPI_File_set_atomicity(fh, 1));
    CHECK_OK(MPI_File_get_atomicity(fh, &atom));
    CHECK(atom == 1);
    CHECK_OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL);

    /* Read-only: a write is MPI_ERR_READ_ONLY; the file is as written. */
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    CHECK(err_class(MPI_File_write_at(fh, 0, tail, 1, MPI_CHAR, &st)) == MPI_ERR_READ_ONLY);
    CHECK_OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == t.rounds * round_bytes);
    CHECK_OK(MPI_File_close(&fh));

    /* external32: big-endian in the file, native in memory (a file of MPI_COMM_SELF). */
    char ext[4096];
    snprintf(ext, sizeof ext, "%s/ext-%d.dat", dir, rank);
    CHECK_OK(MPI_File_open(MPI_COMM_SELF, ext,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int v = 0x01020304, v_back = 0;
    CHECK_OK(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, &st));
    CHECK_OK(MPI_File_read_at(fh, 0, &v_back, 1, MPI_INT, &st));
    CHECK(v_back == v);
    unsigned char raw4[4];
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_OK(MPI_File_read_at(fh, 0, raw4, 4, MPI_BYTE, &st));
    CHECK(raw4[0] == 1 && raw4[1] == 2 && raw4[2] == 3 && raw4[3] == 4);
    CHECK_OK(MPI_File_close(&fh));

    /* A scratch file removed at close, and MPI_File_delete. */
    char scratch[4096];
    snprintf(scratch, sizeof scratch, "%s/scratch.dat", dir);
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, scratch,
                           MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_write_at_all(fh, rank, "x", 1, MPI_CHAR, &st));
    CHECK_OK(MPI_File_close(&fh));
    CHECK(err_class(MPI_File_open(MPI_COMM_WORLD, scratch, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) ==
          MPI_ERR_NO_SUCH_FILE);
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, scratch, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_size(fh, 100));
    CHECK_OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 100);
    CHECK_OK(MPI_File_preallocate(fh, 200));
    CHECK_OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 200);
    CHECK_OK(MPI_File_close(&fh));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK_OK(MPI_File_delete(scratch, MPI_INFO_NULL));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1 % size)
        CHECK(err_class(MPI_File_delete(scratch, MPI_INFO_NULL)) == MPI_ERR_NO_SUCH_FILE);

    MPI_Type_free(&strided);
    MPI_Type_free(&blk);
    MPI_Type_free(&rec_t);
    MPI_Type_free(&rec_file);
    MPI_Type_free(&rec_packed);
    free(data);
    free(back);
    return test_finish("io", checksum);
}
