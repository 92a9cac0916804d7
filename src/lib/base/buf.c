/* SPDX-License-Identifier: Apache-2.0 */
/* A growable string and JSON string literals. (A real's text is shortest.c's; a byte count's,
 * the renderers' render/bytes.c.) */
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

void dpas__buf_list_item(dpas__buf *b, size_t i, size_t n, const char *name)
{
    dpas__buf_puts(b, i == 0 ? "" : i + 1 < n ? ", " : " or ");
    dpas__buf_puts(b, name);
}
