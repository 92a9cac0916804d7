/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/calibrate.h — network models fitted from nccl-tests output
 * Part of the public API; include "dpas/dpas.h".
 *
 * The stages of a calibration, a header each:
 *   read   dpas/nccl.h: nccl-tests text           -> dpas_nccl_log: tests of typed points
 *   fit    here: three models per test, and the NCCL-structured model across scales
 *                                                 -> dpas_netmodel: alpha-beta, piecewise
 *                                                    alpha-beta (regimes), empirical curve
 *   query  here: dpas_netmodel_time and the predictions at sizes and scales
 *   render dpas/render.h: text, JSON, CSV, markdown; SVG and PNG plots.
 *
 * Ownership: dpas_netmodel is allocated by the library and released with dpas_netmodel_free
 * (which accepts NULL); every pointer inside it is owned by it and lives as long as it does.
 * Nothing here prints, exits, or keeps global state.
 *
 * Sizes follow nccl-tests' size column (dpas/nccl.h says it per collective). */
#ifndef DPAS_CALIBRATE_H
#define DPAS_CALIBRATE_H

#include "dpas/base.h"
#include "dpas/nccl.h"
#include "dpas/schedules.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- models ---------------------------------------------------------------------------------- */

typedef enum dpas_netmodel_kind {
    DPAS_NETMODEL_NONE = -1,      /* no network model (dpas_cost.net_kind without one) */
    DPAS_NETMODEL_DEFAULT = 0,    /* at a measured scale the empirical curve inside its sizes,
                                     elsewhere the nccl model anchored on the curves (see
                                     dpas_netmodel_time_at) */
    DPAS_NETMODEL_ALPHA_BETA = 1, /* one line over every size, relative least squares */
    DPAS_NETMODEL_PIECEWISE = 2,  /* one line per protocol regime, breakpoints from the data */
    DPAS_NETMODEL_EMPIRICAL = 3,  /* the measured curve, interpolated; outside, the outermost
                                     regime's slope */
    DPAS_NETMODEL_NCCL = 4,       /* NCCL's own tuning model (ring and tree, LL/LL128/Simple,
                                     hops inside and across nodes, bandwidth per node) with its
                                     parameters fitted to every curve of the collective */
} dpas_netmodel_kind;
#define DPAS_NETMODEL_KINDS 4 /* alpha_beta, piecewise, empirical, nccl: fits[kind - 1] */

/* "default", "alpha_beta", "piecewise", "empirical", "nccl"; NULL out of range. */
DPAS_API const char *dpas_netmodel_kind_name(dpas_netmodel_kind kind);
/* The reverse; DPAS_EINVAL naming the accepted names. */
DPAS_API int dpas_netmodel_kind_parse(const char *text, dpas_netmodel_kind *kind, dpas_error *err);

/* One alpha-beta line over a range of measured sizes. */
typedef struct dpas_regime {
    uint64_t from_bytes, to_bytes; /* the smallest and largest measured size it was fitted on */
    size_t first, count;           /* those sizes: curve indices first .. first + count - 1 */
    double alpha;                  /* seconds per ring step (>= 0) */
    double beta;                   /* bus bandwidth, bytes/s (> 0; INFINITY when the time does
                                      not grow with the size over the regime) */
    double max_rel_residual;       /* worst |model - measured| / measured over its sizes */
} dpas_regime;

typedef struct dpas_fit {
    dpas_netmodel_kind kind;
    int defined; /* 0: the model could not be fitted; reason says why */
    char reason[256];
    double alpha; /* alpha_beta: the line's; piecewise: the last (largest-size) regime's;
                         empirical: NaN */
    double beta;  /* likewise */
    double r2;    /* alpha_beta: of time against size; NaN otherwise */
    size_t nregimes;
    dpas_regime *regimes;       /* alpha_beta: 1 (the line); piecewise: >= 1; empirical: 0 */
    double *predicted;          /* per curve size, seconds: in-sample for alpha_beta and piecewise;
                               leave-one-out for empirical (each size from the others) */
    double *rel_residual;       /* (predicted - measured) / measured, per curve size */
    double max_rel_residual;    /* worst |rel_residual| */
    double median_rel_residual; /* median |rel_residual| */
    size_t worst;               /* curve index of the worst */
} dpas_fit;

