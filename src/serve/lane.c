/* SPDX-License-Identifier: Apache-2.0 */
/* The heavy lane: requests whose work grows with their input (calibrate, sweep, plot.svg) are
 * not answered on the threads that read connections, so that a slow one never holds up a cheap
 * one. A bounded queue feeds a fixed number of worker threads; each job runs in a process of its
 * own, which:
 *   - is killed when its CPU time passes the budget (--cpu-limit), or when it has taken ten times
 *     that plus ten seconds of wall-clock time whatever its CPU (a process that blocks);
 *   - runs niced, so that the cheap requests of the I/O threads win the CPU from it;
 *   - can fail or crash without taking the server with it.
 * The worker thread reads the process's answer from a pipe and hands it back; a job over the
 * budget is answered 503. When every worker is busy and the queue is full a new heavy request is
 * answered 503 with Retry-After at once, without waiting.
 *
 * The process is the server's own executable started afresh (posix_spawn of /proc/self/exe as
 * "dpas serve --lane-job"), not a bare fork: after fork() in a process with threads only
 * async-signal-safe calls are allowed, and a job allocates. A fork taken while another thread held
 * an allocator's lock would wait for it forever (AddressSanitizer's allocator has no fork handler:
 * one heavy request in a few hundred hung so under load). The request goes to the process on its
 * stdin (lane_in: its method, target, negotiation headers and body, checked and screened by the
 * server already), the answer comes back on its stdout (a start mark, lane_msg, then the body).
 * The process loads the built-in registry (a few milliseconds), writes the mark (the CPU budget
 * counts from there: its start-up is not the request's), computes through the library, writes
 * one message and exits. Where /proc/self/exe is not dpas (dpas started through the dynamic
 * loader, or under valgrind), which the server learns once at start ("dpas serve --lane-probe"),
 * the process is a fork of the server instead (forked_child), as before, and the server warns. */
#define _GNU_SOURCE /* close_range */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct srv_lane {
    pthread_mutex_t lock;
    pthread_cond_t more;
    srv_job *head, *tail; /* waiting */
    int taken;            /* places reserved: waiting, running, or about to be submitted */
    int capacity;         /* workers + queue */
    int nworkers, started;
    pthread_t *threads;
    pid_t *running; /* per worker: its job's process, 0 when none */
    int forks;      /* /proc/self/exe is not dpas: a job's process is a fork (forked_child) */
    int stopping, drained; /* drained: the threads are joined, nothing waits */
    double cpu_limit, wall;
};

/* What the server writes to a job's process: this head, then each present string followed by a
 * NUL (a length of LANE_NONE: the header was absent). */
enum {
    IN_METHOD,
    IN_TARGET,
    IN_CONTENT_TYPE,
    IN_ACCEPT,
    IN_ACCEPT_ENCODING,
    IN_IF_NONE_MATCH,
    IN_BODY,
    IN_N
};
typedef struct lane_in {
    uint64_t magic;
    double cpu_limit;
    uint64_t len[IN_N];
} lane_in;

#define LANE_NONE UINT64_MAX
/* the largest input a job's process reads: the server refuses larger requests before (414, 413) */
#define LANE_MAX_IN (sizeof(lane_in) + 2 * SRV_MAX_URL + 6 * 8192 + SRV_MAX_BODY + IN_N)

/* What a job's process writes back: this head, then len bytes of body. The headers' values are
 * text (static strings of the executable in the process; the job keeps their copies). */
enum { OUT_TYPE, OUT_ALLOW, OUT_CACHE, OUT_ENCODING, OUT_VARY, OUT_N };
typedef struct lane_msg {
    uint64_t magic;
    int status, retry_after, preflight;
    uint64_t len;
    char text[OUT_N][SRV_LANE_HEADER]; /* "" for none */
    char warning[sizeof(((srv_response *)0)->warning)];
    char etag[sizeof(((srv_response *)0)->etag)];
} lane_msg;

