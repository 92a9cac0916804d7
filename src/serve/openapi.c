/* SPDX-License-Identifier: Apache-2.0 */
/* GET /api/v1 (the index) and GET /api/v1/openapi.json (an OpenAPI 3.1 description), written from
 * the tables that decide what the server does rather than by hand: the paths, methods and query
 * keys from the route table (route.c), the scenario inputs and their CLI flags from the
 * library's key table (dpas_key_query, dpas_key_flag), the names an option takes from the
 * library's catalogues (rules, schedules, conventions, attributes, metrics, network models), the
 * error object and the status of each error code from the library's error table
 * (DPAS_ERRNO_MAP, dpas_err_title) and srv_status_of. What a table cannot say (a sentence per
 * path and per option, an example request) is in the two small tables below, and every example
 * response is the server's own answer to the example request, made when the document is first
 * asked for: the document cannot drift from the server. */
#include "serve.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a path is, the CLI command whose object it answers, a request that succeeds and one that
 * fails (the path and query of a GET, or of a POST with the body below). */
typedef struct path_doc {
    const char *path; /* as in the route table */
    const char *summary;
    const char *cli;
    const char *example; /* NULL: none (the index, the document itself) */
    const char *bad;     /* a refused request, or NULL */
} path_doc;

static const path_doc path_docs[] = {
    {"/api/v1", "The endpoints of this API and the CLI command each answers as.", NULL, NULL, NULL},
    {"/api/v1/openapi.json", "This document.", NULL, NULL, NULL},
    {"/api/v1/keys",
     "The keys of every request: each scenario input and option with its CLI flag, query "
     "parameter, Python keyword, file key and the analyses that take it (the library's key "
     "table).",
     "dpas list keys -o json", "/api/v1/keys", NULL},
    {"/api/v1/scenarios", "The named scenarios of the registry.", "dpas list scenarios -o json",
     "/api/v1/scenarios", NULL},
    {"/api/v1/scenarios/",
     "A named scenario: its inputs, the seed's attributes, their equations with the numbers "
     "substituted (explain=true); query inputs override the scenario's.",
     "dpas show NAME -o json",
     "/api/v1/scenarios/ReferenceJobAttackSurface?attr=accelerators,gradient_bytes,"
     "gather_traffic_ratio&explain=true",
     "/api/v1/scenarios/NoSuchScenario"},
    {"/api/v1/eval",
     "The seed's attributes of a scenario (DataParallelAttackSurfaceScenario), with each "
     "equation and its numbers (explain=true).",
     "dpas eval -o json",
     "/api/v1/eval?model=GPT3&fleet=Training_1K&dp_degree=128&gradient_bytes_per_param=bf16"
     "&checkpoint_bytes_per_param=14B&attr=accelerators,gradient_bytes,gather_traffic_ratio",
     "/api/v1/eval?model=GPT3&fleet=Training_1K&dp_degree=0&gradient_bytes_per_param=bf16"
     "&checkpoint_bytes_per_param=14B"},
    {"/api/v1/cost",
     "What each robust rule costs under each schedule: whether the schedule realises the rule, "
     "the largest f, the bytes each worker sends (exact), the ratio to the ring AllReduce, the "
     "alpha-beta time per step, flat and hierarchical. A calibration (an nccl-tests log as the "
     "\"calibration\" part of a multipart body) replaces the fabric's links.",
     "dpas cost -o json",
     "/api/v1/cost?scenario=ReferenceJobAttackSurface&rule=median&schedule=allgather,sharded",
     "/api/v1/cost?scenario=ReferenceJobAttackSurface&rule=medain"},
    {"/api/v1/step",
     "The training step around each rule x schedule's exchange: the forward and backward "
     "compute (6 x parameters x tokens FLOPs at peak x MFU), the exchange bucket by bucket and "
     "the part the backward does not hide, the rule's own compute, ZeRO's parameter gathers; "
     "the step, its band and the share of it robustness adds over the mean under allreduce.",
     "dpas step -o json",
     "/api/v1/step?model=Llama3_8B&fleet=Lab_64_H100&dp_degree=64&gradient_bytes_per_param=bf16"
     "&checkpoint_bytes_per_param=14B&tokens=4M&rule=median,krum",
     "/api/v1/step?model=Llama3_8B&fleet=Lab_64_H100&dp_degree=64&gradient_bytes_per_param=bf16"
     "&checkpoint_bytes_per_param=14B"},
    {"/api/v1/rules",
     "The robust aggregation rules: each resilience condition, the largest f at n, the least n "
     "for f.",
     "dpas rules -o json", "/api/v1/rules?n=128&f=10", "/api/v1/rules?n=0"},
    {"/api/v1/inventory",
     "What one step exposes on the wire and what lies at rest, in exact bytes.",
     "dpas inventory -o json", "/api/v1/inventory?scenario=ReferenceJobAttackSurface",
     "/api/v1/inventory?scenario=ReferenceJobAttackSurface&dp_degree=2048"},
    {"/api/v1/memory",
     "Whether one replica's training state fits the memory of its accelerators; 422 (a physics "
     "violation) when it does not, with where it would fit.",
     "dpas memory -o json", "/api/v1/memory?scenario=ReferenceJobAttackSurface&dp_degree=16",
     "/api/v1/memory?scenario=ReferenceJobAttackSurface"},
    {"/api/v1/sweep",
     "One or two inputs varied (a list, or a range for dp_degree and parameters: 2..4096 "
     "doubling, 8..64+8, 1e9..1e12*10; a '+' may be sent as it is or as %2B), one row per point "
     "with the metrics asked for. Points whose inputs break a rule are left out and counted in "
     "an X-Dpas-Warning header.",
     "dpas sweep -o json",
     "/api/v1/sweep?scenario=ReferenceJobAttackSurface&dp_degree=8..32+8&schedule=allgather"
     "&attr=bytes_per_worker,ratio_to_allreduce",
     "/api/v1/sweep?scenario=ReferenceJobAttackSurface"},
    {"/api/v1/plot.svg",
     "The first varied input (dp_degree or parameters) against a metric, as an SVG plot.",
     "dpas sweep --plot FILE.svg",
     "/api/v1/plot.svg?scenario=ReferenceJobAttackSurface&dp_degree=2..1024&schedule=allgather"
     "&attr=bytes_per_worker",
     "/api/v1/plot.svg?scenario=ReferenceJobAttackSurface&dp_degree=2..1024&attr=nothing"},
    {"/api/v1/calibrate",
     "alpha-beta, piecewise, empirical and nccl models fitted to nccl-tests output (the body, or "
     "the "
     "\"calibration\" part of a multipart body), their residuals per size, and predictions.",
     "dpas calibrate FILE -o json", "/api/v1/calibrate?predict=1GB", "/api/v1/calibrate"},
    {"/api/v1/registry/",
     "The entries of one kind of the built-in registry: models, hardware, nodes, fabrics, "
     "fleets, scenarios or precisions.",
     "dpas list KIND -o json", "/api/v1/registry/fleets", "/api/v1/registry/spaceships"},
};

