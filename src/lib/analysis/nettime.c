/* A schedule's time per step from a calibrated network model (dpas/calibrate.h): the measured
 * nccl-tests curve of the collective the schedule is made of, instead of an alpha-beta line. */
#include "../internal.h"

#include <math.h>

int dpas_schedule_time_net(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                           int64_t iterations, const dpas_netmodel *m, int kind,
                           const dpas_links *links, dpas_net_step *out, dpas_error *err)
{
    int rc;
    const int64_t N = s->dp_degree;
    dpas_report rep;
    *out = (dpas_net_step){0};
    if ((rc = dpas_evaluate(s, &rep, err)))
        return rc;
    const double G = dpas_bytes_to_double(rep.gradient_bytes);
    dpas_net_time t = {0};
    out->model = dpas_netmodel_kind_name(kind);
    if (N == 1) /* one replica exchanges nothing */
        return 0;
    switch (sched) {
    case DPAS_SCHED_ALLREDUCE:
    case DPAS_SCHED_INNETWORK: /* NCCL's in-network reduction is measured as an all_reduce */
    case DPAS_SCHED_SHARDED:   /* reduce-scatter + all-gather: the ring AllReduce's bytes */
        rc = dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, kind, G, N, &t, err);
        if (rc == DPAS_ENOENT || rc == DPAS_EUNDEF) { /* no (usable) all_reduce in the file */
            out->model = "alpha_beta (links: no all_reduce curve)";
            return dpas_schedule_time(sched, s, rule, iterations, DPAS_TOPO_FLAT, links,
                                      &out->seconds, err);
        }
        if (rc)
            return rc;
        break;
    case DPAS_SCHED_SHARDED_DISTANCE: {
        /* the shards' AllReduce, then an AllReduce of the partial distances (its payload M from
         * the bytes a worker sends: 2(N-1)/N x M) */
        dpas_traffic tr;
        dpas_net_time d;
        rc = dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, kind, G, N, &t, err);
        if (rc == DPAS_ENOENT || rc == DPAS_EUNDEF) {
            out->model = "alpha_beta (links: no all_reduce curve)";
            return dpas_schedule_time(sched, s, rule, iterations, DPAS_TOPO_FLAT, links,
                                      &out->seconds, err);
        }
        if (rc || (rc = dpas_schedule_traffic(sched, s, rule, iterations, &tr, err)))
            return rc;
        double payload = dpas_bytes_to_double(tr.scalars) * (double)N / (2.0 * (double)(N - 1));
        if (payload > 0) {
            if ((rc = dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, kind, payload, N, &d, err)))
                return rc;
            t.seconds += d.seconds;
            t.extrapolated |= d.extrapolated;
        }
        break;
    }
    case DPAS_SCHED_ALLGATHER: /* every replica's gradient to every replica: N x G gathered */
        rc = dpas_netmodel_time(m, DPAS_COLL_ALL_GATHER, kind, (double)N * G, N, &t, err);
        if (rc == DPAS_ENOENT || rc == DPAS_EUNDEF) { /* no (usable) all_gather in the file */
            out->model = "alpha_beta (links: no all_gather curve)";
            return dpas_schedule_time(sched, s, rule, iterations, DPAS_TOPO_FLAT, links,
                                      &out->seconds, err);
        }
        if (rc)
            return rc;
        break;
    default:
        /* a parameter server is no collective nccl-tests measures: the alpha-beta line of the
         * links (the calibration's AllReduce fit) over the server's incast */
        out->model = "alpha_beta (links)";
        return dpas_schedule_time(sched, s, rule, iterations, DPAS_TOPO_FLAT, links, &out->seconds,
                                  err);
    }
    out->seconds = t.seconds;
    out->model = dpas_netmodel_kind_name(t.kind);
    out->extrapolated = t.extrapolated;
    out->rescaled = t.rescaled;
    return 0;
}
