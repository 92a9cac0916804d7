/* dpas serve: the calculator in a browser and an HTTP JSON API, a front end over libdpas.
 *
 * The flow of one request: libmicrohttpd parses HTTP (server.c) -> the raw query is split and
 * decoded strictly (query.c) -> the route table picks a handler and checks the method and the
 * keys (route.c) -> the handler hands the body and every query parameter to the library's
 * request parser (srv_request_of), runs its analysis and renders with the library's own JSON
 * renderers (api.c, api_sweep.c), or hands out an embedded page resource
 * (page.c) -> server.c sends it with the security headers and writes one access-log line.
 * Nothing is computed here that the library computes; nothing is read from disk.
 *
 * Names: srv_ for the server's own functions and types. Ownership: a srv_response's body is
 * freed by its free function (NULL: static data). */
#ifndef DPAS_SERVE_H
#define DPAS_SERVE_H

#include "dpas/dpas.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- limits: each one is an error response naming it, never a silent cut ------------------ */

#define SRV_MAX_URL 8192          /* request target (path and query), bytes: 414 */
#define SRV_MAX_KEY 48            /* one decoded query key, bytes: 414 */
#define SRV_MAX_VALUE 1024        /* one decoded query value, bytes: 414 */
#define SRV_MAX_PARAMS 48         /* query parameters of one request: 414 */
#define SRV_MAX_BODY (256 * 1024) /* request body (a scenario file, nccl-tests output): 413 */
#define SRV_MAX_SWEEP_POINTS 4096 /* points of one sweep or plot: 400 */
#define SRV_CONN_MEMORY                                                                            \
    (32 * 1024)                 /* libmicrohttpd's buffer per connection: request line and
                                       headers beyond it are refused by libmicrohttpd itself */
#define SRV_MAX_CONNECTIONS 512 /* open connections at once (more wait in the backlog) */
#define SRV_MAX_THREADS 64      /* --threads */
#define SRV_DEFAULT_TIMEOUT                                                                        \
    10 /* seconds: a request must be complete within it; idle
                                       keep-alive connections are closed after it */

/* ---- one request and its response ----------------------------------------------------------- */

enum { SRV_GET = 1, SRV_HEAD = 2, SRV_POST = 4 };

typedef struct srv_param {
    const char *key, *value; /* decoded, NUL-terminated, valid UTF-8 */
    int used;                /* looked up by the handler */
} srv_param;

typedef struct srv_query {
    srv_param p[SRV_MAX_PARAMS];
    size_t n;
    char *store; /* the decoded keys and values (owned) */
} srv_query;

typedef struct srv_response {
    int status;
    const char *type; /* Content-Type */
    char *body;       /* the payload; NULL with len 0 for none */
    size_t len;
    void (*free_body)(void *); /* NULL: body is static */
    const char *allow;         /* the Allow header of a 405, or NULL */
    const char *cache;         /* Cache-Control, or NULL for no-store */
    char warning[300];         /* an X-Dpas-Warning header (printable ASCII), or "" */
} srv_response;

typedef struct srv_request {
    int method; /* SRV_GET, SRV_HEAD or SRV_POST */
    const char *method_name;
    const char *path;      /* raw path, without the query */
    const char *rest;      /* a prefix route's resource name, decoded; else NULL */
    const char *raw_query; /* after the '?', undecoded (srv_route decodes it) */
    size_t raw_query_len;
    srv_query *query; /* decoded by srv_route before the handler runs */
    const char *body; /* POST body (NUL-terminated), or NULL */
    size_t body_len;
    const char *content_type; /* or NULL */
    const dpas_registry *reg; /* the built-in registry, loaded once, read-only */
} srv_request;

