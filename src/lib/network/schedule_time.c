/* SPDX-License-Identifier: Apache-2.0 */
/* A schedule's time per step from a calibration (dpas/calibrate.h): the calibration's times of
 * the collectives the schedule is made of, instead of an alpha-beta line, with the basis and band
 * of each. */
#include "../internal.h"

#include <math.h>

/* The scale of a data-parallel step's collective, and the share of the gradient it carries.
 * A replica holds g = accelerators / N accelerators, and NCCL runs the exchange of replicas that
 * span several accelerators as one ring (or tree) per accelerator of a replica, each on its own
 * links with its share of the gradient (as tensor- or pipeline-parallel ranks of a replica each
 * all-reduce their own part of the model). So, with A accelerators per node:
 *   g <= A, A a multiple of g: one collective of G bytes over N x g ranks, A of them per node;
 *   g = k x A (a replica spans k nodes): a collective of G / k bytes over N x A ranks, A per node
 *     (A x k rings, each of N ranks on nodes of their own, each with G / (A k) bytes).
 * Replicas that do not tile the nodes evenly: N ranks, N / nodes per node (at least 1). */
static dpas_scale step_scale(const dpas_scenario *s, const dpas_report *r, double *share)
{
    const int64_t N = s->dp_degree, A = r->accelerators_per_node;
    *share = 1;
    if (N > 0 && A > 0 && r->accelerators > 0 && r->accelerators % N == 0) {
        const int64_t g = r->accelerators / N;
        if (g <= A && A % g == 0 && N <= INT64_MAX / g)
            return (dpas_scale){N * g, A};
        if (g > A && g % A == 0 && N <= INT64_MAX / A) {
            *share = 1.0 / (double)(g / A);
            return (dpas_scale){N * A, A};
        }
    }
    int64_t per = 1;
    if (s->nodes > 0 && N >= s->nodes && N % s->nodes == 0)
        per = N / s->nodes;
    return (dpas_scale){N, per};
}

/* How far a collective's time is off when it is transferred from the all_reduce of the same log
 * by bus-bandwidth equivalence: quantiles of e = ln(measured / transferred) at sizes >= 1 MiB
 * on the shared H100 five-test logs (tests/data/nccl-scaling/xxrjun_h100_*_five_tests.log, six
 * scales from 4 to 80 ranks), by scripts/transfer_errors.py; docs/calibration.md derives them.
 * A collective those logs did not measure, or a source other than all_reduce, takes the pooled
 * quantiles of all four. The band of a transferred time is its source's band times
 * [exp(min(q05, 0)), exp(max(q95, 0))]. */
static void transfer_band(int coll, int src, double *lo, double *hi)
{
    double q05 = -0.0498, q95 = 2.0056; /* every collective pooled (204 points) */
    if (src == DPAS_COLL_ALL_REDUCE) {
        switch (coll) {
        case DPAS_COLL_ALL_GATHER: q05 = -0.1169, q95 = 0.2907; break;     /* 50 points */
        case DPAS_COLL_REDUCE_SCATTER: q05 = -0.1237, q95 = 0.2878; break; /* 50 points */
        case DPAS_COLL_ALLTOALL: q05 = 0.0252, q95 = 1.8442; break;        /* 50 points */
        case DPAS_COLL_SENDRECV: q05 = -0.0144, q95 = 3.0370; break;       /* 54 points */
        default: break;
        }
    }
    *lo = exp(q05 < 0 ? q05 : 0);
    *hi = exp(q95 > 0 ? q95 : 0);
}

/* "empirical, transferred from all_reduce", ...: the model text of a step that timed a
 * collective from another's curves (static, as dpas_net_step.model is). */
#define TR_TEXT(k, name) k ", transferred from " name,
#define TR_DEFAULT(id, name) TR_TEXT("default", name)
#define TR_ALPHA_BETA(id, name) TR_TEXT("alpha_beta", name)
#define TR_PIECEWISE(id, name) TR_TEXT("piecewise", name)
#define TR_EMPIRICAL(id, name) TR_TEXT("empirical", name)
#define TR_NCCL(id, name) TR_TEXT("nccl", name)
static const char *const transferred_text[DPAS_NETMODEL_KINDS + 1][DPAS_COLL_COUNT] = {
    {DPAS_COLLECTIVE_MAP(TR_DEFAULT)},
    {DPAS_COLLECTIVE_MAP(TR_ALPHA_BETA)},
    {DPAS_COLLECTIVE_MAP(TR_PIECEWISE)},
    {DPAS_COLLECTIVE_MAP(TR_EMPIRICAL)},
    {DPAS_COLLECTIVE_MAP(TR_NCCL)}};
