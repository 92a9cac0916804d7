/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP content negotiation around the handlers: the format of a table endpoint's answer (Accept:
 * text/csv gives the CLI's -o csv), validators (a strong ETag over the body; If-None-Match
 * answered 304 Not Modified) and compression (gzip when Accept-Encoding allows it, through zlib
 * opened at first use, as libmicrohttpd is: the dpas command does not load it). */
#include "serve.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

/* ---- Accept ---------------------------------------------------------------------------------- */

/* The handlers whose CLI command writes CSV (-o csv), and so answer Accept: text/csv. */
static int writes_csv(srv_handler fn)
{
    static const srv_handler csv[] = {srv_api_eval,     srv_api_scenario, srv_api_scenarios,
                                      srv_api_cost,     srv_api_rules,    srv_api_inventory,
                                      srv_api_memory,   srv_api_sweep,    srv_api_calibrate,
                                      srv_api_registry, srv_api_step};
    for (size_t i = 0; i < sizeof csv / sizeof csv[0]; i++)
        if (fn == csv[i])
            return 1;
    return 0;
}

/* The quality a header of comma-separated media ranges (or codings) gives to type/sub: that of
 * its most specific match ("type/sub" over "type/ *" over "* / *"), 0 when none matches, and
 * -1 when the header says nothing (absent: everything is acceptable). For codings, sub is NULL
 * and only "name" and "*" match. */
static double quality(const char *header, const char *type, const char *sub)
{
    if (!header)
        return -1;
    double q_exact = -1, q_type = -1, q_any = -1;
    for (const char *p = header; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *end = p + strcspn(p, ",");
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *tend = semi ? semi : end;
        while (tend > p && (tend[-1] == ' ' || tend[-1] == '\t'))
            tend--;
        size_t tl = (size_t)(tend - p);
        double q = 1;
        for (const char *a = semi; a && a < end; a = memchr(a + 1, ';', (size_t)(end - a - 1))) {
            const char *k = a + 1;
            while (*k == ' ' || *k == '\t')
                k++;
            if ((k[0] == 'q' || k[0] == 'Q') && k[1] == '=')
                q = strtod(k + 2, NULL);
        }
        if (q < 0 || q > 1 || q != q)
            q = 0;
        char full[96];
        if (sub)
            snprintf(full, sizeof full, "%s/%s", type, sub);
        else
            snprintf(full, sizeof full, "%s", type);
        if (tl == strlen(full) && !strncasecmp(p, full, tl))
            q_exact = q;
        else if (sub && tl == strlen(type) + 2 && !strncasecmp(p, type, strlen(type)) &&
                 !strncmp(p + strlen(type), "/*", 2))
            q_type = q;
        else if ((sub && tl == 3 && !strncmp(p, "*/*", 3)) || (!sub && tl == 1 && *p == '*'))
            q_any = q;
        p = end;
    }
    return q_exact >= 0 ? q_exact : q_type >= 0 ? q_type : q_any >= 0 ? q_any : 0;
}

int srv_negotiate_format(srv_request *rq, srv_handler fn, srv_response *r)
{
    rq->format = DPAS_FORMAT_JSON;
    double qj = quality(rq->accept, "application", "json");
    if (qj < 0) /* no Accept: JSON */
        return 0;
    double qc = writes_csv(fn) ? quality(rq->accept, "text", "csv") : 0;
    if (qc > 0 && qc > qj) {
        rq->format = DPAS_FORMAT_CSV;
        return 0;
    }
    if (qj > 0 || qc > 0)
        return 0;
    r->vary = "Accept";
    char q[160]; /* quoted: a longer header is cut, and the cut says how much (issue 29) */
    srv_fail(r, 406, DPAS_EINVAL, "Accept",
             "this path answers %s; the request's Accept header %s takes neither",
             writes_csv(fn) ? "application/json or text/csv" : "application/json",
             dpas_quote(rq->accept, q, sizeof q));
    return -1;
}

/* ---- zlib, opened once ----------------------------------------------------------------------- */

static struct {
    __typeof__(&deflateInit2_) init;
    __typeof__(&deflate) deflate;
    __typeof__(&deflateEnd) end;
    __typeof__(&deflateBound) bound;
    int ok;
} z;
static pthread_once_t z_once = PTHREAD_ONCE_INIT;

static void z_open(void)
{
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return; /* no zlib: answers go uncompressed, which every client accepts */
    *(void **)&z.init = dlsym(h, "deflateInit2_");
    *(void **)&z.deflate = dlsym(h, "deflate");
    *(void **)&z.end = dlsym(h, "deflateEnd");
    *(void **)&z.bound = dlsym(h, "deflateBound");
    z.ok = z.init && z.deflate && z.end && z.bound;
}

