/* SPDX-License-Identifier: Apache-2.0 */
/* Exact reading of widths and counts from decimal text, and formatting of byte counts.
 * Nothing here goes through a double: a decimal is read as mantissa × 10^exponent in integers,
 * so "70.6e9" is 70600000000 and "4.127 bit" is 4127/8000 byte, exactly. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const dpas_precision precisions[] = {
    {"fp32", {4, 1}, "mlsysim PRECISION_MAP"}, {"tf32", {4, 1}, "mlsysim PRECISION_MAP"},
    {"bf16", {2, 1}, "mlsysim PRECISION_MAP"}, {"fp16", {2, 1}, "mlsysim PRECISION_MAP"},
    {"fp8", {1, 1}, "mlsysim PRECISION_MAP"},  {"int8", {1, 1}, "mlsysim PRECISION_MAP"},
    {"int4", {1, 2}, "mlsysim PRECISION_MAP"},
};
#define NPREC (sizeof precisions / sizeof precisions[0])

size_t dpas_precision_count(void) { return NPREC; }
const dpas_precision *dpas_precision_at(size_t i) { return i < NPREC ? &precisions[i] : NULL; }

typedef struct decimal {
    bool neg;
    dpas__u128 mant; /* significant digits (up to 38), trailing zeros moved into exp */
    int exp;         /* value = +-mant x 10^exp */
} decimal;

enum { DEC_OK = 0, DEC_SYNTAX = 1, DEC_DIGITS = 2, DEC_EXP = 3 };
#define MAX_SIG 38 /* 10^38 < 2^128 */

static bool is_space(char c) { return c == ' ' || c == '\t'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Read [+-]digits[.digits][(e|E)[+-]digits] at s; *end is set past it. The mantissa is held in
 * 128 bits so that any text dpas prints (an exact decimal of up to 20 integer digits and its
 * fraction) reads back. */
static int read_decimal(const char *s, decimal *d, const char **end)
{
    const char *p = s;
    d->neg = false;
    d->mant = 0;
    d->exp = 0;
    if (*p == '+' || *p == '-')
        d->neg = *p++ == '-';
    int ndigits = 0, nsig = 0;
    bool seen_point = false;
    for (;; p++) {
        if (*p == '.' && !seen_point) {
            seen_point = true;
            continue;
        }
        if (!is_digit(*p))
            break;
        ndigits++;
        int dig = *p - '0';
        if (nsig == 0 && dig == 0) { /* leading zero */
            if (seen_point)
                d->exp--;
            continue;
        }
        if (nsig < MAX_SIG) {
            d->mant = d->mant * 10 + (dpas__u128)dig;
            nsig++;
            if (seen_point)
                d->exp--;
        } else if (dig != 0) {
            return DEC_DIGITS;
        } else if (!seen_point) {
            d->exp++; /* a zero beyond the kept digits, before the point, scales the value */
        }
    }
    if (ndigits == 0)
        return DEC_SYNTAX;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        bool eneg = false;
        if (*q == '+' || *q == '-')
            eneg = *q++ == '-';
        if (!is_digit(*q))
            return DEC_SYNTAX;
        long e = 0;
        for (; is_digit(*q); q++)
            if (e < 100000)
                e = e * 10 + (*q - '0');
        if (e > 10000)
            return DEC_EXP;
        d->exp += eneg ? -(int)e : (int)e;
        p = q;
    }
    if (d->mant == 0)
        d->exp = 0;
    while (d->mant && d->mant % 10 == 0) {
        d->mant /= 10;
        d->exp++;
    }
    *end = p;
    return DEC_OK;
}

static dpas__u128 gcd128(dpas__u128 a, dpas__u128 b);

/* Does NaN or infinity spell the text (as strtod would accept: "nan", "-Inf", "infinity")? */
static bool is_nonfinite(const char *p)
{
    while (is_space(*p))
        p++;
    if (*p == '+' || *p == '-')
        p++;
    char w[4] = {0};
    for (int i = 0; i < 3 && p[i]; i++)
        w[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] - 'A' + 'a' : p[i]);
    return !strcmp(w, "nan") || !strcmp(w, "inf");
}

/* mant x 10^exp x 1/scale_den as an exact reduced rational with 64-bit parts; false when it
 * has none. */
