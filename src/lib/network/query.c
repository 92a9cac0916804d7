/* SPDX-License-Identifier: Apache-2.0 */
/* Times from a calibration (dpas/calibrate.h): which curve or model answers for a collective,
 * a size and a scale, on what evidence (measured, interpolated, extrapolated in size,
 * transferred to another scale), and how wide the error can be, from the calibration's own
 * errors on what it did not see. */
#include "ncclmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A transfer with a single measured scale has no leave-one-scale-out errors to size its band:
 * |ln error| grows about this much per unit of scale distance (ln ranks ratio + ln per-node
 * ratio). From the single-file transfers of the nccl-scaling series (docs/calibration.md). */
#define TRANSFER_PER_DISTANCE 0.35
/* The least |ln error| band of a transfer to another scale: a calibration's own leave-one-
 * scale-out errors (a few scales, often of one regime) understate how far a transfer errs. The
 * 90th percentile of |ln(predicted / measured)| at sizes >= 1 MiB of the leave-one-scale-out
 * transfers on clusters other than the one scored: chosen on the H100 (xxrjun) and MI325X
 * (AAC11) series, 0.319; Polaris kept out to report on (bench/bench_scaling.c, "By cluster
 * family"; docs/calibration.md). */
#define TRANSFER_FLOOR 0.319
/* A transfer the model itself bounds (DPAS_NETTIME_LOWER_BOUND or _UPPER_BOUND, see
 * regime_notes): into a regime (one node, 2 nodes, more) no curve measured, or to ranks per
 * node none measured across nodes. Its band is one-sided: |ln error| up to NEAR on the side the
 * bound closes, FAR on the side it leaves open, per kind of bound. The 5th and 90th
 * percentiles of ln(measured / predicted), oriented to the open side, over the bounded
 * transfers of every series scored by bench/bench_scaling.c ("Bounded points, every family";
 * docs/calibration.md): chosen on all the families, so the library's band is in sample across
 * clusters; the bench's "band learned on the other clusters" is the out-of-sample one. Between
 * one node and several only the H100 cluster00 series (NVLink against one network card per
 * node, 25x) and MI325X (about 1x) measured it: the far side is that cluster's. Values of
 * the run after alltoall and sendrecv moved only their share across nodes (ncclmodel.c). */
static const dpas_band_constants shipped = {
    .transfer_floor = TRANSFER_FLOOR,
    .bound_near = {0, 0.101, 0.537, 0.078},
    .bound_far = {0, 3.280, 0.375, 0.504},
};

const dpas_band_constants *dpas_band_constants_shipped(void) { return &shipped; }
/* The closed side of a bound is never narrower than this: a bound of the model, not of the
 * hardware (MI325X: one node's all_reduce 9% slower than across 2 to 8 nodes, where the model
 * holds a node's links at least as fast as its cards) */
#define BOUND_NEAR_MIN 0.1
enum { BOUND_NODE = 1, BOUND_NODES = 2, BOUND_KAPPA = 3 };

static int bound_kind(const dpas_net_time *out)
{
    if (!(out->notes & DPAS_NETTIME_OTHER_REGIME))
        return BOUND_KAPPA;
    return out->regime == DPAS_REGIME_ONE_NODE || out->from_regime == DPAS_REGIME_ONE_NODE
               ? BOUND_NODE
               : BOUND_NODES;
}

/* Beyond a curve's sizes, when it has too few sizes to measure its own extrapolation error:
 * |ln error| per octave. */
#define OCTAVE_PRIOR 0.15

static const char *const regime_names[] = {NULL, "one_node", "two_nodes", "more_nodes"};

const char *dpas_net_regime_name(dpas_net_regime regime)
{
    return regime >= DPAS_REGIME_ONE_NODE && regime <= DPAS_REGIME_MORE_NODES ? regime_names[regime]
                                                                              : NULL;
}

static const char *const kind_names[] = {"default", "alpha_beta", "piecewise", "empirical", "nccl"};
static const char *const basis_names[] = {NULL, "measured", "interpolated", "extrapolated_size",
                                          "transferred"};

const char *dpas_netmodel_kind_name(dpas_netmodel_kind kind)
{
    return kind >= 0 && kind <= DPAS_NETMODEL_KINDS ? kind_names[kind] : NULL;
}

int dpas_netmodel_kind_parse(const char *text, dpas_netmodel_kind *kind, dpas_error *err)
{
    char q[96];
    for (int k = 0; text && k <= DPAS_NETMODEL_KINDS; k++)
        if (!dpas__strcasecmp(text, kind_names[k])) { /* NCCL as nccl */
            *kind = k;
            return 0;
        }
    return dpas__fail(err, DPAS_EINVAL, "network_model",
                      "network model must be default, nccl, empirical, piecewise or alpha_beta, "
                      "got %s",
                      dpas__quote(text ? text : "", q, sizeof q));
}

const char *dpas_time_basis_name(dpas_time_basis basis)
{
    return basis > 0 && basis <= DPAS_BASIS_TRANSFERRED ? basis_names[basis] : NULL;
}

