/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/sweep.h — vary one or two inputs over lists or ranges; every point a typed row.
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_SWEEP_H
#define DPAS_SWEEP_H

#include "dpas/cost.h"
#include "dpas/plot.h"
#include "dpas/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The inputs a sweep can vary. */
typedef enum dpas_sweep_input {
    DPAS_SWEEP_DP_DEGREE = 0, /* ranges: A..B (doubling), A..B+S (step), A..B*F (factor); lists */
    DPAS_SWEEP_PARAMETERS,    /* the same, counts with suffixes (7B) */
    DPAS_SWEEP_WORKLOAD,      /* lists of registry models */
    DPAS_SWEEP_FLEET,         /* lists of registry fleets */
    DPAS_SWEEP_GRADIENT_WIDTH,
    DPAS_SWEEP_CHECKPOINT_WIDTH,
    DPAS_SWEEP_RULE,
    DPAS_SWEEP_SCHEDULE,
    DPAS_SWEEP_F, /* Byzantine replicas: lists and ranges as dp_degree's (a step range may start at
                     0); with no dp_degree given, each point's N is min_n(f) of its rule */
    DPAS_SWEEP_INPUT_COUNT
} dpas_sweep_input;

/* What a sweep reports: the seed's attributes (0 .. DPAS_ATTR_COUNT - 1, as dpas_attr), then
 * the schedule's bytes and times and the rule's max_f. */
typedef enum dpas_metric {
    DPAS_METRIC_NONE = -1, /* no metric: what dpas_metric_from_name answers for an unknown name */
    DPAS_METRIC_BYTES_PER_WORKER = 10, /* = DPAS_ATTR_COUNT */
    DPAS_METRIC_BYTES_RECEIVED,
    DPAS_METRIC_SCALAR_BYTES,
    DPAS_METRIC_RATIO_TO_ALLREDUCE,
    DPAS_METRIC_TIME_FLAT_S,
    DPAS_METRIC_TIME_HIERARCHICAL_S,
    DPAS_METRIC_MAX_F,
    /* with a calibration, as cost rows carry them: how the flat time was obtained (text:
     * dpas_time_basis_name) and its band */
    DPAS_METRIC_TIME_BASIS,
    DPAS_METRIC_TIME_BAND_LOW_S,
    DPAS_METRIC_TIME_BAND_HIGH_S,
    DPAS_METRIC_TIME_S,     /* the point's one time, as a cost row's time_s (its model's band above
                           with a calibration) */
    DPAS_METRIC_TIME_MODEL, /* which model gave time_s (text), as a cost row's time_model */
    DPAS_METRIC_N,          /* the point's dp_degree (shown first when N follows f: min_n(f)) */
    DPAS_METRIC_COUNT
} dpas_metric;

/* Limits, checked before any work: values of one axis and points of a sweep. */
#define DPAS_SWEEP_MAX_VALUES 100000000ull  /* 10^8 */
#define DPAS_SWEEP_MAX_POINTS 1000000000ull /* 10^9 */
#define DPAS_SWEEP_MAX_AXES 3               /* varied inputs (a plot: x, series, facets) */

/* The input's name as a column ("dp_degree", "workload", "rule"): its key's (dpas_key_name; the
 * key table spells it for each front end). */
DPAS_API const char *dpas_sweep_input_name(dpas_sweep_input in);
/* The metric's name ("gradient_bytes", "time_flat_s"), or NULL; -1 for an unknown name. */
DPAS_API const char *dpas_metric_name(dpas_metric metric);
DPAS_API int dpas_metric_from_name(const char *name);
/* How a plot labels the metric's axis (dpas_axis_unit: seconds, bytes or plain). */
DPAS_API dpas_axis_unit dpas_metric_axis_unit(dpas_metric metric);
/* Does the metric need a schedule (bytes, times) or a rule (max_f)? */
DPAS_API int dpas_metric_needs_schedule(dpas_metric metric);
DPAS_API int dpas_metric_needs_rule(dpas_metric metric);

