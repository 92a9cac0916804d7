/* SPDX-License-Identifier: Apache-2.0 */
/* serve_client: an HTTP/1.1 load client for `dpas serve`, written for dpas's benchmark and load
 * test. One thread, one epoll loop, N keep-alive connections to a loopback address, each with
 * one request in flight; R requests in all. Every response must have the expected status and
 * the same body as the first one (a server that answers a different body under load is wrong).
 *
 *   serve_client PORT PATH [--connections N] [--requests R] [--status S] [--progress K]
 *                [--max-seconds T] [--host 127.0.0.1]
 *
 * Prints "progress DONE" every K completed requests (for the load test to sample the server's
 * memory), then one JSON line: requests, errors, seconds, requests_per_s, connections.
 * Exit status 0 when every request succeeded, 1 otherwise. Only loopback hosts are accepted. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024
#define MAX_RESPONSE (4 << 20)

typedef struct conn {
    int fd;
    size_t sent;      /* bytes of the request written */
    char *buf;        /* the response being read */
    size_t len, cap;
    int busy;         /* a request is in flight */
} conn;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int open_conn(const struct sockaddr_in *sa, int ep, conn *c, size_t index)
{
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -1;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (const struct sockaddr *)sa, sizeof *sa) && errno != EINPROGRESS) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u64 = index};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev)) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    c->sent = 0;
    c->len = 0;
    c->busy = 0;
    return 0;
}

