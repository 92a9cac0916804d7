/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP server on libmicrohttpd: a bounded pool of threads, each with its own epoll loop;
 * per-request state from the request line to the last byte of the response; the limits on
 * URLs and bodies; the deadline by which a request must be complete (enforced by srv_watch, as
 * libmicrohttpd's own timeout is one of inactivity, which a client sending a byte a second never
 * reaches); the Host and Origin a request must have (guard.c); heavy requests handed to the
 * heavy lane (lane.c) on a suspended connection, so that the I/O threads only ever answer cheap
 * ones; the security headers on every response; one access-log line per request. */
#include "mhd.h"
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Sent with every response the server makes (libmicrohttpd's own refusals of malformed HTTP
 * excepted: see docs/serve.md). The page's script and style are same-origin files. */
#define SRV_CSP "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

typedef struct srv_conn {
    struct srv_conn *prev, *next;
    int fd;
    struct timespec since; /* when it began waiting for its current request */
    int busy;              /* a complete request is being answered */
    int dropped;           /* srv_watch shut it down */
    char peer[INET6_ADDRSTRLEN];
} srv_conn;

struct srv_server {
    srv_mhd mhd;
    struct MHD_Daemon *daemon;
    dpas_registry *reg;
    srv_guard *guard;
    srv_lane *lane; /* NULL for a direct server: heavy requests answered where they arrive */
    srv_options opt;
    pthread_mutex_t lock; /* the connection list and last_log */
    srv_conn *conns;
    char last_log[256]; /* libmicrohttpd's last message (for a failure to start) */
    int running;        /* started: libmicrohttpd's messages are printed, not only kept */
    int lane_open;      /* heavy requests handed to the lane and not yet completed (S->lock) */
};

/* One request, from its request line (uri_log) to the end of its response (completed). */
typedef struct srv_req {
    srv_server *S;
    srv_conn *conn;
    struct MHD_Connection *mc;
    struct timespec start;
    char *uri;      /* the raw request target, at most SRV_MAX_URL bytes of it */
    size_t uri_len; /* its full length */
    char *body;
    size_t body_len, body_cap;
    int started, answered;
    int too_large; /* a body over SRV_MAX_BODY (or one that could not be stored) */
    int lane;      /* LANE_NONE, LANE_RUNNING (the connection is suspended), LANE_DONE */
    srv_job job;   /* the heavy lane's job: the request and, when done, its answer */
    int status;
    size_t bytes;
    char *method; /* as the client sent it, whole (owned) */
    char version[16];
} srv_req;

enum { LANE_NONE = 0, LANE_RUNNING, LANE_DONE };

static double ms_since(const struct timespec *t0, const struct timespec *t1)
{
    return (double)(t1->tv_sec - t0->tv_sec) * 1e3 + (double)(t1->tv_nsec - t0->tv_nsec) / 1e6;
}

/* ---- the access log ---------------------------------------------------------------------------- */

/* Printable ASCII as it is; quotes, backslashes and other bytes as \xNN; at most cap bytes. */
static size_t log_text(char *out, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (o + 8 >= cap) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o] = '\0';
    return o;
}