/* Where a predicted time comes from, from the strongest evidence to the weakest. */
typedef enum dpas_time_basis {
    DPAS_BASIS_NONE = 0,
    DPAS_BASIS_MEASURED = 1,          /* that size was measured at that scale */
    DPAS_BASIS_INTERPOLATED = 2,      /* between two sizes measured at that scale */
    DPAS_BASIS_EXTRAPOLATED_SIZE = 3, /* outside the sizes measured at that scale */
    DPAS_BASIS_TRANSFERRED = 4,       /* at a scale (ranks, ranks per node) no curve measured */
} dpas_time_basis;
/* "measured", "interpolated", "extrapolated_size", "transferred"; NULL for NONE or out of range. */
DPAS_API const char *dpas_time_basis_name(dpas_time_basis basis);

/* A scale: ranks and ranks per node (nodes = ranks / per_node). per_node 0 means "as the
 * calibration measured": the ranks per node its curves share (an error when they differ). */
typedef struct dpas_scale {
    int64_t ranks;
    int64_t per_node;
} dpas_scale;
/* "2160" (ranks) or "540x4" (nodes x ranks per node), at most 2^31 ranks. DPAS_EPARSE,
 * DPAS_EINVAL (zero), DPAS_ERANGE. `field` names the input in messages. */
DPAS_API int dpas_scale_parse(const char *field, const char *text, dpas_scale *out,
                              dpas_error *err);

/* Where a curve's ranks per node came from (dpas_curve.per_node_from). */
typedef enum dpas_topology_source {
    DPAS_TOPO_FROM_RANK_LINES = 1, /* the hosts named by the "#  Rank ... on HOST" lines */
    DPAS_TOPO_FROM_GIVEN = 2,      /* the caller's (--gpus-per-node) */
    DPAS_TOPO_FROM_ASSUMED = 3,    /* neither: 8 per node when the ranks are a multiple of 8 above
                                      8, else one node (a note says so) */
} dpas_topology_source;

/* One collective at one scale as a curve (sizes ascending; a size repeated in one run merged by
 * the geometric mean of its times, several runs by the median) and its fits. */
typedef struct dpas_curve {
    const dpas_nccl_test *test; /* borrowed from the model's logs; NULL when built from points */
    size_t log;                 /* index of its log in the model's logs */
    dpas_collective collective;
    int64_t ranks;
    int64_t per_node; /* ranks per node (ranks when one node) */
    dpas_topology_source per_node_from;
    size_t n;
    uint64_t *bytes;
    double *seconds;
    double *seconds_inplace; /* nccl-tests' second (in-place) time per size; NaN when none */
    /* Runs merged into this curve: tests of one collective at one scale (in one file or
     * several) are one curve, each size's time the median over the runs that measured it (the
     * mean of the middle two when even). test is the first of them in the files' order. */
    size_t runs;
    /* per size (beside bytes): the largest over the smallest of the runs' times there, >= 1
     * (1 where one run measured it); the band of a time there is never narrower (see
     * dpas_netmodel_time); NULL when runs == 1 */
    double *run_spread;
    double peak_busbw;         /* bytes/s, the largest busbw the test printed; NaN when none */
    uint64_t peak_busbw_bytes; /* at that size */
    /* Did the sweep reach its bandwidth regime? The time's growth over the last two sizes,
     * ln(t2/t1) / ln(x2/x1): 1 when time is proportional to size; below 0.8 it was still
     * latency-bound (bandwidth_reached = 0). NaN with one size. */
    double end_elasticity;
    int bandwidth_reached;
    /* How far the empirical curve errs beyond its sizes: |ln(predicted / measured)| per octave
     * when its outermost sizes are predicted from the others (90th percentile); NaN when the
     * curve has fewer than 6 sizes. */
    double extrapolation_per_octave;
    dpas_fit fits[DPAS_NETMODEL_KINDS]; /* nccl: the collective's joint fit, this curve's part */
} dpas_curve;

