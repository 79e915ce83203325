/* Datatypes that remember how they were made, and what the program attaches to them
 * (MPI-3.1 sections 4.1.13, 6.7.4, 6.8, 4.1.3-4.1.4, 4.1.11, 4.3, 13.5.2, 17.1.9):
 * envelope and contents of every combiner, round trips through the contents, names of
 * predefined and derived types, attributes with copy and delete callbacks, darray
 * against a hand-computed layout, external32 bytes, match_size and the F90 types,
 * MPI_Get_elements on partial messages, the _x routines. Every rank checks the same
 * things locally; rank 0 prints one line. */
#include <mpi.h>
#include <string.h>
#include <stdint.h>
#include "check.h"

static void envelope_is(MPI_Datatype t, int ni, int na, int nd, int combiner) {
    int i, a, d, c;
    CHECK_OK(MPI_Type_get_envelope(t, &i, &a, &d, &c));
    if (i != ni || a != na || d != nd || c != combiner) {
        printf("envelope (%d, %d, %d, %d), expected (%d, %d, %d, %d)\n", i, a, d, c, ni, na,
               nd, combiner);
        CHECK(0);
    }
}

/* The contents of `t`; derived datatypes returned are freed by the caller. */
static void contents(MPI_Datatype t, int *ints, MPI_Aint *addrs, MPI_Datatype *types) {
    int i, a, d, c;
    CHECK_OK(MPI_Type_get_envelope(t, &i, &a, &d, &c));
    CHECK_OK(MPI_Type_get_contents(t, i, a, d, ints, addrs, types));
}

/* Two types have the same type map on these tests' buffers: packing the same memory
 * gives the same bytes, and size and extent agree. */
static void same_layout(MPI_Datatype a, MPI_Datatype b) {
    int sa, sb;
    MPI_Aint la, ea, lb, eb;
    CHECK_OK(MPI_Type_size(a, &sa));
    CHECK_OK(MPI_Type_size(b, &sb));
    CHECK_OK(MPI_Type_get_extent(a, &la, &ea));
    CHECK_OK(MPI_Type_get_extent(b, &lb, &eb));
    CHECK(sa == sb && la == lb && ea == eb);
    static int mem[4096];
    for (int i = 0; i < 4096; i++) mem[i] = i * 7 + 1;
    char pa[8192], pb[8192];
    int qa = 0, qb = 0;
    CHECK(sa <= 8192);
    CHECK_OK(MPI_Pack(mem + 1024, 1, a, pa, sizeof pa, &qa, MPI_COMM_SELF));
    CHECK_OK(MPI_Pack(mem + 1024, 1, b, pb, sizeof pb, &qb, MPI_COMM_SELF));
    CHECK(qa == qb && memcmp(pa, pb, qa) == 0);
}

/* Rebuilds `t` from its contents and checks it is the same type. */
static void round_trip(MPI_Datatype t) {
    int ni, na, nd, c;
    CHECK_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &c));
    int ints[64];
    MPI_Aint addrs[64];
    MPI_Datatype types[64], again;
    CHECK(ni <= 64 && na <= 64 && nd <= 64);
    contents(t, ints, addrs, types);
    switch (c) {
    case MPI_COMBINER_DUP: CHECK_OK(MPI_Type_dup(types[0], &again)); break;
    case MPI_COMBINER_CONTIGUOUS: CHECK_OK(MPI_Type_contiguous(ints[0], types[0], &again)); break;
    case MPI_COMBINER_VECTOR:
        CHECK_OK(MPI_Type_vector(ints[0], ints[1], ints[2], types[0], &again));
        break;
    case MPI_COMBINER_HVECTOR:
        CHECK_OK(MPI_Type_create_hvector(ints[0], ints[1], addrs[0], types[0], &again));
        break;
    case MPI_COMBINER_INDEXED:
        CHECK_OK(MPI_Type_indexed(ints[0], ints + 1, ints + 1 + ints[0], types[0], &again));
        break;
    case MPI_COMBINER_HINDEXED:
        CHECK_OK(MPI_Type_create_hindexed(ints[0], ints + 1, addrs, types[0], &again));
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        CHECK_OK(MPI_Type_create_indexed_block(ints[0], ints[1], ints + 2, types[0], &again));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        CHECK_OK(MPI_Type_create_hindexed_block(ints[0], ints[1], addrs, types[0], &again));
        break;
    case MPI_COMBINER_STRUCT:
        CHECK_OK(MPI_Type_create_struct(ints[0], ints + 1, addrs, types, &again));
        break;
    case MPI_COMBINER_SUBARRAY: {
        int n = ints[0];
        CHECK_OK(MPI_Type_create_subarray(n, ints + 1, ints + 1 + n, ints + 1 + 2 * n,
                                          ints[1 + 3 * n], types[0], &again));
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int n = ints[2];
        CHECK_OK(MPI_Type_create_darray(ints[0], ints[1], n, ints + 3, ints + 3 + n,
                                        ints + 3 + 2 * n, ints + 3 + 3 * n, ints[3 + 4 * n],
                                        types[0], &again));
        break;
    }
    case MPI_COMBINER_RESIZED:
        CHECK_OK(MPI_Type_create_resized(types[0], addrs[0], addrs[1], &again));
        break;
    default: CHECK(0);
    }
    CHECK_OK(MPI_Type_commit(&again));
    same_layout(t, again);
    CHECK_OK(MPI_Type_free(&again));
    for (int i = 0; i < nd; i++) {
        int ti, ta, td, tc;
        CHECK_OK(MPI_Type_get_envelope(types[i], &ti, &ta, &td, &tc));
        if (tc != MPI_COMBINER_NAMED) CHECK_OK(MPI_Type_free(&types[i]));
    }
}