static void access_log(srv_server *S, const srv_req *q, int dropped,
                       enum MHD_RequestTerminationCode toe)
{
    if (S->opt.quiet)
        return;
    struct timespec now, wall;
    clock_gettime(CLOCK_MONOTONIC, &now);
    clock_gettime(CLOCK_REALTIME, &wall);
    struct tm tm;
    char when[32], target[600], method[70], version[70], status[8];
    gmtime_r(&wall.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* everything the client wrote is escaped: a log line cannot be forged from a request */
    log_text(target, sizeof target, q->uri ? q->uri : "", q->uri ? strlen(q->uri) : 0);
    log_text(method, sizeof method, q->method ? q->method : "-", q->method ? strlen(q->method) : 1);
    log_text(version, sizeof version, q->version, strlen(q->version));
    const char *note = "";
    if (q->lane != LANE_NONE && q->job.gone) {
        snprintf(status, sizeof status, "-");
        note = " (closed by the client: its heavy job was stopped)";
    } else if (!q->answered) {
        snprintf(status, sizeof status, "-");
        note = dropped ? " (dropped: the request was not complete in time)"
               : toe == MHD_REQUEST_TERMINATED_WITH_ERROR      ? " (refused by libmicrohttpd)"
               : toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN ? " (server stopping)"
               : toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED ? " (timeout)"
                                                               : " (closed by the client)";
    } else {
        snprintf(status, sizeof status, "%d", q->status);
        if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
            note = " (the response was not completed)";
    }
    char line[900];
    int n = snprintf(line, sizeof line, "%s [%s] \"%s %s%s %s\" %s %zu %.3fms%s\n",
                     q->conn ? q->conn->peer : "-", when, method, target,
                     q->uri_len > SRV_MAX_URL ? "..." : "", version, status, q->bytes,
                     ms_since(&q->start, &now), note);
    if (n > 0)
        fwrite(line, 1, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1, S->opt.log);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    srv_server *S = cls;
    char msg[1024]; /* room for the HTML page its refusals quote, cut out below */
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* its refusals quote the HTML page they send: the status says enough */
    char *page = strstr(msg, " ('<html>"), *end = page ? strstr(page, "</html>')") : NULL;
    if (page && end)
        memmove(page, end + 9, strlen(end + 9) + 1);
    size_t l = strlen(msg);
    while (l && (msg[l - 1] == '\n' || msg[l - 1] == ' '))
        msg[--l] = '\0';
    pthread_mutex_lock(&S->lock);
    snprintf(S->last_log, sizeof S->last_log, "%s", msg);
    int running = S->running; /* a failure to start is reported once, by srv_start's error */
    pthread_mutex_unlock(&S->lock);
    if (running && !S->opt.quiet)
        fprintf(S->opt.log, "dpas: libmicrohttpd: %s\n", msg);
}

/* ---- connections --------------------------------------------------------------------------- */

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    srv_server *S = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        srv_conn *k = calloc(1, sizeof *k);
        *socket_context = k;
        if (!k)
            return; /* no deadline for this one; libmicrohttpd's inactivity timeout still holds */
        const union MHD_ConnectionInfo *fd =
            S->mhd.MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ad =
            S->mhd.MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        k->fd = fd ? fd->connect_fd : -1;
        snprintf(k->peer, sizeof k->peer, "-");
        if (ad && ad->client_addr) {
            const struct sockaddr *sa = ad->client_addr;
            if (sa->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
                          k->peer, sizeof k->peer);
            else if (sa->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
                          k->peer, sizeof k->peer);
        }
        clock_gettime(CLOCK_MONOTONIC, &k->since);
        pthread_mutex_lock(&S->lock);
        k->next = S->conns;
        if (S->conns)
            S->conns->prev = k;
        S->conns = k;
        pthread_mutex_unlock(&S->lock);
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        /* called before libmicrohttpd closes the socket: srv_watch never sees a reused fd */
        srv_conn *k = *socket_context;
        if (!k)
            return;
        pthread_mutex_lock(&S->lock);
        if (k->prev)
            k->prev->next = k->next;
        else
            S->conns = k->next;
        if (k->next)
            k->next->prev = k->prev;
        pthread_mutex_unlock(&S->lock);
        free(k);
        *socket_context = NULL;
    }
}

void srv_watch(srv_server *S)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&S->lock);
    for (srv_conn *k = S->conns; k; k = k->next)
        if (!k->busy && !k->dropped && k->fd >= 0 &&
            ms_since(&k->since, &now) >= 1e3 * S->opt.timeout) {
            /* libmicrohttpd sees the end of the stream and closes the connection itself */
            shutdown(k->fd, SHUT_RDWR);
            k->dropped = 1;
        }
    pthread_mutex_unlock(&S->lock);
}

