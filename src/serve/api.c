/* The JSON API under /api/v1/: each handler parses its query (and body) as the matching CLI
 * command parses its flags, calls the library, and answers with the library's JSON renderer, so
 * that every object is the CLI's `-o json` object for the same inputs. */
#include "serve.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static int bad(dpas_error *err, const char *field,
                                                     const char *fmt, ...)
{
    va_list ap;
    memset(err, 0, sizeof *err);
    err->code = DPAS_EINVAL;
    snprintf(err->field, sizeof err->field, "%s", field);
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return err->code;
}

/* ---- scenario inputs ---------------------------------------------------------------------- */

int srv_input_of(const char *key)
{
    if (!strcmp(key, "model")) /* mlsysim's and the CLI's word for the workload */
        return DPAS_INPUT_WORKLOAD;
    for (int k = 0; k < DPAS_INPUT_COUNT; k++)
        if (!strcmp(key, dpas_input_param((dpas_input)k)))
            return k;
    return -1;
}

const char *srv_input_key(size_t i)
{
    if (i < DPAS_INPUT_COUNT)
        return dpas_input_param((dpas_input)i);
    return i == DPAS_INPUT_COUNT ? "model" : NULL;
}

int srv_load_scenario(srv_request *rq, const char *const *override, dpas_spec *spec,
                      dpas_scenario *s, const char **label, dpas_error *err)
{
    int rc;
    size_t blen;
    const char *body = srv_scenario_body(rq, &blen); /* the body, or its "scenario" part */
    if (body) { /* a scenario file; the query overrides it as flags override a file */
        int is_json = -1;
        const char *ct = rq->content_type;
        if (rq->multipart)
            ct = NULL; /* the part's own type is not read: its text decides, as for a file */
        if (ct && !strncmp(ct, "application/json", 16))
            is_json = 1;
        else if (ct && strstr(ct, "yaml"))
            is_json = 0;
        if ((rc = dpas_spec_load_text(spec, body, blen, is_json, "request body", err)))
            return rc;
    }
    if (rq->rest &&
        (rc = dpas_spec_set_input(spec, DPAS_INPUT_SCENARIO, rq->rest, "scenario", err)))
        return rc;
    const char *model = srv_query_get(rq->query, "model");
    const char *workload = srv_query_get(rq->query, "workload");
    const char *params = srv_query_get(rq->query, dpas_input_param(DPAS_INPUT_PARAMETERS));
    if (model && workload)
        return bad(err, "model", "give workload or model, not both");
    if ((model || workload) && params)
        return bad(err, model ? "model" : "workload", "give %s or parameters, not both",
                   model ? "model" : "workload");
    /* in the order of the library's input table: a fleet before the nodes that modify it */
    for (int k = 0; k < DPAS_INPUT_COUNT; k++) {
        const char *key = dpas_input_param((dpas_input)k);
        const char *v = srv_query_get(rq->query, key);
        if (k == DPAS_INPUT_WORKLOAD && !v && model) {
            key = "model";
            v = model;
        }
        if (override && override[k])
            v = override[k];
        if (!v)
            continue;
        if (k == DPAS_INPUT_WEIGHT_WIDTH && !strcmp(v, "none"))
            v = NULL; /* weight_bytes_per_param=none: no weight width (the seed's None) */
        if ((rc = dpas_spec_set_input(spec, (dpas_input)k, v, key, err)))
            return rc;
    }
    if ((rc = dpas_spec_resolve(spec, rq->reg, s, err)))
        return rc;
    *label = dpas_spec_label(spec);
    return 0;
}

/* A scenario and its report, or an error response (404 for a scenario named in the path). */
static int scenario(srv_request *rq, srv_response *r, dpas_spec **spec, dpas_scenario *s,
                    dpas_report *rep, const char **label)
{
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (!(*spec = dpas_spec_new())) {
        srv_fail(r, 500, DPAS_ENOMEM, "", "out of memory");
        return -1;
    }
    if (srv_load_scenario(rq, NULL, *spec, s, label, &err) || dpas_evaluate(s, rep, &err)) {
        int status = srv_status_of(err.code);
        if (rq->rest && err.code == DPAS_ENOENT && !strcmp(err.field, "scenario"))
            status = 404;
        srv_error(r, status, &err);
        return -1;
    }
    return 0;
}