static bool decimal_to_rational(const decimal *d, uint64_t scale_den, dpas_rational *out)
{
    if (d->mant == 0) {
        out->num = 0;
        out->den = 1;
        return true;
    }
    dpas__u128 num = d->mant, den = scale_den;
    if (d->exp >= 0) {
        for (int i = 0; i < d->exp; i++) {
            if (num > UINT64_MAX)
                return false;
            num *= 10;
        }
    } else {
        if (-d->exp > MAX_SIG)
            return false;
        for (int i = 0; i < -d->exp; i++) {
            if (den > ((dpas__u128)1 << 120))
                return false;
            den *= 10;
        }
    }
    dpas__u128 g = gcd128(num, den);
    num /= g;
    den /= g;
    if (num > UINT64_MAX || den > UINT64_MAX)
        return false;
    out->num = (uint64_t)num;
    out->den = (uint64_t)den;
    return true;
}

static const char *width_hint =
    "expected a number with a unit (2 B, 2 bytes, 16 bit, or per parameter as mlsysim writes it: "
    "2 byte/param) or a precision name (fp32, tf32, bf16, fp16, fp8, int8, int4)";

/* a[0..k) equals the lowercase word b[0..k), ignoring ASCII case */
static bool ci_equal(const char *a, const char *b, size_t k)
{
    for (size_t j = 0; j < k; j++) {
        char c = a[j];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != b[j])
            return false;
    }
    return true;
}

/* A width is per parameter: mlsysim's quantities print as "2 byte / param" (pint's text of
 * byte / param), so "/ param", "/ parameter" and "per param(eter)" after the unit mean what the
 * bare unit means. The unit's length without that suffix (and the blanks before it). */
static size_t strip_per_param(const char *u, size_t len)
{
    static const char *const words[] = {"param", "params", "parameter", "parameters"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t k = strlen(words[w]);
        if (len <= k || !ci_equal(u + len - k, words[w], k))
            continue;
        size_t i = len - k;
        while (i > 0 && is_space(u[i - 1]))
            i--;
        size_t sep;
        if (i >= 1 && u[i - 1] == '/')
            sep = 1;
        else if (i >= 4 && ci_equal(u + i - 3, "per", 3) && is_space(u[i - 4]))
            sep = 3;
        else /* "byteparam", "byte param": no separator */
            continue;
        i -= sep;
        while (i > 0 && is_space(u[i - 1]))
            i--;
        return i;
    }
    return len;
}

int dpas_parse_width(const char *field, const char *text, dpas_rational *out, dpas_error *err)
{
    char q[96];
    if (!field)
        field = "width";
    if (!text)
        return dpas__fail(err, DPAS_EPARSE, field, "%s is missing; %s", field, width_hint);
    const char *p = text;
    while (is_space(*p))
        p++;
    size_t n = strlen(p);
    while (n && is_space(p[n - 1]))
        n--;
    for (size_t i = 0; i < NPREC; i++) {
        if (strlen(precisions[i].name) == n && !strncmp(p, precisions[i].name, n)) {
            *out = precisions[i].width;
            return 0;
        }
    }
    for (size_t i = 0; i < NPREC; i++) { /* BF16, Fp32: a case slip, not a new name */
        size_t k = strlen(precisions[i].name);
        if (k == n) {
            bool same = true;
            for (size_t j = 0; j < k && same; j++) {
                char c = p[j];
                if (c >= 'A' && c <= 'Z')
                    c = (char)(c - 'A' + 'a');
                same = c == precisions[i].name[j];
            }
            if (same) {
                *out = precisions[i].width;
                return 0;
            }
        }
    }
    if (is_nonfinite(text))
        return dpas__fail(err, DPAS_EPARSE, field, "%s must be a finite number, got %s", field,
                          dpas__quote(text, q, sizeof q));
    decimal d;
    const char *end;
    int rc = read_decimal(p, &d, &end);
    if (rc == DEC_DIGITS)
        return dpas__fail(err, DPAS_ERANGE, field, "%s has more than 38 significant digits, got %s",
                          field, dpas__quote(text, q, sizeof q));
    if (rc == DEC_EXP)
        return dpas__fail(err, DPAS_ERANGE, field, "%s is out of range, got %s", field,
                          dpas__quote(text, q, sizeof q));
    if (rc != DEC_OK)
        return dpas__fail(err, DPAS_EPARSE, field, "%s: cannot read %s as a width; %s", field,
                          dpas__quote(text, q, sizeof q), width_hint);
    const char *u = end;
    while (u < p + n && is_space(*u))
        u++;
    size_t ulen = u < p + n ? (size_t)(p + n - u) : 0;
    ulen = strip_per_param(u, ulen);
    char unit[16] = "";
    if (ulen < sizeof unit)
        memcpy(unit, u, ulen), unit[ulen] = '\0';
    int bits;
    if (!strcmp(unit, "B") || !dpas__strcasecmp(unit, "byte") || !dpas__strcasecmp(unit, "bytes"))
        bits = 0;
    else if (!dpas__strcasecmp(unit, "bit") || !dpas__strcasecmp(unit, "bits"))
        bits = 1;
    else if (ulen == 0)
        return dpas__fail(err, DPAS_EPARSE, field, "%s: %s has no unit; %s", field,
                          dpas__quote(text, q, sizeof q), width_hint);
    else
        return dpas__fail(err, DPAS_EPARSE, field, "%s: unknown unit in %s; %s", field,
                          dpas__quote(text, q, sizeof q), width_hint);
    if (d.neg && d.mant)
        return dpas__fail(err, DPAS_EINVAL, field, "%s must be > 0, got %s", field,
                          dpas__quote(text, q, sizeof q));
    dpas_rational r;
    if (!decimal_to_rational(&d, bits ? 8 : 1, &r))
        return dpas__fail(err, DPAS_ERANGE, field,
                          "%s is beyond the exact range (numerator and denominator below 2^64), "
                          "got %s",
                          field, dpas__quote(text, q, sizeof q));
    if (r.num == 0)
        return dpas__fail(err, DPAS_EINVAL, field, "%s must be > 0, got %s", field,
                          dpas__quote(text, q, sizeof q));
    *out = r;
    return 0;
}