/* Every combiner: its envelope, its contents, and a type rebuilt from them. */
static void combiners(void) {
    MPI_Datatype t[16];
    int n = 0, ints[64];
    MPI_Aint addrs[64];
    MPI_Datatype types[64];

    envelope_is(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED);
    envelope_is(MPI_DOUBLE_INT, 0, 0, 0, MPI_COMBINER_NAMED);
    envelope_is(MPI_CXX_BOOL, 0, 0, 0, MPI_COMBINER_NAMED);
    envelope_is(MPI_LB, 0, 0, 0, MPI_COMBINER_NAMED);

    CHECK_OK(MPI_Type_contiguous(3, MPI_INT, &t[n]));
    envelope_is(t[n], 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 3 && types[0] == MPI_INT);
    n++;
    CHECK_OK(MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &t[n]));
    envelope_is(t[n], 3, 0, 1, MPI_COMBINER_VECTOR);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 4 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_DOUBLE);
    n++;
    CHECK_OK(MPI_Type_create_hvector(3, 1, -24, t[0], &t[n]));
    envelope_is(t[n], 2, 1, 1, MPI_COMBINER_HVECTOR);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 3 && ints[1] == 1 && addrs[0] == -24);
    {
        /* A derived type comes back as a new handle to an equal type. */
        int i, a, d, c;
        CHECK(types[0] != t[0]);
        CHECK_OK(MPI_Type_get_envelope(types[0], &i, &a, &d, &c));
        CHECK(c == MPI_COMBINER_CONTIGUOUS);
        CHECK_OK(MPI_Type_commit(&t[0]));
        same_layout(types[0], t[0]);
        CHECK_OK(MPI_Type_free(&types[0]));
    }
    n++;
    int lens[3] = {2, 0, 3}, disps[3] = {7, 1, -2};
    CHECK_OK(MPI_Type_indexed(3, lens, disps, MPI_SHORT, &t[n]));
    envelope_is(t[n], 7, 0, 1, MPI_COMBINER_INDEXED);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[3] == 3 && ints[4] == 7 && ints[6] == -2);
    n++;
    MPI_Aint hd[3] = {40, 0, 100};
    CHECK_OK(MPI_Type_create_hindexed(3, lens, hd, MPI_FLOAT, &t[n]));
    envelope_is(t[n], 4, 3, 1, MPI_COMBINER_HINDEXED);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 3 && ints[2] == 0 && addrs[2] == 100 && types[0] == MPI_FLOAT);
    n++;
    CHECK_OK(MPI_Type_create_indexed_block(3, 2, disps, MPI_INT, &t[n]));
    envelope_is(t[n], 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 7 && ints[4] == -2);
    n++;
    CHECK_OK(MPI_Type_create_hindexed_block(3, 2, hd, MPI_INT, &t[n]));
    envelope_is(t[n], 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 3 && ints[1] == 2 && addrs[0] == 40 && addrs[2] == 100);
    n++;
    int slens[3] = {1, 2, 1};
    MPI_Aint sd[3] = {0, 8, 32};
    MPI_Datatype st[3] = {MPI_CHAR, MPI_DOUBLE, t[1]};
    CHECK_OK(MPI_Type_create_struct(3, slens, sd, st, &t[n]));
    envelope_is(t[n], 4, 3, 3, MPI_COMBINER_STRUCT);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 3 && ints[2] == 2 && addrs[1] == 8 && types[0] == MPI_CHAR &&
          types[1] == MPI_DOUBLE && types[2] != t[1]);
    CHECK_OK(MPI_Type_free(&types[2]));
    n++;
    int sizes[2] = {6, 7}, subs[2] = {2, 3}, starts[2] = {1, 4};
    CHECK_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT,
                                      &t[n]));
    envelope_is(t[n], 8, 0, 1, MPI_COMBINER_SUBARRAY);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 2 && ints[1] == 6 && ints[4] == 3 && ints[6] == 4 &&
          ints[7] == MPI_ORDER_FORTRAN);
    n++;
    int gs[2] = {6, 5}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    CHECK_OK(MPI_Type_create_darray(4, 3, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t[n]));
    envelope_is(t[n], 12, 0, 1, MPI_COMBINER_DARRAY);
    contents(t[n], ints, addrs, types);
    CHECK(ints[0] == 4 && ints[1] == 3 && ints[2] == 2 && ints[3] == 6 &&
          ints[5] == MPI_DISTRIBUTE_BLOCK && ints[8] == 2 && ints[11] == MPI_ORDER_C);
    n++;
    CHECK_OK(MPI_Type_create_resized(t[1], -8, 400, &t[n]));
    envelope_is(t[n], 0, 2, 1, MPI_COMBINER_RESIZED);
    contents(t[n], ints, addrs, types);
    CHECK(addrs[0] == -8 && addrs[1] == 400);
    CHECK_OK(MPI_Type_free(&types[0]));
    n++;
    CHECK_OK(MPI_Type_dup(t[7], &t[n]));
    envelope_is(t[n], 0, 0, 1, MPI_COMBINER_DUP);
    n++;
    /* The MPI-1 constructors report the MPI-2 combiners, as Open MPI and MPICH. */
    CHECK_OK(MPI_Type_hvector(2, 1, 16, MPI_INT, &t[n]));
    envelope_is(t[n], 2, 1, 1, MPI_COMBINER_HVECTOR);
    n++;
    /* MPI_Type_struct with bound markers. */
    int ml[3] = {1, 1, 1};
    MPI_Aint md[3] = {-4, 0, 20};
    MPI_Datatype mt[3] = {MPI_LB, MPI_INT, MPI_UB};
    CHECK_OK(MPI_Type_struct(3, ml, md, mt, &t[n]));
    {
        MPI_Aint lb, ext;
        CHECK_OK(MPI_Type_get_extent(t[n], &lb, &ext));
        CHECK(lb == -4 && ext == 24);
    }
    envelope_is(t[n], 4, 3, 3, MPI_COMBINER_STRUCT);
    n++;

    for (int i = 0; i < n; i++) CHECK_OK(MPI_Type_commit(&t[i]));
    for (int i = 0; i < n; i++) round_trip(t[i]);

    /* The old types may be freed first: the contents keep them. */
    MPI_Datatype inner, outer;
    CHECK_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &inner));
    CHECK_OK(MPI_Type_contiguous(2, inner, &outer));
    CHECK_OK(MPI_Type_free(&inner));
    contents(outer, ints, addrs, types);
    envelope_is(types[0], 3, 0, 1, MPI_COMBINER_VECTOR);
    CHECK_OK(MPI_Type_free(&types[0]));
    CHECK_OK(MPI_Type_free(&outer));

    /* Too little room, and contents of a predefined type, are errors. */
    CHECK(MPI_Type_get_contents(t[1], 2, 0, 1, ints, addrs, types) != MPI_SUCCESS);
    CHECK(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, addrs, types) != MPI_SUCCESS);
    for (int i = 0; i < n; i++) CHECK_OK(MPI_Type_free(&t[i]));
}