/* ---- options ---------------------------------------------------------------------------------- */

int srv_opt_int(srv_request *rq, srv_response *r, const char *key, int64_t min, int64_t max,
                int64_t *out)
{
    const char *v = srv_query_get(rq->query, key);
    if (!v)
        return 0;
    dpas_error err;
    int64_t x;
    memset(&err, 0, sizeof err);
    if (dpas_parse_int(key, v, &x, &err)) {
        srv_error(r, 400, &err);
        return -1;
    }
    if (x < min || x > max) {
        if (x < min)
            srv_fail(r, 400, DPAS_EINVAL, key, "%s must be >= %lld, got %lld", key, (long long)min,
                     (long long)x);
        else
            srv_fail(r, 400, DPAS_EINVAL, key, "%s must be <= %lld, got %lld", key, (long long)max,
                     (long long)x);
        return -1;
    }
    *out = x;
    return 0;
}

int srv_opt_bool(srv_request *rq, srv_response *r, const char *key, int *out)
{
    const char *v = srv_query_get(rq->query, key);
    if (!v)
        return 0;
    if (!strcmp(v, "true") || !strcmp(v, "1"))
        *out = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "0"))
        *out = 0;
    else {
        srv_fail(r, 400, DPAS_EINVAL, key, "%s must be true, false, 1 or 0, got \"%.100s\"", key,
                 v);
        return -1;
    }
    return 0;
}

/* attr=A,B,...: the seed's attributes, as --attr. */
static int opt_attrs(srv_request *rq, srv_response *r, unsigned *mask)
{
    const char *v = srv_query_get(rq->query, "attr");
    if (!v)
        return 0;
    for (const char *p = v;;) {
        size_t l = strcspn(p, ",");
        char name[64];
        if (!l || l >= sizeof name) {
            srv_fail(r, 400, DPAS_EINVAL, "attr",
                     "attr must be a comma-separated list of attribute names, got \"%.200s\"", v);
            return -1;
        }
        memcpy(name, p, l);
        name[l] = '\0';
        int a = dpas_attr_from_name(name);
        if (a < 0) {
            char names[400] = "";
            for (int i = 0; i < DPAS_ATTR_COUNT; i++) {
                size_t o = strlen(names);
                snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "",
                         dpas_attr_name((dpas_attr)i));
            }
            srv_fail(r, 400, DPAS_EINVAL, "attr",
                     "attr: unknown attribute \"%s\"; expected one of %s", name, names);
            return -1;
        }
        *mask |= 1u << a;
        if (!p[l])
            break;
        p += l + 1;
    }
    return 0;
}

/* A comma-separated list (rule=, schedule=) as items: a copy split in place (items[0] owns it,
 * srv_list_free releases), no empty item. 0, or -1 with the error response filled. */
static int split_list(srv_response *r, const char *key, const char *text, char ***items, size_t *n)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    char *copy = strdup(text);
    char **v = calloc(cap + 1, sizeof *v);
    *items = NULL;
    *n = 0;
    if (!copy || !v) {
        free(copy), free(v);
        srv_fail(r, 500, DPAS_ENOMEM, key, "out of memory");
        return -1;
    }
    v[0] = copy;
    size_t k = 1;
    for (char *p = copy; *p; p++)
        if (*p == ',') {
            *p = '\0';
            v[k++] = p + 1;
        }
    for (size_t i = 0; i < k; i++) {
        char q[160];
        if (!*v[i]) {
            srv_fail(r, 400, DPAS_EINVAL, key, "%s: an empty name in the list %s", key,
                     dpas_quote(text, q, sizeof q));
            free(copy), free(v);
            return -1;
        }
        for (size_t j = 0; j < i; j++) /* a name listed twice: an error, as in the CLI */
            if (!strcmp(v[i], v[j])) {
                srv_fail(r, 400, DPAS_EINVAL, key, "%s: %s is given twice", key,
                         dpas_quote(v[i], q, sizeof q));
                free(copy), free(v);
                return -1;
            }
    }
    *items = v;
    *n = k;
    return 0;
}

