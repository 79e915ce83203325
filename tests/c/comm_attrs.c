/* Attributes on communicators (MPI-3.1 section 6.7) and names (section 6.8): the copy
 * function runs on MPI_Comm_dup (and its value, or its "do not copy", is what the copy
 * gets; an error it returns fails the dup), the delete function when an attribute is
 * replaced, deleted, or its communicator freed (the attribute set last first), also
 * after MPI_Comm_free_keyval; MPI_COMM_NULL_COPY_FN and MPI_COMM_DUP_FN; the deprecated
 * MPI_Keyval_create / MPI_Attr_put / MPI_Attr_get; the predefined attributes
 * (MPI_TAG_UB, MPI_LASTUSEDCODE); and MPI_COMM_SELF's attributes, deleted at
 * MPI_Finalize in the reverse order they were set (section 8.7.1): their delete
 * function prints "self delete N", which the test reads. Rank 0 prints a checksum. */
#include <mpi.h>
#include <string.h>
#include "check.h"

static int copies, deletes, order[16], norder;

/* Copies value + 1, counting; extra_state, when set, is a code to fail with. */
static int copy_plus_one(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)key;
    copies++;
    if (extra) return *(int *)extra;
    *(long *)out = (long)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Records the value it deletes. */
static int record_delete(MPI_Comm c, int key, void *val, void *extra) {
    (void)c;
    (void)key;
    (void)extra;
    deletes++;
    if (norder < 16) order[norder++] = (int)(long)val;
    return MPI_SUCCESS;
}

/* Does not copy. */
static int no_copy(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old, (void)key, (void)extra, (void)in, (void)out;
    copies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int self_rank;

/* MPI_COMM_SELF's attributes: printed at MPI_Finalize by rank 0. */
static int self_delete(MPI_Comm c, int key, void *val, void *extra) {
    (void)key;
    (void)extra;
    CHECK(c == MPI_COMM_SELF);
    if (self_rank == 0) printf("self delete %d\n", (int)(long)val);
    fflush(stdout);
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size, flag;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = self_rank = rank;
    long checksum = 0;

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
    CHECK_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0);

    int key, nocopy, dupkey;
    CHECK_OK(MPI_Comm_create_keyval(copy_plus_one, record_delete, &key, NULL));
    CHECK_OK(MPI_Comm_create_keyval(no_copy, record_delete, &nocopy, NULL));
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &dupkey, NULL));

    MPI_Comm a, b;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    CHECK_OK(MPI_Comm_set_name(a, "first copy"));
    CHECK_OK(MPI_Comm_set_attr(a, key, (void *)10L));
    CHECK_OK(MPI_Comm_set_attr(a, nocopy, (void *)20L));
    CHECK_OK(MPI_Comm_set_attr(a, dupkey, (void *)30L));

    /* Dup: key copied as 11, nocopy absent, dupkey 30; the name is not copied. */
    CHECK_OK(MPI_Comm_dup(a, &b));
    CHECK(copies == 2);
    void *v;
    CHECK_OK(MPI_Comm_get_attr(b, key, &v, &flag));
    CHECK(flag && (long)v == 11);
    CHECK_OK(MPI_Comm_get_attr(b, nocopy, &v, &flag));
    CHECK(!flag);
    CHECK_OK(MPI_Comm_get_attr(b, dupkey, &v, &flag));
    CHECK(flag && (long)v == 30);
    CHECK_OK(MPI_Comm_get_name(b, name, &len));
    CHECK(len == 0);
    CHECK_OK(MPI_Comm_get_name(a, name, &len));
    CHECK(strcmp(name, "first copy") == 0);

    /* Set over an existing value: its delete function runs on the old one. */
    CHECK_OK(MPI_Comm_set_attr(b, key, (void *)12L));
    CHECK(deletes == 1 && order[0] == 11);
    /* Delete. */
    CHECK_OK(MPI_Comm_delete_attr(b, key));
    CHECK(deletes == 2 && order[1] == 12);
    CHECK_OK(MPI_Comm_get_attr(b, key, &v, &flag));
    CHECK(!flag);

    /* Free: every attribute's delete function, the one set last first; a freed key
     * still deletes the attributes that use it. */
    CHECK_OK(MPI_Comm_set_attr(b, key, (void *)13L));
    CHECK_OK(MPI_Comm_set_attr(b, nocopy, (void *)14L));
    CHECK_OK(MPI_Comm_free_keyval(&nocopy));
    CHECK(nocopy == MPI_KEYVAL_INVALID);
    CHECK_OK(MPI_Comm_free(&b));
    CHECK(b == MPI_COMM_NULL);
    CHECK(deletes == 4 && order[2] == 14 && order[3] == 13);
    CHECK_OK(MPI_Comm_free(&a));
    CHECK(deletes == 6 && order[4] == 20 && order[5] == 10);

    /* A copy function's error fails MPI_Comm_dup with its code. */
    int fail = MPI_ERR_OTHER, failkey;
    CHECK_OK(MPI_Comm_create_keyval(copy_plus_one, MPI_COMM_NULL_DELETE_FN, &failkey, &fail));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, failkey, (void *)1L));
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int err = MPI_Comm_dup(MPI_COMM_WORLD, &a);
    CHECK(err == MPI_ERR_OTHER);
    CHECK_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, failkey));
    CHECK_OK(MPI_Comm_free_keyval(&failkey));
    /* A key that is not one is an error. */
    int cls;
    err = MPI_Comm_delete_attr(MPI_COMM_WORLD, 12345);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_KEYVAL);

    /* MPI-1: MPI_Keyval_create, MPI_Attr_put, MPI_Attr_get, MPI_DUP_FN. */
    int old;
    CHECK_OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &old, NULL));
    CHECK_OK(MPI_Attr_put(MPI_COMM_WORLD, old, (void *)(long)(rank + 40)));
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    CHECK_OK(MPI_Attr_get(a, old, &v, &flag));
    CHECK(flag && (long)v == rank + 40);
    checksum += (long)v;
    CHECK_OK(MPI_Comm_free(&a));
    CHECK_OK(MPI_Attr_delete(MPI_COMM_WORLD, old));
    CHECK_OK(MPI_Keyval_free(&old));

    /* Predefined attributes. */
    int *p;
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
    CHECK(flag && *p >= 32767);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag));
    CHECK(flag && *p >= MPI_ERR_LASTCODE);

    /* MPI_COMM_SELF's attributes go at MPI_Finalize, 3 then 2 then 1. */
    int selfkey;
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &selfkey, NULL));
    int k2, k3;
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k2, NULL));
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k3, NULL));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, selfkey, (void *)1L));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k2, (void *)2L));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k3, (void *)3L));

    checksum += copies * 100 + deletes;
    long all;
    CHECK_OK(MPI_Reduce(&checksum, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("comm_attrs: ok size %d checksum %ld\n", size, all);
    fflush(stdout);
    CHECK_OK(MPI_Comm_free_keyval(&key));
    CHECK_OK(MPI_Comm_free_keyval(&dupkey));
    CHECK_OK(MPI_Finalize());
    return 0;
}