#define LANE_MAGIC 0x6470617353525632ull /* "dpasSRV2": the answer */
#define LANE_STARTED 'S'   /* the first byte a job's process writes, when it is ready to work */
#define LANE_START_CPU 5.0 /* seconds of CPU a job's process may take to start, beyond its budget */
#define LANE_IN_MAGIC 0x647061735352513full /* "dpasSRQ?": the request */

static double secs(const struct timespec *t)
{
    return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---- in the job's process ---------------------------------------------------------------------- */

static int job_refuse(const char *why)
{
    fprintf(stderr,
            "dpas: error: serve --lane-job is dpas serve's own worker process (it reads one "
            "request from the server on stdin): %s\n",
            why);
    return 1; /* the CLI's exit status for bad input */
}

/* A header's value into the message: 0, or -1 when it does not fit (a bug: the values are the
 * server's own short constants). */
static int put_text(char *dst, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= SRV_LANE_HEADER)
        return -1;
    memcpy(dst, src ? src : "", n + 1);
    return 0;
}

/* The answer to one request, on fd: the start mark (LANE_STARTED: the process is ready, what it
 * spends from here is the request's), then lane_msg and the body. 0, or -1 when it could not be
 * written (errno set). */
static int answer(const srv_incoming *in, const dpas_registry *reg, int fd)
{
    const char mark = LANE_STARTED;
    if (write_all(fd, &mark, 1))
        return -1;
    srv_request rq;
    srv_response r;
    memset(&r, 0, sizeof r);
    if (srv_request_init(&rq, in, reg)) {
        errno = ENOMEM;
        return -1;
    }
    srv_route(&rq, &r);
    srv_negotiate_finish(&rq, &r); /* here too: gzip is work of the request's own */
    lane_msg m;
    memset(&m, 0, sizeof m);
    m.magic = LANE_MAGIC;
    m.status = r.status;
    m.retry_after = r.retry_after;
    m.preflight = r.preflight;
    m.len = r.len;
    memcpy(m.warning, r.warning, sizeof m.warning);
    memcpy(m.etag, r.etag, sizeof m.etag);
    int rc = -1;
    if (put_text(m.text[OUT_TYPE], r.type) || put_text(m.text[OUT_ALLOW], r.allow) ||
        put_text(m.text[OUT_CACHE], r.cache) || put_text(m.text[OUT_ENCODING], r.encoding) ||
        put_text(m.text[OUT_VARY], r.vary))
        errno = ENAMETOOLONG; /* a header value beyond SRV_LANE_HEADER: a bug of the server */
    else if (!write_all(fd, &m, sizeof m) && !(r.len && write_all(fd, r.body, r.len)))
        rc = 0;
    int saved = errno;
    if (r.free_body && r.body)
        r.free_body(r.body);
    srv_request_fini(&rq);
    errno = saved;
    return rc;
}

/* Where the job's process gets its budget and priority: a second line of defence behind the
 * server's watch of the CPU clock, and the cheap requests' precedence. */
static void job_limits(double cpu_limit)
{
    struct rlimit rl;
    rl.rlim_cur = (rlim_t)ceil(cpu_limit) + 1;
    rl.rlim_max = rl.rlim_cur + 1;
    setrlimit(RLIMIT_CPU, &rl);
    errno = 0;
    if (nice(10) == -1 && errno)
        (void)0; /* already as nice as it gets: go on */
}

