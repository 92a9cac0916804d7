/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/cost.h — what each robust rule costs under each schedule: typed rows.
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_COST_H
#define DPAS_COST_H

#include "dpas/calibrate.h"
#include "dpas/schedules.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpas_cost_opts {
    const dpas_rule *const *rules; /* the rules to cost, or NULL for every default rule */
    size_t nrules;
    unsigned schedules;       /* bit per dpas_schedule_id; 0 = all */
    int64_t iterations;       /* of iterative rules (geometric median, centered clipping); 0 = 10 */
    int64_t steps;            /* bytes and times for this many steps; 0 = 1 */
    int64_t f;                /* Byzantine replicas to tolerate, -1 = not asked */
    double compute_rate;      /* FLOP/s per worker for the rule's own compute; 0 = not computed */
    const dpas_links *links;  /* inter-node alpha and beta to use instead of the fabric's (a
                                calibration), or NULL; intra-node still from the fleet's node */
    const char *links_source; /* where they come from, for the output (borrowed) */
    const dpas_netmodel *net; /* a calibration's network model: flat times from its measured
                                 curves (dpas_schedule_time_net), or NULL */
    dpas_netmodel_kind net_kind; /* for net (DPAS_NETMODEL_DEFAULT: the measured
                                 curve at a measured scale, the nccl model elsewhere) */
    double memory_bandwidth;     /* bytes/s per worker for the rule's own compute (its memory
                                    bound); 0 = the fleet's accelerator's HBM bandwidth. The
                                    rule's compute is timed when this or compute_rate is given:
                                    max(flops / compute_rate, bytes / memory_bandwidth), the
                                    missing one from the fleet's accelerator */
    int zero;                    /* the ZeRO stage, 0 to 3: each row adds its parameter
                                    all-gathers (bytes, and time over the links; see dpas step) */
} dpas_cost_opts;

/* One rule under one schedule. Byte counts are for `steps` steps; a value that does not apply
 * is NAN (reals) or has its has_ flag 0. */
typedef struct dpas_cost_row {
    const dpas_rule *rule;
    dpas_schedule_id schedule;
    int realisable;
    const char *why; /* why not realisable (static), or NULL */
    int64_t max_f;   /* the rule's largest f at dp_degree; -1 when none */
    int tolerates;   /* max_f >= opts.f (when opts.f >= 0) */
    dpas_bytes bytes_per_worker, bytes_received, scalar_bytes; /* when realisable */
    double ratio_to_allreduce; /* NAN when the AllReduce moves nothing (N = 1) or not realisable */
    /* The row's one time is time_s (below), with its model, basis and band. These two are the
     * alternatives it was chosen from (--all shows them): the alpha-beta times of the flat
     * schedule (one ring over every replica) and of the hierarchical one (pre-reduces inside a
     * node first); with a network model, time_flat_s is the calibration's time. */
    double time_flat_s, time_hierarchical_s, compute_s; /* NAN when not known */
    const char *time_model;     /* which model gave time_s (static): the calibration's
                                   ("empirical", "nccl", ...) or "alpha_beta_flat",
                                   "alpha_beta_hierarchical" from the links; NULL: no time */
    int time_extrapolated;      /* with a network model: it extrapolated beyond the sizes */
    int time_rescaled;          /* ... and transferred to a scale no curve measured */
    dpas_time_basis time_basis; /* time_s's evidence (NONE from the links) */
    double time_band_lo_s, time_band_hi_s; /* where time_s can be, by the same model (NaN when
                                              that model gives no band: alpha-beta) */
    /* the rule's own compute (compute_s) as a roofline: its floating-point operations, the bytes
     * it moves in memory (dpas_rule_passes x the gradients it holds) and the bound that holds,
     * "compute" or "memory" (static; NULL when compute_s is NaN) */
    double compute_flops, compute_bytes;
    const char *compute_bound;
    double time_s;  /* the row's time: the calibration's when one is given, else the alpha-beta
                       time of the schedule the fleet runs (hierarchical when a node link is known
                       and pre-reducing inside a node is sound: no node holds two replicas, or the
                       rule is the mean; else flat); NAN when not known */
    double total_s; /* time_s + compute_s, when both are known */
} dpas_cost_row;

#define DPAS_COST_MAX_NOTES 8

typedef struct dpas_cost {
    dpas_cost_row *rows; /* rule-major, schedules in dpas_schedule_id order */
    size_t nrows;
    size_t unrealisable; /* rows with realisable == 0 */
    int64_t dp_degree, steps, iterations, f;
    double compute_rate;
    dpas_bytes gradient_bytes;
    int have_links;              /* times are known */
    int have_intra;              /* hierarchical times are known */
    int calibrated;              /* the inter-node links came from opts.links */
    dpas_netmodel_kind net_kind; /* the network model asked for, when opts.net; else NONE */
    dpas_links links;
    const char *fabric, *node, *links_source; /* registry paths (borrowed) or NULL */
    const char *fabric_name, *node_name;
    int64_t accelerators_per_node;
    size_t nnotes;
    char notes[DPAS_COST_MAX_NOTES][400]; /* sentences about how to read the rows */
    double peak_flops;       /* the compute_s roofline's FLOP/s (given, or the accelerator's); 0:
                                none */
    double memory_bandwidth; /* ... and its bytes/s (given, or the accelerator's HBM); 0: none */
} dpas_cost;

/* Cost every rule x schedule for the scenario. *out is the caller's: dpas_cost_free().
 * DPAS_ERANGE when a row's bytes (x steps) or counts leave their range: the error's field is the
 * row's ("bytes_per_worker", "scalar_bytes", "messages") and its message names the rule and the
 * schedule. */
DPAS_API int dpas_cost_compute(const dpas_scenario *s, const dpas_cost_opts *o, dpas_cost **out,
                               dpas_error *err);
DPAS_API void dpas_cost_free(dpas_cost *c);

#ifdef __cplusplus
}
#endif
#endif
