/* SPDX-License-Identifier: Apache-2.0 */
/* The request parser: keys from any front end, checked once in one fixed order, into a typed
 * request. A key is recorded as text when it is given (only an unknown key or one given twice is
 * refused then); dpas_request_resolve does every other check, so that the first error does not
 * depend on the order of a command line, a query or keyword arguments. */
#include "request_inputs.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dpas_request_new(dpas_analysis a, dpas_request **out, dpas_error *err)
{
    *out = NULL;
    if ((unsigned)a >= DPAS_ANALYSIS_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "analysis", "unknown analysis %d", (int)a);
    dpas_request *rq = calloc(1, sizeof *rq);
    if (!rq || !(rq->spec = dpas_spec_new())) {
        free(rq);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    rq->analysis = a;
    rq->missing = -1;
    rq->opts.n = rq->opts.f = -1;
    rq->opts.cost.f = -1;
    rq->sweep.schedule = DPAS_SCHED_NONE;
    *out = rq;
    return 0;
}

void dpas_request_free(dpas_request *rq)
{
    if (!rq)
        return;
    for (int k = 0; k < DPAS_KEY_COUNT; k++) {
        free(rq->v[k].text);
        for (size_t i = 0; i < rq->v[k].npaths; i++)
            free(rq->v[k].paths[i]);
        free(rq->v[k].paths);
    }
    for (int k = 0; k < DPAS_INPUT_COUNT; k++)
        free(rq->placeholder[k]);
    dpas_sweep_axis_free(&rq->sweep.axes[0]);
    dpas_sweep_axis_free(&rq->sweep.axes[1]);
    dpas_sweep_axis_free(&rq->sweep.axes[2]);
    free(rq->rules);
    dpas_netmodel_free(rq->net);
    free(rq->links_source);
    for (size_t i = 0; i < rq->ncal_texts; i++) {
        free(rq->cal_texts[i]);
        free(rq->cal_origins[i]);
    }
    free(rq->cal_texts);
    free(rq->cal_origins);
    free(rq->cal_lens);
    free(rq->tests);
    free(rq->sizes);
    free(rq->at);
    dpas_spec_free(rq->spec);
    free(rq);
}

int dpas_request_missing(const dpas_request *rq) { return rq ? rq->missing : -1; }

/* ---- keys as given ---------------------------------------------------------------------------- */

static int key_of(const dpas_request *rq, const char *name, dpas_error *err)
{
    char q[96];
    int k = dpas_key_from_name(name);
    if (k < 0)
        return dpas__fail(err, DPAS_EINVAL, "key", "unknown key %s",
                          dpas__quote(name ? name : "(null)", q, sizeof q));
    if (rq->resolved)
        return dpas__fail(err, DPAS_EINVAL, "key", "the request is resolved already");
    return k;
}

static char *copy_of(const char *text) { return text ? strdup(text) : strdup(""); }

static int twice(dpas_key k, dpas_error *err)
{
    return dpas__fail(err, DPAS_EINVAL, dpas_key_name(k), "%s is given twice; give it once",
                      dpas_key_name(k));
}

static int add_path(dpas__given *g, const char *text, dpas_error *err)
{
    char **more = realloc(g->paths, (g->npaths + 1) * sizeof *more);
    char *copy = more ? copy_of(text) : NULL;
    if (more)
        g->paths = more;
    if (!copy)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    g->paths[g->npaths++] = copy;
    g->set = true;
    return 0;
}

int dpas_request_set(dpas_request *rq, const char *key, const char *value, dpas_error *err)
{
    int k = key_of(rq, key, err);
    if (k < 0)
        return k;
    dpas__given *g = &rq->v[k];
    if (dpas_key_flags((dpas_key)k) & DPAS_KEY_REPEAT) { /* "A,B": as the key given twice */
        char **items;
        size_t n;
        int rc =
            dpas__request_split(dpas_key_name((dpas_key)k), value ? value : "", &items, &n, err);
        for (size_t i = 0; !rc && i < n; i++)
            rc = add_path(g, items[i], err);
        if (items)
            free(items[0]);
        free(items);
        return rc;
    }
    if (g->set)
        return twice((dpas_key)k, err);
    if (!(g->text = copy_of(value)))
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    g->set = true;
    return 0;
}

int dpas_request_add(dpas_request *rq, const char *key, const char *item, dpas_error *err)
{
    int k = key_of(rq, key, err);
    if (k < 0)
        return k;
    unsigned fl = dpas_key_flags((dpas_key)k);
    dpas__given *g = &rq->v[k];
    if (fl & DPAS_KEY_REPEAT)
        return add_path(g, item, err);
    if (!(fl & (DPAS_KEY_LIST | DPAS_KEY_AXIS)))
        return dpas_request_set(rq, key, item, err);
    char q[96];
    if (g->set && !g->items)
        return twice((dpas_key)k, err);
    if (!item || strchr(item, ','))
        return dpas__fail(err, DPAS_EINVAL, dpas_key_name((dpas_key)k),
                          "%s: an item of a list holds no comma, got %s",
                          dpas_key_name((dpas_key)k),
                          dpas__quote(item ? item : "(null)", q, sizeof q));
    dpas__buf b = {0};
    if (g->text)
        dpas__buf_printf(&b, "%s,", g->text);
    dpas__buf_puts(&b, item);
    char *text = dpas__buf_finish(&b, err);
    if (!text)
        return DPAS_ENOMEM;
    free(g->text);
    g->text = text;
    g->set = g->items = true;
    return 0;
}

int dpas_request_load_file(dpas_request *rq, const char *path, dpas_error *err)
{
    return dpas_spec_load_file(rq->spec, path, err);
}

int dpas_request_load_text(dpas_request *rq, const char *text, size_t len, int is_json,
                           const char *origin, dpas_error *err)
{
    return dpas_spec_load_text(rq->spec, text, len, is_json, origin, err);
}

int dpas_request_base(dpas_request *rq, const char *key, const char *value, dpas_error *err)
{
    int k = key_of(rq, key, err);
    if (k < 0)
        return k;
    if (k >= DPAS_INPUT_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "key", "%s is not a scenario input",
                          dpas_key_name((dpas_key)k));
    if (k == DPAS_KEY_WEIGHT_WIDTH && value && !strcmp(value, "none"))
        value = NULL;
    return dpas_spec_set_input(rq->spec, (dpas_input)k, value, dpas_key_name((dpas_key)k), err);
}

/* ---- the checks that need no value -------------------------------------------------------------- */

/* "cost, sweep and plot": the analyses that take k. */
static void takers(dpas_key k, char *buf, size_t cap)
{
    size_t o = 0, n = 0, seen = 0;
    for (int a = 0; a < DPAS_ANALYSIS_COUNT; a++)
        n += dpas_analysis_takes((dpas_analysis)a, k) != 0;
    buf[0] = '\0';
    for (int a = 0; a < DPAS_ANALYSIS_COUNT && o < cap; a++) {
        if (!dpas_analysis_takes((dpas_analysis)a, k))
            continue;
        seen++;
        int w = snprintf(buf + o, cap - o, "%s%s",
                         seen == 1   ? ""
                         : seen == n ? " and "
                                     : ", ",
                         dpas_analysis_name((dpas_analysis)a));
        o += w > 0 ? (size_t)w : 0;
    }
}

static int check_keys(dpas_request *rq, dpas_error *err)
{
    if (rq->ncal_texts)
        rq->v[DPAS_KEY_CALIBRATION].set = true;
    for (int k = 0; k < DPAS_KEY_COUNT; k++) {
        /* a label (every TEXT key of the table) given empty, or only blanks, labels nothing:
         * refused as HTTP refuses an empty query value, in every front end (issue 29) */
        if (rq->v[k].set && dpas_key_type_of((dpas_key)k) == DPAS_TYPE_TEXT &&
            (!rq->v[k].text || !rq->v[k].text[strspn(rq->v[k].text, " \t\r\n\v\f")]))
            return dpas__fail(err, DPAS_EINVAL, dpas_key_name((dpas_key)k),
                              "%s is empty%s; give a value or leave the key out",
                              dpas_key_name((dpas_key)k),
                              rq->v[k].text && rq->v[k].text[0] ? " (only blanks)" : "");
        if (!rq->v[k].set || dpas_analysis_takes(rq->analysis, (dpas_key)k))
            continue;
        char who[128];
        const char *name = dpas_key_name((dpas_key)k), *a = dpas_analysis_name(rq->analysis);
        takers((dpas_key)k, who, sizeof who);
        if (k < DPAS_INPUT_COUNT)
            return dpas__fail(err, DPAS_EINVAL, name,
                              "%s is not used by %s (an input of a scenario; %s takes none)", name,
                              a, a);
        return dpas__fail(err, DPAS_EINVAL, name, "%s is not used by %s (an option of %s)", name, a,
                          who);
    }
    if (rq->v[DPAS_KEY_WORKLOAD].set && rq->v[DPAS_KEY_PARAMETERS].set)
        return dpas__fail(err, DPAS_EINVAL, "workload",
                          "give workload or parameters, not both (a registry workload has its "
                          "own parameter count)");
    return 0;
}

/* ---- options ------------------------------------------------------------------------------------ */

/* An integer option, within its bounds in the key table (dpas_key_bounds). */
static int count_opt(dpas_request *rq, dpas_key k, int64_t *out, dpas_error *err)
{
    const char *t = text_of(rq, k), *name = dpas_key_name(k);
    int64_t v, min = INT64_MIN, max = INT64_MAX;
    int rc;
    if (!t)
        return 0;
    dpas_key_bounds(k, &min, &max);
    if ((rc = dpas_parse_int(name, t, &v, err)))
        return rc;
    if (v < min)
        return dpas__fail(err, DPAS_EINVAL, name, "%s must be >= %lld, got %lld", name,
                          (long long)min, (long long)v);
    if (v > max)
        return dpas__fail(err, DPAS_EINVAL, name, "%s must be <= %lld, got %lld", name,
                          (long long)max, (long long)v);
    *out = v;
    return 0;
}

static int switch_opt(dpas_request *rq, dpas_key k, int *out, dpas_error *err)
{
    const char *t = text_of(rq, k), *name = dpas_key_name(k);
    char q[96];
    if (!t)
        return 0;
    if (!strcmp(t, "true") || !strcmp(t, "1"))
        *out = 1;
    else if (!strcmp(t, "false") || !strcmp(t, "0"))
        *out = 0;
    else
        return dpas__fail(err, DPAS_EINVAL, name, "%s must be true, false, 1 or 0, got %s", name,
                          dpas__quote(t, q, sizeof q));
    return 0;
}

/* The rules a cost asks for: the listed ones, or with a convention alone every default rule
 * under it (a convention is used, never dropped); NULL rules: every default rule. A rule named
 * twice under two names (mda, brute) is refused as a name given twice is. */
static int cost_rules(dpas_request *rq, dpas_error *err)
{
    const char *list = text_of(rq, DPAS_KEY_RULE), *conv = text_of(rq, DPAS_KEY_CONVENTION);
    char **items = NULL, q[96];
    size_t n = 0;
    int rc = 0;
    if (!list && !conv)
        return 0;
    if (list && (rc = dpas__request_split("rule", list, &items, &n, err)))
        return rc;
    if (!list)
        for (size_t i = 0; i < dpas_rule_count(); i++)
            n += dpas_rule_at(i)->is_default != 0;
    if (!(rq->rules = calloc(n ? n : 1, sizeof *rq->rules))) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        n = 0;
    }
    size_t m = 0;
    for (size_t i = 0, j = 0; !rc && m < n; i++) {
        const char *name = list ? items[i] : dpas_rule_at(i)->name;
        if (!list && !dpas_rule_at(i)->is_default)
            continue;
        if ((rc = dpas_rule_select(name, conv, &rq->rules[m], err)))
            break;
        for (j = 0; !rc && j < m; j++)
            if (rq->rules[j] == rq->rules[m])
                rc = dpas__fail(err, DPAS_EINVAL, "rule", "rule: %s is given twice (as %s)",
                                dpas__quote(name, q, sizeof q), rq->rules[m]->name);
        m++;
    }
    if (items)
        free(items[0]);
    free(items);
    rq->opts.cost.rules = rq->rules;
    rq->opts.cost.nrules = m;
    return rc;
}

