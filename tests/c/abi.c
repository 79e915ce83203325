/* The C side of the ABI: the layout of MPI_Status, and that every predefined datatype's
 * size is the size of the C type it stands for; a pair type's extent is its C struct's
 * and its size the data without the padding (MPI-3.1 section 4.1.6: its type map is
 * the value and the int). Runs as one rank. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <complex.h>
#include "check.h"

#define SIZE_IS(t, ctype)                                            \
    do {                                                             \
        int s_;                                                      \
        CHECK_OK(MPI_Type_size(t, &s_));                             \
        if (s_ != (int)sizeof(ctype)) {                              \
            printf("FAILED %s: %d bytes, C says %d\n", #t, s_, (int)sizeof(ctype)); \
            exit(1);                                                 \
        }                                                            \
    } while (0)

int main(int argc, char **argv) {
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &check_rank));
    CHECK(sizeof(MPI_Status) == 6 * sizeof(int));
    CHECK(offsetof(MPI_Status, MPI_SOURCE) == 0);
    CHECK(offsetof(MPI_Status, MPI_TAG) == sizeof(int));
    CHECK(offsetof(MPI_Status, MPI_ERROR) == 2 * sizeof(int));
    SIZE_IS(MPI_CHAR, char);
    SIZE_IS(MPI_SIGNED_CHAR, signed char);
    SIZE_IS(MPI_UNSIGNED_CHAR, unsigned char);
    SIZE_IS(MPI_BYTE, unsigned char);
    SIZE_IS(MPI_WCHAR, wchar_t);
    SIZE_IS(MPI_SHORT, short);
    SIZE_IS(MPI_UNSIGNED_SHORT, unsigned short);
    SIZE_IS(MPI_INT, int);
    SIZE_IS(MPI_UNSIGNED, unsigned);
    SIZE_IS(MPI_LONG, long);
    SIZE_IS(MPI_UNSIGNED_LONG, unsigned long);
    SIZE_IS(MPI_LONG_LONG_INT, long long);
    SIZE_IS(MPI_LONG_LONG, long long);
    SIZE_IS(MPI_UNSIGNED_LONG_LONG, unsigned long long);
    SIZE_IS(MPI_FLOAT, float);
    SIZE_IS(MPI_DOUBLE, double);
    SIZE_IS(MPI_LONG_DOUBLE, long double);
    SIZE_IS(MPI_C_BOOL, bool);
    SIZE_IS(MPI_INT8_T, int8_t);
    SIZE_IS(MPI_INT16_T, int16_t);
    SIZE_IS(MPI_INT32_T, int32_t);
    SIZE_IS(MPI_INT64_T, int64_t);
    SIZE_IS(MPI_UINT8_T, uint8_t);
    SIZE_IS(MPI_UINT16_T, uint16_t);
    SIZE_IS(MPI_UINT32_T, uint32_t);
    SIZE_IS(MPI_UINT64_T, uint64_t);
    SIZE_IS(MPI_AINT, MPI_Aint);
    SIZE_IS(MPI_OFFSET, MPI_Offset);
    SIZE_IS(MPI_COUNT, MPI_Count);
    SIZE_IS(MPI_C_FLOAT_COMPLEX, float _Complex);
    SIZE_IS(MPI_C_DOUBLE_COMPLEX, double _Complex);
    SIZE_IS(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex);
#define PAIR_IS(t, vtype)                                                        \
    do {                                                                         \
        struct pair_ { vtype v; int i; };                                        \
        MPI_Aint lb_, ext_;                                                      \
        SIZE_IS(t, char[sizeof(vtype) + sizeof(int)]);                           \
        CHECK_OK(MPI_Type_get_extent(t, &lb_, &ext_));                           \
        CHECK(lb_ == 0 && ext_ == sizeof(struct pair_));                         \
    } while (0)
    PAIR_IS(MPI_FLOAT_INT, float);
    PAIR_IS(MPI_DOUBLE_INT, double);
    PAIR_IS(MPI_LONG_INT, long);
    PAIR_IS(MPI_2INT, int);
    PAIR_IS(MPI_SHORT_INT, short);
    PAIR_IS(MPI_LONG_DOUBLE_INT, long double);
    CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == (MPI_Fint)MPI_COMM_WORLD);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)) == MPI_COMM_SELF);
    printf("abi: ok\n");
    CHECK_OK(MPI_Finalize());
    return 0;
}