/* ---- requests ---------------------------------------------------------------------------------- */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    srv_server *S = cls;
    srv_req *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    clock_gettime(CLOCK_MONOTONIC, &q->start);
    q->uri_len = strlen(uri);
    size_t keep = q->uri_len > SRV_MAX_URL ? SRV_MAX_URL : q->uri_len;
    if ((q->uri = malloc(keep + 1))) {
        memcpy(q->uri, uri, keep);
        q->uri[keep] = '\0';
    }
    const union MHD_ConnectionInfo *ci =
        S->mhd.MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    q->conn = ci ? ci->socket_context : NULL;
    q->S = S;
    q->mc = c;
    return q;
}

/* Retry-After, and the CORS headers of an --allow-origin: an answer to an allowed origin, a
 * preflight's, and Vary: Origin on every answer when some origin may read them (a cache must not
 * hand one origin's answer to another). */
static int cors_headers(srv_server *S, struct MHD_Response *resp, const srv_response *r)
{
    char ra[16];
    snprintf(ra, sizeof ra, "%d", r->retry_after);
    return (!r->retry_after ||
            S->mhd.MHD_add_response_header(resp, "Retry-After", ra) == MHD_YES) &&
           (!S->opt.allow_origins ||
            S->mhd.MHD_add_response_header(resp, "Vary", "Origin") == MHD_YES) &&
           (!r->allow_origin || S->mhd.MHD_add_response_header(resp, "Access-Control-Allow-Origin",
                                                               r->allow_origin) == MHD_YES) &&
           (!r->preflight ||
            (S->mhd.MHD_add_response_header(resp, "Access-Control-Allow-Methods",
                                            "GET, HEAD, POST") == MHD_YES &&
             S->mhd.MHD_add_response_header(resp, "Access-Control-Allow-Headers", "Content-Type") ==
                 MHD_YES &&
             S->mhd.MHD_add_response_header(resp, "Access-Control-Max-Age", "600") == MHD_YES));
}

static enum MHD_Result respond(srv_server *S, struct MHD_Connection *c, srv_req *q, srv_response *r)
{
    struct MHD_Response *resp =
        r->free_body
            ? S->mhd.MHD_create_response_from_buffer_with_free_callback(r->len, r->body,
                                                                        r->free_body)
            : S->mhd.MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        if (r->free_body)
            r->free_body(r->body);
        return MHD_NO; /* out of memory: libmicrohttpd closes the connection */
    }
    int ok = (!r->type || /* a 204 has no body and no type */
              S->mhd.MHD_add_response_header(resp, "Content-Type", r->type) == MHD_YES) &&
             S->mhd.MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff") == MHD_YES &&
             S->mhd.MHD_add_response_header(resp, "Content-Security-Policy", SRV_CSP) == MHD_YES &&
             S->mhd.MHD_add_response_header(resp, "Referrer-Policy", "no-referrer") == MHD_YES &&
             S->mhd.MHD_add_response_header(resp, "Cache-Control",
                                            r->cache ? r->cache : "no-store") == MHD_YES &&
             (!r->allow || S->mhd.MHD_add_response_header(resp, "Allow", r->allow) == MHD_YES) &&
             (!r->etag[0] || S->mhd.MHD_add_response_header(resp, "ETag", r->etag) == MHD_YES) &&
             (!r->encoding ||
              S->mhd.MHD_add_response_header(resp, "Content-Encoding", r->encoding) == MHD_YES) &&
             (!r->vary || S->mhd.MHD_add_response_header(resp, "Vary", r->vary) == MHD_YES) &&
             (!r->warning[0] ||
              S->mhd.MHD_add_response_header(resp, "X-Dpas-Warning", r->warning) == MHD_YES) &&
             cors_headers(S, resp, r);
    enum MHD_Result rc = ok ? S->mhd.MHD_queue_response(c, (unsigned)r->status, resp) : MHD_NO;
    S->mhd.MHD_destroy_response(resp);
    q->answered = 1;
    q->status = r->status;
    q->bytes = r->len;
    return rc;
}

static enum MHD_Result refuse(srv_server *S, struct MHD_Connection *c, srv_req *q, int status,
                              int code, const char *field, const char *msg)
{
    srv_response r;
    memset(&r, 0, sizeof r);
    srv_fail(&r, status, code, field, "%s", msg);
    return respond(S, c, q, &r);
}

