/*
 * mpi.h for Volpex: the MPI 3.1 C interface over the Volpex runtime (libvolpexmpi).
 *
 * Build with `volpexcc` (or `volpexcxx`), run with `volpexrun -n N -r R ./a.out`; a
 * program started without volpexrun runs as one rank.
 *
 * Handles are ints (like MPICH): each kind of object has its own tag in the high byte,
 * so a handle of the wrong kind is refused with an error naming the kind. Every
 * function declared here exists in the library; those not implemented yet return
 * MPI_ERR_OTHER (through the error handler of MPI_COMM_WORLD) with a message naming the
 * function.
 */
#ifndef VOLPEX_MPI_H
#define VOLPEX_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VOLPEX_MPI 1
#define MPI_VERSION 3
#define MPI_SUBVERSION 1

/* ---- Handle and integer types ---- */
typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Group;
typedef int MPI_Op;
typedef int MPI_Request;
/* ROMIO's names for I/O requests, which Open MPI's and MPICH's mpi.h also have. */
typedef MPI_Request MPIO_Request;
#define MPIO_Wait MPI_Wait
#define MPIO_Test MPI_Test
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Message;
typedef int MPI_Win;
typedef int MPI_File;
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

/* What a completed receive got. MPI_SOURCE, MPI_TAG and MPI_ERROR are public; the rest
 * is private to the library (the message length in bytes, and whether it was
 * cancelled). Six ints, so a Fortran status (MPI_STATUS_SIZE = 6) maps one to one. */
typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int volpex_cancelled;
    int volpex_count_lo;
    int volpex_count_hi;
} MPI_Status;

/* ---- Null and predefined handles ---- */
#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_COMM_WORLD ((MPI_Comm)0x44000001)
#define MPI_COMM_SELF ((MPI_Comm)0x44000002)

#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_GROUP_EMPTY ((MPI_Group)0x48000001)

#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x4d000001)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_INFO_ENV ((MPI_Info)0x5c000001)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_FILE_NULL ((MPI_File)0)

#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x54000001)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)0x54000002)

#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_MAX ((MPI_Op)0x58000001)
#define MPI_MIN ((MPI_Op)0x58000002)
#define MPI_SUM ((MPI_Op)0x58000003)
#define MPI_PROD ((MPI_Op)0x58000004)
#define MPI_LAND ((MPI_Op)0x58000005)
#define MPI_BAND ((MPI_Op)0x58000006)
#define MPI_LOR ((MPI_Op)0x58000007)
#define MPI_BOR ((MPI_Op)0x58000008)
#define MPI_LXOR ((MPI_Op)0x58000009)
#define MPI_BXOR ((MPI_Op)0x5800000a)
#define MPI_MINLOC ((MPI_Op)0x5800000b)
#define MPI_MAXLOC ((MPI_Op)0x5800000c)
#define MPI_REPLACE ((MPI_Op)0x5800000d)
#define MPI_NO_OP ((MPI_Op)0x5800000e)

/* Predefined datatypes. C types: */
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_CHAR ((MPI_Datatype)0x4c000001)
#define MPI_SIGNED_CHAR ((MPI_Datatype)0x4c000002)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)0x4c000003)
#define MPI_BYTE ((MPI_Datatype)0x4c000004)
#define MPI_WCHAR ((MPI_Datatype)0x4c000005)
#define MPI_SHORT ((MPI_Datatype)0x4c000006)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)0x4c000007)
#define MPI_INT ((MPI_Datatype)0x4c000008)
#define MPI_UNSIGNED ((MPI_Datatype)0x4c000009)
#define MPI_LONG ((MPI_Datatype)0x4c00000a)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)0x4c00000b)
#define MPI_LONG_LONG_INT ((MPI_Datatype)0x4c00000c)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x4c00000d)
#define MPI_FLOAT ((MPI_Datatype)0x4c00000e)
#define MPI_DOUBLE ((MPI_Datatype)0x4c00000f)
#define MPI_LONG_DOUBLE ((MPI_Datatype)0x4c000010)
#define MPI_PACKED ((MPI_Datatype)0x4c000011)
#define MPI_C_BOOL ((MPI_Datatype)0x4c000012)
#define MPI_INT8_T ((MPI_Datatype)0x4c000013)
#define MPI_INT16_T ((MPI_Datatype)0x4c000014)
#define MPI_INT32_T ((MPI_Datatype)0x4c000015)
#define MPI_INT64_T ((MPI_Datatype)0x4c000016)
#define MPI_UINT8_T ((MPI_Datatype)0x4c000017)
#define MPI_UINT16_T ((MPI_Datatype)0x4c000018)
#define MPI_UINT32_T ((MPI_Datatype)0x4c000019)
#define MPI_UINT64_T ((MPI_Datatype)0x4c00001a)
#define MPI_AINT ((MPI_Datatype)0x4c00001b)
#define MPI_OFFSET ((MPI_Datatype)0x4c00001c)
#define MPI_COUNT ((MPI_Datatype)0x4c00001d)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)0x4c00001e)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)0x4c00001f)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c000020)
/* Pair types for MPI_MINLOC / MPI_MAXLOC: struct { value; int index; } as C lays it out. */
#define MPI_FLOAT_INT ((MPI_Datatype)0x4c000021)
#define MPI_DOUBLE_INT ((MPI_Datatype)0x4c000022)
#define MPI_LONG_INT ((MPI_Datatype)0x4c000023)
#define MPI_2INT ((MPI_Datatype)0x4c000024)
#define MPI_SHORT_INT ((MPI_Datatype)0x4c000025)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)0x4c000026)
/* Fortran types (for C code that talks to Fortran, and for mpif.h later): */
#define MPI_CHARACTER ((MPI_Datatype)0x4c000027)
#define MPI_INTEGER ((MPI_Datatype)0x4c000028)
#define MPI_REAL ((MPI_Datatype)0x4c000029)
#define MPI_DOUBLE_PRECISION ((MPI_Datatype)0x4c00002a)
#define MPI_LOGICAL ((MPI_Datatype)0x4c00002b)
#define MPI_COMPLEX ((MPI_Datatype)0x4c00002c)
#define MPI_DOUBLE_COMPLEX ((MPI_Datatype)0x4c00002d)
#define MPI_2INTEGER ((MPI_Datatype)0x4c00002e)
#define MPI_2REAL ((MPI_Datatype)0x4c00002f)
#define MPI_2DOUBLE_PRECISION ((MPI_Datatype)0x4c000030)
#define MPI_INTEGER1 ((MPI_Datatype)0x4c000031)
#define MPI_INTEGER2 ((MPI_Datatype)0x4c000032)
#define MPI_INTEGER4 ((MPI_Datatype)0x4c000033)
#define MPI_INTEGER8 ((MPI_Datatype)0x4c000034)
#define MPI_REAL4 ((MPI_Datatype)0x4c000035)
#define MPI_REAL8 ((MPI_Datatype)0x4c000036)
#define MPI_LOGICAL1 ((MPI_Datatype)0x4c000037)
#define MPI_LOGICAL2 ((MPI_Datatype)0x4c000038)
#define MPI_LOGICAL4 ((MPI_Datatype)0x4c000039)
#define MPI_LOGICAL8 ((MPI_Datatype)0x4c00003a)
#define MPI_INTEGER16 ((MPI_Datatype)0x4c00003b)
#define MPI_REAL2 ((MPI_Datatype)0x4c00003c)
#define MPI_REAL16 ((MPI_Datatype)0x4c00003d)
#define MPI_COMPLEX4 ((MPI_Datatype)0x4c00003e)
#define MPI_COMPLEX8 ((MPI_Datatype)0x4c00003f)
#define MPI_COMPLEX16 ((MPI_Datatype)0x4c000040)
#define MPI_COMPLEX32 ((MPI_Datatype)0x4c000041)
#define MPI_2COMPLEX ((MPI_Datatype)0x4c000042)
#define MPI_2DOUBLE_COMPLEX ((MPI_Datatype)0x4c000043)
/* C++ types (MPI-3.1 section 3.2.2): layouts of bool and std::complex<T>. */
#define MPI_CXX_BOOL ((MPI_Datatype)0x4c000044)
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)0x4c000045)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)0x4c000046)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c000047)
/* Markers of a struct's bounds (removed in MPI 3.0; kept, as Open MPI and MPICH keep them,
 * for old programs): only meaningful inside MPI_Type_struct. */
#define MPI_LB ((MPI_Datatype)0x4c000048)
#define MPI_UB ((MPI_Datatype)0x4c000049)

