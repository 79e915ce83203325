/* Communicators and groups (MPI-3.1 chapter 6): dup, split (with MPI_UNDEFINED), create
 * from a group, compare, free, group operations, MPI_COMM_SELF, attributes of
 * MPI_COMM_WORLD, names. Traffic on a duplicate never matches traffic on its parent. */
#include <mpi.h>
#include <string.h>
#include <stdint.h>
#include "check.h"

static int deleted = 0;

static int count_delete(MPI_Comm comm, int key, void *value, void *extra) {
    (void)comm;
    (void)key;
    CHECK(*(int *)extra == 42);
    deleted += *(int *)value;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size, flag;
    CHECK_OK(MPI_Initialized(&flag));
    CHECK(!flag);
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Initialized(&flag));
    CHECK(flag);
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    long checksum = 0;

    /* Attributes and environment. */
    int *tag_ub;
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    CHECK_OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && (int)strlen(name) == len);
    double t0 = MPI_Wtime();
    CHECK(MPI_Wtick() > 0 && MPI_Wtime() >= t0);
    int version, subversion;
    CHECK_OK(MPI_Get_version(&version, &subversion));
    CHECK(version == 3 && subversion == 1);

    /* Info objects. */
    MPI_Info info;
    char value[64];
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_set(info, "striping_factor", "4"));
    CHECK_OK(MPI_Info_set(info, "striping_factor", "8"));
    CHECK_OK(MPI_Info_get(info, "striping_factor", 63, value, &flag));
    CHECK(flag && strcmp(value, "8") == 0);
    CHECK_OK(MPI_Info_get(info, "nothing", 63, value, &flag));
    CHECK(!flag);
    CHECK_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL);

    /* MPI_COMM_SELF. */
    int srank, ssize;
    CHECK_OK(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    CHECK(srank == 0 && ssize == 1);
    int self_sum, one = rank;
    CHECK_OK(MPI_Allreduce(&one, &self_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(self_sum == rank);

    /* A duplicate has its own message space. */
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int result;
    CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    CHECK(result == MPI_CONGRUENT);
    CHECK_OK(MPI_Comm_compare(dup, dup, &result));
    CHECK(result == MPI_IDENT);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int a = rank, b = rank + 100, ra = -1, rb = -1;
    CHECK_OK(MPI_Send(&a, 1, MPI_INT, next, 7, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(&b, 1, MPI_INT, next, 7, dup));
    CHECK_OK(MPI_Recv(&rb, 1, MPI_INT, prev, 7, dup, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Recv(&ra, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(ra == prev && rb == prev + 100);
    CHECK_OK(MPI_Comm_set_name(dup, "my dup"));
    char cname[MPI_MAX_OBJECT_NAME];
    CHECK_OK(MPI_Comm_get_name(dup, cname, &len));
    CHECK(strcmp(cname, "my dup") == 0 && len == 6);

    /* Split into even and odd ranks, keyed in reverse order; the last rank stays out. */
    MPI_Comm half;
    int color = rank == size - 1 && size > 2 ? MPI_UNDEFINED : rank % 2;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &half));
    if (color == MPI_UNDEFINED) {
        CHECK(half == MPI_COMM_NULL);
    } else {
        int hr, hs, members = 0;
        for (int k = 0; k < size; k++)
            if (k % 2 == color && !(k == size - 1 && size > 2)) members++;
        CHECK_OK(MPI_Comm_rank(half, &hr));
        CHECK_OK(MPI_Comm_size(half, &hs));
        CHECK(hs == members);
        int higher = 0;
        for (int k = rank + 1; k < size; k++)
            if (k % 2 == color && !(k == size - 1 && size > 2)) higher++;
        CHECK(hr == higher);
        int sum;
        CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half));
        int expect = 0;
        for (int k = 0; k < size; k++)
            if (k % 2 == color && !(k == size - 1 && size > 2)) expect += k;
        CHECK(sum == expect);
        checksum += sum;
        CHECK_OK(MPI_Comm_free(&half));
        CHECK(half == MPI_COMM_NULL);
    }

    /* Groups: the world group without rank 0, a communicator of it. */
    MPI_Group world_group, rest, first, un, inter;
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int zero = 0, gsize, grank;
    CHECK_OK(MPI_Group_excl(world_group, 1, &zero, &rest));
    CHECK_OK(MPI_Group_incl(world_group, 1, &zero, &first));
    CHECK_OK(MPI_Group_size(rest, &gsize));
    CHECK(gsize == size - 1);
    CHECK_OK(MPI_Group_rank(rest, &grank));
    CHECK(grank == (rank == 0 ? MPI_UNDEFINED : rank - 1));
    CHECK_OK(MPI_Group_union(first, rest, &un));
    CHECK_OK(MPI_Group_compare(un, world_group, &result));
    CHECK(result == MPI_IDENT);
    CHECK_OK(MPI_Group_intersection(first, rest, &inter));
    CHECK_OK(MPI_Group_size(inter, &gsize));
    CHECK(gsize == 0);
    int wr[1] = {size - 1}, tr[1];
    CHECK_OK(MPI_Group_translate_ranks(world_group, 1, wr, rest, tr));
    CHECK(tr[0] == (size == 1 ? MPI_UNDEFINED : size - 2));
    MPI_Comm restc;
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, rest, &restc));
    if (rank == 0) {
        CHECK(restc == MPI_COMM_NULL);
    } else {
        int rr, rsum;
        CHECK_OK(MPI_Comm_rank(restc, &rr));
        CHECK(rr == rank - 1);
        CHECK_OK(MPI_Allreduce(&rank, &rsum, 1, MPI_INT, MPI_SUM, restc));
        CHECK(rsum == size * (size - 1) / 2);
        checksum += rsum;
        CHECK_OK(MPI_Comm_free(&restc));
    }
    int ranges[1][3] = {{size - 1, 0, -2}};
    MPI_Group odd;
    CHECK_OK(MPI_Group_range_incl(world_group, 1, ranges, &odd));
    CHECK_OK(MPI_Group_size(odd, &gsize));
    CHECK(gsize == (size + 1) / 2);
    CHECK_OK(MPI_Group_rank(odd, &grank));
    CHECK(grank == ((size - 1 - rank) % 2 == 0 ? (size - 1 - rank) / 2 : MPI_UNDEFINED));
    CHECK_OK(MPI_Group_free(&odd));
    double *mem;
    CHECK_OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem));
    for (int i = 0; i < 1000; i++) mem[i] = i;
    CHECK(mem[999] == 999 && ((uintptr_t)mem % 16) == 0);
    CHECK_OK(MPI_Free_mem(mem));
    MPI_Group gs[5] = {world_group, rest, first, un, inter};
    for (int i = 0; i < 5; i++) {
        CHECK_OK(MPI_Group_free(&gs[i]));
        CHECK(gs[i] == MPI_GROUP_NULL);
    }

    /* Attributes of the program's own: copied on dup by MPI_COMM_DUP_FN, deleted on free. */
    {
        static int extra = 42, value = 5;
        int key, *got;
        MPI_Comm a, b;
        CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &key, &extra));
        CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
        CHECK_OK(MPI_Comm_get_attr(a, key, &got, &flag));
        CHECK(!flag);
        CHECK_OK(MPI_Comm_set_attr(a, key, &value));
        CHECK_OK(MPI_Comm_get_attr(a, key, &got, &flag));
        CHECK(flag && got == &value);
        CHECK_OK(MPI_Comm_dup(a, &b));
        CHECK_OK(MPI_Comm_get_attr(b, key, &got, &flag));
        CHECK(flag && *got == 5);
        CHECK_OK(MPI_Comm_free(&a));
        CHECK(deleted == 5);
        CHECK_OK(MPI_Comm_delete_attr(b, key));
        CHECK(deleted == 10);
        CHECK_OK(MPI_Comm_free(&b));
        CHECK(deleted == 10);
        CHECK_OK(MPI_Comm_free_keyval(&key));
        CHECK(key == MPI_KEYVAL_INVALID);
    }

    /* Collectives on the duplicate, after everything else. */
    long total;
    CHECK_OK(MPI_Allreduce(&checksum, &total, 1, MPI_LONG, MPI_SUM, dup));
    CHECK_OK(MPI_Comm_free(&dup));
    if (rank == 0) printf("comms: ok size %d checksum %ld\n", size, total);
    CHECK_OK(MPI_Finalize());
    CHECK_OK(MPI_Finalized(&flag));
    CHECK(flag);
    return 0;
}