#undef TR_TEXT
#undef TR_DEFAULT
#undef TR_ALPHA_BETA
#undef TR_PIECEWISE
#undef TR_EMPIRICAL
#undef TR_NCCL
static const char *const fabric_text[DPAS_NETMODEL_KINDS + 1] = {
    "default, inter-node link from the fabric", "alpha_beta, inter-node link from the fabric",
    "piecewise, inter-node link from the fabric", "empirical, inter-node link from the fabric",
    "nccl, inter-node link from the fabric"};

static const char *const accelerator_text[DPAS_NETMODEL_KINDS + 1] = {
    "default, intra-node link from the accelerator",
    "alpha_beta, intra-node link from the accelerator",
    "piecewise, intra-node link from the accelerator",
    "empirical, intra-node link from the accelerator",
    "nccl, intra-node link from the accelerator"};

/* How far a collective inside one node is from the ring on the accelerator's NVLink at its
 * nominal rate (half its bidirectional nvlink_GBps each way, the bus bandwidth of a ring
 * through it): measured / nominal time, the range over the one-node curves of the H100 series
 * (tests/data/nccl-scaling xxrjun_h100_1node_x{4,8} and nccl-scaling-extra's cluster00 1-node
 * logs, five collectives each, 20 curves): peak busbw 348.0 to 482.3 GB/s against 450 GB/s,
 * so 450 / 482.3 = 0.933 (NVLink SHARP's all_reduce beats the ring) to 450 / 348.0 = 1.293. */
#define NVLINK_BAND_LO 0.933
#define NVLINK_BAND_HI 1.293

/* A collective across nodes on the fabric's links alone (the ring of dpas_collective_ring, one
 * link per rank: latency per step, bus bytes over the link's bandwidth). */
static double fabric_time(const dpas_fabric *f, int coll, double bytes, int64_t ranks)
{
    double steps, factor;
    if (dpas_collective_ring(coll, ranks, &steps, &factor, NULL))
        return NAN;
    return steps * f->latency + factor * bytes / f->bandwidth;
}

/* One collective's time, added into out (count times). A collective the calibration lacks (or
 * cannot answer for) is timed from the first it has of all_reduce, all_gather, reduce_scatter,
 * ... by bus-bandwidth equivalence: the same bus bytes (nccl-tests' busbw = algbw x factor) take
 * the same time, so c of M bytes on n ranks takes what the source measured at
 * M x factor_c(n) / factor_src(n); its basis is transferred and its band widened by
 * transfer_band. DPAS_ENOENT / DPAS_EUNDEF: no collective of the calibration can answer. */
