/* Error handling and the environment (MPI-3.1 chapter 8), info objects (chapter 9) and
 * thread levels (section 12.4): a communicator error handler of the program's, called
 * for a failed call and by MPI_Comm_call_errhandler; error classes, codes and strings of
 * the program's (MPI_Add_error_class/code/string, MPI_Error_class/string on them,
 * MPI_LASTUSEDCODE); error handlers for windows and files (only what needs no window
 * or file: MPI_FILE_NULL's handler is the default for files, set, got and called);
 * every info function with its limits and errors, and MPI_INFO_ENV; MPI_Init_thread
 * asking for MPI_THREAD_MULTIPLE gets MPI_THREAD_SERIALIZED, which MPI_Query_thread
 * and MPI_Is_thread_main (from another thread too) agree with. Rank 0 prints a
 * checksum. */
#include <mpi.h>
#include <pthread.h>
#include <string.h>
#include "check.h"

static int comm_calls, last_code, file_calls, file_code;
static MPI_Comm last_comm;

static void on_comm(MPI_Comm *c, int *code, ...) {
    comm_calls++;
    last_code = *code;
    last_comm = *c;
}

static void on_file(MPI_File *f, int *code, ...) {
    CHECK(*f == MPI_FILE_NULL);
    file_calls++;
    file_code = *code;
}

static void on_win(MPI_Win *w, int *code, ...) { (void)w, (void)code; }

static int class_of(int err) {
    int c;
    CHECK_OK(MPI_Error_class(err, &c));
    return c;
}

static void *not_main(void *flag) {
    CHECK_OK(MPI_Is_thread_main((int *)flag));
    return NULL;
}

