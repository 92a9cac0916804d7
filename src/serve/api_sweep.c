/* /api/v1/sweep and /api/v1/plot.svg: the library's sweep analysis (dpas/sweep.h), set up as
 * `dpas sweep` sets it up from its flags, its rows through the library's table writer (the
 * CLI's `-o json`), its plot through dpas_plot_svg (the CLI's `--plot FILE.svg`). A request may
 * ask for at most SRV_MAX_SWEEP_POINTS points; points whose inputs break a rule are left out and
 * counted in an X-Dpas-Warning header (the CLI counts them on stderr). */
#include "serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_MAX_SERIES 64 /* as the CLI: one series per value of the second axis */

/* The query key of each sweep input (the workload also answers to "model"). */
static const char *const sweep_key[DPAS_SWEEP_INPUT_COUNT] = {"dp_degree",
                                                              "parameters",
                                                              "workload",
                                                              "fleet",
                                                              "gradient_bytes_per_param",
                                                              "checkpoint_bytes_per_param",
                                                              "rule",
                                                              "schedule"};
/* The scenario input behind each sweep input, or -1 (rule, schedule). */
static const int sweep_input[DPAS_SWEEP_INPUT_COUNT] = {DPAS_INPUT_DP_DEGREE,
                                                        DPAS_INPUT_PARAMETERS,
                                                        DPAS_INPUT_WORKLOAD,
                                                        DPAS_INPUT_FLEET,
                                                        DPAS_INPUT_GRADIENT_WIDTH,
                                                        DPAS_INPUT_CHECKPOINT_WIDTH,
                                                        -1,
                                                        -1};

typedef struct sweep_req {
    dpas_sweep sw;
    dpas_spec *spec;
    srv_calibration cal;
    char *range[2]; /* dp_degree and parameters ranges with a step's '+' restored */
    char *placeholder[DPAS_INPUT_COUNT];
    const char *text[DPAS_SWEEP_INPUT_COUNT];
    const char *key[DPAS_SWEEP_INPUT_COUNT];
    size_t n0, n1;
} sweep_req;

static void sweep_free(sweep_req *x)
{
    dpas_sweep_axis_free(&x->sw.axes[0]);
    dpas_sweep_axis_free(&x->sw.axes[1]);
    srv_calibration_free(&x->cal);
    free(x->range[0]), free(x->range[1]);
    for (int k = 0; k < DPAS_INPUT_COUNT; k++)
        free(x->placeholder[k]);
    dpas_spec_free(x->spec);
}

static int fail_err(srv_response *r, dpas_error *err)
{
    srv_error(r, srv_status_of(err->code), err);
    return -1;
}

/* The metrics: attr=, or the CLI's defaults; each with the schedule and rule it needs. */
static int metrics(srv_request *rq, srv_response *r, sweep_req *x, int has_sched, int has_rule)
{
    /* the metrics: attr=, or the CLI's defaults */
    const char *attr = srv_query_get(rq->query, "attr");
    if (!attr) {
        dpas_sweep_default_metrics(&x->sw, has_sched, has_rule);
    } else {
        for (const char *p = attr;;) {
            size_t l = strcspn(p, ",");
            char name[64], q[96];
            int m = -1;
            if (l && l < sizeof name) {
                memcpy(name, p, l);
                name[l] = '\0';
                m = dpas_metric_from_name(name);
            }
            if (m < 0) {
                snprintf(name, sizeof name, "%.*s", (int)(l < 60 ? l : 60), p);
                srv_fail(r, 400, DPAS_EINVAL, "attr", "attr: unknown metric %s",
                         dpas_quote(name, q, sizeof q));
                return -1;
            }
            for (int k = 0; k < x->sw.nmetrics; k++)
                if (x->sw.metrics[k] == m) {
                    srv_fail(r, 400, DPAS_EINVAL, "attr", "attr: %s is given twice", name);
                    return -1;
                }
            if (x->sw.nmetrics == DPAS_METRIC_COUNT) {
                srv_fail(r, 400, DPAS_EINVAL, "attr", "attr lists too many metrics");
                return -1;
            }
            x->sw.metrics[x->sw.nmetrics++] = m;
            if (!p[l])
                break;
            p += l + 1;
        }
    }
    for (int i = 0; i < x->sw.nmetrics; i++) {
        int m = x->sw.metrics[i];
        if (dpas_metric_needs_schedule(m) && !has_sched) {
            srv_fail(r, 400, DPAS_EINVAL, "attr", "%s needs a schedule", dpas_metric_name(m));
            return -1;
        }
        if (dpas_metric_needs_rule(m) && !has_rule) {
            srv_fail(r, 400, DPAS_EINVAL, "attr", "%s needs a rule", dpas_metric_name(m));
            return -1;
        }
    }
    return 0;
}