int dpas_parse_count(const char *field, const char *text, uint64_t *out, dpas_error *err)
{
    char q[96];
    if (!field)
        field = "count";
    if (!text)
        return dpas__fail(err, DPAS_EPARSE, field, "%s is missing", field);
    const char *p = text;
    while (is_space(*p))
        p++;
    if (is_nonfinite(text))
        return dpas__fail(err, DPAS_EPARSE, field, "%s must be a finite whole number, got %s",
                          field, dpas__quote(text, q, sizeof q));
    decimal d;
    const char *end;
    int rc = read_decimal(p, &d, &end);
    if (rc == DEC_DIGITS || rc == DEC_EXP)
        return dpas__fail(err, DPAS_ERANGE, field, "%s exceeds the limit %lld, got %s", field,
                          (long long)DPAS_MAX_COUNT, dpas__quote(text, q, sizeof q));
    if (rc != DEC_OK)
        return dpas__fail(err, DPAS_EPARSE, field,
                          "%s: cannot read %s as a count; expected a whole number such as "
                          "175e9, 70.6e9, 3504872 or 7B (suffixes K, M, B or G, T)",
                          field, dpas__quote(text, q, sizeof q));
    const char *s = end;
    while (is_space(*s))
        s++;
    int scale = 0;
    switch (*s) {
    case 'k':
    case 'K':
        scale = 3;
        s++;
        break;
    case 'M':
        scale = 6;
        s++;
        break;
    case 'B':
    case 'G':
        scale = 9;
        s++;
        break;
    case 'T':
        scale = 12;
        s++;
        break;
    default: break;
    }
    while (is_space(*s))
        s++;
    if (*s)
        return dpas__fail(err, DPAS_EPARSE, field,
                          "%s: cannot read %s as a count; expected a whole number such as "
                          "175e9, 70.6e9, 3504872 or 7B (suffixes K, M, B or G, T)",
                          field, dpas__quote(text, q, sizeof q));
    if (d.neg && d.mant)
        return dpas__fail(err, DPAS_EINVAL, field, "%s must be >= 0, got %s", field,
                          dpas__quote(text, q, sizeof q));
    d.exp += scale;
    if (d.mant && d.exp < 0)
        return dpas__fail(err, DPAS_EPARSE, field, "%s must be a whole number, got %s", field,
                          dpas__quote(text, q, sizeof q));
    dpas_rational r;
    if (!decimal_to_rational(&d, 1, &r) || r.num > (uint64_t)DPAS_MAX_COUNT)
        return dpas__fail(err, DPAS_ERANGE, field, "%s exceeds the limit %lld, got %s", field,
                          (long long)DPAS_MAX_COUNT, dpas__quote(text, q, sizeof q));
    *out = r.num;
    return 0;
}

int dpas__parse_count_positive(const char *field, const char *text, uint64_t *out, dpas_error *err)
{
    int rc = dpas_parse_count(field, text, out, err);
    const char *t = text;
    while (rc == DPAS_EINVAL && is_space(*t))
        t++;
    /* a negative count (the only EINVAL of dpas_parse_count) or 0: the same words; the text
     * read as a number, so it is shown as given */
    if ((rc == DPAS_EINVAL && *t == '-') || (!rc && !*out)) {
        char q[96];
        return dpas__fail(err, DPAS_EINVAL, field, "%s must be >= 1, got %s", field,
                          strlen(text) < 40 ? text : dpas__quote(text, q, sizeof q));
    }
    return rc;
}