int dpas_scale_parse(const char *field, const char *text, dpas_scale *out, dpas_error *err)
{
    char q[96];
    const char *x = text ? strchr(text, 'x') : NULL;
    int64_t a, b = 0;
    dpas_error e = {0};
    if (!text || !*text)
        return dpas__fail(err, DPAS_EPARSE, field,
                          "%s must be RANKS or NODESxRANKS_PER_NODE (2160, 540x4), got \"\"",
                          field);
    /* digits and one 'x' only, no sign, space or leading zero: a scale is written one way */
    bool strict = true;
    for (const char *c = text; *c && strict; c++)
        strict = (*c >= '0' && *c <= '9') || (*c == 'x' && c == x);
    if (!strict || text[0] == '0' || (x && x[1] == '0'))
        return dpas__fail(err, DPAS_EPARSE, field,
                          "%s must be RANKS or NODESxRANKS_PER_NODE in digits (2160, 540x4), "
                          "got %s",
                          field, dpas__quote(text, q, sizeof q));
    if (x) {
        size_t l = (size_t)(x - text);
        char head[32];
        if (l == 0 || l >= sizeof head || !x[1])
            return dpas__fail(err, DPAS_EPARSE, field,
                              "%s must be RANKS or NODESxRANKS_PER_NODE (2160, 540x4), got %s",
                              field, dpas__quote(text, q, sizeof q));
        memcpy(head, text, l);
        head[l] = '\0';
        if (dpas_parse_int(field, head, &a, &e) || dpas_parse_int(field, x + 1, &b, &e))
            return dpas__fail(err, e.code, field,
                              "%s must be RANKS or NODESxRANKS_PER_NODE (2160, 540x4), got %s",
                              field, dpas__quote(text, q, sizeof q));
    } else if (dpas_parse_int(field, text, &a, &e)) {
        return dpas__fail(err, e.code, field,
                          "%s must be RANKS or NODESxRANKS_PER_NODE (2160, 540x4), got %s", field,
                          dpas__quote(text, q, sizeof q));
    }
    if (a < 1 || (x && b < 1))
        return dpas__fail(err, DPAS_EINVAL, field, "%s must count at least one %s, got %s", field,
                          x ? "node and one rank per node" : "rank",
                          dpas__quote(text, q, sizeof q));
    int64_t ranks = a;
    if (x && __builtin_mul_overflow(a, b, &ranks))
        ranks = INT64_MAX;
    if (ranks < 2)
        return dpas__fail(err, DPAS_EINVAL, field,
                          "%s must count at least 2 ranks (one rank exchanges nothing), got %s",
                          field, dpas__quote(text, q, sizeof q));
    if (ranks > (int64_t)1 << 31)
        return dpas__fail(err, DPAS_ERANGE, field, "%s must be at most 2^31 ranks, got %s", field,
                          dpas__quote(text, q, sizeof q));
    out->ranks = ranks, out->per_node = x ? b : 0;
    return 0;
}

/* ---- which curves --------------------------------------------------------------------------- */

static const dpas_scale_fit *fit_for(const dpas_netmodel *m, int coll)
{
    for (size_t i = 0; i < m->nscalefits; i++)
        if (m->scalefits[i].collective == coll)
            return &m->scalefits[i];
    return NULL;
}

/* The collective's first curve in the canonical order (dpas__curve_cmp), of any ranks per node
 * but `other` (<= 0: any): the same curve whichever order the files came in. */
static const dpas_curve *first_curve_but(const dpas_netmodel *m, int coll, int64_t other)
{
    const dpas_curve *best = NULL;
    for (size_t i = 0; i < m->ncurves; i++) {
        const dpas_curve *cv = &m->curves[i];
        if (cv->collective == coll && cv->per_node != other &&
            (!best || dpas__curve_cmp(cv, best) < 0))
            best = cv;
    }
    return best;
}

static const dpas_curve *first_curve(const dpas_netmodel *m, int coll)
{
    return first_curve_but(m, coll, 0);
}

/* The scale asked, its ranks per node resolved (0: the curves' own). */
static int resolve(const dpas_netmodel *m, int coll, dpas_scale at, dpas_scale *out,
                   dpas_error *err)
{
    const dpas_curve *c0 = first_curve(m, coll);
    const char *cn = dpas_collective_name(coll);
    if (at.ranks == 0) {
        *out = (dpas_scale){c0->ranks, c0->per_node};
        return 0;
    }
    if (at.ranks < 0 || at.per_node < 0)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 1, got %lld",
                          (long long)at.ranks);
    int64_t per = at.per_node;
    if (!per) {
        per = c0->per_node;
        const dpas_curve *o = first_curve_but(m, coll, per);
        if (o)
            return dpas__fail(err, DPAS_EINVAL, "at",
                              "the %s curves measured different ranks per node (%lld and "
                              "%lld): give the scale as NODESxRANKS_PER_NODE",
                              cn, (long long)per, (long long)o->per_node);
        if (per > at.ranks) /* fewer ranks than a node holds: one node */
            per = at.ranks;
        if (at.ranks % per)
            return dpas__fail(err, DPAS_EINVAL, "at",
                              "%lld ranks are not a whole number of nodes of %lld ranks (the "
                              "%s curves' ranks per node): give the scale as "
                              "NODESxRANKS_PER_NODE",
                              (long long)at.ranks, (long long)per, cn);
    } else if (per > at.ranks || at.ranks % per) {
        return dpas__fail(err, DPAS_EINVAL, "at",
                          "ranks per node must divide the ranks (%lld), got %lld",
                          (long long)at.ranks, (long long)per);
    }
    *out = (dpas_scale){at.ranks, per};
    return 0;
}