static void list_free(char **items)
{
    if (items)
        free(items[0]);
    free(items);
}

/* ---- the endpoints -------------------------------------------------------------------------- */

static void report(srv_request *rq, srv_response *r)
{
    dpas_render_opts ro = {.format = rq->format, .units = DPAS_UNITS_SI};
    if (opt_attrs(rq, r, &ro.attrs) || srv_opt_bool(rq, r, "explain", &ro.explain))
        return;
    dpas_spec *spec = NULL;
    dpas_scenario s;
    dpas_report rep;
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (!scenario(rq, r, &spec, &s, &rep, &ro.label))
        srv_json(r, dpas_render_report(&s, &rep, &ro, &err), &err);
    dpas_spec_free(spec);
}

void srv_api_eval(srv_request *rq, srv_response *r) { report(rq, r); }
void srv_api_scenario(srv_request *rq, srv_response *r) { report(rq, r); }

void srv_api_scenarios(srv_request *rq, srv_response *r)
{
    dpas_error err;
    memset(&err, 0, sizeof err);
    srv_json(r, dpas_render_list(rq->reg, DPAS_KIND_SCENARIO, rq->format, &err), &err);
}

void srv_api_cost(srv_request *rq, srv_response *r)
{
    dpas_cost_opts co = {.f = -1};
    dpas_cost_view view = {.format = rq->format, .units = DPAS_UNITS_SI};
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (srv_opt_int(rq, r, "f", 0, INT64_MAX, &co.f) ||
        srv_opt_int(rq, r, "steps", 1, INT64_MAX, &co.steps) ||
        srv_opt_int(rq, r, "iterations", 1, INT64_MAX, &co.iterations))
        return;
    const char *rv = srv_query_get(rq->query, "compute_rate");
    if (rv) {
        uint64_t x;
        if (dpas_parse_count("compute_rate", rv, &x, &err)) {
            srv_error(r, 400, &err);
            return;
        }
        if (!x) {
            srv_fail(r, 400, DPAS_EINVAL, "compute_rate", "compute_rate must be > 0, got %s", rv);
            return;
        }
        co.compute_rate = (double)x;
    }
    /* rules and schedules before the scenario, as the CLI: a typo is named first */
    const char *conv = srv_query_get(rq->query, "convention");
    const char *rules_v = srv_query_get(rq->query, "rule");
    const char *sched_v = srv_query_get(rq->query, "schedule");
    const dpas_rule **rules = NULL;
    char **items = NULL;
    size_t n = 0;
    if (rules_v && split_list(r, "rule", rules_v, &items, &n))
        return;
    if (rules_v || conv) { /* the listed rules, or every rule's default row, under conv */
        size_t k = rules_v ? n : dpas_rule_count();
        if (!(rules = calloc(k ? k : 1, sizeof *rules))) {
            list_free(items);
            srv_fail(r, 500, DPAS_ENOMEM, "rule", "out of memory");
            return;
        }
        for (size_t i = 0; i < k; i++) {
            const char *name = rules_v ? items[i] : dpas_rule_at(i)->name;
            if (!rules_v && !dpas_rule_at(i)->is_default)
                continue;
            if (dpas_rule_select(name, conv, &rules[co.nrules++], &err)) {
                srv_error(r, 400, &err);
                list_free(items);
                free(rules);
                return;
            }
        }
        co.rules = rules;
    }
    list_free(items);
    if (sched_v) {
        if (split_list(r, "schedule", sched_v, &items, &n)) {
            free(rules);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            int k = dpas_schedule_from_name(items[i]);
            if (k < 0) {
                char q[96];
                srv_fail(r, 400, DPAS_EINVAL, "schedule",
                         "schedule: unknown schedule %s; expected allreduce, allgather, ps, "
                         "ps_separate, sharded, sharded_distance or innetwork",
                         dpas_quote(items[i], q, sizeof q));
                list_free(items);
                free(rules);
                return;
            }
            co.schedules |= 1u << k;
        }
        list_free(items);
    }
    srv_calibration cal;
    if (srv_calibration_load(rq, r, &cal)) {
        free(rules);
        return;
    }
    if (cal.net) { /* as --calibration FILE [--network-model M] */
        co.links = &cal.links;
        co.links_source = cal.source;
        co.net = cal.net;
        co.net_kind = cal.kind;
    }
    dpas_spec *spec = NULL;
    dpas_scenario s;
    dpas_report rep;
    dpas_cost *cost = NULL;
    if (!scenario(rq, r, &spec, &s, &rep, &view.label)) {
        if (dpas_cost_compute(&s, &co, &cost, &err))
            srv_error(r, srv_status_of(err.code), &err);
        else
            srv_json(r, dpas_render_cost(cost, &view, &err), &err);
    }
    dpas_cost_free(cost);
    dpas_spec_free(spec);
    srv_calibration_free(&cal);
    free(rules);
}

