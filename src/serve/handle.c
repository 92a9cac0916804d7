/* SPDX-License-Identifier: Apache-2.0 */
/* A complete request, from what HTTP framing delivers to what the router takes: the path split
 * from its query, and the checks made before any route is looked for. The server (server.c, over
 * libmicrohttpd) and the HTTP fuzz target (tests/fuzz/fuzz_http.c, over raw bytes) both go
 * through here, so the fuzzer reaches what the server does with a request. */
#include "serve.h"

#include <stdlib.h>
#include <string.h>

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
