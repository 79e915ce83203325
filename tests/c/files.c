/* Files an unmodified program writes, under replication: each must come out as the
 * failure-free run writes it, and every replica must read back what it wrote. In DIR,
 * each rank writes, one step at a time (an all-reduce per step keeps the ranks in step):
 *   log-R.txt     a text stream (fopen "w", fprintf, fflush)
 *   data-R.bin    binary through one O_RDWR descriptor: 64-byte records appended, a
 *                 16-byte header rewritten at offset 0 (pwrite), both read back (pread)
 *   append-R.txt  an existing file (the test makes it), opened with O_APPEND and closed
 *                 every step
 *   state-R.txt   saved whole every step (written to state-R.tmp, renamed over it) and
 *                 read back with fopen "r"
 *   cut-R.bin     cut (ftruncate) and rewritten every 5 steps, its size checked (fstat)
 *   gone-R.txt    written, then removed at the end
 * and a tmpfile() scratch written and read back. It prints a checksum of all it read.
 * Arguments: DIR STEPS WORK_MS. */
#include <fcntl.h>
#include <mpi.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

static unsigned long mix(unsigned long h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211UL;
    return h;
}

static void record(unsigned char *rec, int rank, int step) {
    for (int i = 0; i < 64; i++) rec[i] = (unsigned char)(rank * 31 + step * 7 + i);
}

int main(int argc, char **argv) {
    int rank;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    check_rank = rank;
    CHECK(argc > 3);
    const char *dir = argv[1];
    int steps = atoi(argv[2]), work_ms = atoi(argv[3]);
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    char log_p[1024], data_p[1024], app_p[1024], state_p[1024], tmp_p[1024], cut_p[1024],
        gone_p[1024];
    snprintf(log_p, sizeof log_p, "%s/log-%d.txt", dir, rank);
    snprintf(data_p, sizeof data_p, "%s/data-%d.bin", dir, rank);
    snprintf(app_p, sizeof app_p, "%s/append-%d.txt", dir, rank);
    snprintf(state_p, sizeof state_p, "%s/state-%d.txt", dir, rank);
    snprintf(tmp_p, sizeof tmp_p, "%s/state-%d.tmp", dir, rank);
    snprintf(cut_p, sizeof cut_p, "%s/cut-%d.bin", dir, rank);
    snprintf(gone_p, sizeof gone_p, "%s/gone-%d.txt", dir, rank);

    FILE *log = fopen(log_p, "w");
    CHECK(log != NULL);
    int data = open(data_p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(data >= 0);
    char hdr[17];
    snprintf(hdr, sizeof hdr, "HDR step=%06d\n", 0);
    CHECK(write(data, hdr, 16) == 16);
    FILE *scratch = tmpfile();
    CHECK(scratch != NULL);
    FILE *gone = fopen(gone_p, "w");
    CHECK(gone != NULL && fputs("short-lived\n", gone) >= 0 && fclose(gone) == 0);
    unsigned long sum = 14695981039346656037UL;

    for (int step = 1; step <= steps; step++) {
        long mine = rank + step, all = 0;
        CHECK_OK(MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(fprintf(log, "rank %d step %d all %ld\n", rank, step, all) > 0);
        CHECK(fflush(log) == 0);

        unsigned char rec[64], back[64];
        record(rec, rank, step);
        CHECK(lseek(data, 0, SEEK_END) == 16 + (off_t)(step - 1) * 64);
        CHECK(write(data, rec, 64) == 64);
        snprintf(hdr, sizeof hdr, "HDR step=%06d\n", step);
        CHECK(pwrite(data, hdr, 16, 0) == 16);
        char hback[16];
        CHECK(pread(data, hback, 16, 0) == 16 && memcmp(hback, hdr, 16) == 0);
        CHECK(pread(data, back, 64, 16 + (off_t)(step - 1) * 64) == 64);
        CHECK(memcmp(back, rec, 64) == 0);
        sum = mix(sum, back, 64);

        int app = open(app_p, O_WRONLY | O_APPEND | O_CREAT, 0644);
        CHECK(app >= 0);
        char line[64];
        int n = snprintf(line, sizeof line, "step %d all %ld\n", step, all);
        CHECK(write(app, line, n) == n);
        CHECK(close(app) == 0);

        FILE *st = fopen(tmp_p, "w");
        CHECK(st != NULL);
        CHECK(fprintf(st, "step %d all %ld\n", step, all) > 0 && fclose(st) == 0);
        CHECK(rename(tmp_p, state_p) == 0);
        st = fopen(state_p, "r");
        CHECK(st != NULL);
        char got[64] = {0};
        CHECK(fgets(got, sizeof got, st) != NULL && strcmp(got, line) == 0);
        CHECK(fclose(st) == 0);
        sum = mix(sum, got, strlen(got));

        if (step % 5 == 0) {
            int cut = open(cut_p, O_RDWR | O_CREAT, 0644);
            CHECK(cut >= 0);
            size_t len = (size_t)(step % 7 + 1) * 100;
            unsigned char buf[800];
            memset(buf, 'a' + step % 26, len);
            CHECK(ftruncate(cut, 0) == 0);
            CHECK(pwrite(cut, buf, len, 0) == (ssize_t)len);
            CHECK(ftruncate(cut, (off_t)len / 2) == 0);
            struct stat sb;
            CHECK(fstat(cut, &sb) == 0 && sb.st_size == (off_t)len / 2);
            CHECK(lseek(cut, 0, SEEK_SET) == 0);
            CHECK(read(cut, buf, sizeof buf) == (ssize_t)len / 2);
            sum = mix(sum, buf, len / 2);
            CHECK(close(cut) == 0);
        }

        CHECK(fwrite(rec, 1, 32, scratch) == 32);
        if (work_ms > 0) nanosleep(&work, NULL);
    }

    CHECK(fclose(log) == 0);
    CHECK(close(data) == 0);
    /* Everything written, read back through new descriptors. */
    log = fopen(log_p, "r");
    CHECK(log != NULL);
    char line[128];
    int lines = 0;
    while (fgets(line, sizeof line, log)) {
        lines++;
        sum = mix(sum, line, strlen(line));
    }
    CHECK(lines == steps && fclose(log) == 0);
    data = open(data_p, O_RDONLY);
    CHECK(data >= 0);
    struct stat sb;
    CHECK(fstat(data, &sb) == 0 && sb.st_size == 16 + (off_t)steps * 64);
    unsigned char buf[4096];
    ssize_t got;
    while ((got = read(data, buf, sizeof buf)) > 0) sum = mix(sum, buf, (size_t)got);
    CHECK(got == 0 && close(data) == 0);
    rewind(scratch);
    for (int step = 1; step <= steps; step++) {
        unsigned char rec[64], back[32];
        record(rec, rank, step);
        CHECK(fread(back, 1, 32, scratch) == 32 && memcmp(back, rec, 32) == 0);
    }
    CHECK(fclose(scratch) == 0);
    CHECK(unlink(gone_p) == 0);
    CHECK(access(gone_p, F_OK) != 0);
    printf("files: rank %d steps %d sum %lu\n", rank, steps, sum);
    CHECK_OK(MPI_Finalize());
    return 0;
}