/* The heavy lane is done with a job: the connection is resumed, and libmicrohttpd calls
 * on_request again, which sends the answer. Called from a worker thread (or from srv_stop). */
static void job_done(srv_job *job)
{
    srv_req *q = job->ctx;
    srv_server *S = q->S;
    struct MHD_Connection *mc = q->mc;
    pthread_mutex_lock(&S->lock);
    q->lane = LANE_DONE; /* the last touch of q from this thread: it is the I/O thread's again */
    pthread_mutex_unlock(&S->lock);
    S->mhd.MHD_resume_connection(mc);
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    srv_headers_count(cls, key, value);
    return MHD_YES;
}

/* A complete request: check who asks, route it and answer, or hand it to the heavy lane. */
static enum MHD_Result dispatch(srv_server *S, struct MHD_Connection *c, srv_req *q)
{
    if (q->conn) {
        pthread_mutex_lock(&S->lock);
        q->conn->busy = 1;
        pthread_mutex_unlock(&S->lock);
    }
    if (q->body)
        q->body[q->body_len] = '\0';
    srv_incoming in = {
        .method = q->method,
        .target = q->uri,
        .host = S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"),
        .origin = S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"),
        .acrm =
            S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Method"),
        .content_type = S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"),
        .accept = S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"),
        .accept_encoding =
            S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding"),
        .if_none_match = S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match"),
        .sec_fetch_site = S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site"),
        .body = q->body,
        .body_len = q->body_len};
    srv_request *rq = &q->job.rq; /* kept in q: the heavy lane works on it after we return */
    if (srv_request_init(rq, &in, S->reg))
        return MHD_NO; /* out of memory: libmicrohttpd closes the connection */
    srv_response r;
    memset(&r, 0, sizeof r);
    r.instance = rq->path; /* a problem's instance; rq lives as long as the job */
    if (srv_screen(S->guard, &in, rq, &r)) {
        srv_negotiate_finish(rq, &r);
        return respond(S, c, q, &r);
    }
    /* heavy: a heavy route, or any request with a calibration part (the budget follows the
     * computation, not the route); another site's page may not start one */
    int heavy = srv_request_heavy(rq);
    if (heavy && srv_guard_heavy(&in, &r)) {
        srv_negotiate_finish(rq, &r);
        return respond(S, c, q, &r);
    }
    if (!S->lane || !heavy) { /* cheap: answered here, at once */
        srv_route(rq, &r);
        srv_negotiate_finish(rq, &r); /* CSV's type, ETag and 304, gzip, Vary */
        return respond(S, c, q, &r);
    }
    if (srv_lane_reserve(S->lane)) {
        srv_lane_busy(S->lane, &r);
        srv_negotiate_finish(rq, &r);
        return respond(S, c, q, &r);
    }
    /* suspended before the job can finish: a job's done always finds the connection suspended */
    q->job.r = r; /* the guard's Access-Control-Allow-Origin, kept for the answer */
    q->job.done = job_done;
    q->job.ctx = q;
    q->job.client_fd = q->conn ? q->conn->fd : -1; /* watched: a client gone stops its job */
    q->job.gone = 0;
    q->lane = LANE_RUNNING;
    pthread_mutex_lock(&S->lock);
    S->lane_open++;
    pthread_mutex_unlock(&S->lock);
    S->mhd.MHD_suspend_connection(c);
    srv_lane_submit(S->lane, &q->job);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    srv_server *S = cls;
    srv_req *q = *req_cls;
    (void)url; /* decoded by libmicrohttpd; the router decodes the raw target itself, strictly */
    if (!q || !q->uri)
        return MHD_NO; /* out of memory when the request line arrived: close the connection */
    if (q->lane != LANE_NONE) { /* resumed by job_done: the heavy lane's answer */
        pthread_mutex_lock(&S->lock);
        int done = q->lane == LANE_DONE;
        pthread_mutex_unlock(&S->lock);
        if (!done || q->answered)
            return MHD_YES;
        if (q->job.gone) /* nobody to answer: the connection is closed */
            return MHD_NO;
        return respond(S, c, q, &q->job.r);
    }
    if (q->answered) { /* an early refusal is queued: the rest of the body is discarded */
        *upload_size = 0;
        return MHD_YES;
    }
    if (!q->started) {
        /* The headers are in. A response queued now makes libmicrohttpd close the connection
         * after it, so only the refusals that should close it are sent here; everything else
         * is answered on the last call, once the whole request has arrived. */
        q->started = 1;
        if (!(q->method = strdup(method)))
            return MHD_NO;
        snprintf(q->version, sizeof q->version, "%s", version);
        if (q->uri_len > SRV_MAX_URL) {
            char msg[128];
            snprintf(msg, sizeof msg, "the request target is %zu bytes long, over the limit of %d",
                     q->uri_len, SRV_MAX_URL);
            return refuse(S, c, q, 414, DPAS_ERANGE, "url", msg);
        }
        /* the headers as a whole (srv_headers_check): a repeated one, Transfer-Encoding beside
         * Content-Length or a coding libmicrohttpd does not decode are answered now, before a
         * body framed by a guess is read (or waited for until the timeout) */
        srv_header_tally tally;
        memset(&tally, 0, sizeof tally);
        S->mhd.MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &tally);
        srv_response hr;
        memset(&hr, 0, sizeof hr);
        if (srv_headers_check(&tally, &hr))
            return respond(S, c, q, &hr);
        const char *cl = S->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno || *end || n > SRV_MAX_BODY) {
                char msg[160];
                snprintf(msg, sizeof msg,
                         "the request body (Content-Length %.40s) is over the limit of %d bytes",
                         cl, SRV_MAX_BODY);
                return refuse(S, c, q, 413, DPAS_ERANGE, "body", msg);
            }
        }
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (q->too_large || n > SRV_MAX_BODY - q->body_len) {
            q->too_large = 1; /* a chunked body over the limit: discarded, refused at the end */
            return MHD_YES;
        }
        if (q->body_len + n + 1 > q->body_cap) {
            size_t cap = q->body_cap ? q->body_cap : 4096;
            while (cap < q->body_len + n + 1)
                cap *= 2;
            char *b = realloc(q->body, cap);
            if (!b) {
                q->too_large = 1;
                return MHD_YES;
            }
            q->body = b;
            q->body_cap = cap;
        }
        memcpy(q->body + q->body_len, upload, n);
        q->body_len += n;
        return MHD_YES;
    }
    if (q->too_large) {
        char msg[96];
        snprintf(msg, sizeof msg, "the request body is over the limit of %d bytes", SRV_MAX_BODY);
        return refuse(S, c, q, 413, DPAS_ERANGE, "body", msg);
    }
    return dispatch(S, c, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    srv_server *S = cls;
    srv_req *q = *req_cls;
    (void)c;
    if (!q)
        return;
    int dropped = 0;
    pthread_mutex_lock(&S->lock);
    if (q->lane != LANE_NONE)
        S->lane_open--;
    if (q->conn) {
        dropped = q->conn->dropped;
        q->conn->busy = 0;
        clock_gettime(CLOCK_MONOTONIC, &q->conn->since); /* the wait for the next request */
    }
    pthread_mutex_unlock(&S->lock);
    access_log(S, q, dropped, toe);
    if (q->lane == LANE_DONE && !q->answered && q->job.r.free_body) /* never sent */
        q->job.r.free_body(q->job.r.body);
    free(q->uri);
    srv_request_fini(&q->job.rq);
    free(q->method);
    free(q->body);
    free(q);
    *req_cls = NULL;
}

