/* SPDX-License-Identifier: Apache-2.0 */
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
#define SRV_MAX_ROWS                                                                               \
    4096 /* rows of one answer: a sweep's or plot's points, calibrate's
                                     fits and predictions: 422 */
#define SRV_MAX_SWEEP_POINTS SRV_MAX_ROWS
#define SRV_CONN_MEMORY                                                                            \
    (32 * 1024)                 /* libmicrohttpd's buffer per connection: request line and
                                       headers beyond it are refused by libmicrohttpd itself */
#define SRV_MAX_CONNECTIONS 512 /* open connections at once (more wait in the backlog) */
#define SRV_MAX_THREADS 64      /* --threads */
#define SRV_DEFAULT_TIMEOUT                                                                        \
    10 /* seconds: a request must be complete within it; idle
                                       keep-alive connections are closed after it */
/* The budget of a heavy request (calibrate, sweep, plot.svg), run in a process of its own. */
#define SRV_DEFAULT_CPU_LIMIT 10.0   /* seconds of CPU (--cpu-limit): 503 beyond */
#define SRV_MAX_WORKERS 64           /* --workers: heavy requests run at once */
#define SRV_MAX_QUEUE 1024           /* --queue: heavy requests waiting; more: 503 */
#define SRV_MAX_RESPONSE (64u << 20) /* bytes a heavy request's process may hand back: 500 */

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
    const char *instance;      /* a problem's "instance": the request's path (srv_route), or NULL */
    const char *cache;         /* Cache-Control, or NULL for no-store */
    char warning[300];         /* an X-Dpas-Warning header (printable ASCII), or "" */
    int retry_after;           /* seconds, for a Retry-After header (a 503 when busy); 0: none */
    const char *allow_origin;  /* Access-Control-Allow-Origin: an --allow-origin, or NULL */
    int preflight;             /* a CORS preflight's answer: the Access-Control-Allow-* headers */
    /* set by srv_negotiate_finish (negotiate.c) */
    char etag[48];        /* an ETag header (quoted), or "" */
    const char *encoding; /* Content-Encoding ("gzip"), or NULL */
    const char *vary;     /* a Vary header, or NULL */
} srv_response;

/* One part of a multipart/form-data body (multipart.c): a scenario file or a calibration. */
typedef struct srv_part {
    const char *name;     /* "scenario" or "calibration" */
    const char *filename; /* as the client named it, or NULL */
    const char *data;     /* NUL-terminated copy of its content (owned by the request) */
    size_t len;
    int used; /* read by the handler */
} srv_part;

#define SRV_MAX_PARTS 8

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
    char *path_store;         /* path's storage (srv_request_init; srv_request_fini frees it) */
    /* content negotiation (negotiate.c): the request's headers, NULL when absent */
    const char *accept, *accept_encoding, *if_none_match;
    int format; /* DPAS_FORMAT_JSON, or DPAS_FORMAT_CSV when Accept prefers text/csv */
    /* a multipart/form-data body, split by srv_parts_parse (multipart.c) */
    srv_part parts[SRV_MAX_PARTS];
    size_t nparts;
    int multipart; /* the body was multipart/form-data */
    char *parts_store;
    const struct srv_route_info *route; /* set by srv_route before the handler runs */
} srv_request;

typedef struct srv_guard srv_guard; /* guard.c */

/* A complete request as HTTP framing delivers it (libmicrohttpd in the server; the fuzz target's
 * own reading of raw bytes): every string NUL-terminated, a header NULL when absent. */
typedef struct srv_incoming {
    const char *method;                              /* as sent */
    const char *target;                              /* the raw request target: path and query */
    const char *host, *origin, *acrm, *content_type; /* acrm: Access-Control-Request-Method */
    const char *sec_fetch_site; /* what a browser says of the request's origin, or NULL */
    const char *accept, *accept_encoding, *if_none_match; /* content negotiation (negotiate.c) */
    const char *body;                                     /* NUL-terminated, or NULL: none */
    size_t body_len;
} srv_incoming;

/* The request for the router: the path split from the query (copied: path_store), the body and
 * its type, the registry. 0, or -1 when out of memory. Strings stay the caller's. */
int srv_request_init(srv_request *rq, const srv_incoming *in, const dpas_registry *reg);
void srv_request_fini(srv_request *rq);
/* What is checked before a route is looked for: who asks (srv_guard_check: Host and Origin) and a
 * body on a method that takes none. 0: route it; else r holds the answer. */