/* The nccl model's parameters for one collective. */
typedef struct dpas_nccl_params {
    double base_s[3]; /* per protocol (LL, LL128, Simple): base latency, seconds */
    double hop_s[3];  /* per protocol: one hop between nodes; a hop inside a node takes NCCL's
                         ratio of it (its NVLink over its network hop latency) */
    double inter_bw;  /* bus bandwidth across nodes with one rank per node, bytes/s ... */
    double kappa;     /* ... with g ranks per node: inter_bw x g^kappa ... */
    double gamma;     /* ... on N nodes: x (N/2)^-gamma, N held inside [nodes_lo, nodes_hi]: */
    double nodes_lo, nodes_hi; /* the node counts the curves measured across nodes; beyond
                                  them the bandwidth is the edge's (a trend is not carried into
                                  a regime no curve measured) */
    double intra_bw;           /* bus bandwidth inside one node, bytes/s */
    double eff[3]; /* the share of the bus bandwidth each protocol reaches (Simple: 1) */
    /* On exactly 2 nodes (NCCL's own tuning treats 1 node, 2 nodes and more apart): the
     * bandwidth is the one at nodes_lo times this (between 2 and nodes_lo nodes, log-linear
     * between the two); NaN (taken as 1) unless the curves measured 2 nodes and more than 2
     * (DPAS_SCALEFIT_TWO_NODE). */
    double two_node;
} dpas_nccl_params;

/* What a collective's curves determined (bits of dpas_scale_fit.determined); the rest is
 * NCCL's constants (latencies), 1 (kappa), 0 (gamma) or assumed equal to what was measured
 * (intra_bw from inter_bw or the reverse). */
enum {
    DPAS_SCALEFIT_INTER = 1u << 0,    /* a curve across nodes: inter_bw */
    DPAS_SCALEFIT_INTRA = 1u << 1,    /* a curve inside one node: intra_bw */
    DPAS_SCALEFIT_KAPPA = 1u << 2,    /* curves across nodes at two or more ranks per node */
    DPAS_SCALEFIT_GAMMA = 1u << 3,    /* curves on three or more node counts above 2 */
    DPAS_SCALEFIT_HOPS = 1u << 4,     /* two or more hop structures: base and hop latency apart */
    DPAS_SCALEFIT_TWO_NODE = 1u << 5, /* curves on 2 nodes and on more: two_node */
};

/* The topology regimes of a scale (dpas_net_time.regime): inside one node (its NVLink or PCI
 * domain: the ranks per node, 72 for an NVL72 rack given as its ranks per node), 2 nodes
 * (NCCL's special case: one hop each way, its tree and NVLS-tree tuned apart), more nodes. A
 * trend fitted in one regime is not carried into another; a time in a regime no curve measured
 * is a transfer that says so (DPAS_NETTIME_OTHER_REGIME) with a wider, one-sided band. */
typedef enum dpas_net_regime {
    DPAS_REGIME_ONE_NODE = 1,
    DPAS_REGIME_TWO_NODES = 2,
    DPAS_REGIME_MORE_NODES = 3,
} dpas_net_regime;
/* "one_node", "two_nodes", "more_nodes"; NULL for anything else. */
DPAS_API const char *dpas_net_regime_name(dpas_net_regime regime);

/* The nccl model of one collective, fitted to all its curves, and how far it is from the
 * measurements it did not see. */
typedef struct dpas_scale_fit {
    dpas_collective collective;
    int defined; /* 0: reason says why (fewer than 4 sizes in all) */
    char reason[256];
    dpas_nccl_params p;
    unsigned determined; /* DPAS_SCALEFIT_* */
    size_t ncurves, npoints, nscales;
    double insample_median, insample_max; /* |model - measured| / measured, every curve's sizes */
    /* leave one scale out: each measured scale predicted (by the default model) from the
     * curves at the other scales, the model fitted again without it; 0 points with one scale */
    size_t loro_points;
    double loro_median, loro_max; /* |predicted - measured| / measured */
    double loro_q90;              /* 90th percentile of |ln(predicted / measured)| */
    double loro_distance;         /* median distance of those predictions from the nearest
                                     remaining scale: |ln ranks ratio| + |ln per-node ratio| */
} dpas_scale_fit;

/* The constants of a transferred time's band (dpas_netmodel_time), ln half-widths: learned
 * across clusters (docs/calibration.md, "Leave one cluster out"). transfer_floor: the least
 * band of a transfer the model does not bound; bound_near[k], bound_far[k]: a bounded
 * transfer's closed and open side, per kind of bound k (1 between one node and several, 2
 * between 2 nodes and more, 3 to ranks per node none measured across nodes; [0] unused). */
typedef struct dpas_band_constants {
    double transfer_floor;
    double bound_near[4], bound_far[4];
} dpas_band_constants;
/* The constants the library ships (learned on every cluster family scored). */
DPAS_API const dpas_band_constants *dpas_band_constants_shipped(void);