/* The curves of a collective (into cvs, the caller's array of m->ncurves), the one measured at
 * the scale (or NULL) and the nearest one. */
static size_t curves_of(const dpas_netmodel *m, int coll, dpas_scale at, const dpas_curve **cvs,
                        const dpas_curve **exact, const dpas_curve **nearest, double *distance)
{
    size_t n = 0;
    *exact = *nearest = NULL;
    *distance = INFINITY;
    for (size_t i = 0; i < m->ncurves; i++)
        if (m->curves[i].collective == coll)
            cvs[n++] = &m->curves[i];
    /* in the canonical order: the curve chosen among several at one scale (or at one distance)
     * and the anchoring's sums are the set's, whatever the order of the files */
    dpas__curves_sort(cvs, n);
    for (size_t i = 0; i < n; i++) {
        const dpas_curve *cv = cvs[i];
        if (cv->ranks == at.ranks && cv->per_node == at.per_node && !*exact)
            *exact = cv;
        double d = dpas__scale_distance((double)at.ranks, (double)at.per_node, (double)cv->ranks,
                                        (double)cv->per_node);
        if (d < *distance)
            *distance = d, *nearest = cv;
    }
    return n;
}

/* ---- bands ---------------------------------------------------------------------------------- */

/* |ln(1 + r)|, 0 for NaN. */
static double lnerr(double r) { return isfinite(r) && r > -1 ? fabs(log1p(r)) : 0; }

