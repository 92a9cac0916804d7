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

/* The options (keys beyond the scenario inputs): a sentence, a schema, where the library has
 * the names the values come from. Every option of the route table must be here (the document
 * says which one is not, and the test fails on it). */
enum {
    T_TEXT,
    T_INT,
    T_BOOL,
    T_RULES,
    T_SCHEDULES,
    T_CONVENTION,
    T_ATTRS,
    T_METRICS,
    T_METRIC,
    T_STATE,
    T_NETMODEL
};
typedef struct opt_doc {
    const char *key;
    int type;
    long long min, max; /* T_INT */
    const char *what;
} opt_doc;

static const opt_doc opt_docs[] = {
    {"attr", T_ATTRS, 0, 0, "the attributes to show (default: all)"},
    {"explain", T_BOOL, 0, 0, "each attribute's equation with the numbers substituted"},
    {"rule", T_RULES, 0, 0,
     "robust aggregation rules, comma-separated (default: every rule under its default "
     "convention); in a sweep, a list varies the rule"},
    {"convention", T_CONVENTION, 0, 0, "the convention of Krum and Multi-Krum"},
    {"schedule", T_SCHEDULES, 0, 0,
     "network schedules, comma-separated (default: all); in a sweep, a list varies the schedule"},
    {"f", T_INT, 0, -1, "Byzantine replicas to tolerate: adds whether each rule tolerates f"},
    {"steps", T_INT, 1, -1, "bytes and times for this many steps"},
    {"iterations", T_INT, 1, -1, "iterations of geometric_median and centered_clipping"},
    {"compute_rate", T_TEXT, 0, 0,
     "FLOP/s per worker, with its unit (989 TFLOP/s, 1e15 FLOP/s): adds the rule's own "
     "compute time"},
    {"memory_bandwidth", T_TEXT, 0, 0,
     "memory bytes/s per worker, with its unit (3.35 TB/s, 2 TiB/s; default the node's "
     "accelerator's HBM): the rule's compute is max(flops / compute_rate, bytes / "
     "memory_bandwidth)"},
    {"network_model", T_NETMODEL, 0, 0,
     "with a calibration: the model of its measured curves that gives the flat times"},
    {"n", T_INT, 1, -1, "replicas: each rule's largest f at n"},
    {"state", T_STATE, 0, 0, "the byte convention of the training state (default zero16)"},
    {"zero", T_INT, 0, 3,
     "the ZeRO stage: memory partitions the zero16 state across replicas; step adds its "
     "parameter all-gathers"},
    {"tokens", T_TEXT, 0, 0, "step: tokens per step over every replica (a count: 4M, 16.8e6)"},
    {"global_batch", T_TEXT, 0, 0, "step: sequences per step over every replica (with sequence)"},
    {"sequence", T_TEXT, 0, 0, "step: tokens per sequence (with global_batch)"},
    {"mfu", T_TEXT, 0, 0,
     "step: model-FLOPs utilisation in (0, 1] (0.45 or 45%); default 0.40, assumed"},
    {"bucket_bytes", T_TEXT, 0, 0, "step: gradient bytes per bucket (default 25 MiB, as DDP)"},
    {"precision", T_TEXT, 0, 0, "step: bf16 (default) or fp16: the accelerator's dense peak"},
    {"parallelism", T_TEXT, 0, 0,
     "data (the default, the only one modelled); tensor, pipeline, expert and context are "
     "refused with why"},
    {"offload", T_TEXT, 0, 0,
     "none (the default, the only one modelled); cpu and nvme are refused with why"},
    {"require_fit", T_BOOL, 0, 0,
     "true (the default): a state that does not fit is a 422 physics violation, as the CLI exits "
     "2; false: it is the check itself, with fits false"},
    {"y", T_METRIC, 0, 0, "the plotted metric (default: the first of attr)"},
    {"title", T_TEXT, 0, 0, "the plot's title"},
    {"collective", T_TEXT, 0, 0,
     "the collective of the log's table when its header does not say (all_reduce, all_gather, "
     "reduce_scatter, broadcast, reduce, alltoall, gather, scatter, sendrecv)"},
    {"ranks", T_INT, 2, -1, "the rank count of the log when its Rank lines do not say"},
    {"predict", T_TEXT, 0, 0, "sizes to predict, comma-separated, with units (16MiB,1GB)"},
    {"at", T_TEXT, 0, 0,
     "scales to predict at, comma-separated: RANKS or NODESxRANKS_PER_NODE (2160, 540x4); "
     "default: each test's own"},
    {"test", T_TEXT, 0, 0,
     "the tests to fit, comma-separated, numbered from 1 across the logs in order (default: all)"},
    {"gpus_per_node", T_INT, 1, -1,
     "ranks per node of the logs whose Rank lines do not name hosts (default: 8 where it divides "
     "the ranks)"},
};

/* What each scenario input means, by the library's input table's index (its names, flags and
 * fields come from the table itself). */