static void names(void) {
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    const char *predefined[] = {"MPI_INT", "MPI_DOUBLE", "MPI_DOUBLE_INT", "MPI_CXX_BOOL",
                                "MPI_LOGICAL8", "MPI_INTEGER16", "MPI_COMPLEX32", "MPI_UB"};
    MPI_Datatype handles[] = {MPI_INT, MPI_DOUBLE, MPI_DOUBLE_INT, MPI_CXX_BOOL,
                              MPI_LOGICAL8, MPI_INTEGER16, MPI_COMPLEX32, MPI_UB};
    for (int i = 0; i < 8; i++) {
        CHECK_OK(MPI_Type_get_name(handles[i], name, &len));
        CHECK(strcmp(name, predefined[i]) == 0 && len == (int)strlen(predefined[i]));
    }
    MPI_Datatype v, d;
    CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    CHECK_OK(MPI_Type_get_name(v, name, &len));
    CHECK(len == 0 && name[0] == 0);
    CHECK_OK(MPI_Type_set_name(v, "halo column"));
    CHECK_OK(MPI_Type_get_name(v, name, &len));
    CHECK(strcmp(name, "halo column") == 0 && len == 11);
    CHECK_OK(MPI_Type_dup(v, &d));
    CHECK_OK(MPI_Type_get_name(d, name, &len));
    CHECK(len == 0);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    CHECK_OK(MPI_Type_set_name(d, longname));
    CHECK_OK(MPI_Type_get_name(d, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len);
    CHECK_OK(MPI_Type_free(&v));
    CHECK_OK(MPI_Type_free(&d));
}

/* Attribute callbacks: each call is counted, and the copy doubles the value. */
static int copies, deletes, last_deleted;

static int copy_double(MPI_Datatype old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)key;
    CHECK(*(int *)extra == 42);
    copies++;
    *(void **)out = (void *)((intptr_t)in * 2);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Datatype t, int key, void *val, void *extra) {
    (void)t;
    (void)key;
    (void)extra;
    deletes++;
    last_deleted = (int)(intptr_t)val;
    return MPI_SUCCESS;
}

