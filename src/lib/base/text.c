/* SPDX-License-Identifier: Apache-2.0 */
/* Small text and number helpers: UTF-8 sequences, ASCII case-insensitive comparison, quoting
 * user text for messages, the 64-bit gcd. The layers above (units, the renderers' escaping)
 * call down to these; nothing here calls up. */
#include "../internal.h"

#include <stdio.h>
#include <string.h>

uint64_t dpas__gcd(uint64_t a, uint64_t b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    int shift = __builtin_ctzll(a | b);
    a >>= __builtin_ctzll(a);
    do {
        b >>= __builtin_ctzll(b);
        if (a > b) {
            uint64_t t = a;
            a = b;
            b = t;
        }
        b -= a;
    } while (b);
    return a << shift;
}

int dpas__strcasecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int ca = (unsigned char)*a, cb = (unsigned char)*b;
        if (ca >= 'A' && ca <= 'Z')
            ca += 'a' - 'A';
        if (cb >= 'A' && cb <= 'Z')
            cb += 'a' - 'A';
        if (ca != cb || !ca)
            return ca - cb;
    }
}

const char *dpas_quote(const char *text, char *buf, size_t cap)
{
    return dpas__quote(text, buf, cap);
}

/* One character of text as the quote writes it, into out (at most 5 bytes); its length. */
static size_t quoted_char(const unsigned char *p, size_t n, char *out)
{
    if (*p == '"' || *p == '\\') {
        out[0] = '\\';
        out[1] = (char)*p;
        return 2;
    }
    if (!n || *p < 0x20 || *p == 0x7f) { /* control and invalid bytes escaped */
        static const char hex[] = "0123456789abcdef";
        out[0] = '\\', out[1] = 'x', out[2] = hex[*p >> 4], out[3] = hex[*p & 15];
        return 4;
    }
    memcpy(out, p, n); /* valid UTF-8 as it is */
    return n;
}

/* Quoted whole when it fits; else cut on a whole character and marked with how much was cut,
 * in bytes of the text (issue 29: a cut said "..." and not how much): "abc..." [cut: 1234
 * bytes]. The mark's room is kept first, sized by the text's whole length; a buffer too small
 * for any count (under 32 bytes) gets "..." alone. */
const char *dpas__quote(const char *text, char *buf, size_t cap)
{
    size_t total = strlen(text), need = 2;
    if (cap < 8)
        return "";
    const unsigned char *p = (const unsigned char *)text;
    char tmp[5];
    while (*p && need < cap) { /* the quoted length, counted only as far as cap */
        size_t n = dpas__utf8_len(p);
        need += quoted_char(p, n, tmp);
        p += n ? n : 1;
    }
    char mark[64];
    size_t ml = 0;
    if (need > cap - 1) {
        ml = (size_t)snprintf(mark, sizeof mark, "...\" [cut: %zu bytes]", total);
        if (ml + 2 > cap)
            ml = 4; /* "...\"" alone */
    }
    size_t room = cap - 1 - ml, o = 0;
    buf[o++] = '"';
    for (p = (const unsigned char *)text; *p;) {
        size_t n = dpas__utf8_len(p), w = quoted_char(p, n, tmp);
        if (o + w + (ml ? 0 : 1) > room)
            break;
        memcpy(buf + o, tmp, w);
        o += w;
        p += n ? n : 1;
    }
    if (!*p) {
        buf[o++] = '"';
        buf[o] = '\0';
        return buf;
    }
    size_t cut = strlen((const char *)p);
    if (ml == 4)
        snprintf(buf + o, cap - o, "...\"");
    else /* cut <= total: the mark fits the room kept for it */
        snprintf(buf + o, cap - o, "...\" [cut: %zu byte%s]", cut, cut == 1 ? "" : "s");
    return buf;
}

/* v with 10 significant digits, as printf's "%.10g" prints it but without printf's cost (a sweep
 * formats millions). The last digit may differ from printf's when v * 10^k lands within an ulp
 * of a rounding tie; the text always reads back within one unit of the tenth digit. */

size_t dpas__utf8_len(const unsigned char *p)
{
    /* the length of a well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates,
     * nothing above U+10FFFF), or 0 */
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned min;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = c & (0xff >> (n + 1));
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

size_t dpas__utf8_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = dpas__utf8_len(p);
        p += n ? n : 1;
        w++;
    }
    return w;
}