/* ---- Special values ---- */
#define MPI_PROC_NULL (-1)
#define MPI_ANY_SOURCE (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID 0
#define MPI_BSEND_OVERHEAD 96

#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
#define MPI_IN_PLACE ((void *)1)
#define MPI_BOTTOM ((void *)0)
/* The weights sentinels of the distributed graph constructors are the addresses of
 * two objects of the library (the same common blocks Fortran's mpif.h names), so that a
 * compiler checking array arguments sees memory, not a small integer cast to a
 * pointer. */
extern int mpi_fortran_unweighted_[1];
extern int mpi_fortran_weights_empty_[1];
#define MPI_UNWEIGHTED (mpi_fortran_unweighted_)
#define MPI_WEIGHTS_EMPTY (mpi_fortran_weights_empty_)

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128

/* Thread support levels */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* Results of comparisons */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* Topologies */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

/* Predefined attribute keys (MPI_Comm_get_attr on MPI_COMM_WORLD) */
#define MPI_TAG_UB 0x64400001
#define MPI_HOST 0x64400002
#define MPI_IO 0x64400003
#define MPI_WTIME_IS_GLOBAL 0x64400004
#define MPI_UNIVERSE_SIZE 0x64400005
#define MPI_LASTUSEDCODE 0x64400006
#define MPI_APPNUM 0x64400007

/* Datatype decoding and array layouts */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR 5
#define MPI_COMBINER_INDEXED 6
#define MPI_COMBINER_HINDEXED 7
#define MPI_COMBINER_INDEXED_BLOCK 8
#define MPI_COMBINER_HINDEXED_BLOCK 9
#define MPI_COMBINER_STRUCT 10
#define MPI_COMBINER_SUBARRAY 11
#define MPI_COMBINER_DARRAY 12
#define MPI_COMBINER_RESIZED 13
#define MPI_COMBINER_HVECTOR_INTEGER 14
#define MPI_COMBINER_HINDEXED_INTEGER 15
#define MPI_COMBINER_STRUCT_INTEGER 16
#define MPI_COMBINER_F90_REAL 17
#define MPI_COMBINER_F90_COMPLEX 18
#define MPI_COMBINER_F90_INTEGER 19
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)
/* MPI_Type_match_size */
#define MPI_TYPECLASS_INTEGER 1
#define MPI_TYPECLASS_REAL 2
#define MPI_TYPECLASS_COMPLEX 3
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57

/* MPI_Comm_split_type */
#define MPI_COMM_TYPE_SHARED 1

/* File access modes, positions and views (chapter 13) */
#define MPI_MODE_RDONLY 2
#define MPI_MODE_RDWR 8
#define MPI_MODE_WRONLY 4
#define MPI_MODE_CREATE 1
#define MPI_MODE_EXCL 64
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_SEQUENTIAL 256
#define MPI_MODE_APPEND 128
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT (-54278278)

/* One-sided communication (chapter 11): assertions, lock types, window attributes */
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235
#define MPI_WIN_BASE 0x64400008
#define MPI_WIN_SIZE 0x64400009
#define MPI_WIN_DISP_UNIT 0x6440000a
#define MPI_WIN_CREATE_FLAVOR 0x6440000b
#define MPI_WIN_MODEL 0x6440000c
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2

/* ---- Error classes (MPI-3.1 section 8.4) ---- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_ROOT 7
#define MPI_ERR_GROUP 8
#define MPI_ERR_OP 9
#define MPI_ERR_TOPOLOGY 10
#define MPI_ERR_DIMS 11
#define MPI_ERR_ARG 12
#define MPI_ERR_UNKNOWN 13
#define MPI_ERR_TRUNCATE 14
#define MPI_ERR_OTHER 15
#define MPI_ERR_INTERN 16
#define MPI_ERR_IN_STATUS 17
#define MPI_ERR_PENDING 18
#define MPI_ERR_REQUEST 19
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_BAD_FILE 22
#define MPI_ERR_CONVERSION 23
#define MPI_ERR_DUP_DATAREP 24
#define MPI_ERR_FILE_EXISTS 25
#define MPI_ERR_FILE_IN_USE 26
#define MPI_ERR_FILE 27
#define MPI_ERR_INFO 28
#define MPI_ERR_INFO_KEY 29
#define MPI_ERR_INFO_VALUE 30
#define MPI_ERR_INFO_NOKEY 31
#define MPI_ERR_IO 32
#define MPI_ERR_NAME 33
#define MPI_ERR_NO_MEM 34
#define MPI_ERR_NOT_SAME 35
#define MPI_ERR_NO_SPACE 36
#define MPI_ERR_NO_SUCH_FILE 37
#define MPI_ERR_PORT 38
#define MPI_ERR_QUOTA 39
#define MPI_ERR_READ_ONLY 40
#define MPI_ERR_SERVICE 41
#define MPI_ERR_SPAWN 42
#define MPI_ERR_UNSUPPORTED_DATAREP 43
#define MPI_ERR_UNSUPPORTED_OPERATION 44
#define MPI_ERR_WIN 45
#define MPI_ERR_BASE 46
#define MPI_ERR_LOCKTYPE 47
#define MPI_ERR_KEYVAL 48
#define MPI_ERR_RMA_CONFLICT 49
#define MPI_ERR_RMA_SYNC 50
#define MPI_ERR_SIZE 51
#define MPI_ERR_DISP 52
#define MPI_ERR_ASSERT 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
/* Every replica of a rank the call needs is gone (the job cannot go on). */
#define MPIX_ERR_PROC_FAILED 58
/* Error classes of the tool information interface (MPI-3.1 section 14.3.9) */
#define MPI_T_ERR_MEMORY 59
#define MPI_T_ERR_NOT_INITIALIZED 60
#define MPI_T_ERR_CANNOT_INIT 61
#define MPI_T_ERR_INVALID_INDEX 62
#define MPI_T_ERR_INVALID_ITEM 63
#define MPI_T_ERR_INVALID_HANDLE 64
#define MPI_T_ERR_OUT_OF_HANDLES 65
#define MPI_T_ERR_OUT_OF_SESSIONS 66
#define MPI_T_ERR_INVALID_SESSION 67
#define MPI_T_ERR_CVAR_SET_NOT_NOW 68
#define MPI_T_ERR_CVAR_SET_NEVER 69
#define MPI_T_ERR_PVAR_NO_STARTSTOP 70
#define MPI_T_ERR_PVAR_NO_WRITE 71
#define MPI_T_ERR_PVAR_NO_ATOMIC 72
#define MPI_T_ERR_INVALID_NAME 73
#define MPI_T_ERR_INVALID 74
#define MPI_ERR_LASTCODE 74

/* ---- Callback types ---- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out,
                                        int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                              void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attribute_val,
                                void *extra_state);
int MPI_COMM_DUP_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                    void *attribute_val_in, void *attribute_val_out, int *flag);
#define MPI_DUP_FN MPI_COMM_DUP_FN
#define MPI_NULL_COPY_FN ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0)
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)

typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval,
                                        void *extra_state, void *attribute_val_in,
                                        void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);
int MPI_TYPE_DUP_FN(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                    void *attribute_val_in, void *attribute_val_out, int *flag);
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state,
                                       void *attribute_val_in, void *attribute_val_out,
                                       int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val,
                                         void *extra_state);
int MPI_WIN_DUP_FN(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                   void *attribute_val_out, int *flag);
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *error_code, ...);
typedef void MPI_File_errhandler_function(MPI_File *file, int *error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint *extent,
                                        void *extra_state);
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype datatype, int count,
                                            void *filebuf, MPI_Offset position,
                                            void *extra_state);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)

/* Fortran statuses seen from C (MPI_Status_f2c / MPI_Status_c2f) */
#define MPI_F_STATUS_IGNORE ((MPI_Fint *)0)
#define MPI_F_STATUSES_IGNORE ((MPI_Fint *)0)

/* ---- The tool information interface (MPI-3.1 section 14.3): this library has no
 * control or performance variables and no categories (their counts are 0). ---- */