/* body as a gzip member (malloc'd), or NULL. */
static unsigned char *gzip(const char *body, size_t len, size_t *out_len)
{
    pthread_once(&z_once, z_open);
    if (!z.ok || len > (size_t)UINT32_MAX)
        return NULL;
    z_stream st;
    memset(&st, 0, sizeof st);
    /* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
    if (z.init(&st, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, (int)sizeof st) !=
        Z_OK)
        return NULL;
    size_t cap = z.bound(&st, (uLong)len) + 32;
    unsigned char *out = malloc(cap);
    if (out) {
        st.next_in = (Bytef *)(uintptr_t)body;
        st.avail_in = (uInt)len;
        st.next_out = out;
        st.avail_out = (uInt)cap;
        if (z.deflate(&st, Z_FINISH) != Z_STREAM_END) {
            free(out);
            out = NULL;
        } else {
            *out_len = cap - st.avail_out;
        }
    }
    z.end(&st);
    return out;
}

/* The page's resources are static: each is compressed once, on its first request. */
typedef struct gz_entry {
    const char *body;
    unsigned char *gz;
    size_t len;
} gz_entry;
static gz_entry gz_cache[8];
static pthread_mutex_t gz_lock = PTHREAD_MUTEX_INITIALIZER;

static const unsigned char *gzip_static(const char *body, size_t len, size_t *out_len)
{
    const unsigned char *found = NULL;
    pthread_mutex_lock(&gz_lock);
    for (size_t i = 0; i < sizeof gz_cache / sizeof gz_cache[0] && !found; i++) {
        if (gz_cache[i].body == body) {
            found = gz_cache[i].gz;
            *out_len = gz_cache[i].len;
        } else if (!gz_cache[i].body) {
            size_t n = 0;
            unsigned char *g = gzip(body, len, &n);
            if (g) {
                gz_cache[i] = (gz_entry){body, g, n};
                found = g;
                *out_len = n;
            }
            break;
        }
    }
    pthread_mutex_unlock(&gz_lock);
    return found; /* kept for the life of the process, as the resources themselves */
}

/* ---- validators and encodings ------------------------------------------------------------------ */

/* FNV-1a, 64 bits, over the type and the body: equal answers get equal tags. */
static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Does If-None-Match (a list of entity tags, or "*") name tag? Weak comparison (RFC 9110
 * 13.1.2): a W/ prefix is ignored. */
static int none_match(const char *header, const char *tag)
{
    size_t tl = strlen(tag);
    for (const char *p = header; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '*')
            return 1;
        if (!strncmp(p, "W/", 2))
            p += 2;
        if (*p != '"')
            return 0; /* malformed: no match, the full answer is sent */
        const char *close = strchr(p + 1, '"');
        if (!close)
            return 0;
        if ((size_t)(close + 1 - p) == tl && !memcmp(p, tag, tl))
            return 1;
        p = close + 1;
    }
    return 0;
}

static int compressible(const char *type)
{
    return type && (!strncmp(type, "application/json", 16) || !strncmp(type, "text/", 5) ||
                    !strncmp(type, "image/svg+xml", 13));
}

void srv_negotiate_finish(const srv_request *rq, srv_response *r)
{
    int api = !strncmp(rq->path, "/api/", 5);
    if (r->status == 200 && rq->format == DPAS_FORMAT_CSV &&
        !strncmp(r->type, "application/json", 16))
        r->type = "text/csv; charset=utf-8";
    if (api)
        r->vary = "Accept, Accept-Encoding";
    if (r->status != 200 || !(rq->method == SRV_GET || rq->method == SRV_HEAD))
        return;
    if (!r->vary)
        r->vary = "Accept-Encoding";
    pthread_once(&z_once, z_open);
    int gz = z.ok && compressible(r->type) && r->len >= 256 &&
             quality(rq->accept_encoding, "gzip", NULL) > 0;
    uint64_t h = fnv(1469598103934665603ull, r->type, strlen(r->type));
    h = fnv(h, r->body, r->len);
    snprintf(r->etag, sizeof r->etag, "\"%016llx%s\"", (unsigned long long)h, gz ? "-gzip" : "");
    if (api)
        r->cache = "no-cache"; /* kept, but asked again each time: the ETag makes that cheap */
    if (rq->if_none_match && none_match(rq->if_none_match, r->etag)) {
        if (r->free_body)
            r->free_body(r->body);
        r->body = NULL;
        r->len = 0;
        r->free_body = NULL;
        r->status = 304;
        return;
    }
    if (!gz)
        return;
    size_t n = 0;
    const unsigned char *sg = NULL;
    unsigned char *g = NULL;
    if (!r->free_body ? !(sg = gzip_static(r->body, r->len, &n))
                      : !(g = gzip(r->body, r->len, &n))) {
        /* not compressed after all (no zlib, or out of memory): the identity's tag */
        snprintf(r->etag, sizeof r->etag, "\"%016llx\"", (unsigned long long)h);
        return;
    }
    if (g) {
        r->free_body(r->body);
        r->body = (char *)g;
        r->free_body = free;
    } else {
        r->body = (char *)(uintptr_t)sg;
    }
    r->len = n;
    r->encoding = "gzip";
}