/* A complete response in c->buf: 1 (status and body set), 0 (need more), -1 (malformed). */
static int parse(conn *c, int *status, const char **body, size_t *blen)
{
    if (c->len < 12)
        return 0;
    char *end = NULL;
    for (size_t i = 3; i < c->len; i++)
        if (c->buf[i] == '\n' && c->buf[i - 1] == '\r' && c->buf[i - 2] == '\n' && c->buf[i - 3] == '\r') {
            end = c->buf + i + 1;
            break;
        }
    if (!end)
        return c->len > 65536 ? -1 : 0;
    if (strncmp(c->buf, "HTTP/1.1 ", 9))
        return -1;
    *status = atoi(c->buf + 9);
    long long cl = -1;
    for (char *p = c->buf; p < end; p++) {
        if (*p == '\n' && (size_t)(end - p) > 16 && !strncasecmp(p + 1, "Content-Length:", 15)) {
            cl = atoll(p + 16);
            break;
        }
    }
    if (cl < 0 || cl > MAX_RESPONSE)
        return -1;
    size_t head = (size_t)(end - c->buf);
    if (c->len < head + (size_t)cl)
        return 0;
    if (c->len > head + (size_t)cl)
        return -1; /* bytes beyond the response: nothing was pipelined */
    *body = end;
    *blen = (size_t)cl;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: serve_client PORT PATH [--connections N] [--requests R] "
                        "[--status S] [--progress K] [--max-seconds T] [--host ADDR]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    const char *path = argv[2], *host = "127.0.0.1";
    long nconn = 64, total = 20000, expect = 200, progress = 0;
    double max_s = 120;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--connections"))
            nconn = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--requests"))
            total = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--status"))
            expect = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--progress"))
            progress = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-seconds"))
            max_s = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--host"))
            host = argv[i + 1];
        else {
            fprintf(stderr, "serve_client: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (nconn < 1 || nconn > MAX_CONNS || total < 1 || port < 1 || port > 65535) {
        fprintf(stderr, "serve_client: 1 <= connections <= %d, requests >= 1, a port\n", MAX_CONNS);
        return 2;
    }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 || strncmp(host, "127.", 4)) {
        fprintf(stderr, "serve_client: the host must be a loopback IPv4 address, got %s\n", host);
        return 2;
    }
    char req[8192];
    int reqlen = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: dpas-serve-client\r\n\r\n",
                          path, host, port);
    if (reqlen <= 0 || (size_t)reqlen >= sizeof req) {
        fprintf(stderr, "serve_client: the path is too long\n");
        return 2;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    conn *cs = calloc((size_t)nconn, sizeof *cs);
    if (ep < 0 || !cs)
        return 2;
    for (long i = 0; i < nconn; i++) {
        cs[i].cap = 65536;
        cs[i].buf = malloc(cs[i].cap);
        if (!cs[i].buf || open_conn(&sa, ep, &cs[i], (size_t)i)) {
            fprintf(stderr, "serve_client: cannot connect to %s:%d: %s\n", host, port, strerror(errno));
            return 1;
        }
    }
    long issued = 0, done = 0, errors = 0, reconnects = 0;
    char *first = NULL;
    size_t first_len = 0;
    double t0 = now_s();
    struct epoll_event evs[256];
    while (done < total) {
        if (now_s() - t0 > max_s) {
            fprintf(stderr, "serve_client: gave up after %.0f s with %ld of %ld requests done\n",
                    max_s, done, total);
            errors += total - done;
            break;
        }
        int n = epoll_wait(ep, evs, 256, 1000);
        if (n < 0 && errno != EINTR)
            break;
        for (int k = 0; k < n; k++) {
            conn *c = &cs[evs[k].data.u64];
            int broken = 0;
            if (c->fd < 0)
                continue;
            if ((evs[k].events & EPOLLOUT) && !c->busy && issued < total) {
                c->busy = 1;
                c->sent = 0;
                issued++;
            }
            if (c->busy && c->sent < (size_t)reqlen) {
                ssize_t w = send(c->fd, req + c->sent, (size_t)reqlen - c->sent, MSG_NOSIGNAL);
                if (w > 0)
                    c->sent += (size_t)w;
                else if (w < 0 && errno != EAGAIN)
                    broken = 1;
                if (c->sent == (size_t)reqlen) {
                    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = evs[k].data.u64};
                    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
                }
            }
            if (!broken && (evs[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
                for (;;) {
                    if (c->len == c->cap) {
                        if (c->cap >= MAX_RESPONSE) {
                            broken = 1;
                            break;
                        }
                        c->cap *= 2;
                        char *b = realloc(c->buf, c->cap);
                        if (!b)
                            return 2;
                        c->buf = b;
                    }
                    ssize_t r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
                    if (r > 0) {
                        c->len += (size_t)r;
                        continue;
                    }
                    if (r == 0 || errno != EAGAIN)
                        broken = 1;
                    break;
                }
                int status;
                const char *body;
                size_t blen;
                int p = c->busy ? parse(c, &status, &body, &blen) : (c->len ? -1 : 0);
                if (p < 0) {
                    broken = 1;
                } else if (p > 0) {
                    if (!first) {
                        first = malloc(blen + 1);
                        memcpy(first, body, blen);
                        first_len = blen;
                    }
                    if (status != expect || blen != first_len || memcmp(body, first, blen)) {
                        if (errors < 5)
                            fprintf(stderr, "serve_client: unexpected response: status %d, %zu bytes\n",
                                    status, blen);
                        errors++;
                    }
                    done++;
                    if (progress && done % progress == 0) {
                        printf("progress %ld\n", done);
                        fflush(stdout);
                    }
                    c->busy = 0;
                    c->len = 0;
                    broken = 0;
                    if (issued < total) {
                        c->busy = 1;
                        c->sent = 0;
                        issued++;
                        ssize_t w = send(c->fd, req, (size_t)reqlen, MSG_NOSIGNAL);
                        if (w > 0)
                            c->sent = (size_t)w;
                        if (c->sent < (size_t)reqlen) {
                            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u64 = evs[k].data.u64};
                            epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
                        }
                    }
                }
            }
            if (broken) { /* a closed or broken connection: an error, then a new connection */
                if (errors < 5)
                    fprintf(stderr, "serve_client: connection lost (%s)\n", strerror(errno));
                errors++;
                if (c->busy)
                    done++;
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
                c->fd = -1;
                reconnects++;
                if (reconnects > 1000 || open_conn(&sa, ep, c, evs[k].data.u64)) {
                    fprintf(stderr, "serve_client: cannot reconnect\n");
                    errors += total - done;
                    done = total;
                }
            }
        }
    }
    double secs = now_s() - t0;
    printf("{\"client\": \"serve_client (dpas bench/serve_client.c: one thread, epoll, keep-alive)\", "
           "\"requests\": %ld, \"errors\": %ld, \"seconds\": %.3f, \"requests_per_s\": %.0f, "
           "\"connections\": %ld, \"response_bytes\": %zu}\n",
           done, errors, secs, (double)done / secs, nconn, first_len);
    for (long i = 0; i < nconn; i++) {
        if (cs[i].fd >= 0)
            close(cs[i].fd);
        free(cs[i].buf);
    }
    free(cs);
    free(first);
    close(ep);
    return errors ? 1 : 0;
}
