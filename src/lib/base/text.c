/* Small text and number helpers: ASCII case-insensitive comparison, quoting user text for
 * messages, the 64-bit gcd. */
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

const char *dpas__quote(const char *text, char *buf, size_t cap)
{
    size_t o = 0;
    if (cap < 8)
        return "";
    buf[o++] = '"';
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        size_t n = dpas__utf8_len(p); /* valid UTF-8 as it is; control and invalid bytes escaped */
        if (o + 8 + n >= cap) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (*p == '"' || *p == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)*p++;
        } else if (!n || *p < 0x20 || *p == 0x7f) {
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", *p++);
        } else {
            memcpy(buf + o, p, n);
            o += n;
            p += n;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

/* v with 10 significant digits, as printf's "%.10g" prints it but without printf's cost (a sweep
 * formats millions). The last digit may differ from printf's when v * 10^k lands within an ulp
 * of a rounding tie; the text always reads back within one unit of the tenth digit. */