static int cost_schedules(dpas_request *rq, dpas_error *err)
{
    const char *list = text_of(rq, DPAS_KEY_SCHEDULE);
    char **items;
    size_t n;
    int rc;
    if (!list)
        return 0;
    if ((rc = dpas__request_split("schedule", list, &items, &n, err)))
        return rc;
    for (size_t i = 0; !rc && i < n; i++) {
        dpas_schedule_id id;
        char q[96];
        if ((rc = dpas_schedule_parse("schedule", items[i], &id, err)))
            break;
        /* one schedule under two spellings (allgather,AllGather) is refused as sweep refuses it */
        if (rq->opts.cost.schedules & (1u << id))
            rc = dpas__fail(err, DPAS_EINVAL, "schedule", "schedule: %s is given twice (as %s)",
                            dpas__quote(items[i], q, sizeof q), dpas_schedule_name(id));
        rq->opts.cost.schedules |= 1u << id;
    }
    free(items[0]);
    free(items);
    return rc;
}

int dpas_request_calibration_text(dpas_request *rq, const char *text, size_t len,
                                  const char *origin, dpas_error *err)
{
    if (!rq || rq->resolved)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "the request is resolved already");
    size_t n = rq->ncal_texts + 1;
    char **texts = realloc(rq->cal_texts, n * sizeof *texts);
    if (texts)
        rq->cal_texts = texts;
    char **origins = texts ? realloc(rq->cal_origins, n * sizeof *origins) : NULL;
    if (origins)
        rq->cal_origins = origins;
    size_t *lens = origins ? realloc(rq->cal_lens, n * sizeof *lens) : NULL;
    if (lens)
        rq->cal_lens = lens;
    char *copy = lens && len < SIZE_MAX ? malloc(len + 1) : NULL;
    char *name = copy ? strdup(origin ? origin : "calibration") : NULL;
    if (!name) {
        free(copy);
        return dpas__fail(err, DPAS_ENOMEM, "calibration", "out of memory");
    }
    if (len)
        memcpy(copy, text, len);
    copy[len] = '\0';
    rq->cal_texts[rq->ncal_texts] = copy;
    rq->cal_origins[rq->ncal_texts] = name;
    rq->cal_lens[rq->ncal_texts] = len;
    rq->ncal_texts = n;
    return 0;
}

