/* SPDX-License-Identifier: Apache-2.0 */
/* JSON documents around tables (doc.h). */
#include "doc.h"

#include <math.h>

static void indent(dpas__doc *d)
{
    dpas__buf_puts(d->b, "\n");
    for (int i = 0; i < d->depth; i++)
        dpas__buf_puts(d->b, "  ");
}

/* The separator and key before a value. */
static void member(dpas__doc *d, const char *key)
{
    if (d->depth > 0) {
        if (!d->first)
            dpas__buf_puts(d->b, ",");
        if (d->inline_)
            dpas__buf_puts(d->b, d->first ? "" : " ");
        else
            indent(d);
    }
    d->first = false;
    if (key) {
        dpas__buf_json_str(d->b, key);
        dpas__buf_puts(d->b, ": ");
    }
}

void dpas__doc_open(dpas__doc *d, const char *key, char bracket)
{
    member(d, key);
    dpas__buf_append(d->b, &bracket, 1);
    d->depth++;
    d->first = true;
}

void dpas__doc_open_inline(dpas__doc *d, const char *key)
{
    dpas__doc_open(d, key, '[');
    d->inline_ = true;
}

void dpas__doc_close(dpas__doc *d, char bracket)
{
    char end = bracket == '{' ? '}' : ']';
    bool empty = d->first;
    d->depth--;
    if (!empty && !d->inline_)
        indent(d);
    dpas__buf_append(d->b, &end, 1);
    d->inline_ = false;
    d->first = false;
    if (!d->depth)
        dpas__buf_puts(d->b, "\n");
}

void dpas__doc_str(dpas__doc *d, const char *key, const char *s)
{
    member(d, key);
    if (s)
        dpas__buf_json_str(d->b, s);
    else
        dpas__buf_puts(d->b, "null");
}

void dpas__doc_real(dpas__doc *d, const char *key, double v)
{
    member(d, key);
    char t[64];
    if (!isfinite(v))
        dpas__buf_puts(d->b, "null");
    else {
        dpas__fmt_double(v, false, t, sizeof t);
        dpas__buf_puts(d->b, t);
    }
}

void dpas__doc_int(dpas__doc *d, const char *key, long long v)
{
    member(d, key);
    dpas__buf_printf(d->b, "%lld", v);
}

void dpas__doc_u64(dpas__doc *d, const char *key, uint64_t v)
{
    member(d, key);
    dpas__buf_printf(d->b, "%llu", (unsigned long long)v);
}

void dpas__doc_bool(dpas__doc *d, const char *key, int v)
{
    member(d, key);
    dpas__buf_puts(d->b, v ? "true" : "false");
}

void dpas__doc_null(dpas__doc *d, const char *key)
{
    member(d, key);
    dpas__buf_puts(d->b, "null");
}