static size_t last_le(const dpas_curve *cv, double x) /* x inside the curve's sizes */
{
    size_t lo = 0, hi = cv->n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if ((double)cv->bytes[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The curve's own error at x (inside its sizes, clamped): the leave-one-out errors of the
 * measured sizes around it. */
static double noise_at(const dpas_curve *cv, double x)
{
    const double *r = cv->fits[DPAS_NETMODEL_EMPIRICAL - 1].rel_residual;
    if (cv->n < 2)
        return 0;
    if (x <= (double)cv->bytes[0])
        return lnerr(r[0]);
    if (x >= (double)cv->bytes[cv->n - 1])
        return lnerr(r[cv->n - 1]);
    size_t i = last_le(cv, x);
    double h = lnerr(r[i]);
    if (i + 1 < cv->n && (double)cv->bytes[i] != x)
        h = fmax(h, lnerr(r[i + 1]));
    return h;
}

/* Octaves from x to the curve's sizes (0 inside). */
static double octaves_out(const dpas_curve *cv, double x)
{
    if (x < (double)cv->bytes[0])
        return log2((double)cv->bytes[0] / x);
    if (x > (double)cv->bytes[cv->n - 1])
        return log2(x / (double)cv->bytes[cv->n - 1]);
    return 0;
}

/* ln of the spread between the runs merged into the curve (slowest over fastest) at the sizes
 * around x: 0 with one run. The median lies between the runs, so [t / s, t x s] holds them all. */
static double run_spread_at(const dpas_curve *cv, double x)
{
    if (!cv->run_spread || !cv->n)
        return 0;
    size_t i = last_le(cv, x);
    double s = cv->run_spread[i];
    if (i + 1 < cv->n && (double)cv->bytes[i] != x)
        s = fmax(s, cv->run_spread[i + 1]);
    return s > 1 ? log(s) : 0;
}

/* The model's own uncertainty of a transfer (ln): what its parameters that the curves did not
 * determine could change. One scale cannot tell a base latency from a hop latency (the fit
 * leans on NCCL's constants for the split), so a time carried to another hop count moves with
 * it: the transfer's ratio (the model at the scale asked over the model at the curve's scale,
 * which is what the anchored answer carries) with every hop latency halved and doubled, its
 * largest |ln| departure from the fitted ratio. 0 when the hops were determined. */
static double model_spread(const dpas_scale_fit *sf, const dpas_curve *cv, double x, dpas_scale at)
{
    if (!sf || !sf->defined || (sf->determined & DPAS_SCALEFIT_HOPS))
        return 0;
    int c = cv->collective;
    double r = (double)at.ranks, g = (double)at.per_node;
    double r0 = (double)cv->ranks, g0 = (double)cv->per_node;
    double nominal = dpas__ncclm_time(&sf->p, c, x, r, g) / dpas__ncclm_time(&sf->p, c, x, r0, g0);
    double worst = 0;
    for (int a = 0; a < 2; a++) {
        dpas_nccl_params q = sf->p;
        for (int k = 0; k < 3; k++)
            q.hop_s[k] *= a ? 2.0 : 0.5;
        double alt = dpas__ncclm_time(&q, c, x, r, g) / dpas__ncclm_time(&q, c, x, r0, g0);
        double e = fabs(log(alt / nominal));
        if (isfinite(e))
            worst = fmax(worst, e);
    }
    return worst;
}

/* The nccl model's own misfit at x on the curve a transfer is anchored on: |ln(measured /
 * model)| at the measured sizes around x (and one more on each side). The anchored answer
 * carries that departure to the scale asked; where the model's structure does not explain a
 * curve (NCCL switching protocol or algorithm at mid sizes), the departure at another scale
 * is not known to within about its own size. */
static double misfit_at(const dpas_curve *cv, double x)
{
    const double *r = cv->fits[DPAS_NETMODEL_NCCL - 1].rel_residual;
    if (!r || cv->n < 2 || !cv->fits[DPAS_NETMODEL_NCCL - 1].defined)
        return 0;
    size_t i = x <= (double)cv->bytes[0] ? 0 : last_le(cv, x);
    size_t lo = i ? i - 1 : 0, hi = i + 2 < cv->n ? i + 2 : cv->n - 1;
    double h = 0;
    for (size_t j = lo; j <= hi; j++)
        h = fmax(h, lnerr(r[j]));
    return h;
}

/* Bandwidths a GPU cluster is not outside (bytes/s), for a regime whose bandwidth no curve
 * measured: a node's network at least one 200 Gb/s card (25 GB/s: HDR InfiniBand and
 * Slingshot 11, the slowest cards of the multi-node series scored; the model's bandwidth
 * across nodes is the node's, inter_bw x g^kappa); inside a node a bus bandwidth at most
 * NVLink 5's 900 GB/s per GPU each way (NVIDIA's 1.8 TB/s per GPU, both directions). */
#define NET_BW_MIN 25e9
#define INTRA_BW_MAX 900e9

/* The open side of a transfer between one node and several, from the model's own
 * uncertainty: the bandwidth of the regime not measured can be anywhere physics allows, so
 * the time can be off by the ratio of the assumed bandwidth to that limit. */
static double physical_span(const dpas_scale_fit *sf, const dpas_net_time *out)
{
    if (!sf || !sf->defined)
        return 0;
    if (out->regime == DPAS_REGIME_ONE_NODE) /* inside a node: as fast as NVLink allows */
        return fmax(0, log(INTRA_BW_MAX / sf->p.intra_bw));
    double g = (double)out->at.per_node; /* across nodes: as slow as one card per node */
    double net = sf->p.inter_bw * pow(g > 0 ? g : 1, sf->p.kappa);
    return fmax(0, log(net / NET_BW_MIN));
}

static void band(const dpas_band_constants *bc, const dpas_scale_fit *sf, const dpas_curve *cv,
                 double x, double d, dpas_net_time *out)
{
    double t = out->seconds, h = 0, own = 0;
    double per_octave =
        isfinite(cv->extrapolation_per_octave) ? cv->extrapolation_per_octave : OCTAVE_PRIOR;
    switch (out->basis) {
    case DPAS_BASIS_MEASURED: {
        double ip = cv->seconds_inplace[last_le(cv, x)];
        double spread = exp(run_spread_at(cv, x)); /* the runs merged at that size */
        out->band_lo = fmin(ip > 0 ? fmin(t, ip) : t, t / spread);
        out->band_hi = fmax(ip > 0 ? fmax(t, ip) : t, t * spread);
        return;
    }
    case DPAS_BASIS_INTERPOLATED: h = noise_at(cv, x); break;
    case DPAS_BASIS_EXTRAPOLATED_SIZE: h = noise_at(cv, x) + per_octave * octaves_out(cv, x); break;
    case DPAS_BASIS_TRANSFERRED:
        h = sf->loro_points ? sf->loro_q90 * sqrt(fmax(1, d / sf->loro_distance))
                            : TRANSFER_PER_DISTANCE * d;
        h = fmax(h, bc->transfer_floor);
        /* never narrower than the model's own uncertainty: its undetermined parameters, the
         * curve's noise */
        own = fmax(fmax(model_spread(sf, cv, x, out->at), misfit_at(cv, x)), noise_at(cv, x));
        h = fmax(h, own) + per_octave * octaves_out(cv, x);
        if (out->notes & (DPAS_NETTIME_LOWER_BOUND | DPAS_NETTIME_UPPER_BOUND)) {
            /* a bound: the closed side as far as such bounds were crossed, never narrower than
             * the curve's own noise or its runs' spread; the open side as far as such
             * transfers were off, never narrower than a transfer inside a regime */
            int k = bound_kind(out);
            double near =
                fmax(fmax(bc->bound_near[k], BOUND_NEAR_MIN), fmax(own, run_spread_at(cv, x)));
            double far = fmax(h, bc->bound_far[k]);
            if (k == BOUND_NODE)
                far = fmax(far, physical_span(sf, out));
            bool lower = out->notes & DPAS_NETTIME_LOWER_BOUND;
            out->band_lo = t * exp(-(lower ? near : far));
            out->band_hi = t * exp(lower ? far : near);
            return;
        }
        if (out->notes & DPAS_NETTIME_OTHER_REGIME) /* bounds that disagree: both sides open */
            h = fmax(h, bc->bound_far[bound_kind(out)]);
        break;
    default: out->band_lo = out->band_hi = NAN; return;
    }
    h = fmax(h, run_spread_at(cv, x)); /* never narrower than the runs merged disagree */
    out->band_lo = t * exp(-h), out->band_hi = t * exp(h);
}

/* ---- answers -------------------------------------------------------------------------------- */

/* The regime of the scale asked and of the curves the time rests on; when no curve measured
 * the asked regime, which bound the model's time is (NCCL's tuning: inside a node the graph's
 * intra-node speed, at <= 2 nodes that speed too, beyond its inter-node speed, which is never
 * faster): a node's links at least as fast as its network cards, so a time inside one node
 * carried from across nodes is at most the model's; across nodes carried from inside one, or
 * on more than 2 nodes from 2, at least. */
static unsigned regime_notes(const dpas_scale_fit *sf, const dpas_curve *const *cvs, size_t n,
                             bool exact, dpas_scale at, dpas_net_regime *regime,
                             dpas_net_regime *from)
{
    dpas_net_regime rg = dpas__ncclm_regime((double)at.ranks, (double)at.per_node);
    bool seen[4] = {false, false, false, false};
    int64_t g_lo = INT64_MAX, g_hi = 0; /* ranks per node measured across nodes */
    for (size_t i = 0; i < n; i++) {
        dpas_net_regime r = dpas__ncclm_regime((double)cvs[i]->ranks, (double)cvs[i]->per_node);
        seen[r] = true;
        if (r != DPAS_REGIME_ONE_NODE)
            g_lo = cvs[i]->per_node < g_lo ? cvs[i]->per_node : g_lo,
            g_hi = cvs[i]->per_node > g_hi ? cvs[i]->per_node : g_hi;
    }
    *regime = *from = rg;
    if (exact || at.ranks < 2)
        return 0;
    int dir = 0; /* +1: the time is at least the model's; -1: at most */
    unsigned notes = 0;
    if (!seen[rg]) {
        /* the nearest regime measured: across nodes stays across nodes when it can */
        *from = rg == DPAS_REGIME_ONE_NODE
                    ? (seen[DPAS_REGIME_TWO_NODES] ? DPAS_REGIME_TWO_NODES : DPAS_REGIME_MORE_NODES)
                : rg == DPAS_REGIME_TWO_NODES
                    ? (seen[DPAS_REGIME_MORE_NODES] ? DPAS_REGIME_MORE_NODES : DPAS_REGIME_ONE_NODE)
                    : (seen[DPAS_REGIME_TWO_NODES] ? DPAS_REGIME_TWO_NODES : DPAS_REGIME_ONE_NODE);
        bool upper = rg == DPAS_REGIME_ONE_NODE ||
                     (rg == DPAS_REGIME_TWO_NODES && seen[DPAS_REGIME_MORE_NODES]);
        dir = upper ? -1 : 1;
        notes |= DPAS_NETTIME_OTHER_REGIME;
    }
    /* across nodes at ranks per node none measured, the growth with them not determined: the
     * model's cards grow in proportion to the GPUs (kappa 1), which they never outgrow, so with
     * more per node the time is at least the model's, with fewer at most */
    if (rg != DPAS_REGIME_ONE_NODE && g_hi > 0 && sf && !(sf->determined & DPAS_SCALEFIT_KAPPA) &&
        (at.per_node > g_hi || at.per_node < g_lo)) {
        int k = at.per_node > g_hi ? 1 : -1;
        dir = dir && dir != k ? 2 : k; /* 2: the two bounds disagree, no side closed */
    }
    if (dir == 1)
        notes |= DPAS_NETTIME_LOWER_BOUND;
    else if (dir == -1)
        notes |= DPAS_NETTIME_UPPER_BOUND;
    return notes;
}

static unsigned notes_for(const dpas_scale_fit *sf, const dpas_curve *const *cvs, size_t n,
                          const dpas_curve *cv, bool exact, double x, dpas_scale at)
{
    unsigned notes = 0;
    if (x > (double)cv->bytes[cv->n - 1] && !cv->bandwidth_reached && cv->n >= 2)
        notes |= DPAS_NETTIME_LATENCY_BOUND;
    if (!exact) {
        bool one = at.per_node >= at.ranks;
        if (one && sf && !(sf->determined & DPAS_SCALEFIT_INTRA))
            notes |= DPAS_NETTIME_NO_INTRA;
        if (!one && sf && !(sf->determined & DPAS_SCALEFIT_INTER))
            notes |= DPAS_NETTIME_NO_INTER;
        for (size_t i = 0; i < n; i++)
            if (cvs[i]->per_node_from == DPAS_TOPO_FROM_ASSUMED)
                notes |= DPAS_NETTIME_ASSUMED_TOPOLOGY;
    }
    return notes;
}

/* The default model's answer (out->kind, seconds, basis). */
static int answer_default(const dpas_scale_fit *sf, const dpas_curve *const *cvs, size_t n,
                          const dpas_curve *exact, double x, dpas_scale at, dpas_net_time *out,
                          dpas_error *err)
{
    const dpas_curve *cv = out->curve;
    bool inside = x >= (double)cv->bytes[0] && x <= (double)cv->bytes[cv->n - 1];
    const char *cn = dpas_collective_name(cv->collective);
    if (exact && inside) {
        out->kind = DPAS_NETMODEL_EMPIRICAL;
        out->seconds = dpas__curve_empirical(exact, x);
        out->basis = (double)exact->bytes[last_le(exact, x)] == x ? DPAS_BASIS_MEASURED
                                                                  : DPAS_BASIS_INTERPOLATED;
        return 0;
    }
    out->basis = exact ? DPAS_BASIS_EXTRAPOLATED_SIZE : DPAS_BASIS_TRANSFERRED;
    if (sf && sf->defined) {
        out->kind = DPAS_NETMODEL_NCCL;
        if (exact) { /* the model's shape, through the curve's nearest measured size */
            double edge =
                x < (double)cv->bytes[0] ? (double)cv->bytes[0] : (double)cv->bytes[cv->n - 1];
            double me = dpas__ncclm_time(&sf->p, cv->collective, edge, (double)at.ranks,
                                         (double)at.per_node);
            double mx =
                dpas__ncclm_time(&sf->p, cv->collective, x, (double)at.ranks, (double)at.per_node);
            out->seconds = mx * dpas__curve_empirical(cv, edge) / me;
        } else {
            out->seconds =
                dpas__ncclm_anchored(&sf->p, cvs, n, x, (double)at.ranks, (double)at.per_node);
        }
        return 0;
    }
    if (exact) { /* no nccl model (fewer than 4 sizes): the curve's own slope */
        int ex;
        out->kind = DPAS_NETMODEL_EMPIRICAL;
        out->seconds = dpas__curve_empirical_ext(cv, x, &ex);
        if (isnan(out->seconds))
            return dpas__fail(err, DPAS_EUNDEF, "calibration",
                              "%s on %lld ranks: only %llu B was measured, and %.17g B is "
                              "beyond it",
                              cn, (long long)cv->ranks, (unsigned long long)cv->bytes[0], x);
        return 0;
    }
    return dpas__fail(err, DPAS_EUNDEF, "calibration",
                      "%s: no curve measured %lld ranks, %lld per node, and no model can "
                      "transfer to it: %s",
                      cn, (long long)at.ranks, (long long)at.per_node, sf ? sf->reason : "no fit");
}

/* Any other model's answer. */
static int answer_kind(const dpas_scale_fit *sf, const dpas_curve *exact, double x, dpas_scale at,
                       dpas_net_time *out, dpas_error *err)
{
    const dpas_curve *cv = out->curve;
    const char *cn = dpas_collective_name(cv->collective);
    bool inside = x >= (double)cv->bytes[0] && x <= (double)cv->bytes[cv->n - 1];
    out->basis = !exact   ? DPAS_BASIS_TRANSFERRED
                 : inside ? DPAS_BASIS_INTERPOLATED
                          : DPAS_BASIS_EXTRAPOLATED_SIZE;
    double t = NAN;
    const dpas_fit *f = &cv->fits[out->kind - 1];
    switch (out->kind) {
    case DPAS_NETMODEL_NCCL:
        if (!sf || !sf->defined)
            return dpas__fail(err, DPAS_EUNDEF, "calibration",
                              "the nccl model of %s is undefined: %s", cn,
                              sf ? sf->reason : "no fit");
        t = dpas__ncclm_time(&sf->p, cv->collective, x, (double)at.ranks, (double)at.per_node);
        break;
    case DPAS_NETMODEL_EMPIRICAL: {
        int ex;
        t = dpas__curve_empirical_ext(cv, x, &ex);
        if (isnan(t))
            return dpas__fail(err, DPAS_EUNDEF, "calibration",
                              "the empirical model of %s on %lld ranks has one size (%llu B) "
                              "and no regime to extrapolate to %.17g B with",
                              cn, (long long)cv->ranks, (unsigned long long)cv->bytes[0], x);
        if (!exact) { /* the nearest curve, by the nccl model's ratio of the two scales */
            if (!sf || !sf->defined)
                return dpas__fail(err, DPAS_EUNDEF, "calibration",
                                  "the empirical model of %s measured on %lld ranks cannot be "
                                  "transferred to %lld without the nccl model: %s",
                                  cn, (long long)cv->ranks, (long long)at.ranks,
                                  sf ? sf->reason : "no fit");
            double here = dpas__ncclm_time(&sf->p, cv->collective, x, (double)cv->ranks,
                                           (double)cv->per_node);
            double there =
                dpas__ncclm_time(&sf->p, cv->collective, x, (double)at.ranks, (double)at.per_node);
            t = here > 0 ? t * there / here : there;
        }
        break;
    }
    default: /* alpha_beta, piecewise: the ring's steps and factor at the asked ranks */
        if (!f->defined)
            return dpas__fail(err, DPAS_EUNDEF, "calibration", "the %s model is undefined: %s",
                              kind_names[out->kind], f->reason);
        t = dpas__curve_line(cv, out->kind, x, at.ranks);
        break;
    }
    out->seconds = t;
    return 0;
}

static int answer(const dpas_netmodel *m, int coll, int kind, double bytes, dpas_scale at,
                  const dpas_curve *want, dpas_net_time *out, dpas_error *err)
{
    const dpas_curve **cvs = malloc(m->ncurves * sizeof *cvs);
    if (!cvs)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    const dpas_curve *exact, *nearest;
    double d;
    size_t n = curves_of(m, coll, at, cvs, &exact, &nearest, &d);
    if (want) /* dpas_curve_time: that curve answers for its own scale */
        exact = want->ranks == at.ranks && want->per_node == at.per_node ? want : NULL,
        nearest = want;
    const dpas_scale_fit *sf = fit_for(m, coll);
    out->at = at;
    out->curve = exact ? exact : nearest;
    out->rescaled = !exact;
    out->extrapolated = bytes < (double)out->curve->bytes[0] ||
                        bytes > (double)out->curve->bytes[out->curve->n - 1];
    out->notes = notes_for(sf, cvs, n, out->curve, exact != NULL, bytes, at);
    out->notes |= regime_notes(sf, cvs, n, exact != NULL, at, &out->regime, &out->from_regime);
    int rc = 0;
    if (at.ranks == 1) { /* one rank: nothing crosses a link */
        out->kind = kind ? kind : DPAS_NETMODEL_EMPIRICAL;
        out->seconds = out->band_lo = out->band_hi = 0;
        out->notes = 0;
    } else if (kind == DPAS_NETMODEL_DEFAULT) {
        rc = answer_default(sf, cvs, n, exact, bytes, at, out, err);
        if (!rc)
            band(m->band ? m->band : &shipped, sf, out->curve, bytes, d, out);
    } else {
        out->kind = kind;
        rc = answer_kind(sf, exact, bytes, at, out, err);
    }
    free(cvs);
    return rc;
}

static int check_query(int kind, double bytes, dpas_error *err)
{
    if (kind < 0 || kind > DPAS_NETMODEL_KINDS)
        return dpas__fail(err, DPAS_EINVAL, "network_model", "unknown network model %d", kind);
    if (!(bytes > 0) || !isfinite(bytes))
        return dpas__fail(err, DPAS_EINVAL, "bytes", "bytes must be finite and > 0, got %g", bytes);
    return 0;
}

static void clear(dpas_net_time *out)
{
    memset(out, 0, sizeof *out);
    out->seconds = out->band_lo = out->band_hi = NAN;
}

int dpas_netmodel_time_at(const dpas_netmodel *m, dpas_collective collective,
                          dpas_netmodel_kind kind, double bytes, dpas_scale at, dpas_net_time *out,
                          dpas_error *err)
{
    clear(out);
    int rc;
    if (!m || !m->ncurves)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "no network model");
    const char *cn = dpas_collective_name(collective);
    if (!cn)
        return dpas__fail(err, DPAS_EINVAL, "collective", "unknown collective %d", collective);
    if ((rc = check_query(kind, bytes, err)))
        return rc;
    if (!first_curve(m, collective))
        return dpas__fail(err, DPAS_ENOENT, "collective",
                          "the calibration has no %s test (it has %zu test%s of other "
                          "collectives)",
                          cn, m->ncurves, m->ncurves == 1 ? "" : "s");
    dpas_scale s;
    if ((rc = resolve(m, collective, at, &s, err)))
        return rc;
    return answer(m, collective, kind, bytes, s, NULL, out, err);
}

int dpas_netmodel_time(const dpas_netmodel *m, dpas_collective collective, dpas_netmodel_kind kind,
                       double bytes, int64_t ranks, dpas_net_time *out, dpas_error *err)
{
    if (ranks < 0) {
        clear(out);
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 0, got %lld",
                          (long long)ranks);
    }
    return dpas_netmodel_time_at(m, collective, kind, bytes, (dpas_scale){ranks, 0}, out, err);
}

int dpas_curve_time(const dpas_netmodel *m, const dpas_curve *cv, dpas_netmodel_kind kind,
                    double bytes, int64_t ranks, dpas_net_time *out, dpas_error *err)
{
    clear(out);
    int rc;
    if (!m || !cv || !cv->n)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "no curve");
    if ((rc = check_query(kind, bytes, err)))
        return rc;
    if (ranks < 0)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 0, got %lld",
                          (long long)ranks);
    dpas_scale s = {cv->ranks, cv->per_node};
    if (ranks && ranks != cv->ranks &&
        (rc = resolve(m, cv->collective,
                      (dpas_scale){ranks, cv->per_node < ranks ? cv->per_node : ranks}, &s, err)))
        return rc;
    return answer(m, cv->collective, kind, bytes, s, cv, out, err);
}