/* The one place a request reads a calibration (cost, sweep, plot, calibrate; dpas-measure
 * through a calibrate request): every file (or text) at once, as one cluster's one model
 * (dpas_netmodel_load_files: a file given twice is refused there), read and fitted once. */
static int read_calibration(dpas_request *rq, const dpas_calib_options *opt, const char **first,
                            dpas_error *err)
{
    const dpas__given *g = &rq->v[DPAS_KEY_CALIBRATION];
    const char *const *names;
    size_t n;
    int rc;
    if (g->npaths && rq->ncal_texts)
        return dpas__fail(err, DPAS_EINVAL, "calibration",
                          "calibration: give files or texts, not both");
    if (g->npaths) {
        names = (const char *const *)g->paths;
        n = g->npaths;
        rc = dpas_netmodel_load_files(names, n, opt, &rq->net, err);
    } else {
        names = (const char *const *)rq->cal_origins;
        n = rq->ncal_texts;
        rc = dpas_netmodel_from_texts((const char *const *)rq->cal_texts, rq->cal_lens, names, n,
                                      opt, &rq->net, err);
    }
    *first = n ? names[0] : "calibration";
    return rc;
}

/* ... and the links a cost or a sweep takes from it (dpas_netmodel_links). */
static int load_calibration(dpas_request *rq, dpas_error *err)
{
    const char *first;
    int rc = read_calibration(rq, NULL, &first, err);
    const char *const *names = &first;
    if (rc)
        return rc;
    if (!rq->net->ncurves)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "calibration: no test to fit in %s",
                          names[0]);
    /* the links every front end takes from a calibration (dpas_netmodel_links); the intra-node
     * link stays the node's (a cost's hierarchical time pre-reduces over the node's own link) */
    dpas_link_choice lc;
    if ((rc = dpas_netmodel_links(rq->net, &lc, err)))
        return rc;
    rq->links.inter_bandwidth = lc.links.inter_bandwidth;
    rq->links.inter_latency = lc.links.inter_latency;
    /* the files in the model's order (by name), so the answer does not depend on theirs */
    dpas__buf b = {0};
    for (size_t i = 0; i < rq->net->nlogs; i++)
        dpas__buf_printf(&b, "%s%s", i ? ", " : "", rq->net->logs[i]->origin);
    return (rq->links_source = dpas__buf_finish(&b, err)) ? 0 : DPAS_ENOMEM;
}

