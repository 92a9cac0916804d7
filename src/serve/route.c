/* SPDX-License-Identifier: Apache-2.0 */
/* The route table: each path, the methods it answers, the query keys it takes and its handler.
 * Everything a route does not name is refused here, before any handler runs. */
#include "serve.h"

#include <string.h>

enum {
    NO_INPUTS = SRV_NO_INPUTS,
    INPUTS = SRV_INPUTS,
    INPUTS_BUT_SCENARIO = SRV_INPUTS_BUT_SCENARIO,
    ANY_QUERY = SRV_ANY_QUERY
};

typedef srv_route_info route;

static const char *const o_none[] = {NULL};
static const char *const o_memory[] = {"require_fit", NULL};

static void page(srv_request *rq, srv_response *r);

#define GH (SRV_GET | SRV_HEAD)
#define GHP (SRV_GET | SRV_HEAD | SRV_POST)
static const route routes[] = {
    {"/", 0, GH, ANY_QUERY, -1, o_none, page},
    {"/app.js", 0, GH, NO_INPUTS, -1, o_none, page},
    {"/app.css", 0, GH, NO_INPUTS, -1, o_none, page},
    {"/favicon.svg", 0, GH, NO_INPUTS, -1, o_none, page},
    {"/api/v1", 0, GH, NO_INPUTS, -1, o_none, srv_api_index},
    {"/api/v1/", 0, GH, NO_INPUTS, -1, o_none, srv_api_index},
    {"/api/v1/openapi.json", 0, GH, NO_INPUTS, -1, o_none, srv_api_openapi},
    {"/api/v1/keys", 0, GH, NO_INPUTS, -1, o_none, srv_api_keys},
    {"/api/v1/scenarios", 0, GH, NO_INPUTS, -1, o_none, srv_api_scenarios},
    {"/api/v1/scenarios/", 1, GH, INPUTS_BUT_SCENARIO, DPAS_ANALYSIS_EVAL, o_none,
     srv_api_scenario},
    {"/api/v1/eval", 0, GHP, INPUTS, DPAS_ANALYSIS_EVAL, o_none, srv_api_eval},
    {"/api/v1/cost", 0, GHP, INPUTS, DPAS_ANALYSIS_COST, o_none, srv_api_cost},
    {"/api/v1/step", 0, GHP, INPUTS, DPAS_ANALYSIS_STEP, o_none, srv_api_step},
    {"/api/v1/rules", 0, GH, NO_INPUTS, DPAS_ANALYSIS_RULES, o_none, srv_api_rules},
    {"/api/v1/inventory", 0, GHP, INPUTS, DPAS_ANALYSIS_INVENTORY, o_none, srv_api_inventory},
    {"/api/v1/memory", 0, GHP, INPUTS, DPAS_ANALYSIS_MEMORY, o_memory, srv_api_memory},
    {"/api/v1/sweep", 0, GHP, INPUTS, DPAS_ANALYSIS_SWEEP, o_none, srv_api_sweep},
    {"/api/v1/plot.svg", 0, GHP, INPUTS, DPAS_ANALYSIS_PLOT, o_none, srv_api_plot},
    /* calibrate's keys: the key table's of its analysis (no scenario inputs) */
    {"/api/v1/calibrate", 0, SRV_POST, NO_INPUTS, DPAS_ANALYSIS_CALIBRATE, o_none,
     srv_api_calibrate},
    {"/api/v1/registry/", 1, GH, NO_INPUTS, -1, o_none, srv_api_registry},
};

const srv_route_info *srv_route_at(size_t i)
{
    return i < sizeof routes / sizeof routes[0] ? &routes[i] : NULL;
}

int srv_route_own(const srv_route_info *rt, const char *key)
{
    for (size_t i = 0; rt->opts[i]; i++)
        if (!strcmp(rt->opts[i], key))
            return 1;
    return 0;
}

/* The i-th key of the route's analysis that has a query parameter: its scenario inputs (but the
 * scenario where the path names it), the workload's alias, then its options. */