typedef struct volpex_t_enum *MPI_T_enum;
typedef struct volpex_t_cvar_handle *MPI_T_cvar_handle;
typedef struct volpex_t_pvar_handle *MPI_T_pvar_handle;
typedef struct volpex_t_pvar_session *MPI_T_pvar_session;
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)
#define MPI_T_VERBOSITY_USER_BASIC 221
#define MPI_T_VERBOSITY_USER_DETAIL 222
#define MPI_T_VERBOSITY_USER_ALL 223
#define MPI_T_VERBOSITY_TUNER_BASIC 224
#define MPI_T_VERBOSITY_TUNER_DETAIL 225
#define MPI_T_VERBOSITY_TUNER_ALL 226
#define MPI_T_VERBOSITY_MPIDEV_BASIC 227
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 228
#define MPI_T_VERBOSITY_MPIDEV_ALL 229
#define MPI_T_BIND_NO_OBJECT 9000
#define MPI_T_BIND_MPI_COMM 9001
#define MPI_T_BIND_MPI_DATATYPE 9002
#define MPI_T_BIND_MPI_ERRHANDLER 9003
#define MPI_T_BIND_MPI_FILE 9004
#define MPI_T_BIND_MPI_GROUP 9005
#define MPI_T_BIND_MPI_OP 9006
#define MPI_T_BIND_MPI_REQUEST 9007
#define MPI_T_BIND_MPI_WIN 9008
#define MPI_T_BIND_MPI_MESSAGE 9009
#define MPI_T_BIND_MPI_INFO 9010
#define MPI_T_SCOPE_CONSTANT 60438
#define MPI_T_SCOPE_READONLY 60439
#define MPI_T_SCOPE_LOCAL 60440
#define MPI_T_SCOPE_GROUP 60441
#define MPI_T_SCOPE_GROUP_EQ 60442
#define MPI_T_SCOPE_ALL 60443
#define MPI_T_SCOPE_ALL_EQ 60444
#define MPI_T_PVAR_CLASS_STATE 240
#define MPI_T_PVAR_CLASS_LEVEL 241
#define MPI_T_PVAR_CLASS_SIZE 242
#define MPI_T_PVAR_CLASS_PERCENTAGE 243
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 244
#define MPI_T_PVAR_CLASS_LOWWATERMARK 245
#define MPI_T_PVAR_CLASS_COUNTER 246
#define MPI_T_PVAR_CLASS_AGGREGATE 247
#define MPI_T_PVAR_CLASS_TIMER 248
#define MPI_T_PVAR_CLASS_GENERIC 249

/* ---- Environment (chapter 8) ---- */
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Finalize(void);
int MPI_Initialized(int *flag);
int MPI_Finalized(int *flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
int MPI_Query_thread(int *provided);
int MPI_Is_thread_main(int *flag);
int MPI_Get_version(int *version, int *subversion);
int MPI_Get_library_version(char *version, int *resultlen);
int MPI_Get_processor_name(char *name, int *resultlen);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Pcontrol(const int level, ...);
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
int MPI_Free_mem(void *base);

/* ---- Errors ---- */
int MPI_Error_string(int errorcode, char *string, int *resultlen);
int MPI_Error_class(int errorcode, int *errorclass);
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                               MPI_Errhandler *errhandler);
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
int MPI_Errhandler_free(MPI_Errhandler *errhandler);
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler);
int MPI_Add_error_class(int *errorclass);
int MPI_Add_error_code(int errorclass, int *errorcode);
int MPI_Add_error_string(int errorcode, const char *string);

/* ---- Point-to-point (chapter 3) ---- */
/* Every send is buffered: it returns once the message is in the sender's log, so
 * MPI_Ssend, MPI_Bsend and MPI_Rsend are MPI_Send, and MPI_Buffer_attach only records the
 * buffer. */
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm);
int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm);
int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm);
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm);
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status);
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm, MPI_Request *request);
int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request);
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request);
int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request);
int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request);
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status);
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status);
int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status);
int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request);
int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count);
int MPI_Buffer_attach(void *buffer, int size);
int MPI_Buffer_detach(void *buffer_addr, int *size);
int MPI_Wait(MPI_Request *request, MPI_Status *status);
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[]);
int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status);
int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status);
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Request_free(MPI_Request *request);
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int MPI_Cancel(MPI_Request *request);
int MPI_Test_cancelled(const MPI_Status *status, int *flag);
int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request);
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request);
int MPI_Start(MPI_Request *request);
int MPI_Startall(int count, MPI_Request array_of_requests[]);

/* ---- Datatypes (chapter 4) ---- */
int MPI_Type_size(MPI_Datatype datatype, int *size);
int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size);
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent);
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent);
int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent);
int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement);
int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement);
int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype);
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype);
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype);
int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype);
int MPI_Type_hindexed(int count, int array_of_blocklengths[],
                      MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype);
int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype);
int MPI_Type_create_indexed_block(int count, int blocklength,
                                  const int array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype);
int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                    MPI_Datatype array_of_types[], MPI_Datatype *newtype);
int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype);
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype);
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                             const int array_of_subsizes[], const int array_of_starts[],
                             int order, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_commit(MPI_Datatype *datatype);
int MPI_Type_free(MPI_Datatype *datatype);
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Get_address(const void *location, MPI_Aint *address);
int MPI_Address(void *location, MPI_Aint *address);
int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm);
int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size);

/* ---- Collectives (chapter 5) ---- */
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm);
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm);
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm);
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm);
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm);
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm);
int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op);
int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
int MPI_Op_free(MPI_Op *op);
int MPI_Op_commutative(MPI_Op op, int *commute);
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request);
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request);

/* ---- Groups and communicators (chapter 6) ---- */
int MPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int MPI_Comm_free(MPI_Comm *comm);
int MPI_Comm_test_inter(MPI_Comm comm, int *flag);
int MPI_Comm_remote_size(MPI_Comm comm, int *size);
int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group);
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm);
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm);
int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
int MPI_Comm_group(MPI_Comm comm, MPI_Group *group);
int MPI_Group_size(MPI_Group group, int *size);
int MPI_Group_rank(MPI_Group group, int *rank);
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]);
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Group_free(MPI_Group *group);

/* ---- Attributes ---- */
int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);
int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);
int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                           int *comm_keyval, void *extra_state);
int MPI_Comm_free_keyval(int *comm_keyval);
int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
int MPI_Attr_delete(MPI_Comm comm, int keyval);
int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state);
int MPI_Keyval_free(int *keyval);

/* ---- Process topologies (chapter 7) ---- */
int MPI_Dims_create(int nnodes, int ndims, int dims[]);
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart);
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
int MPI_Cartdim_get(MPI_Comm comm, int *ndims);
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest);
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                 int *newrank);
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph);
int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                  int *newrank);
int MPI_Topo_test(MPI_Comm comm, int *status);

/* ---- Info objects ---- */
int MPI_Info_create(MPI_Info *info);
int MPI_Info_free(MPI_Info *info);
int MPI_Info_set(MPI_Info info, const char *key, const char *value);
int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag);

/* ---- Handle conversion between C and Fortran (handles are the same integers) ---- */
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Op MPI_Op_f2c(MPI_Fint op);
MPI_Fint MPI_Op_c2f(MPI_Op op);
MPI_Request MPI_Request_f2c(MPI_Fint request);
MPI_Fint MPI_Request_c2f(MPI_Request request);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Info MPI_Info_f2c(MPI_Fint info);
MPI_Fint MPI_Info_c2f(MPI_Info info);

MPI_Message MPI_Message_f2c(MPI_Fint message);
MPI_Fint MPI_Message_c2f(MPI_Message message);
int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status);
int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status);

/* ---- Point-to-point, continued: generalized requests (section 12.2) and statuses (12.3) ---- */
int MPI_Grequest_complete(MPI_Request request);
int MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                       MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request);
int MPI_Status_set_cancelled(MPI_Status *status, int flag);
int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count);
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count);

/* ---- Datatypes, continued: decoding, names, attributes, external32, F90 types, MPI_Count ---- */
int MPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                      MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                      MPI_Aint *position);
int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint *size);
int MPI_Type_create_darray(int size, int rank, int ndims, const int gsize_array[],
                           const int distrib_array[], const int darg_array[],
                           const int psize_array[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype);
int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype);
int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype);
int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype);
int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                           MPI_Type_delete_attr_function *type_delete_attr_fn,
                           int *type_keyval, void *extra_state);
int MPI_Type_delete_attr(MPI_Datatype type, int type_keyval);
int MPI_Type_free_keyval(int *type_keyval);
int MPI_Type_get_attr(MPI_Datatype type, int type_keyval, void *attribute_val, int *flag);
int MPI_Type_get_contents(MPI_Datatype mtype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[],
                          MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]);
int MPI_Type_get_envelope(MPI_Datatype type, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner);
int MPI_Type_get_extent_x(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent);
int MPI_Type_get_name(MPI_Datatype type, char *type_name, int *resultlen);
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                               MPI_Count *true_extent);
int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *type);
int MPI_Type_set_attr(MPI_Datatype type, int type_keyval, void *attr_val);
int MPI_Type_set_name(MPI_Datatype type, const char *type_name);
int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                        MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype);
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);