static int refuse_copy(MPI_Datatype old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old; (void)key; (void)extra; (void)in; (void)out; (void)flag;
    return MPI_ERR_OTHER;
}

static void attributes(void) {
    static int extra = 42;
    int k, k2, k3, flag;
    void *val;
    MPI_Datatype t, d, dd;
    CHECK_OK(MPI_Type_create_keyval(copy_double, count_delete, &k, &extra));
    CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k2, NULL));
    CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &k3, NULL));
    CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_OK(MPI_Type_get_attr(t, k, &val, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_set_attr(t, k, (void *)5));
    CHECK_OK(MPI_Type_set_attr(t, k2, (void *)6));
    CHECK_OK(MPI_Type_set_attr(t, k3, (void *)7));
    CHECK_OK(MPI_Type_get_attr(t, k, &val, &flag));
    CHECK(flag == 1 && (intptr_t)val == 5);
    /* Replacing a value deletes the old one. */
    CHECK_OK(MPI_Type_set_attr(t, k, (void *)9));
    CHECK(deletes == 1 && last_deleted == 5);
    /* MPI_Type_dup copies through the callbacks: k doubled, k2 not copied, k3 as is. */
    CHECK_OK(MPI_Type_dup(t, &d));
    CHECK(copies == 1);
    CHECK_OK(MPI_Type_get_attr(d, k, &val, &flag));
    CHECK(flag == 1 && (intptr_t)val == 18);
    CHECK_OK(MPI_Type_get_attr(d, k2, &val, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_get_attr(d, k3, &val, &flag));
    CHECK(flag == 1 && (intptr_t)val == 7);
    /* Delete, free: the delete function runs once per value. */
    CHECK_OK(MPI_Type_delete_attr(t, k));
    CHECK(deletes == 2 && last_deleted == 9);
    CHECK_OK(MPI_Type_get_attr(t, k, &val, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_free(&t));
    CHECK(deletes == 2 && t == MPI_DATATYPE_NULL);
    /* A freed keyval cannot be used; the attribute that has it is still deleted. */
    CHECK_OK(MPI_Type_free_keyval(&k));
    CHECK(k == MPI_KEYVAL_INVALID);
    CHECK_OK(MPI_Type_free(&d));
    CHECK(deletes == 3 && last_deleted == 18);
    /* Attributes on a predefined type. */
    CHECK_OK(MPI_Type_set_attr(MPI_DOUBLE, k3, (void *)11));
    CHECK_OK(MPI_Type_get_attr(MPI_DOUBLE, k3, &val, &flag));
    CHECK(flag == 1 && (intptr_t)val == 11);
    CHECK_OK(MPI_Type_delete_attr(MPI_DOUBLE, k3));
    /* A copy function that fails makes MPI_Type_dup fail. */
    int k4;
    CHECK_OK(MPI_Type_create_keyval(refuse_copy, MPI_TYPE_NULL_DELETE_FN, &k4, NULL));
    CHECK_OK(MPI_Type_contiguous(1, MPI_INT, &t));
    CHECK_OK(MPI_Type_set_attr(t, k4, (void *)1));
    CHECK(MPI_Type_dup(t, &dd) != MPI_SUCCESS);
    CHECK_OK(MPI_Type_free(&t));
    /* A communicator keyval is not a datatype keyval. */
    int ck;
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
    CHECK(MPI_Type_set_attr(MPI_INT, ck, (void *)1) != MPI_SUCCESS);
    CHECK_OK(MPI_Comm_free_keyval(&ck));
    CHECK_OK(MPI_Type_free_keyval(&k2));
    CHECK_OK(MPI_Type_free_keyval(&k3));
    CHECK_OK(MPI_Type_free_keyval(&k4));
}

/* The elements (in units of int) a type of ints selects, packed in order. */
static int selected(MPI_Datatype t, int *out, int max) {
    static int mem[256];
    for (int i = 0; i < 256; i++) mem[i] = i;
    int size, pos = 0;
    CHECK_OK(MPI_Type_size(t, &size));
    CHECK(size / 4 <= max);
    CHECK_OK(MPI_Pack(mem, 1, t, out, max * 4, &pos, MPI_COMM_SELF));
    return pos / 4;
}

/* MPI-3.1 section 4.1.4 worked by hand: a 6 x 5 array of ints over a 2 x 2 grid, rows
 * by blocks, columns cyclic(2). Grid coordinates are row-major: rank r is (r / 2, r % 2). */
static void darray(void) {
    int gs[2] = {6, 5}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    /* Rows: 0-2 or 3-5. Columns: {0,1,4} or {2,3}. */
    int expect_c[4][9] = {{0, 1, 4, 5, 6, 9, 10, 11, 14},
                          {2, 3, 7, 8, 12, 13},
                          {15, 16, 19, 20, 21, 24, 25, 26, 29},
                          {17, 18, 22, 23, 27, 28}};
    int count_c[4] = {9, 6, 9, 6};
    /* Fortran order: (i, j) at i + 6 j. */
    int expect_f[4][9] = {{0, 1, 2, 6, 7, 8, 24, 25, 26},
                          {12, 13, 14, 18, 19, 20},
                          {3, 4, 5, 9, 10, 11, 27, 28, 29},
                          {15, 16, 17, 21, 22, 23}};
    for (int r = 0; r < 4; r++) {
        for (int order = 0; order < 2; order++) {
            MPI_Datatype t;
            int got[64];
            CHECK_OK(MPI_Type_create_darray(4, r, 2, gs, ds, da, ps,
                                            order ? MPI_ORDER_FORTRAN : MPI_ORDER_C, MPI_INT,
                                            &t));
            CHECK_OK(MPI_Type_commit(&t));
            int n = selected(t, got, 64);
            CHECK(n == count_c[r]);
            for (int i = 0; i < n; i++) CHECK(got[i] == (order ? expect_f : expect_c)[r][i]);
            MPI_Aint lb, ext;
            CHECK_OK(MPI_Type_get_extent(t, &lb, &ext));
            CHECK(lb == 0 && ext == 30 * 4);
            CHECK_OK(MPI_Type_free(&t));
        }
    }
    /* Not distributed along the first dimension (a 3 x 4 array over 1 x 2). */
    int g2[2] = {3, 4}, d2[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK},
        a2[2] = {0, MPI_DISTRIBUTE_DFLT_DARG}, p2[2] = {1, 2}, got[16];
    MPI_Datatype t;
    CHECK_OK(MPI_Type_create_darray(2, 1, 2, g2, d2, a2, p2, MPI_ORDER_C, MPI_INT, &t));
    CHECK_OK(MPI_Type_commit(&t));
    int expect[6] = {2, 3, 6, 7, 10, 11};
    CHECK(selected(t, got, 16) == 6);
    for (int i = 0; i < 6; i++) CHECK(got[i] == expect[i]);
    CHECK_OK(MPI_Type_free(&t));
    /* A grid that does not match the size is an error. */
    CHECK(MPI_Type_create_darray(3, 0, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t) != 0);
}

static void external32(void) {
    int ints[2] = {1, -2};
    long longs[2] = {1, -2};
    double d = 1.0;
    unsigned char buf[64];
    MPI_Aint pos = 0, size;
    CHECK_OK(MPI_Pack_external_size("external32", 2, MPI_LONG, &size));
    CHECK(size == 8);
    CHECK_OK(MPI_Pack_external("external32", ints, 2, MPI_INT, buf, sizeof buf, &pos));
    CHECK_OK(MPI_Pack_external("external32", longs, 2, MPI_LONG, buf, sizeof buf, &pos));
    CHECK_OK(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    CHECK(pos == 24);
    unsigned char want[24] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 1, 0xff, 0xff,
                              0xff, 0xfe, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    CHECK(memcmp(buf, want, 24) == 0);
    /* A vector of shorts: only its elements, big-endian. */
    short sh[5] = {0x0102, -1, 0x0304, -1, 0x0506};
    MPI_Datatype v;
    CHECK_OK(MPI_Type_vector(3, 1, 2, MPI_SHORT, &v));
    CHECK_OK(MPI_Type_commit(&v));
    pos = 0;
    CHECK_OK(MPI_Pack_external("external32", sh, 1, v, buf, sizeof buf, &pos));
    unsigned char wsh[6] = {1, 2, 3, 4, 5, 6};
    CHECK(pos == 6 && memcmp(buf, wsh, 6) == 0);
    short back[5] = {0, 9, 0, 9, 0};
    MPI_Aint in = 0;
    CHECK_OK(MPI_Unpack_external("external32", buf, pos, &in, back, 1, v));
    CHECK(in == 6 && back[0] == 0x0102 && back[1] == 9 && back[4] == 0x0506);
    CHECK_OK(MPI_Type_free(&v));
    /* Longs come back sign-extended; a value that does not fit in 4 bytes is an error. */
    long back_l[2] = {0, 0};
    in = 8;
    CHECK_OK(MPI_Unpack_external("external32", want, 24, &in, back_l, 2, MPI_LONG));
    CHECK(in == 16 && back_l[0] == 1 && back_l[1] == -2);
    long big = 1L << 40;
    pos = 0;
    CHECK(MPI_Pack_external("external32", &big, 1, MPI_LONG, buf, sizeof buf, &pos) != 0);
    CHECK(MPI_Pack_external("native", ints, 1, MPI_INT, buf, sizeof buf, &pos) != 0);
}

static void sizes(void) {
    MPI_Datatype t;
    int s;
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
    CHECK(t == MPI_REAL8);
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &t));
    CHECK(t == MPI_INTEGER2);
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
    CHECK(t == MPI_COMPLEX16);
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t) != MPI_SUCCESS);
    MPI_Datatype r1, r2, c, i;
    int ints[2];
    CHECK_OK(MPI_Type_create_f90_real(10, 100, &r1));
    CHECK_OK(MPI_Type_create_f90_real(10, 100, &r2));
    CHECK(r1 == r2);
    CHECK_OK(MPI_Type_size(r1, &s));
    CHECK(s == 8);
    envelope_is(r1, 2, 0, 0, MPI_COMBINER_F90_REAL);
    CHECK_OK(MPI_Type_get_contents(r1, 2, 0, 0, ints, NULL, NULL));
    CHECK(ints[0] == 10 && ints[1] == 100);
    CHECK_OK(MPI_Type_create_f90_complex(MPI_UNDEFINED, 30, &c));
    CHECK_OK(MPI_Type_size(c, &s));
    CHECK(s == 8);
    envelope_is(c, 2, 0, 0, MPI_COMBINER_F90_COMPLEX);
    CHECK_OK(MPI_Type_create_f90_integer(9, &i));
    CHECK_OK(MPI_Type_size(i, &s));
    CHECK(s == 4);
    envelope_is(i, 1, 0, 0, MPI_COMBINER_F90_INTEGER);
    CHECK(MPI_Type_free(&i) != MPI_SUCCESS);
    /* A reduction on an F90 type and on MPI_INTEGER16. */
    double a = 1.5, b = 2.25;
    CHECK_OK(MPI_Reduce_local(&a, &b, 1, r1, MPI_SUM));
    CHECK(b == 3.75);
    __int128 x = (__int128)1 << 100, y = 5;
    CHECK_OK(MPI_Reduce_local(&x, &y, 1, MPI_INTEGER16, MPI_SUM));
    CHECK(y == ((__int128)1 << 100) + 5);
    _Bool p = 1, q = 0;
    CHECK_OK(MPI_Reduce_local(&p, &q, 1, MPI_CXX_BOOL, MPI_LOR));
    CHECK(q == 1);
    CHECK(MPI_Reduce_local(&a, &b, 1, MPI_REAL16, MPI_SUM) != MPI_SUCCESS);
    /* long double: MAX and MIN, exactly; SUM and PROD in long double precision. */
    long double lx[2] = {1.5L, -1e-4000L}, ly[2] = {1.5L + 1e-18L, -2e-4000L};
    CHECK_OK(MPI_Reduce_local(lx, ly, 2, MPI_LONG_DOUBLE, MPI_MAX));
    CHECK(ly[0] == 1.5L + 1e-18L && ly[1] == -1e-4000L);
    CHECK_OK(MPI_Reduce_local(lx, ly, 2, MPI_LONG_DOUBLE, MPI_MIN));
    CHECK(ly[0] == 1.5L && ly[1] == -1e-4000L);
    long double sx[2] = {1.0L, 3.0L}, sy[2] = {1e-18L, 0.5L};
    CHECK_OK(MPI_Reduce_local(sx, sy, 2, MPI_LONG_DOUBLE, MPI_SUM));
    CHECK(sy[0] == 1.0L + 1e-18L && sy[0] != 1.0L && sy[1] == 3.5L);
    CHECK_OK(MPI_Reduce_local(sx, sy, 2, MPI_LONG_DOUBLE, MPI_PROD));
    CHECK(sy[0] == 1.0L + 1e-18L && sy[1] == 10.5L);
    /* The _x routines. */
    MPI_Count lb, ext, sz;
    MPI_Datatype v;
    CHECK_OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &v));
    CHECK_OK(MPI_Type_get_extent_x(v, &lb, &ext));
    CHECK(lb == 0 && ext == 80);
    CHECK_OK(MPI_Type_get_true_extent_x(v, &lb, &ext));
    CHECK(lb == 0 && ext == 80);
    CHECK_OK(MPI_Type_size_x(v, &sz));
    CHECK(sz == 48);
    CHECK_OK(MPI_Type_free(&v));
}