int srv_lane_job(void)
{
    /* nothing of the server's but stdin, stdout and stderr: a connection the server closes must
     * not stay open in here */
    close_range(3, ~0u, 0);
    size_t n = 0, cap = 65536;
    char *buf = malloc(cap);
    if (!buf)
        return job_refuse("out of memory");
    for (;;) {
        if (n == cap) {
            size_t nc = cap * 2 > LANE_MAX_IN ? LANE_MAX_IN : cap * 2;
            char *b = nc > cap ? realloc(buf, nc) : NULL;
            if (!b) {
                free(buf);
                return job_refuse(nc > cap ? "out of memory"
                                           : "the request is larger than the server sends");
            }
            buf = b;
            cap = nc;
        }
        ssize_t k = read(0, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            free(buf);
            return job_refuse(strerror(errno));
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    lane_in h;
    const char *s[IN_N];
    size_t pos = sizeof h;
    int bad = n < sizeof h;
    if (!bad) {
        memcpy(&h, buf, sizeof h);
        /* the server sends --cpu-limit's value: finite, from 0.001 to 3600 s */
        bad = h.magic != LANE_IN_MAGIC || !(h.cpu_limit > 0 && h.cpu_limit <= 3600);
    }
    for (int i = 0; !bad && i < IN_N; i++) {
        if (h.len[i] == LANE_NONE) {
            s[i] = NULL;
            continue;
        }
        bad = h.len[i] >= n - pos || buf[pos + h.len[i]] != '\0';
        s[i] = buf + pos;
        pos += bad ? 0 : (size_t)h.len[i] + 1;
    }
    if (bad || pos != n || !s[IN_METHOD] || !s[IN_TARGET]) {
        free(buf);
        return job_refuse("what came is not a request from the server");
    }
    job_limits(h.cpu_limit);
    srv_incoming in = {.method = s[IN_METHOD],
                       .target = s[IN_TARGET],
                       .content_type = s[IN_CONTENT_TYPE],
                       .accept = s[IN_ACCEPT],
                       .accept_encoding = s[IN_ACCEPT_ENCODING],
                       .if_none_match = s[IN_IF_NONE_MATCH],
                       .body = s[IN_BODY],
                       .body_len = s[IN_BODY] ? (size_t)h.len[IN_BODY] : 0};
    dpas_registry *reg = NULL;
    dpas_error err;
    memset(&err, 0, sizeof err);
    int rc = 0;
    if (dpas_registry_builtin(&reg, &err)) {
        fprintf(stderr, "dpas: error: serve --lane-job: %s\n", err.message);
        rc = 2;
    } else if (answer(&in, reg, 1)) {
        fprintf(stderr, "dpas: error: serve --lane-job: cannot write the answer: %s\n",
                strerror(errno));
        rc = 2;
    }
    dpas_registry_free(reg);
    free(buf);
    return rc;
}

/* "dpas serve --lane-probe": what the server starts once to learn that /proc/self/exe is dpas. */
#define LANE_PROBE_TEXT "dpas serve lane ok\n"
int srv_lane_probe(void)
{
    return write_all(1, LANE_PROBE_TEXT, sizeof LANE_PROBE_TEXT - 1) ? 2 : 0;
}

/* ---- in the server --------------------------------------------------------------------------- */

/* A pipe whose ends are >= 3 (so that making them a process's stdin and stdout never clobbers
 * one with the other, whatever the server was started with) and close-on-exec. */
static int pipe3(int p[2])
{
    int q[2];
    if (pipe2(q, O_CLOEXEC))
        return -1;
    for (int i = 0; i < 2; i++) {
        p[i] = q[i] >= 3 ? q[i] : fcntl(q[i], F_DUPFD_CLOEXEC, 3);
        if (p[i] != q[i])
            close(q[i]);
    }
    if (p[0] < 0 || p[1] < 0) {
        if (p[0] >= 0)
            close(p[0]);
        if (p[1] >= 0)
            close(p[1]);
        return -1;
    }
    return 0;
}

/* The request's target as it came (path, and '?' and the query when there was one), in memory
 * of its own (free); NULL when out of memory. srv_request_init splits it again. */
static char *target_of(const srv_request *rq)
{
    size_t pl = strlen(rq->path);
    char *t = malloc(pl + 2 + rq->raw_query_len);
    if (!t)
        return NULL;
    memcpy(t, rq->path, pl + 1);
    if (rq->raw_query_len) {
        t[pl] = '?';
        memcpy(t + pl + 1, rq->raw_query, rq->raw_query_len);
        t[pl + 1 + rq->raw_query_len] = '\0';
    }
    return t;
}

/* The request as the job's process reads it (lane_in and its strings); NULL when out of memory. */
static char *job_input(const srv_job *job, double cpu_limit, size_t *len)
{
    const srv_request *rq = &job->rq;
    char *target = target_of(rq);
    if (!target)
        return NULL;
    const char *str[IN_N] = {
        rq->method_name,   target,  rq->content_type, rq->accept, rq->accept_encoding,
        rq->if_none_match, rq->body};
    lane_in h;
    memset(&h, 0, sizeof h);
    h.magic = LANE_IN_MAGIC;
    h.cpu_limit = cpu_limit;
    size_t total = sizeof h;
    for (int i = 0; i < IN_N; i++) {
        h.len[i] = i == IN_BODY ? (rq->body ? rq->body_len : LANE_NONE)
                   : str[i]     ? strlen(str[i])
                                : LANE_NONE;
        if (h.len[i] != LANE_NONE)
            total += (size_t)h.len[i] + 1;
    }
    char *b = malloc(total), *p = b;
    if (b) {
        memcpy(p, &h, sizeof h);
        p += sizeof h;
        for (int i = 0; i < IN_N; i++) {
            if (h.len[i] == LANE_NONE)
                continue;
            memcpy(p, str[i], (size_t)h.len[i]);
            p += h.len[i];
            *p++ = '\0';
        }
        *len = total;
    }
    free(target);
    return b;
}

/* Start "dpas serve --lane-job" with stdin from in and stdout to out; its signals as a fresh
 * process's (the server blocks SIGINT and SIGTERM and ignores SIGPIPE). 0, or an errno. */
static int spawn_job(pid_t *pid, int in, int out)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc)
        return rc;
    if ((rc = posix_spawnattr_init(&at))) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    sigset_t none, dflt;
    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGPIPE);
    sigaddset(&dflt, SIGINT);
    sigaddset(&dflt, SIGTERM);
    char *argv[] = {"dpas", "serve", "--lane-job", NULL};
    if (!(rc = posix_spawn_file_actions_adddup2(&fa, in, 0)) &&
        !(rc = posix_spawn_file_actions_adddup2(&fa, out, 1)) &&
        !(rc = posix_spawnattr_setsigmask(&at, &none)) &&
        !(rc = posix_spawnattr_setsigdefault(&at, &dflt)) &&
        !(rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)))
        rc = posix_spawn(pid, "/proc/self/exe", &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

static void fail(srv_response *r, int status, const char *field, const char *msg)
{
    if (r->free_body && r->body)
        r->free_body(r->body);
    r->body = NULL;
    r->free_body = NULL;
    srv_fail(r, status, DPAS_EINVAL, field, "%s", msg);
}

enum { OK = 0, OVER_CPU, OVER_WALL, TOO_BIG, STOPPED, GONE };

/* Has the client closed its connection (or half-closed it: an HTTP client sends nothing after
 * its request but the next one, so its end of stream means it is gone)? Without waiting. */
static int client_gone(int fd)
{
    if (fd < 0)
        return 0;
    struct pollfd pf = {.fd = fd, .events = POLLRDHUP};
    return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* The fallback where /proc/self/exe is not dpas (started through the dynamic loader, or under a
 * tool such as valgrind): the job's process is a fork of the server, which answers from the
 * request and the registry already in its memory. Never returns. */
static void forked_child(srv_job *job, int fd, double cpu_limit)
{
    if (fd > 3)
        close_range(3, (unsigned)fd - 1, 0);
    close_range((unsigned)fd + 1, ~0u, 0);
    job_limits(cpu_limit);
    const srv_request *rq = &job->rq;
    char *target = target_of(rq);
    if (!target)
        _exit(2);
    srv_incoming in = {.method = rq->method_name,
                       .target = target,
                       .content_type = rq->content_type,
                       .accept = rq->accept,
                       .accept_encoding = rq->accept_encoding,
                       .if_none_match = rq->if_none_match,
                       .body = rq->body,
                       .body_len = rq->body_len};
    _exit(answer(&in, rq->reg, fd) ? 2 : 0); /* no atexit handlers, no flushing of stdio */
}

/* Does /proc/self/exe start dpas? Asked once, when the lane is made: "dpas serve --lane-probe"
 * answers LANE_PROBE_TEXT within 30 s. Not when dpas was started through the dynamic loader
 * (/proc/self/exe is ld.so), under valgrind (its tool), or without /proc. */
static int exe_is_dpas(void)
{
    int p[2];
    if (pipe3(p))
        return 0;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t pid = 0;
    posix_spawn_file_actions_t fa;
    int ok = 0;
    if (devnull >= 0 && !posix_spawn_file_actions_init(&fa)) {
        char *argv[] = {"dpas", "serve", "--lane-probe", NULL};
        if (!posix_spawn_file_actions_adddup2(&fa, devnull, 0) &&
            !posix_spawn_file_actions_adddup2(&fa, p[1], 1) &&
            !posix_spawn_file_actions_adddup2(&fa, devnull, 2) &&
            !posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ))
            ok = 1;
        posix_spawn_file_actions_destroy(&fa);
    }
    if (devnull >= 0)
        close(devnull);
    close(p[1]);
    char got[64];
    size_t n = 0;
    while (ok && n < sizeof got) {
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int rc = poll(&pf, 1, 30000);
        if (rc < 0 && errno == EINTR)
            continue;
        ssize_t k = rc > 0 ? read(p[0], got + n, sizeof got - n) : -1;
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(p[0]);
    int st = 0;
    if (ok) {
        kill(pid, SIGKILL); /* done or not, it has had its time */
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    return ok && n == sizeof LANE_PROBE_TEXT - 1 && !memcmp(got, LANE_PROBE_TEXT, n);
}

/* A job whose process could not be started: 503, try again in a second. */
static void not_started(srv_job *job, const char *msg)
{
    fail(&job->r, 503, "request", msg);
    job->r.retry_after = 1;
    srv_negotiate_finish(&job->rq, &job->r);
}

/* The job's answer from what its process wrote (buf, n bytes: the start mark, lane_msg, the
 * body; buf is taken) and how it ended (why, its wait status st). */
static void answer_of(const srv_lane *l, srv_job *job, int why, int st, char *buf, size_t n)
{
    srv_response *r = &job->r;
    char msg[300];
    lane_msg mm; /* copied: after the start mark the message is not aligned in buf */
    memset(&mm, 0, sizeof mm);
    int whole = n >= 1 + sizeof mm;
    if (whole)
        memcpy(&mm, buf + 1, sizeof mm);
    const lane_msg *m = &mm;
    if (why == OVER_CPU) {
        snprintf(msg, sizeof msg,
                 "the request needed more than %g s of CPU time, the server's limit per request "
                 "(dpas serve --cpu-limit; the same on the command line has no such limit)",
                 l->cpu_limit);
        fail(r, 503, "request", msg);
    } else if (why == OVER_WALL) {
        snprintf(msg, sizeof msg, "the request took more than %g s, the server's limit", l->wall);
        fail(r, 503, "request", msg);
    } else if (why == STOPPED) {
        fail(r, 503, "request", "the server is stopping");
    } else if (why == GONE) {
        job->gone = 1; /* never sent: the server closes the connection */
        fail(r, 503, "request", "the client closed the connection; its job was stopped");
    } else if (why == TOO_BIG) {
        fail(r, 500, "request",
             "the answer is larger than the server hands out (a bug in dpas serve)");
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !whole || buf[0] != LANE_STARTED ||
               m->magic != LANE_MAGIC || n - 1 - sizeof *m != m->len) {
        if (WIFSIGNALED(st))
            snprintf(msg, sizeof msg,
                     "the request's process died of signal %d (%s): killed from outside the "
                     "server, or a bug in dpas serve",
                     WTERMSIG(st), strsignal(WTERMSIG(st)));
        else
            snprintf(msg, sizeof msg,
                     "the request's process failed (exit status %d; a bug in dpas serve)",
                     WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        fail(r, 500, "request", msg);
    } else {
        if (r->free_body && r->body)
            r->free_body(r->body);
        r->status = m->status;
        r->retry_after = m->retry_after;
        r->preflight = m->preflight;
        /* the headers' text is kept by the job, which outlives the answer's sending */
        const char **to[OUT_N] = {&r->type, &r->allow, &r->cache, &r->encoding, &r->vary};
        for (int i = 0; i < OUT_N; i++) {
            memcpy(job->text[i], m->text[i], SRV_LANE_HEADER);
            job->text[i][SRV_LANE_HEADER - 1] = '\0';
            *to[i] = job->text[i][0] ? job->text[i] : NULL;
        }
        memcpy(r->warning, m->warning, sizeof r->warning);
        r->warning[sizeof r->warning - 1] = '\0';
        memcpy(r->etag, m->etag, sizeof r->etag);
        r->etag[sizeof r->etag - 1] = '\0';
        r->len = m->len;
        /* the body moves to the front of the buffer, which the response then owns */
        memmove(buf, buf + 1 + sizeof *m, m->len);
        r->body = buf;
        r->free_body = free;
        buf = NULL;
        return;
    }
    free(buf);
    srv_negotiate_finish(&job->rq,
                         r); /* the lane's own answers: Vary and the rest, as every other */
}

/* Run one job in a process; fill job->r. w is the worker's index. */
static void run(srv_lane *l, int w, srv_job *job)
{
    int p[2], q[2] = {-1, -1}; /* p: the answer, from the process; q: the request, to it */
    char msg[300];
    size_t in_len = 0, in_done = 0;
    char *in = l->forks ? NULL : job_input(job, l->cpu_limit, &in_len);
    if ((!l->forks && !in) || pipe3(p)) {
        snprintf(msg, sizeof msg, "cannot make a pipe for the request's process: %s",
                 l->forks || in ? strerror(errno) : "out of memory");
        free(in);
        not_started(job, msg);
        return;
    }
    if (!l->forks && pipe3(q)) {
        snprintf(msg, sizeof msg, "cannot make a pipe for the request's process: %s",
                 strerror(errno));
        close(p[0]), close(p[1]), free(in);
        not_started(job, msg);
        return;
    }
    pid_t pid = 0;
    int err = 0;
    if (l->forks) {
        pid = fork();
        if (pid == 0)
            forked_child(job, p[1], l->cpu_limit);
        err = pid < 0 ? errno : 0;
    } else {
        err = spawn_job(&pid, q[0], p[1]);
        close(q[0]);
        /* written as the process reads: never blocks the worker beyond its watch */
        fcntl(q[1], F_SETFL, fcntl(q[1], F_GETFL) | O_NONBLOCK);
    }
    close(p[1]);
    if (err) {
        snprintf(msg, sizeof msg, "cannot start a process for the request: %s", strerror(err));
        close(p[0]), free(in);
        if (q[1] >= 0)
            close(q[1]);
        not_started(job, msg);
        return;
    }
    pthread_mutex_lock(&l->lock);
    l->running[w] = pid;
    int why = l->stopping ? STOPPED : OK;
    pthread_mutex_unlock(&l->lock);
    if (why)
        kill(pid, SIGKILL);
    clockid_t cpu;
    int have_cpu = clock_getcpuclockid(pid, &cpu) == 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* the budget counts from the start mark: the process's own start (a few milliseconds, a
     * tenth of a second under AddressSanitizer) is not the request's; a start that takes
     * LANE_START_CPU seconds of CPU is stopped as over the budget */
    double base = -1;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    /* 20 ms between looks at the CPU clock: a job passes its budget by at most that */
    for (int done = 0; !done && !why;) {
        struct pollfd pf[2] = {{.fd = p[0], .events = POLLIN}, {.fd = q[1], .events = POLLOUT}};
        int rc = poll(pf, q[1] >= 0 ? 2 : 1, 20);
        if (client_gone(job->client_fd)) { /* nobody waits for the answer: the work stops */
            why = GONE;
            kill(pid, SIGKILL);
            break;
        }
        if (rc > 0 && q[1] >= 0 && pf[1].revents) {
            ssize_t k = write(q[1], in + in_done, in_len - in_done);
            if (k > 0)
                in_done += (size_t)k;
            /* all written, or the process is gone (EPIPE: its answer, or none, says why) */
            if (in_done == in_len || (k < 0 && errno != EINTR && errno != EAGAIN)) {
                close(q[1]);
                q[1] = -1;
            }
        }
        if (rc > 0 && pf[0].revents) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 65536;
                char *b = n < 1 + sizeof(lane_msg) + SRV_MAX_RESPONSE ? realloc(buf, nc) : NULL;
                if (!b) {
                    why = TOO_BIG;
                    kill(pid, SIGKILL);
                    break;
                }
                buf = b;
                cap = nc;
            }
            ssize_t k = read(p[0], buf + n, cap - n);
            if (k > 0)
                n += (size_t)k;
            else if (k == 0 || errno != EINTR)
                done = 1;
        }
        if (done || why)
            break;
        int have_t = have_cpu && !clock_gettime(cpu, &t);
        if (base < 0 && n > 0)
            base = have_t ? secs(&t) : 0;
        if (have_t && secs(&t) - (base < 0 ? 0 : base) >=
                          (base < 0 ? l->cpu_limit + LANE_START_CPU : l->cpu_limit)) {
            why = OVER_CPU;
            kill(pid, SIGKILL);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (!why && secs(&t) - secs(&t0) >= l->wall) {
            why = OVER_WALL;
            kill(pid, SIGKILL);
        }
        pthread_mutex_lock(&l->lock);
        if (!why && l->stopping) {
            why = STOPPED;
            kill(pid, SIGKILL);
        }
        pthread_mutex_unlock(&l->lock);
    }
    close(p[0]);
    if (q[1] >= 0)
        close(q[1]);
    free(in);
    /* no longer a process srv_lane_stop may signal: once reaped, its pid can be another's */
    pthread_mutex_lock(&l->lock);
    l->running[w] = 0;
    int stopping = l->stopping;
    pthread_mutex_unlock(&l->lock);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!why && stopping && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        why = STOPPED;
    if (!why && WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU)
        why = OVER_CPU;
    answer_of(l, job, why, st, buf, n);
}

static void *worker(void *arg)
{
    srv_lane *l = ((void **)arg)[0];
    int w = (int)(intptr_t)((void **)arg)[1];
    free(arg);
    pthread_mutex_lock(&l->lock);
    for (;;) {
        while (!l->head && !l->stopping)
            pthread_cond_wait(&l->more, &l->lock);
        if (l->stopping)
            break; /* what waits is answered by srv_lane_free */
        srv_job *job = l->head;
        l->head = job->next;
        if (!l->head)
            l->tail = NULL;
        pthread_mutex_unlock(&l->lock);
        if (client_gone(job->client_fd)) { /* gone while the job waited: it never starts */
            job->gone = 1;
            fail(&job->r, 503, "request", "the client closed the connection; its job was stopped");
        } else {
            run(l, w, job);
        }
        job->done(job); /* the job is not ours after this */
        pthread_mutex_lock(&l->lock);
        l->taken--;
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

srv_lane *srv_lane_new(int workers, int queue, double cpu_limit, double wall, dpas_error *err)
{
    srv_lane *l = calloc(1, sizeof *l);
    if (l) {
        l->threads = calloc((size_t)workers, sizeof *l->threads);
        l->running = calloc((size_t)workers, sizeof *l->running);
    }
    if (!l || !l->threads || !l->running) {
        if (l)
            free(l->threads), free(l->running), free(l);
        dpas_error_set(err, DPAS_ENOMEM, "", "out of memory");
        return NULL;
    }
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->more, NULL);
    l->nworkers = workers;
    l->capacity = workers + queue;
    l->cpu_limit = cpu_limit;
    l->wall = wall;
    l->forks = !exe_is_dpas(); /* before any worker thread: a fork then is a fork of one thread */
    for (int i = 0; i < workers; i++) {
        void **arg = malloc(2 * sizeof *arg);
        if (arg) {
            arg[0] = l;
            arg[1] = (void *)(intptr_t)i;
        }
        if (!arg || pthread_create(&l->threads[i], NULL, worker, arg)) {
            free(arg);
            dpas_error_set(err, DPAS_EIO, "--workers", "cannot start the worker threads");
            srv_lane_free(l);
            return NULL;
        }
        l->started++;
    }
    return l;
}

int srv_lane_reserve(srv_lane *l)
{
    pthread_mutex_lock(&l->lock);
    int ok = !l->stopping && l->taken < l->capacity;
    if (ok)
        l->taken++;
    pthread_mutex_unlock(&l->lock);
    return ok ? 0 : -1;
}

void srv_lane_submit(srv_lane *l, srv_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&l->lock);
    if (l->drained) { /* reserved just before the lane stopped: nobody would take it */
        pthread_mutex_unlock(&l->lock);
        fail(&job->r, 503, "request", "the server is stopping");
        job->done(job);
        return;
    }
    if (l->tail)
        l->tail->next = job;
    else
        l->head = job;
    l->tail = job;
    pthread_cond_signal(&l->more);
    pthread_mutex_unlock(&l->lock);
}

int srv_lane_forks(const srv_lane *l) { return l->forks; }

void srv_lane_busy(const srv_lane *l, srv_response *r)
{
    srv_fail(
        r, 503, DPAS_EINVAL, "request",
        "the server is busy: %d heavy requests (calibrate, sweep, plot.svg, calibration parts) "
        "are running or "
        "waiting, its limit (--workers %d, --queue %d); try again shortly",
        l->capacity, l->nworkers, l->capacity - l->nworkers);
    r->retry_after = 1;
}

void srv_lane_stop(srv_lane *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->lock);
    int again = l->stopping;
    l->stopping = 1;
    for (int i = 0; i < l->nworkers; i++)
        if (l->running[i] > 0)
            kill(l->running[i], SIGKILL);
    pthread_cond_broadcast(&l->more);
    pthread_mutex_unlock(&l->lock);
    if (again)
        return;
    for (int i = 0; i < l->started; i++)
        pthread_join(l->threads[i], NULL);
    /* the threads are gone: what still waits is answered here */
    pthread_mutex_lock(&l->lock);
    srv_job *job = l->head;
    l->head = l->tail = NULL;
    l->drained = 1;
    pthread_mutex_unlock(&l->lock);
    for (srv_job *next; job; job = next) {
        next = job->next;
        fail(&job->r, 503, "request", "the server is stopping");
        job->done(job);
    }
}

void srv_lane_free(srv_lane *l)
{
    if (!l)
        return;
    srv_lane_stop(l);
    pthread_cond_destroy(&l->more);
    pthread_mutex_destroy(&l->lock);
    free(l->threads);
    free(l->running);
    free(l);
}