/* The body of the calibrate example: all_reduce_perf on 8 ranks (the shape of nccl-tests'
 * output; times of a 25 GB/s bus with 5 us per step, as examples/nccl's synthetic file). */
static const char calibrate_body[] =
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 1 minBytes 1024 maxBytes 1073741824 step: 8(factor) warmup iters: 5 "
    "iters: 20 agg iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid   1001 on   node0 device  0 [0x07] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid   1002 on   node0 device  1 [0x0a] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid   1003 on   node0 device  2 [0x44] NVIDIA H100 80GB HBM3\n"
    "#  Rank  3 Group  0 Pid   1004 on   node0 device  3 [0x4a] NVIDIA H100 80GB HBM3\n"
    "#  Rank  4 Group  0 Pid   1005 on   node0 device  4 [0x84] NVIDIA H100 80GB HBM3\n"
    "#  Rank  5 Group  0 Pid   1006 on   node0 device  5 [0x8a] NVIDIA H100 80GB HBM3\n"
    "#  Rank  6 Group  0 Pid   1007 on   node0 device  6 [0xc0] NVIDIA H100 80GB HBM3\n"
    "#  Rank  7 Group  0 Pid   1008 on   node0 device  7 [0xc3] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#                                                              out-of-place                 "
    "      in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)\n"
    "        1024           256     float     sum      -1    70.07    0.01    0.03      0    "
    "70.07    0.01    0.03      0\n"
    "        8192          2048     float     sum      -1    70.57    0.12    0.20      0    "
    "70.57    0.12    0.20      0\n"
    "       65536         16384     float     sum      -1    74.59    0.88    1.54      0    "
    "74.59    0.88    1.54      0\n"
    "      524288        131072     float     sum      -1   106.70    4.91    8.60      0   "
    "106.70    4.91    8.60      0\n"
    "     4194304       1048576     float     sum      -1   363.60   11.54   20.19      0   "
    "363.60   11.54   20.19      0\n"
    "    33554432       8388608     float     sum      -1  2418.75   13.87   24.28      0  "
    "2418.75   13.87   24.28      0\n"
    "   268435456      67108864     float     sum      -1 18860.83   14.23   24.91      0 "
    "18860.83   14.23   24.91      0\n"
    "  1073741824     268435456     float     sum      -1 75231.45   14.27   24.98      0 "
    "75231.45   14.27   24.98      0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 10.56\n"
    "#\n"
    "# Collective test concluded: all_reduce_perf\n";