/* ---- Communicators and info objects, continued ---- */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used);
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm);
int MPI_Info_delete(MPI_Info info, const char *key);
int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo);
int MPI_Info_get_nkeys(MPI_Info info, int *nkeys);
int MPI_Info_get_nthkey(MPI_Info info, int n, char *key);
int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag);

/* ---- Nonblocking and neighbourhood collectives, distributed graph topologies ---- */
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request);
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request);
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[],
                          const int targets[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *newcomm);
int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                             int sourceweights[], int maxoutdegree, int destinations[],
                             int destweights[]);
int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *inneighbors, int *outneighbors,
                                   int *weighted);
int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request);
int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request);
int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request);
int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                           void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request);
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                MPI_Op op, int root, MPI_Comm comm, MPI_Request *request);
int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request);
int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request);
int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request);
int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request);

/* ---- Process creation and management (chapter 10): not supported; each returns
 * MPI_ERR_UNSUPPORTED_OPERATION (MPI_ERR_SPAWN for the spawn functions) naming itself,
 * except MPI_Comm_get_parent (MPI_COMM_NULL: no process here was spawned) and
 * MPI_Comm_disconnect (frees the communicator) ---- */
int MPI_Close_port(const char *port_name);
int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *newcomm);
int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm);
int MPI_Comm_disconnect(MPI_Comm *comm);
int MPI_Comm_get_parent(MPI_Comm *parent);
int MPI_Comm_join(int fd, MPI_Comm *intercomm);
int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]);
int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                            const int array_of_maxprocs[], const MPI_Info array_of_info[],
                            int root, MPI_Comm comm, MPI_Comm *intercomm,
                            int array_of_errcodes[]);
int MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name);
int MPI_Open_port(MPI_Info info, char *port_name);
int MPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name);
int MPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name);

/* ---- One-sided communication (chapter 11): not implemented yet; each function returns
 * MPI_ERR_UNSUPPORTED_OPERATION naming itself ---- */
int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win);
int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win);
int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win);
int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win);
int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request *request);
int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request);
int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void *result_addr, int result_count,
                        MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request *request);
int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request);
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win);
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win);
int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size);
MPI_Fint MPI_Win_c2f(MPI_Win win);
int MPI_Win_call_errhandler(MPI_Win win, int errorcode);
int MPI_Win_complete(MPI_Win win);
int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win);
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win);
int MPI_Win_create_errhandler(MPI_Win_errhandler_function *function,
                              MPI_Errhandler *errhandler);
int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                          MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                          void *extra_state);
int MPI_Win_delete_attr(MPI_Win win, int win_keyval);
int MPI_Win_detach(MPI_Win win, const void *base);
MPI_Win MPI_Win_f2c(MPI_Fint win);
int MPI_Win_fence(int assert, MPI_Win win);
int MPI_Win_flush(int rank, MPI_Win win);
int MPI_Win_flush_all(MPI_Win win);
int MPI_Win_flush_local(int rank, MPI_Win win);
int MPI_Win_flush_local_all(MPI_Win win);
int MPI_Win_free(MPI_Win *win);
int MPI_Win_free_keyval(int *win_keyval);
int MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag);
int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler);
int MPI_Win_get_group(MPI_Win win, MPI_Group *group);
int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used);
int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen);
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
int MPI_Win_lock_all(int assert, MPI_Win win);
int MPI_Win_post(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val);
int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler);
int MPI_Win_set_info(MPI_Win win, MPI_Info info);
int MPI_Win_set_name(MPI_Win win, const char *win_name);
int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr);
int MPI_Win_start(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_sync(MPI_Win win);
int MPI_Win_test(MPI_Win win, int *flag);
int MPI_Win_unlock(int rank, MPI_Win win);
int MPI_Win_unlock_all(MPI_Win win);
int MPI_Win_wait(MPI_Win win);

/* ---- I/O (chapter 13): not implemented yet; each function returns
 * MPI_ERR_UNSUPPORTED_OPERATION naming itself ---- */
MPI_Fint MPI_File_c2f(MPI_File file);
MPI_File MPI_File_f2c(MPI_Fint file);
int MPI_File_call_errhandler(MPI_File fh, int errorcode);
int MPI_File_create_errhandler(MPI_File_errhandler_function *function,
                               MPI_Errhandler *errhandler);
int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler);
int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler);
int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh);
int MPI_File_close(MPI_File *fh);
int MPI_File_delete(const char *filename, MPI_Info info);
int MPI_File_set_size(MPI_File fh, MPI_Offset size);
int MPI_File_preallocate(MPI_File fh, MPI_Offset size);
int MPI_File_get_size(MPI_File fh, MPI_Offset *size);
int MPI_File_get_group(MPI_File fh, MPI_Group *group);
int MPI_File_get_amode(MPI_File fh, int *amode);
int MPI_File_set_info(MPI_File fh, MPI_Info info);
int MPI_File_get_info(MPI_File fh, MPI_Info *info_used);
int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info);
int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                      MPI_Datatype *filetype, char *datarep);
int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
                     MPI_Datatype datatype, MPI_Status *status);
int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                         MPI_Datatype datatype, MPI_Status *status);
int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status);
int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status);
int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
                      MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                          MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Request *request);
int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                  MPI_Status *status);
int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status);
int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                   MPI_Status *status);
int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status);
int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                   MPI_Request *request);
int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                    MPI_Request *request);
int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request);
int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request);
int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence);
int MPI_File_get_position(MPI_File fh, MPI_Offset *offset);
int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp);
int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                         MPI_Status *status);
int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status);
int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Request *request);
int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request);
int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status);
int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status);
int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence);
int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset);
int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                               MPI_Datatype datatype);
int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status);
int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                MPI_Datatype datatype);
int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status);
int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype);
int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status);
int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype);
int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status);
int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype);
int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status);
int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count,
                                 MPI_Datatype datatype);
int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status);
int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent);
int MPI_File_set_atomicity(MPI_File fh, int flag);
int MPI_File_get_atomicity(MPI_File fh, int *flag);
int MPI_File_sync(MPI_File fh);
int MPI_Register_datarep(const char *datarep,
                         MPI_Datarep_conversion_function *read_conversion_fn,
                         MPI_Datarep_conversion_function *write_conversion_fn,
                         MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state);

/* ---- The tool information interface (section 14.3) ---- */
int MPI_T_init_thread(int required, int *provided);
int MPI_T_finalize(void);
int MPI_T_cvar_get_num(int *num_cvar);
int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                        int *desc_len, int *bind, int *scope);
int MPI_T_cvar_get_index(const char *name, int *cvar_index);
int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                            int *count);
int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle);
int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf);
int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf);
int MPI_T_category_get_num(int *num_cat);
int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
                            int *desc_len, int *num_cvars, int *num_pvars,
                            int *num_categories);
int MPI_T_category_get_index(const char *name, int *category_index);
int MPI_T_category_get_cvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_pvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_categories(int cat_index, int len, int indices[]);
int MPI_T_category_changed(int *stamp);
int MPI_T_pvar_get_num(int *num_pvar);
int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                        int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                        char *desc, int *desc_len, int *bind, int *readonly, int *continuous,
                        int *atomic);
int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index);
int MPI_T_pvar_session_create(MPI_T_pvar_session *session);
int MPI_T_pvar_session_free(MPI_T_pvar_session *session);
int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                            MPI_T_pvar_handle *handle, int *count);
int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle);
int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf);
int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len);
int MPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len);

/* ---- Volpex extensions: fault tolerance (README, "C and Fortran programs") ----
 * MPIX_Checkpoint: `bytes` bytes at `state` become this replica's latest checkpoint; a
 * replica regenerated later starts from it instead of replaying the program. Call it
 * at the same point in every replica, with no request pending (it does not
 * communicate; `comm` only names the error handler). The program's stdout and stderr
 * are flushed first.
 * MPIX_Restored: in a replica restored from a checkpoint, copies the state into
 * `state` (at most `max_bytes`), sets *bytes to its size and *flag to 1; elsewhere
 * *flag = 0. Call it after MPI_Init and after making again the communicators made
 * before the checkpoint, before any other communication. A state larger than
 * `max_bytes` is MPI_ERR_TRUNCATE (*bytes says how large; call again).
 * MPIX_Regenerated: *flag = 1 in a new incarnation of a lost replica.
 * MPIX_Seed: a seed equal in every replica of this rank of `comm`, different across
 * its ranks and across salts (for random numbers that keep replicas identical). */