/* The unit of a rate, after its number: its factor to bytes (or FLOP) per second, or 0 when it is
 * not one of kind's units. u is the unit's text, n bytes (trailing spaces cut). */
static long double rate_unit(const char *u, size_t n, dpas_rate_kind kind)
{
    static const struct {
        char c;
        long double f;
    } si[] = {{'k', 1e3L},  {'K', 1e3L},  {'M', 1e6L}, {'G', 1e9L},
              {'T', 1e12L}, {'P', 1e15L}, {'E', 1e18L}};
    long double f = 1;
    for (size_t i = 0; n > 1 && i < sizeof si / sizeof si[0]; i++)
        if (u[0] == si[i].c) {
            f = si[i].f;
            /* binary prefixes (KiB/s) for bytes only */
            if (kind == DPAS_RATE_BYTES && n > 2 && u[1] == 'i' && si[i].c != 'k' &&
                si[i].c != 'E') {
                f = powl(1024.0L, (long double)i); /* K 1, M 2, G 3, T 4, P 5 */
                u++, n--;
            }
            u++, n--;
            break;
        }
    if (kind == DPAS_RATE_BYTES) {
        if (n == 3 && !memcmp(u, "B/s", 3))
            return f;
        if ((n == 6 && ci_equal(u, "byte/s", 6)) || (n == 7 && ci_equal(u, "bytes/s", 7)))
            return f;
        if ((n == 5 && ci_equal(u, "bit/s", 5)) || (n == 6 && ci_equal(u, "bits/s", 6)))
            return f / 8;
        return 0;
    }
    if ((n == 6 && ci_equal(u, "flop/s", 6)) || (n == 5 && ci_equal(u, "flops", 5)))
        return f;
    return 0;
}

int dpas_parse_rate(const char *field, const char *text, dpas_rate_kind kind, double *out,
                    dpas_error *err)
{
    char q[96];
    const char *examples = kind == DPAS_RATE_BYTES ? "3.35 TB/s, 900 GB/s, 2 TiB/s or 1e12 B/s"
                                                   : "989 TFLOP/s, 312 TFLOPS or 1e15 FLOP/s";
    if (!field)
        field = kind == DPAS_RATE_BYTES ? "bandwidth" : "compute rate";
    if (!text)
        return dpas__fail(err, DPAS_EPARSE, field, "%s is missing", field);
    const char *p = text;
    while (is_space(*p))
        p++;
    if (is_nonfinite(text))
        return dpas__fail(err, DPAS_EPARSE, field, "%s must be a finite rate, got %s", field,
                          dpas__quote(text, q, sizeof q));
    decimal d;
    const char *end;
    int rc = read_decimal(p, &d, &end);
    if (rc == DEC_DIGITS || rc == DEC_EXP)
        return dpas__fail(err, DPAS_ERANGE, field,
                          "%s: %s is beyond the numbers dpas reads (38 significant digits, "
                          "exponents to 10000)",
                          field, dpas__quote(text, q, sizeof q));
    if (rc != DEC_OK)
        return dpas__fail(err, DPAS_EPARSE, field,
                          "%s: cannot read %s as a rate; expected a number and its unit, such "
                          "as %s",
                          field, dpas__quote(text, q, sizeof q), examples);
    const char *u = end;
    while (is_space(*u))
        u++;
    size_t n = strlen(u);
    while (n && is_space(u[n - 1]))
        n--;
    if (!n)
        return dpas__fail(err, DPAS_EPARSE, field,
                          "%s: %s has no unit; a rate needs one, such as %s", field,
                          dpas__quote(text, q, sizeof q), examples);
    long double f = rate_unit(u, n, kind);
    if (!(f > 0))
        return dpas__fail(err, DPAS_EPARSE, field,
                          "%s: %s does not end in a unit of %s; expected a number and its "
                          "unit, such as %s",
                          field, dpas__quote(text, q, sizeof q),
                          kind == DPAS_RATE_BYTES ? "bandwidth (B/s with a prefix, or bit/s)"
                                                  : "compute (FLOP/s or FLOPS with a prefix)",
                          examples);
    if (d.neg || !d.mant)
        return dpas__fail(err, DPAS_EINVAL, field, "%s must be > 0, got %s", field,
                          dpas__quote(text, q, sizeof q));
    /* the exponent first, so that powl stays finite and non-zero: then the value's own bounds */
    long double v = d.exp > 60    ? INFINITY
                    : d.exp < -60 ? 0
                                  : (long double)d.mant * powl(10.0L, (long double)d.exp) * f;
    if (!(v <= 1e30L))
        return dpas__fail(err, DPAS_ERANGE, field, "%s is beyond 1e30 per second, got %s", field,
                          dpas__quote(text, q, sizeof q));
    if (!(v >= 1e-30L))
        return dpas__fail(err, DPAS_ERANGE, field, "%s is below 1e-30 per second, got %s", field,
                          dpas__quote(text, q, sizeof q));
    *out = (double)v;
    return 0;
}