/* The server's own options (beyond the library's key table): a sentence each. */
static const struct {
    const char *key, *what;
} server_opts[] = {
    {"require_fit",
     "true (the default): a state that does not fit is a 422 physics violation, as the CLI exits "
     "2; false: it is the check itself, with fits false"},
};

/* ---- building JSON (jansson); every failure is kept and reported once at the end ---------- */

typedef struct doc_ctx {
    int failed;
    const dpas_registry *reg;
} doc_ctx;

static json_t *set(doc_ctx *x, json_t *obj, const char *key, json_t *v)
{
    if (!obj || !v || json_object_set_new(obj, key, v))
        x->failed = 1;
    return v;
}

static json_t *push(doc_ctx *x, json_t *arr, json_t *v)
{
    if (!arr || !v || json_array_append_new(arr, v))
        x->failed = 1;
    return v;
}

static json_t *str(const char *s) { return json_string(s ? s : ""); }

static const path_doc *doc_of(const char *path)
{
    for (size_t i = 0; i < sizeof path_docs / sizeof path_docs[0]; i++)
        if (!strcmp(path_docs[i].path, path))
            return &path_docs[i];
    return NULL;
}

/* "/api/v1/scenarios/" -> "/api/v1/scenarios/{name}" */
static void openapi_path(const srv_route_info *rt, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s", rt->path,
             !rt->prefix                      ? ""
             : strstr(rt->path, "/registry/") ? "{kind}"
                                              : "{name}");
}

static int is_api(const srv_route_info *rt)
{
    return !strncmp(rt->path, "/api/v1", 7) && strcmp(rt->path, "/api/v1/");
}

/* ---- the index ---------------------------------------------------------------------------- */

void srv_api_index(srv_request *rq, srv_response *r)
{
    (void)rq;
    doc_ctx x = {0};
    json_t *root = json_object(), *eps = json_array();
    set(&x, root, "dpas_version", str(DPAS_VERSION)); /* as every JSON document of dpas */
    set(&x, root, "schema_version", json_integer(dpas_json_schema_version()));
    set(&x, root, "name", str("dpas"));
    set(&x, root, "version", str(DPAS_VERSION));
    set(&x, root, "openapi", str("/api/v1/openapi.json"));
    /* the page bounds what it inflates from a shared link by it */
    set(&x, root, "max_body_bytes", json_integer(SRV_MAX_BODY));
    set(&x, root, "endpoints", eps);
    for (size_t i = 0; srv_route_at(i); i++) {
        const srv_route_info *rt = srv_route_at(i);
        if (!is_api(rt))
            continue;
        const path_doc *d = doc_of(rt->path);
        json_t *e = push(&x, eps, json_object()), *m = json_array();
        char path[128];
        snprintf(path, sizeof path, "%s%s", rt->path,
                 !rt->prefix                      ? ""
                 : strstr(rt->path, "/registry/") ? "KIND"
                                                  : "NAME");
        set(&x, e, "path", str(path));
        set(&x, e, "methods", m);
        if (rt->methods & SRV_GET)
            push(&x, m, str("GET"));
        if (rt->methods & SRV_POST)
            push(&x, m, str("POST"));
        if (d && d->cli)
            set(&x, e, "as", str(d->cli));
        set(&x, e, "about", str(d ? d->summary : "(undocumented: a bug in dpas serve)"));
    }
    char *text = x.failed ? NULL : json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    if (!text) {
        srv_fail(r, 500, DPAS_ENOMEM, "", "out of memory");
        return;
    }
    size_t n = strlen(text);
    char *body = realloc(text, n + 2);
    if (!body) {
        free(text);
        srv_fail(r, 500, DPAS_ENOMEM, "", "out of memory");
        return;
    }
    body[n] = '\n', body[n + 1] = '\0';
    r->status = 200;
    r->type = "application/json; charset=utf-8";
    r->body = body;
    r->len = n + 1;
    r->free_body = free;
}

/* ---- the document ---------------------------------------------------------------------------- */

int srv_run(const dpas_registry *reg, int method, const char *target, const char *body,
            const char *content_type, srv_response *r)
{
    char path[512];
    snprintf(path, sizeof path, "%s", target);
    char *mark = strchr(path, '?');
    srv_request rq;
    memset(&rq, 0, sizeof rq);
    memset(r, 0, sizeof *r);
    rq.method = method;
    rq.method_name = method == SRV_POST ? "POST" : "GET";
    rq.raw_query = "";
    if (mark) {
        *mark = '\0';
        rq.raw_query = mark + 1;
        rq.raw_query_len = strlen(mark + 1);
    }
    rq.path = path;
    rq.body = body;
    rq.body_len = body ? strlen(body) : 0;
    rq.content_type = content_type;
    rq.reg = reg;
    srv_route(&rq, r);
    return r->status;
}

