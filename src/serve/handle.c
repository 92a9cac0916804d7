/* SPDX-License-Identifier: Apache-2.0 */
/* A complete request, from what HTTP framing delivers to what the router takes: the path split
 * from its query, and the checks made before any route is looked for. The server (server.c, over
 * libmicrohttpd) and the HTTP fuzz target (tests/fuzz/fuzz_http.c, over raw bytes) both go
 * through here, so the fuzzer reaches what the server does with a request. */
#include "serve.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int method_of(const char *m)
{
    return !strcmp(m, "GET")    ? SRV_GET
           : !strcmp(m, "HEAD") ? SRV_HEAD
           : !strcmp(m, "POST") ? SRV_POST
                                : 0;
}

int srv_request_init(srv_request *rq, const srv_incoming *in, const dpas_registry *reg)
{
    memset(rq, 0, sizeof *rq);
    rq->method = method_of(in->method);
    rq->method_name = in->method;
    const char *mark = strchr(in->target, '?');
    size_t plen = mark ? (size_t)(mark - in->target) : strlen(in->target);
    if (!(rq->path_store = malloc(plen + 1)))
        return -1;
    memcpy(rq->path_store, in->target, plen);
    rq->path_store[plen] = '\0';
    rq->path = rq->path_store;
    rq->raw_query = mark ? mark + 1 : "";
    rq->raw_query_len = strlen(rq->raw_query);
    rq->body = in->body;
    rq->body_len = in->body ? in->body_len : 0;
    rq->content_type = in->content_type;
    rq->accept = in->accept;
    rq->accept_encoding = in->accept_encoding;
    rq->if_none_match = in->if_none_match;
    rq->reg = reg;
    return 0;
}

void srv_request_fini(srv_request *rq)
{
    free(rq->path_store);
    rq->path_store = NULL;
    rq->path = NULL;
}

int srv_screen(const srv_guard *g, const srv_incoming *in, const srv_request *rq, srv_response *r)
{
    if (srv_guard_check(g, in->method, in->host, in->origin, in->acrm, r))
        return -1;
    if (rq->body && rq->method != SRV_POST && rq->method) {
        srv_fail(r, 400, DPAS_EINVAL, "body", "%s takes no request body", in->method);
        return -1;
    }
    return 0;
}

/* The headers the server reads, and those that frame a request, each of which must come once
 * (issue 29: two Sec-Fetch-Site headers, the first same-origin and the second cross-site, were
 * judged by the first; two Transfer-Encoding headers were framed by the first). */
static const char *const single_headers[SRV_NSINGLE] = {"Host",
                                                        "Origin",
                                                        "Access-Control-Request-Method",
                                                        "Content-Type",
                                                        "Content-Length",
                                                        "Accept",
                                                        "Accept-Encoding",
                                                        "If-None-Match",
                                                        "Sec-Fetch-Site",
                                                        "Transfer-Encoding",
                                                        "Connection"};
enum { H_CONTENT_LENGTH = 4, H_TRANSFER_ENCODING = 9 };

void srv_headers_count(srv_header_tally *t, const char *name, const char *value)
{
    /* "Content-Length : 5" is not Content-Length to this tally, but may be to a proxy in front:
     * RFC 9112 section 5.1 has a server refuse whitespace between a name and its colon */
    if (name && !t->bad_name && strpbrk(name, " \t"))
        t->bad_name = name;
    for (size_t i = 0; name && i < SRV_NSINGLE; i++)
        if (!strcasecmp(name, single_headers[i])) {
            if (i == H_TRANSFER_ENCODING && !t->seen[i])
                t->transfer_encoding = value ? value : "";
            t->seen[i]++;
        }
}

int srv_headers_check(const srv_header_tally *t, srv_response *r)
{
    if (t->bad_name) {
        char q[96];
        srv_fail(r, 400, DPAS_EINVAL, "header",
                 "the header name %s holds whitespace; a name is followed by its colon at once "
                 "(RFC 9112, section 5.1)",
                 dpas_quote(t->bad_name, q, sizeof q));
        return 400;
    }
    for (size_t i = 0; i < SRV_NSINGLE; i++)
        if (t->seen[i] > 1) {
            srv_fail(r, 400, DPAS_EINVAL, "header",
                     "the header %s is given %u times; give it once (which one counts would be "
                     "a guess)",
                     single_headers[i], t->seen[i]);
            return 400;
        }
    if (t->seen[H_TRANSFER_ENCODING] && t->seen[H_CONTENT_LENGTH]) {
        srv_fail(r, 400, DPAS_EINVAL, "header",
                 "the headers Transfer-Encoding and Content-Length are both given; give one "
                 "(which one frames the body would be a guess)");
        return 400;
    }
    const char *te = t->transfer_encoding;
    if (te && strcasecmp(te, "chunked")) {
        char q[96];
        srv_fail(r, 501, DPAS_EINVAL, "header",
                 "the header Transfer-Encoding is %s; dpas serve takes chunked alone (or a "
                 "Content-Length)",
                 dpas_quote(te, q, sizeof q));
        return 501;
    }
    return 0;
}
