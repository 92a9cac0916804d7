/* Exact reading of widths and counts from decimal text, and formatting of byte counts.
 * Nothing here goes through a double: a decimal is read as mantissa × 10^exponent in integers,
 * so "70.6e9" is 70600000000 and "4.127 bit" is 4127/8000 byte, exactly. */
#include "../internal.h"

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
    "expected a number with a unit (2 B, 2 bytes, 16 bit) or a precision name (fp32, tf32, "
    "bf16, fp16, fp8, int8, int4)";

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
        return dpas__fail(err, DPAS_ERANGE, field,
                          "%s has more than 38 significant digits, got %s", field,
                          dpas__quote(text, q, sizeof q));
    if (rc == DEC_EXP)
        return dpas__fail(err, DPAS_ERANGE, field, "%s is out of range, got %s", field,
                          dpas__quote(text, q, sizeof q));
    if (rc != DEC_OK)
        return dpas__fail(err, DPAS_EPARSE, field, "%s: cannot read %s as a width; %s", field,
                          dpas__quote(text, q, sizeof q), width_hint);
    const char *u = end;
    while (is_space(*u))
        u++;
    size_t ulen = (size_t)(p + n - u);
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
                          "got %s", field, dpas__quote(text, q, sizeof q));
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
    case 'k': case 'K': scale = 3; s++; break;
    case 'M': scale = 6; s++; break;
    case 'B': case 'G': scale = 9; s++; break;
    case 'T': scale = 12; s++; break;
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
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v) ||
            v > (uint64_t)INT64_MAX + neg) {
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
        if (w > UINT64_MAX)
            return dpas__fail(err, DPAS_ERANGE, "bytes",
                              "%llu parameters x %llu/%llu B reaches 2^64 bytes, the largest byte "
                              "count dpas holds exactly",
                              (unsigned long long)count, (unsigned long long)width.num,
                              (unsigned long long)width.den);
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

size_t dpas_format_bytes_exact(dpas_bytes b, char *buf, size_t cap)
{
    char tmp[96], rev[24];
    int n = 0, r = 0;
    uint64_t w = b.whole;
    do {
        rev[r++] = (char)('0' + w % 10);
        w /= 10;
    } while (w);
    while (r)
        tmp[n++] = rev[--r];
    tmp[n] = '\0';
    if (b.frac_num && b.frac_den) {
        tmp[n++] = '.';
        int digits = 0;
        if (b.frac_den < (1ull << 59)) { /* rem x 10 fits 64 bits */
            uint64_t rem = b.frac_num;
            while (rem && digits < 30) {
                rem *= 10;
                tmp[n++] = (char)('0' + (int)(rem / b.frac_den));
                rem %= b.frac_den;
                digits++;
            }
        } else {
            dpas__u128 rem = b.frac_num;
            while (rem && digits < 30) {
                rem *= 10;
                tmp[n++] = (char)('0' + (int)(rem / b.frac_den));
                rem %= b.frac_den;
                digits++;
            }
        }
        tmp[n] = '\0';
    }
    if (cap) {
        size_t c = (size_t)n < cap ? (size_t)n : cap - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return (size_t)n;
}

size_t dpas_format_width(dpas_rational w, char *buf, size_t cap)
{
    char num[96];
    dpas_bytes b = {0, 0, 1};
    if (w.den) {
        b.whole = w.num / w.den;
        b.frac_num = w.num % w.den;
        b.frac_den = w.den;
        if (!b.frac_num)
            b.frac_den = 1;
    }
    dpas_format_bytes_exact(b, num, sizeof num);
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
    char num[64];
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

int dpas__bytes_scaled(uint64_t count, dpas_rational width, uint64_t p, uint64_t q,
                       dpas_bytes *out, dpas_error *err)
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
            goto range;
        out->whole = (uint64_t)w;
        set_fraction(out, rem, d64);
        return 0;
    }
    uint64_t n[3] = {count, width.num, p}, d[2] = {width.den, q};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            cancel(&n[i], &d[j]);
    dpas__u128 num = (dpas__u128)n[0] * n[1];
    if (n[2] && num > ~(dpas__u128)0 / n[2])
        goto range;
    num *= n[2];
    dpas__u128 den = (dpas__u128)d[0] * d[1];
    dpas__u128 whole = num / den, rem = num % den;
    if (whole > UINT64_MAX)
        goto range;
    out->whole = (uint64_t)whole;
    if (set_fraction(out, rem, den))
        return 0;
range:
    return dpas__fail(err, DPAS_ERANGE, "bytes",
                      "%llu x %llu/%llu B x %llu/%llu is beyond the exact range of dpas (2^64 bytes)",
                      (unsigned long long)count, (unsigned long long)width.num,
                      (unsigned long long)width.den, (unsigned long long)p, (unsigned long long)q);
}

int dpas__bytes_add(dpas_bytes a, dpas_bytes b, dpas_bytes *out, dpas_error *err)
{
    uint64_t whole;
    if (__builtin_add_overflow(a.whole, b.whole, &whole))
        goto range;
    dpas__u128 num = (dpas__u128)a.frac_num * b.frac_den + (dpas__u128)b.frac_num * a.frac_den;
    dpas__u128 den = (dpas__u128)a.frac_den * b.frac_den;
    if (num >= den) {
        num -= den;
        if (__builtin_add_overflow(whole, 1u, &whole))
            goto range;
    }
    out->whole = whole;
    if (set_fraction(out, num, den))
        return 0;
range:
    return dpas__fail(err, DPAS_ERANGE, "bytes", "a byte sum is beyond the exact range of dpas (2^64 bytes)");
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
    /* a >= b: whole parts first, borrowing one when b's fraction is the larger */
    uint64_t whole = a.whole - b.whole;
    dpas__u128 den = (dpas__u128)a.frac_den * b.frac_den;
    dpas__u128 x = (dpas__u128)a.frac_num * b.frac_den, y = (dpas__u128)b.frac_num * a.frac_den;
    if (x < y) {
        x += den;
        whole--;
    }
    out->whole = whole;
    if (set_fraction(out, x - y, den))
        return 0;
    return dpas__fail(err, DPAS_ERANGE, "bytes", "a byte difference is beyond the exact range of dpas");
}

int dpas__bytes_times(dpas_bytes b, uint64_t k, dpas_bytes *out, dpas_error *err)
{
    uint64_t whole;
    if (__builtin_mul_overflow(b.whole, k, &whole))
        goto range;
    dpas__u128 f = (dpas__u128)b.frac_num * k;
    dpas__u128 carry = f / b.frac_den;
    if (carry > UINT64_MAX || __builtin_add_overflow(whole, (uint64_t)carry, &whole))
        goto range;
    out->whole = whole;
    set_fraction(out, f % b.frac_den, b.frac_den);
    return 0;
range:
    return dpas__fail(err, DPAS_ERANGE, "bytes", "a byte count times %llu is beyond the exact "
                      "range of dpas (2^64 bytes)", (unsigned long long)k);
}
