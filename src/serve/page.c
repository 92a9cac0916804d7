/* SPDX-License-Identifier: Apache-2.0 */
/* The page: one document and its script, style sheet and icon, embedded at build time from
 * src/serve/page/ (cmake/embed.cmake, as the registry). Nothing is ever read from disk. The
 * script and style are separate same-origin resources so that the Content-Security-Policy
 * default-src 'self' holds without inline code.
 *
 * The document carries, in a JSON data block (never executed, so the policy holds), what the
 * page needs before it can ask for its first result: the part of the API's description it reads
 * (the eval, cost and step parameters, but their sentences: the inputs, their fields and CLI flags, the
 * names of rules, schedules and network models) and the server's own answers to the registry's lists and the
 * rule catalogue. The page's first request is then the view's data: one round trip after the
 * page, with no OpenAPI document (built by running every example request) and no list before
 * it. The block is built on the first request and kept for the server's lifetime: the registry
 * and the tables never change while it runs. */
#include "serve.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern const char srv_page_index_html[], srv_page_app_js[], srv_page_app_css[],
    srv_page_favicon_svg[];
extern const size_t srv_page_index_html_len, srv_page_app_js_len, srv_page_app_css_len,
    srv_page_favicon_svg_len;

/* The API's answers the document carries, by path (the page reads them under these names). */
static const char *const carried[] = {"/api/v1/registry/models",     "/api/v1/registry/fleets",
                                      "/api/v1/registry/nodes",      "/api/v1/registry/fabrics",
                                      "/api/v1/registry/precisions", "/api/v1/rules"};
/* The operations whose parameters it carries, as the OpenAPI document nests them. */
static const struct {
    const char *path, *method;
} described[] = {{"/api/v1/eval", "get"}, {"/api/v1/cost", "post"}, {"/api/v1/step", "get"}};

/* Where the data goes: the content of this element of index.html. */
static const char slot[] = "<script type=\"application/json\" id=\"dpas-data\">";

typedef struct text {
    char *p;
    size_t n, cap;
    int failed;
} text;

/* Appends s; inside a data block every '<' is written \u003c (valid JSON, where a '<' can only
 * be within a string), so that no "</script" or "<!--" in a name can end the block. */
static void put(text *t, const char *s, size_t n, int json)
{
    for (size_t i = 0; i < n && !t->failed; i++) {
        if (t->n + 8 > t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 65536;
            char *p = realloc(t->p, cap);
            if (!p) {
                t->failed = 1;
                break;
            }
            t->p = p, t->cap = cap;
        }
        if (json && s[i] == '<') {
            memcpy(t->p + t->n, "\\u003c", 6);
            t->n += 6;
        } else {
            t->p[t->n++] = s[i];
        }
    }
}

static void puts_(text *t, const char *s, int json) { put(t, s, strlen(s), json); }

/* The data block's JSON: {"max_body_bytes": ..., "paths": {...}, "answers": {path: answer}}. */
static void data(text *t, const dpas_registry *reg)
{
    char num[64];
    snprintf(num, sizeof num, "{\"max_body_bytes\": %d, \"paths\": {", SRV_MAX_BODY);
    puts_(t, num, 1);
    for (size_t i = 0; i < sizeof described / sizeof described[0]; i++) {
        json_t *params =
            srv_openapi_parameters(reg, described[i].path, !strcmp(described[i].method, "post"));
        for (size_t j = 0; j < json_array_size(params); j++) /* the page shows none of them */
            json_object_del(json_array_get(params, j), "description");
        char *ps = params ? json_dumps(params, JSON_COMPACT) : NULL;
        json_decref(params);
        if (!ps) {
            t->failed = 1;
            return;
        }
        char head[160];
        snprintf(head, sizeof head, "%s\"%s\": {\"%s\": {\"parameters\": ", i ? ", " : "",
                 described[i].path, described[i].method);
        puts_(t, head, 1);
        puts_(t, ps, 1);
        puts_(t, "}}", 1);
        free(ps);
    }
    puts_(t, "}, \"answers\": {", 1);
    for (size_t i = 0; i < sizeof carried / sizeof carried[0]; i++) {
        srv_response r;
        int st = srv_run(reg, SRV_GET, carried[i], NULL, NULL, &r);
        if (st == 200 && r.body) {
            char head[160];
            snprintf(head, sizeof head, "%s\"%s\": ", i ? ", " : "", carried[i]);
            puts_(t, head, 1);
            put(t, r.body, r.len, 1);
        } else { /* a bug of the server's: the page asks for it itself */
            t->failed = 1;
        }
        if (r.free_body && r.body)
            r.free_body(r.body);
    }
    puts_(t, "}}", 1);
}

static char *document;
static size_t document_len;
static pthread_mutex_t document_lock = PTHREAD_MUTEX_INITIALIZER;

/* index.html with its data block filled, or NULL when out of memory (the page then asks the
 * API for what the block would have carried). */
static const char *index_document(const dpas_registry *reg, size_t *len)
{
    pthread_mutex_lock(&document_lock);
    if (!document && reg) {
        const char *at = strstr(srv_page_index_html, slot);
        text t = {0};
        if (at) {
            size_t head = (size_t)(at - srv_page_index_html) + sizeof slot - 1;
            put(&t, srv_page_index_html, head, 0);
            data(&t, reg);
            put(&t, srv_page_index_html + head, srv_page_index_html_len - head, 0);
            put(&t, "", 1, 0); /* the NUL */
        }
        if (at && !t.failed) {
            document = t.p;
            document_len = t.n - 1;
        } else {
            free(t.p);
        }
    }
    const char *d = document;
    *len = document_len;
    pthread_mutex_unlock(&document_lock);
    return d;
}

int srv_page(const srv_request *rq, srv_response *r)
{
    static const struct {
        const char *path, *type;
        const char *data;
        const size_t *len;
    } files[] = {
        {"/", "text/html; charset=utf-8", srv_page_index_html, &srv_page_index_html_len},
        {"/app.js", "text/javascript; charset=utf-8", srv_page_app_js, &srv_page_app_js_len},
        {"/app.css", "text/css; charset=utf-8", srv_page_app_css, &srv_page_app_css_len},
        {"/favicon.svg", "image/svg+xml", srv_page_favicon_svg, &srv_page_favicon_svg_len},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (!strcmp(rq->path, files[i].path)) {
            r->status = 200;
            r->type = files[i].type;
            r->body = (char *)(uintptr_t)files[i].data; /* static: never freed, never written */
            r->len = *files[i].len;
            if (i == 0) {
                size_t len = 0;
                const char *d = index_document(rq->reg, &len);
                if (d)
                    r->body = (char *)(uintptr_t)d, r->len = len; /* kept: never freed */
            }
            r->free_body = NULL;
            r->cache = "no-cache";
            return 1;
        }
    return 0;
}
