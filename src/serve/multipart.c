/* SPDX-License-Identifier: Apache-2.0 */
/* multipart/form-data bodies (RFC 7578): how a browser or `curl -F` sends a scenario file and an
 * nccl-tests log together. Parsed strictly, as the query is: a boundary that is missing or
 * malformed, a part without a name, a part named twice, a name the route does not take, or text
 * after the closing delimiter that is not whitespace are errors naming what is wrong; nothing is
 * skipped. Each part's content is copied out, NUL-terminated, for the library's readers. */
#include "serve.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

__attribute__((format(printf, 3, 4))) static int bad(dpas_error *err, int status, const char *fmt,
                                                     ...)
{
    va_list ap;
    memset(err, 0, sizeof *err);
    err->code = DPAS_EPARSE;
    snprintf(err->field, sizeof err->field, "body");
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

/* The first occurrence of needle (n bytes) in hay (len bytes), or NULL. */
static const char *find(const char *hay, size_t len, const char *needle, size_t n)
{
    if (n > len)
        return NULL;
    for (size_t i = 0; i + n <= len; i++)
        if (hay[i] == needle[0] && !memcmp(hay + i, needle, n))
            return hay + i;
    return NULL;
}

/* A parameter of a header value (boundary=..., name="..."), unquoted into out; 0, -1 when
 * absent, -2 when longer than cap - 1 bytes or its quote is not closed. Quoted strings may
 * escape a quote with a backslash. */
static int param(const char *value, size_t vlen, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i < vlen; i++) {
        if (value[i] != ';')
            continue;
        size_t j = i + 1;
        while (j < vlen && (value[j] == ' ' || value[j] == '\t'))
            j++;
        if (vlen - j <= klen || strncasecmp(value + j, key, klen) || value[j + klen] != '=')
            continue;
        j += klen + 1;
        size_t o = 0;
        if (j < vlen && value[j] == '"') {
            for (j++; j < vlen && value[j] != '"'; j++) {
                if (value[j] == '\\' && j + 1 < vlen)
                    j++;
                if (o + 1 >= cap)
                    return -2;
                out[o++] = value[j];
            }
            if (j >= vlen)
                return -2; /* an unclosed quote */
        } else {
            for (; j < vlen && value[j] != ';' && value[j] != ' ' && value[j] != '\t'; j++) {
                if (o + 1 >= cap)
                    return -2;
                out[o++] = value[j];
            }
        }
        out[o] = '\0';
        return 0;
    }
    return -1;
}