int srv_screen(const srv_guard *g, const srv_incoming *in, const srv_request *rq, srv_response *r);
/* A heavy request (srv_request_heavy) that a browser sent cross-site without CORS (no Origin
 * header; Sec-Fetch-Site cross-site or same-site: an <img src> or a link on another site's
 * page): -1 with r the 403, so that another site's page cannot make the server compute; else 0. */
int srv_guard_heavy(const srv_incoming *in, srv_response *r);

/* The request's headers as a whole, judged as soon as they are in, before anything reads them
 * (handle.c; the server and fuzz_http both count every header through srv_headers_count):
 *   - a header the server reads, or one that frames the request (Transfer-Encoding,
 *     Connection, Content-Length), given twice: 400 naming it (libmicrohttpd's lookup gives the
 *     first and the other would be ignored: which one counts would be a guess);
 *   - Transfer-Encoding beside Content-Length: 400 naming both (which one frames the body would
 *     be a guess; RFC 9112 6.3), on every method alike;
 *   - a Transfer-Encoding other than chunked alone ("gzip, chunked", "identity"): 501 naming the
 *     header (libmicrohttpd decodes chunked alone, and would read any other coding until the
 *     connection closes: the client waited for the timeout). */
enum { SRV_NSINGLE = 11 };
typedef struct srv_header_tally {
    unsigned seen[SRV_NSINGLE];
    const char *transfer_encoding; /* the first one's value, or NULL */
    const char *bad_name;          /* the first header name holding a space or a tab, or NULL */
} srv_header_tally;
void srv_headers_count(srv_header_tally *t, const char *name, const char *value);
/* 0, or the status with r the answer. */
int srv_headers_check(const srv_header_tally *t, srv_response *r);

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
/* Is path one of the heavy routes (calibrate, sweep, plot.svg), whose requests run in a process
 * of their own with a CPU budget rather than on the thread that reads the connection? */
int srv_route_is_heavy(const char *path);
/* Does the request do heavy work: a heavy route, or a calibration part in its body (any route
 * that takes one reads and fits it)? Such a request runs in the heavy lane, under --cpu-limit,
 * and is refused when a browser sends it cross-site without CORS (srv_guard_heavy). */
int srv_request_heavy(srv_request *rq);

/* ---- who may ask (guard.c): Host and Origin ---------------------------------------------------- */

/* The hosts the server answers to (its --bind address; localhost too when that is loopback; any
 * IP literal when it is a wildcard; the --allow-host names) and the origins allowed to read its
 * answers (--allow-origin). NULL with err filled (the option and the value) when a name or an
 * origin is malformed. */
srv_guard *srv_guard_new(const char *bind, const char *allow_hosts, const char *allow_origins,
                         dpas_error *err);
void srv_guard_free(srv_guard *g);
/* Check a request's Host and Origin headers (NULL when absent; acrm the
 * Access-Control-Request-Method of a preflight, or NULL): 0, the request goes on (r->allow_origin
 * set for an allowed cross origin); else r holds the answer: 400 (no or a malformed Host), 421 (a
 * Host not served here), 403 (a cross origin not allowed), or 204 (a CORS preflight). */
int srv_guard_check(const srv_guard *g, const char *method, const char *host, const char *origin,
                    const char *acrm, srv_response *r);

/* ---- budgets (budget.c) ---------------------------------------------------------------------- */

/* The rows calibrate would answer for the model read from its body: every row the answer
 * carries (tests, fits, their regimes and residuals, nccl models, and tests x npredict
 * predictions); 0, or -1 with r the 422 beyond SRV_MAX_ROWS. Reading and fitting are bounded by
 * the body's size and the CPU budget of the heavy lane. */
int srv_budget_calibrate(const dpas_netmodel *m, size_t npredict, srv_response *r);

/* The request of a route's analysis from the request: the body (a YAML or JSON scenario file,
 * or the "scenario" part of a multipart body) below everything, the scenario named in the path,
 * every query parameter that is a key of the library's request (the route's own options, such as
 * memory's require_fit, stay the handler's), the "calibration" parts of a multipart body as the
 * calibration. Resolved; NULL with the error response filled (404 for a scenario named in the
 * path that is not). */
dpas_request *srv_request_of(srv_request *rq, srv_response *r, dpas_analysis a);