/* The sweep of a request: axes, fixed inputs, rule, schedule and metrics, checked, within the
 * server's cap on points. 0, or -1 with the error response filled. */
static int setup(srv_request *rq, srv_response *r, sweep_req *x)
{
    dpas_error err;
    memset(&err, 0, sizeof err);
    x->sw.schedule = -1;
    x->sw.iterations = 10;
    if (srv_opt_int(rq, r, "iterations", 1, INT64_MAX, &x->sw.iterations))
        return -1;
    const char *conv = srv_query_get(rq->query, "convention");
    for (int k = 0; k < DPAS_SWEEP_INPUT_COUNT; k++) {
        x->key[k] = sweep_key[k];
        x->text[k] = srv_query_get(rq->query, sweep_key[k]);
        if (k == DPAS_SWEEP_WORKLOAD && !x->text[k] &&
            (x->text[k] = srv_query_get(rq->query, "model")))
            x->key[k] = "model";
        /* '+' in a query is a space (form encoding): "dp_degree=8..64+8" arrives as
         * "8..64 8". A space can stand nowhere in a range and '+' only before its step, so
         * a range's one space after ".." is read as the '+' it was. */
        const char *v = x->text[k], *dots = v ? strstr(v, "..") : NULL;
        if (dots && (k == DPAS_SWEEP_DP_DEGREE || k == DPAS_SWEEP_PARAMETERS) &&
            strchr(dots, ' ') && strchr(dots, ' ') == strrchr(v, ' ')) {
            char **copy = &x->range[k == DPAS_SWEEP_PARAMETERS];
            if (!(*copy = strdup(v))) {
                srv_fail(r, 500, DPAS_ENOMEM, x->key[k], "out of memory");
                return -1;
            }
            *strchr(*copy, ' ') = '+';
            x->text[k] = *copy;
        }
    }
    /* which inputs vary (at most two); the scenario is resolved with each varied input at a
     * value valid for any point: a count at 1, a name at its first value (as the CLI) */
    for (int k = 0; k < DPAS_SWEEP_INPUT_COUNT; k++) {
        const char *v = x->text[k];
        if (!v)
            continue;
        int varies = dpas_sweep_text_varies((dpas_sweep_input)k, v);
        if (varies) {
            if (x->sw.naxes == 2) {
                srv_fail(r, 400, DPAS_EINVAL, x->key[k],
                         "a sweep varies at most two inputs; %s, %s and %s all vary",
                         dpas_sweep_input_name(x->sw.axes[0].input),
                         dpas_sweep_input_name(x->sw.axes[1].input),
                         dpas_sweep_input_name((dpas_sweep_input)k));
                return -1;
            }
            x->sw.axes[x->sw.naxes++].input = (dpas_sweep_input)k;
        }
        int in = sweep_input[k];
        if (in < 0)
            continue;
        if (varies && (k == DPAS_SWEEP_DP_DEGREE || k == DPAS_SWEEP_PARAMETERS))
            x->placeholder[in] = strdup("1");
        else
            x->placeholder[in] = strndup(v, strcspn(v, ","));
        if (!x->placeholder[in]) {
            srv_fail(r, 500, DPAS_ENOMEM, x->key[k], "out of memory");
            return -1;
        }
    }
    if (!x->sw.naxes) {
        srv_fail(r, 400, DPAS_EINVAL, "dp_degree",
                 "nothing varies: give a list (dp_degree=8,16,32) or a range (dp_degree=2..4096) "
                 "for one or two inputs");
        return -1;
    }
    /* a fixed dp_degree is checked point by point, not against the first value of a varied
     * fleet or workload (as the CLI: the order of a list must not decide which points are kept) */
    const char *dp = x->text[DPAS_SWEEP_DP_DEGREE];
    int fixed_dp = dp && !dpas_sweep_text_varies(DPAS_SWEEP_DP_DEGREE, dp);
    int64_t dp_value = 0;
    if (fixed_dp) {
        if (dpas_parse_int("dp_degree", dp, &dp_value, &err))
            return fail_err(r, &err);
        free(x->placeholder[DPAS_INPUT_DP_DEGREE]);
        if (!(x->placeholder[DPAS_INPUT_DP_DEGREE] = strdup("1"))) {
            srv_fail(r, 500, DPAS_ENOMEM, "dp_degree", "out of memory");
            return -1;
        }
    }
    if (srv_calibration_load(rq, r, &x->cal))
        return -1;
    if (x->cal.net) /* as --calibration FILE [--network-model M] */
        x->sw.links = &x->cal.links, x->sw.net = x->cal.net, x->sw.net_kind = x->cal.kind;
    const char *label = NULL;
    if (!(x->spec = dpas_spec_new())) {
        srv_fail(r, 500, DPAS_ENOMEM, "", "out of memory");
        return -1;
    }
    if (srv_load_scenario(rq, (const char *const *)x->placeholder, x->spec, &x->sw.base, &label,
                          &err))
        return fail_err(r, &err);
    if (fixed_dp)
        x->sw.base.dp_degree = dp_value;
    for (int i = 0; i < x->sw.naxes; i++) {
        dpas_sweep_input in = x->sw.axes[i].input;
        if (dpas_sweep_axis_parse(in, x->text[in], x->key[in], rq->reg, conv, &x->sw.axes[i], &err))
            return fail_err(r, &err);
    }
    const char *rule = x->text[DPAS_SWEEP_RULE], *sched = x->text[DPAS_SWEEP_SCHEDULE];
    if (rule && !dpas_sweep_text_varies(DPAS_SWEEP_RULE, rule) &&
        dpas_rule_select(rule, conv, &x->sw.rule, &err))
        return fail_err(r, &err);
    if (conv && !rule) { /* a convention with no rule to apply to is still checked */
        const dpas_rule *any;
        if (dpas_rule_select("krum", conv, &any, &err))
            return fail_err(r, &err);
    }
    if (sched && !dpas_sweep_text_varies(DPAS_SWEEP_SCHEDULE, sched)) {
        x->sw.schedule = dpas_schedule_from_name(sched);
        if (x->sw.schedule < 0) {
            char q[96];
            srv_fail(r, 400, DPAS_EINVAL, "schedule",
                     "schedule: unknown schedule %s; expected allreduce, allgather, ps, "
                     "ps_separate, sharded, sharded_distance or innetwork",
                     dpas_quote(sched, q, sizeof q));
            return -1;
        }
    }
    if (metrics(rq, r, x, sched != NULL, rule != NULL))
        return -1;
    if (dpas_sweep_check(&x->sw, &err))
        return fail_err(r, &err);
    x->n0 = x->sw.axes[0].n;
    x->n1 = x->sw.naxes > 1 ? x->sw.axes[1].n : 1;
    if (x->n1 && x->n0 > SRV_MAX_SWEEP_POINTS / x->n1) {
        srv_fail(r, 422, DPAS_ERANGE, dpas_sweep_input_name(x->sw.axes[0].input),
                 "the sweep has %llu points, over the server's limit of %d per request "
                 "(dpas sweep on the command line has no such limit)",
                 (unsigned long long)x->n0 * x->n1, SRV_MAX_SWEEP_POINTS);
        return -1;
    }
    return 0;
}