static void response_free(srv_response *r)
{
    if (r->free_body && r->body)
        r->free_body(r->body);
    memset(r, 0, sizeof *r);
}

/* The value a key has in the example request of a path, or NULL (a short, static store). */
static const char *example_value(const char *target, const char *key, char *buf, size_t cap)
{
    const char *q = target ? strchr(target, '?') : NULL;
    size_t kl = strlen(key);
    for (const char *p = q ? q + 1 : NULL; p && *p;) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t vl = (size_t)(end - p - (ptrdiff_t)kl - 1);
            if (vl >= cap)
                return NULL;
            memcpy(buf, p + kl + 1, vl);
            buf[vl] = '\0';
            for (char *c = buf; *c; c++) /* the example queries use '+' only as itself */
                if (*c == '%' && c[1] == '2' && (c[2] == 'B' || c[2] == 'b'))
                    *c = '+', memmove(c + 1, c + 3, strlen(c + 3) + 1);
            return buf;
        }
        p = amp ? amp + 1 : NULL;
    }
    return NULL;
}

/* Where the API lists the names a NAME or ENUM key takes (the key table's dpas_key_see). */
static const char *see_path(const char *see)
{
    return !strcmp(see, "scenarios") ? "GET /api/v1/scenarios"
           : !strcmp(see, "rules")   ? "GET /api/v1/rules"
                                     : NULL;
}

/* The schema of a key's value on a route of analysis a: from the key table's type, bounds,
 * default and names. A list, or an input a sweep varies, is text ("a,b,c", "2..4096"); an
 * integer is an integer within its bounds; a switch one of its four words; an enum one of its
 * names (a list's names are x-dpas-values, for a client that offers them). */
static json_t *key_schema(doc_ctx *x, json_t *p, dpas_key k, dpas_analysis a, int sweep)
{
    json_t *sch = json_object();
    unsigned fl = dpas_key_flags(k);
    dpas_key_type t = dpas_key_type_of(k);
    int text = (fl & DPAS_KEY_LIST) || (sweep && (fl & DPAS_KEY_AXIS));
    const char *def = dpas_key_default(k);
    if (t == DPAS_TYPE_INTEGER && !text) {
        int64_t min = 0, max = 0;
        int b = dpas_key_bounds(k, &min, &max);
        set(x, sch, "type", str("integer"));
        if (b & 1)
            set(x, sch, "minimum", json_integer(min));
        if (b & 2)
            set(x, sch, "maximum", json_integer(max));
        if (def)
            set(x, sch, "default", json_integer(atoll(def)));
        return sch;
    }
    if (t == DPAS_TYPE_SWITCH) {
        json_t *e = set(x, sch, "enum", json_array());
        for (const char *const *w = (const char *const[]){"true", "false", "1", "0", NULL}; *w; w++)
            push(x, e, str(*w));
    } else {
        set(x, sch, "type", str("string"));
    }
    if (def)
        set(x, sch, "default", str(def));
    if (t == DPAS_TYPE_ENUM && dpas_key_value(k, a, 0)) {
        json_t *e = set(x, text ? p : sch, text ? "x-dpas-values" : "enum", json_array());
        for (size_t i = 0; dpas_key_value(k, a, i); i++)
            push(x, e, str(dpas_key_value(k, a, i)));
    }
    return sch;
}

/* The description of a key: the key table's one line, where the API lists its names, the names
 * of a list, what a sweep takes, and for an input where a scenario file and the CLI have it. */
static json_t *key_description(dpas_key k, dpas_analysis a, int sweep, const char *query)
{
    char *text = NULL;
    size_t len = 0;
    FILE *b = open_memstream(&text, &len);
    if (!b)
        return NULL;
    unsigned fl = dpas_key_flags(k);
    const char *see = dpas_key_see(k), *file = dpas_key_file(k), *flag = dpas_key_flag(k);
    const char *alias = dpas_key_alias(k);
    if (alias && !strcmp(query, alias))
        fprintf(b, "The %s's other name: ", dpas_key_name(k));
    fputs(dpas_key_help(k) ? dpas_key_help(k) : "(undocumented)", b);
    if (see)
        fprintf(b, " (%s%s)", see_path(see) ? see_path(see) : "GET /api/v1/registry/",
                see_path(see) ? "" : see);
    if (dpas_key_unit(k))
        fprintf(b, "; in %s", dpas_key_unit(k));
    if (dpas_key_type_of(k) == DPAS_TYPE_ENUM && (fl & DPAS_KEY_LIST) && dpas_key_value(k, a, 0)) {
        fputs("; comma-separated: ", b);
        for (size_t i = 0; dpas_key_value(k, a, i); i++)
            fprintf(b, "%s%s",
                    i == 0                         ? ""
                    : !dpas_key_value(k, a, i + 1) ? " or "
                                                   : ", ",
                    dpas_key_value(k, a, i));
    }
    if (fl & DPAS_KEY_INPUT)
        fprintf(b, " (the scenario's %s%s%s%s)", file, flag ? "; the CLI's " : "", flag ? flag : "",
                flag ? "" : "; no CLI flag");
    fputs(".", b);
    if (sweep && (fl & DPAS_KEY_AXIS))
        fputs((fl & DPAS_KEY_RANGE) == DPAS_KEY_RANGE
                  ? " A sweep takes a list (a,b,c) or a range (A..B doubling, "
                    "A..B+S, A..B*F)."
                  : " A sweep takes a list (a,b,c).",
              b);
    json_t *j = fclose(b) || !text ? NULL : json_string(text);
    free(text);
    return j;
}

