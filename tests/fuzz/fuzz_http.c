/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_http: raw bytes of an HTTP request into the server's request handling, in-process. The
 * input is read as HTTP/1.1 framing is (a request line "METHOD TARGET VERSION", header lines,
 * a blank line, the body: everything after it), then handed to what `dpas serve` does with every
 * complete request libmicrohttpd delivers: srv_request_init, srv_screen (Host, Origin, a body
 * where none belongs) and srv_route (methods, strict query decoding, the handlers, heavy ones
 * included, the budgets, the answer). The server's Host is 127.0.0.1 (loopback: localhost too),
 * with --allow-host dpas.example and --allow-origin http://app.example:8080. What libmicrohttpd
 * refuses itself (a NUL, a CR or an LF in the request line or a header, an HTTP version other
 * than 1.0 and 1.1) is left out; fuzz_http_wire runs the same corpus through libmicrohttpd.
 * Every header is counted as the server counts it when the headers are in (srv_headers_count,
 * srv_headers_check): a header it reads given twice is refused (400) here as there, never
 * judged by the first of the two.
 *
 * Properties of every answer: a status the server documents, never 500; a type (but a 204's); a
 * JSON type has a body that is strict JSON (no NaN, no Infinity) and an error status an error
 * object naming a reason; an SVG answer is an SVG document; a 405 has an Allow list. Besides: no
 * crash, no leak, no undefined behaviour (ASan, UBSan), no hang (libFuzzer's timeout). */
#define _GNU_SOURCE /* memmem */
#include "fuzz.h"

#include <jansson.h>
#include <strings.h>

#include "../../src/serve/serve.h"

typedef struct env {
    srv_guard *guard;
    dpas_registry *reg;
} env;

static const env *environment(void)
{
    static env E;
    if (!E.reg) {
        dpas_error err;
        memset(&err, 0, sizeof err);
        if (dpas_registry_builtin(&E.reg, &err) ||
            !(E.guard =
                  srv_guard_new("127.0.0.1", "dpas.example", "http://app.example:8080", &err))) {
            fprintf(stderr, "fuzz_http: %s\n", err.message);
            abort();
        }
    }
    return &E;
}

/* The next line of [p, end) without its CRLF (or LF) into a new string, *n its length (a NUL
 * inside makes strlen shorter); NULL at the end. */
static char *line(const char **p, const char *end, size_t *n)
{
    if (*p >= end)
        return NULL;
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    const char *e = nl ? nl : end;
    *n = (size_t)(e - *p);
    if (*n && (*p)[*n - 1] == '\r')
        (*n)--;
    char *s = fuzz_text((const uint8_t *)*p, *n);
    *p = nl ? nl + 1 : end;
    return s;
}

static void check(const srv_response *r, int head)
{
    static const int known[] = {200, 204, 400, 403, 404, 405, 406, 413, 414, 421, 422, 501};
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        ok |= r->status == known[i];
    PROPERTY(ok, "status %d is none the server documents (or a 500): %.300s", r->status,
             r->body ? r->body : "");
    PROPERTY(r->type || r->status == 204, "status %d without a type", r->status);
    PROPERTY(r->status != 405 || (r->allow && *r->allow), "a 405 without Allow");
    PROPERTY(r->body || !r->len, "a length without a body");
    if (head || !r->type || !r->len)
        return;
    /* every error is an RFC 9457 problem (application/problem+json) with its status */
    PROPERTY(r->status < 400 || !strcmp(r->type, "application/problem+json"),
             "status %d is not a problem: %s", r->status, r->type);
    if (!strncmp(r->type, "application/json", 16) || !strcmp(r->type, "application/problem+json")) {
        json_error_t je;
        json_t *j = json_loadb(r->body, r->len, JSON_REJECT_DUPLICATES, &je);
        PROPERTY(j != NULL, "status %d: the body is not JSON (%s): %.300s", r->status, je.text,
                 r->body);
        if (r->status >= 400) {
            json_t *st = json_object_get(j, "status");
            PROPERTY(json_is_integer(st) && json_integer_value(st) == r->status &&
                         json_is_string(json_object_get(j, "type")) &&
                         json_is_string(json_object_get(j, "title")) &&
                         json_is_string(json_object_get(j, "detail")) &&
                         json_string_length(json_object_get(j, "detail")) > 0,
                     "status %d: not a problem: %.300s", r->status, r->body);
        }
        json_decref(j);
    } else if (!strncmp(r->type, "image/svg+xml", 13)) {
        PROPERTY(r->len > 5 && (!strncmp(r->body, "<svg", 4) || !strncmp(r->body, "<?xml", 5)),
                 "an SVG answer that is not an SVG document: %.100s", r->body);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SRV_MAX_BODY + SRV_MAX_URL + 4096)
        return 0; /* beyond what the server reads (413, 414: refused before this code) */
    const env *E = environment();
    const char *p = (const char *)data, *end = p + size;
    size_t n;
    char *req = line(&p, end, &n);
    if (!req)
        return 0;
    char *method = req, *sp1 = strchr(req, ' '), *target = NULL, *version = NULL;
    if (sp1) {
        *sp1 = '\0';
        target = sp1 + 1;
        char *sp2 = strchr(target, ' ');
        if (sp2) {
            *sp2 = '\0';
            version = sp2 + 1;
        }
    }
    /* what libmicrohttpd refuses before the server sees it */
    if (!version || !*method || !*target || strchr(version, ' ') || strpbrk(req, "\r") ||
        (strcmp(version, "HTTP/1.1") && strcmp(version, "HTTP/1.0")) ||
        strlen(target) > SRV_MAX_URL || memchr(data, '\0', (size_t)(p - (const char *)data))) {
        free(req);
        return 0;
    }
    srv_incoming in = {.method = method, .target = target};
    char *hdr[64];
    size_t nh = 0;
    srv_header_tally tally;
    memset(&tally, 0, sizeof tally);
    int bad = 0;
    for (char *h; !bad && (h = line(&p, end, &n));) {
        if (!*h) { /* the blank line: the body follows */
            free(h);
            break;
        }
        if (nh == sizeof hdr / sizeof hdr[0] || !strchr(h, ':') || strlen(h) != n ||
            strchr(h, '\r')) {
            free(h);
            bad = 1;
            break;
        }
        hdr[nh++] = h;
        char *colon = strchr(h, ':'), *v = colon + 1;
        *colon = '\0';
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vl = strlen(v);
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
            v[--vl] = '\0';
        const char **slot = !strcasecmp(h, "Host")                            ? &in.host
                            : !strcasecmp(h, "Origin")                        ? &in.origin
                            : !strcasecmp(h, "Access-Control-Request-Method") ? &in.acrm
                            : !strcasecmp(h, "Content-Type")                  ? &in.content_type
                            : !strcasecmp(h, "Sec-Fetch-Site")                ? &in.sec_fetch_site
                            : !strcasecmp(h, "Accept")                        ? &in.accept
                            : !strcasecmp(h, "Accept-Encoding")               ? &in.accept_encoding
                            : !strcasecmp(h, "If-None-Match")                 ? &in.if_none_match
                                                                              : NULL;
        /* a header the server reads given twice is refused whole (srv_headers_check), as the
         * server refuses it: which one it holds here does not matter */
        if (slot && !*slot)
            *slot = v;
        srv_headers_count(&tally, h, v);
    }
    /* HTTP/1.1 without Host is libmicrohttpd's 400; a NUL in a header never reaches the server */
    if (bad || (!in.host && !strcmp(version, "HTTP/1.1"))) {
        for (size_t i = 0; i < nh; i++)
            free(hdr[i]);
        free(req);
        return 0;
    }
    char *body = NULL;
    if (p < end) {
        body = fuzz_text((const uint8_t *)p, (size_t)(end - p));
        in.body = body;
        in.body_len = (size_t)(end - p);
        if (in.body_len > SRV_MAX_BODY) { /* 413 before it is read */
            in.body = NULL;
            in.body_len = 0;
        }
    }
    srv_request rq;
    srv_response r;
    memset(&r, 0, sizeof r);
    if (srv_request_init(&rq, &in, E->reg))
        abort();
    /* as the server: the headers as a whole when they are in (a repeated one, Transfer-Encoding
     * beside Content-Length or another coding than chunked refused), then at dispatch the
     * screen, then a heavy request sent cross-site without CORS refused before the lane */
    if (!srv_headers_check(&tally, &r) && !srv_screen(E->guard, &in, &rq, &r) &&
        !(srv_request_heavy(&rq) && srv_guard_heavy(&in, &r)))
        srv_route(&rq, &r);
    PROPERTY(tally.seen[0] < 2 || r.status == 400, "two Host headers answered %d", r.status);
    check(&r, !strcmp(method, "HEAD"));
    if (r.free_body && r.body)
        r.free_body(r.body);
    srv_request_fini(&rq);
    for (size_t i = 0; i < nh; i++)
        free(hdr[i]);
    free(body);
    free(req);
    return 0;
}