/* One axis: its values, never materialised for a numeric range (a range of 10^8 values costs
 * nothing until it is walked). */
typedef struct dpas_sweep_axis {
    dpas_sweep_input input;
    size_t n;      /* values */
    int range;     /* numeric range: lo, hi, step, op */
    int geometric; /* doubling or factor: plotted on a log axis */
    uint64_t lo, hi, step;
    char op;            /* '*' or '+' */
    int64_t *i;         /* a dp_degree list */
    uint64_t *u;        /* a parameters list */
    const void **entry; /* models, fleets, rules */
    dpas_rational *width;
    dpas_schedule_id *schedule;
    char **label; /* the value as the output shows it (widths: as given) */
} dpas_sweep_axis;

/* Read an axis from text: "2..4096", "8..64+8", "1e9..1e12*10", "8,16,32", "GPT3,Llama3_70B",
 * "bf16,fp32", "median,krum". `field` names the input in messages ("--dp"). A list is split at
 * commas with no limit on its length; one value (no comma, no range) is an axis of one value.
 * Errors name the field, the value and the rule. dpas_sweep_axis_free releases it. */
DPAS_API int dpas_sweep_axis_parse(dpas_sweep_input in, const char *text, const char *field,
                                   const dpas_registry *reg, const char *convention,
                                   dpas_sweep_axis *out, dpas_error *err);
DPAS_API void dpas_sweep_axis_free(dpas_sweep_axis *a);
/* Does the text vary (a list or a range)? */
DPAS_API int dpas_sweep_text_varies(dpas_sweep_input in, const char *text);
/* Value i of a dp_degree axis, of a parameters axis, and of either as a double (plots). */
DPAS_API int64_t dpas_sweep_axis_i(const dpas_sweep_axis *a, size_t i);
DPAS_API uint64_t dpas_sweep_axis_u(const dpas_sweep_axis *a, size_t i);
DPAS_API double dpas_sweep_axis_x(const dpas_sweep_axis *a, size_t i);

typedef struct dpas_sweep {
    dpas_scenario base;          /* the inputs that do not vary */
    const dpas_rule *rule;       /* fixed rule, or NULL */
    dpas_schedule_id schedule;   /* fixed schedule, or DPAS_SCHED_NONE */
    int64_t iterations;          /* of iterative rules; 0 = 10 */
    const dpas_links *links;     /* a calibration's inter-node links, or NULL (the fleet's) */
    const dpas_netmodel *net;    /* a calibration's network model: flat times from its curves */
    dpas_netmodel_kind net_kind; /* for net */
    dpas_sweep_axis axes[DPAS_SWEEP_MAX_AXES]; /* borrowed */
    int naxes;
    int has_f;    /* a fixed f (no f axis): f */
    int64_t f;    /* >= 0 */
    int n_from_f; /* no dp_degree given and f given: each point's N is min_n(f) of its rule */
    dpas_metric metrics[DPAS_METRIC_COUNT];
    int nmetrics;
} dpas_sweep;

/* The metrics a sweep shows when none are asked for: the seed's bytes and factors, or with a
 * schedule its bytes per worker, ratio and times; with a rule also max_f. Fills sw->metrics. */
DPAS_API void dpas_sweep_default_metrics(dpas_sweep *sw, int has_schedule, int has_rule);

/* Check a sweep before any work: one or two axes, total points within DPAS_SWEEP_MAX_POINTS,
 * metrics that have their schedule and rule. */
DPAS_API int dpas_sweep_check(const dpas_sweep *sw, dpas_error *err);
/* The columns of a sweep's rows: the axes, then the metrics (naxes + nmetrics entries). */
DPAS_API void dpas_sweep_columns(const dpas_sweep *sw, dpas_column *cols);
/* The values of axis 0 or 1 (1 for an axis the sweep does not have), and the columns of a row
 * (naxes + nmetrics). */
