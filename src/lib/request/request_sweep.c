/* SPDX-License-Identifier: Apache-2.0 */
/* A sweep or plot request: which keys vary (a list or a range; at most three), the scenario of
 * the inputs that do not vary, the axes, the fixed rule and schedule, the metrics and the plot's
 * metric. What `dpas sweep`, /api/v1/sweep and the Python binding used to set up each on its
 * own. */
#include "request_inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The key a sweep's axis varies (sweep.c's one table). */
#define axis_key dpas__sweep_input_key

/* Which keys vary; the other keys of a varied fleet cannot be given with it. */
static int find_axes(dpas_request *rq, dpas_error *err)
{
    dpas_sweep *sw = &rq->sweep;
    /* the numbers first (a plot's x is the first axis), f after dp_degree and parameters */
    static const dpas_sweep_input order[DPAS_SWEEP_INPUT_COUNT] = {
        DPAS_SWEEP_DP_DEGREE,        DPAS_SWEEP_PARAMETERS, DPAS_SWEEP_F,
        DPAS_SWEEP_WORKLOAD,         DPAS_SWEEP_FLEET,      DPAS_SWEEP_GRADIENT_WIDTH,
        DPAS_SWEEP_CHECKPOINT_WIDTH, DPAS_SWEEP_RULE,       DPAS_SWEEP_SCHEDULE};
    for (int o = 0; o < DPAS_SWEEP_INPUT_COUNT; o++) {
        dpas_sweep_input i = order[o];
        const char *t = text_of(rq, axis_key(i));
        if (!t || !dpas_sweep_text_varies((dpas_sweep_input)i, t))
            continue;
        if (sw->naxes == DPAS_SWEEP_MAX_AXES)
            return dpas__fail(err, DPAS_EINVAL, dpas_key_name(axis_key(i)),
                              "a sweep varies at most three inputs; %s, %s, %s and %s all vary",
                              dpas_key_name(axis_key(sw->axes[0].input)),
                              dpas_key_name(axis_key(sw->axes[1].input)),
                              dpas_key_name(axis_key(sw->axes[2].input)),
                              dpas_key_name(axis_key(i)));
        sw->axes[sw->naxes++].input = i;
    }
    if (!sw->naxes) {
        dpas__buf b = {0};
        for (int i = 0; i < DPAS_SWEEP_INPUT_COUNT; i++)
            dpas__buf_list_item(&b, (size_t)i, DPAS_SWEEP_INPUT_COUNT, dpas_key_name(axis_key(i)));
        int rc = dpas__fail(err, DPAS_EINVAL, "axes",
                            "nothing varies: give a list (8,16,32), or for a number a range "
                            "(2..4096), to one, two or three of %s",
                            b.data ? b.data : "");
        free(b.data);
        return rc;
    }
    static const dpas_key parts[] = {DPAS_KEY_NODES, DPAS_KEY_ACCELERATORS_PER_NODE, DPAS_KEY_NODE,
                                     DPAS_KEY_FABRIC, DPAS_KEY_FLEET_NAME};
    for (int a = 0; a < sw->naxes; a++)
        for (size_t i = 0; sw->axes[a].input == DPAS_SWEEP_FLEET && i < 5; i++)
            if (rq->v[parts[i]].set) /* overridden at every point: given and never used */
                return dpas__fail(err, DPAS_EINVAL, dpas_key_name(parts[i]),
                                  "%s cannot be given with a varied fleet: each fleet has its "
                                  "own (give one fleet, or drop %s)",
                                  dpas_key_name(parts[i]), dpas_key_name(parts[i]));
    return 0;
}

/* The scenario with each varied input at a value valid for any point (a count at 1, a name at
 * its first value). A fixed dp_degree is checked point by point, not against the first value of
 * a varied fleet or workload: the order of a list must not decide which points are kept. */
