/* SPDX-License-Identifier: Apache-2.0 */
/* The one rule for printing a real: the shortest decimal that reads back to the same double,
 * and of those the nearest to it. The digits come from Ryu's method (Adams 2018, "Ryu: fast
 * float-to-string conversion", PLDI): the interval of decimals that round to the double is
 * scaled by a power of ten held in 128 bits (pow5.inc, generated) and digits are dropped while
 * the interval still holds one, with no printf and no strtod. The text is laid out as printf's
 * %g at that many digits, and a whole number below 1e16 in full, as Python's repr does. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pow5.inc"

/* ceil(log2(5^e)) (1 for e = 0), floor(log10(2^e)), floor(log10(5^e)): exact in the ranges a
 * double needs (e < 3529, 1651 and 2621). */
static int pow5bits(int e) { return (int)(((uint32_t)e * 1217359u) >> 19) + 1; }
static int log10_pow2(int e) { return (int)(((uint32_t)e * 78913u) >> 18); }
static int log10_pow5(int e) { return (int)(((uint32_t)e * 732923u) >> 20); }

static int pow5_factor(uint64_t v)
{
    int n = 0;
    while (v && v % 5 == 0) {
        v /= 5;
        n++;
    }
    return n;
}

/* (m x mul) >> j for the 128-bit mul {low, high}, j >= 64. */
static uint64_t mul_shift(uint64_t m, const uint64_t mul[2], int j)
{
    dpas__u128 b0 = (dpas__u128)m * mul[0], b2 = (dpas__u128)m * mul[1];
    return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

/* The shortest digits of a positive finite double: *digits x 10^*exp. */
static void shortest_digits(double v, uint64_t *digits, int *exp)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const uint64_t ieee_m = bits & ((1ull << 52) - 1);
    const int ieee_e = (int)((bits >> 52) & 0x7ff);
    /* the double is m2 x 2^e2; its neighbours' midpoints are (4 m2 +- 2) x 2^(e2 - 2), the lower
     * one nearer when m2 is a power of two (the exponent steps down below it) */
    const int e2 = (ieee_e ? ieee_e : 1) - 1023 - 52 - 2;
    const uint64_t m2 = ieee_e ? (1ull << 52) | ieee_m : ieee_m;
    const bool even = (m2 & 1) == 0; /* ties to even: the bounds themselves round to it */
    const uint64_t mv = 4 * m2, mm_shift = ieee_m != 0 || ieee_e <= 1;
    uint64_t vr, vp, vm;
    int e10;
    bool vm_zeros = false, vr_zeros = false; /* the digits dropped from vm, vr were all zero */
    if (e2 >= 0) {
        const int q = log10_pow2(e2) - (e2 > 3);
        const int j = -e2 + q + DPAS__POW5_INV_BITS + pow5bits(q) - 1;
        e10 = q;
        vr = mul_shift(4 * m2, pow5_inv[q], j);
        vp = mul_shift(4 * m2 + 2, pow5_inv[q], j);
        vm = mul_shift(4 * m2 - 1 - mm_shift, pow5_inv[q], j);
        if (q <= 21) { /* only then can the exact quotients be whole */
            if (mv % 5 == 0)
                vr_zeros = pow5_factor(mv) >= q;
            else if (even)
                vm_zeros = pow5_factor(mv - 1 - mm_shift) >= q;
            else
                vp -= pow5_factor(mv + 2) >= q;
        }
    } else {
        const int q = log10_pow5(-e2) - (-e2 > 1), i = -e2 - q;
        const int j = q - (pow5bits(i) - DPAS__POW5_BITS);
        e10 = q + e2;
        vr = mul_shift(4 * m2, pow5[i], j);
        vp = mul_shift(4 * m2 + 2, pow5[i], j);
        vm = mul_shift(4 * m2 - 1 - mm_shift, pow5[i], j);
        if (q <= 1) {
            vr_zeros = true;
            if (even)
                vm_zeros = mm_shift == 1;
            else
                vp--;
        } else if (q < 63) {
            vr_zeros = (mv & ((1ull << q) - 1)) == 0;
        }
    }
    int removed = 0;
    unsigned last = 0; /* the last digit dropped from vr */
    if (vm_zeros || vr_zeros) {
        /* the rare exact cases: track whether every digit dropped was zero */
        for (; vp / 10 > vm / 10; removed++) {
            vm_zeros &= vm % 10 == 0;
            vr_zeros &= last == 0;
            last = (unsigned)(vr % 10);
            vr /= 10, vp /= 10, vm /= 10;
        }
        for (; vm_zeros && vm % 10 == 0; removed++) {
            vr_zeros &= last == 0;
            last = (unsigned)(vr % 10);
            vr /= 10, vp /= 10, vm /= 10;
        }
        if (vr_zeros && last == 5 && vr % 2 == 0)
            last = 4; /* a true tie: to even */
        *digits = vr + ((vr == vm && (!even || !vm_zeros)) || last >= 5);
    } else {
        bool up = false;
        for (; vp / 10 > vm / 10; removed++) {
            up = vr % 10 >= 5;
            vr /= 10, vp /= 10, vm /= 10;
        }
        *digits = vr + (vr == vm || up);
    }
    *exp = e10 + removed;
}