int srv_parts_parse(srv_request *rq, int takes_scenario, int takes_calibration, dpas_error *err)
{
    const char *ct = rq->content_type;
    if (!rq->body || !ct || strncasecmp(ct, "multipart/form-data", 19) ||
        (ct[19] && ct[19] != ';' && ct[19] != ' '))
        return 0;
    rq->multipart = 1;
    char boundary[80], delim[84];
    if (param(ct, strlen(ct), "boundary", boundary, sizeof boundary) || !boundary[0] ||
        strlen(boundary) > 70)
        return bad(err, 400,
                   "a multipart/form-data body needs a boundary of 1 to 70 characters in its "
                   "Content-Type");
    /* every delimiter but the first follows a CRLF, which belongs to it (RFC 2046) */
    int dn = snprintf(delim, sizeof delim, "\r\n--%s", boundary);
    const char *b = rq->body, *end = rq->body + rq->body_len;
    const char *p = find(b, rq->body_len, delim + 2, (size_t)dn - 2);
    if (!p)
        return bad(err, 400, "the multipart body has no delimiter --%s", boundary);
    /* the preamble before the first delimiter is allowed and carries nothing. The contents and
     * file names are disjoint ranges of the body, so the body's length and two NULs per part
     * hold them all. */
    size_t cap = rq->body_len + 2 * SRV_MAX_PARTS + 1;
    if (!(rq->parts_store = malloc(cap)))
        return bad(err, 500, "out of memory");
    char *store = rq->parts_store;
    p += dn - 2;
    for (;;) {
        if (end - p >= 2 && p[0] == '-' && p[1] == '-') { /* the closing delimiter */
            for (p += 2; p < end; p++)
                if (*p != '\r' && *p != '\n' && *p != ' ' && *p != '\t')
                    return bad(err, 400, "text after the closing delimiter of the multipart body");
            break;
        }
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
            return bad(err, 400, "a multipart delimiter must end its line (CRLF)");
        p += 2;
        /* the part's headers, up to an empty line */
        char name[64] = "", filename[128] = "";
        int have_name = 0, have_file = 0;
        for (;;) {
            const char *eol = find(p, (size_t)(end - p), "\r\n", 2);
            if (!eol)
                return bad(err, 400, "a part of the multipart body has no end to its headers");
            size_t l = (size_t)(eol - p);
            if (!l) {
                p = eol + 2;
                break;
            }
            if (l > 20 && !strncasecmp(p, "Content-Disposition:", 20)) {
                const char *v = p + 20;
                size_t vl = l - 20;
                while (vl && (*v == ' ' || *v == '\t'))
                    v++, vl--;
                if (vl < 9 || strncasecmp(v, "form-data", 9))
                    return bad(err, 400, "a part's Content-Disposition must be form-data");
                int pn = param(v, vl, "name", name, sizeof name);
                int pf = param(v, vl, "filename", filename, sizeof filename);
                if (pn == -2 || pf == -2)
                    return bad(err, 400,
                               "a part's %s is longer than %zu bytes, or its quote is not closed",
                               pn == -2 ? "name" : "file name",
                               (pn == -2 ? sizeof name : sizeof filename) - 1);
                have_name = pn == 0;
                have_file = pf == 0;
            }
            p = eol + 2;
        }
        if (!have_name || !name[0])
            return bad(err, 400, "a part of the multipart body has no name");
        int known = (takes_scenario && !strcmp(name, "scenario")) ||
                    (takes_calibration && !strcmp(name, "calibration"));
        if (!known) {
            char q[96];
            return bad(err, 400, "the body part %s is not one this path takes; it takes %s",
                       dpas_quote(name, q, sizeof q),
                       takes_scenario && takes_calibration ? "\"scenario\" and \"calibration\""
                       : takes_scenario                    ? "\"scenario\""
                       : takes_calibration                 ? "\"calibration\""
                                                           : "none");
        }
        const char *next = find(p, (size_t)(end - p), delim, (size_t)dn);
        if (!next)
            return bad(err, 400,
                       "the multipart body ends inside the part \"%s\" (no closing "
                       "delimiter)",
                       name);
        for (size_t i = 0; i < rq->nparts; i++)
            if (!strcmp(rq->parts[i].name, name) && strcmp(name, "calibration"))
                return bad(err, 400, "the body part \"%s\" is given twice; give it once", name);
        if (rq->nparts == SRV_MAX_PARTS)
            return bad(err, 413, "the multipart body has more than %d parts", SRV_MAX_PARTS);
        srv_part *pt = &rq->parts[rq->nparts++];
        size_t len = (size_t)(next - p);
        memcpy(store, p, len);
        store[len] = '\0';
        pt->data = store;
        pt->len = len;
        store += len + 1;
        pt->name = !strcmp(name, "scenario") ? "scenario" : "calibration";
        pt->filename = NULL;
        if (have_file && filename[0]) {
            size_t fl = strlen(filename);
            if ((size_t)(store - rq->parts_store) + fl + 1 > cap)
                return bad(err, 500, "the parts of the body outgrew their store (a bug)");
            memcpy(store, filename, fl + 1);
            pt->filename = store;
            store += fl + 1;
        }
        pt->used = 0;
        p = next + dn;
    }
    return 0;
}

void srv_parts_free(srv_request *rq)
{
    free(rq->parts_store);
    rq->parts_store = NULL;
    rq->nparts = 0;
}

const srv_part *srv_part_get(srv_request *rq, const char *name, size_t *count)
{
    srv_part *first = NULL;
    size_t n = 0;
    for (size_t i = 0; i < rq->nparts; i++)
        if (!strcmp(rq->parts[i].name, name)) {
            rq->parts[i].used = 1;
            if (!n++)
                first = &rq->parts[i];
        }
    if (count)
        *count = n;
    return first;
}

const char *srv_scenario_body(srv_request *rq, size_t *len)
{
    if (!rq->multipart) {
        *len = rq->body_len;
        return rq->body;
    }
    const srv_part *p = srv_part_get(rq, "scenario", NULL);
    *len = p ? p->len : 0;
    return p ? p->data : NULL;
}