/* ---- start and stop ---------------------------------------------------------------------------- */

srv_server *srv_start(const srv_options *opt, int *port, dpas_error *err)
{
    srv_server *S = calloc(1, sizeof *S);
    if (!S) {
        err->code = DPAS_ENOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    S->opt = *opt;
    pthread_mutex_init(&S->lock, NULL);
    char why[300];
    if (srv_mhd_open(&S->mhd, why, sizeof why)) {
        err->code = DPAS_EIO;
        snprintf(err->message, sizeof err->message, "%s", why);
        srv_stop(S);
        return NULL;
    }
    if (dpas_registry_builtin(&S->reg, err) ||
        !(S->guard = srv_guard_new(opt->bind, opt->allow_hosts, opt->allow_origins, err))) {
        srv_stop(S);
        return NULL;
    }
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    struct sockaddr *sa;
    /* suspend and resume: a heavy request waits for the heavy lane on a suspended connection */
    unsigned flags = opt->direct ? MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG
                                 : MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                                       MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, opt->bind, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons((uint16_t)opt->port);
        sa = (struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, opt->bind, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons((uint16_t)opt->port);
        sa = (struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        err->code = DPAS_EINVAL;
        snprintf(err->field, sizeof err->field, "--bind");
        snprintf(err->message, sizeof err->message,
                 "--bind must be a numeric IPv4 or IPv6 address (127.0.0.1, ::1, 0.0.0.0), got "
                 "\"%.100s\"",
                 opt->bind);
        srv_stop(S);
        return NULL;
    }
    if (!opt->direct && !(S->lane = srv_lane_new(opt->workers, opt->queue, opt->cpu_limit,
                                                 10 * opt->cpu_limit + 10, err))) {
        srv_stop(S);
        return NULL;
    }
    if (S->lane && srv_lane_forks(S->lane) && opt->log)
        fprintf(opt->log,
                "dpas: warning: /proc/self/exe does not start dpas (started through the dynamic "
                "loader, or under a tool such as valgrind?): heavy requests run in forks of the "
                "server instead of dpas started afresh\n");
    /* a direct server (the fuzz target) has no thread and no socket of its own */
    S->daemon = S->mhd.MHD_start_daemon(
        flags, (uint16_t)opt->port, NULL, NULL, on_request, S, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
        S, /* first, so that every message goes through it */
        MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)(opt->direct ? 0 : opt->threads), MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)SRV_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)opt->timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SRV_CONN_MEMORY, MHD_OPTION_STRICT_FOR_CLIENT,
        (int)1, MHD_OPTION_URI_LOG_CALLBACK, on_uri, S, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        S, MHD_OPTION_NOTIFY_CONNECTION, on_connection, S, MHD_OPTION_END);
    if (!S->daemon) {
        err->code = DPAS_EIO;
        snprintf(err->message, sizeof err->message, "cannot listen on %s port %d: %s", opt->bind,
                 opt->port, S->last_log[0] ? S->last_log : "libmicrohttpd refused to start");
        srv_stop(S);
        return NULL;
    }
    pthread_mutex_lock(&S->lock);
    S->running = 1;
    pthread_mutex_unlock(&S->lock);
    const union MHD_DaemonInfo *info =
        S->mhd.MHD_get_daemon_info(S->daemon, MHD_DAEMON_INFO_BIND_PORT);
    *port = info ? info->port : opt->port;
    return S;
}

