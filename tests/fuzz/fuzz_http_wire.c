/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_http_wire: raw bytes into the server as they would arrive on a connection: one
 * `dpas serve` (direct: no threads, no listening socket; heavy requests answered in place) is
 * handed one end of a socket pair per input; the input is written to the other end and the
 * server is run until it has nothing more to do. libmicrohttpd parses the bytes, as it does in
 * `dpas serve`; then comes everything the server does with a request: Host and Origin, routing,
 * strict query decoding, the handlers, the budgets, the answer and its headers. It costs a
 * socket pair and a few rounds of libmicrohttpd per input (about 0.6 ms of CPU); fuzz_http
 * reaches the same handling in-process, at a small fraction of that, from the same corpus.
 *
 * Properties of the first answer, when the server made it (it carries the server's
 * Content-Security-Policy; libmicrohttpd's own refusals do not): a status the server documents
 * and never 500; X-Content-Type-Options; a Content-Length equal to the body that follows; a JSON
 * type has a body that is strict JSON (no NaN, no Infinity), and an error status an error
 * object; plot.svg an SVG document. Besides: no crash, no leak, no hang (libFuzzer's). */
#define _GNU_SOURCE /* memmem */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../src/serve/serve.h"

static srv_server *server(void)
{
    static srv_server *S;
    if (!S) {
        /* an --allow-host name and an --allow-origin, so that those paths are reachable too */
        srv_options o = {.bind = "127.0.0.1",
                         .timeout = 10,
                         .threads = 1,
                         .quiet = 1,
                         .log = stderr,
                         .allow_hosts = "dpas.example",
                         .allow_origins = "http://app.example:8080",
                         .workers = 1,
                         .queue = 1,
                         .cpu_limit = 10,
                         .direct = 1};
        dpas_error err;
        int port = 0;
        memset(&err, 0, sizeof err);
        if (!(S = srv_start(&o, &port, &err))) {
            fprintf(stderr, "fuzz_http: cannot start the server: %s\n", err.message);
            abort();
        }
    }
    return S;
}

/* The value of header name in the head (text up to the blank line), or NULL. */
static const char *header(const char *head, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
        if (!strncasecmp(p + 2, name, n) && p[2 + n] == ':') {
            const char *v = p + 3 + n, *e = strstr(v, "\r\n");
            while (*v == ' ')
                v++;
            size_t l = e ? (size_t)(e - v) : strlen(v);
            if (l >= cap)
                l = cap - 1;
            memcpy(out, v, l);
            out[l] = '\0';
            return out;
        }
    }
    return NULL;
}

static void check_answer(const char *buf, size_t n, int head_request)
{
    if (n < 12 || strncmp(buf, "HTTP/1.", 7))
        return; /* nothing answered: an incomplete request, closed */
    const char *end = memmem(buf, n, "\r\n\r\n", 4);
    if (!end)
        return; /* cut short: the input ended the connection while it was answered */
    size_t hl = (size_t)(end - buf) + 2;
    char *head = fuzz_text((const uint8_t *)buf, hl), v[256];
    if (!header(head, "Content-Security-Policy", v, sizeof v)) { /* libmicrohttpd's own */
        free(head);
        return;
    }
    int status = atoi(buf + 9);
    static const int known[] = {200, 204, 304, 400, 403, 404, 405, 406, 413, 414, 421, 422, 501};
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        ok |= status == known[i];
    PROPERTY(ok, "status %d is none the server documents (or a 500): %.200s", status, head);
    PROPERTY(header(head, "X-Content-Type-Options", v, sizeof v) && !strcmp(v, "nosniff"),
             "no nosniff: %.200s", head);
    const char *type = header(head, "Content-Type", v, sizeof v);
    PROPERTY(type != NULL || status == 204, "no Content-Type: %.200s", head);
    char lenv[32];
    const char *cl = header(head, "Content-Length", lenv, sizeof lenv);
    PROPERTY((cl != NULL) == (status != 204), "Content-Length with 204, or none without: %.200s",
             head);
    size_t len = cl ? strtoul(cl, NULL, 10) : 0, have = n - hl - 2;
    if (!head_request && have >= len) {
        const char *body = end + 4;
        PROPERTY(status < 400 || (type && !strcmp(type, "application/problem+json")),
                 "status %d is not a problem: %s", status, type ? type : "(none)");
        if (type && (!strncmp(type, "application/json", 16) ||
                     !strcmp(type, "application/problem+json"))) {
            json_error_t je;
            json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
            PROPERTY(j != NULL, "status %d: the body is not JSON (%s): %.300s", status, je.text,
                     body);
            if (status >= 400) {
                json_t *st = json_object_get(j, "status");
                PROPERTY(json_is_integer(st) && json_integer_value(st) == status &&
                             json_is_string(json_object_get(j, "detail")),
                         "status %d: not a problem: %.300s", status, body);
            }
            json_decref(j);
        } else if (type && !strncmp(type, "image/svg+xml", 13)) {
            PROPERTY(len > 5 && (!strncmp(body, "<svg", 4) || !strncmp(body, "<?xml", 5)),
                     "an SVG answer that is not an SVG document: %.100s", body);
        }
    }
    free(head);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    srv_server *S = server();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        abort();
    int client = sv[1];
    fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK);
    if (srv_direct_add(S, sv[0])) { /* refused: the server closed it */
        close(client);
        return 0;
    }
    char *out = NULL;
    size_t n = 0, cap = 0, sent = 0;
    /* run until nothing moves for a few rounds: libmicrohttpd advances a connection by steps */
    int closed = 0;
    for (int idle = 0, rounds = 0; !closed && idle < 4 && rounds < 100000; rounds++) {
        int moved = 0;
        if (sent < size) {
            ssize_t w = send(client, data + sent, size - sent, MSG_NOSIGNAL);
            if (w > 0)
                sent += (size_t)w, moved = 1;
            else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                sent = size; /* the server closed its end: nothing more gets in */
        }
        srv_direct_run(S);
        for (;;) {
            if (cap - n < 65536) {
                cap = cap ? cap * 2 : 131072;
                if (!(out = realloc(out, cap)))
                    abort();
            }
            ssize_t r = recv(client, out + n, cap - n, 0);
            if (r > 0) {
                n += (size_t)r;
                moved = 1;
                continue;
            }
            closed = r == 0; /* the server closed the connection */
            break;
        }
        idle = moved ? 0 : idle + 1;
    }
    close(client);
    /* the server sees the end of the stream and closes its side: run it until it has */
    for (int i = 0; i < 4; i++)
        srv_direct_run(S);
    if (getenv("FUZZ_HTTP_SHOW")) /* to see what the server answered to an input */
        fprintf(stderr, "---- %zu bytes answered:\n%.*s\n", n, (int)(n < 600 ? n : 600),
                out ? out : "");
    check_answer(out ? out : "", n, size >= 5 && !memcmp(data, "HEAD ", 5));
    free(out);
    return 0;
}