/* A calibrate list (test, at, predict): the one list syntax (dpas__request_split: no empty item,
 * no item twice), each item read by `item` into elem bytes at out[k], and no two items of one
 * value under two spellings (1MiB,1048576; 32,4x8 is the library's at predict time). */
typedef int (*calib_item_fn)(const char *field, const char *text, void *out, dpas_error *err);

static int calib_list(dpas_request *rq, dpas_key k, size_t elem, calib_item_fn item, void **out,
                      size_t *nout, dpas_error *err)
{
    const char *list = text_of(rq, k), *name = dpas_key_name(k);
    char **items = NULL, q[96], r[96];
    size_t n = 0;
    int rc;
    *out = NULL, *nout = 0;
    if (!list)
        return 0;
    if ((rc = dpas__request_split(name, list, &items, &n, err)))
        return rc;
    unsigned char *v = calloc(n ? n : 1, elem);
    if (!v)
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        if ((rc = item(name, items[i], v + i * elem, err)))
            break;
        for (size_t j = 0; !rc && j < i; j++)
            if (!memcmp(v + j * elem, v + i * elem, elem))
                rc = dpas__fail(err, DPAS_EINVAL, name, "%s: %s is given twice (as %s)", name,
                                dpas__quote(items[i], q, sizeof q),
                                dpas__quote(items[j], r, sizeof r));
    }
    free(items[0]);
    free(items);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v, *nout = n;
    return 0;
}