/* ---- predictions ---------------------------------------------------------------------------- */

static void predict_one(const dpas_netmodel *m, int coll, dpas_scale at, uint64_t bytes,
                        dpas_net_prediction *r)
{
    double x = (double)bytes;
    r->collective = coll, r->at = at, r->bytes = bytes;
    for (int kind = 1; kind <= DPAS_NETMODEL_KINDS; kind++) {
        dpas_net_time t;
        clear(&t);
        r->seconds[kind - 1] = answer(m, coll, kind, x, at, NULL, &t, NULL) ? NAN : t.seconds;
    }
    dpas_net_time t;
    clear(&t);
    int rc = answer(m, coll, DPAS_NETMODEL_DEFAULT, x, at, NULL, &t, NULL);
    r->time_s = rc ? NAN : t.seconds;
    r->basis = rc ? DPAS_BASIS_NONE : t.basis;
    r->band_lo = rc ? NAN : t.band_lo, r->band_hi = rc ? NAN : t.band_hi;
    r->notes = t.notes, r->extrapolated = t.extrapolated;
    r->default_kind = rc ? 0 : t.kind;
    r->curve = t.curve ? (size_t)(t.curve - m->curves) : 0;
    r->regime = t.regime, r->from_regime = t.from_regime;
}

static int grow(dpas_net_prediction **p, size_t *cap, size_t need, dpas_error *err)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    dpas_net_prediction *q = realloc(*p, c * sizeof *q);
    if (!q)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    memset(q + *cap, 0, (c - *cap) * sizeof *q);
    *p = q, *cap = c;
    return 0;
}

