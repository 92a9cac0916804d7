/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON API under /api/v1/: each handler parses its query (and body) as the matching CLI
 * command parses its flags, calls the library, and answers with the library's JSON renderer, so
 * that every object is the CLI's `-o json` object for the same inputs. */
#include "serve.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- requests ---------------------------------------------------------------------------- */

/* "give dp_degree=N in the query, or dp_degree: in the body": how to give a missing key here. */
static void hint_of(dpas_key k, char *buf, size_t cap)
{
    const char *q = dpas_key_query(k), *mv = dpas_key_metavar(k), *file = dpas_key_file(k);
    if (k == DPAS_KEY_CALIBRATION)
        snprintf(buf, cap,
                 "give an nccl-tests log as the \"calibration\" part of a "
                 "multipart/form-data body");
    else if (!q)
        snprintf(buf, cap, "%s is not taken over HTTP", dpas_key_name(k));
    else
        snprintf(buf, cap, "give %s=%s in the query%s%s%s", q, mv ? mv : "true",
                 file ? ", or " : "", file ? file : "", file ? ": in the request body" : "");
}

static dpas_request *refused(srv_request *rq, srv_response *r, dpas_request *req,
                             const dpas_error *err)
{
    int status = srv_status_of(err->code), k = dpas_request_missing(req);
    char hint[200];
    if (rq->rest && err->code == DPAS_ENOENT && !strcmp(err->field, "scenario"))
        status = 404;
    if (k >= 0)
        hint_of((dpas_key)k, hint, sizeof hint);
    srv_error_hint(r, status, err, k >= 0 ? hint : NULL);
    dpas_request_free(req);
    return NULL;
}

/* The body's scenario file and its calibration parts, below the query's keys. */
static int body_of(srv_request *rq, dpas_request *req, dpas_error *err)
{
    size_t blen;
    const char *body = srv_scenario_body(rq, &blen); /* the body, or its "scenario" part */
    if (body) { /* a scenario file; the query overrides it as flags override a file */
        int is_json = -1;
        const char *ct = rq->multipart ? NULL : rq->content_type; /* a part's text decides */
        if (ct && !strncmp(ct, "application/json", 16))
            is_json = 1;
        else if (ct && strstr(ct, "yaml"))
            is_json = 0;
        if (dpas_request_load_text(req, body, blen, is_json, "request body", err))
            return -1;
    }
    for (size_t i = 0; i < rq->nparts; i++) { /* every log: the files of one calibration */
        srv_part *p = &rq->parts[i];
        if (strcmp(p->name, "calibration"))
            continue;
        p->used = 1;
        if (dpas_request_calibration_text(req, p->data, p->len,
                                          p->filename ? p->filename : "calibration", err))
            return -1;
    }
    return 0;
}

/* '+' in a query is a space (form encoding): "dp_degree=8..64+8" arrives as "8..64 8". A space
 * can stand nowhere in a range and '+' only before its step, so a range's one space after ".."
 * is read as the '+' it was: a copy (the caller's to free), or NULL when the value is not so. */
static char *range_of(const char *key, const char *v)
{
    const char *dots = strstr(v, "..");
    if (!dots || (strcmp(key, "dp_degree") && strcmp(key, "parameters")) || !strchr(dots, ' ') ||
        strchr(dots, ' ') != strrchr(v, ' '))
        return NULL;
    char *copy = strdup(v);
    if (copy)
        copy[strrchr(v, ' ') - v] = '+';
    return copy;
}

dpas_request *srv_request_of(srv_request *rq, srv_response *r, dpas_analysis a)
{
    dpas_request *req = NULL;
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (dpas_request_new(a, &req, &err) || body_of(rq, req, &err))
        return refused(rq, r, req, &err);
    if (rq->rest && dpas_request_set(req, "scenario", rq->rest, &err))
        return refused(rq, r, req, &err);
    for (size_t i = 0; i < rq->query->n; i++) {
        srv_param *p = &rq->query->p[i];
        if (rq->route && srv_route_own(rq->route, p->key))
            continue; /* the route's own option: its handler reads it */
        p->used = 1;
        char *range = range_of(p->key, p->value);
        int rc = dpas_request_set(req, p->key, range ? range : p->value, &err);
        free(range);
        if (rc)
            return refused(rq, r, req, &err);
    }
    if (dpas_request_resolve(req, rq->reg, &err))
        return refused(rq, r, req, &err);
    return req;
}

/* ---- options ---------------------------------------------------------------------------------- */

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
        char q[120];
        srv_fail(r, 400, DPAS_EINVAL, key, "%s must be true, false, 1 or 0, got %s", key,
                 dpas_quote(v, q, sizeof q));
        return -1;
    }
    return 0;
}