int main(int argc, char **argv) {
    int rank, size, provided, claimed, flag;
    CHECK_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    long checksum = 0;

    /* Threads. */
    CHECK(provided == MPI_THREAD_SERIALIZED);
    CHECK_OK(MPI_Query_thread(&claimed));
    CHECK(claimed == provided);
    CHECK_OK(MPI_Is_thread_main(&flag));
    CHECK(flag);
    pthread_t t;
    int other = -1;
    CHECK(pthread_create(&t, NULL, not_main, &other) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(other == 0);

    /* A handler of the program's on a copy of MPI_COMM_WORLD. */
    MPI_Comm c;
    MPI_Errhandler eh, got;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_OK(MPI_Comm_create_errhandler(on_comm, &eh));
    CHECK_OK(MPI_Comm_set_errhandler(c, eh));
    CHECK_OK(MPI_Comm_get_errhandler(c, &got));
    CHECK(got == eh);
    int x = 0;
    int err = MPI_Send(&x, 1, MPI_INT, size + 5, 0, c);
    CHECK(class_of(err) == MPI_ERR_RANK && comm_calls == 1 && last_code == err && last_comm == c);

    /* The program's own class, code and strings. */
    int myclass, mycode, lastused, *p;
    CHECK_OK(MPI_Add_error_class(&myclass));
    CHECK(myclass > MPI_ERR_LASTCODE);
    CHECK_OK(MPI_Add_error_code(myclass, &mycode));
    CHECK(mycode > myclass);
    CHECK_OK(MPI_Add_error_string(mycode, "the program's own error"));
    CHECK_OK(MPI_Add_error_string(myclass, "the program's own class"));
    CHECK(class_of(mycode) == myclass && class_of(myclass) == myclass);
    char text[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_OK(MPI_Error_string(mycode, text, &len));
    CHECK(strcmp(text, "the program's own error") == 0 && len == 23);
    CHECK_OK(MPI_Error_string(myclass, text, &len));
    CHECK(strcmp(text, "the program's own class") == 0);
    CHECK_OK(MPI_Error_string(MPI_ERR_TAG, text, &len));
    CHECK(len > 0);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag));
    lastused = *p;
    CHECK(flag && lastused == mycode);
    int code2;
    CHECK_OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    CHECK(class_of(code2) == MPI_ERR_ARG && *p == code2);
    CHECK_OK(MPI_Error_string(code2, text, &len));
    CHECK(len == 0);
    /* MPI_Comm_call_errhandler with the program's code. */
    CHECK_OK(MPI_Comm_call_errhandler(c, mycode));
    CHECK(comm_calls == 2 && last_code == mycode);
    checksum += mycode - MPI_ERR_LASTCODE;

    /* With MPI_ERRORS_RETURN: wrong arguments return their class. */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(class_of(MPI_Add_error_string(MPI_ERR_TAG, "no")) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Add_error_code(MPI_SUCCESS, &x)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Error_class(lastused + 1000, &x)) == MPI_ERR_ARG);

    /* Windows: a handler can be made; no window exists to take it. A communicator's
     * handler is not a window's (MPI_ERR_ARG). */
    MPI_Errhandler weh;
    CHECK_OK(MPI_Win_create_errhandler(on_win, &weh));
    CHECK(class_of(MPI_Win_set_errhandler(MPI_WIN_NULL, weh)) == MPI_ERR_WIN);
    CHECK(class_of(MPI_Win_set_errhandler(MPI_WIN_NULL, eh)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Comm_set_errhandler(c, weh)) == MPI_ERR_ARG);

    /* Files: MPI_FILE_NULL's handler starts as MPI_ERRORS_RETURN and is what files
     * start with; set it, get it, call it. */
    MPI_Errhandler feh;
    CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == MPI_ERRORS_RETURN);
    CHECK_OK(MPI_File_create_errhandler(on_file, &feh));
    CHECK(class_of(MPI_File_set_errhandler(MPI_FILE_NULL, eh)) == MPI_ERR_ARG);
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, feh));
    CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == feh);
    CHECK_OK(MPI_File_call_errhandler(MPI_FILE_NULL, mycode));
    CHECK(file_calls == 1 && file_code == mycode);
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Errhandler_free(&feh));
    CHECK_OK(MPI_Errhandler_free(&weh));
    CHECK(feh == MPI_ERRHANDLER_NULL);

    /* Info objects. */
    MPI_Info info, copy;
    char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
    int nkeys, vlen;
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_set(info, "alpha", "1"));
    CHECK_OK(MPI_Info_set(info, "beta", "two"));
    CHECK_OK(MPI_Info_set(info, "gamma", "three"));
    CHECK_OK(MPI_Info_set(info, "alpha", "one"));
    CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 3);
    CHECK_OK(MPI_Info_get_nthkey(info, 0, key));
    CHECK(strcmp(key, "alpha") == 0);
    CHECK_OK(MPI_Info_get_nthkey(info, 2, key));
    CHECK(strcmp(key, "gamma") == 0);
    CHECK_OK(MPI_Info_get_valuelen(info, "gamma", &vlen, &flag));
    CHECK(flag && vlen == 5);
    CHECK_OK(MPI_Info_get_valuelen(info, "delta", &vlen, &flag));
    CHECK(!flag);
    CHECK_OK(MPI_Info_get(info, "alpha", 2, value, &flag));
    CHECK(flag && strcmp(value, "on") == 0); /* truncated to valuelen characters */
    CHECK_OK(MPI_Info_dup(info, &copy));
    CHECK_OK(MPI_Info_delete(info, "beta"));
    CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 2);
    CHECK_OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "gamma") == 0);
    CHECK_OK(MPI_Info_get(copy, "beta", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, "two") == 0);
    CHECK(class_of(MPI_Info_delete(info, "beta")) == MPI_ERR_INFO_NOKEY);
    CHECK(class_of(MPI_Info_get_nthkey(info, 2, key)) == MPI_ERR_ARG);
    char long_key[MPI_MAX_INFO_KEY + 2];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = 0;
    CHECK(class_of(MPI_Info_set(info, long_key, "v")) == MPI_ERR_INFO_KEY);
    CHECK(class_of(MPI_Info_set(info, "", "v")) == MPI_ERR_INFO_KEY);
    static char long_value[MPI_MAX_INFO_VAL + 2];
    memset(long_value, 'v', sizeof long_value - 1);
    CHECK(class_of(MPI_Info_set(info, "k", long_value)) == MPI_ERR_INFO_VALUE);
    CHECK_OK(MPI_Info_free(&info));
    CHECK_OK(MPI_Info_free(&copy));
    CHECK(info == MPI_INFO_NULL);
    CHECK(class_of(MPI_Info_get_nkeys(info, &nkeys)) == MPI_ERR_INFO);

    /* MPI_INFO_ENV: how this process started. */
    CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && atoi(value) == size);
    CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strstr(value, "comm_errors") != NULL);
    CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, "MPI_THREAD_MULTIPLE") == 0);
    CHECK(class_of(MPI_Info_free(&(MPI_Info){MPI_INFO_ENV})) == MPI_ERR_INFO);

    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Errhandler_free(&eh));
    checksum += rank + 1;
    long all;
    CHECK_OK(MPI_Reduce(&checksum, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("comm_errors: ok size %d checksum %ld\n", size, all);
    CHECK_OK(MPI_Finalize());
    return 0;
}