int MPIX_Checkpoint(const void *state, int bytes, MPI_Comm comm);
int MPIX_Restored(void *state, int max_bytes, int *bytes, int *flag);
int MPIX_Regenerated(int *flag);
int MPIX_Seed(MPI_Comm comm, uint64_t salt, uint64_t *seed);

/* Output files written once per rank whatever replicas die (README, "C and Fortran
 * programs"; Universe::create_output in Rust).
 * MPIX_Output_open: begins the file at `path` (its directory must exist) and writes into
 * `tmp_path` (at most `maxlen` bytes with the NUL; MPIX_MAX_OUTPUT_PATH is always enough)
 * the path the program opens to write it: fopen(tmp_path, "w"), or a Fortran OPEN with
 * STATUS='UNKNOWN'. It names the rank's temporary next to `path`, so nothing appears
 * at `path` yet. Opening a path again discards what was begun for it.
 * MPIX_Output_commit: close the file first; then the bytes written appear at `path` in
 * one atomic rename, one complete copy whatever replicas die. A write the disk refused
 * is this call's error (MPI_ERR_NO_SPACE, MPI_ERR_QUOTA, MPI_ERR_READ_ONLY,
 * MPI_ERR_ACCESS) and nothing is published. Every replica of the rank must write the
 * same bytes, and ranks different paths. An output not committed by MPI_Finalize is
 * discarded. */
#define MPIX_MAX_OUTPUT_PATH 4096
int MPIX_Output_open(const char *path, char *tmp_path, int maxlen);
int MPIX_Output_commit(const char *path);


/* ---- The profiling interface (MPI-3.1 chapter 14) ----
 * Every MPI_ function above also exists as PMPI_ (the same function, in the shared
 * library): a tool defines MPI_Send itself and calls PMPI_Send to reach the library's. */