/* ---- the endpoints -------------------------------------------------------------------------- */

static void report(srv_request *rq, srv_response *r)
{
    dpas_request *req = srv_request_of(rq, r, DPAS_ANALYSIS_EVAL);
    if (!req)
        return;
    const dpas_request_opts *o = dpas_request_opts_of(req);
    dpas_render_opts ro = {.format = rq->format,
                           .units = DPAS_UNITS_SI,
                           .explain = o->explain,
                           .attrs = o->attrs,
                           .label = dpas_request_label(req)};
    dpas_error err;
    memset(&err, 0, sizeof err);
    srv_json(r, dpas_render_report(dpas_request_scenario(req), dpas_request_report(req), &ro, &err),
             &err);
    dpas_request_free(req);
}

void srv_api_eval(srv_request *rq, srv_response *r) { report(rq, r); }
void srv_api_scenario(srv_request *rq, srv_response *r) { report(rq, r); }

/* A listing (a registry kind, the precisions, the key table) in JSON or CSV: rendered on its
 * first request and kept for the server's lifetime, since neither the registry nor the tables
 * change while it runs (the page's document carries the registry's lists too, page.c). */
static void listing(srv_request *rq, srv_response *r, int kind)
{
    static char *kept[DPAS_KIND_COUNT - DPAS_LIST_KEYS][2];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (kind < DPAS_LIST_KEYS || kind >= DPAS_KIND_COUNT) {
        srv_fail(r, 500, DPAS_EINVAL, "kind", "no listing %d (a bug in dpas serve)", kind);
        return;
    }
    pthread_mutex_lock(&lock);
    char **k = &kept[kind - DPAS_LIST_KEYS][rq->format == DPAS_FORMAT_CSV];
    if (!*k)
        *k = dpas_render_list(rq->reg, kind, rq->format, &err);
    char *text = *k;
    pthread_mutex_unlock(&lock);
    srv_json(r, text, &err);
    if (text)
        r->free_body = NULL; /* kept: never freed, never written */
}

void srv_api_scenarios(srv_request *rq, srv_response *r) { listing(rq, r, DPAS_KIND_SCENARIO); }

void srv_api_cost(srv_request *rq, srv_response *r)
{
    dpas_request *req = srv_request_of(rq, r, DPAS_ANALYSIS_COST);
    if (!req)
        return;
    dpas_cost_view view = {
        .format = rq->format, .units = DPAS_UNITS_SI, .label = dpas_request_label(req)};
    dpas_cost *cost = NULL;
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (dpas_request_cost(req, &cost, &err))
        srv_error(r, srv_status_of(err.code), &err);
    else
        srv_json(r, dpas_render_cost(cost, &view, &err), &err);
    dpas_cost_free(cost);
    dpas_request_free(req);
}

void srv_api_rules(srv_request *rq, srv_response *r)
{
    dpas_request *req = srv_request_of(rq, r, DPAS_ANALYSIS_RULES);
    if (!req)
        return;
    const dpas_request_opts *o = dpas_request_opts_of(req);
    dpas_error err;
    dpas_rule_row rows[64];
    size_t nrows = 0;
    memset(&err, 0, sizeof err);
    if (dpas_rule_count() > sizeof rows / sizeof rows[0]) /* the catalogue outgrew the buffer */
        srv_fail(r, 500, DPAS_ENOMEM, "rules", "the rule catalogue has %zu rows, over %zu",
                 dpas_rule_count(), sizeof rows / sizeof rows[0]);
    else if (dpas_request_rules(req, rows, &nrows, &err))
        srv_error(r, srv_status_of(err.code), &err);
    else
        srv_json(r, dpas_render_rules(rows, nrows, o->n > 0, o->f >= 0, rq->format, &err), &err);
    dpas_request_free(req);
}

void srv_api_inventory(srv_request *rq, srv_response *r)
{
    dpas_request *req = srv_request_of(rq, r, DPAS_ANALYSIS_INVENTORY);
    if (!req)
        return;
    dpas_inventory_row *rows = NULL;
    size_t n = 0;
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (dpas_request_inventory(req, &rows, &n, &err))
        srv_error(r, srv_status_of(err.code), &err);
    else
        srv_json(r,
                 dpas_render_inventory(rows, n, rq->format, DPAS_UNITS_SI, dpas_request_label(req),
                                       &err),
                 &err);
    dpas_free(rows);
    dpas_request_free(req);
}