/* A query parameter of a route of analysis a: a key of the library's key table, or one of the
 * server's own options. */
static json_t *key_param(doc_ctx *x, const char *query, dpas_analysis a, int sweep,
                         const char *target)
{
    json_t *p = json_object();
    int k = dpas_key_from_name(query);
    set(x, p, "name", str(query));
    set(x, p, "in", str("query"));
    set(x, p, "required", json_false());
    if (k < 0) {
        const char *what = NULL;
        for (size_t i = 0; i < sizeof server_opts / sizeof server_opts[0]; i++)
            if (!strcmp(server_opts[i].key, query))
                what = server_opts[i].what;
        json_t *sch = set(x, p, "schema", json_object()), *e = set(x, sch, "enum", json_array());
        for (const char *const *w = (const char *const[]){"true", "false", "1", "0", NULL}; *w; w++)
            push(x, e, str(*w));
        set(x, p, "description", str(what ? what : "(undocumented: a bug in dpas serve)"));
        x->failed |= what ? 0 : 2;
        return p;
    }
    json_t *sch = set(x, p, "schema", key_schema(x, p, (dpas_key)k, a, sweep));
    set(x, p, "description", key_description((dpas_key)k, a, sweep, query));
    set(x, p, "x-dpas-type", str(dpas_key_type_name(dpas_key_type_of((dpas_key)k))));
    if (dpas_key_unit((dpas_key)k))
        set(x, p, "x-dpas-unit", str(dpas_key_unit((dpas_key)k)));
    if (dpas_key_flags((dpas_key)k) & DPAS_KEY_INPUT) {
        set(x, p, "x-dpas-field", str(dpas_key_file((dpas_key)k)));
        if (dpas_key_flag((dpas_key)k))
            set(x, p, "x-dpas-cli-flag", str(dpas_key_flag((dpas_key)k)));
    }
    char ex[256];
    const char *v = example_value(target, query, ex, sizeof ex);
    if (v) {
        json_t *type = json_object_get(sch, "type");
        int integer = type && json_is_string(type) && !strcmp(json_string_value(type), "integer");
        set(x, p, "example", integer ? json_integer(atoll(v)) : str(v));
    }
    return p;
}

/* A response header: its description and the type of its value. */
static void header(doc_ctx *x, json_t *resp, const char *name, const char *what, const char *type)
{
    json_t *hs = json_object_get(resp, "headers");
    if (!hs)
        hs = set(x, resp, "headers", json_object());
    json_t *h = set(x, hs, name, json_object());
    set(x, h, "description", str(what));
    json_t *sch = set(x, h, "schema", json_object());
    set(x, sch, "type", str(type));
}