/* The digits of d, most significant first; their count. */
static int decimal_digits(uint64_t d, char out[20])
{
    char t[20];
    int n = 0;
    do {
        t[n++] = (char)('0' + d % 10);
        d /= 10;
    } while (d);
    for (int i = 0; i < n; i++)
        out[i] = t[n - 1 - i];
    return n;
}

size_t dpas__fmt_double(double v, bool python_style, char *buf, size_t cap)
{
    char t[40], d[20];
    size_t o = 0;
    if (isnan(v) || isinf(v))
        return (size_t)snprintf(buf, cap, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    if (v == 0)
        return (size_t)snprintf(buf, cap, "%s", python_style ? "0.0" : "0");
    if (v < 0) {
        t[o++] = '-';
        v = -v;
    }
    uint64_t digits;
    int e;
    shortest_digits(v, &digits, &e);
    const int n = decimal_digits(digits, d), x = e + n - 1; /* x: the leading digit's power */
    bool point = false;
    if (v < 1e16 && v == floor(v)) { /* whole: in full, as Python's repr */
        o += (size_t)snprintf(t + o, sizeof t - o, "%llu", (unsigned long long)v);
    } else if (x < -4 || x >= n) { /* as %.<n>g: an exponent */
        t[o++] = d[0];
        if (n > 1) {
            t[o++] = '.';
            memcpy(t + o, d + 1, (size_t)(n - 1));
            o += (size_t)(n - 1);
        }
        o += (size_t)snprintf(t + o, sizeof t - o, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
        point = true;
    } else if (x < 0) { /* 0.000ddd */
        t[o++] = '0', t[o++] = '.';
        memset(t + o, '0', (size_t)(-x - 1));
        o += (size_t)(-x - 1);
        memcpy(t + o, d, (size_t)n);
        o += (size_t)n;
        point = true;
    } else { /* ddd.ddd, or all the digits of a whole number from 1e16 (x = n - 1) */
        memcpy(t + o, d, (size_t)x + 1);
        o += (size_t)x + 1;
        if (x + 1 < n) {
            t[o++] = '.';
            memcpy(t + o, d + x + 1, (size_t)(n - x - 1));
            o += (size_t)(n - x - 1);
            point = true;
        }
    }
    if (python_style && !point)
        t[o++] = '.', t[o++] = '0';
    t[o] = '\0';
    return (size_t)snprintf(buf, cap, "%s", t);
}

size_t dpas_format_real(double v, char *buf, size_t cap)
{
    return dpas__fmt_double(v, false, buf, cap);
}