int dpas_parse_int(const char *field, const char *text, int64_t *out, dpas_error *err)
{
    char q[96];
    if (!field)
        field = "integer";
    if (!text)
        return dpas__fail(err, DPAS_EPARSE, field, "%s is missing", field);
    const char *p = text;
    while (is_space(*p))
        p++;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!is_digit(*p))
        goto bad;
    uint64_t v = 0;
    for (; is_digit(*p); p++) {
        if (__builtin_mul_overflow(v, 10u, &v) ||
            __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v) || v > (uint64_t)INT64_MAX + neg) {
            while (is_digit(*p))
                p++;
            while (is_space(*p))
                p++;
            if (*p)
                goto bad;
            return dpas__fail(err, DPAS_ERANGE, field, "%s is out of range, got %s", field,
                              dpas__quote(text, q, sizeof q));
        }
    }
    while (is_space(*p))
        p++;
    if (*p)
        goto bad;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
bad:
    return dpas__fail(err, DPAS_EPARSE, field, "%s must be an integer, got %s", field,
                      dpas__quote(text, q, sizeof q));
}
/* out's fraction = rem / den (rem < den), reduced; false when the reduced denominator needs more
 * than 64 bits. A 64-bit denominator, the common case, takes the cheap binary gcd. */
static bool set_fraction(dpas_bytes *out, dpas__u128 rem, dpas__u128 den)
{
    if (!rem) {
        out->frac_num = 0;
        out->frac_den = 1;
        return true;
    }
    dpas__u128 g = den <= UINT64_MAX ? dpas__gcd((uint64_t)rem, (uint64_t)den) : gcd128(rem, den);
    rem /= g;
    den /= g;
    if (den > UINT64_MAX)
        return false;
    out->frac_num = (uint64_t)rem;
    out->frac_den = (uint64_t)den;
    return true;
}

/* The two ways an exact byte count can leave what dpas_bytes holds, each said as it is: the
 * whole part reaches 2^64, or the value (however small) is a fraction whose reduced denominator
 * needs more than 64 bits. Both are DPAS_ERANGE on the field "bytes"; callers rename the field
 * (dpas__bytes_field). */
static int range_whole(dpas_error *err, const char *what)
{
    return dpas__fail(err, DPAS_ERANGE, "bytes",
                      "%s reaches 2^64 bytes, the largest byte count dpas holds exactly", what);
}

static int range_den(dpas_error *err, const char *what, long double approx)
{
    return dpas__fail(err, DPAS_ERANGE, "bytes",
                      "%s is about %.6Lg B, a fraction of a byte whose denominator needs more than "
                      "64 bits; dpas holds byte counts exactly only with denominators below 2^64",
                      what, approx);
}

int dpas__bytes_field(int rc, const char *field, dpas_error *err)
{
    if (rc && err && field) {
        char m[sizeof err->message];
        memcpy(m, err->message, sizeof m);
        dpas__fail(err, rc, field, "%s: %s", field, m);
    }
    return rc;
}

int dpas_bytes_of(uint64_t count, dpas_rational width, dpas_bytes *out, dpas_error *err)
{
    if (width.den == 0)
        return dpas__fail(err, DPAS_EINVAL, "width", "width has a zero denominator");
    uint64_t whole, rem;
    uint64_t p64;
    /* Most products fit 64 bits and most widths are whole: keep the 128-bit division, which
     * costs tens of nanoseconds, for the products that need it. */
    if (!__builtin_mul_overflow(count, width.num, &p64)) {
        if (width.den == 1) {
            *out = (dpas_bytes){p64, 0, 1};
            return 0;
        }
        whole = p64 / width.den;
        rem = p64 % width.den;
    } else {
        dpas__u128 p = (dpas__u128)count * width.num;
        dpas__u128 w = p / width.den;
        if (w > UINT64_MAX) {
            char what[96];
            snprintf(what, sizeof what, "%llu parameters x %llu/%llu B", (unsigned long long)count,
                     (unsigned long long)width.num, (unsigned long long)width.den);
            return range_whole(err, what);
        }
        whole = (uint64_t)w;
        rem = (uint64_t)(p % width.den);
    }
    out->whole = whole;
    set_fraction(out, rem, width.den); /* den < 2^64: always fits */
    return 0;
}

