/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/units.h — exact quantities: counts, widths and byte counts
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_UNITS_H
#define DPAS_UNITS_H

#include "dpas/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exact quantities ------------------------------------------------------------------------ */

/* An exact non-negative rational num/den, reduced, den > 0. Widths are in bytes per parameter. */
typedef struct dpas_rational {
    uint64_t num;
    uint64_t den;
} dpas_rational;

/* An exact byte count: whole + frac_num / frac_den, with frac_num < frac_den, reduced
 * (frac_num = 0 and frac_den = 1 when whole). Byte counts are limited to < 2^64 bytes. */
typedef struct dpas_bytes {
    uint64_t whole;
    uint64_t frac_num;
    uint64_t frac_den;
} dpas_bytes;

/* How text shows byte counts, by name (the one name table of --units and Python's units=). */
#define DPAS_UNITS_MAP(X)                                                                          \
    X(SI, "si")       /* kB, MB, GB, TB, PB, EB: powers of 1000 (the default) */                   \
    X(IEC, "iec")     /* KiB, MiB, GiB, TiB, PiB, EiB: powers of 1024 */                           \
    X(BYTES, "bytes") /* plain bytes only */

typedef enum dpas_units {
#define DPAS__UNITS_ENUM(id, name) DPAS_UNITS_##id,
    DPAS_UNITS_MAP(DPAS__UNITS_ENUM)
#undef DPAS__UNITS_ENUM
} dpas_units;
#define DPAS_UNITS_COUNT 3

/* "si", "iec", "bytes"; NULL out of range. The units of a name, or -1. */
DPAS_API const char *dpas_units_name(dpas_units u);
DPAS_API int dpas_units_from_name(const char *name);

/* Largest parameter count accepted (INT64_MAX), so that counts fit every caller's int64. */
#define DPAS_MAX_COUNT INT64_MAX

/* Parse a width (bytes per parameter) from text, exactly: "2 B", "2 byte", "2 bytes", "14B",
 * "16 bit", "4.127 bits", "0.5 B", "1e-1 B", or a precision name ("bf16", case-insensitive).
 * A number needs a unit. `field` names the input in messages. Errors: DPAS_EPARSE (malformed,
 * no unit, unknown unit or name, NaN/inf), DPAS_EINVAL (zero or negative), DPAS_ERANGE. */
DPAS_API int dpas_parse_width(const char *field, const char *text, dpas_rational *out,
                              dpas_error *err);

/* Parse a count exactly: "175e9", "70.6e9", "3504872", "1.5B", "7B", "340M", "10K", "1.76T".
 * Suffixes (one letter, right after the number): K or k = 10^3, M = 10^6, B or G = 10^9,
 * T = 10^12. The result must be a whole number in [0, DPAS_MAX_COUNT]. Negative values are
 * DPAS_EINVAL; fractions, malformed text, NaN/inf DPAS_EPARSE; overflow DPAS_ERANGE. */
DPAS_API int dpas_parse_count(const char *field, const char *text, uint64_t *out, dpas_error *err);

/* What a rate measures: bytes per second (memory bandwidth) or floating-point operations per
 * second (compute). */
typedef enum dpas_rate_kind { DPAS_RATE_BYTES = 0, DPAS_RATE_FLOPS = 1 } dpas_rate_kind;

/* Parse a rate with its unit, > 0: bytes "3.35 TB/s", "900GB/s", "2 TiB/s", "1e12 B/s",
 * "8e11 byte/s", "6.4 Tbit/s" (bits are 1/8 B); operations "989 TFLOP/s", "1e15 FLOP/s",
 * "312 TFLOPS" (FLOP/s and FLOPS, any case). Prefixes k or K, M, G, T, P, E (10^3 ...) and, for
 * bytes, Ki, Mi, Gi, Ti, Pi (2^10 ...). A number without a unit, or with a count's suffix only
 * ("3B": three billion, or three bytes?), is refused, as a width without a unit is. Errors:
 * DPAS_EPARSE (malformed, no unit, a unit of another kind, NaN/inf), DPAS_EINVAL (zero or
 * negative), DPAS_ERANGE (beyond 1e30 per second, or a number beyond what is read exactly). */
DPAS_API int dpas_parse_rate(const char *field, const char *text, dpas_rate_kind kind, double *out,
                             dpas_error *err);

