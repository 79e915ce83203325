/* Making communicators (MPI-3.1 section 6.4.2) beyond dup, split and create:
 * MPI_Comm_create_group over the even and the odd ranks at once (told apart by their
 * tags), and over all ranks in reverse order (only the members call it; rank 0 makes a
 * few of its own meanwhile), MPI_Comm_idup (the copy works before and after the wait),
 * MPI_Comm_dup_with_info, MPI_Comm_set_info and MPI_Comm_get_info (section 6.4.4), and
 * MPI_Comm_split_type with MPI_COMM_TYPE_SHARED (one host here: every rank, ranked by
 * key) and MPI_UNDEFINED. Each rank checks its results; rank 0 prints a checksum.
 * Arguments: [ROUNDS [WORK_MS]] (5, 0). */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "check.h"

static int rank, size;

/* The sum of the world ranks of `comm`'s members, by an all-reduce on it. */
static int world_sum(MPI_Comm comm) {
    int s;
    CHECK_OK(MPI_Allreduce(&rank, &s, 1, MPI_INT, MPI_SUM, comm));
    return s;
}

int main(int argc, char **argv) {
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    int work_ms = argc > 2 ? atoi(argv[2]) : 0;
    struct timespec work = {work_ms / 1000, (work_ms % 1000) * 1000000L};
    MPI_Group world;
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    long checksum = 0;

    for (int round = 0; round < rounds; round++) {
        /* The ranks of my parity, in order. */
        int mine[64], n = 0, want = 0;
        for (int r = rank % 2; r < size; r += 2) mine[n++] = r, want += r;
        MPI_Group g;
        MPI_Comm c;
        CHECK_OK(MPI_Group_incl(world, n, mine, &g));
        CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, rank % 2, &c));
        int cr, cs;
        CHECK_OK(MPI_Comm_rank(c, &cr));
        CHECK_OK(MPI_Comm_size(c, &cs));
        CHECK(cs == n && cr == rank / 2);
        CHECK(world_sum(c) == want);
        checksum += world_sum(c) * (round + 1);
        CHECK_OK(MPI_Comm_free(&c));
        CHECK_OK(MPI_Group_free(&g));

        /* Only rank 0 makes these: the others' next communicators are not affected. */
        if (rank == 0) {
            MPI_Group self;
            MPI_Comm alone;
            int zero = 0;
            CHECK_OK(MPI_Group_incl(world, 1, &zero, &self));
            for (int i = 0; i < round % 3 + 1; i++) {
                CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, self, 99, &alone));
                CHECK(world_sum(alone) == 0);
                CHECK_OK(MPI_Comm_free(&alone));
            }
            CHECK_OK(MPI_Group_free(&self));
        }

        /* Every rank, in reverse order. */
        int rev[64];
        for (int r = 0; r < size; r++) rev[r] = size - 1 - r;
        CHECK_OK(MPI_Group_incl(world, size, rev, &g));
        CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c));
        CHECK_OK(MPI_Comm_rank(c, &cr));
        CHECK(cr == size - 1 - rank);
        int from_last = -1;
        if (cr == 0) from_last = 1000 + round;
        CHECK_OK(MPI_Bcast(&from_last, 1, MPI_INT, 0, c));
        CHECK(from_last == 1000 + round);
        CHECK_OK(MPI_Group_free(&g));

        /* MPI_Comm_idup of the reversed communicator: usable once the request is done. */
        MPI_Comm d;
        MPI_Request req;
        CHECK_OK(MPI_Comm_idup(c, &d, &req));
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req == MPI_REQUEST_NULL);
        int result;
        CHECK_OK(MPI_Comm_compare(c, d, &result));
        CHECK(result == MPI_CONGRUENT);
        CHECK_OK(MPI_Comm_rank(d, &cr));
        CHECK(cr == size - 1 - rank && world_sum(d) == size * (size - 1) / 2);
        CHECK_OK(MPI_Comm_free(&d));
        CHECK_OK(MPI_Comm_free(&c));

        /* Info hints: dup_with_info keeps them, set_info replaces them, dup copies. */
        MPI_Info info, used;
        char value[MPI_MAX_INFO_VAL + 1], expect[32];
        int flag, nkeys;
        snprintf(expect, sizeof expect, "round-%d", round);
        CHECK_OK(MPI_Info_create(&info));
        CHECK_OK(MPI_Info_set(info, "volpex_hint", expect));
        CHECK_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
        CHECK_OK(MPI_Info_free(&info));
        CHECK_OK(MPI_Comm_get_info(c, &used));
        CHECK_OK(MPI_Info_get(used, "volpex_hint", MPI_MAX_INFO_VAL, value, &flag));
        CHECK(flag && strcmp(value, expect) == 0);
        CHECK_OK(MPI_Info_free(&used));
        CHECK_OK(MPI_Comm_set_info(c, MPI_INFO_NULL));
        CHECK_OK(MPI_Comm_get_info(c, &used));
        CHECK_OK(MPI_Info_get_nkeys(used, &nkeys));
        CHECK(nkeys == 0);
        CHECK_OK(MPI_Info_free(&used));
        CHECK(world_sum(c) == size * (size - 1) / 2);
        CHECK_OK(MPI_Comm_free(&c));

        /* Split by type: one host, so every rank, ranked by key (the last rank first);
         * MPI_UNDEFINED at the odd ranks gives them MPI_COMM_NULL. */
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL,
                                     &c));
        CHECK_OK(MPI_Comm_size(c, &cs));
        CHECK_OK(MPI_Comm_rank(c, &cr));
        CHECK(cs == size && cr == size - 1 - rank);
        checksum += world_sum(c);
        CHECK_OK(MPI_Comm_free(&c));
        int type = rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED;
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, type, rank, MPI_INFO_NULL, &c));
        if (rank % 2) {
            CHECK(c == MPI_COMM_NULL);
        } else {
            CHECK_OK(MPI_Comm_size(c, &cs));
            CHECK(cs == (size + 1) / 2);
            checksum += world_sum(c);
            CHECK_OK(MPI_Comm_free(&c));
        }
        nanosleep(&work, NULL);
    }

    /* Errors, returned: a group with a process outside the communicator, a negative
     * tag, an unknown split type. */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm self_only = MPI_COMM_NULL, c = MPI_COMM_NULL;
    MPI_Group wg;
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int err, cls;
    err = MPI_Comm_create_group(MPI_COMM_WORLD, wg, -1, &c);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_TAG);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    if (size > 1) {
        err = MPI_Comm_create_group(MPI_COMM_SELF, wg, 0, &self_only);
        CHECK_OK(MPI_Error_class(err, &cls));
        CHECK(cls == MPI_ERR_GROUP);
    }
    err = MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_ARG);
    CHECK_OK(MPI_Group_free(&wg));

    long all;
    CHECK_OK(MPI_Reduce(&checksum, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("comm_groups: ok size %d checksum %ld\n", size, all);
    CHECK_OK(MPI_Group_free(&world));
    CHECK_OK(MPI_Finalize());
    return 0;
}