__typeof__(MPI_Abort) PMPI_Abort;
__typeof__(MPI_Accumulate) PMPI_Accumulate;
__typeof__(MPI_Add_error_class) PMPI_Add_error_class;
__typeof__(MPI_Add_error_code) PMPI_Add_error_code;
__typeof__(MPI_Add_error_string) PMPI_Add_error_string;
__typeof__(MPI_Address) PMPI_Address;
__typeof__(MPI_Aint_add) PMPI_Aint_add;
__typeof__(MPI_Aint_diff) PMPI_Aint_diff;
__typeof__(MPI_Allgather) PMPI_Allgather;
__typeof__(MPI_Allgatherv) PMPI_Allgatherv;
__typeof__(MPI_Alloc_mem) PMPI_Alloc_mem;
__typeof__(MPI_Allreduce) PMPI_Allreduce;
__typeof__(MPI_Alltoall) PMPI_Alltoall;
__typeof__(MPI_Alltoallv) PMPI_Alltoallv;
__typeof__(MPI_Alltoallw) PMPI_Alltoallw;
__typeof__(MPI_Attr_delete) PMPI_Attr_delete;
__typeof__(MPI_Attr_get) PMPI_Attr_get;
__typeof__(MPI_Attr_put) PMPI_Attr_put;
__typeof__(MPI_Barrier) PMPI_Barrier;
__typeof__(MPI_Bcast) PMPI_Bcast;
__typeof__(MPI_Bsend) PMPI_Bsend;
__typeof__(MPI_Bsend_init) PMPI_Bsend_init;
__typeof__(MPI_Buffer_attach) PMPI_Buffer_attach;
__typeof__(MPI_Buffer_detach) PMPI_Buffer_detach;
__typeof__(MPI_COMM_DUP_FN) PMPI_COMM_DUP_FN;
__typeof__(MPI_Cancel) PMPI_Cancel;
__typeof__(MPI_Cart_coords) PMPI_Cart_coords;
__typeof__(MPI_Cart_create) PMPI_Cart_create;
__typeof__(MPI_Cart_get) PMPI_Cart_get;
__typeof__(MPI_Cart_map) PMPI_Cart_map;
__typeof__(MPI_Cart_rank) PMPI_Cart_rank;
__typeof__(MPI_Cart_shift) PMPI_Cart_shift;
__typeof__(MPI_Cart_sub) PMPI_Cart_sub;
__typeof__(MPI_Cartdim_get) PMPI_Cartdim_get;
__typeof__(MPI_Close_port) PMPI_Close_port;
__typeof__(MPI_Comm_accept) PMPI_Comm_accept;
__typeof__(MPI_Comm_c2f) PMPI_Comm_c2f;
__typeof__(MPI_Comm_call_errhandler) PMPI_Comm_call_errhandler;
__typeof__(MPI_Comm_compare) PMPI_Comm_compare;
__typeof__(MPI_Comm_connect) PMPI_Comm_connect;
__typeof__(MPI_Comm_create) PMPI_Comm_create;
__typeof__(MPI_Comm_create_errhandler) PMPI_Comm_create_errhandler;
__typeof__(MPI_Comm_create_group) PMPI_Comm_create_group;
__typeof__(MPI_Comm_create_keyval) PMPI_Comm_create_keyval;
__typeof__(MPI_Comm_delete_attr) PMPI_Comm_delete_attr;
__typeof__(MPI_Comm_disconnect) PMPI_Comm_disconnect;
__typeof__(MPI_Comm_dup) PMPI_Comm_dup;
__typeof__(MPI_Comm_dup_with_info) PMPI_Comm_dup_with_info;
__typeof__(MPI_Comm_f2c) PMPI_Comm_f2c;
__typeof__(MPI_Comm_free) PMPI_Comm_free;
__typeof__(MPI_Comm_free_keyval) PMPI_Comm_free_keyval;
__typeof__(MPI_Comm_get_attr) PMPI_Comm_get_attr;
__typeof__(MPI_Comm_get_errhandler) PMPI_Comm_get_errhandler;
__typeof__(MPI_Comm_get_info) PMPI_Comm_get_info;
__typeof__(MPI_Comm_get_name) PMPI_Comm_get_name;
__typeof__(MPI_Comm_get_parent) PMPI_Comm_get_parent;
__typeof__(MPI_Comm_group) PMPI_Comm_group;
__typeof__(MPI_Comm_idup) PMPI_Comm_idup;
__typeof__(MPI_Comm_join) PMPI_Comm_join;
__typeof__(MPI_Comm_rank) PMPI_Comm_rank;
__typeof__(MPI_Comm_remote_group) PMPI_Comm_remote_group;
__typeof__(MPI_Comm_remote_size) PMPI_Comm_remote_size;
__typeof__(MPI_Comm_set_attr) PMPI_Comm_set_attr;
__typeof__(MPI_Comm_set_errhandler) PMPI_Comm_set_errhandler;
__typeof__(MPI_Comm_set_info) PMPI_Comm_set_info;
__typeof__(MPI_Comm_set_name) PMPI_Comm_set_name;
__typeof__(MPI_Comm_size) PMPI_Comm_size;
__typeof__(MPI_Comm_spawn) PMPI_Comm_spawn;
__typeof__(MPI_Comm_spawn_multiple) PMPI_Comm_spawn_multiple;
__typeof__(MPI_Comm_split) PMPI_Comm_split;
__typeof__(MPI_Comm_split_type) PMPI_Comm_split_type;
__typeof__(MPI_Comm_test_inter) PMPI_Comm_test_inter;
__typeof__(MPI_Compare_and_swap) PMPI_Compare_and_swap;
__typeof__(MPI_Dims_create) PMPI_Dims_create;
__typeof__(MPI_Dist_graph_create) PMPI_Dist_graph_create;
__typeof__(MPI_Dist_graph_create_adjacent) PMPI_Dist_graph_create_adjacent;
__typeof__(MPI_Dist_graph_neighbors) PMPI_Dist_graph_neighbors;
__typeof__(MPI_Dist_graph_neighbors_count) PMPI_Dist_graph_neighbors_count;
__typeof__(MPI_Errhandler_c2f) PMPI_Errhandler_c2f;
__typeof__(MPI_Errhandler_create) PMPI_Errhandler_create;
__typeof__(MPI_Errhandler_f2c) PMPI_Errhandler_f2c;
__typeof__(MPI_Errhandler_free) PMPI_Errhandler_free;
__typeof__(MPI_Errhandler_get) PMPI_Errhandler_get;
__typeof__(MPI_Errhandler_set) PMPI_Errhandler_set;
__typeof__(MPI_Error_class) PMPI_Error_class;
__typeof__(MPI_Error_string) PMPI_Error_string;
__typeof__(MPI_Exscan) PMPI_Exscan;
__typeof__(MPI_Fetch_and_op) PMPI_Fetch_and_op;
__typeof__(MPI_File_c2f) PMPI_File_c2f;
__typeof__(MPI_File_call_errhandler) PMPI_File_call_errhandler;
__typeof__(MPI_File_close) PMPI_File_close;
__typeof__(MPI_File_create_errhandler) PMPI_File_create_errhandler;
__typeof__(MPI_File_delete) PMPI_File_delete;
__typeof__(MPI_File_f2c) PMPI_File_f2c;
__typeof__(MPI_File_get_amode) PMPI_File_get_amode;
__typeof__(MPI_File_get_atomicity) PMPI_File_get_atomicity;
__typeof__(MPI_File_get_byte_offset) PMPI_File_get_byte_offset;
__typeof__(MPI_File_get_errhandler) PMPI_File_get_errhandler;
__typeof__(MPI_File_get_group) PMPI_File_get_group;
__typeof__(MPI_File_get_info) PMPI_File_get_info;
__typeof__(MPI_File_get_position) PMPI_File_get_position;
__typeof__(MPI_File_get_position_shared) PMPI_File_get_position_shared;
__typeof__(MPI_File_get_size) PMPI_File_get_size;
__typeof__(MPI_File_get_type_extent) PMPI_File_get_type_extent;
__typeof__(MPI_File_get_view) PMPI_File_get_view;
__typeof__(MPI_File_iread) PMPI_File_iread;
__typeof__(MPI_File_iread_all) PMPI_File_iread_all;
__typeof__(MPI_File_iread_at) PMPI_File_iread_at;
__typeof__(MPI_File_iread_at_all) PMPI_File_iread_at_all;
__typeof__(MPI_File_iread_shared) PMPI_File_iread_shared;
__typeof__(MPI_File_iwrite) PMPI_File_iwrite;
__typeof__(MPI_File_iwrite_all) PMPI_File_iwrite_all;
__typeof__(MPI_File_iwrite_at) PMPI_File_iwrite_at;
__typeof__(MPI_File_iwrite_at_all) PMPI_File_iwrite_at_all;
__typeof__(MPI_File_iwrite_shared) PMPI_File_iwrite_shared;
__typeof__(MPI_File_open) PMPI_File_open;
__typeof__(MPI_File_preallocate) PMPI_File_preallocate;
__typeof__(MPI_File_read) PMPI_File_read;
__typeof__(MPI_File_read_all) PMPI_File_read_all;
__typeof__(MPI_File_read_all_begin) PMPI_File_read_all_begin;
__typeof__(MPI_File_read_all_end) PMPI_File_read_all_end;
__typeof__(MPI_File_read_at) PMPI_File_read_at;
__typeof__(MPI_File_read_at_all) PMPI_File_read_at_all;
__typeof__(MPI_File_read_at_all_begin) PMPI_File_read_at_all_begin;
__typeof__(MPI_File_read_at_all_end) PMPI_File_read_at_all_end;
__typeof__(MPI_File_read_ordered) PMPI_File_read_ordered;
__typeof__(MPI_File_read_ordered_begin) PMPI_File_read_ordered_begin;
__typeof__(MPI_File_read_ordered_end) PMPI_File_read_ordered_end;
__typeof__(MPI_File_read_shared) PMPI_File_read_shared;
__typeof__(MPI_File_seek) PMPI_File_seek;
__typeof__(MPI_File_seek_shared) PMPI_File_seek_shared;
__typeof__(MPI_File_set_atomicity) PMPI_File_set_atomicity;
__typeof__(MPI_File_set_errhandler) PMPI_File_set_errhandler;
__typeof__(MPI_File_set_info) PMPI_File_set_info;
__typeof__(MPI_File_set_size) PMPI_File_set_size;
__typeof__(MPI_File_set_view) PMPI_File_set_view;
__typeof__(MPI_File_sync) PMPI_File_sync;
__typeof__(MPI_File_write) PMPI_File_write;
__typeof__(MPI_File_write_all) PMPI_File_write_all;
__typeof__(MPI_File_write_all_begin) PMPI_File_write_all_begin;
__typeof__(MPI_File_write_all_end) PMPI_File_write_all_end;
__typeof__(MPI_File_write_at) PMPI_File_write_at;
__typeof__(MPI_File_write_at_all) PMPI_File_write_at_all;
__typeof__(MPI_File_write_at_all_begin) PMPI_File_write_at_all_begin;
__typeof__(MPI_File_write_at_all_end) PMPI_File_write_at_all_end;
__typeof__(MPI_File_write_ordered) PMPI_File_write_ordered;
__typeof__(MPI_File_write_ordered_begin) PMPI_File_write_ordered_begin;
__typeof__(MPI_File_write_ordered_end) PMPI_File_write_ordered_end;
__typeof__(MPI_File_write_shared) PMPI_File_write_shared;
__typeof__(MPI_Finalize) PMPI_Finalize;
__typeof__(MPI_Finalized) PMPI_Finalized;
__typeof__(MPI_Free_mem) PMPI_Free_mem;
__typeof__(MPI_Gather) PMPI_Gather;
__typeof__(MPI_Gatherv) PMPI_Gatherv;
__typeof__(MPI_Get) PMPI_Get;
__typeof__(MPI_Get_accumulate) PMPI_Get_accumulate;
__typeof__(MPI_Get_address) PMPI_Get_address;
__typeof__(MPI_Get_count) PMPI_Get_count;
__typeof__(MPI_Get_elements) PMPI_Get_elements;
__typeof__(MPI_Get_elements_x) PMPI_Get_elements_x;
__typeof__(MPI_Get_library_version) PMPI_Get_library_version;
__typeof__(MPI_Get_processor_name) PMPI_Get_processor_name;
__typeof__(MPI_Get_version) PMPI_Get_version;
__typeof__(MPI_Graph_create) PMPI_Graph_create;
__typeof__(MPI_Graph_get) PMPI_Graph_get;
__typeof__(MPI_Graph_map) PMPI_Graph_map;
__typeof__(MPI_Graph_neighbors) PMPI_Graph_neighbors;
__typeof__(MPI_Graph_neighbors_count) PMPI_Graph_neighbors_count;
__typeof__(MPI_Graphdims_get) PMPI_Graphdims_get;
__typeof__(MPI_Grequest_complete) PMPI_Grequest_complete;
__typeof__(MPI_Grequest_start) PMPI_Grequest_start;
__typeof__(MPI_Group_c2f) PMPI_Group_c2f;
__typeof__(MPI_Group_compare) PMPI_Group_compare;
__typeof__(MPI_Group_difference) PMPI_Group_difference;
__typeof__(MPI_Group_excl) PMPI_Group_excl;
__typeof__(MPI_Group_f2c) PMPI_Group_f2c;
__typeof__(MPI_Group_free) PMPI_Group_free;
__typeof__(MPI_Group_incl) PMPI_Group_incl;
__typeof__(MPI_Group_intersection) PMPI_Group_intersection;
__typeof__(MPI_Group_range_excl) PMPI_Group_range_excl;
__typeof__(MPI_Group_range_incl) PMPI_Group_range_incl;
__typeof__(MPI_Group_rank) PMPI_Group_rank;
__typeof__(MPI_Group_size) PMPI_Group_size;
__typeof__(MPI_Group_translate_ranks) PMPI_Group_translate_ranks;
__typeof__(MPI_Group_union) PMPI_Group_union;
__typeof__(MPI_Iallgather) PMPI_Iallgather;
__typeof__(MPI_Iallgatherv) PMPI_Iallgatherv;
__typeof__(MPI_Iallreduce) PMPI_Iallreduce;
__typeof__(MPI_Ialltoall) PMPI_Ialltoall;
__typeof__(MPI_Ialltoallv) PMPI_Ialltoallv;
__typeof__(MPI_Ialltoallw) PMPI_Ialltoallw;
__typeof__(MPI_Ibarrier) PMPI_Ibarrier;
__typeof__(MPI_Ibcast) PMPI_Ibcast;
__typeof__(MPI_Ibsend) PMPI_Ibsend;
__typeof__(MPI_Iexscan) PMPI_Iexscan;
__typeof__(MPI_Igather) PMPI_Igather;
__typeof__(MPI_Igatherv) PMPI_Igatherv;
__typeof__(MPI_Improbe) PMPI_Improbe;
__typeof__(MPI_Imrecv) PMPI_Imrecv;
__typeof__(MPI_Ineighbor_allgather) PMPI_Ineighbor_allgather;
__typeof__(MPI_Ineighbor_allgatherv) PMPI_Ineighbor_allgatherv;
__typeof__(MPI_Ineighbor_alltoall) PMPI_Ineighbor_alltoall;
__typeof__(MPI_Ineighbor_alltoallv) PMPI_Ineighbor_alltoallv;
__typeof__(MPI_Ineighbor_alltoallw) PMPI_Ineighbor_alltoallw;
__typeof__(MPI_Info_c2f) PMPI_Info_c2f;
__typeof__(MPI_Info_create) PMPI_Info_create;
__typeof__(MPI_Info_delete) PMPI_Info_delete;
__typeof__(MPI_Info_dup) PMPI_Info_dup;
__typeof__(MPI_Info_f2c) PMPI_Info_f2c;
__typeof__(MPI_Info_free) PMPI_Info_free;
__typeof__(MPI_Info_get) PMPI_Info_get;
__typeof__(MPI_Info_get_nkeys) PMPI_Info_get_nkeys;
__typeof__(MPI_Info_get_nthkey) PMPI_Info_get_nthkey;
__typeof__(MPI_Info_get_valuelen) PMPI_Info_get_valuelen;
__typeof__(MPI_Info_set) PMPI_Info_set;
__typeof__(MPI_Init) PMPI_Init;
__typeof__(MPI_Init_thread) PMPI_Init_thread;
__typeof__(MPI_Initialized) PMPI_Initialized;
__typeof__(MPI_Intercomm_create) PMPI_Intercomm_create;
__typeof__(MPI_Intercomm_merge) PMPI_Intercomm_merge;
__typeof__(MPI_Iprobe) PMPI_Iprobe;
__typeof__(MPI_Irecv) PMPI_Irecv;
__typeof__(MPI_Ireduce) PMPI_Ireduce;
__typeof__(MPI_Ireduce_scatter) PMPI_Ireduce_scatter;
__typeof__(MPI_Ireduce_scatter_block) PMPI_Ireduce_scatter_block;
__typeof__(MPI_Irsend) PMPI_Irsend;
__typeof__(MPI_Is_thread_main) PMPI_Is_thread_main;
__typeof__(MPI_Iscan) PMPI_Iscan;
__typeof__(MPI_Iscatter) PMPI_Iscatter;
__typeof__(MPI_Iscatterv) PMPI_Iscatterv;
__typeof__(MPI_Isend) PMPI_Isend;
__typeof__(MPI_Issend) PMPI_Issend;
__typeof__(MPI_Keyval_create) PMPI_Keyval_create;
__typeof__(MPI_Keyval_free) PMPI_Keyval_free;
__typeof__(MPI_Lookup_name) PMPI_Lookup_name;
__typeof__(MPI_Message_c2f) PMPI_Message_c2f;
__typeof__(MPI_Message_f2c) PMPI_Message_f2c;
__typeof__(MPI_Mprobe) PMPI_Mprobe;
__typeof__(MPI_Mrecv) PMPI_Mrecv;
__typeof__(MPI_Neighbor_allgather) PMPI_Neighbor_allgather;
__typeof__(MPI_Neighbor_allgatherv) PMPI_Neighbor_allgatherv;
__typeof__(MPI_Neighbor_alltoall) PMPI_Neighbor_alltoall;
__typeof__(MPI_Neighbor_alltoallv) PMPI_Neighbor_alltoallv;
__typeof__(MPI_Neighbor_alltoallw) PMPI_Neighbor_alltoallw;
__typeof__(MPI_Op_c2f) PMPI_Op_c2f;
__typeof__(MPI_Op_commutative) PMPI_Op_commutative;
__typeof__(MPI_Op_create) PMPI_Op_create;
__typeof__(MPI_Op_f2c) PMPI_Op_f2c;
__typeof__(MPI_Op_free) PMPI_Op_free;
__typeof__(MPI_Open_port) PMPI_Open_port;
__typeof__(MPI_Pack) PMPI_Pack;
__typeof__(MPI_Pack_external) PMPI_Pack_external;
__typeof__(MPI_Pack_external_size) PMPI_Pack_external_size;
__typeof__(MPI_Pack_size) PMPI_Pack_size;
__typeof__(MPI_Pcontrol) PMPI_Pcontrol;
__typeof__(MPI_Probe) PMPI_Probe;
__typeof__(MPI_Publish_name) PMPI_Publish_name;
__typeof__(MPI_Put) PMPI_Put;
__typeof__(MPI_Query_thread) PMPI_Query_thread;
__typeof__(MPI_Raccumulate) PMPI_Raccumulate;
__typeof__(MPI_Recv) PMPI_Recv;
__typeof__(MPI_Recv_init) PMPI_Recv_init;
__typeof__(MPI_Reduce) PMPI_Reduce;
__typeof__(MPI_Reduce_local) PMPI_Reduce_local;
__typeof__(MPI_Reduce_scatter) PMPI_Reduce_scatter;
__typeof__(MPI_Reduce_scatter_block) PMPI_Reduce_scatter_block;
__typeof__(MPI_Register_datarep) PMPI_Register_datarep;
__typeof__(MPI_Request_c2f) PMPI_Request_c2f;
__typeof__(MPI_Request_f2c) PMPI_Request_f2c;
__typeof__(MPI_Request_free) PMPI_Request_free;
__typeof__(MPI_Request_get_status) PMPI_Request_get_status;
__typeof__(MPI_Rget) PMPI_Rget;
__typeof__(MPI_Rget_accumulate) PMPI_Rget_accumulate;
__typeof__(MPI_Rput) PMPI_Rput;
__typeof__(MPI_Rsend) PMPI_Rsend;
__typeof__(MPI_Rsend_init) PMPI_Rsend_init;
__typeof__(MPI_Scan) PMPI_Scan;
__typeof__(MPI_Scatter) PMPI_Scatter;
__typeof__(MPI_Scatterv) PMPI_Scatterv;
__typeof__(MPI_Send) PMPI_Send;
__typeof__(MPI_Send_init) PMPI_Send_init;
__typeof__(MPI_Sendrecv) PMPI_Sendrecv;
__typeof__(MPI_Sendrecv_replace) PMPI_Sendrecv_replace;
__typeof__(MPI_Ssend) PMPI_Ssend;
__typeof__(MPI_Ssend_init) PMPI_Ssend_init;
__typeof__(MPI_Start) PMPI_Start;
__typeof__(MPI_Startall) PMPI_Startall;
__typeof__(MPI_Status_c2f) PMPI_Status_c2f;
__typeof__(MPI_Status_f2c) PMPI_Status_f2c;
__typeof__(MPI_Status_set_cancelled) PMPI_Status_set_cancelled;
__typeof__(MPI_Status_set_elements) PMPI_Status_set_elements;
__typeof__(MPI_Status_set_elements_x) PMPI_Status_set_elements_x;
__typeof__(MPI_TYPE_DUP_FN) PMPI_TYPE_DUP_FN;
__typeof__(MPI_T_category_changed) PMPI_T_category_changed;
__typeof__(MPI_T_category_get_categories) PMPI_T_category_get_categories;
__typeof__(MPI_T_category_get_cvars) PMPI_T_category_get_cvars;
__typeof__(MPI_T_category_get_index) PMPI_T_category_get_index;
__typeof__(MPI_T_category_get_info) PMPI_T_category_get_info;
__typeof__(MPI_T_category_get_num) PMPI_T_category_get_num;
__typeof__(MPI_T_category_get_pvars) PMPI_T_category_get_pvars;
__typeof__(MPI_T_cvar_get_index) PMPI_T_cvar_get_index;
__typeof__(MPI_T_cvar_get_info) PMPI_T_cvar_get_info;
__typeof__(MPI_T_cvar_get_num) PMPI_T_cvar_get_num;
__typeof__(MPI_T_cvar_handle_alloc) PMPI_T_cvar_handle_alloc;
__typeof__(MPI_T_cvar_handle_free) PMPI_T_cvar_handle_free;
__typeof__(MPI_T_cvar_read) PMPI_T_cvar_read;
__typeof__(MPI_T_cvar_write) PMPI_T_cvar_write;
__typeof__(MPI_T_enum_get_info) PMPI_T_enum_get_info;
__typeof__(MPI_T_enum_get_item) PMPI_T_enum_get_item;
__typeof__(MPI_T_finalize) PMPI_T_finalize;
__typeof__(MPI_T_init_thread) PMPI_T_init_thread;
__typeof__(MPI_T_pvar_get_index) PMPI_T_pvar_get_index;
__typeof__(MPI_T_pvar_get_info) PMPI_T_pvar_get_info;
__typeof__(MPI_T_pvar_get_num) PMPI_T_pvar_get_num;
__typeof__(MPI_T_pvar_handle_alloc) PMPI_T_pvar_handle_alloc;
__typeof__(MPI_T_pvar_handle_free) PMPI_T_pvar_handle_free;
__typeof__(MPI_T_pvar_read) PMPI_T_pvar_read;
__typeof__(MPI_T_pvar_readreset) PMPI_T_pvar_readreset;
__typeof__(MPI_T_pvar_reset) PMPI_T_pvar_reset;
__typeof__(MPI_T_pvar_session_create) PMPI_T_pvar_session_create;
__typeof__(MPI_T_pvar_session_free) PMPI_T_pvar_session_free;
__typeof__(MPI_T_pvar_start) PMPI_T_pvar_start;
__typeof__(MPI_T_pvar_stop) PMPI_T_pvar_stop;
__typeof__(MPI_T_pvar_write) PMPI_T_pvar_write;
__typeof__(MPI_Test) PMPI_Test;
__typeof__(MPI_Test_cancelled) PMPI_Test_cancelled;
__typeof__(MPI_Testall) PMPI_Testall;
__typeof__(MPI_Testany) PMPI_Testany;
__typeof__(MPI_Testsome) PMPI_Testsome;
__typeof__(MPI_Topo_test) PMPI_Topo_test;
__typeof__(MPI_Type_c2f) PMPI_Type_c2f;
__typeof__(MPI_Type_commit) PMPI_Type_commit;
__typeof__(MPI_Type_contiguous) PMPI_Type_contiguous;
__typeof__(MPI_Type_create_darray) PMPI_Type_create_darray;
__typeof__(MPI_Type_create_f90_complex) PMPI_Type_create_f90_complex;
__typeof__(MPI_Type_create_f90_integer) PMPI_Type_create_f90_integer;
__typeof__(MPI_Type_create_f90_real) PMPI_Type_create_f90_real;
__typeof__(MPI_Type_create_hindexed) PMPI_Type_create_hindexed;
__typeof__(MPI_Type_create_hindexed_block) PMPI_Type_create_hindexed_block;
__typeof__(MPI_Type_create_hvector) PMPI_Type_create_hvector;
__typeof__(MPI_Type_create_indexed_block) PMPI_Type_create_indexed_block;
__typeof__(MPI_Type_create_keyval) PMPI_Type_create_keyval;
__typeof__(MPI_Type_create_resized) PMPI_Type_create_resized;
__typeof__(MPI_Type_create_struct) PMPI_Type_create_struct;
__typeof__(MPI_Type_create_subarray) PMPI_Type_create_subarray;
__typeof__(MPI_Type_delete_attr) PMPI_Type_delete_attr;
__typeof__(MPI_Type_dup) PMPI_Type_dup;
__typeof__(MPI_Type_extent) PMPI_Type_extent;
__typeof__(MPI_Type_f2c) PMPI_Type_f2c;
__typeof__(MPI_Type_free) PMPI_Type_free;
__typeof__(MPI_Type_free_keyval) PMPI_Type_free_keyval;
__typeof__(MPI_Type_get_attr) PMPI_Type_get_attr;
__typeof__(MPI_Type_get_contents) PMPI_Type_get_contents;
__typeof__(MPI_Type_get_envelope) PMPI_Type_get_envelope;
__typeof__(MPI_Type_get_extent) PMPI_Type_get_extent;
__typeof__(MPI_Type_get_extent_x) PMPI_Type_get_extent_x;
__typeof__(MPI_Type_get_name) PMPI_Type_get_name;
__typeof__(MPI_Type_get_true_extent) PMPI_Type_get_true_extent;
__typeof__(MPI_Type_get_true_extent_x) PMPI_Type_get_true_extent_x;
__typeof__(MPI_Type_hindexed) PMPI_Type_hindexed;
__typeof__(MPI_Type_hvector) PMPI_Type_hvector;
__typeof__(MPI_Type_indexed) PMPI_Type_indexed;
__typeof__(MPI_Type_lb) PMPI_Type_lb;
__typeof__(MPI_Type_match_size) PMPI_Type_match_size;
__typeof__(MPI_Type_set_attr) PMPI_Type_set_attr;
__typeof__(MPI_Type_set_name) PMPI_Type_set_name;
__typeof__(MPI_Type_size) PMPI_Type_size;
__typeof__(MPI_Type_size_x) PMPI_Type_size_x;
__typeof__(MPI_Type_struct) PMPI_Type_struct;
__typeof__(MPI_Type_ub) PMPI_Type_ub;
__typeof__(MPI_Type_vector) PMPI_Type_vector;
__typeof__(MPI_Unpack) PMPI_Unpack;
__typeof__(MPI_Unpack_external) PMPI_Unpack_external;
__typeof__(MPI_Unpublish_name) PMPI_Unpublish_name;
__typeof__(MPI_WIN_DUP_FN) PMPI_WIN_DUP_FN;
__typeof__(MPI_Wait) PMPI_Wait;
__typeof__(MPI_Waitall) PMPI_Waitall;
__typeof__(MPI_Waitany) PMPI_Waitany;
__typeof__(MPI_Waitsome) PMPI_Waitsome;
__typeof__(MPI_Win_allocate) PMPI_Win_allocate;
__typeof__(MPI_Win_allocate_shared) PMPI_Win_allocate_shared;
__typeof__(MPI_Win_attach) PMPI_Win_attach;
__typeof__(MPI_Win_c2f) PMPI_Win_c2f;
__typeof__(MPI_Win_call_errhandler) PMPI_Win_call_errhandler;
__typeof__(MPI_Win_complete) PMPI_Win_complete;
__typeof__(MPI_Win_create) PMPI_Win_create;
__typeof__(MPI_Win_create_dynamic) PMPI_Win_create_dynamic;
__typeof__(MPI_Win_create_errhandler) PMPI_Win_create_errhandler;
__typeof__(MPI_Win_create_keyval) PMPI_Win_create_keyval;
__typeof__(MPI_Win_delete_attr) PMPI_Win_delete_attr;
__typeof__(MPI_Win_detach) PMPI_Win_detach;
__typeof__(MPI_Win_f2c) PMPI_Win_f2c;
__typeof__(MPI_Win_fence) PMPI_Win_fence;
__typeof__(MPI_Win_flush) PMPI_Win_flush;
__typeof__(MPI_Win_flush_all) PMPI_Win_flush_all;
__typeof__(MPI_Win_flush_local) PMPI_Win_flush_local;
__typeof__(MPI_Win_flush_local_all) PMPI_Win_flush_local_all;
__typeof__(MPI_Win_free) PMPI_Win_free;
__typeof__(MPI_Win_free_keyval) PMPI_Win_free_keyval;
__typeof__(MPI_Win_get_attr) PMPI_Win_get_attr;
__typeof__(MPI_Win_get_errhandler) PMPI_Win_get_errhandler;
__typeof__(MPI_Win_get_group) PMPI_Win_get_group;
__typeof__(MPI_Win_get_info) PMPI_Win_get_info;
__typeof__(MPI_Win_get_name) PMPI_Win_get_name;
__typeof__(MPI_Win_lock) PMPI_Win_lock;
__typeof__(MPI_Win_lock_all) PMPI_Win_lock_all;
__typeof__(MPI_Win_post) PMPI_Win_post;
__typeof__(MPI_Win_set_attr) PMPI_Win_set_attr;
__typeof__(MPI_Win_set_errhandler) PMPI_Win_set_errhandler;
__typeof__(MPI_Win_set_info) PMPI_Win_set_info;
__typeof__(MPI_Win_set_name) PMPI_Win_set_name;
__typeof__(MPI_Win_shared_query) PMPI_Win_shared_query;
__typeof__(MPI_Win_start) PMPI_Win_start;
__typeof__(MPI_Win_sync) PMPI_Win_sync;
__typeof__(MPI_Win_test) PMPI_Win_test;
__typeof__(MPI_Win_unlock) PMPI_Win_unlock;
__typeof__(MPI_Win_unlock_all) PMPI_Win_unlock_all;
__typeof__(MPI_Win_wait) PMPI_Win_wait;
__typeof__(MPI_Wtick) PMPI_Wtick;
__typeof__(MPI_Wtime) PMPI_Wtime;

#ifdef __cplusplus
}
#endif

#endif /* VOLPEX_MPI_H */