/* Parse a plain decimal integer ("128", "-3") into int64. Errors: DPAS_EPARSE, DPAS_ERANGE. */
DPAS_API int dpas_parse_int(const char *field, const char *text, int64_t *out, dpas_error *err);

/* Decimal text of a byte count: "350000000000", "1808075.843". Writes at most `cap` bytes
 * including the NUL; returns the length the full text needs (snprintf-style; 112 bytes always
 * suffice). The text is exact whenever the decimal terminates (frac_den has no prime factor but
 * 2 and 5: at most 64 decimals), which holds for P x any width read from decimal text. A count
 * whose decimal does not terminate (4/3 B: a mean over 3 replicas) is rounded to
 * DPAS_BYTES_ROUNDED_DIGITS decimals, half to even, trailing zeros dropped
 * ("1.333333333333333333"); dpas_bytes_is_decimal tells which, and every renderer marks a
 * rounded count and gives its exact fraction (dpas_format_bytes_fraction). */
DPAS_API size_t dpas_format_bytes_exact(dpas_bytes b, char *buf, size_t cap);

/* Decimals of a byte count that dpas_format_bytes_exact rounds. */
#define DPAS_BYTES_ROUNDED_DIGITS 18

/* 1 when the byte count's decimal terminates (dpas_format_bytes_exact prints it exactly), 0 when
 * it is printed rounded. */
DPAS_API int dpas_bytes_is_decimal(dpas_bytes b);

/* The exact value of a byte count as one fraction in lowest terms, "4/3", or the whole number
 * ("350000000000") when it is whole; snprintf-style (64 bytes always suffice). */
DPAS_API size_t dpas_format_bytes_fraction(dpas_bytes b, char *buf, size_t cap);

/* A human byte count: "350 GB", "2.45 TB", "325.963 GiB", "512 B" (at most 3 decimals, trailing
 * zeros dropped; approximate except for DPAS_UNITS_BYTES, which gives the exact count). */
DPAS_API size_t dpas_format_bytes_human(dpas_bytes b, dpas_units units, char *buf, size_t cap);

/* A width as exact text in bytes: "2 B", "0.515875 B"; a width whose decimal does not terminate
 * (only the C API can give one) rounded and marked: "0.333333333333333333 B (rounded; exactly
 * 1/3)". 128 bytes always suffice. */
DPAS_API size_t dpas_format_width(dpas_rational w, char *buf, size_t cap);

/* The exact value of count × width in bytes. Errors: DPAS_ERANGE when the product reaches 2^64
 * bytes, DPAS_EINVAL when width.den == 0. */
DPAS_API int dpas_bytes_of(uint64_t count, dpas_rational width, dpas_bytes *out, dpas_error *err);

/* v as every front end prints a real: the shortest text that reads back as the same double
 * ("0.1", "1.984375", "1.4777777777777778e-05"; a whole number below 1e16 in full; nan, inf,
 * -inf), snprintf-style (40 bytes always suffice). */
DPAS_API size_t dpas_format_real(double v, char *buf, size_t cap);

/* The byte count as a double (for plotting and times only). */
DPAS_API double dpas_bytes_to_double(dpas_bytes b);

/* Precision names known to dpas_parse_width (mlsysim's PRECISION_MAP). */
typedef struct dpas_precision {
    const char *name;    /* "bf16" */
    dpas_rational width; /* bytes per parameter */
    const char *source;
} dpas_precision;
DPAS_API size_t dpas_precision_count(void);
DPAS_API const dpas_precision *dpas_precision_at(size_t i);

/* A byte count with an optional unit, exactly: "4096", "16MiB", "16 MiB", "1GB", "1.5 GiB",
 * "64k" (k/K = kB). Units B, kB, MB, GB, TB, PB (powers of 1000), KiB, MiB, GiB, TiB, PiB
 * (powers of 1024). The result must be a whole number of bytes in [1, 2^63 - 1]. Errors:
 * DPAS_EPARSE (malformed, unknown unit), DPAS_EINVAL (zero, negative, a fraction of a byte),
 * DPAS_ERANGE. `field` names the input in messages. */
DPAS_API int dpas_parse_size_bytes(const char *field, const char *text, uint64_t *out,
                                   dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