static int add_time(const dpas_netmodel *m, const dpas_fabric *fab, const dpas_node *node, int coll,
                    int kind, double bytes, dpas_scale at, double count, dpas_net_step *out,
                    dpas_error *err)
{
    dpas_net_time t;
    if (count <= 0 || bytes <= 0 || at.ranks <= 1)
        return 0; /* nothing crosses a link */
    int rc = dpas_netmodel_time_at(m, coll, kind, bytes, at, &t, err);
    for (int c = 0; (rc == DPAS_ENOENT || rc == DPAS_EUNDEF) && c < DPAS_COLL_COUNT; c++) {
        double sc, fc, ss, fs;
        if (c == coll || dpas_collective_ring(coll, at.ranks, &sc, &fc, NULL) ||
            dpas_collective_ring(c, at.ranks, &ss, &fs, NULL) || !(fs > 0) || !(fc > 0))
            continue;
        dpas_error e2;
        rc = dpas_netmodel_time_at(m, c, kind, bytes * fc / fs, at, &t, &e2);
        if (rc == 0) {
            double lo, hi;
            transfer_band(coll, c, &lo, &hi);
            t.band_lo *= lo, t.band_hi *= hi;
            t.basis = DPAS_BASIS_TRANSFERRED;
            out->transferred |= 1u << coll;
            out->transferred_from = c;
        } else if (rc != DPAS_ENOENT && rc != DPAS_EUNDEF) {
            if (err)
                *err = e2;
            return rc;
        }
    }
    if (rc)
        return rc;
    /* several nodes asked and no curve measured across nodes: the calibration's time assumes
     * the network as fast as the node's own links; the fabric given says how fast it is, and the
     * slower of the two is the time (its band likewise) */
    if ((t.notes & DPAS_NETTIME_NO_INTER) && fab && fab->bandwidth > 0 && fab->latency >= 0) {
        double tf = fabric_time(fab, coll, bytes, at.ranks);
        if (tf > t.seconds) {
            /* the link at its full rate is a floor; above it, the calibration's relative width */
            double up = t.band_hi / t.seconds;
            t.band_lo = tf;
            t.band_hi = tf * (up > 1 ? up : 1);
            t.seconds = tf;
            out->fabric_used = 1;
        }
    }
    /* one node asked and no curve measured inside one: the calibration's time takes the node's
     * links as fast as its network (the only bandwidth it measured); the accelerator's NVLink
     * says how fast they are, and times the collective instead: the ring's steps x the node's
     * link latency + bus bytes over half the bidirectional NVLink bandwidth */
    const dpas_hardware *acc = node ? node->accelerator : NULL;
    bool one_node = at.per_node >= at.ranks;
    if (one_node && (t.notes & DPAS_NETTIME_NO_INTRA) && acc && acc->nvlink_bandwidth > 0) {
        double steps, factor;
        if (!dpas_collective_ring(coll, at.ranks, &steps, &factor, NULL)) {
            double lat = node->intra_latency > 0 ? node->intra_latency : 0;
            double tn = steps * lat + factor * bytes / (acc->nvlink_bandwidth / 2);
            t.seconds = tn;
            t.band_lo = tn * NVLINK_BAND_LO, t.band_hi = tn * NVLINK_BAND_HI;
            t.basis = DPAS_BASIS_TRANSFERRED;
            t.notes &= ~(unsigned)(DPAS_NETTIME_OTHER_REGIME | DPAS_NETTIME_LOWER_BOUND |
                                   DPAS_NETTIME_UPPER_BOUND);
            out->accelerator_used = 1;
        }
    }
    out->seconds += count * t.seconds;
    out->band_lo += count * t.band_lo, out->band_hi += count * t.band_hi;
    out->basis = t.basis > out->basis ? t.basis : out->basis;
    out->extrapolated |= t.extrapolated;
    out->rescaled |= t.rescaled;
    out->notes |= t.notes;
    out->model = out->transferred        ? transferred_text[t.kind][out->transferred_from]
                 : out->fabric_used      ? fabric_text[t.kind]
                 : out->accelerator_used ? accelerator_text[t.kind]
                                         : dpas_netmodel_kind_name(t.kind);
    return 0;
}

/* A time from the links: the alpha-beta line of the calibration's all_reduce test, at N ranks.
 * Its basis is `transferred` (a line fitted to another collective, or to one scale, applied to
 * this schedule and scale), with no band: no measurement says how far such a time can be; it is
 * rescaled unless an all_reduce curve was measured on N ranks. */
static int from_links(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                      int64_t iterations, const dpas_netmodel *m, const dpas_links *links,
                      const char *why, dpas_net_step *out, dpas_error *err)
{
    *out = (dpas_net_step){.model = why,
                           .basis = DPAS_BASIS_TRANSFERRED,
                           .band_lo = NAN,
                           .band_hi = NAN,
                           .rescaled = 1,
                           .transferred_from = DPAS_COLL_UNKNOWN};
    for (size_t i = 0; i < m->ncurves; i++)
        if (m->curves[i].collective == DPAS_COLL_ALL_REDUCE && m->curves[i].ranks == s->dp_degree)
            out->rescaled = 0;
    return dpas__schedule_time(sched, s, rule, iterations, DPAS_TOPO_FLAT, links, &out->seconds,
                               err);
}

