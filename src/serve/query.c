/* SPDX-License-Identifier: Apache-2.0 */
/* Query strings and path segments, decoded strictly: a malformed escape, invalid UTF-8, a control
 * character, an empty key or value and a repeated key are errors, never guessed at. The decoded
 * text of a query is never longer than the raw one, so one buffer holds all of it. */
#include "serve.h"

#include <stdlib.h>
#include <string.h>

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid: no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return len;
}

__attribute__((format(printf, 5, 6))) static int fail(dpas_error *err, int status, int code,
                                                      const char *field, const char *fmt, ...)
{
    va_list ap;
    memset(err, 0, sizeof *err);
    err->code = code;
    snprintf(err->field, sizeof err->field, "%s", field);
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

/* Decode raw[0..len) into out (at least len + 1 bytes); what names the text in messages
 * ("query parameter \"dp_degree\"", "the path"). form: '+' is a space (query strings). */
static int decode(const char *raw, size_t len, int form, char *out, size_t *outlen,
                  const char *what, const char *field, dpas_error *err)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c == '%') {
            int a = i + 1 < len ? hexval((unsigned char)raw[i + 1]) : -1;
            int b = i + 2 < len ? hexval((unsigned char)raw[i + 2]) : -1;
            if (a < 0 || b < 0)
                return fail(err, 400, DPAS_EPARSE, field,
                            "%s: a '%%' must be followed by two hexadecimal digits (at byte %zu)",
                            what, i + 1);
            out[o++] = (char)(a * 16 + b);
            i += 2;
        } else if (c == '+' && form) {
            out[o++] = ' ';
        } else if (c < 0x21 || c >= 0x7f) {
            return fail(err, 400, DPAS_EPARSE, field,
                        "%s: a raw control, space or non-ASCII byte at byte %zu; percent-encode it",
                        what, i + 1);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    for (size_t i = 0; i < o;) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == 0x7f)
            return fail(
                err, 400, DPAS_EPARSE, field,
                "%s: a control character (an encoded byte below 0x20 or 0x7f) at decoded byte %zu",
                what, i + 1);
        size_t n = utf8_seq((const unsigned char *)out + i, o - i);
        if (!n)
            return fail(err, 400, DPAS_EPARSE, field, "%s: not valid UTF-8 at decoded byte %zu",
                        what, i + 1);
        i += n;
    }
    *outlen = o;
    return 0;
}

int srv_decode_segment(const char *raw, size_t len, char *out, size_t cap, const char *what,
                       dpas_error *err)
{
    if (len + 1 > cap)
        return fail(err, 414, DPAS_ERANGE, "path", "%s is longer than %zu bytes", what, cap - 1);
    size_t n;
    return decode(raw, len, 0, out, &n, what, "path", err);
}

int srv_query_parse(const char *raw, size_t len, srv_query *q, dpas_error *err)
{
    memset(q, 0, sizeof *q);
    if (!len)
        return 0;
    if (!(q->store = malloc(len + 1)))
        return fail(err, 500, DPAS_ENOMEM, "", "out of memory");
    char *out = q->store;
    size_t pos = 0, index = 0;
    while (pos <= len) {
        const char *seg = raw + pos;
        const char *amp = memchr(seg, '&', len - pos);
        size_t seglen = amp ? (size_t)(amp - seg) : len - pos;
        index++;
        if (!seglen)
            return fail(
                err, 400, DPAS_EPARSE, "query",
                "malformed query: parameter %zu is empty (two '&' in a row, or one at an end)",
                index);
        if (q->n == SRV_MAX_PARAMS)
            return fail(err, 414, DPAS_ERANGE, "query", "the query has more than %d parameters",
                        SRV_MAX_PARAMS);
        const char *eq = memchr(seg, '=', seglen);
        size_t klen = eq ? (size_t)(eq - seg) : seglen;
        char what[SRV_MAX_KEY + 48];
        size_t kout, vout;
        if (!klen)
            return fail(err, 400, DPAS_EPARSE, "query",
                        "malformed query: parameter %zu has no key (it starts with '=')", index);
        if (klen > 3 * SRV_MAX_KEY)
            return fail(err, 414, DPAS_ERANGE, "query", "a query key is longer than %d bytes",
                        SRV_MAX_KEY);
        snprintf(what, sizeof what, "query key %zu", index);
        int st = decode(seg, klen, 1, out, &kout, what, "query", err);
        if (st)
            return st;
        const char *key = out;
        if (kout > SRV_MAX_KEY)
            return fail(err, 414, DPAS_ERANGE, "query", "a query key is longer than %d bytes",
                        SRV_MAX_KEY);
        if (!kout)
            return fail(err, 400, DPAS_EPARSE, "query",
                        "malformed query: parameter %zu has an empty key", index);
        out += kout + 1;
        for (size_t i = 0; i < q->n; i++)
            if (!strcmp(q->p[i].key, key))
                return fail(err, 400, DPAS_EINVAL, key, "%s is given twice; give it once", key);
        snprintf(what, sizeof what, "query parameter \"%s\"", key);
        if (!eq)
            return fail(err, 400, DPAS_EPARSE, key,
                        "query parameter \"%s\" has no value; write key=value", key);
        size_t vlen = seglen - klen - 1;
        if (!vlen)
            return fail(err, 400, DPAS_EINVAL, key,
                        "query parameter \"%s\" is empty; give a value or leave the key out", key);
        if (vlen > 3 * SRV_MAX_VALUE)
            return fail(err, 414, DPAS_ERANGE, key,
                        "query parameter \"%s\" is longer than %d bytes", key, SRV_MAX_VALUE);
        st = decode(eq + 1, vlen, 1, out, &vout, what, key, err);
        if (st)
            return st;
        if (vout > SRV_MAX_VALUE)
            return fail(err, 414, DPAS_ERANGE, key,
                        "query parameter \"%s\" is longer than %d bytes", key, SRV_MAX_VALUE);
        q->p[q->n].key = key;
        q->p[q->n].value = out;
        q->p[q->n].used = 0;
        q->n++;
        out += vout + 1;
        pos += seglen + 1;
        if (!amp)
            break;
        if (pos == len) /* a trailing '&' */
            return fail(
                err, 400, DPAS_EPARSE, "query",
                "malformed query: parameter %zu is empty (two '&' in a row, or one at an end)",
                index + 1);
    }
    return 0;
}

void srv_query_free(srv_query *q)
{
    free(q->store);
    q->store = NULL;
    q->n = 0;
}

const char *srv_query_get(srv_query *q, const char *key)
{
    for (size_t i = 0; i < q->n; i++)
        if (!strcmp(q->p[i].key, key)) {
            q->p[i].used = 1;
            return q->p[i].value;
        }
    return NULL;
}