double dpas_bytes_to_double(dpas_bytes b)
{
    return (double)b.whole + (b.frac_num ? (double)b.frac_num / (double)b.frac_den : 0.0);
}

int dpas_bytes_is_decimal(dpas_bytes b)
{
    if (!b.frac_num || !b.frac_den)
        return 1;
    uint64_t d = b.frac_den;
    d >>= __builtin_ctzll(d);
    while (d % 5 == 0)
        d /= 5;
    return d == 1;
}

/* The decimal digits of v (up to 39), into buf (at least 40 bytes); returns the length. */
static size_t u128_digits(dpas__u128 v, char *buf)
{
    char rev[40];
    size_t r = 0, n = 0;
    do {
        rev[r++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    while (r)
        buf[n++] = rev[--r];
    buf[n] = '\0';
    return n;
}

size_t dpas_format_bytes_exact(dpas_bytes b, char *buf, size_t cap)
{
    /* 39 integer digits at most (a rounded value may carry to 2^64), a point, and the fraction:
     * a terminating one has at most 64 digits (its denominator 2^a 5^b < 2^64 gives max(a, b)
     * digits), a rounded one DPAS_BYTES_ROUNDED_DIGITS. */
    char tmp[112];
    size_t n;
    if (!b.frac_num || !b.frac_den) {
        n = u128_digits(b.whole, tmp);
    } else if (dpas_bytes_is_decimal(b)) {
        n = u128_digits(b.whole, tmp);
        tmp[n++] = '.';
        dpas__u128 rem = b.frac_num;
        for (int digits = 0; rem && digits < 70; digits++) {
            rem *= 10;
            tmp[n++] = (char)('0' + (int)(rem / b.frac_den));
            rem %= b.frac_den;
        }
        tmp[n] = '\0';
    } else {
        /* round to DPAS_BYTES_ROUNDED_DIGITS decimals, half to even (a fraction that does not
         * terminate never lies on a tie: the test is for completeness) */
        const dpas__u128 scale = 1000000000000000000u; /* 10^18 */
        dpas__u128 t = (dpas__u128)b.frac_num * scale;
        dpas__u128 d = t / b.frac_den, rem = t % b.frac_den, whole = b.whole;
        if (2 * rem > b.frac_den || (2 * rem == b.frac_den && (d & 1)))
            d++;
        if (d == scale) {
            d = 0;
            whole++;
        }
        n = u128_digits(whole, tmp);
        if (d) {
            char f[20];
            for (int i = 17; i >= 0; i--) {
                f[i] = (char)('0' + (int)(d % 10));
                d /= 10;
            }
            int last = 17;
            while (f[last] == '0')
                last--;
            tmp[n++] = '.';
            memcpy(tmp + n, f, (size_t)last + 1);
            n += (size_t)last + 1;
            tmp[n] = '\0';
        }
    }
    if (cap) {
        size_t c = n < cap ? n : cap - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return n;
}

size_t dpas_format_bytes_fraction(dpas_bytes b, char *buf, size_t cap)
{
    char num[48], den[24];
    if (!b.frac_num || !b.frac_den) {
        u128_digits(b.whole, num);
        return (size_t)snprintf(buf, cap, "%s", num);
    }
    u128_digits((dpas__u128)b.whole * b.frac_den + b.frac_num, num);
    u128_digits(b.frac_den, den);
    return (size_t)snprintf(buf, cap, "%s/%s", num, den);
}

/* a / b as the double nearest the exact quotient (ties to even), for a, b < 2^64, b > 0: one
 * rounding, where (double)a / (double)b rounds up to three times once a or b passes 2^53. */
double dpas__ratio(uint64_t a, uint64_t b)
{
    if (!a || !b)
        return b ? 0.0 : (double)NAN;
    if (a <= (1ull << 53) && b <= (1ull << 53))
        return (double)a / (double)b; /* both exact: the division is the one rounding */
    /* Q = floor(a 2^s / b) with 55 or 56 significant bits, and whether anything is left over */
    const int la = 64 - __builtin_clzll(a), lb = 64 - __builtin_clzll(b);
    int s = 55 + lb - la;
    dpas__u128 q, r;
    if (s >= 0) { /* a 2^s has la + s = 55 + lb <= 119 bits */
        dpas__u128 n = (dpas__u128)a << s;
        q = n / b, r = n % b;
    } else { /* b 2^-s has lb - s = la - 55 < 64 bits */
        dpas__u128 d = (dpas__u128)b << -s;
        q = a / d, r = a % d;
    }
    int lq = 0;
    for (dpas__u128 t = q; t; t >>= 1)
        lq++;
    int drop = lq - 53; /* 2 or 3 */
    uint64_t keep = (uint64_t)(q >> drop);
    dpas__u128 low = q & (((dpas__u128)1 << drop) - 1), half = (dpas__u128)1 << (drop - 1);
    if (low > half || (low == half && (r != 0 || (keep & 1))))
        keep++; /* 2^53 after a carry is still exact */
    return ldexp((double)keep, drop - s);
}

size_t dpas_format_width(dpas_rational w, char *buf, size_t cap)
{
    char num[112];
    dpas_bytes b = {0, 0, 1};
    if (w.den) {
        b.whole = w.num / w.den;
        b.frac_num = w.num % w.den;
        b.frac_den = w.den;
        if (!b.frac_num)
            b.frac_den = 1;
    }
    dpas_format_bytes_exact(b, num, sizeof num);
    if (!dpas_bytes_is_decimal(b)) { /* only a width given as a fraction (the C API), 1/3 B */
        char f[64];
        dpas_format_bytes_fraction(b, f, sizeof f);
        return (size_t)snprintf(buf, cap, "%s B (rounded; exactly %s)", num, f);
    }
    return (size_t)snprintf(buf, cap, "%s B", num);
}

/* v with at most 3 decimals and no trailing zeros. */
static void fmt3(double v, char *out, size_t cap)
{
    snprintf(out, cap, "%.3f", v);
    char *dot = strchr(out, '.');
    if (dot) {
        char *e = out + strlen(out) - 1;
        while (e > dot && *e == '0')
            *e-- = '\0';
        if (e == dot)
            *e = '\0';
    }
}

size_t dpas_format_bytes_human(dpas_bytes b, dpas_units units, char *buf, size_t cap)
{
    static const char *si[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    static const char *iec[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    char num[112];
    if (units != DPAS_UNITS_SI && units != DPAS_UNITS_IEC) {
        dpas_format_bytes_exact(b, num, sizeof num);
        return (size_t)snprintf(buf, cap, "%s B", num);
    }
    const double base = units == DPAS_UNITS_SI ? 1000.0 : 1024.0;
    const char **names = units == DPAS_UNITS_SI ? si : iec;
    long double v = (long double)b.whole + (b.frac_num ? (long double)b.frac_num / b.frac_den : 0);
    int k = 0;
    while (k < 6 && v >= base) {
        v /= base;
        k++;
    }
    if (k == 0 && !b.frac_num) {
        dpas_format_bytes_exact(b, num, sizeof num);
        return (size_t)snprintf(buf, cap, "%s B", num);
    }
    fmt3((double)v, num, sizeof num);
    if (k < 6 && (double)v >= base - 0.0005) { /* 999.9996 kB prints as 1 MB */
        v /= base;
        k++;
        fmt3((double)v, num, sizeof num);
    }
    return (size_t)snprintf(buf, cap, "%s %s", num, names[k]);
}

static dpas__u128 gcd128(dpas__u128 a, dpas__u128 b)
{
    while (b) {
        dpas__u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Cancel common factors between x and y. */
static void cancel(uint64_t *x, uint64_t *y)
{
    uint64_t g = dpas__gcd(*x, *y);
    if (g > 1) {
        *x /= g;
        *y /= g;
    }
}

/* The failure of dpas__bytes_scaled, naming the product. */
static int scaled_fail(dpas_error *err, bool den, uint64_t count, dpas_rational width, uint64_t p,
                       uint64_t q, long double approx)
{
    char what[160];
    snprintf(what, sizeof what, "%llu x %llu/%llu B x %llu/%llu", (unsigned long long)count,
             (unsigned long long)width.num, (unsigned long long)width.den, (unsigned long long)p,
             (unsigned long long)q);
    return den ? range_den(err, what, approx) : range_whole(err, what);
}

int dpas__bytes_scaled(uint64_t count, dpas_rational width, uint64_t p, uint64_t q, dpas_bytes *out,
                       dpas_error *err)
{
    if (width.den == 0 || q == 0)
        return dpas__fail(err, DPAS_EINVAL, "bytes", "zero denominator");
    /* the common case: the product fits 128 bits and the denominator 64, one division */
    dpas__u128 nn = (dpas__u128)count * width.num, dd;
    uint64_t d64;
    if (!__builtin_mul_overflow(width.den, q, &d64) && (nn >> 64) == 0 && p < (1ull << 63)) {
        dd = (dpas__u128)d64;
        nn *= p;
        dpas__u128 w;
        uint64_t rem;
        if ((nn >> 64) == 0) { /* a 64-bit division is several times cheaper */
            w = (uint64_t)nn / d64;
            rem = (uint64_t)nn % d64;
        } else {
            w = nn / dd;
            rem = (uint64_t)(nn % dd);
        }
        if (w > UINT64_MAX)
            return scaled_fail(err, false, count, width, p, q, 0);
        out->whole = (uint64_t)w;
        set_fraction(out, rem, d64);
        return 0;
    }
    /* Cancelled factor by factor, numerator against denominator: the result is then reduced,
     * so a denominator past 2^64 is the value's own (not an intermediate's), and with a
     * denominator below 2^64 a numerator past 2^128 means a whole part past 2^64. */
    uint64_t n[3] = {count, width.num, p}, d[2] = {width.den, q};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            cancel(&n[i], &d[j]);
    dpas__u128 den = (dpas__u128)d[0] * d[1];
    if (den > UINT64_MAX)
        return scaled_fail(err, true, count, width, p, q,
                           (long double)n[0] * n[1] * n[2] / ((long double)d[0] * d[1]));
    dpas__u128 num = (dpas__u128)n[0] * n[1];
    if (n[2] && num > ~(dpas__u128)0 / n[2])
        return scaled_fail(err, false, count, width, p, q, 0);
    num *= n[2];
    dpas__u128 whole = num / den, rem = num % den;
    if (whole > UINT64_MAX)
        return scaled_fail(err, false, count, width, p, q, 0);
    out->whole = (uint64_t)whole;
    set_fraction(out, rem, den); /* den < 2^64: fits */
    return 0;
}

int dpas__bytes_add(dpas_bytes a, dpas_bytes b, dpas_bytes *out, dpas_error *err)
{
    uint64_t whole;
    if (__builtin_add_overflow(a.whole, b.whole, &whole))
        return range_whole(err, "a sum of byte counts");
    /* x/den + y/den with x, y < den < 2^128: their sum can pass 2^128, so it is compared with
     * den before it is formed */
    dpas__u128 den = (dpas__u128)a.frac_den * b.frac_den;
    dpas__u128 x = (dpas__u128)a.frac_num * b.frac_den, y = (dpas__u128)b.frac_num * a.frac_den;
    dpas__u128 num;
    if (x >= den - y) {
        num = x - (den - y);
        if (__builtin_add_overflow(whole, 1u, &whole))
            return range_whole(err, "a sum of byte counts");
    } else {
        num = x + y;
    }
    out->whole = whole;
    if (set_fraction(out, num, den))
        return 0;
    return range_den(err, "a sum of byte counts",
                     (long double)whole + (long double)num / (long double)den);
}

int dpas__bytes_cmp(dpas_bytes a, dpas_bytes b)
{
    if (a.whole != b.whole)
        return a.whole < b.whole ? -1 : 1;
    dpas__u128 x = (dpas__u128)a.frac_num * b.frac_den, y = (dpas__u128)b.frac_num * a.frac_den;
    return (x > y) - (x < y);
}

int dpas__bytes_absdiff(dpas_bytes a, dpas_bytes b, dpas_bytes *out, dpas_error *err)
{
    if (dpas__bytes_cmp(a, b) < 0) {
        dpas_bytes t = a;
        a = b, b = t;
    }
    /* a >= b: whole parts first, borrowing one when b's fraction is the larger (then a's whole
     * part is the larger, so the borrow cannot wrap) */
    uint64_t whole = a.whole - b.whole;
    dpas__u128 den = (dpas__u128)a.frac_den * b.frac_den;
    dpas__u128 x = (dpas__u128)a.frac_num * b.frac_den, y = (dpas__u128)b.frac_num * a.frac_den;
    dpas__u128 num;
    if (x < y) {
        num = den - (y - x); /* not x + den - y, which can pass 2^128 */
        whole--;
    } else {
        num = x - y;
    }
    out->whole = whole;
    if (set_fraction(out, num, den))
        return 0;
    return range_den(err, "a difference of byte counts",
                     (long double)whole + (long double)num / (long double)den);
}

int dpas__bytes_times(dpas_bytes b, uint64_t k, dpas_bytes *out, dpas_error *err)
{
    uint64_t whole;
    dpas__u128 f = (dpas__u128)b.frac_num * k;
    dpas__u128 carry = f / b.frac_den;
    if (__builtin_mul_overflow(b.whole, k, &whole) || carry > UINT64_MAX ||
        __builtin_add_overflow(whole, (uint64_t)carry, &whole)) {
        char what[64];
        snprintf(what, sizeof what, "a byte count times %llu", (unsigned long long)k);
        return range_whole(err, what);
    }
    out->whole = whole;
    set_fraction(out, f % b.frac_den, b.frac_den);
    return 0;
}