static const char *analysis_key(const route *rt, size_t i)
{
    if (rt->analysis < 0)
        return NULL;
    const dpas_analysis a = (dpas_analysis)rt->analysis;
    for (int pass = 0; pass < 3; pass++)
        for (int k = 0; k < DPAS_KEY_COUNT; k++) {
            const char *q = dpas_key_query((dpas_key)k);
            int input = k < DPAS_INPUT_COUNT;
            if (!q || !dpas_analysis_takes(a, (dpas_key)k) ||
                (rt->query == INPUTS_BUT_SCENARIO && k == DPAS_KEY_SCENARIO))
                continue;
            if (pass == 1) { /* the inputs' other names ("model") */
                if (!input || !dpas_key_alias((dpas_key)k))
                    continue;
                q = dpas_key_alias((dpas_key)k);
            } else if ((pass == 0) != input) {
                continue;
            }
            if (!i--)
                return q;
        }
    return NULL;
}

const char *srv_route_key(const srv_route_info *rt, size_t i)
{
    size_t n = 0;
    while (analysis_key(rt, n))
        n++;
    if (i < n)
        return analysis_key(rt, i);
    for (size_t j = 0; rt->opts[j]; j++)
        if (j == i - n)
            return rt->opts[j];
    return NULL;
}

static void page(srv_request *rq, srv_response *r)
{
    if (!srv_page(rq, r))
        srv_fail(r, 404, DPAS_ENOENT, "path", "no page resource %s", rq->path);
}

static const char *allow_text(unsigned m)
{
    static const char *const text[8] = {"",     "GET",       "HEAD",       "GET, HEAD",
                                        "POST", "GET, POST", "HEAD, POST", "GET, HEAD, POST"};
    return text[m & 7];
}

/* A request route passes on every key of the library's key table that has a query parameter
 * (the library refuses one its analysis does not take, as for every front end: "rule is not
 * used by eval"); other names, and every name on the other routes, are the route's to take. */
static int key_allowed(const route *rt, const char *key)
{
    int k = dpas_key_from_name(key);
    if (rt->analysis >= 0 && k >= 0 && dpas_key_query((dpas_key)k) &&
        !(rt->query == INPUTS_BUT_SCENARIO && k == DPAS_KEY_SCENARIO))
        return 1;
    for (size_t i = 0; srv_route_key(rt, i); i++)
        if (!strcmp(key, srv_route_key(rt, i)))
            return 1;
    return 0;
}

/* "scenario, workload, ..., model, rule, ..." for the message of an unknown key. */
static void expected(const route *rt, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; srv_route_key(rt, i) && o < cap; i++) {
        int n = snprintf(buf + o, cap - o, "%s%s", o ? ", " : "", srv_route_key(rt, i));
        o = n < 0 || (size_t)n >= cap - o ? cap - 1 : o + (size_t)n;
    }
}