void srv_api_rules(srv_request *rq, srv_response *r)
{
    int64_t n = -1, f = -1;
    if (srv_opt_int(rq, r, "n", 1, INT64_MAX, &n) || srv_opt_int(rq, r, "f", 0, INT64_MAX, &f))
        return;
    dpas_error err;
    dpas_rule_row rows[64];
    size_t nrows = 0;
    memset(&err, 0, sizeof err);
    if (dpas_rule_count() > sizeof rows / sizeof rows[0]) { /* the catalogue outgrew the buffer */
        srv_fail(r, 500, DPAS_ENOMEM, "rules", "the rule catalogue has %zu rows, over %zu",
                 dpas_rule_count(), sizeof rows / sizeof rows[0]);
        return;
    }
    if (dpas_rules_list(n, f, srv_query_get(rq->query, "convention"), rows, &nrows, &err)) {
        srv_error(r, srv_status_of(err.code), &err);
        return;
    }
    srv_json(r, dpas_render_rules(rows, nrows, n > 0, f >= 0, rq->format, &err), &err);
}

void srv_api_inventory(srv_request *rq, srv_response *r)
{
    dpas_spec *spec = NULL;
    dpas_scenario s;
    dpas_report rep;
    const char *label = NULL;
    dpas_error err;
    memset(&err, 0, sizeof err);
    dpas_inventory_row *rows = NULL;
    size_t n = 0;
    if (!scenario(rq, r, &spec, &s, &rep, &label)) {
        int rc = dpas_inventory(&s, NULL, 0, &n, &err);
        if (!rc && !(rows = calloc(n ? n : 1, sizeof *rows))) {
            rc = err.code = DPAS_ENOMEM;
            snprintf(err.message, sizeof err.message, "out of memory");
        }
        if (!rc)
            rc = dpas_inventory(&s, rows, n, &n, &err);
        if (rc)
            srv_error(r, srv_status_of(err.code), &err);
        else
            srv_json(r, dpas_render_inventory(rows, n, rq->format, DPAS_UNITS_SI, label, &err),
                     &err);
    }
    free(rows);
    dpas_spec_free(spec);
}

void srv_api_memory(srv_request *rq, srv_response *r)
{
    int64_t zero = 0;
    const char *state = srv_query_get(rq->query, "state");
    const dpas_convention *conv = NULL;
    dpas_error err;
    memset(&err, 0, sizeof err);
    int require_fit = 1; /* require_fit=false: a state that does not fit is an answer, not a
                            422 (as the Python binding's MemoryCheck with fits False) */
    if (srv_opt_int(rq, r, "zero", 0, 3, &zero) || srv_opt_bool(rq, r, "require_fit", &require_fit))
        return;
    if (dpas_convention_find(state ? state : "zero16", &conv, &err)) {
        srv_error(r, 400, &err);
        return;
    }
    dpas_spec *spec = NULL;
    dpas_scenario s;
    dpas_report rep;
    const char *label = NULL;
    dpas_memory m;
    if (!scenario(rq, r, &spec, &s, &rep, &label)) {
        if (dpas_memory_check(&s, conv, (int)zero, &m, &err)) {
            srv_error(r, srv_status_of(err.code), &err);
        } else if (!m.fits && require_fit) { /* the CLI's exit 2: a physics violation */
            err.code = DPAS_EPHYSICS;
            snprintf(err.field, sizeof err.field, "memory");
            dpas_memory_message(&s, conv, (int)zero, &m, err.message, sizeof err.message);
            srv_error(r, 422, &err);
        } else {
            srv_json(
                r,
                dpas_render_memory(&s, conv, (int)zero, &m, rq->format, DPAS_UNITS_SI, label, &err),
                &err);
        }
    }
    dpas_spec_free(spec);
}