int dpas_netmodel_predict_at(const dpas_netmodel *m, const uint64_t *sizes, size_t nsizes,
                             const dpas_scale *at, size_t nat, dpas_net_prediction **rows,
                             size_t *nrows, dpas_error *err)
{
    *rows = NULL, *nrows = 0;
    dpas_net_prediction *p = NULL;
    size_t cap = 0, k = 0;
    int rc = 0;
    if (!at) { /* each curve at its own scale */
        for (size_t c = 0; c < m->ncurves && !rc; c++) {
            const dpas_curve *cv = &m->curves[c];
            for (size_t i = 0; i < nsizes && !rc; i++) {
                if (!(rc = grow(&p, &cap, k + 1, err))) {
                    predict_one(m, cv->collective, (dpas_scale){cv->ranks, cv->per_node}, sizes[i],
                                &p[k]);
                    p[k++].curve = c;
                }
            }
        }
    }
    for (size_t f = 0; at && f < m->nscalefits && !rc; f++) {
        int coll = m->scalefits[f].collective;
        for (size_t a = 0; a < nat && !rc; a++) {
            dpas_scale s, t;
            if ((rc = resolve(m, coll, at[a], &s, err)))
                break;
            for (size_t b = 0; b < a && !rc; b++) /* "32" and "4x8" may be one scale */
                if (!resolve(m, coll, at[b], &t, NULL) && t.ranks == s.ranks &&
                    t.per_node == s.per_node)
                    rc = dpas__fail(err, DPAS_EINVAL, "at",
                                    "the scale %lldx%lld is asked twice (scales %zu and %zu)",
                                    (long long)(s.ranks / s.per_node), (long long)s.per_node, b + 1,
                                    a + 1);
            if (rc)
                break;
            const dpas_curve **cvs = malloc(m->ncurves * sizeof *cvs), *exact, *nearest;
            double d;
            if (!cvs) {
                rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
                break;
            }
            curves_of(m, coll, s, cvs, &exact, &nearest, &d);
            free(cvs);
            /* no sizes given: the sizes measured at that scale, or at the nearest */
            const uint64_t *sz = nsizes ? sizes : nearest->bytes;
            size_t ns = nsizes ? nsizes : nearest->n;
            for (size_t i = 0; i < ns && !rc; i++)
                if (!(rc = grow(&p, &cap, k + 1, err)))
                    predict_one(m, coll, s, sz[i], &p[k++]);
        }
    }
    if (rc) {
        free(p);
        return rc;
    }
    *rows = p, *nrows = k;
    return 0;
}