void srv_api_index(srv_request *rq, srv_response *r);
void srv_api_keys(srv_request *rq, srv_response *r);
void srv_api_scenario(srv_request *rq, srv_response *r);
void srv_api_scenarios(srv_request *rq, srv_response *r);
void srv_api_eval(srv_request *rq, srv_response *r);
void srv_api_cost(srv_request *rq, srv_response *r);
void srv_api_step(srv_request *rq, srv_response *r);
void srv_api_rules(srv_request *rq, srv_response *r);
void srv_api_inventory(srv_request *rq, srv_response *r);
void srv_api_memory(srv_request *rq, srv_response *r);
void srv_api_registry(srv_request *rq, srv_response *r);
void srv_api_calibrate(srv_request *rq, srv_response *r);
void srv_api_sweep(srv_request *rq, srv_response *r);
void srv_api_plot(srv_request *rq, srv_response *r);

/* Options of a route that are not a request's keys (memory's require_fit): a boolean; 0 or an
 * error response filled. */
int srv_opt_bool(srv_request *rq, srv_response *r, const char *key, int *out);

/* The embedded page resource at the request's path (index.html, app.js, app.css, favicon.svg);
 * 0 if none. The document carries the data the page needs before its first result (page.c). */
int srv_page(const srv_request *rq, srv_response *r);

/* ---- the route table, read by the OpenAPI document (route.c, openapi.c) ------------------------ */

enum { SRV_NO_INPUTS = 0, SRV_INPUTS = 1, SRV_INPUTS_BUT_SCENARIO = 2, SRV_ANY_QUERY = 3 };

typedef struct srv_route_info {
    const char *path;
    int prefix; /* a resource name follows the path */
    unsigned methods;
    int query; /* SRV_NO_INPUTS, SRV_INPUTS, SRV_INPUTS_BUT_SCENARIO or SRV_ANY_QUERY (the page) */
    int analysis; /* the dpas_analysis of a request route (its keys from the library's key
                     table), or -1: a route of its own keys (opts only) */
    const char *const *opts; /* the route's own keys, beyond its analysis' */
    srv_handler fn;
} srv_route_info;

/* The i-th route, or NULL past the end. */
const srv_route_info *srv_route_at(size_t i);
/* The i-th query key a route takes (its analysis' scenario inputs, "model", its analysis'
 * options, then its own keys), NULL past the end: what its refusal of an unknown key lists and
 * what the OpenAPI document says it takes. */
const char *srv_route_key(const srv_route_info *rt, size_t i);
/* Is key one of the route's own keys (not its analysis')? */
int srv_route_own(const srv_route_info *rt, const char *key);

void srv_api_openapi(srv_request *rq, srv_response *r);
/* The parameters of a route's operations as the document gives them, without their examples
 * (the page's document carries those of eval and cost): a new jansson array (json_t *), or NULL
 * when out of memory or no such route; post: those of POST (a calibration's keys too), else GET's. */
struct json_t *srv_openapi_parameters(const dpas_registry *reg, const char *path, int post);
/* The server's own answer to a request made in the process (an example of the document, the
 * page's data): its status; r filled as for a client. */
int srv_run(const dpas_registry *reg, int method, const char *target, const char *body,
            const char *content_type, srv_response *r);
/* openapi_responses.c: the schema of a route's 200 JSON answer, and of every error (an RFC 9457
 * problem); new references, NULL when out of memory. The jansson type stays opaque here. */
struct json_t;
struct json_t *srv_openapi_success_schema(const srv_route_info *rt);
struct json_t *srv_openapi_problem_schema(void);
/* Whether the document lists key for the method (network_model reads a calibration: POST only),
 * and a parameter made fit for it: attr without a calibration's metrics on GET, y without a list
 * of its own (it is one of attr's). */
int srv_openapi_param_kept(const char *key, int method);
void srv_openapi_prune_param(struct json_t *p, int method);

/* ---- content negotiation (negotiate.c) -------------------------------------------------------- */

/* The format an API handler renders in, from Accept: CSV when the client prefers text/csv and
 * the handler can write it (its CLI command has -o csv), else JSON; 406 with the error filled
 * when the client accepts neither. 0, or -1 (the error response is filled). */
int srv_negotiate_format(srv_request *rq, srv_handler fn, srv_response *r);
/* After the handler: the Content-Type of a CSV answer, the ETag of a GET or HEAD answered 200
 * and its 304 when If-None-Match names it, gzip when Accept-Encoding allows it, and Vary. */
void srv_negotiate_finish(const srv_request *rq, srv_response *r);

/* ---- multipart bodies (multipart.c); their calibration parts go to the request (api.c) -------- */