void srv_api_registry(srv_request *rq, srv_response *r)
{
    dpas_error err;
    int kind;
    memset(&err, 0, sizeof err);
    if (dpas_kind_from_listing(rq->rest, &kind, &err)) {
        srv_fail(r, 404, DPAS_ENOENT, "kind", "%s", err.message);
        return;
    }
    srv_json(r, dpas_render_list(rq->reg, kind, rq->format, &err), &err);
}

/* predict=SIZE,...: byte counts with units (16MiB, 1GB), as calibrate --predict. */
static int opt_sizes(srv_request *rq, srv_response *r, uint64_t **sizes, size_t *n)
{
    const char *v = srv_query_get(rq->query, "predict");
    *sizes = NULL;
    *n = 0;
    if (!v)
        return 0;
    char **items;
    size_t k;
    if (split_list(r, "predict", v, &items, &k))
        return -1;
    if (!(*sizes = malloc(k * sizeof **sizes))) {
        list_free(items);
        srv_fail(r, 500, DPAS_ENOMEM, "predict", "out of memory");
        return -1;
    }
    dpas_error err;
    memset(&err, 0, sizeof err);
    for (size_t i = 0; i < k; i++)
        if (dpas_parse_size_bytes("predict", items[i], &(*sizes)[i], &err)) {
            srv_error(r, 400, &err);
            list_free(items);
            free(*sizes);
            *sizes = NULL;
            return -1;
        }
    list_free(items);
    *n = k;
    return 0;
}

void srv_api_calibrate(srv_request *rq, srv_response *r)
{
    int64_t ranks = 0;
    int coll;
    const char *cv = srv_query_get(rq->query, "collective");
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (cv && dpas_collective_parse(cv, &coll, &err)) {
        srv_error(r, 400, &err);
        return;
    }
    if (srv_opt_int(rq, r, "ranks", 2, INT64_MAX, &ranks))
        return;
    uint64_t *sizes;
    size_t nsizes;
    if (opt_sizes(rq, r, &sizes, &nsizes))
        return;
    const char *log = rq->body;
    size_t log_len = rq->body_len;
    const char *origin = "request body";
    if (rq->multipart) { /* the log as the "calibration" part of a form, as cost and sweep take it */
        size_t nparts = 0;
        const srv_part *p = srv_part_get(rq, "calibration", &nparts);
        if (nparts > 1) {
            srv_fail(r, 400, DPAS_EINVAL, "calibration",
                     "%zu calibration parts: give one nccl-tests log", nparts);
            free(sizes);
            return;
        }
        log = p ? p->data : NULL;
        log_len = p ? p->len : 0;
        if (p && p->filename)
            origin = p->filename;
    }
    if (!log || !log_len) {
        srv_fail(r, 400, DPAS_EINVAL, "body",
                 "calibrate needs nccl-tests output (all_reduce_perf, all_gather_perf, ...) as the "
                 "request body");
        free(sizes);
        return;
    }
    dpas_netmodel *m = NULL;
    dpas_net_prediction *pred = NULL;
    size_t npred = 0;
    if (dpas_netmodel_from_text(log, log_len, origin, cv, ranks, &m, &err))
        srv_error(r, srv_status_of(err.code), &err);
    else if (srv_budget_calibrate(m->ncurves, nsizes, r)) /* rows counted before they are made */
        ;
    else if (dpas_netmodel_predict(m, sizes, nsizes, &pred, &npred, &err))
        srv_error(r, srv_status_of(err.code), &err);
    else /* the notes the CLI prints on stderr in text are in the JSON payload */
        srv_json(r, dpas_render_netmodel(m, pred, npred, rq->format, &err), &err);
    dpas_free(pred);
    dpas_netmodel_free(m);
    free(sizes);
}