static int base(dpas_request *rq, dpas_error *err)
{
    dpas_sweep *sw = &rq->sweep;
    char **ph = rq->placeholder;
    int rc;
    for (int a = 0; a < sw->naxes; a++) {
        dpas_key k = axis_key(sw->axes[a].input);
        if (!(dpas_key_flags(k) & DPAS_KEY_INPUT))
            continue; /* rule, schedule */
        const char *t = text_of(rq, k);
        bool number = k == DPAS_KEY_DP_DEGREE || k == DPAS_KEY_PARAMETERS;
        if (!(ph[k] = number ? strdup("1") : strndup(t, strcspn(t, ","))))
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    /* f given and no dp_degree: each point's N is min_n(f) of its rule (axes), none is needed */
    if (text_of(rq, DPAS_KEY_F) && !rq->v[DPAS_KEY_DP_DEGREE].set && !ph[DPAS_KEY_DP_DEGREE] &&
        !(ph[DPAS_KEY_DP_DEGREE] = strdup("1")))
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    const char *dp = text_of(rq, DPAS_KEY_DP_DEGREE);
    int64_t dp_value = 0;
    bool fixed_dp = dp && !ph[DPAS_KEY_DP_DEGREE];
    if (fixed_dp) {
        if ((rc = dpas_parse_int("dp_degree", dp, &dp_value, err)))
            return rc;
        if (!(ph[DPAS_KEY_DP_DEGREE] = strdup("1")))
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    if ((rc = dpas__request_scenario(rq, ph, err)))
        return rc;
    sw->base = rq->scenario;
    if (fixed_dp)
        sw->base.dp_degree = rq->scenario.dp_degree = dp_value;
    return 0;
}

/* The axes' values, the rule and schedule that do not vary. */
static int axes(dpas_request *rq, dpas_error *err)
{
    dpas_sweep *sw = &rq->sweep;
    const char *conv = text_of(rq, DPAS_KEY_CONVENTION);
    int rc;
    for (int a = 0; a < sw->naxes; a++) {
        dpas_sweep_input in = sw->axes[a].input;
        if ((rc = dpas_sweep_axis_parse(in, text_of(rq, axis_key(in)), dpas_key_name(axis_key(in)),
                                        rq->reg, conv, &sw->axes[a], err)))
            return rc;
    }
    const char *rule = text_of(rq, DPAS_KEY_RULE), *sched = text_of(rq, DPAS_KEY_SCHEDULE);
    if (rule && !dpas_sweep_text_varies(DPAS_SWEEP_RULE, rule) &&
        (rc = dpas_rule_select(rule, conv, &sw->rule, err)))
        return rc;
    if (conv && !rule && (rc = dpas__convention_check(conv, false, err)))
        return rc; /* checked, with no rule to apply it to */
    /* f: fixed or varied; with no dp_degree given, each point's N is min_n(f) of its rule */
    const char *f = text_of(rq, DPAS_KEY_F);
    if (f && !dpas_sweep_text_varies(DPAS_SWEEP_F, f)) {
        sw->has_f = 1;
        if ((rc = dpas_parse_int("f", f, &sw->f, err)))
            return rc;
        if (sw->f < 0)
            return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)sw->f);
    }
    sw->n_from_f = f && !rq->v[DPAS_KEY_DP_DEGREE].set;
    dpas_schedule_id id;
    if (sched && !dpas_sweep_text_varies(DPAS_SWEEP_SCHEDULE, sched)) {
        if ((rc = dpas_schedule_parse("schedule", sched, &id, err)))
            return rc;
        sw->schedule = (int)id;
    }
    return 0;
}