static int size_item(const char *field, const char *text, void *out, dpas_error *err)
{
    return dpas_parse_size_bytes(field, text, out, err);
}

static int scale_item(const char *field, const char *text, void *out, dpas_error *err)
{
    dpas_scale sc;
    int rc = dpas_scale_parse(field, text, &sc, err);
    if (!rc)
        memcpy(out, &sc, sizeof sc); /* the whole struct (no padding in two int64_t) */
    return rc;
}

static int test_item(const char *field, const char *text, void *out, dpas_error *err)
{
    int64_t v;
    int rc = dpas_parse_int(field, text, &v, err);
    if (!rc && v < 1)
        return dpas__fail(err, DPAS_EINVAL, field, "%s: tests are numbered from 1, got %lld", field,
                          (long long)v);
    if (!rc)
        *(size_t *)out = (size_t)v;
    return rc;
}

/* calibrate: which tests to read (collective, ranks, gpus_per_node, test), what to predict (at,
 * predict), then the files, read and fitted once; no links (a calibration whose alpha-beta line
 * is undefined is still a calibration to show). */
static int calibrate_opts(dpas_request *rq, dpas_error *err)
{
    const char *coll = text_of(rq, DPAS_KEY_COLLECTIVE), *first;
    int64_t ranks = 0, per_node = 0;
    dpas_collective k;
    int rc;
    size_t ntests = 0;
    if ((coll && (rc = dpas_collective_parse(coll, &k, err))) ||
        (rc = count_opt(rq, DPAS_KEY_RANKS, &ranks, err)) ||
        (rc = count_opt(rq, DPAS_KEY_GPUS_PER_NODE, &per_node, err)) ||
        (rc = calib_list(rq, DPAS_KEY_TEST, sizeof *rq->tests, test_item, (void **)&rq->tests,
                         &ntests, err)) ||
        (rc = calib_list(rq, DPAS_KEY_AT, sizeof *rq->at, scale_item, (void **)&rq->at, &rq->nat,
                         err)) ||
        (rc = calib_list(rq, DPAS_KEY_PREDICT, sizeof *rq->sizes, size_item, (void **)&rq->sizes,
                         &rq->nsizes, err)))
        return rc;
    if (!rq->v[DPAS_KEY_CALIBRATION].npaths && !rq->ncal_texts)
        return dpas__request_missing(rq, DPAS_KEY_CALIBRATION, err,
                                     "calibrate takes one or more files of nccl-tests output");
    rq->calib = (dpas_calib_options){.collective = coll,
                                     .ranks = ranks,
                                     .per_node = per_node,
                                     .tests = rq->tests,
                                     .ntests = ntests};
    return read_calibration(rq, &rq->calib, &first, err);
}