/* Points left out, as a header (the body stays the CLI's JSON). */
static void note_skipped(srv_response *r, size_t skipped, size_t total, const char *first)
{
    if (!skipped)
        return;
    char t[sizeof r->warning];
    snprintf(t, sizeof t, "%zu of %zu points left out; the first: %s", skipped, total, first);
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)t; *p && o + 1 < sizeof r->warning; p++)
        r->warning[o++] = *p >= 0x20 && *p < 0x7f ? (char)*p : '?';
    r->warning[o] = '\0';
}

typedef struct sink_buf {
    char *data;
    size_t len, cap;
} sink_buf;

static int sink(void *ctx, const char *data, size_t len)
{
    sink_buf *b = ctx;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return -1;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

void srv_api_sweep(srv_request *rq, srv_response *r)
{
    sweep_req x;
    memset(&x, 0, sizeof x);
    if (setup(rq, r, &x)) {
        sweep_free(&x);
        return;
    }
    size_t nc = (size_t)(x.sw.naxes + x.sw.nmetrics), shown = 0, skipped = 0;
    dpas_column cols[2 + DPAS_METRIC_COUNT];
    dpas_cell cells[2 + DPAS_METRIC_COUNT];
    dpas_sweep_columns(&x.sw, cols);
    dpas_writer_opts wo = {.format = rq->format, .stream = 1};
    dpas_writer *w = NULL;
    dpas_error err, pe;
    sink_buf b = {0};
    char first[400] = "";
    int rc = 0;
    memset(&err, 0, sizeof err);
    for (size_t i0 = 0; !rc && i0 < x.n0; i0++)
        for (size_t i1 = 0; !rc && i1 < x.n1; i1++) {
            if (dpas_sweep_point(&x.sw, i0, i1, cells, -1, NULL, &pe)) {
                if (!skipped++)
                    snprintf(first, sizeof first, "%s", pe.message);
                continue;
            }
            if (!w && (rc = dpas_writer_new(cols, nc, &wo, sink, &b, &w, &err)))
                break;
            rc = dpas_writer_row(w, cells, &err);
            shown++;
        }
    if (!rc && !w) {
        srv_fail(r, 400, DPAS_EINVAL, dpas_sweep_input_name(x.sw.axes[0].input),
                 "every point of the sweep was left out; the first: %s", first);
    } else if (rc || (rc = dpas_writer_end(w, &err)) ||
               (rq->format == DPAS_FORMAT_JSON && sink(&b, "\n", 1))) {
        if (!err.code)
            err.code = DPAS_ENOMEM, snprintf(err.message, sizeof err.message, "out of memory");
        srv_error(r, srv_status_of(err.code), &err);
    } else {
        r->status = 200;
        r->type = "application/json; charset=utf-8";
        r->body = b.data;
        r->len = b.len;
        r->free_body = free;
        b.data = NULL;
        note_skipped(r, skipped, skipped + shown, first);
    }
    free(b.data);
    dpas_writer_free(w);
    sweep_free(&x);
}

void srv_api_plot(srv_request *rq, srv_response *r)
{
    sweep_req x;
    memset(&x, 0, sizeof x);
    double *px = NULL, *py = NULL;
    dpas_series *ser = NULL;
    char **names = NULL;
    if (setup(rq, r, &x))
        goto done;
    int ym = x.sw.metrics[0];
    const char *yv = srv_query_get(rq->query, "y");
    if (yv) {
        ym = dpas_metric_from_name(yv);
        int listed = 0;
        for (int i = 0; i < x.sw.nmetrics; i++)
            listed |= x.sw.metrics[i] == ym;
        if (ym < 0 || !listed) {
            char q[96];
            srv_fail(r, 400, DPAS_EINVAL, "y", "y must be one of the metrics shown (attr), got %s",
                     dpas_quote(yv, q, sizeof q));
            goto done;
        }
    }
    dpas_sweep_input x0 = x.sw.axes[0].input;
    if (x0 != DPAS_SWEEP_DP_DEGREE && x0 != DPAS_SWEEP_PARAMETERS) {
        srv_fail(r, 400, DPAS_EINVAL, dpas_sweep_input_name(x0),
                 "a plot needs a numeric first varied input (dp_degree or parameters), got %s",
                 dpas_sweep_input_name(x0));
        goto done;
    }
    if (x.n1 > PLOT_MAX_SERIES) {
        srv_fail(r, 400, DPAS_EINVAL, dpas_sweep_input_name(x.sw.axes[1].input),
                 "%zu series are too many to plot (at most %d values of %s)", x.n1, PLOT_MAX_SERIES,
                 dpas_sweep_input_name(x.sw.axes[1].input));
        goto done;
    }
    px = malloc(x.n0 * x.n1 * sizeof *px);
    py = malloc(x.n0 * x.n1 * sizeof *py);
    ser = calloc(x.n1, sizeof *ser);
    names = calloc(x.n1, sizeof *names);
    dpas_cell cells[2 + DPAS_METRIC_COUNT];
    if (!px || !py || !ser || !names) {
        srv_fail(r, 500, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    size_t kept = 0, skipped = 0;
    char first[400] = "";
    dpas_error pe;
    for (size_t i1 = 0; i1 < x.n1; i1++) {
        for (size_t i0 = 0; i0 < x.n0; i0++) {
            size_t k = i1 * x.n0 + i0;
            px[k] = dpas_sweep_axis_x(&x.sw.axes[0], i0);
            if (dpas_sweep_point(&x.sw, i0, i1, cells, ym, &py[k], &pe)) {
                py[k] = NAN;
                if (!skipped++)
                    snprintf(first, sizeof first, "%s", pe.message);
            } else {
                kept++;
            }
        }
        if (x.sw.naxes > 1) {
            const dpas_sweep_axis *a1 = &x.sw.axes[1];
            char num[32];
            if (a1->label)
                names[i1] = strdup(a1->label[i1]);
            else if (a1->input == DPAS_SWEEP_DP_DEGREE)
                snprintf(num, sizeof num, "%lld", (long long)dpas_sweep_axis_i(a1, i1)),
                    names[i1] = strdup(num);
            else
                snprintf(num, sizeof num, "%llu", (unsigned long long)dpas_sweep_axis_u(a1, i1)),
                    names[i1] = strdup(num);
            if (!names[i1]) {
                srv_fail(r, 500, DPAS_ENOMEM, "", "out of memory");
                goto done;
            }
        }
        ser[i1] = (dpas_series){names[i1], px + i1 * x.n0, py + i1 * x.n0, x.n0};
    }
    if (!kept) {
        srv_fail(r, 400, DPAS_EINVAL, dpas_sweep_input_name(x0),
                 "every point of the sweep was left out; the first: %s", first);
        goto done;
    }
    /* the plot's axes as `dpas sweep --plot` draws them */
    double ylo = INFINITY, yhi = 0;
    for (size_t i = 0; i < x.n0 * x.n1; i++)
        if (isfinite(py[i]) && py[i] > 0)
            ylo = fmin(ylo, py[i]), yhi = fmax(yhi, py[i]);
    const char *xn = dpas_sweep_input_name(x0), *yn = dpas_metric_name(ym);
    char title[160];
    snprintf(title, sizeof title, "%s vs %s", yn, xn);
    const char *tv = srv_query_get(rq->query, "title");
    dpas_plot_spec spec = {.title = tv ? tv : title,
                           .xlabel = xn,
                           .ylabel = yn,
                           .xlog =
                               x.sw.axes[0].geometric ? (x0 == DPAS_SWEEP_DP_DEGREE ? 2 : 10) : 0,
                           .ylog = yhi > 0 && yhi / ylo > 100 ? 10 : 0,
                           .xunit = DPAS_AXIS_PLAIN,
                           .yunit = dpas_metric_axis_unit(ym)};
    dpas_error err;
    memset(&err, 0, sizeof err);
    char *svg = dpas_plot_svg(&spec, ser, x.n1, &err);
    if (!svg) {
        srv_error(r, srv_status_of(err.code), &err);
        goto done;
    }
    r->status = 200;
    r->type = "image/svg+xml";
    r->body = svg;
    r->len = strlen(svg);
    r->free_body = dpas_free;
    note_skipped(r, skipped, skipped + kept, first);
done:
    for (size_t k = 0; names && k < x.n1; k++)
        free(names[k]);
    free(names);
    free(px), free(py), free(ser);
    sweep_free(&x);
}
