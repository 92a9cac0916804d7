/* SPDX-License-Identifier: Apache-2.0 */
/* Units: exact widths and counts from text, exact and human formatting of byte counts. */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static dpas_rational width(const char *text)
{
    dpas_rational r = {0, 0};
    dpas_error e = {0};
    int rc = dpas_parse_width("w", text, &r, &e);
    if (rc)
        fail_msg("width \"%s\": %s", text, e.message);
    return r;
}

static void test_width_units(void **state)
{
    (void)state;
    assert_rational(width("2 B"), 2, 1);
    assert_rational(width("2 byte"), 2, 1);
    assert_rational(width("2 bytes"), 2, 1);
    assert_rational(width("14B"), 14, 1);
    assert_rational(width("  14 B  "), 14, 1);
    assert_rational(width("16 bit"), 2, 1); /* 16/8 */
    assert_rational(width("1 bits"), 1, 8);
    assert_rational(width("0.5 B"), 1, 2);
    assert_rational(width("4.127 bit"), 4127, 8000); /* 4.127/8 = 4127/8000, already reduced */
    assert_rational(width("2.50 B"), 5, 2);
    assert_rational(width("1e-1 B"), 1, 10);
    assert_rational(width(".25 B"), 1, 4);
    assert_rational(width("1.6E1 bit"), 2, 1);
    /* found by fuzz_width: a width of 18 digits in bits prints with 20 significant digits and
     * must read back: 576155000000000001 bit = 72019375000000000.125 B */
    assert_rational(width("576155000000000001Bit"), 576155000000000001ull, 8);
    assert_rational(width("72019375000000000.125 B"), 576155000000000001ull, 8);
    /* per parameter, as mlsysim's quantities print (pint's "2 byte / param"; the seed's widths
     * are byte/param quantities) */
    assert_rational(width("2 byte / param"), 2, 1);
    assert_rational(width("2 byte/param"), 2, 1);
    assert_rational(width("14 B/parameter"), 14, 1);
    assert_rational(width("16 bit per param"), 2, 1);
    assert_rational(width("4.127 bit / params"), 4127, 8000);
}

static void test_width_precisions(void **state)
{
    (void)state;
    /* mlsysim's PRECISION_MAP: fp32/tf32 4, bf16/fp16 2, fp8/int8 1, int4 0.5 */
    assert_rational(width("fp32"), 4, 1);
    assert_rational(width("tf32"), 4, 1);
    assert_rational(width("bf16"), 2, 1);
    assert_rational(width("BF16"), 2, 1);
    assert_rational(width("fp16"), 2, 1);
    assert_rational(width("fp8"), 1, 1);
    assert_rational(width("int8"), 1, 1);
    assert_rational(width("int4"), 1, 2);
    assert_int_equal(dpas_precision_count(), 7);
}

static void width_error(const char *text, int code, const char *needle)
{
    dpas_rational r;
    dpas_error e = {0};
    int rc = dpas_parse_width("gradient_bytes_per_param", text, &r, &e);
    if (rc != code)
        fail_msg("width \"%s\": expected code %d, got %d (%s)", text, code, rc, e.message);
    assert_int_equal(e.code, code);
    assert_string_equal(e.field, "gradient_bytes_per_param");
    assert_msg_contains(e, needle);
}