typedef struct dpas_netmodel {
    size_t nlogs;
    dpas_nccl_log **logs; /* owned, one per file, in the order given; none when from points */
    size_t ncurves;
    dpas_curve *curves; /* one per test of the logs, in order */
    size_t nscalefits;
    dpas_scale_fit *scalefits; /* one per collective measured, in the order first seen */
    /* borrowed; NULL (as loaded): dpas_band_constants_shipped(). A benchmark sets constants
     * learned on other clusters to score the band out of sample. */
    const dpas_band_constants *band;
} dpas_netmodel;

/* The piecewise fit: dynamic programming over the splits of the sizes into consecutive
 * regimes, each an alpha-beta line (alpha >= 0, beta > 0) fitted by least squares on the
 * relative error, minimising the sum of squared relative residuals plus this penalty per
 * regime, with at least this many sizes per regime. */
#define DPAS_PIECEWISE_PENALTY 0.02
#define DPAS_PIECEWISE_MIN_SIZES 3
/* Sizes per test that the fits accept (the piecewise search is quadratic in them). */
#define DPAS_CALIBRATE_MAX_SIZES 4096
/* Files one calibration reads at most, and curves it fits together. */
#define DPAS_CALIBRATE_MAX_FILES 64
#define DPAS_CALIBRATE_MAX_CURVES 256

/* What to read from the files. */
typedef struct dpas_calib_options {
    const char *collective; /* NULL: every test */
    int64_t ranks;          /* 0: every rank count */
    int64_t per_node;       /* ranks per node of the files whose Rank lines do not say; 0: the
                               assumption of DPAS_TOPO_FROM_ASSUMED */
    const size_t *tests;    /* the tests to use, numbered from 1 across the files by name (as
                               `dpas calibrate` lists them); NULL: all */
    size_t ntests;
} dpas_calib_options;

/* Read (as dpas_nccl_read) each file (or text) and fit: per curve alpha_beta, piecewise and
 * empirical; per collective the nccl model over all its curves, and its leave-one-scale-out
 * errors. A test whose models cannot be fitted (one size, one rank) is kept, with
 * fits[k].defined = 0 and the reason. Several tests of one collective at one scale (rank count
 * and ranks per node) are runs of one curve, merged (dpas_curve.runs, run_spread). The inputs
 * are read in one order, by name and then content (tests are numbered in it), so the model
 * depends on the set of inputs, never their order. opt may be NULL. */
DPAS_API int dpas_netmodel_load_files(const char *const *paths, size_t npaths,
                                      const dpas_calib_options *opt, dpas_netmodel **out,
                                      dpas_error *err);
DPAS_API int dpas_netmodel_from_texts(const char *const *texts, const size_t *lens,
                                      const char *const *origins, size_t n,
                                      const dpas_calib_options *opt, dpas_netmodel **out,
                                      dpas_error *err);
/* One file or text, every test (collective and ranks: as dpas_calib_options). */
DPAS_API int dpas_netmodel_from_text(const char *text, size_t len, const char *origin,
                                     const char *collective, int64_t ranks, dpas_netmodel **out,
                                     dpas_error *err);
DPAS_API int dpas_netmodel_load(const char *path, const char *collective, int64_t ranks,
                                dpas_netmodel **out, dpas_error *err);
/* One curve from n measured (bytes, seconds) points, in any order, on `ranks` ranks, per_node
 * per node (0: one node). */
DPAS_API int dpas_netmodel_from_points(dpas_collective collective, int64_t ranks,
                                       const uint64_t *bytes, const double *seconds, size_t n,
                                       dpas_netmodel **out, dpas_error *err);
DPAS_API int dpas_netmodel_from_points_at(dpas_collective collective, dpas_scale at,
                                          const uint64_t *bytes, const double *seconds, size_t n,
                                          dpas_netmodel **out, dpas_error *err);
DPAS_API void dpas_netmodel_free(dpas_netmodel *m);

/* ---- links: which curve answers for a link ----------------------------------------------------- */

typedef enum dpas_link_scope {
    DPAS_LINK_ANY = 0,   /* any curve */
    DPAS_LINK_INTER = 1, /* a curve across nodes (ranks per node < ranks) */
    DPAS_LINK_INTRA = 2, /* a curve inside one node */
} dpas_link_scope;