/* An error response: the library's error object (dpas_render_error_json) with this status. */
void srv_error(srv_response *r, int status, const dpas_error *e);
/* The same with the server's hint on how to give what is missing ("give dp_degree=N ..."). */
void srv_error_hint(srv_response *r, int status, const dpas_error *e, const char *hint);
/* The same from a code, a field and a message. */
void srv_fail(srv_response *r, int status, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A JSON payload rendered by the library (owned: freed with dpas_free); NULL is ENOMEM/err. */
void srv_json(srv_response *r, char *payload, const dpas_error *err);
/* The status of a library error: 422 for a physics violation (the CLI's exit 2), 500 for
 * out of memory and I/O, 400 for every other bad input (the CLI's exit 1). */
int srv_status_of(int code);

/* ---- query strings (query.c) ------------------------------------------------------------------ */

/* Split and decode a raw query ("a=1&b=x%20y", without the '?'). Strict: every parameter is
 * key=value with both non-empty; '+' is a space; a '%' takes two hex digits; the decoded text is
 * valid UTF-8 without control characters; no key twice. Returns 0, or the HTTP status of the
 * error (400, or 414 for a limit) with err filled. */
int srv_query_parse(const char *raw, size_t len, srv_query *q, dpas_error *err);
void srv_query_free(srv_query *q);
/* The value of key (marking it used), or NULL. */
const char *srv_query_get(srv_query *q, const char *key);
/* Decode one percent-encoded path segment into out (cap bytes) with the same rules; 0 or 400. */
int srv_decode_segment(const char *raw, size_t len, char *out, size_t cap, const char *what,
                       dpas_error *err);

/* ---- routes (route.c), the API (api.c, api_sweep.c), the page (page.c) ----------------------- */

typedef void (*srv_handler)(srv_request *rq, srv_response *r);

/* Answer one complete request: route it, check its method and query keys, run its handler. */
void srv_route(srv_request *rq, srv_response *r);

/* The request of a route's analysis from the request: the body (a YAML or JSON scenario file)
 * below everything, the scenario named in the path, every query parameter as a key. Resolved;
 * NULL with the error response filled (404 for a scenario named in the path that is not). */
dpas_request *srv_request_of(srv_request *rq, srv_response *r, dpas_analysis a);

void srv_api_index(srv_request *rq, srv_response *r);
void srv_api_keys(srv_request *rq, srv_response *r);
void srv_api_scenario(srv_request *rq, srv_response *r);
void srv_api_scenarios(srv_request *rq, srv_response *r);
void srv_api_eval(srv_request *rq, srv_response *r);
void srv_api_cost(srv_request *rq, srv_response *r);
void srv_api_rules(srv_request *rq, srv_response *r);
void srv_api_inventory(srv_request *rq, srv_response *r);
void srv_api_memory(srv_request *rq, srv_response *r);
void srv_api_registry(srv_request *rq, srv_response *r);
void srv_api_calibrate(srv_request *rq, srv_response *r);
void srv_api_sweep(srv_request *rq, srv_response *r);
void srv_api_plot(srv_request *rq, srv_response *r);

/* An integer option of a route that is not a request's (calibrate's ranks): >= min, <= max; 0
 * or an error response filled. */
int srv_opt_int(srv_request *rq, srv_response *r, const char *key, int64_t min, int64_t max,
                int64_t *out);

/* The embedded page resource at path (index.html, app.js, app.css, favicon.svg); 0 if none. */
int srv_page(const char *path, srv_response *r);

/* ---- the server (server.c) -------------------------------------------------------------------- */

typedef struct srv_options {
    const char *bind; /* a numeric IPv4 or IPv6 address */
    int port;         /* 0: any free port */
    int threads;
    int timeout; /* seconds */
    int quiet;   /* no access log */
    FILE *log;   /* where "listening on", warnings and the access log go */
} srv_options;

typedef struct srv_server srv_server;

/* Load libmicrohttpd and the registry, bind and start the thread pool. On failure returns NULL
 * with err filled. *port is the port bound (the one picked when opt->port is 0). */
srv_server *srv_start(const srv_options *opt, int *port, dpas_error *err);
/* Drop the connections whose request is not complete within the timeout (slow headers or
 * body) and the idle keep-alive ones; called about five times a second by the main thread. */
void srv_watch(srv_server *s);
/* Close every connection, join the threads, free everything. Accepts NULL. */
void srv_stop(srv_server *s);

#endif