/* MPI_Get_elements counts the basic elements a short message holds. */
static void elements(void) {
    int blens[2] = {2, 1};
    MPI_Aint disps[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, s;
    CHECK_OK(MPI_Type_create_struct(2, blens, disps, types, &s));
    CHECK_OK(MPI_Type_commit(&s));
    char out[64], in[64];
    memset(out, 1, sizeof out);
    struct { int bytes, count, elements; } cases[] = {
        {16, 1, 3}, {32, 2, 6}, {8, MPI_UNDEFINED, 2}, {16 + 8, MPI_UNDEFINED, 5},
        {16 + 4, MPI_UNDEFINED, 4}, {6, MPI_UNDEFINED, MPI_UNDEFINED}};
    for (int i = 0; i < 6; i++) {
        MPI_Status st;
        int n;
        MPI_Count nx;
        CHECK_OK(MPI_Sendrecv(out, cases[i].bytes, MPI_BYTE, 0, i, in, 3, s, 0, i, MPI_COMM_SELF,
                              &st));
        CHECK_OK(MPI_Get_count(&st, s, &n));
        CHECK(n == cases[i].count);
        CHECK_OK(MPI_Get_elements(&st, s, &n));
        CHECK(n == cases[i].elements);
        CHECK_OK(MPI_Get_elements_x(&st, s, &nx));
        CHECK(nx == cases[i].elements);
    }
    MPI_Status st;
    int n;
    char pair[64];
    CHECK_OK(MPI_Sendrecv(out, 12 + 8, MPI_BYTE, 0, 9, pair, 2, MPI_DOUBLE_INT, 0, 9,
                          MPI_COMM_SELF, &st));
    CHECK_OK(MPI_Get_elements(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == 3);
    CHECK_OK(MPI_Type_free(&s));
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    /* Some checks call with bad arguments on purpose. */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    combiners();
    names();
    attributes();
    darray();
    external32();
    sizes();
    elements();
    int ok = 1, all;
    CHECK_OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all == size);
    if (rank == 0) printf("datatypes_envelope: ok size %d\n", size);
    CHECK_OK(MPI_Finalize());
    return 0;
}