void srv_api_memory(srv_request *rq, srv_response *r)
{
    int require_fit = 1; /* require_fit=false: a state that does not fit is an answer, not a
                            422 (as the Python binding's MemoryCheck with fits False) */
    if (srv_opt_bool(rq, r, "require_fit", &require_fit))
        return;
    dpas_request *req = srv_request_of(rq, r, DPAS_ANALYSIS_MEMORY);
    if (!req)
        return;
    const dpas_request_opts *o = dpas_request_opts_of(req);
    const dpas_scenario *s = dpas_request_scenario(req);
    dpas_memory m;
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (dpas_request_memory(req, &m, &err)) {
        srv_error(r, srv_status_of(err.code), &err);
    } else if (!m.fits && require_fit) { /* the CLI's exit 2: a physics violation */
        err.code = DPAS_EPHYSICS;
        snprintf(err.field, sizeof err.field, "memory");
        dpas_memory_message(s, o->state, o->zero, &m, err.message, sizeof err.message);
        srv_error(r, 422, &err);
    } else {
        srv_json(r,
                 dpas_render_memory(s, o->state, o->zero, &m, rq->format, DPAS_UNITS_SI,
                                    dpas_request_label(req), &err),
                 &err);
    }
    dpas_request_free(req);
}

void srv_api_registry(srv_request *rq, srv_response *r)
{
    dpas_error err;
    dpas_kind kind;
    memset(&err, 0, sizeof err);
    if (dpas_kind_from_listing(rq->rest, &kind, &err)) {
        srv_fail(r, 404, DPAS_ENOENT, "kind", "%s", err.message);
        return;
    }
    listing(rq, r, kind);
}

/* POST /api/v1/calibrate: nccl-tests output as the body, or as one or more "calibration" parts of
 * a multipart body (several logs of one cluster, as `dpas calibrate FILE...`); collective, ranks,
 * test, gpus_per_node choose and describe the tests, predict and at ask for times. A calibrate
 * request of the library, as the CLI's and dpas-measure's: the same keys, lists and messages. */
void srv_api_calibrate(srv_request *rq, srv_response *r)
{
    dpas_error err;
    dpas_request *req = NULL;
    memset(&err, 0, sizeof err);
    int rc = dpas_request_new(DPAS_ANALYSIS_CALIBRATE, &req, &err);
    /* the keys of the key table a calibrate takes over HTTP */
    for (int k = 0; !rc && dpas_key_name((dpas_key)k); k++) {
        const char *q = dpas_key_query((dpas_key)k);
        const char *v = q && dpas_analysis_takes(DPAS_ANALYSIS_CALIBRATE, (dpas_key)k)
                            ? srv_query_get(rq->query, q)
                            : NULL;
        if (v)
            rc = dpas_request_set(req, q, v, &err);
    }
    if (rq->multipart) { /* the logs as "calibration" parts of a form, as cost and sweep take them */
        for (size_t i = 0; !rc && i < rq->nparts; i++)
            if (!strcmp(rq->parts[i].name, "calibration") && rq->parts[i].len) {
                rq->parts[i].used = 1;
                rc = dpas_request_calibration_text(
                    req, rq->parts[i].data, rq->parts[i].len,
                    rq->parts[i].filename ? rq->parts[i].filename : "calibration part", &err);
            }
    } else if (!rc && rq->body && rq->body_len) {
        rc = dpas_request_calibration_text(req, rq->body, rq->body_len, "request body", &err);
    }
    if (rc) {
        srv_error(r, srv_status_of(err.code), &err);
        dpas_request_free(req);
        return;
    }
    const dpas_netmodel *m = NULL;
    dpas_net_prediction *pred = NULL;
    size_t npred = 0;
    if (dpas_request_resolve(req, rq->reg, &err) || !(m = dpas_request_netmodel(req))) {
        if (dpas_request_missing(req) == DPAS_KEY_CALIBRATION) /* the keys were read first */
            srv_fail(r, 400, DPAS_EINVAL, "body",
                     "calibrate needs nccl-tests output (all_reduce_perf, all_gather_perf, ...) as "
                     "the request body");
        else
            srv_error(r, srv_status_of(err.code), &err);
    } else if (srv_budget_calibrate(m, dpas_request_predictions_asked(req), r)) /* counted first */
        ;
    else if (dpas_request_calibrate(req, &pred, &npred, &err))
        srv_error(r, srv_status_of(err.code), &err);
    else /* the notes the CLI prints on stderr in text are in the JSON payload */
        srv_json(r, dpas_render_netmodel(m, pred, npred, rq->format, &err), &err);
    dpas_free(pred);
    dpas_request_free(req);
}

/* The request's key table (the page reads its inputs and error fields from it). */
void srv_api_keys(srv_request *rq, srv_response *r) { listing(rq, r, DPAS_LIST_KEYS); }