/* attr: the metrics, or the defaults; each with the schedule and the rule it needs. */
static int metrics(dpas_request *rq, dpas_error *err)
{
    dpas_sweep *sw = &rq->sweep;
    const char *list = text_of(rq, DPAS_KEY_ATTR);
    bool sched = rq->v[DPAS_KEY_SCHEDULE].set, rule = rq->v[DPAS_KEY_RULE].set;
    char q[96];
    if (!list) {
        dpas_sweep_default_metrics(sw, sched, rule);
    } else {
        char **items = NULL;
        size_t n = 0;
        int rc = dpas__request_split("attr", list, &items, &n, err);
        for (size_t i = 0; !rc && i < n; i++) {
            int m = dpas_metric_from_name(items[i]);
            bool dp_varies = false;
            for (int a = 0; a < sw->naxes; a++)
                dp_varies |= sw->axes[a].input == DPAS_SWEEP_DP_DEGREE;
            if (m < 0)
                rc = dpas__fail(err, DPAS_EINVAL, "attr", "attr: unknown metric %s",
                                dpas__quote(items[i], q, sizeof q));
            else if (m == DPAS_METRIC_N && dp_varies)
                rc = dpas__fail(err, DPAS_EINVAL, "attr",
                                "attr: dp_degree varies: it is a column already");
            else
                sw->metrics[sw->nmetrics++] = m; /* no name twice: at most one of each */
        }
        if (items)
            free(items[0]), free(items);
        if (rc)
            return rc;
        bool shown = false; /* N follows f: its column is shown, first */
        for (int i = 0; i < sw->nmetrics; i++)
            shown |= sw->metrics[i] == DPAS_METRIC_N;
        if (sw->n_from_f && !shown && sw->nmetrics < DPAS_METRIC_COUNT) {
            memmove(sw->metrics + 1, sw->metrics, (size_t)sw->nmetrics * sizeof *sw->metrics);
            sw->metrics[0] = DPAS_METRIC_N, sw->nmetrics++;
        }
    }
    if (text_of(rq, DPAS_KEY_F) && !rule) /* before what its N needs */
        return dpas__request_missing(rq, DPAS_KEY_RULE, err,
                                     "f needs a rule: its N (min_n) and whether a point "
                                     "tolerates f are the rule's");
    for (int i = 0; i < sw->nmetrics; i++) {
        int m = sw->metrics[i];
        if (dpas_metric_needs_schedule(m) && !sched)
            return dpas__request_missing(rq, DPAS_KEY_SCHEDULE, err, "%s needs a schedule",
                                         dpas_metric_name(m));
        if (dpas_metric_needs_rule(m) && !rule)
            return dpas__request_missing(rq, DPAS_KEY_RULE, err, "%s needs a rule",
                                         dpas_metric_name(m));
        if (m >= DPAS_METRIC_TIME_BASIS && m <= DPAS_METRIC_TIME_BAND_HIGH_S && !sw->net)
            return dpas__request_missing(rq, DPAS_KEY_CALIBRATION, err,
                                         "%s needs a calibration (nccl-tests output)",
                                         dpas_metric_name(m));
    }
    return dpas_sweep_check(sw, err);
}

/* The plot: its metric, one of those shown; a numeric first axis. */
static int plot(dpas_request *rq, dpas_error *err)
{
    dpas_sweep *sw = &rq->sweep;
    const char *y = text_of(rq, DPAS_KEY_Y);
    char q[96];
    /* the first metric asked for: not a word (the time's basis or model), not the N that
     * follows f */
    int first = 0;
    while (first + 1 < sw->nmetrics && (sw->metrics[first] == DPAS_METRIC_TIME_BASIS ||
                                        sw->metrics[first] == DPAS_METRIC_TIME_MODEL ||
                                        (sw->n_from_f && sw->metrics[first] == DPAS_METRIC_N)))
        first++;
    rq->opts.y = sw->metrics[first];
    if (!y && (rq->opts.y == DPAS_METRIC_TIME_BASIS || rq->opts.y == DPAS_METRIC_TIME_MODEL))
        return dpas__fail(err, DPAS_EINVAL, "y", "y must be a number; %s is a word",
                          dpas_metric_name(rq->opts.y));
    if (y) {
        int m = dpas_metric_from_name(y);
        bool listed = false;
        for (int i = 0; i < sw->nmetrics; i++)
            listed |= sw->metrics[i] == m;
        if (m < 0 || !listed)
            return dpas__fail(err, DPAS_EINVAL, "y",
                              "y must be one of the metrics shown (attr), got %s",
                              dpas__quote(y, q, sizeof q));
        if (m == DPAS_METRIC_TIME_BASIS || m == DPAS_METRIC_TIME_MODEL)
            return dpas__fail(err, DPAS_EINVAL, "y", "y must be a number; %s is a word",
                              dpas_metric_name(m));
        rq->opts.y = m;
    }
    dpas_sweep_input x = sw->axes[0].input;
    if (x != DPAS_SWEEP_DP_DEGREE && x != DPAS_SWEEP_PARAMETERS && x != DPAS_SWEEP_F)
        return dpas__fail(err, DPAS_EINVAL, dpas_key_name(axis_key(x)),
                          "a plot needs a numeric first varied input (dp_degree, parameters or "
                          "f), got %s",
                          dpas_key_name(axis_key(x)));
    return 0;
}

int dpas__request_sweep(dpas_request *rq, dpas_error *err)
{
    int rc;
    if ((rc = find_axes(rq, err)) || (rc = base(rq, err)) || (rc = axes(rq, err)) ||
        (rc = metrics(rq, err)))
        return rc;
    return rq->analysis == DPAS_ANALYSIS_PLOT ? plot(rq, err) : 0;
}