DPAS_API size_t dpas_sweep_values(const dpas_sweep *sw, int axis);
DPAS_API size_t dpas_sweep_ncolumns(const dpas_sweep *sw);

/* What dpas_sweep_rows kept and left out, and why the first point was left out. */
typedef struct dpas_sweep_tally {
    uint64_t shown, skipped;
    char first[512]; /* a dpas_error's message: the same size, so never cut */
} dpas_sweep_tally;

/* A kept point's row (ncolumns cells, borrowed for the call); non-zero stops the walk with it. */
typedef int (*dpas_sweep_fn)(void *ctx, const dpas_cell *cells);

/* Every point, the first axis outer: each kept point's row to fn, a point whose inputs break a
 * rule left out and counted in tally. When every point is left out: DPAS_EINVAL, "every point
 * of the sweep was left out; the first: ..." (and fn never called). */
DPAS_API int dpas_sweep_rows(const dpas_sweep *sw, dpas_sweep_fn fn, void *ctx,
                             dpas_sweep_tally *tally, dpas_error *err);

/* The point (i0, i1): its cells (naxes + nmetrics; text borrowed from the axes) and, when y is
 * not NULL, the metric `ymetric` as a double (NAN when null). A point whose inputs break a rule
 * returns DPAS_EINVAL (or another code) with the reason in err: it is left out of the sweep. */
DPAS_API int dpas_sweep_point(const dpas_sweep *sw, size_t i0, size_t i1, dpas_cell *cells,
                              dpas_metric ymetric, double *y, dpas_error *err);
/* The same at the point idx[0], idx[1], idx[2] (an index past an axis the sweep lacks is 0). */
DPAS_API int dpas_sweep_point_at(const dpas_sweep *sw, const size_t idx[DPAS_SWEEP_MAX_AXES],
                                 dpas_cell *cells, dpas_metric ymetric, double *y, dpas_error *err);

/* ---- a sweep as a figure: the numbers a plot draws ---- */

/* Limits of a figure (it holds every point in memory). */
#define DPAS_FIGURE_MAX_POINTS 2000000u
#define DPAS_FIGURE_MAX_SERIES 64u /* values of the second varied input */
#define DPAS_FIGURE_MAX_FACETS 64u /* values of the third */

/* A plot's points: the first varied input on x (numeric: dp_degree, parameters or f), one series
 * per value of the second, one facet (a panel, a page of a PDF) per value of the third; y the
 * metric ymetric, NAN where the point was left out or has no value. series[f * nseries + k] is
 * series k of facet f; its name the value of the second input (NULL with one series). */
typedef struct dpas_sweep_figure {
    dpas_metric ymetric;
    size_t npoints, nseries, nfacets;       /* per series; per facet; facets */
    double *x, *y;                          /* nfacets * nseries * npoints */
    dpas_series *series;                    /* nfacets * nseries, pointing into x and y */
    char **series_names;                    /* nseries (NULL entries with one series) */
    char **facet_names;                     /* nfacets (NULL entries with one facet) */
    const char *xname, *yname;              /* the input's and the metric's names */
    const char *series_input, *facet_input; /* the inputs' names, or NULL */
    int xlog, ylog;                         /* as a plot draws them by default (0, 2, 10) */
    dpas_axis_unit xunit, yunit;
    uint64_t kept, skipped;
    char first[512]; /* why the first point left out was */
} dpas_sweep_figure;

/* The figure of a sweep of one to three axes (the first numeric). Errors: a first axis that is
 * not a number, more than the limits above, every point left out. *out: dpas_sweep_figure_free. */
DPAS_API int dpas_sweep_figure_new(const dpas_sweep *sw, dpas_metric ymetric,
                                   dpas_sweep_figure **out, dpas_error *err);
DPAS_API void dpas_sweep_figure_free(dpas_sweep_figure *fig);

#ifdef __cplusplus
}
#endif
#endif