static int network(dpas_request *rq, dpas_error *err)
{
    if (rq->analysis == DPAS_ANALYSIS_CALIBRATE)
        return calibrate_opts(rq, err);
    const char *model = text_of(rq, DPAS_KEY_NETWORK_MODEL);
    dpas_netmodel_kind kind = DPAS_NETMODEL_DEFAULT;
    int rc;
    if (rq->ncal_texts) {
        rq->opts.calibration = (const char *const *)rq->cal_origins;
        rq->opts.ncalibration = rq->ncal_texts;
    } else {
        rq->opts.calibration = (const char *const *)rq->v[DPAS_KEY_CALIBRATION].paths;
        rq->opts.ncalibration = rq->v[DPAS_KEY_CALIBRATION].npaths;
    }
    if (model && (rc = dpas_netmodel_kind_parse(model, &kind, err)))
        return rc;
    if (model && !rq->opts.ncalibration) {
        rq->missing = DPAS_KEY_CALIBRATION;
        return dpas__fail(err, DPAS_EINVAL, "network_model",
                          "network_model needs a calibration (nccl-tests output)");
    }
    if (!rq->opts.ncalibration)
        return 0;
    if ((rc = load_calibration(rq, err)))
        return rc;
    /* by default the measured curve at a measured scale and size, the nccl model elsewhere */
    rq->opts.cost.links = &rq->links;
    rq->opts.cost.links_source = rq->links_source;
    rq->opts.cost.net = rq->net;
    rq->opts.cost.net_kind = kind;
    rq->sweep.links = &rq->links;
    rq->sweep.net = rq->net;
    rq->sweep.net_kind = kind;
    return 0;
}

static int eval_attrs(dpas_request *rq, dpas_error *err)
{
    const char *list = text_of(rq, DPAS_KEY_ATTR);
    char **items, q[96];
    size_t n;
    int rc;
    if (!list || rq->analysis != DPAS_ANALYSIS_EVAL)
        return 0;
    if ((rc = dpas__request_split("attr", list, &items, &n, err)))
        return rc;
    for (size_t i = 0; !rc && i < n; i++) {
        int a = dpas_attr_from_name(items[i]);
        if (a >= 0) {
            rq->opts.attrs |= 1u << a;
            continue;
        }
        dpas__buf names = {0};
        for (int k = 0; k < DPAS_ATTR_COUNT; k++)
            dpas__buf_printf(&names, "%s%s", k ? ", " : "", dpas_attr_name((dpas_attr)k));
        rc = dpas__fail(err, DPAS_EINVAL, "attr", "attr: unknown attribute %s; expected one of %s",
                        dpas__quote(items[i], q, sizeof q), names.data ? names.data : "");
        free(names.data);
    }
    free(items[0]);
    free(items);
    return rc;
}