/* Every status a route can answer, each with the error object; example: the refused request. */
static void error_responses(doc_ctx *x, json_t *resps, const srv_route_info *rt, int method,
                            const path_doc *d)
{
    static const struct {
        int status;
        const char *when;
    } st[] = {
        {400, "bad input: a malformed query, an unknown or repeated key, a value that breaks a "
              "rule, a malformed body; no Host header, or a malformed one"},
        {403, "an Origin that is neither the server's own nor an --allow-origin"},
        {404, "no such path, scenario or registry kind"},
        {405, "a method the path does not answer (with Allow)"},
        {406, "an Accept header that takes neither application/json nor, where the path writes "
              "it, text/csv"},
        {413, "a body over 256 KiB"},
        {414, "a request target over 8 KiB, a query value over 1 KiB, a key over 48 bytes, more "
              "than 48 parameters"},
        {421, "a Host the server does not serve (not its address, not localhost on loopback, "
              "not an --allow-host name)"},
        {422, "a physics violation: valid inputs that cannot be"},
        {500, "out of memory"},
        {503, "a heavy request (a fit, a sweep, a plot, any calibration part) over --cpu-limit "
              "seconds of CPU, the heavy lane full (with Retry-After), or the server stopping"},
    };
    srv_response er = {0};
    int bad_status = 0;
    if (d && d->bad && method == SRV_GET)
        bad_status = srv_run(
            x->reg, d->bad[0] && !strcmp(rt->path, "/api/v1/calibrate") ? SRV_POST : SRV_GET,
            d->bad, NULL, NULL, &er);
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        if (st[i].status == 413 && !(rt->methods & SRV_POST))
            continue;
        if (st[i].status == 422 && rt->query != SRV_INPUTS && rt->query != SRV_INPUTS_BUT_SCENARIO)
            continue;
        int takes_cal = rt->analysis >= 0 && method == SRV_POST &&
                        dpas_analysis_takes((dpas_analysis)rt->analysis, DPAS_KEY_CALIBRATION);
        if (st[i].status == 503 && !srv_route_is_heavy(rt->path) && !takes_cal)
            continue; /* only the heavy lane answers 503 */
        char code[8];
        snprintf(code, sizeof code, "%d", st[i].status);
        json_t *resp = set(x, resps, code, json_object());
        set(x, resp, "description", str(st[i].when));
        json_t *media = json_object();
        json_t *ref = json_object();
        set(x, ref, "$ref", str("#/components/schemas/Problem"));
        set(x, media, "schema", ref);
        if (bad_status == st[i].status && er.body) {
            json_error_t je;
            json_t *ex = json_loadb(er.body, er.len, 0, &je);
            set(x, media, "example", ex);
            set(x, resp, "x-dpas-example-request", str(d->bad));
        }
        json_t *content = set(x, resp, "content", json_object());
        set(x, content, "application/problem+json", media);
        if (st[i].status == 405 || st[i].status == 503)
            header(x, resp, st[i].status == 405 ? "Allow" : "Retry-After",
                   st[i].status == 405 ? "the methods the path answers (GET, HEAD, POST)"
                                       : "seconds to wait: with a full lane (1), not when the "
                                         "request was over its budget",
                   st[i].status == 503 ? "integer" : "string");
    }
    if (bad_status && !er.body)
        x->failed = 1;
    response_free(&er);
}

static int sweep_warning_route(const srv_route_info *rt)
{
    return rt->fn == srv_api_sweep || rt->fn == srv_api_plot;
}

static void success_response(doc_ctx *x, json_t *resps, const srv_route_info *rt, const path_doc *d,
                             int method)
{
    json_t *ok = set(x, resps, "200", json_object());
    set(x, ok, "description", str(d && d->cli ? d->cli : "the answer"));
    json_t *content = set(x, ok, "content", json_object());
    int svg = rt->fn == srv_api_plot;
    json_t *media = set(x, content, svg ? "image/svg+xml" : "application/json", json_object());
    json_t *sch = set(x, media, "schema", svg ? json_object() : srv_openapi_success_schema(rt));
    if (svg)
        set(x, sch, "type", str("string"));
    srv_request probe = {0};
    probe.accept = "text/csv";
    srv_response tmp = {0};
    if (!svg && !srv_negotiate_format(&probe, rt->fn, &tmp) && probe.format == DPAS_FORMAT_CSV) {
        json_t *csv = set(x, content, "text/csv", json_object());
        json_t *cs = set(x, csv, "schema", json_object());
        set(x, cs, "type", str("string"));
        set(x, cs, "description",
            str("with Accept: text/csv, the CLI's -o csv for the same inputs"));
    }
    response_free(&tmp);
    if (sweep_warning_route(rt))
        header(x, ok, "X-Dpas-Warning", "how many points were left out, and why the first was",
               "string");
    if (method == SRV_GET) { /* the negotiation of every GET (negotiate.c) */
        header(x, ok, "ETag", "a strong tag of the body: If-None-Match with it gives 304",
               "string");
        header(x, ok, "Vary", "Accept, Accept-Encoding", "string");
        header(x, ok, "Content-Encoding",
               "gzip, when Accept-Encoding allows it and the body is "
               "256 bytes or more",
               "string");
        json_t *nm = set(x, resps, "304", json_object());
        set(x, nm, "description",
            str("Not Modified: If-None-Match named the body's ETag; no body"));
        header(x, nm, "ETag", "the tag of the body not sent", "string");
    }
    if (!d || !d->example || method != (rt->fn == srv_api_calibrate ? SRV_POST : SRV_GET))
        return;
    srv_response r;
    int status = srv_run(x->reg, method, d->example, method == SRV_POST ? calibrate_body : NULL,
                         method == SRV_POST ? "text/plain" : NULL, &r);
    json_t *ex = NULL;
    if (status == 200 && svg)
        ex = json_stringn(r.body, r.len);
    else if (status == 200) {
        json_error_t je;
        ex = json_loadb(r.body, r.len, 0, &je);
    }
    if (!ex) /* an example that fails is a bug of this file: the document says so */
        x->failed |= 4;
    set(x, media, "example", ex);
    set(x, ok, "x-dpas-example-request", str(d->example));
    response_free(&r);
}

