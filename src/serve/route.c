/* The route table: each path, the methods it answers, the query keys it takes and its handler.
 * Everything a route does not name is refused here, before any handler runs. */
#include "serve.h"

#include <string.h>

enum { OWN = 0, REQUEST = 1, ANY_QUERY = 2 };

typedef struct route {
    const char *path;
    int prefix; /* path ends in '/' and a resource name follows it */
    unsigned methods;
    int query;    /* which keys: OWN (opts), REQUEST (the request's), ANY_QUERY (the page) */
    int analysis; /* REQUEST: the dpas_analysis whose keys the message of an unknown key lists */
    const char *const *opts;
    srv_handler fn;
} route;

static const char *const o_none[] = {NULL};
static const char *const o_calibrate[] = {"collective", "ranks", "predict", NULL};

static void page(srv_request *rq, srv_response *r);

#define GH (SRV_GET | SRV_HEAD)
#define GHP (SRV_GET | SRV_HEAD | SRV_POST)
static const route routes[] = {
    {"/", 0, GH, ANY_QUERY, -1, o_none, page},
    {"/app.js", 0, GH, OWN, -1, o_none, page},
    {"/app.css", 0, GH, OWN, -1, o_none, page},
    {"/favicon.svg", 0, GH, OWN, -1, o_none, page},
    {"/api/v1", 0, GH, OWN, -1, o_none, srv_api_index},
    {"/api/v1/", 0, GH, OWN, -1, o_none, srv_api_index},
    {"/api/v1/keys", 0, GH, OWN, -1, o_none, srv_api_keys},
    {"/api/v1/scenarios", 0, GH, OWN, -1, o_none, srv_api_scenarios},
    {"/api/v1/scenarios/", 1, GH, REQUEST, DPAS_ANALYSIS_EVAL, o_none, srv_api_scenario},
    {"/api/v1/eval", 0, GHP, REQUEST, DPAS_ANALYSIS_EVAL, o_none, srv_api_eval},
    {"/api/v1/cost", 0, GHP, REQUEST, DPAS_ANALYSIS_COST, o_none, srv_api_cost},
    {"/api/v1/rules", 0, GH, REQUEST, DPAS_ANALYSIS_RULES, o_none, srv_api_rules},
    {"/api/v1/inventory", 0, GHP, REQUEST, DPAS_ANALYSIS_INVENTORY, o_none, srv_api_inventory},
    {"/api/v1/memory", 0, GHP, REQUEST, DPAS_ANALYSIS_MEMORY, o_none, srv_api_memory},
    {"/api/v1/sweep", 0, GHP, REQUEST, DPAS_ANALYSIS_SWEEP, o_none, srv_api_sweep},
    {"/api/v1/plot.svg", 0, GHP, REQUEST, DPAS_ANALYSIS_PLOT, o_none, srv_api_plot},
    {"/api/v1/calibrate", 0, SRV_POST, OWN, -1, o_calibrate, srv_api_calibrate},
    {"/api/v1/registry/", 1, GH, OWN, -1, o_none, srv_api_registry},
};

static void page(srv_request *rq, srv_response *r)
{
    if (!srv_page(rq->path, r))
        srv_fail(r, 404, DPAS_ENOENT, "path", "no page resource %s", rq->path);
}

static const char *allow_text(unsigned m)
{
    static const char *const text[8] = {"",     "GET",       "HEAD",       "GET, HEAD",
                                        "POST", "GET, POST", "HEAD, POST", "GET, HEAD, POST"};
    return text[m & 7];
}

/* A request's route takes every key that has a query parameter (the library refuses a key its
 * analysis does not take, as it does for every front end); the others take their own. */
static int key_allowed(const route *rt, const char *key)
{
    if (rt->query == REQUEST) {
        int k = dpas_key_from_name(key);
        return k >= 0 && dpas_key_query((dpas_key)k);
    }
    for (size_t i = 0; rt->opts[i]; i++)
        if (!strcmp(key, rt->opts[i]))
            return 1;
    return 0;
}

/* "scenario, workload (or model), ..." for the message of an unknown key: a request's keys that
 * its analysis takes, or the route's own. */
static void expected(const route *rt, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
#define ADD(s, t)                                                                                  \
    do {                                                                                           \
        int n_ = snprintf(buf + o, cap - o, "%s%s%s%s%s", o ? ", " : "", (s), (t) ? " (or " : "",  \
                          (t) ? (t) : "", (t) ? ")" : "");                                         \
        o = n_ < 0 || (size_t)n_ >= cap - o ? cap - 1 : o + (size_t)n_;                            \
    } while (0)
    if (rt->query == REQUEST)
        for (int k = 0; k < DPAS_KEY_COUNT; k++)
            if (dpas_key_query((dpas_key)k) &&
                dpas_analysis_takes((dpas_analysis)rt->analysis, (dpas_key)k))
                ADD(dpas_key_query((dpas_key)k), dpas_key_alias((dpas_key)k));
    for (size_t i = 0; rt->opts[i]; i++)
        ADD(rt->opts[i], (const char *)NULL);
#undef ADD
}

void srv_route(srv_request *rq, srv_response *r)
{
    const route *rt = NULL;
    size_t plen = strlen(rq->path);
    for (size_t i = 0; i < sizeof routes / sizeof routes[0] && !rt; i++) {
        size_t l = strlen(routes[i].path);
        if (routes[i].prefix ? plen > l && !strncmp(rq->path, routes[i].path, l)
                             : !strcmp(rq->path, routes[i].path))
            rt = &routes[i];
    }
    if (!rt) {
        srv_fail(r, 404, DPAS_ENOENT, "path",
                 "nothing at %.200s; the page is at / and the API under /api/v1/ (GET /api/v1 "
                 "lists it)",
                 rq->path);
        return;
    }
    if (!(rt->methods & (unsigned)rq->method)) {
        r->allow = allow_text(rt->methods);
        srv_fail(r, 405, DPAS_EINVAL, "method", "method %s is not allowed on %s; allowed: %s",
                 rq->method_name, rt->path, r->allow);
        return;
    }
    char name[256];
    if (rt->prefix) {
        const char *rest = rq->path + strlen(rt->path);
        dpas_error e;
        if (strchr(rest, '/')) {
            srv_fail(r, 404, DPAS_ENOENT, "path", "nothing at %.200s", rq->path);
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
    rt->fn(rq, r);
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
