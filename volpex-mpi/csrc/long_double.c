/* Arithmetic on C `long double`, which Rust does not have (x86-64: the x87 80-bit
 * format; elsewhere what the C compiler makes of it), for MPI_SUM and MPI_PROD on
 * MPI_LONG_DOUBLE (MPI-3.1 section 5.9.2). Each value is 16 bytes in memory, not
 * necessarily aligned: copied in and out. */
#include <string.h>

void volpex_long_double_sum(unsigned char *a, const unsigned char *b) {
    long double x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    x += y;
    memcpy(a, &x, sizeof x);
}

void volpex_long_double_prod(unsigned char *a, const unsigned char *b) {
    long double x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    x *= y;
    memcpy(a, &x, sizeof x);
}