/* The keys a route takes, as its refusal of an unknown key lists them, each as a parameter. */
static void key_params(doc_ctx *x, json_t *params, const srv_route_info *rt, int sweep,
                       const char *target, int method)
{
    dpas_analysis a = (dpas_analysis)rt->analysis; /* a route without one takes no key */
    for (size_t i = 0; srv_route_key(rt, i); i++) {
        const char *key = srv_route_key(rt, i);
        if (!srv_openapi_param_kept(key, method))
            continue; /* what a GET can never do (openapi_responses.c) */
        srv_openapi_prune_param(push(x, params, key_param(x, key, a, sweep, target)), method);
    }
}

json_t *srv_openapi_parameters(const dpas_registry *reg, const char *path, int post)
{
    doc_ctx x = {.reg = reg};
    const srv_route_info *rt = NULL;
    for (size_t i = 0; srv_route_at(i) && !rt; i++)
        if (!srv_route_at(i)->prefix && !strcmp(srv_route_at(i)->path, path))
            rt = srv_route_at(i);
    if (!rt)
        return NULL;
    json_t *params = json_array();
    key_params(&x, params, rt, sweep_warning_route(rt), NULL, post ? SRV_POST : SRV_GET);
    if (x.failed & 1) {
        json_decref(params);
        return NULL;
    }
    return params;
}

/* One operation (GET or POST) of a route. */
static json_t *operation(doc_ctx *x, const srv_route_info *rt, int method)
{
    const path_doc *d = doc_of(rt->path);
    json_t *op = json_object();
    char id[96];
    const char *base = strrchr(rt->path, '/');
    snprintf(id, sizeof id, "%s_%s", method == SRV_POST ? "post" : "get",
             base && base[1] ? base + 1
             : rt->prefix    ? "item"
                             : "index");
    for (char *c = id; *c; c++)
        if (*c == '.')
            *c = '_';
    if (rt->prefix) /* scenarios/{name}, registry/{kind}: the item of the list */
        snprintf(id, sizeof id, "%s_%s_item", method == SRV_POST ? "post" : "get",
                 strstr(rt->path, "registry") ? "registry" : "scenario");
    set(x, op, "operationId", str(id));
    set(x, op, "summary", str(d ? d->summary : "(undocumented: a bug in dpas serve)"));
    if (!d)
        x->failed |= 2;
    if (d && d->cli)
        set(x, op, "x-dpas-cli", str(d->cli));
    json_t *params = set(x, op, "parameters", json_array());
    const char *target = d ? d->example : NULL;
    int sweep = sweep_warning_route(rt);
    if (rt->prefix) {
        json_t *p = push(x, params, json_object()), *sch = json_object();
        int reg = strstr(rt->path, "registry") != NULL;
        set(x, p, "name", str(reg ? "kind" : "name"));
        set(x, p, "in", str("path"));
        set(x, p, "required", json_true());
        set(x, p, "schema", sch);
        set(x, sch, "type", str("string"));
        json_t *e = set(x, sch, "enum", json_array());
        if (reg) {
            /* the listings dpas_kind_from_listing takes, in their plural form */
            for (int k = 0; k < DPAS_KIND_COUNT; k++) {
                char plural[32];
                dpas_kind kind;
                snprintf(plural, sizeof plural, "%ss", dpas_kind_name((dpas_kind)k));
                if (dpas_kind_from_listing(plural, &kind, NULL))
                    snprintf(plural, sizeof plural, "%s", dpas_kind_name((dpas_kind)k));
                push(x, e, str(plural));
            }
            push(x, e, str("precisions"));
            set(x, p, "description", str("a kind of registry entry"));
            set(x, p, "example", str("fleets"));
        } else {
            for (size_t i = 0; i < dpas_registry_count(x->reg, DPAS_KIND_SCENARIO); i++) {
                const dpas_named_scenario *ns = dpas_registry_at(x->reg, DPAS_KIND_SCENARIO, i);
                push(x, e, str(ns->name));
            }
            set(x, p, "description", str("a named scenario (GET /api/v1/scenarios)"));
            set(x, p, "example", str("ReferenceJobAttackSurface"));
        }
    }
    key_params(x, params, rt, sweep, target, method);
    if (method == SRV_POST) {
        json_t *rb = set(x, op, "requestBody", json_object());
        json_t *content = set(x, rb, "content", json_object());
        int takes_cal = rt->fn == srv_api_calibrate ||
                        (rt->analysis >= 0 &&
                         dpas_analysis_takes((dpas_analysis)rt->analysis, DPAS_KEY_CALIBRATION));
        if (rt->fn == srv_api_calibrate) {
            set(x, rb, "required", json_true());
            set(x, rb, "description", str("nccl-tests output, as it printed it"));
            json_t *m = set(x, content, "text/plain", json_object());
            json_t *sch = set(x, m, "schema", json_object());
            set(x, sch, "type", str("string"));
            set(x, m, "example", str(calibrate_body));
        } else {
            set(x, rb, "description",
                str("a scenario file (YAML or JSON, as dpas reads one); the query overrides it "
                    "as flags override a file"));
            json_t *m = set(x, content, "application/json", json_object());
            json_t *sch = set(x, m, "schema", json_object());
            set(x, sch, "type", str("object"));
            m = set(x, content, "application/yaml", json_object());
            sch = set(x, m, "schema", json_object());
            set(x, sch, "type", str("string"));
        }
        json_t *m = set(x, content, "multipart/form-data", json_object());
        json_t *sch = set(x, m, "schema", json_object());
        set(x, sch, "type", str("object"));
        json_t *props = set(x, sch, "properties", json_object());
        if (rt->fn != srv_api_calibrate) {
            json_t *sp = set(x, props, "scenario", json_object());
            set(x, sp, "type", str("string"));
            set(x, sp, "description", str("a scenario file (YAML or JSON)"));
        }
        if (takes_cal) {
            json_t *cp = set(x, props, "calibration", json_object());
            set(x, cp, "type", str("string"));
            set(x, cp, "description",
                str("nccl-tests output: its fit replaces the fabric's links, and its measured "
                    "curves give the flat times (as --calibration FILE)"));
        }
    }
    json_t *resps = set(x, op, "responses", json_object());
    success_response(x, resps, rt, d, method);
    error_responses(x, resps, rt, method, d);
    return op;
}