static const char *const input_meaning[DPAS_INPUT_COUNT] = {
    [DPAS_INPUT_NAME] = "a label for the scenario in reports",
    [DPAS_INPUT_SCENARIO] = "a named scenario to start from (GET /api/v1/scenarios); the other "
                            "inputs override its",
    [DPAS_INPUT_WORKLOAD] = "a model of the registry (GET /api/v1/registry/models)",
    [DPAS_INPUT_WORKLOAD_NAME] = "the label of a workload given by its parameter count",
    [DPAS_INPUT_PARAMETERS] = "the workload's parameter count: 175e9, 70.6e9, 7B, 3504872",
    [DPAS_INPUT_FLEET] = "a fleet of the registry (GET /api/v1/registry/fleets)",
    [DPAS_INPUT_FLEET_NAME] = "the label of a fleet given by nodes and accelerators per node",
    [DPAS_INPUT_NODES] = "the fleet's nodes (over a registry fleet's)",
    [DPAS_INPUT_ACCELERATORS_PER_NODE] = "accelerators per node (over a registry fleet's)",
    [DPAS_INPUT_NODE] = "a node of the registry: its accelerator and intra-node link",
    [DPAS_INPUT_FABRIC] = "a fabric of the registry: the inter-node link that times need",
    [DPAS_INPUT_DP_DEGREE] = "data-parallel replicas, N: 1 to the fleet's accelerators",
    [DPAS_INPUT_GRADIENT_WIDTH] =
        "the gradient's bytes per parameter: bf16, 2 B, 16 bit, 4.127 bit",
    [DPAS_INPUT_CHECKPOINT_WIDTH] = "the checkpoint's bytes per parameter: 14 B",
    [DPAS_INPUT_WEIGHT_WIDTH] = "the weights' bytes per parameter (optional; none removes it)",
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

static const opt_doc *opt_of(const char *key)
{
    for (size_t i = 0; i < sizeof opt_docs / sizeof opt_docs[0]; i++)
        if (!strcmp(opt_docs[i].key, key))
            return &opt_docs[i];
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

/* The server's own answer to a request of the document (an example): status, type and body. */
static int run(const dpas_registry *reg, int method, const char *target, const char *body,
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

/* A list of names as a sentence's tail: "a, b or c". */
static json_t *names_text(const char *head, const char *const *names, size_t n)
{
    size_t cap = strlen(head) + 8;
    for (size_t i = 0; i < n; i++)
        cap += strlen(names[i]) + 4;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    size_t o = (size_t)snprintf(t, cap, "%s", head);
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(t + o, cap - o, "%s%s",
                              i == 0       ? ""
                              : i + 1 == n ? " or "
                                           : ", ",
                              names[i]);
    json_t *s = json_string(t);
    free(t);
    return s;
}

/* The names an option takes, from the library's catalogues (NULL-terminated, static storage
 * or the rule table's). */
static size_t option_names(int type, const char **out, size_t cap)
{
    size_t n = 0;
    switch (type) {
    case T_RULES:
        for (size_t i = 0; i < dpas_rule_count() && n < cap; i++) {
            const dpas_rule *r = dpas_rule_at(i);
            int seen = 0;
            for (size_t j = 0; j < n; j++)
                seen |= !strcmp(out[j], r->name);
            if (!seen)
                out[n++] = r->name;
        }
        break;
    case T_CONVENTION:
        for (size_t i = 0; i < dpas_rule_count() && n < cap; i++) {
            const char *c = dpas_rule_at(i)->convention;
            int seen = !strcmp(c, "standard");
            for (size_t j = 0; j < n; j++)
                seen |= !strcmp(out[j], c);
            if (!seen)
                out[n++] = c;
        }
        break;
    case T_SCHEDULES:
        for (int k = 0; dpas_schedule_name((dpas_schedule_id)k) && n < cap; k++)
            out[n++] = dpas_schedule_name((dpas_schedule_id)k);
        break;
    case T_ATTRS:
        for (int k = 0; k < DPAS_ATTR_COUNT && n < cap; k++)
            out[n++] = dpas_attr_name((dpas_attr)k);
        break;
    case T_METRICS:
    case T_METRIC: /* y: a number (time_basis and time_model are words) */
        for (int k = 0; k < DPAS_METRIC_COUNT && n < cap; k++)
            if (type == T_METRICS || (k != DPAS_METRIC_TIME_BASIS && k != DPAS_METRIC_TIME_MODEL))
                out[n++] = dpas_metric_name(k);
        break;
    case T_STATE:
        for (size_t i = 0; dpas_convention_at(i) && n < cap; i++)
            out[n++] = dpas_convention_at(i)->name;
        break;
    case T_NETMODEL:
        for (int k = 0; dpas_netmodel_kind_name(k) && n < cap; k++)
            out[n++] = dpas_netmodel_kind_name(k);
        break;
    }
    return n;
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

static json_t *option_param(doc_ctx *x, const char *key, int sweep, const char *target)
{
    json_t *p = json_object(), *sch = json_object();
    set(x, p, "name", str(key));
    set(x, p, "in", str("query"));
    set(x, p, "required", json_false());
    set(x, p, "schema", sch);
    const opt_doc *d = opt_of(key);
    if (!d) {
        set(x, p, "description", str("(undocumented: a bug in dpas serve)"));
        x->failed |= 2;
        return p;
    }
    const char *names[128];
    size_t n = option_names(d->type == T_ATTRS && sweep ? T_METRICS : d->type, names, 128);
    if (d->type == T_INT) {
        set(x, sch, "type", str("integer"));
        set(x, sch, "minimum", json_integer(d->min));
        if (d->max >= 0)
            set(x, sch, "maximum", json_integer(d->max));
    } else if (d->type == T_BOOL) {
        json_t *e = set(x, sch, "enum", json_array());
        for (const char *const *b = (const char *const[]){"true", "false", "1", "0", NULL}; *b; b++)
            push(x, e, str(*b));
    } else {
        set(x, sch, "type", str("string"));
    }
    if (n && (d->type == T_RULES || d->type == T_SCHEDULES || d->type == T_ATTRS)) {
        /* the names of a list, for a client that offers them (the page does) */
        json_t *e = set(x, p, "x-dpas-values", json_array());
        for (size_t i = 0; i < n; i++)
            push(x, e, str(names[i]));
    }
    if (n && (d->type == T_CONVENTION || d->type == T_STATE || d->type == T_NETMODEL ||
              d->type == T_METRIC)) {
        json_t *e = set(x, sch, "enum", json_array());
        for (size_t i = 0; i < n; i++)
            push(x, e, str(names[i]));
    }
    char what[512];
    snprintf(what, sizeof what, "%s%s", d->what,
             n && d->type != T_CONVENTION && d->type != T_STATE && d->type != T_NETMODEL &&
                     d->type != T_METRIC
                 ? ": "
                 : ".");
    set(x, p, "description",
        n && d->type != T_CONVENTION && d->type != T_STATE && d->type != T_NETMODEL &&
                d->type != T_METRIC
            ? names_text(what, names, n)
            : str(what));
    char ex[256];
    const char *v = example_value(target, key, ex, sizeof ex);
    if (v)
        set(x, p, "example", d->type == T_INT ? json_integer(atoll(v)) : str(v));
    return p;
}

static json_t *input_param(doc_ctx *x, const char *key, int sweep, const char *target)
{
    json_t *p = json_object(), *sch = json_object();
    int in = srv_input_of(key);
    set(x, p, "name", str(key));
    set(x, p, "in", str("query"));
    set(x, p, "required", json_false());
    set(x, sch, "type", str("string"));
    set(x, p, "schema", sch);
    const char *flag = dpas_key_flag((dpas_key)in), *field = dpas_input_field((dpas_input)in);
    char what[512];
    int varies = sweep && (in == DPAS_INPUT_DP_DEGREE || in == DPAS_INPUT_PARAMETERS ||
                           in == DPAS_INPUT_WORKLOAD || in == DPAS_INPUT_FLEET ||
                           in == DPAS_INPUT_GRADIENT_WIDTH || in == DPAS_INPUT_CHECKPOINT_WIDTH);
    snprintf(what, sizeof what, "%s%s (the scenario's %s%s%s%s).%s",
             !strcmp(key, "model") ? "The workload's other name: " : "",
             input_meaning[in] ? input_meaning[in] : "(undocumented)", field,
             flag ? "; the CLI's " : "", flag ? flag : "", flag ? "" : "; no CLI flag",
             !varies                                                     ? ""
             : in == DPAS_INPUT_DP_DEGREE || in == DPAS_INPUT_PARAMETERS ? " A sweep takes a list "
                                                                           "(a,b,c) or a range "
                                                                           "(A..B doubling, "
                                                                           "A..B+S, A..B*F)."
                                                                         : " A sweep takes a list "
                                                                           "(a,b,c).");
    set(x, p, "description", str(what));
    set(x, p, "x-dpas-field", str(field));
    if (flag)
        set(x, p, "x-dpas-cli-flag", str(flag));
    char ex[256];
    const char *v = example_value(target, key, ex, sizeof ex);
    if (v)
        set(x, p, "example", str(v));
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
        bad_status =
            run(x->reg, d->bad[0] && !strcmp(rt->path, "/api/v1/calibrate") ? SRV_POST : SRV_GET,
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
    int status = run(x->reg, method, d->example, method == SRV_POST ? calibrate_body : NULL,
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
                int kind;
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
    /* the keys the route takes, as its refusal of an unknown key lists them */
    for (size_t i = 0; srv_route_key(rt, i); i++) {
        const char *key = srv_route_key(rt, i);
        if (!srv_openapi_param_kept(key, method))
            continue; /* what a GET can never do (openapi_responses.c) */
        srv_openapi_prune_param(push(x, params,
                                     srv_input_of(key) >= 0 ? input_param(x, key, sweep, target)
                                                            : option_param(x, key, sweep, target)),
                                method);
    }
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
