/* Point-to-point (MPI-3.1 chapter 3): blocking and immediate sends and receives in a
 * ring, every send mode, MPI_ANY_SOURCE and MPI_ANY_TAG wildcards, probes, MPI_Get_count,
 * Sendrecv(_replace), the Wait and Test families, MPI_PROC_NULL. Each rank checks what it
 * got and exits 1 on a wrong value; rank 0 prints one line that the test compares.
 * Arguments: [ROUNDS [WORK_MS]]: rounds of the ring (20), milliseconds of "work" per
 * round (0), so a test can kill a replica while the job runs. */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

#define N 100

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
    double sum = 0;

    /* Room for one buffered send at a time (MPI-3.1 section 3.6). */
    static char bsend_room[N * sizeof(double) + MPI_BSEND_OVERHEAD];
    CHECK_OK(MPI_Buffer_attach(bsend_room, (int)sizeof bsend_room));

    /* A ring of blocking sends in every mode, each after its receive is posted: a
     * synchronous send completes only once its receive has started and a ready send
     * needs it posted (MPI-3.1 section 3.4), so a ring of either that sends first
     * would be an erroneous program. */
    for (int round = 0; round < rounds; round++) {
        double out[N], in[N];
        for (int i = 0; i < N; i++) out[i] = rank * 1000.0 + round + i * 0.5;
        MPI_Status st;
        MPI_Request rq;
        CHECK_OK(MPI_Irecv(in, N, MPI_DOUBLE, prev, round, MPI_COMM_WORLD, &rq));
        if (round % 4 == 3) CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every receive posted */
        switch (round % 4) {
        case 0: CHECK_OK(MPI_Send(out, N, MPI_DOUBLE, next, round, MPI_COMM_WORLD)); break;
        case 1: CHECK_OK(MPI_Ssend(out, N, MPI_DOUBLE, next, round, MPI_COMM_WORLD)); break;
        case 2: CHECK_OK(MPI_Bsend(out, N, MPI_DOUBLE, next, round, MPI_COMM_WORLD)); break;
        default: CHECK_OK(MPI_Rsend(out, N, MPI_DOUBLE, next, round, MPI_COMM_WORLD)); break;
        }
        CHECK_OK(MPI_Wait(&rq, &st));
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == round);
        int count;
        CHECK_OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
        CHECK(count == N);
        for (int i = 0; i < N; i++) CHECK(in[i] == prev * 1000.0 + round + i * 0.5);
        sum += in[N - 1];
        if (work_ms > 0) nanosleep(&work, NULL);
    }

    {
        void *room;
        int size;
        CHECK_OK(MPI_Buffer_detach(&room, &size));
        CHECK(room == bsend_room && size == (int)sizeof bsend_room);
    }

    /* Immediate: post receives first, Waitall, then Waitany and Testsome. */
    {
        int in[2] = {-1, -1}, out = rank * 7;
        MPI_Request reqs[4];
        CHECK_OK(MPI_Irecv(&in[0], 1, MPI_INT, prev, 100, MPI_COMM_WORLD, &reqs[0]));
        CHECK_OK(MPI_Irecv(&in[1], 1, MPI_INT, next, 101, MPI_COMM_WORLD, &reqs[1]));
        CHECK_OK(MPI_Isend(&out, 1, MPI_INT, next, 100, MPI_COMM_WORLD, &reqs[2]));
        CHECK_OK(MPI_Issend(&out, 1, MPI_INT, prev, 101, MPI_COMM_WORLD, &reqs[3]));
        MPI_Status sts[4];
        CHECK_OK(MPI_Waitall(4, reqs, sts));
        for (int i = 0; i < 4; i++) CHECK(reqs[i] == MPI_REQUEST_NULL);
        CHECK(in[0] == prev * 7 && in[1] == next * 7);
        CHECK(sts[0].MPI_SOURCE == prev && sts[1].MPI_SOURCE == next);

        int a = -1, b = -1;
        CHECK_OK(MPI_Irecv(&a, 1, MPI_INT, prev, 102, MPI_COMM_WORLD, &reqs[0]));
        CHECK_OK(MPI_Irecv(&b, 1, MPI_INT, prev, 103, MPI_COMM_WORLD, &reqs[1]));
        CHECK_OK(MPI_Send(&out, 1, MPI_INT, next, 103, MPI_COMM_WORLD));
        CHECK_OK(MPI_Send(&out, 1, MPI_INT, next, 102, MPI_COMM_WORLD));
        int done = 0, seen[2] = {0, 0};
        while (done < 2) {
            int idx;
            MPI_Status s;
            CHECK_OK(MPI_Waitany(2, reqs, &idx, &s));
            CHECK(idx == 0 || idx == 1);
            CHECK(!seen[idx]);
            seen[idx] = 1;
            CHECK(s.MPI_TAG == 102 + idx);
            done++;
        }
        CHECK(a == prev * 7 && b == prev * 7);
        int idx;
        CHECK_OK(MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == MPI_UNDEFINED);

        int c = -1, flag = 0, outcount = 0, indices[1];
        CHECK_OK(MPI_Irecv(&c, 1, MPI_INT, prev, 104, MPI_COMM_WORLD, &reqs[0]));
        CHECK_OK(MPI_Send(&out, 1, MPI_INT, next, 104, MPI_COMM_WORLD));
        while (!flag) CHECK_OK(MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE));
        CHECK(c == prev * 7 && reqs[0] == MPI_REQUEST_NULL);
        CHECK_OK(MPI_Irecv(&c, 1, MPI_INT, prev, 105, MPI_COMM_WORLD, &reqs[0]));
        CHECK_OK(MPI_Send(&out, 1, MPI_INT, next, 105, MPI_COMM_WORLD));
        while (outcount == 0) {
            CHECK_OK(MPI_Testsome(1, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
        }
        CHECK(outcount == 1 && indices[0] == 0);
        CHECK_OK(MPI_Irecv(&c, 1, MPI_INT, prev, 106, MPI_COMM_WORLD, &reqs[0]));
        CHECK_OK(MPI_Send(&out, 1, MPI_INT, next, 106, MPI_COMM_WORLD));
        flag = 0;
        while (!flag) CHECK_OK(MPI_Testall(1, reqs, &flag, MPI_STATUSES_IGNORE));
        CHECK(c == prev * 7);
    }

    /* Wildcards: rank 0 takes one message from every other rank with MPI_ANY_SOURCE and
     * MPI_ANY_TAG, after probing for each. */
    if (rank == 0) {
        long total = 0;
        int got[64] = {0};
        for (int k = 1; k < size; k++) {
            MPI_Status st;
            CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int count;
            CHECK_OK(MPI_Get_count(&st, MPI_LONG, &count));
            CHECK(count == st.MPI_SOURCE);
            long buf[64];
            MPI_Status st2;
            CHECK_OK(MPI_Recv(buf, 64, MPI_LONG, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
            CHECK(st2.MPI_SOURCE == st.MPI_SOURCE && st2.MPI_TAG == 200 + st.MPI_SOURCE);
            CHECK(!got[st.MPI_SOURCE]);
            got[st.MPI_SOURCE] = 1;
            for (int i = 0; i < count; i++) total += buf[i];
        }
        /* No rank sends its next message to rank 0 before this barrier, so the probes
         * above could only match the tag 200 + rank messages. */
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int k = 1; k < size; k++) {
            int v;
            MPI_Status st;
            CHECK_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 300, MPI_COMM_WORLD, &st));
            CHECK(v == st.MPI_SOURCE * 3);
            total += v;
        }
        sum += total;
    } else {
        long buf[64];
        for (int i = 0; i < rank; i++) buf[i] = rank * 10 + i;
        CHECK_OK(MPI_Send(buf, rank, MPI_LONG, 0, 200 + rank, MPI_COMM_WORLD));
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        int v = rank * 3;
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, 0, 300, MPI_COMM_WORLD));
    }

    /* Iprobe until a message is there. */
    {
        int v = rank, w = -1, flag = 0;
        MPI_Status st;
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, next, 400, MPI_COMM_WORLD));
        while (!flag) CHECK_OK(MPI_Iprobe(prev, 400, MPI_COMM_WORLD, &flag, &st));
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 400);
        CHECK_OK(MPI_Recv(&w, 1, MPI_INT, prev, 400, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(w == prev);
    }

    /* Sendrecv and Sendrecv_replace around the ring. */
    {
        int s = rank * 11, r = -1;
        MPI_Status st;
        CHECK_OK(MPI_Sendrecv(&s, 1, MPI_INT, next, 500, &r, 1, MPI_INT, prev, 500, MPI_COMM_WORLD, &st));
        CHECK(r == prev * 11 && st.MPI_SOURCE == prev);
        int x[3] = {rank, rank + 1, rank + 2};
        CHECK_OK(MPI_Sendrecv_replace(x, 3, MPI_INT, next, 501, prev, 501, MPI_COMM_WORLD, &st));
        CHECK(x[0] == prev && x[2] == prev + 2);
    }

    /* Persistent requests: one send and one receive around the ring, started 3 times. */
    {
        int out = -1, in = -1, flag = 0;
        MPI_Request pr[2];
        CHECK_OK(MPI_Recv_init(&in, 1, MPI_INT, prev, 700, MPI_COMM_WORLD, &pr[0]));
        CHECK_OK(MPI_Send_init(&out, 1, MPI_INT, next, 700, MPI_COMM_WORLD, &pr[1]));
        for (int k = 0; k < 3; k++) {
            out = rank * 10 + k;
            CHECK_OK(MPI_Startall(2, pr));
            MPI_Status sts[2];
            CHECK_OK(MPI_Waitall(2, pr, sts));
            CHECK(pr[0] != MPI_REQUEST_NULL && pr[1] != MPI_REQUEST_NULL);
            CHECK(in == prev * 10 + k && sts[0].MPI_SOURCE == prev);
        }
        CHECK_OK(MPI_Start(&pr[0]));
        out = 99;
        CHECK_OK(MPI_Start(&pr[1]));
        while (!flag) CHECK_OK(MPI_Request_get_status(pr[0], &flag, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(&pr[0], MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(&pr[1], MPI_STATUS_IGNORE));
        CHECK(in == 99);
        CHECK_OK(MPI_Request_free(&pr[0]));
        CHECK_OK(MPI_Request_free(&pr[1]));
        CHECK(pr[0] == MPI_REQUEST_NULL);
    }

    /* Matched probe: learn the size, then receive exactly that message. */
    {
        long out[5] = {rank, rank + 1, rank + 2, rank + 3, rank + 4}, in[8];
        CHECK_OK(MPI_Send(out, rank % 5 + 1, MPI_LONG, next, 800, MPI_COMM_WORLD));
        MPI_Message msg;
        MPI_Status st;
        CHECK_OK(MPI_Mprobe(MPI_ANY_SOURCE, 800, MPI_COMM_WORLD, &msg, &st));
        int count;
        CHECK_OK(MPI_Get_count(&st, MPI_LONG, &count));
        CHECK(st.MPI_SOURCE == prev && count == prev % 5 + 1);
        CHECK_OK(MPI_Mrecv(in, count, MPI_LONG, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NULL && in[count - 1] == prev + count - 1);
        CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 800, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NO_PROC);
        CHECK_OK(MPI_Mrecv(in, 1, MPI_LONG, &msg, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
    }

    /* MPI_PROC_NULL: a no-op with an empty status. */
    {
        int v = 1;
        MPI_Status st;
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
        int count = -1;
        CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == 0);
    }

    /* A strided column through a derived datatype. */
    {
        int m[4][5], col[4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++) m[i][j] = rank * 100 + i * 5 + j;
        MPI_Datatype column;
        CHECK_OK(MPI_Type_vector(4, 1, 5, MPI_INT, &column));
        CHECK_OK(MPI_Type_commit(&column));
        CHECK_OK(MPI_Send(&m[0][2], 1, column, next, 600, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(col, 4, MPI_INT, prev, 600, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 4; i++) CHECK(col[i] == prev * 100 + i * 5 + 2);
        CHECK_OK(MPI_Type_free(&column));

        /* A 2 x 3 block at (1, 2) of the 4 x 5 matrix. */
        int sizes[2] = {4, 5}, subsizes[2] = {2, 3}, starts[2] = {1, 2}, blk[6];
        MPI_Datatype block;
        CHECK_OK(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &block));
        CHECK_OK(MPI_Type_commit(&block));
        MPI_Aint lb, extent;
        CHECK_OK(MPI_Type_get_extent(block, &lb, &extent));
        CHECK(lb == 0 && extent == 20 * (MPI_Aint)sizeof(int));
        CHECK_OK(MPI_Send(m, 1, block, next, 601, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(blk, 6, MPI_INT, prev, 601, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) CHECK(blk[i * 3 + j] == prev * 100 + (1 + i) * 5 + 2 + j);
        CHECK_OK(MPI_Type_free(&block));
    }

    /* Immediate matched probe. */
    {
        int v = rank * 5, w = -1, flag = 0;
        MPI_Message msg;
        MPI_Status st;
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, next, 602, MPI_COMM_WORLD));
        while (!flag) CHECK_OK(MPI_Improbe(MPI_ANY_SOURCE, 602, MPI_COMM_WORLD, &flag, &msg, &st));
        CHECK(st.MPI_SOURCE == prev);
        CHECK_OK(MPI_Mrecv(&w, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
        CHECK(w == prev * 5);
    }

    double all;
    CHECK_OK(MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("p2p: ok size %d checksum %.1f\n", size, all);
    CHECK_OK(MPI_Finalize());
    return 0;
}