/* dpas_schedule_collectives of a scenario already validated (dpas__evaluate: not again). */
static int collectives_of(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                          int64_t iterations, dpas_schedule_collective *runs, size_t *nruns,
                          dpas_error *err)
{
    int rc;
    *nruns = 0;
    if ((unsigned)sched >= DPAS_SCHED_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "schedule", "unknown schedule %d", (int)sched);
    dpas_report rep;
    if ((rc = dpas__evaluate(s, &rep, err)))
        return rc;
    const int64_t N = s->dp_degree;
    double share;
    const dpas_scale at = step_scale(s, &rep, &share);
    const double G = dpas_bytes_to_double(rep.gradient_bytes) * share, n = (double)N;
    if (N == 1) /* one replica exchanges nothing */
        return 0;
    size_t k = 0;
#define RUN(c, b, times) (runs[k++] = (dpas_schedule_collective){(c), (b), at, (times)})
    switch (sched) {
    case DPAS_SCHED_ALLREDUCE:
    case DPAS_SCHED_INNETWORK: /* NCCL's in-network reduction (SHARP, NVLS) is its all_reduce */
        RUN(DPAS_COLL_ALL_REDUCE, G, 1);
        break;
    case DPAS_SCHED_ALLGATHER: /* every gradient to every replica: N x G gathered */
        RUN(DPAS_COLL_ALL_GATHER, n * G, 1);
        break;
    case DPAS_SCHED_SHARDED:
    case DPAS_SCHED_SHARDED_DISTANCE:
        /* each replica sends shard i of its gradient to replica i (alltoall of its G bytes),
         * applies the rule to its shard, and the results are gathered (all_gather of G) */
        RUN(DPAS_COLL_ALLTOALL, G, 1);
        if (sched == DPAS_SCHED_SHARDED_DISTANCE) {
            const bool per_round =
                rule && (rule->caps & (DPAS_RULE_CAP_ITERATIVE | DPAS_RULE_CAP_NORMS));
            if (per_round) /* N partial norms (fp64) per round, one all_reduce each */
                RUN(DPAS_COLL_ALL_REDUCE, 8.0 * n,
                    (rule->caps & DPAS_RULE_CAP_ITERATIVE) && iterations > 0 ? (double)iterations
                                                                             : 1.0);
            else /* the upper triangle of the partial squared distances (fp64), once */
                RUN(DPAS_COLL_ALL_REDUCE, 8.0 * n * (n - 1) / 2, 1);
        }
        RUN(DPAS_COLL_ALL_GATHER, G, 1);
        break;
    case DPAS_SCHED_PS:
    case DPAS_SCHED_PS_SEPARATE:
        /* a robust rule needs every gradient whole at the server (a reduce would sum them): a
         * gather of the gradients to the server, then a broadcast of the aggregate. nccl-tests'
         * gather of M bytes on n ranks brings (n-1)/n x M to the root: on one of the workers the
         * server receives (N-1) G, so M = N G; on a separate node it receives N G, so
         * M = N^2 G / (N-1), on the workers' scale (the server's own rank is not counted) */
        RUN(DPAS_COLL_GATHER, sched == DPAS_SCHED_PS ? n * G : n * n * G / (n - 1), 1);
        RUN(DPAS_COLL_BROADCAST, G, 1);
        break;
    default: break;
    }
#undef RUN
    *nruns = k;
    return 0;
}

int dpas_schedule_collectives(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                              int64_t iterations, dpas_schedule_collective *runs, size_t *nruns,
                              dpas_error *err)
{
    int rc;
    *nruns = 0;
    if ((rc = dpas_scenario_validate(s, err)))
        return rc;
    return collectives_of(sched, s, rule, iterations, runs, nruns, err);
}

int dpas__schedule_time_net(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                            int64_t iterations, const dpas_netmodel *m, int kind,
                            const dpas_links *links, dpas_net_step *out, dpas_error *err)
{
    int rc;
    dpas_schedule_collective runs[DPAS_SCHEDULE_MAX_COLLECTIVES];
    size_t n = 0;
    *out = (dpas_net_step){.model = dpas_netmodel_kind_name(kind),
                           .transferred_from = DPAS_COLL_UNKNOWN};
    if ((rc = collectives_of(sched, s, rule, iterations, runs, &n, err)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        rc = add_time(m, s->fabric_entry, s->node_entry, runs[i].collective, kind, runs[i].bytes,
                      runs[i].at, runs[i].count, out, err);
        if (rc == DPAS_ENOENT || rc == DPAS_EUNDEF) /* no collective the calibration can use */
            return from_links(sched, s, rule, iterations, m, links,
                              "alpha_beta (links: no usable curve)", out, err);
        if (rc)
            return rc;
    }
    return 0;
}

int dpas_schedule_time_net(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                           int64_t iterations, const dpas_netmodel *m, dpas_netmodel_kind kind,
                           const dpas_links *links, dpas_net_step *out, dpas_error *err)
{
    int rc;
    *out = (dpas_net_step){.model = dpas_netmodel_kind_name(kind),
                           .transferred_from = DPAS_COLL_UNKNOWN};
    if ((rc = dpas_scenario_validate(s, err)))
        return rc;
    return dpas__schedule_time_net(sched, s, rule, iterations, m, kind, links, out, err);
}