/* The curve of `collective` (< 0: any, all_reduce first) in `scope` nearest `ranks` ranks
 * (<= 0: the most ranks); on a tie the more ranks, then the more nodes, then one whose
 * alpha-beta line is defined. NULL when none. Decided by the curves' facts, never their
 * position: the answer depends on the set of files, not their order. Borrowed from m. */
DPAS_API const dpas_curve *dpas_netmodel_link_curve(const dpas_netmodel *m,
                                                    dpas_collective collective,
                                                    dpas_link_scope scope, int64_t ranks);

/* A calibration's links, as every front end takes them: the inter-node link is the alpha-beta
 * line of the AllReduce across nodes of the most ranks (of the most nodes on a tie); without
 * one, of the AllReduce of the most ranks, else of the curve of the most ranks. The intra-node
 * link is the line of the AllReduce inside one node of the most ranks, when one was measured
 * (intra and links.intra_* 0 otherwise). DPAS_EINVAL when the inter curve's line is undefined
 * (its reason, naming the file). */
typedef struct dpas_link_choice {
    const dpas_curve *inter, *intra; /* borrowed from the model */
    dpas_links links;
} dpas_link_choice;
DPAS_API int dpas_netmodel_links(const dpas_netmodel *m, dpas_link_choice *out, dpas_error *err);

/* Notes on a predicted time (bits of dpas_net_time.notes). */
enum {
    DPAS_NETTIME_LATENCY_BOUND = 1u << 0, /* above the largest size of a sweep that had not
                                             reached its bandwidth regime */
    DPAS_NETTIME_NO_INTRA = 1u << 1,      /* one node asked; no curve measured inside one node */
    DPAS_NETTIME_NO_INTER = 1u << 2,      /* several nodes asked; no curve measured across nodes */
    DPAS_NETTIME_ASSUMED_TOPOLOGY = 1u << 3, /* a curve's ranks per node was assumed */
    DPAS_NETTIME_OTHER_REGIME = 1u << 4,     /* no curve measured the asked scale's regime: the time
                                            is transferred from another (from_regime) */
    DPAS_NETTIME_LOWER_BOUND = 1u << 5,      /* the model says the time is at least this (a faster
                                            regime's bandwidth carried to a slower one) */
    DPAS_NETTIME_UPPER_BOUND = 1u << 6,      /* the model says the time is at most this */
};

/* The answer of dpas_netmodel_time. */
typedef struct dpas_net_time {
    double seconds;
    dpas_netmodel_kind kind; /* the model that answered (DEFAULT resolved to EMPIRICAL or NCCL) */
    dpas_time_basis basis;   /* of this answer */
    double band_lo, band_hi; /* seconds: where the time can be, from the calibration's own
                                errors on what it did not see (see dpas_netmodel_time) */
    int extrapolated;        /* bytes outside the sizes measured at the answering curve's scale */
    int rescaled;            /* the scale differs from every measured one (basis transferred) */
    unsigned notes;          /* DPAS_NETTIME_* */
    dpas_scale at;           /* the scale answered for (per_node resolved) */
    const dpas_curve *curve; /* the curve measured at that scale, or the nearest one */
    dpas_net_regime regime;  /* of the scale asked */
    dpas_net_regime from_regime; /* the regime whose curves the time rests on: regime itself
                                    when a curve measured it, else the nearest measured */
} dpas_net_time;

