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
#define MPI_UNWEIGHTED ((int *)2)
#define MPI_WEIGHTS_EMPTY ((int *)3)

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
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57

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
#define MPI_ERR_LASTCODE 58

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
__typeof__(MPI_Add_error_class) PMPI_Add_error_class;
__typeof__(MPI_Add_error_code) PMPI_Add_error_code;
__typeof__(MPI_Add_error_string) PMPI_Add_error_string;
__typeof__(MPI_Address) PMPI_Address;
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
__typeof__(MPI_Comm_c2f) PMPI_Comm_c2f;
__typeof__(MPI_Comm_call_errhandler) PMPI_Comm_call_errhandler;
__typeof__(MPI_Comm_compare) PMPI_Comm_compare;
__typeof__(MPI_Comm_create) PMPI_Comm_create;
__typeof__(MPI_Comm_create_errhandler) PMPI_Comm_create_errhandler;
__typeof__(MPI_Comm_create_keyval) PMPI_Comm_create_keyval;
__typeof__(MPI_Comm_delete_attr) PMPI_Comm_delete_attr;
__typeof__(MPI_Comm_dup) PMPI_Comm_dup;
__typeof__(MPI_Comm_f2c) PMPI_Comm_f2c;
__typeof__(MPI_Comm_free) PMPI_Comm_free;
__typeof__(MPI_Comm_free_keyval) PMPI_Comm_free_keyval;
__typeof__(MPI_Comm_get_attr) PMPI_Comm_get_attr;
__typeof__(MPI_Comm_get_errhandler) PMPI_Comm_get_errhandler;
__typeof__(MPI_Comm_get_name) PMPI_Comm_get_name;
__typeof__(MPI_Comm_group) PMPI_Comm_group;
__typeof__(MPI_Comm_rank) PMPI_Comm_rank;
__typeof__(MPI_Comm_remote_group) PMPI_Comm_remote_group;
__typeof__(MPI_Comm_remote_size) PMPI_Comm_remote_size;
__typeof__(MPI_Comm_set_attr) PMPI_Comm_set_attr;
__typeof__(MPI_Comm_set_errhandler) PMPI_Comm_set_errhandler;
__typeof__(MPI_Comm_set_name) PMPI_Comm_set_name;
__typeof__(MPI_Comm_size) PMPI_Comm_size;
__typeof__(MPI_Comm_split) PMPI_Comm_split;
__typeof__(MPI_Comm_test_inter) PMPI_Comm_test_inter;
__typeof__(MPI_Dims_create) PMPI_Dims_create;
__typeof__(MPI_Errhandler_c2f) PMPI_Errhandler_c2f;
__typeof__(MPI_Errhandler_create) PMPI_Errhandler_create;
__typeof__(MPI_Errhandler_f2c) PMPI_Errhandler_f2c;
__typeof__(MPI_Errhandler_free) PMPI_Errhandler_free;
__typeof__(MPI_Errhandler_get) PMPI_Errhandler_get;
__typeof__(MPI_Errhandler_set) PMPI_Errhandler_set;
__typeof__(MPI_Error_class) PMPI_Error_class;
__typeof__(MPI_Error_string) PMPI_Error_string;
__typeof__(MPI_Exscan) PMPI_Exscan;
__typeof__(MPI_Finalize) PMPI_Finalize;
__typeof__(MPI_Finalized) PMPI_Finalized;
__typeof__(MPI_Free_mem) PMPI_Free_mem;
__typeof__(MPI_Gather) PMPI_Gather;
__typeof__(MPI_Gatherv) PMPI_Gatherv;
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
__typeof__(MPI_Iallreduce) PMPI_Iallreduce;
__typeof__(MPI_Ibarrier) PMPI_Ibarrier;
__typeof__(MPI_Ibcast) PMPI_Ibcast;
__typeof__(MPI_Ibsend) PMPI_Ibsend;
__typeof__(MPI_Improbe) PMPI_Improbe;
__typeof__(MPI_Imrecv) PMPI_Imrecv;
__typeof__(MPI_Info_c2f) PMPI_Info_c2f;
__typeof__(MPI_Info_create) PMPI_Info_create;
__typeof__(MPI_Info_f2c) PMPI_Info_f2c;
__typeof__(MPI_Info_free) PMPI_Info_free;
__typeof__(MPI_Info_get) PMPI_Info_get;
__typeof__(MPI_Info_set) PMPI_Info_set;
__typeof__(MPI_Init) PMPI_Init;
__typeof__(MPI_Init_thread) PMPI_Init_thread;
__typeof__(MPI_Initialized) PMPI_Initialized;
__typeof__(MPI_Intercomm_create) PMPI_Intercomm_create;
__typeof__(MPI_Intercomm_merge) PMPI_Intercomm_merge;
__typeof__(MPI_Iprobe) PMPI_Iprobe;
__typeof__(MPI_Irecv) PMPI_Irecv;
__typeof__(MPI_Irsend) PMPI_Irsend;
__typeof__(MPI_Is_thread_main) PMPI_Is_thread_main;
__typeof__(MPI_Isend) PMPI_Isend;
__typeof__(MPI_Issend) PMPI_Issend;
__typeof__(MPI_Keyval_create) PMPI_Keyval_create;
__typeof__(MPI_Keyval_free) PMPI_Keyval_free;
__typeof__(MPI_Message_c2f) PMPI_Message_c2f;
__typeof__(MPI_Message_f2c) PMPI_Message_f2c;
__typeof__(MPI_Mprobe) PMPI_Mprobe;
__typeof__(MPI_Mrecv) PMPI_Mrecv;
__typeof__(MPI_Op_c2f) PMPI_Op_c2f;
__typeof__(MPI_Op_commutative) PMPI_Op_commutative;
__typeof__(MPI_Op_create) PMPI_Op_create;
__typeof__(MPI_Op_f2c) PMPI_Op_f2c;
__typeof__(MPI_Op_free) PMPI_Op_free;
__typeof__(MPI_Pack) PMPI_Pack;
__typeof__(MPI_Pack_size) PMPI_Pack_size;
__typeof__(MPI_Pcontrol) PMPI_Pcontrol;
__typeof__(MPI_Probe) PMPI_Probe;
__typeof__(MPI_Query_thread) PMPI_Query_thread;
__typeof__(MPI_Recv) PMPI_Recv;
__typeof__(MPI_Recv_init) PMPI_Recv_init;
__typeof__(MPI_Reduce) PMPI_Reduce;
__typeof__(MPI_Reduce_local) PMPI_Reduce_local;
__typeof__(MPI_Reduce_scatter) PMPI_Reduce_scatter;
__typeof__(MPI_Reduce_scatter_block) PMPI_Reduce_scatter_block;
__typeof__(MPI_Request_c2f) PMPI_Request_c2f;
__typeof__(MPI_Request_f2c) PMPI_Request_f2c;
__typeof__(MPI_Request_free) PMPI_Request_free;
__typeof__(MPI_Request_get_status) PMPI_Request_get_status;
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
__typeof__(MPI_Test) PMPI_Test;
__typeof__(MPI_Test_cancelled) PMPI_Test_cancelled;
__typeof__(MPI_Testall) PMPI_Testall;
__typeof__(MPI_Testany) PMPI_Testany;
__typeof__(MPI_Testsome) PMPI_Testsome;
__typeof__(MPI_Topo_test) PMPI_Topo_test;
__typeof__(MPI_Type_c2f) PMPI_Type_c2f;
__typeof__(MPI_Type_commit) PMPI_Type_commit;
__typeof__(MPI_Type_contiguous) PMPI_Type_contiguous;
__typeof__(MPI_Type_create_hindexed) PMPI_Type_create_hindexed;
__typeof__(MPI_Type_create_hindexed_block) PMPI_Type_create_hindexed_block;
__typeof__(MPI_Type_create_hvector) PMPI_Type_create_hvector;
__typeof__(MPI_Type_create_indexed_block) PMPI_Type_create_indexed_block;
__typeof__(MPI_Type_create_resized) PMPI_Type_create_resized;
__typeof__(MPI_Type_create_struct) PMPI_Type_create_struct;
__typeof__(MPI_Type_create_subarray) PMPI_Type_create_subarray;
__typeof__(MPI_Type_dup) PMPI_Type_dup;
__typeof__(MPI_Type_extent) PMPI_Type_extent;
__typeof__(MPI_Type_f2c) PMPI_Type_f2c;
__typeof__(MPI_Type_free) PMPI_Type_free;
__typeof__(MPI_Type_get_extent) PMPI_Type_get_extent;
__typeof__(MPI_Type_get_true_extent) PMPI_Type_get_true_extent;
__typeof__(MPI_Type_hindexed) PMPI_Type_hindexed;
__typeof__(MPI_Type_hvector) PMPI_Type_hvector;
__typeof__(MPI_Type_indexed) PMPI_Type_indexed;
__typeof__(MPI_Type_lb) PMPI_Type_lb;
__typeof__(MPI_Type_size) PMPI_Type_size;
__typeof__(MPI_Type_size_x) PMPI_Type_size_x;
__typeof__(MPI_Type_struct) PMPI_Type_struct;
__typeof__(MPI_Type_ub) PMPI_Type_ub;
__typeof__(MPI_Type_vector) PMPI_Type_vector;
__typeof__(MPI_Unpack) PMPI_Unpack;
__typeof__(MPI_Wait) PMPI_Wait;
__typeof__(MPI_Waitall) PMPI_Waitall;
__typeof__(MPI_Waitany) PMPI_Waitany;
__typeof__(MPI_Waitsome) PMPI_Waitsome;
__typeof__(MPI_Wtick) PMPI_Wtick;
__typeof__(MPI_Wtime) PMPI_Wtime;

#ifdef __cplusplus
}
#endif

#endif /* VOLPEX_MPI_H */