int dpas_netmodel_predict(const dpas_netmodel *m, const uint64_t *sizes, size_t nsizes,
                          dpas_net_prediction **rows, size_t *nrows, dpas_error *err)
{
    return dpas_netmodel_predict_at(m, sizes, nsizes, NULL, 0, rows, nrows, err);
}

/* ---- plot series ---------------------------------------------------------------------------- */

void dpas_net_series_free(dpas_net_series *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i].x), free(s[i].y);
    free(s);
}

int dpas_netmodel_series(const dpas_netmodel *m, size_t grid, dpas_net_series **out, size_t *n,
                         dpas_error *err)
{
    *out = NULL, *n = 0;
    if (grid < 2)
        return dpas__fail(err, DPAS_EINVAL, "grid", "a plot grid needs 2 points or more");
    size_t cap = m->ncurves * (1 + DPAS_NETMODEL_KINDS);
    dpas_net_series *s = calloc(cap ? cap : 1, sizeof *s);
    if (!s)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    size_t k = 0;
    for (size_t c = 0; c < m->ncurves; c++) {
        const dpas_curve *cv = &m->curves[c];
        double lo = log((double)cv->bytes[0]), hi = log((double)cv->bytes[cv->n - 1]);
        for (int kind = 1; kind <= DPAS_NETMODEL_KINDS && cv->n > 1; kind++) {
            if (!cv->fits[kind - 1].defined)
                continue;
            dpas_net_series *e = &s[k++];
            *e = (dpas_net_series){c, kind, grid, malloc(grid * sizeof(double)),
                                   malloc(grid * sizeof(double))};
            if (!e->x || !e->y) {
                dpas_net_series_free(s, k);
                return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
            }
            for (size_t j = 0; j < grid; j++) {
                e->x[j] = j == grid - 1 ? (double)cv->bytes[cv->n - 1]
                                        : exp(lo + (hi - lo) * (double)j / (double)(grid - 1));
                dpas_net_time t;
                dpas_curve_time(m, cv, kind, e->x[j], 0, &t, NULL);
                e->y[j] = t.seconds;
            }
        }
        dpas_net_series *e = &s[k++];
        *e = (dpas_net_series){c, 0, cv->n, malloc(cv->n * sizeof(double)),
                               malloc(cv->n * sizeof(double))};
        if (!e->x || !e->y) {
            dpas_net_series_free(s, k);
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        }
        for (size_t j = 0; j < cv->n; j++)
            e->x[j] = (double)cv->bytes[j], e->y[j] = cv->seconds[j];
    }
    *out = s, *n = k;
    return 0;
}