static char *build(const dpas_registry *reg)
{
    doc_ctx x = {.reg = reg};
    json_t *root = json_object();
    set(&x, root, "openapi", str("3.1.0"));
    json_t *info = set(&x, root, "info", json_object());
    set(&x, info, "title", str("dpas: the data-parallel attack surface of a training job"));
    set(&x, info, "version", str(DPAS_VERSION));
    set(&x, info, "description",
        str("Every object is the one `dpas COMMAND -o json` prints for the same inputs "
            "(x-dpas-cli names the command); with Accept: text/csv, table endpoints answer the "
            "CLI's -o csv. Answers to GET carry an ETag (If-None-Match gives 304) and are "
            "compressed with gzip when Accept-Encoding allows. Generated by the server from its "
            "route table and the library's input and error tables; each example response is the "
            "server's answer to the example request (x-dpas-example-request)."));
    json_t *servers = set(&x, root, "servers", json_array());
    json_t *sv = push(&x, servers, json_object());
    set(&x, sv, "url", str("/"));
    json_t *paths = set(&x, root, "paths", json_object());
    for (size_t i = 0; srv_route_at(i); i++) {
        const srv_route_info *rt = srv_route_at(i);
        if (!is_api(rt))
            continue;
        char path[128];
        openapi_path(rt, path, sizeof path);
        json_t *item = set(&x, paths, path, json_object());
        if (rt->methods & SRV_GET)
            set(&x, item, "get", operation(&x, rt, SRV_GET));
        if (rt->methods & SRV_POST)
            set(&x, item, "post", operation(&x, rt, SRV_POST));
    }
    json_t *comp = set(&x, root, "components", json_object());
    json_t *schemas = set(&x, comp, "schemas", json_object());
    set(&x, schemas, "Problem", srv_openapi_problem_schema());
    if (x.failed & 2)
        set(&x, root, "x-dpas-incomplete", str("a route or option has no description"));
    if (x.failed & 4)
        set(&x, root, "x-dpas-incomplete", str("an example request failed"));
    char *text = x.failed & 1 ? NULL : json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    return text;
}

static char *document;
static pthread_mutex_t document_lock = PTHREAD_MUTEX_INITIALIZER;

void srv_api_openapi(srv_request *rq, srv_response *r)
{
    /* built on the first request and kept: the registry and the tables never change while the
     * server runs */
    pthread_mutex_lock(&document_lock);
    if (!document)
        document = build(rq->reg);
    const char *text = document;
    pthread_mutex_unlock(&document_lock);
    if (!text) {
        srv_fail(r, 500, DPAS_ENOMEM, "", "out of memory");
        return;
    }
    r->status = 200;
    r->type = "application/json; charset=utf-8";
    r->body = (char *)(uintptr_t)text; /* static from here on: never freed, never written */
    r->len = strlen(text);
    r->free_body = NULL;
}