static int memory_opts(dpas_request *rq, dpas_error *err)
{
    int64_t zero = 0;
    int rc;
    const char *state = text_of(rq, DPAS_KEY_STATE);
    if (rq->analysis != DPAS_ANALYSIS_MEMORY)
        return 0;
    if ((rc = dpas_convention_find(state ? state : "zero16", &rq->opts.state, err)) ||
        (rc = count_opt(rq, DPAS_KEY_ZERO, &zero, err)))
        return rc;
    rq->opts.zero = (int)zero;
    return 0;
}

/* A key only some rules use is used by a rule of the request, or refused naming the key, the
 * rules given and the rules that would use it (issue 29: --convention byzfl with the median,
 * --iterations with Krum were ignored). The rules given: cost's list (none: every rule, which
 * uses every key), a sweep's fixed rule or the rules it varies (none: no rule uses it). */
static int rules_use_keys(dpas_request *rq, dpas_error *err)
{
    const char *list = text_of(rq, DPAS_KEY_RULE), *a = dpas_analysis_name(rq->analysis);
    if (rq->analysis != DPAS_ANALYSIS_COST && rq->analysis != DPAS_ANALYSIS_SWEEP &&
        rq->analysis != DPAS_ANALYSIS_PLOT && rq->analysis != DPAS_ANALYSIS_STEP)
        return 0;
    if (!list && (rq->analysis == DPAS_ANALYSIS_COST || rq->analysis == DPAS_ANALYSIS_STEP))
        return 0;
    char **items = NULL;
    size_t n = 0;
    int rc = list ? dpas__request_split("rule", list, &items, &n, err) : 0;
    for (int k = 0; !rc && k < DPAS_KEY_COUNT; k++) {
        if (!rq->v[k].set || !dpas_analysis_takes(rq->analysis, (dpas_key)k))
            continue;
        bool used = false, some = false;
        for (size_t i = 0; i < n && !used; i++) {
            const dpas_rule *r;
            if (!dpas_rule_find(items[i], NULL, &r, NULL)) {
                int u = dpas__key_used_by((dpas_key)k, r);
                used = u != 0;
                some = some || u >= 0;
            }
        }
        if (used || (!some && n) || dpas__key_used_by((dpas_key)k, dpas_rule_at(0)) < 0)
            continue;
        /* the rules that would use it, each name once (a rule of several conventions has a row
         * per convention) */
        dpas__buf b = {0};
        const char *last = NULL;
        for (size_t i = 0; i < dpas_rule_count(); i++) {
            const dpas_rule *r = dpas_rule_at(i);
            if (dpas__key_used_by((dpas_key)k, r) == 1 && (!last || strcmp(last, r->name))) {
                dpas__buf_printf(&b, "%s%s", last ? ", " : "", r->name);
                last = r->name;
            }
        }
        char *users = dpas__buf_finish(&b, err);
        if (!users)
            rc = DPAS_ENOMEM;
        else if (n)
            rc =
                dpas__fail(err, DPAS_EINVAL, dpas_key_name((dpas_key)k),
                           "%s is not used by %s %s (%s is used by %s)", dpas_key_name((dpas_key)k),
                           n > 1 ? "rules" : "rule", list, dpas_key_name((dpas_key)k), users);
        else
            rc = dpas__fail(err, DPAS_EINVAL, dpas_key_name((dpas_key)k),
                            "%s is not used by a %s without a rule (%s is used by %s)",
                            dpas_key_name((dpas_key)k), a, dpas_key_name((dpas_key)k), users);
        free(users);
    }
    if (items)
        free(items[0]);
    free(items);
    return rc;
}