void srv_stop(srv_server *S)
{
    if (!S)
        return;
    /* the lane first: its jobs answered and their connections resumed, since libmicrohttpd must
     * not be stopped with a connection suspended */
    srv_lane_stop(S->lane);
    /* their answers (503 "the server is stopping" for those cut short) are sent before the
     * connections are closed: up to 2 s for the I/O threads to write them */
    for (int i = 0; S->daemon && i < 200; i++) {
        pthread_mutex_lock(&S->lock);
        int open = S->lane_open;
        pthread_mutex_unlock(&S->lock);
        if (!open)
            break;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (S->daemon)
        S->mhd.MHD_stop_daemon(S->daemon); /* closes every connection, joins every thread */
    srv_lane_free(S->lane);
    srv_guard_free(S->guard);
    dpas_registry_free(S->reg);
    pthread_mutex_destroy(&S->lock);
    free(S);
}

int srv_direct_add(srv_server *S, int fd)
{
    struct sockaddr_in peer;
    memset(&peer, 0, sizeof peer);
    peer.sin_family = AF_INET;
    peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return S->mhd.MHD_add_connection(S->daemon, fd, (const struct sockaddr *)&peer, sizeof peer) ==
                   MHD_YES
               ? 0
               : -1;
}

void srv_direct_run(srv_server *S) { S->mhd.MHD_run(S->daemon); }