static void test_width_errors(void **state)
{
    (void)state;
    width_error("2", DPAS_EPARSE, "\"2\" has no unit");
    width_error("2 ", DPAS_EPARSE, "\"2 \" has no unit"); /* was "unknown unit" (issue 12) */
    width_error("2\t", DPAS_EPARSE, "has no unit");
    width_error("2 kg", DPAS_EPARSE, "unknown unit");
    width_error("2 b", DPAS_EPARSE, "unknown unit"); /* b is ambiguous: bit or byte */
    width_error("", DPAS_EPARSE, "cannot read");
    width_error("abc", DPAS_EPARSE, "cannot read \"abc\"");
    width_error("nan", DPAS_EPARSE, "must be a finite number, got \"nan\"");
    width_error("-inf B", DPAS_EPARSE, "finite");
    width_error("Infinity", DPAS_EPARSE, "finite");
    width_error("-2 B", DPAS_EINVAL, "gradient_bytes_per_param must be > 0, got \"-2 B\"");
    width_error("0 B", DPAS_EINVAL, "must be > 0, got \"0 B\"");
    width_error("0.0 bit", DPAS_EINVAL, "must be > 0");
    width_error("1e400 B", DPAS_ERANGE, "exact range");
    width_error("1e99999 B", DPAS_ERANGE, "out of range");
    width_error("1e30 B", DPAS_ERANGE, "exact range");
    width_error("1e-25 B", DPAS_ERANGE, "exact range");
    width_error("0.00000000000000000000000000000000001 B", DPAS_ERANGE, "exact range");
    width_error("12345678901234567890123 B", DPAS_ERANGE, "exact range");
    width_error("1234567890123456789012345678901234567890 B", DPAS_ERANGE, "significant digits");
    width_error("2 B B", DPAS_EPARSE, "unknown unit");
    width_error("1.2.3 B", DPAS_EPARSE, "unknown unit");
    width_error("2 per param", DPAS_EPARSE, "unknown unit");  /* no unit before "per" */
    width_error("2 /param", DPAS_EPARSE, "has no unit");
    width_error("2 byteparam", DPAS_EPARSE, "unknown unit"); /* no separator */
    width_error("2 byte//param", DPAS_EPARSE, "unknown unit");
    width_error("2 byte/", DPAS_EPARSE, "unknown unit");
    width_error("2 kg/param", DPAS_EPARSE, "unknown unit");
}

static uint64_t count(const char *text)
{
    uint64_t v = 0;
    dpas_error e = {0};
    if (dpas_parse_count("parameters", text, &v, &e))
        fail_msg("count \"%s\": %s", text, e.message);
    return v;
}

static void test_counts(void **state)
{
    (void)state;
    assert_int_equal(count("175e9"), 175000000000ull);
    assert_int_equal(count("70.6e9"), 70600000000ull);
    assert_int_equal(count("8.03e9"), 8030000000ull);
    assert_int_equal(count("3504872"), 3504872ull);
    assert_int_equal(count("1.76e12"), 1760000000000ull);
    assert_int_equal(count("7B"), 7000000000ull);
    assert_int_equal(count("1.5B"), 1500000000ull);
    assert_int_equal(count("1.5G"), 1500000000ull);
    assert_int_equal(count("340M"), 340000000ull);
    assert_int_equal(count("10K"), 10000ull);
    assert_int_equal(count("10k"), 10000ull);
    assert_int_equal(count("1.76T"), 1760000000000ull);
    assert_int_equal(count("1 M"), 1000000ull);
    assert_int_equal(count("0"), 0ull);
    assert_int_equal(count("+5"), 5ull);
    assert_int_equal(count("9223372036854775807"), 9223372036854775807ull);
    assert_int_equal(count("9.223372036854775807e18"), 9223372036854775807ull);
    assert_int_equal(count("0.001e3"), 1ull);
}

static void count_error(const char *text, int code, const char *needle)
{
    uint64_t v;
    dpas_error e = {0};
    int rc = dpas_parse_count("parameters", text, &v, &e);
    if (rc != code)
        fail_msg("count \"%s\": expected code %d, got %d (%s)", text, code, rc, e.message);
    assert_msg_contains(e, needle);
}

static void test_count_errors(void **state)
{
    (void)state;
    count_error("1.5", DPAS_EPARSE, "parameters must be a whole number, got \"1.5\"");
    count_error("1.5K5", DPAS_EPARSE, "cannot read");
    count_error("-5", DPAS_EINVAL, "parameters must be >= 0, got \"-5\"");
    count_error("9223372036854775808", DPAS_ERANGE, "exceeds the limit 9223372036854775807");
    count_error("1e30", DPAS_ERANGE, "exceeds the limit");
    count_error("1e400", DPAS_ERANGE, "exceeds the limit");
    count_error("1,000", DPAS_EPARSE, "cannot read");
    count_error("inf", DPAS_EPARSE, "finite");
    count_error("NaN", DPAS_EPARSE, "finite");
    count_error("7X", DPAS_EPARSE, "cannot read");
    count_error("", DPAS_EPARSE, "cannot read");
    count_error("1.23e-1", DPAS_EPARSE, "whole number");
}