/* Every option, in the order of the key table. */
static int options(dpas_request *rq, dpas_error *err)
{
    dpas_request_opts *o = &rq->opts;
    int64_t iterations = 0;
    int rc;
    if ((rq->analysis == DPAS_ANALYSIS_COST || rq->analysis == DPAS_ANALYSIS_STEP) &&
        ((rc = cost_rules(rq, err)) || (rc = cost_schedules(rq, err))))
        return rc;
    o->convention = text_of(rq, DPAS_KEY_CONVENTION);
    bool sweep = rq->analysis == DPAS_ANALYSIS_SWEEP || rq->analysis == DPAS_ANALYSIS_PLOT;
    /* a sweep's f (a list or a range) is its own (request_sweep.c) */
    if ((!sweep && (rc = count_opt(rq, DPAS_KEY_F, &o->f, err))) ||
        (rc = count_opt(rq, DPAS_KEY_N, &o->n, err)) ||
        (rc = count_opt(rq, DPAS_KEY_STEPS, &o->cost.steps, err)) ||
        (rc = count_opt(rq, DPAS_KEY_ITERATIONS, &iterations, err)))
        return rc;
    o->cost.f = o->f;
    o->cost.iterations = iterations;
    rq->sweep.iterations = iterations ? iterations : 10;
    /* rates, with their units (issue 29: they were read as counts, "3B" as 3e9 B/s and
     * "3 TB/s" refused) */
    const char *rate = text_of(rq, DPAS_KEY_COMPUTE_RATE);
    if (rate &&
        (rc = dpas_parse_rate("compute_rate", rate, DPAS_RATE_FLOPS, &o->cost.compute_rate, err)))
        return rc;
    const char *bw = text_of(rq, DPAS_KEY_MEMORY_BANDWIDTH);
    if (bw && (rc = dpas_parse_rate("memory_bandwidth", bw, DPAS_RATE_BYTES,
                                    &o->cost.memory_bandwidth, err)))
        return rc;
    if ((rc = network(rq, err)) || (rc = memory_opts(rq, err)) || (rc = dpas__step_opts(rq, err)) ||
        (rc = eval_attrs(rq, err)) || (rc = switch_opt(rq, DPAS_KEY_EXPLAIN, &o->explain, err)))
        return rc;
    o->title = text_of(rq, DPAS_KEY_TITLE);
    return 0;
}

int dpas_request_resolve(dpas_request *rq, const dpas_registry *reg, dpas_error *err)
{
    int rc;
    if (rq->resolved)
        return dpas__fail(err, DPAS_EINVAL, "request", "the request is resolved already");
    rq->reg = reg;
    rq->missing = -1;
    if ((rc = check_keys(rq, err)) || (rc = options(rq, err)))
        return rc;
    switch (rq->analysis) {
    case DPAS_ANALYSIS_RULES:
    case DPAS_ANALYSIS_CALIBRATE: break;
    case DPAS_ANALYSIS_SWEEP:
    case DPAS_ANALYSIS_PLOT:
        if ((rc = dpas__request_sweep(rq, err)))
            return rc;
        break;
    default:
        /* validated by the resolution: evaluated here without validating again */
        if ((rc = dpas__request_scenario(rq, NULL, err)) ||
            (rc = dpas__evaluate(&rq->scenario, &rq->report, err)))
            return rc;
        break;
    }
    if ((rc = rules_use_keys(rq, err)))
        return rc;
    rq->resolved = true;
    return 0;
}

/* ---- the typed request ------------------------------------------------------------------------- */

dpas_analysis dpas_request_analysis(const dpas_request *rq) { return rq->analysis; }

const dpas_scenario *dpas_request_scenario(const dpas_request *rq)
{
    return rq && rq->resolved ? &rq->scenario : NULL;
}

const dpas_report *dpas_request_report(const dpas_request *rq)
{
    return rq && rq->resolved ? &rq->report : NULL;
}

const char *dpas_request_label(const dpas_request *rq) { return rq ? rq->label : NULL; }

const dpas_request_opts *dpas_request_opts_of(const dpas_request *rq)
{
    return rq && rq->resolved ? &rq->opts : NULL;
}

const dpas_sweep *dpas_request_sweep(const dpas_request *rq)
{
    return rq && rq->resolved &&
                   (rq->analysis == DPAS_ANALYSIS_SWEEP || rq->analysis == DPAS_ANALYSIS_PLOT)
               ? &rq->sweep
               : NULL;
}