/* Split a multipart/form-data body into its parts (a no-op for any other body). Parts are named
 * "scenario" (at most one) where the route takes scenario inputs and "calibration" where it
 * takes one; anything else is an error. 0, or the HTTP status with err filled. */
int srv_parts_parse(srv_request *rq, int takes_scenario, int takes_calibration, dpas_error *err);
void srv_parts_free(srv_request *rq);
/* The part named name (marking it used), or NULL; *count (when not NULL) how many there are. */
const srv_part *srv_part_get(srv_request *rq, const char *name, size_t *count);
/* The scenario file of a request: its multipart "scenario" part, or its whole body when it is
 * not multipart; NULL when none. */
const char *srv_scenario_body(srv_request *rq, size_t *len);

/* ---- the server (server.c) -------------------------------------------------------------------- */

typedef struct srv_options {
    const char *bind; /* a numeric IPv4 or IPv6 address */
    int port;         /* 0: any free port */
    int threads;
    int timeout;               /* seconds */
    int quiet;                 /* no access log */
    FILE *log;                 /* where "listening on", warnings and the access log go */
    const char *allow_hosts;   /* --allow-host: comma-separated names, or NULL */
    const char *allow_origins; /* --allow-origin: comma-separated origins, or NULL */
    int workers;               /* heavy requests run at once, each in a process of its own */
    int queue;                 /* heavy requests that may wait beyond those; more are 503 */
    double cpu_limit;          /* seconds of CPU one heavy request may use; beyond, 503 */
    int direct;                /* the fuzz target: no threads and no listening socket (the caller
                                  adds connections and runs the daemon), heavy requests answered on
                                  the caller's thread without a process or a budget */
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
/* A direct server (opt->direct): hand it a connected socket (it is closed by the server), and
 * let it do what it can without blocking (read, answer, write, close). 0, or -1 when refused. */
int srv_direct_add(srv_server *s, int fd);
void srv_direct_run(srv_server *s);

/* ---- the heavy lane (lane.c): a bounded queue and worker threads, each request in a process ---- */

typedef struct srv_lane srv_lane;
typedef struct srv_job srv_job;
#define SRV_LANE_HEADER 64 /* bytes of one header value an answer's process hands back */
struct srv_job {
    srv_job *next;
    srv_request rq; /* the request, its strings owned by the caller until done is called */
    srv_response r; /* the answer, filled before done */
    char text[5][SRV_LANE_HEADER]; /* the answer's Content-Type, Allow, Cache-Control,
                                      Content-Encoding and Vary (r's pointers point here) */
    void (*done)(srv_job *job);    /* called once, from a worker thread or srv_lane_stop; the job is
                                   the caller's again after it */
    void *ctx;
    int client_fd; /* the client's socket, watched while the job waits and runs (a client that
                      closes it stops the job); -1: none */
    int gone;      /* set by the lane: the client closed its connection, the job was stopped */
};
/* workers threads; queue jobs may wait; cpu_limit seconds of CPU per job; wall seconds at most
 * per job whatever its CPU (a process that blocks). NULL with err filled. */
srv_lane *srv_lane_new(int workers, int queue, double cpu_limit, double wall, dpas_error *err);
/* Reserve a place for one job: 0, or -1 when every worker is busy and the queue is full (then
 * answer 503). A reserved place is used by exactly one srv_lane_submit. */
int srv_lane_reserve(srv_lane *l);
void srv_lane_submit(srv_lane *l, srv_job *job);
/* Fill r with the 503 of a full lane (Retry-After). */
void srv_lane_busy(const srv_lane *l, srv_response *r);
/* Stop: running processes are killed, waiting jobs answered 503, every job's done is called and
 * the threads are joined before it returns; a job submitted later is answered 503 at once. */
void srv_lane_stop(srv_lane *l);
/* Stop (if not yet) and free. Accepts NULL. */
void srv_lane_free(srv_lane *l);
/* The job's process: "dpas serve --lane-job" reads one request from the server on stdin and
 * writes its answer on stdout. Its exit status: 0, 1 when what came is not a request, 2 when the
 * answer could not be written. */
int srv_lane_job(void);
/* "dpas serve --lane-probe": prints what the lane looks for to know /proc/self/exe is dpas. */
int srv_lane_probe(void);
/* Does the lane fork the server for a job (/proc/self/exe is not dpas) instead of starting dpas? */
int srv_lane_forks(const srv_lane *l);

#endif
