/* The heavy lane: requests whose work grows with their input (calibrate, sweep, plot.svg) are
 * not answered on the threads that read connections, so that a slow one never holds up a cheap
 * one. A bounded queue feeds a fixed number of worker threads; each job runs in a process of its
 * own, forked for it, which:
 *   - is killed when its CPU time passes the budget (--cpu-limit), or when it has taken ten times
 *     that plus ten seconds of wall-clock time whatever its CPU (a process that blocks);
 *   - runs niced, so that the cheap requests of the I/O threads win the CPU from it;
 *   - can fail or crash without taking the server with it.
 * The worker thread reads the process's answer from a pipe and hands it back; a job over the
 * budget is answered 503. When every worker is busy and the queue is full a new heavy request is
 * answered 503 with Retry-After at once, without waiting.
 *
 * The process is a fork of the server: the registry and the request are already in its memory,
 * and only the worker thread that forked exists in it. It computes through the library (which
 * keeps no global state and takes no lock), writes one message and leaves with _exit. */
#define _GNU_SOURCE /* close_range */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct srv_lane {
    pthread_mutex_t lock;
    pthread_cond_t more;
    srv_job *head, *tail; /* waiting */
    int taken;            /* places reserved: waiting, running, or about to be submitted */
    int capacity;         /* workers + queue */
    int nworkers, started;
    pthread_t *threads;
    pid_t *running;        /* per worker: its job's process, 0 when none */
    int stopping, drained; /* drained: the threads are joined, nothing waits */
    double cpu_limit, wall;
};

/* What a job's process writes back: this head, then len bytes of body. The const char * members
 * point to string literals and static tables of the executable (Content-Type, Allow,
 * Cache-Control), which a fork shares with its parent at the same addresses. */
typedef struct lane_msg {
    uint64_t magic;
    int status, retry_after, preflight;
    size_t len;
    const char *type, *allow, *cache, *encoding, *vary;
    char warning[sizeof(((srv_response *)0)->warning)];
    char etag[sizeof(((srv_response *)0)->etag)];
} lane_msg;

#define LANE_MAGIC 0x6470617353525631ull /* "dpasSRV1" */

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

/* In the job's process: answer, write, leave. Never returns. */
static void child(srv_job *job, int fd, double cpu_limit)
{
    /* nothing of the server's but the pipe stays open: a connection the server closes must not
     * stay open in here */
    if (fd > 3)
        close_range(3, (unsigned)fd - 1, 0);
    close_range((unsigned)fd + 1, ~0u, 0);
    /* a second line of defence behind the parent's watch of the CPU clock */
    struct rlimit rl;
    rl.rlim_cur = (rlim_t)ceil(cpu_limit) + 1;
    rl.rlim_max = rl.rlim_cur + 1;
    setrlimit(RLIMIT_CPU, &rl);
    errno = 0;
    if (nice(10) == -1 && errno)
        (void)0; /* already as nice as it gets: go on */
    srv_response r;
    memset(&r, 0, sizeof r);
    srv_route(&job->rq, &r);
    srv_negotiate_finish(&job->rq, &r); /* here too: gzip is work of the request's own */
    lane_msg m;
    memset(&m, 0, sizeof m);
    m.magic = LANE_MAGIC;
    m.status = r.status;
    m.retry_after = r.retry_after;
    m.preflight = r.preflight;
    m.len = r.len;
    m.type = r.type;
    m.allow = r.allow;
    m.cache = r.cache;
    m.encoding = r.encoding;
    m.vary = r.vary;
    memcpy(m.warning, r.warning, sizeof m.warning);
    memcpy(m.etag, r.etag, sizeof m.etag);
    int bad = write_all(fd, &m, sizeof m) || (r.len && write_all(fd, r.body, r.len));
    _exit(bad ? 2 : 0); /* no atexit handlers, no flushing of the server's stdio */
}

static void fail(srv_response *r, int status, const char *field, const char *msg)
{
    if (r->free_body && r->body)
        r->free_body(r->body);
    r->body = NULL;
    r->free_body = NULL;
    srv_fail(r, status, DPAS_EINVAL, field, "%s", msg);
}

enum { OK = 0, OVER_CPU, OVER_WALL, TOO_BIG, STOPPED };

/* Run one job in a process; fill job->r. w is the worker's index. */
static void run(srv_lane *l, int w, srv_job *job)
{
    srv_response *r = &job->r;
    int p[2];
    char msg[300];
    if (pipe2(p, O_CLOEXEC)) {
        snprintf(msg, sizeof msg, "cannot make a pipe for the request's process: %s",
                 strerror(errno));
        fail(r, 503, "request", msg);
        r->retry_after = 1;
        return;
    }
    pid_t pid = fork();
    if (pid == 0)
        child(job, p[1], l->cpu_limit);
    close(p[1]);
    if (pid < 0) {
        snprintf(msg, sizeof msg, "cannot start a process for the request: %s", strerror(errno));
        close(p[0]);
        fail(r, 503, "request", msg);
        r->retry_after = 1;
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
    char *buf = NULL;
    size_t n = 0, cap = 0;
    /* 20 ms between looks at the CPU clock: a job passes its budget by at most that */
    for (int done = 0; !done;) {
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int rc = poll(&pf, 1, 20);
        if (rc > 0) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 65536;
                char *b = n < sizeof(lane_msg) + SRV_MAX_RESPONSE ? realloc(buf, nc) : NULL;
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
        if (have_cpu && !clock_gettime(cpu, &t) && secs(&t) >= l->cpu_limit) {
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
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&l->lock);
    l->running[w] = 0;
    if (!why && l->stopping && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        why = STOPPED;
    pthread_mutex_unlock(&l->lock);
    if (!why && WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU)
        why = OVER_CPU;
    const lane_msg *m = (const lane_msg *)(const void *)buf;
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
    } else if (why == TOO_BIG) {
        fail(r, 500, "request",
             "the answer is larger than the server hands out (a bug in dpas serve)");
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || n < sizeof *m || m->magic != LANE_MAGIC ||
               n - sizeof *m != m->len) {
        if (WIFSIGNALED(st))
            snprintf(msg, sizeof msg,
                     "the request's process died of signal %d (a bug in dpas serve)", WTERMSIG(st));
        else
            snprintf(msg, sizeof msg, "the request's process failed (a bug in dpas serve)");
        fail(r, 500, "request", msg);
    } else {
        if (r->free_body && r->body)
            r->free_body(r->body);
        r->status = m->status;
        r->retry_after = m->retry_after;
        r->preflight = m->preflight;
        r->type = m->type;
        r->allow = m->allow;
        r->cache = m->cache;
        r->encoding = m->encoding;
        r->vary = m->vary;
        memcpy(r->warning, m->warning, sizeof r->warning);
        r->warning[sizeof r->warning - 1] = '\0';
        memcpy(r->etag, m->etag, sizeof r->etag);
        r->etag[sizeof r->etag - 1] = '\0';
        r->len = m->len;
        /* the body moves to the front of the buffer, which the response then owns */
        memmove(buf, buf + sizeof *m, m->len);
        r->body = buf;
        r->free_body = free;
        buf = NULL;
    }
    free(buf);
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
        run(l, w, job);
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

void srv_lane_busy(const srv_lane *l, srv_response *r)
{
    srv_fail(r, 503, DPAS_EINVAL, "request",
             "the server is busy: %d heavy requests (calibrate, sweep, plot.svg) are running or "
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
