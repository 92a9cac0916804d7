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

/* One collective's time, added into out. DPAS_ENOENT / DPAS_EUNDEF: no usable curve. */
static int add_time(const dpas_netmodel *m, int coll, int kind, double bytes, dpas_scale at,
                    dpas_net_step *out, dpas_error *err)
{
    dpas_net_time t;
    int rc = dpas_netmodel_time_at(m, coll, kind, bytes, at, &t, err);
    if (rc)
        return rc;
    out->seconds += t.seconds;
    out->band_lo += t.band_lo, out->band_hi += t.band_hi;
    out->basis = t.basis > out->basis ? t.basis : out->basis;
    out->extrapolated |= t.extrapolated;
    out->rescaled |= t.rescaled;
    out->notes |= t.notes;
    out->model = dpas_netmodel_kind_name(t.kind);
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
                           .rescaled = 1};
    for (size_t i = 0; i < m->ncurves; i++)
        if (m->curves[i].collective == DPAS_COLL_ALL_REDUCE && m->curves[i].ranks == s->dp_degree)
            out->rescaled = 0;
    return dpas_schedule_time(sched, s, rule, iterations, DPAS_TOPO_FLAT, links, &out->seconds,
                              err);
}

int dpas_schedule_time_net(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                           int64_t iterations, const dpas_netmodel *m, int kind,
                           const dpas_links *links, dpas_net_step *out, dpas_error *err)
{
    int rc;
    const int64_t N = s->dp_degree;
    dpas_report rep;
    *out = (dpas_net_step){.model = dpas_netmodel_kind_name(kind)};
    if ((rc = dpas_evaluate(s, &rep, err)))
        return rc;
    double share;
    const dpas_scale at = step_scale(s, &rep, &share);
    const double G = dpas_bytes_to_double(rep.gradient_bytes) * share;
    if (N == 1) /* one replica exchanges nothing */
        return 0;
    switch (sched) {
    case DPAS_SCHED_ALLREDUCE:
    case DPAS_SCHED_INNETWORK: /* NCCL's in-network reduction is measured as an all_reduce */
    case DPAS_SCHED_SHARDED:   /* reduce-scatter + all-gather: the ring AllReduce's bytes */
        rc = add_time(m, DPAS_COLL_ALL_REDUCE, kind, G, at, out, err);
        break;
    case DPAS_SCHED_SHARDED_DISTANCE: {
        /* the shards' AllReduce, then an AllReduce of the partial distances (its payload M from
         * the bytes a worker sends: 2(N-1)/N x M) */
        dpas_traffic tr;
        rc = add_time(m, DPAS_COLL_ALL_REDUCE, kind, G, at, out, err);
        if (!rc && !(rc = dpas_schedule_traffic(sched, s, rule, iterations, &tr, err))) {
            double payload = dpas_bytes_to_double(tr.scalars) * (double)N / (2.0 * (double)(N - 1));
            if (payload > 0)
                rc = add_time(m, DPAS_COLL_ALL_REDUCE, kind, payload, at, out, err);
        }
        break;
    }
    case DPAS_SCHED_ALLGATHER: /* every replica's gradient to every replica: N x G gathered */
        rc = add_time(m, DPAS_COLL_ALL_GATHER, kind, (double)N * G, at, out, err);
        if (rc == DPAS_ENOENT || rc == DPAS_EUNDEF)
            return from_links(sched, s, rule, iterations, m, links,
                              "alpha_beta (links: no all_gather curve)", out, err);
        return rc;
    default:
        /* a parameter server is no collective nccl-tests measures: the alpha-beta line of the
         * links (the calibration's AllReduce fit) over the server's incast */
        return from_links(sched, s, rule, iterations, m, links, "alpha_beta (links)", out, err);
    }
    if (rc == DPAS_ENOENT || rc == DPAS_EUNDEF) /* no (usable) all_reduce in the calibration */
        return from_links(sched, s, rule, iterations, m, links,
                          "alpha_beta (links: no all_reduce curve)", out, err);
    return rc;
}