/* The time of one collective of `bytes` bytes (nccl-tests' size convention, see the top of
 * this header) at scale `at` (ranks 0: the first curve's scale), under model `kind`.
 *
 * default (what cost and sweep use): at a measured scale the empirical curve inside its sizes
 *   (basis measured or interpolated) and outside them the nccl model times that curve's own
 *   departure from it at its nearest size (extrapolated_size); at any other scale the nccl
 *   model times the curves' departures from it, weighted by exp(-0.5 x distance) between the
 *   scales (transferred).
 * nccl: the fitted model alone. empirical: the curve at that scale, or the nearest one scaled
 *   by the nccl model's ratio of the two scales. alpha_beta, piecewise: the nearest curve's
 *   lines with the ring steps and factor of the asked rank count (the transfer of earlier
 *   versions: a latency per ring step; kept for comparison).
 * The band (default and nccl): measured: the two times nccl-tests measured of that size
 *   (out-of-place and in-place); interpolated: the curve's own error at its neighbours when each
 *   is left out; extrapolated_size: that plus extrapolation_per_octave per octave beyond;
 *   transferred: exp(+-h), h = the leave-one-scale-out 90th percentile |ln error| widened in
 *   proportion when the distance exceeds theirs, or with a single scale h = 0.35 x distance
 *   (derived from the nccl-scaling series, docs/calibration.md), never below the nearest
 *   curve's interpolation error; one-sided when the model bounds the time (notes LOWER_BOUND /
 *   UPPER_BOUND: a regime no curve measured, e.g. NO_INTRA / NO_INTER, or ranks per node none
 *   measured across nodes): exp(near) on the closed side, exp(max(h, far)) on the open one,
 *   near and far per kind of bound (src/lib/network/query.c). Other models: NaN.
 * ranks = 1 gives 0 s. Errors: DPAS_ENOENT (no curve of that collective), DPAS_EINVAL (bytes
 * not finite and > 0, ranks < 0, per_node not dividing ranks, per_node 0 and the curves at
 * different ranks per node, a bad kind), DPAS_EUNDEF (the model is undefined, with the reason).
 *
 * For a training step (what `dpas cost --calibration FILE` uses) see dpas_schedule_collectives:
 * the collectives each schedule runs, each timed here. */
DPAS_API int dpas_netmodel_time_at(const dpas_netmodel *m, dpas_collective collective,
                                   dpas_netmodel_kind kind, double bytes, dpas_scale at,
                                   dpas_net_time *out, dpas_error *err);
/* The same at `ranks` ranks with the curves' ranks per node (0: the first curve's scale). */
DPAS_API int dpas_netmodel_time(const dpas_netmodel *m, dpas_collective collective,
                                dpas_netmodel_kind kind, double bytes, int64_t ranks,
                                dpas_net_time *out, dpas_error *err);

/* The collectives a schedule runs in one step, as dpas-measure runs them (src/measure/step.c,
 * flat), for N replicas of G gradient bytes each (a replica's share when it spans nodes), at the
 * step's scale (N x g ranks for replicas of g accelerators tiling a node, their ranks per node),
 * sizes in nccl-tests' convention (dpas/nccl.h):
 *   allreduce, innetwork  all_reduce of G
 *   allgather             all_gather of N x G (the gathered total)
 *   sharded               alltoall of G (every replica's shards to their owners), then
 *                         all_gather of G (the aggregated shards)
 *   sharded_distance      sharded, with between the two: an all_reduce of the N(N-1)/2 partial
 *                         squared distances (8 B each) once (Krum family), or one all_reduce of
 *                         N partial norms (8 N B) per iteration (norm-based and iterative rules)
 *   ps                    gather of N x G to the server (one of the workers: it receives
 *                         (N-1) G), then broadcast of G
 *   ps_separate           gather of N^2 G / (N-1) (the server receives N G), broadcast of G
 * N = 1: none. docs/calibration.md tabulates them and where dpas-measure differs. */
#define DPAS_SCHEDULE_MAX_COLLECTIVES 3
typedef struct dpas_schedule_collective {
    dpas_collective collective;
    double bytes; /* nccl-tests' size column */
    dpas_scale at;
    double count; /* times per step */
} dpas_schedule_collective;
/* runs: room for DPAS_SCHEDULE_MAX_COLLECTIVES; *nruns the number filled. */
DPAS_API int dpas_schedule_collectives(dpas_schedule_id sched, const dpas_scenario *s,
                                       const dpas_rule *rule, int64_t iterations,
                                       dpas_schedule_collective *runs, size_t *nruns,
                                       dpas_error *err);

/* A schedule's time per step from the model: the sum of its collectives' times (count x time
 * each), each from its own collective's curves; a collective the calibration lacks from
 * another's by bus-bandwidth equivalence (transferred, its band widened by how far such
 * transfers were off on real data, docs/calibration.md). With no usable curve at all, from
 * `links` (the calibration's alpha-beta line). */