static double rate(const char *text, dpas_rate_kind kind)
{
    double v = 0;
    dpas_error e = {0};
    if (dpas_parse_rate("rate", text, kind, &v, &e))
        fail_msg("rate \"%s\": %s", text, e.message);
    return v;
}

/* Rates with their units (issue 29); the values by hand: T = 1e12, Ti = 2^40 = 1099511627776,
 * a bit an eighth of a byte. */
static void test_rates(void **state)
{
    (void)state;
    assert_true(rate("3.35 TB/s", DPAS_RATE_BYTES) == 3.35e12);
    assert_true(rate("900GB/s", DPAS_RATE_BYTES) == 900e9);
    assert_true(rate("2 TiB/s", DPAS_RATE_BYTES) == 2 * 1099511627776.0);
    assert_true(rate("512 KiB/s", DPAS_RATE_BYTES) == 512 * 1024.0);
    assert_true(rate("1e12 B/s", DPAS_RATE_BYTES) == 1e12);
    assert_true(rate("8e11 bytes/s", DPAS_RATE_BYTES) == 8e11);
    assert_true(rate("6.4 Tbit/s", DPAS_RATE_BYTES) == 0.8e12);
    assert_true(rate(" 5 kB/s ", DPAS_RATE_BYTES) == 5000);
    assert_true(rate("989 TFLOP/s", DPAS_RATE_FLOPS) == 989e12);
    assert_true(rate("312 TFLOPS", DPAS_RATE_FLOPS) == 312e12);
    assert_true(rate("1e15 flop/s", DPAS_RATE_FLOPS) == 1e15);
    assert_true(rate("2.5 PFLOP/s", DPAS_RATE_FLOPS) == 2.5e15);
    struct {
        const char *text;
        dpas_rate_kind kind;
        int code;
        const char *needle;
    } bad[] = {
        {"1e15", DPAS_RATE_FLOPS, DPAS_EPARSE, "rate: \"1e15\" has no unit"},
        {"3B", DPAS_RATE_BYTES, DPAS_EPARSE, "does not end in a unit of bandwidth"},
        {"3 TB", DPAS_RATE_BYTES, DPAS_EPARSE, "does not end in a unit of bandwidth"},
        {"3 Tb/s", DPAS_RATE_BYTES, DPAS_EPARSE, "does not end in a unit of bandwidth"},
        {"3 TB/s", DPAS_RATE_FLOPS, DPAS_EPARSE, "does not end in a unit of compute"},
        {"3 TFLOP/s", DPAS_RATE_BYTES, DPAS_EPARSE, "does not end in a unit of bandwidth"},
        {"3 TiFLOP/s", DPAS_RATE_FLOPS, DPAS_EPARSE, "does not end in a unit of compute"},
        {"0 B/s", DPAS_RATE_BYTES, DPAS_EINVAL, "rate must be > 0, got \"0 B/s\""},
        {"-1 FLOP/s", DPAS_RATE_FLOPS, DPAS_EINVAL, "rate must be > 0"},
        {"nan B/s", DPAS_RATE_BYTES, DPAS_EPARSE, "rate must be a finite rate"},
        {"inf FLOPS", DPAS_RATE_FLOPS, DPAS_EPARSE, "rate must be a finite rate"},
        {"1e31 B/s", DPAS_RATE_BYTES, DPAS_ERANGE, "beyond 1e30 per second"},
        {"1e20 EB/s", DPAS_RATE_BYTES, DPAS_ERANGE, "beyond 1e30 per second"},
        {"1e400 B/s", DPAS_RATE_BYTES, DPAS_ERANGE, "beyond"},
        {"1e-40 B/s", DPAS_RATE_BYTES, DPAS_ERANGE, "below 1e-30 per second"},
        /* an exponent past the range is still on its own side (it said "beyond 1e30") */
        {"1e-300 FLOP/s", DPAS_RATE_FLOPS, DPAS_ERANGE, "below 1e-30 per second"},
        {"1e300 B/s", DPAS_RATE_BYTES, DPAS_ERANGE, "beyond 1e30 per second"},
        {"GB/s", DPAS_RATE_BYTES, DPAS_EPARSE, "cannot read \"GB/s\" as a rate"},
        {"", DPAS_RATE_BYTES, DPAS_EPARSE, "cannot read"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v;
        dpas_error e = {0};
        int rc = dpas_parse_rate("rate", bad[i].text, bad[i].kind, &v, &e);
        if (rc != bad[i].code)
            fail_msg("rate \"%s\": expected code %d, got %d (%s)", bad[i].text, bad[i].code, rc,
                     e.message);
        assert_msg_contains(e, bad[i].needle);
    }
}

static void test_ints(void **state)
{
    (void)state;
    int64_t v;
    dpas_error e = {0};
    assert_int_equal(dpas_parse_int("dp_degree", "128", &v, &e), 0);
    assert_int_equal(v, 128);
    assert_int_equal(dpas_parse_int("dp_degree", " -3 ", &v, &e), 0);
    assert_int_equal(v, -3);
    assert_int_equal(dpas_parse_int("dp_degree", "9223372036854775807", &v, &e), 0);
    assert_int_equal(v, INT64_MAX);
    assert_int_equal(dpas_parse_int("dp_degree", "-9223372036854775808", &v, &e), 0);
    assert_true(v == INT64_MIN);
    assert_int_equal(dpas_parse_int("dp_degree", "2.0", &v, &e), DPAS_EPARSE);
    assert_msg_contains(e, "dp_degree must be an integer, got \"2.0\"");
    assert_int_equal(dpas_parse_int("dp_degree", "9223372036854775808", &v, &e), DPAS_ERANGE);
    assert_int_equal(dpas_parse_int("dp_degree", "99999999999999999999999", &v, &e), DPAS_ERANGE);
    assert_int_equal(dpas_parse_int("dp_degree", "", &v, &e), DPAS_EPARSE);
    assert_int_equal(dpas_parse_int("dp_degree", "1e3", &v, &e), DPAS_EPARSE);
    assert_int_equal(dpas_parse_int("dp_degree", "0x10", &v, &e), DPAS_EPARSE);
}

static void test_bytes_of(void **state)
{
    (void)state;
    dpas_bytes b;
    dpas_error e = {0};
    char t[128];
    /* 175e9 x 2 B = 350e9 B */
    assert_int_equal(dpas_bytes_of(175000000000ull, (dpas_rational){2, 1}, &b, &e), 0);
    assert_int_equal(b.whole, 350000000000ull);
    assert_int_equal(b.frac_num, 0);
    assert_int_equal(b.frac_den, 1);
    /* 3504872 x 4127/8000: 3504872 x 4127 = 14464606744; / 8000 = 1808075 rem 6744;
     * 6744/8000 = 843/1000 */
    assert_int_equal(dpas_bytes_of(3504872ull, (dpas_rational){4127, 8000}, &b, &e), 0);
    assert_int_equal(b.whole, 1808075ull);
    assert_int_equal(b.frac_num, 843);
    assert_int_equal(b.frac_den, 1000);
    dpas_format_bytes_exact(b, t, sizeof t);
    assert_string_equal(t, "1808075.843");
    /* 2^62 x 3 B = 13835058055282163712 B still fits; 2^62 x 4 = 2^64 does not */
    assert_int_equal(dpas_bytes_of(1ull << 62, (dpas_rational){3, 1}, &b, &e), 0);
    assert_int_equal(b.whole, 13835058055282163712ull);
    assert_int_equal(dpas_bytes_of(1ull << 62, (dpas_rational){4, 1}, &b, &e), DPAS_ERANGE);
    assert_msg_contains(e, "2^64");
    /* a numerator beyond 64 bits whose value fits: (2^63-1) x (3^40 / 3^40) */
    uint64_t p3 = 12157665459056928801ull; /* 3^40 */
    assert_int_equal(dpas_bytes_of(9223372036854775807ull, (dpas_rational){p3, p3}, &b, &e), 0);
    assert_int_equal(b.whole, 9223372036854775807ull);
    assert_int_equal(b.frac_num, 0);
    assert_int_equal(dpas_bytes_of(5, (dpas_rational){1, 0}, &b, &e), DPAS_EINVAL);
}

static void test_format(void **state)
{
    (void)state;
    char t[128];
    /* not a terminating decimal: rounded to 18 decimals (issue 12; it was 30 digits, read as
     * exact); 4/3 = 1.333..., and the 19th decimal is a 3 */
    dpas_format_bytes_exact((dpas_bytes){1, 1, 3}, t, sizeof t);
    assert_string_equal(t, "1.333333333333333333");
    dpas_format_bytes_exact((dpas_bytes){0, 1, 8}, t, sizeof t);
    assert_string_equal(t, "0.125");
    dpas_format_bytes_exact((dpas_bytes){UINT64_MAX, 0, 1}, t, sizeof t);
    assert_string_equal(t, "18446744073709551615");
    dpas_format_bytes_human((dpas_bytes){350000000000ull, 0, 1}, DPAS_UNITS_SI, t, sizeof t);
    assert_string_equal(t, "350 GB");
    dpas_format_bytes_human((dpas_bytes){2450000000000ull, 0, 1}, DPAS_UNITS_SI, t, sizeof t);
    assert_string_equal(t, "2.45 TB");
    /* 350e9 / 2^30 = 325.96290111541748 */
    dpas_format_bytes_human((dpas_bytes){350000000000ull, 0, 1}, DPAS_UNITS_IEC, t, sizeof t);
    assert_string_equal(t, "325.963 GiB");
    dpas_format_bytes_human((dpas_bytes){1536, 0, 1}, DPAS_UNITS_IEC, t, sizeof t);
    assert_string_equal(t, "1.5 KiB");
    dpas_format_bytes_human((dpas_bytes){512, 0, 1}, DPAS_UNITS_SI, t, sizeof t);
    assert_string_equal(t, "512 B");
    dpas_format_bytes_human((dpas_bytes){999999999ull, 0, 1}, DPAS_UNITS_SI, t, sizeof t);
    assert_string_equal(t, "1 GB"); /* 999.999999 MB rounds to 1000 MB: shown as 1 GB */
    dpas_format_bytes_human((dpas_bytes){350000000000ull, 0, 1}, DPAS_UNITS_BYTES, t, sizeof t);
    assert_string_equal(t, "350000000000 B");
    dpas_format_bytes_human((dpas_bytes){UINT64_MAX, 0, 1}, DPAS_UNITS_SI, t, sizeof t);
    assert_string_equal(t, "18.447 EB");
    dpas_format_width((dpas_rational){4127, 8000}, t, sizeof t);
    assert_string_equal(t, "0.515875 B");
    dpas_format_width((dpas_rational){14, 1}, t, sizeof t);
    assert_string_equal(t, "14 B");
    /* snprintf-style: the length needed is returned even when the buffer is short */
    assert_int_equal(dpas_format_bytes_exact((dpas_bytes){1808075, 843, 1000}, t, 4), 11);
    assert_string_equal(t, "180");
}

static void test_ring_factor(void **state)
{
    (void)state;
    double f;
    dpas_error e = {0};
    assert_int_equal(dpas_ring_allreduce_factor(8, &f, &e), 0);
    assert_true(f == 14.0 / 8.0); /* mlsysim: calc_ring_allreduce_data_factor(8) = 14/8 */
    assert_int_equal(dpas_ring_allreduce_factor(1, &f, &e), 0);
    assert_true(f == 0.0);
    assert_int_equal(dpas_ring_allreduce_factor(128, &f, &e), 0);
    assert_true(f == 1.984375); /* 254/128 */
    assert_int_equal(dpas_ring_allreduce_factor(0, &f, &e), DPAS_EINVAL);
    assert_string_equal(e.message, "n_gpus must be >= 1, got 0");
}

/* The reference for the one rule of printing a real, by brute force: the fewest significant
 * digits (1 to 17) at which printf's %g reads back as the same double, a whole number below 1e16
 * in full. Slow (up to 17 printf and strtod calls), and independent of the library's digits. */
static void reference_real(double v, char *out, size_t cap)
{
    if (v == 0) {
        snprintf(out, cap, "0");
        return;
    }
    if (fabs(v) < 1e16 && v == floor(v)) {
        snprintf(out, cap, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

static int significant(const char *t)
{
    int n = 0, started = 0;
    for (; *t && *t != 'e'; t++)
        if (*t >= '0' && *t <= '9' && (started |= *t != '0'))
            n++;
    return n;
}

static void check_real(double v)
{
    char a[48], b[48];
    dpas_format_real(v, a, sizeof a);
    if (strtod(a, NULL) != v)
        fail_msg("%a prints as %s, which reads back as %a", v, a, strtod(a, NULL));
    reference_real(v, b, sizeof b);
    if (strcmp(a, b) && !(fabs(v) < DBL_MIN && significant(a) <= significant(b)))
        fail_msg("%.17g (%a): %s, the reference %s", v, v, a, b); /* a subnormal's interval
                                                                    is wide: never longer */
}

/* A sink into a fixed buffer (the tests' strings are short). */
typedef struct sink_ctx {
    char *buf;
    size_t cap, len;
} sink_ctx;

static int sink_into(void *ctx, const char *data, size_t len)
{
    sink_ctx *c = ctx;
    if (c->len + len >= c->cap)
        return -1;
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    c->buf[c->len] = '\0';
    return 0;
}
static void test_real(void **state)
{
    (void)state;
    /* random bit patterns (every magnitude, subnormals included), short decimals, dyadic
     * fractions, whole numbers, and the edges of the format */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 300000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v;
        uint64_t bits = x;
        memcpy(&v, &bits, sizeof v);
        if (isfinite(v))
            check_real(v);
        check_real((double)(int64_t)(x % 100000000) / pow(10, (double)(x % 23)));
        check_real((double)(int64_t)(x >> 11) / (double)(1ull << (x % 60)));
        check_real((double)(x >> (x % 64)));
    }
    static const double edges[] = {DBL_MAX,
                                   DBL_MIN,
                                   4.9406564584124654e-324,
                                   9007199254740991.0,
                                   9007199254740993.0,
                                   1e16,
                                   1e15,
                                   1e23,
                                   5e-324,
                                   0.1,
                                   0.3,
                                   1.984375,
                                   64,
                                   1e-5,
                                   1e-4,
                                   123456789012345680.0,
                                   2.5e-7};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check_real(edges[i]), check_real(-edges[i]);
    static const struct {
        double v;
        const char *t;
    } fixed[] = {
        {0, "0"},
        {1, "1"},
        {64, "64"},
        {1.984375, "1.984375"},
        {1e10, "10000000000"},
        {1e16, "1e+16"},
        {0.0001, "0.0001"},
        {0.00001, "1e-05"},
        {-2.5, "-2.5"},
        {1.4777777777777778e-05, "1.4777777777777778e-05"},
        {5e-324, "5e-324"},
        {0.1 + 0.2, "0.30000000000000004"},
        {1.5e300, "1.5e+300"},
        {12345678901234568.0, "12345678901234568"},
        {NAN, "nan"},
        {-INFINITY, "-inf"},
    };
    char a[48];
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        dpas_format_real(fixed[i].v, a, sizeof a);
        assert_string_equal(a, fixed[i].t);
    }
    /* the same text as a JSON number (dpas-measure's report), null where it is not finite */
    static const struct {
        double v;
        const char *t;
    } json[] = {{0.1 + 0.2, "0.30000000000000004"},
                {1.5e300, "1.5e+300"},
                {0.00001, "1e-05"},
                {-2.5, "-2.5"},
                {NAN, "null"},
                {INFINITY, "null"},
                {-INFINITY, "null"}};
    for (size_t i = 0; i < sizeof json / sizeof json[0]; i++) {
        char out[64] = "";
        sink_ctx c = {out, sizeof out, 0};
        assert_int_equal(dpas_write_json_real(json[i].v, sink_into, &c), 0);
        assert_string_equal(out, json[i].t);
    }
}

/* An error message longer than dpas_error.message ends in "..." on a whole character. */
static void test_error_cut(void **state)
{
    (void)state;
    char long_text[2000];
    /* 'a' then 700 two-byte characters (U+00E9): every cut point but one splits a character */
    long_text[0] = 'a';
    for (int i = 0; i < 700; i++)
        long_text[1 + 2 * i] = (char)0xc3, long_text[2 + 2 * i] = (char)0xa9;
    long_text[1401] = '\0';
    dpas_error e;
    assert_int_equal(dpas_error_set(&e, DPAS_EINVAL, "f", "%s", long_text), DPAS_EINVAL);
    size_t l = strlen(e.message);
    /* 511 bytes fit; the mark takes 3 and the text before it ends on a character: 'a' plus 253
     * whole characters (507 bytes), then "..." */
    assert_int_equal(l, 1 + 2 * 253 + 3);
    assert_string_equal(e.message + l - 3, "...");
    assert_int_equal((unsigned char)e.message[l - 4], 0xa9);
    /* a message that fits is kept as it is */
    dpas_error_set(&e, DPAS_EINVAL, "f", "dp_degree must be >= 1, got %d", 0);
    assert_string_equal(e.message, "dp_degree must be >= 1, got 0");
}

/* A quoted value that is cut says so and how many bytes of it were cut (issue 29). Expected
 * texts by hand: cap 40 keeps 21 bytes for the mark of a 100-byte text ("..." and " [cut: 100
 * bytes]"), 18 for the quote mark and the text, so 17 x's are kept and 83 bytes cut. */
static void test_quote_cut(void **state)
{
    (void)state;
    char buf[64], text[200];
    memset(text, 'x', 100);
    text[100] = '\0';
    assert_string_equal(dpas_quote(text, buf, 40), "\"xxxxxxxxxxxxxxxxx...\" [cut: 83 bytes]");
    assert_true(strlen(buf) < 40);
    /* 'a' then 50 two-byte characters (101 bytes): cut on a whole character, 1 + 8 x 2 kept */
    text[0] = 'a';
    for (int i = 0; i < 50; i++)
        text[1 + 2 * i] = (char)0xc3, text[2 + 2 * i] = (char)0xa9;
    text[101] = '\0';
    assert_string_equal(dpas_quote(text, buf, 40),
                        "\"a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...\" "
                        "[cut: 84 bytes]");
    /* what fits is kept whole, with no mark: 6 bytes and the NUL in 8 (the least cap), 8 in 9 */
    assert_string_equal(dpas_quote("GPT3", buf, 8), "\"GPT3\"");
    assert_string_equal(dpas_quote("abcdef", buf, 9), "\"abcdef\"");
    /* escapes count toward the length: a\nb is 6 bytes quoted and escaped */
    assert_string_equal(dpas_quote("a\nb", buf, 16), "\"a\\x0ab\"");
    /* too small a buffer for a count: "..." alone, within cap */
    memset(text, 'x', 100);
    text[100] = '\0';
    assert_string_equal(dpas_quote(text, buf, 16), "\"xxxxxxxxxx...\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_width_units),  cmocka_unit_test(test_width_precisions),
        cmocka_unit_test(test_width_errors), cmocka_unit_test(test_counts),
        cmocka_unit_test(test_count_errors), cmocka_unit_test(test_rates),
        cmocka_unit_test(test_ints),
        cmocka_unit_test(test_bytes_of),     cmocka_unit_test(test_format),
        cmocka_unit_test(test_ring_factor),  cmocka_unit_test(test_real),
        cmocka_unit_test(test_error_cut),    cmocka_unit_test(test_quote_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