void srv_route(srv_request *rq, srv_response *r)
{
    const route *rt = NULL;
    size_t plen = strlen(rq->path);
    if (!r->instance)
        r->instance = rq->path; /* a problem's "instance": the resource asked for */
    for (size_t i = 0; i < sizeof routes / sizeof routes[0] && !rt; i++) {
        size_t l = strlen(routes[i].path);
        if (routes[i].prefix ? plen > l && !strncmp(rq->path, routes[i].path, l)
                             : !strcmp(rq->path, routes[i].path))
            rt = &routes[i];
    }
    /* the client's path and method are quoted, escaped and, when long, cut with a visible "..."
     * (dpas_quote), so that the rest of the sentence always survives */
    char qp[200], qm[72];
    if (!rt) {
        srv_fail(r, 404, DPAS_ENOENT, "path",
                 "nothing at %s; the page is at / and the API under /api/v1/ (GET /api/v1 "
                 "lists it)",
                 dpas_quote(rq->path, qp, sizeof qp));
        return;
    }
    if (!(rt->methods & (unsigned)rq->method)) {
        r->allow = allow_text(rt->methods);
        srv_fail(r, 405, DPAS_EINVAL, "method", "method %s is not allowed on %s; allowed: %s",
                 dpas_quote(rq->method_name, qm, sizeof qm), rt->path, r->allow);
        return;
    }
    char name[256];
    if (rt->prefix) {
        const char *rest = rq->path + strlen(rt->path);
        dpas_error e;
        if (strchr(rest, '/')) {
            srv_fail(r, 404, DPAS_ENOENT, "path", "nothing at %s",
                     dpas_quote(rq->path, qp, sizeof qp));
            return;
        }
        int st = srv_decode_segment(rest, strlen(rest), name, sizeof name, "the resource name", &e);
        if (st) {
            srv_error(r, st, &e);
            return;
        }
        rq->rest = name;
    }
    srv_query q;
    memset(&q, 0, sizeof q);
    rq->query = &q;
    if (rt->query != ANY_QUERY) { /* the page reads its own query: it is the page's state */
        dpas_error e;
        int st = srv_query_parse(rq->raw_query, rq->raw_query_len, &q, &e);
        if (st) {
            srv_error(r, st, &e);
            srv_query_free(&q);
            return;
        }
        for (size_t i = 0; i < q.n; i++) {
            const char *k = q.p[i].key;
            if (key_allowed(rt, k))
                continue;
            char list[700];
            expected(rt, list, sizeof list);
            if (*list)
                srv_fail(r, 400, DPAS_EINVAL, k, "unknown query parameter \"%s\"; %s takes %s", k,
                         rt->path, list);
            else
                srv_fail(r, 400, DPAS_EINVAL, k, "unknown query parameter \"%s\"; %s takes none", k,
                         rt->path);
            srv_query_free(&q);
            return;
        }
    }
    /* a multipart body: a scenario file, and a calibration where the route uses one */
    dpas_error pe;
    int pst = srv_parts_parse(rq, rt->query == INPUTS || rt->query == INPUTS_BUT_SCENARIO,
                              (rt->analysis >= 0 && dpas_analysis_takes((dpas_analysis)rt->analysis,
                                                                        DPAS_KEY_CALIBRATION)) ||
                                  rt->fn == srv_api_calibrate,
                              &pe);
    if (pst) {
        srv_error(r, pst, &pe);
        srv_parts_free(rq);
        srv_query_free(&q);
        return;
    }
    if (rt->query != ANY_QUERY && srv_negotiate_format(rq, rt->fn, r)) {
        srv_parts_free(rq);
        srv_query_free(&q);
        return;
    }
    rq->route = rt;
    rt->fn(rq, r);
    for (size_t i = 0; r->status < 400 && i < rq->nparts; i++)
        if (!rq->parts[i].used)
            srv_fail(r, 500, DPAS_EINVAL, rq->parts[i].name,
                     "the body part \"%s\" was not read by %s (a bug in dpas serve)",
                     rq->parts[i].name, rt->path);
    srv_parts_free(rq);
    /* every key a route takes is read by its handler: one left unread would be a value given
     * and silently ignored, a bug of the server rather than of the request */
    for (size_t i = 0; rt->query != ANY_QUERY && r->status < 400 && i < q.n; i++)
        if (!q.p[i].used)
            srv_fail(r, 500, DPAS_EINVAL, q.p[i].key,
                     "query parameter \"%s\" was not read by %s (a bug in dpas serve)", q.p[i].key,
                     rt->path);
    srv_query_free(&q);
    rq->query = NULL;
}

int srv_route_is_heavy(const char *path)
{
    /* the routes whose work grows with the request: a fit over every size of every test, a
     * sweep or a plot of up to SRV_MAX_ROWS points */
    static const char *const heavy[] = {"/api/v1/calibrate", "/api/v1/sweep", "/api/v1/plot.svg"};
    for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++)
        if (!strcmp(path, heavy[i]))
            return 1;
    return 0;
}

int srv_request_heavy(srv_request *rq)
{
    if (srv_route_is_heavy(rq->path))
        return 1;
    /* The budget follows the computation, not the route: a calibration part makes any request
     * read and fit nccl-tests output (cost, memory, ...), work that grows with the part. The
     * body is split as leniently as any route would (both part names taken): a body this
     * refuses, every route refuses too, before it reads a part. */
    dpas_error err;
    int heavy = 0;
    if (!srv_parts_parse(rq, 1, 1, &err))
        for (size_t i = 0; i < rq->nparts; i++)
            heavy |= !strcmp(rq->parts[i].name, "calibration");
    srv_parts_free(rq);
    rq->multipart = 0; /* split again, strictly, by srv_route */
    return heavy;
}