typedef struct dpas_net_step {
    double seconds;
    const char *model;     /* which model answered: "empirical", "nccl", "piecewise", "alpha_beta",
                          followed by ", transferred from all_reduce" (or the collective it
                          was) when a collective was timed from another's curves, or
                          "alpha_beta (links...)" when no curve could answer (static) */
    dpas_time_basis basis; /* the weakest basis of its collectives' times; NONE from the links */
    double band_lo, band_hi; /* the sum of its collectives' bands; NaN when none */
    int extrapolated;        /* outside the measured sizes */
    int rescaled;            /* at a scale no curve measured */
    unsigned notes;          /* DPAS_NETTIME_* of its collectives */
    unsigned transferred;    /* bits (1 << dpas_collective) of its collectives the calibration
                                lacked, timed from transferred_from's curves */
    dpas_collective
        transferred_from; /* the collective they were timed from; DPAS_COLL_UNKNOWN when none (then
                                model says "..., transferred from all_reduce" otherwise) */
    int fabric_used;      /* several nodes asked, no curve measured across nodes, and the
                                scenario's fabric (its link's bandwidth and latency, one link per
                                rank) made a collective slower than the calibration's answer: the
                                slower is taken (model: "..., inter-node link from the fabric") */
    int accelerator_used; /* one node asked, no curve measured inside one node, and the
                                scenario's accelerator has an NVLink bandwidth (nvlink_GBps):
                                the collective is timed on the node's links from it, not from
                                the network's fit (model: "..., intra-node link from the
                                accelerator"); a curve inside one node wins over it */
} dpas_net_step;
DPAS_API int dpas_schedule_time_net(dpas_schedule_id sched, const dpas_scenario *s,
                                    const dpas_rule *rule, int64_t iterations,
                                    const dpas_netmodel *m, dpas_netmodel_kind kind,
                                    const dpas_links *links, dpas_net_step *out, dpas_error *err);

/* The same for one curve of the model (any test, not only the first of its collective), at its
 * own scale or, ranks != its own, transferred with its own collective's fit. */
DPAS_API int dpas_curve_time(const dpas_netmodel *m, const dpas_curve *cv, dpas_netmodel_kind kind,
                             double bytes, int64_t ranks, dpas_net_time *out, dpas_error *err);

/* Predictions: for every scale asked (or, with none, every curve's own scale) and every size,
 * the time under each model and the default's answer with its basis and band. */
typedef struct dpas_net_prediction {
    dpas_collective collective;
    dpas_scale at; /* the scale of the prediction */
    uint64_t bytes;
    double seconds[DPAS_NETMODEL_KINDS]; /* [kind - 1]; NaN where the model is undefined */
    double time_s;                       /* the default model's answer */
    dpas_time_basis basis;               /* of time_s */
    double band_lo, band_hi;
    unsigned notes;   /* DPAS_NETTIME_* */
    int extrapolated; /* bytes outside the sizes measured at that scale (or at the nearest) */
    dpas_netmodel_kind default_kind; /* what DPAS_NETMODEL_DEFAULT answers with, 0 if none */
    size_t curve;                    /* index of the curve measured at that scale, or the nearest */
    dpas_net_regime regime, from_regime; /* as dpas_net_time's */
} dpas_net_prediction;

/* rows: for each collective measured, each scale (at: nat of them; NULL: each curve's own) and
 * each size (the caller frees *rows with dpas_free). A scale's per_node 0 takes the
 * collective's curves' own (DPAS_EINVAL when they differ). */
DPAS_API int dpas_netmodel_predict_at(const dpas_netmodel *m, const uint64_t *sizes, size_t nsizes,
                                      const dpas_scale *at, size_t nat, dpas_net_prediction **rows,
                                      size_t *nrows, dpas_error *err);
/* The same at each curve's own scale. */
DPAS_API int dpas_netmodel_predict(const dpas_netmodel *m, const uint64_t *sizes, size_t nsizes,
                                   dpas_net_prediction **rows, size_t *nrows, dpas_error *err);

/* What a plot of the calibration draws: for each curve, each defined model on a log grid of
 * `grid` sizes over the curve's measured sizes (at its own scale), then the measurements. */
typedef struct dpas_net_series {
    size_t curve;            /* index in the model's curves */
    dpas_netmodel_kind kind; /* 0: the measurements */
    size_t n;
    double *x, *y; /* bytes, seconds (y NaN where the model cannot answer) */
} dpas_net_series;
/* *out: an array of *n series (free with dpas_net_series_free). */
DPAS_API int dpas_netmodel_series(const dpas_netmodel *m, size_t grid, dpas_net_series **out,
                                  size_t *n, dpas_error *err);
DPAS_API void dpas_net_series_free(dpas_net_series *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
