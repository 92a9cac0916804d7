/* A growable string, and the text forms the renderers share: JSON strings, exact byte counts,
 * shortest doubles, "%.10g" without printf. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool buf_reserve(dpas__buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void dpas__buf_append(dpas__buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void dpas__buf_puts(dpas__buf *b, const char *s) { dpas__buf_append(b, s, strlen(s)); }

void dpas__buf_printf(dpas__buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        dpas__buf_append(b, small, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0 when it is not one. */
void dpas__buf_json_str(dpas__buf *b, const char *s)
{
    dpas__buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x80) { /* valid UTF-8 as it is; any other byte as U+FFFD, so JSON stays valid */
            size_t n = dpas__utf8_len(p);
            if (n) {
                dpas__buf_append(b, (const char *)p, n);
                p += n - 1;
            } else {
                dpas__buf_puts(b, "\\ufffd");
            }
            continue;
        }
        switch (*p) {
        case '"': dpas__buf_append(b, "\\\"", 2); break;
        case '\\': dpas__buf_append(b, "\\\\", 2); break;
        case '\n': dpas__buf_append(b, "\\n", 2); break;
        case '\t': dpas__buf_append(b, "\\t", 2); break;
        case '\r': dpas__buf_append(b, "\\r", 2); break;
        default:
            if (*p < 0x20)
                dpas__buf_printf(b, "\\u%04x", *p);
            else
                dpas__buf_append(b, (const char *)p, 1);
        }
    }
    dpas__buf_append(b, "\"", 1);
}

void dpas__buf_bytes_exact(dpas__buf *b, dpas_bytes v)
{
    char t[112]; /* enough for any byte count (dpas/units.h) */
    size_t n = dpas_format_bytes_exact(v, t, sizeof t);
    dpas__buf_append(b, t, n < sizeof t ? n : sizeof t - 1);
}

void dpas__buf_bytes_marked(dpas__buf *b, dpas_bytes v, const char *unit)
{
    dpas__buf_bytes_exact(b, v);
    dpas__buf_puts(b, unit ? unit : "");
    if (!dpas_bytes_is_decimal(v)) {
        char f[64];
        dpas_format_bytes_fraction(v, f, sizeof f);
        dpas__buf_printf(b, " (rounded; exactly %s)", f);
    }
}

void dpas__buf_json_bytes(dpas__buf *b, const char *key, dpas_bytes v)
{
    dpas__buf_json_str(b, key);
    dpas__buf_puts(b, ": ");
    dpas__buf_bytes_exact(b, v);
    if (!dpas_bytes_is_decimal(v)) {
        char f[64];
        dpas__buf k = {0};
        dpas__buf_puts(&k, key);
        dpas__buf_puts(&k, "_exact");
        dpas_format_bytes_fraction(v, f, sizeof f);
        dpas__buf_puts(b, ", ");
        if (k.oom)
            b->oom = true;
        else
            dpas__buf_json_str(b, k.data);
        dpas__buf_puts(b, ": ");
        dpas__buf_json_str(b, f);
        free(k.data);
    }
}

char *dpas__buf_finish(dpas__buf *b, dpas_error *err)
{
    if (!b->oom && !b->data)
        buf_reserve(b, 0);
    if (b->oom) {
        free(b->data);
        b->data = NULL;
        dpas__fail(err, DPAS_ENOMEM, "", "out of memory while rendering");
        return NULL;
    }
    b->data[b->len] = '\0';
    char *out = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return out;
}

void dpas_free(void *p) { free(p); }

size_t dpas__fmt_double(double v, bool python_style, char *buf, size_t cap)
{
    char tmp[64];
    if (isnan(v))
        snprintf(tmp, sizeof tmp, "nan");
    else if (isinf(v))
        snprintf(tmp, sizeof tmp, v > 0 ? "inf" : "-inf");
    else if (v < 1e16 && v > -1e16 && v == (double)(long long)v) {
        /* whole values print in full below 1e16, as Python's repr does */
        snprintf(tmp, sizeof tmp, "%lld%s", (long long)v, python_style ? ".0" : "");
    } else {
        /* The fewest significant digits that read back to the same double. */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(tmp, sizeof tmp, "%.*g", prec, v);
            if (strtod(tmp, NULL) == v)
                break;
        }
        if (python_style && !strpbrk(tmp, ".eEn"))
            strcat(tmp, ".0");
    }
    return (size_t)snprintf(buf, cap, "%s", tmp);
}

/* Binary GCD (Stein): shifts and subtractions, no division. */
size_t dpas__fmt_g10(double v, char *b)
{
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t o = 0;
    if (v == 0) {
        b[0] = '0', b[1] = '\0';
        return 1;
    }
    if (!isfinite(v))
        return (size_t)snprintf(b, 32, "%.10g", v);
    if (v < 0) {
        b[o++] = '-';
        v = -v;
    }
    int e = (int)floor(log10(v)), k = 9 - e;
    if (k < -22 || k > 22)
        return o + (size_t)snprintf(b + o, 32, "%.10g", v);
    /* extended precision keeps v x 10^k exact enough that only true ties can round apart */
    long double scaled = k >= 0 ? (long double)v * p10[k] : (long double)v / p10[-k];
    uint64_t m = (uint64_t)rintl(scaled); /* ties to even, as printf */
    if (m >= 10000000000ull) {            /* log10 fell short, or rounding carried */
        m = (m + 5) / 10;
        e++;
    } else if (m < 1000000000ull) { /* log10 overshot */
        e--;
        k = 9 - e;
        if (k > 22)
            return o + (size_t)snprintf(b + o, 32, "%.10g", v);
        m = (uint64_t)rintl((long double)v * p10[k]);
    }
    char d[10];
    for (int i = 9; i >= 0; i--) {
        d[i] = (char)('0' + m % 10);
        m /= 10;
    }
    int nd = 10;
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    if (e < -4 || e >= 10) {
        b[o++] = d[0];
        if (nd > 1) {
            b[o++] = '.';
            for (int i = 1; i < nd; i++)
                b[o++] = d[i];
        }
        o += (size_t)snprintf(b + o, 8, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
        return o;
    }
    if (e >= 0) {
        for (int i = 0; i <= e; i++)
            b[o++] = i < nd ? d[i] : '0';
        if (nd > e + 1) {
            b[o++] = '.';
            for (int i = e + 1; i < nd; i++)
                b[o++] = d[i];
        }
    } else {
        b[o++] = '0';
        b[o++] = '.';
        for (int i = 0; i < -e - 1; i++)
            b[o++] = '0';
        for (int i = 0; i < nd; i++)
            b[o++] = d[i];
    }
    b[o] = '\0';
    return o;
}

size_t dpas_format_g10(double v, char *buf) { return dpas__fmt_g10(v, buf); }
