/* SPDX-License-Identifier: Apache-2.0 */
/* Schedules that realise an aggregation rule on a network: the exact bytes each worker moves
 * per step, and alpha-beta time over a fleet's links, flat or hierarchical. A worker is one
 * data-parallel replica; s is one replica's gradient bytes and N the dp_degree. */
#include "../internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Distances and norms travel as fp64 scalars. */
#define SCALAR_BYTES 8u

/* The names are the header's table (DPAS_SCHEDULE_MAP); each schedule's line and source here. */
#define SCHED_NAME(id, name) [DPAS_SCHED_##id] = name,
static const char *const sched_names[DPAS_SCHED_COUNT] = {DPAS_SCHEDULE_MAP(SCHED_NAME)};
#undef SCHED_NAME

static const struct {
    const char *summary, *source;
} scheds[DPAS_SCHED_COUNT] = {
    [DPAS_SCHED_ALLREDUCE] =
        {"ring AllReduce of the sum: reduce-scatter then all-gather, 2(N-1)/N s per worker",
         "Patarasuk and Yuan 2009 (bandwidth-optimal ring); Thakur, Rabenseifner and Gropp 2005; "
         "mlsysim"},
    [DPAS_SCHED_ALLGATHER] =
        {"all-gather every replica's gradient, then the rule locally: (N-1) s per worker",
         "the seed's gather_factor; nccl-tests AllGather"},
    [DPAS_SCHED_PS] =
        {"parameter server on one worker: its link receives (N-1) s, then broadcasts (N-1) s",
         "Li et al., OSDI 2014 (parameter server); incast on one link"},
    [DPAS_SCHED_PS_SEPARATE] =
        {"parameter server on its own node: its link receives N s, then sends N s",
         "Li et al., OSDI 2014 (parameter server)"},
    [DPAS_SCHED_SHARDED] =
        {"all-to-all of shards, the rule per shard, all-gather of results: 2(N-1)/N s",
         "BTARD, Gorbunov et al. 2022 (yandex-research/btard: scatter, CenteredClip per shard, "
         "all_gather)"},
    [DPAS_SCHED_SHARDED_DISTANCE] =
        {"sharded, plus an AllReduce of partial squared distances (N(N-1)/2 fp64) or, for "
         "iterative "
         "rules, of N partial norms per iteration: 2(N-1)/N s + O(N^2) scalars",
         "derived here: ||x_i - x_j||^2 is a sum over shards, so shard owners can score Krum"},
    [DPAS_SCHED_INNETWORK] = {"in-network AllReduce (SHARP): each worker sends and receives s once",
                              "Graham et al. 2016 (SHARP); nccl-tests"},
};

const char *dpas_schedule_name(dpas_schedule_id s)
{
    return (unsigned)s < DPAS_SCHED_COUNT ? sched_names[s] : NULL;
}
const char *dpas_schedule_summary(dpas_schedule_id s)
{
    return (unsigned)s < DPAS_SCHED_COUNT ? scheds[s].summary : NULL;
}
const char *dpas_schedule_source(dpas_schedule_id s)
{
    return (unsigned)s < DPAS_SCHED_COUNT ? scheds[s].source : NULL;
}
int dpas_schedule_from_name(const char *name)
{
    for (int i = 0; i < DPAS_SCHED_COUNT; i++)
        if (name && !dpas__strcasecmp(name, sched_names[i]))
            return i;
    return -1;
}

int dpas_schedule_parse(const char *field, const char *name, dpas_schedule_id *out, dpas_error *err)
{
    int k = dpas_schedule_from_name(name);
    if (k >= 0) {
        *out = (dpas_schedule_id)k;
        return 0;
    }
    char q[96];
    dpas__buf b = {0};
    for (int i = 0; i < DPAS_SCHED_COUNT; i++)
        dpas__buf_list_item(&b, (size_t)i, DPAS_SCHED_COUNT, sched_names[i]);
    int rc = dpas__fail(err, DPAS_ENOENT, field, "%s: unknown schedule %s; expected %s", field,
                        dpas__quote(name ? name : "(null)", q, sizeof q), b.data ? b.data : "");
    free(b.data);
    return rc;
}

static bool is_iterative(const dpas_rule *r) { return r && (r->caps & DPAS_RULE_CAP_ITERATIVE); }
/* N scalars a round (norms, or distances to one gradient), not N(N-1)/2 distances */
static bool n_scalars(const dpas_rule *r)
{
    return r && (r->caps & (DPAS_RULE_CAP_ITERATIVE | DPAS_RULE_CAP_NORMS));
}

int dpas_schedule_realises(dpas_schedule_id s, const dpas_rule *r, const char **why)
{
    const char *w = NULL;
    switch (s) {
    case DPAS_SCHED_ALLREDUCE:
    case DPAS_SCHED_INNETWORK:
        /* a sum is all it yields: the mean, or a majority vote as the sign of a sum of signs */
        if (!(r->caps & DPAS_RULE_CAP_SUMS))
            w = "a reduction yields only the sum of the gradients";
        break;
    case DPAS_SCHED_ALLGATHER:
    case DPAS_SCHED_PS:
    case DPAS_SCHED_PS_SEPARATE: break; /* every gradient arrives whole: any rule */
    case DPAS_SCHED_SHARDED:
        if (!(r->caps & DPAS_RULE_CAP_COORDINATEWISE))
            w = "needs distances or norms of whole gradients (use sharded_distance)";
        break;
    case DPAS_SCHED_SHARDED_DISTANCE:
        if (!(r->caps & DPAS_RULE_CAP_DISTANCES))
            w = "a coordinate-wise rule needs no distances (use sharded)";
        break;
    default: w = "unknown schedule"; break;
    }
    if (why)
        *why = w;
    return w == NULL;
}

/* The latency steps of a schedule, checked: 2(N-1) alone passes 2^63 - 1 for N above 2^62. */
static int add_messages(int64_t *messages, uint64_t steps, dpas_schedule_id sched, uint64_t n,
                        dpas_error *err)
{
    int64_t m;
    if (steps > (uint64_t)INT64_MAX || __builtin_add_overflow(*messages, (int64_t)steps, &m))
        return dpas__fail(err, DPAS_ERANGE, "messages",
                          "messages: the latency steps of %s at dp_degree %llu pass 2^63 - 1, the "
                          "largest count dpas holds",
                          sched_names[sched], (unsigned long long)n);
    *messages = m;
    return 0;
}

int dpas_schedule_traffic(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                          int64_t iterations, dpas_traffic *out, dpas_error *err)
{
    int rc;
    if ((unsigned)sched >= DPAS_SCHED_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "schedule", "unknown schedule %d", (int)sched);
    if (iterations < 0)
        return dpas__fail(err, DPAS_EINVAL, "iterations", "iterations must be >= 0, got %lld",
                          (long long)iterations);
    if ((rc = dpas_scenario_validate(s, err)))
        return rc;
    return dpas__schedule_traffic(sched, s, rule, iterations, out, err);
}

int dpas__schedule_traffic(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                           int64_t iterations, dpas_traffic *out, dpas_error *err)
{
    int rc;
    const uint64_t n = (uint64_t)s->dp_degree, P = s->parameters;
    const dpas_rational w = s->gradient_bytes_per_param;
    memset(out, 0, sizeof *out);
    out->sent.frac_den = out->received.frac_den = out->scalars.frac_den = 1;
    if (n == 1)
        return 0; /* one replica exchanges nothing */
    /* n <= 2^63 - 1, so 2(n - 1) < 2^64: the factors themselves fit; their products are checked */
    uint64_t steps;
    switch (sched) {
    case DPAS_SCHED_ALLREDUCE:
    case DPAS_SCHED_SHARDED:
    case DPAS_SCHED_SHARDED_DISTANCE:
        rc = dpas__bytes_scaled(P, w, 2 * (n - 1), n, &out->sent, err);
        steps = 2 * (n - 1);
        break;
    case DPAS_SCHED_ALLGATHER:
    case DPAS_SCHED_PS:
        rc = dpas__bytes_scaled(P, w, n - 1, 1, &out->sent, err);
        steps = sched == DPAS_SCHED_PS ? 2 : n - 1;
        break;
    case DPAS_SCHED_PS_SEPARATE:
        rc = dpas__bytes_scaled(P, w, n, 1, &out->sent, err);
        steps = 2;
        break;
    default: /* in-network */
        rc = dpas_bytes_of(P, w, &out->sent, err);
        steps = 2;
        break;
    }
    if ((rc = dpas__bytes_field(rc, "bytes_per_worker", err)) ||
        (rc = add_messages(&out->messages, steps, sched, n, err)))
        return rc;
    if (sched == DPAS_SCHED_SHARDED_DISTANCE) {
        /* An AllReduce of the scalars: the upper triangle of the distance matrix once, or the
         * N partial norms of each iteration of an iterative rule. Counted in 128 bits: N(N-1)/2
         * passes 2^64 for N above 2^32.5, and iterations x N for large iterations. */
        dpas__u128 scalars, rounds = 1;
        if (n_scalars(rule)) {
            rounds = is_iterative(rule) && iterations > 0 ? (uint64_t)iterations : 1;
            scalars = (dpas__u128)n * rounds;
        } else {
            scalars = (dpas__u128)n * (n - 1) / 2;
        }
        if (scalars > UINT64_MAX && is_iterative(rule))
            return dpas__fail(err, DPAS_ERANGE, "scalar_bytes",
                              "scalar_bytes: dp_degree %llu x %llu iterations is more than 2^64 "
                              "scalars of 8 B; byte counts stop below 2^64 bytes",
                              (unsigned long long)n, (unsigned long long)rounds);
        if (scalars > UINT64_MAX)
            return dpas__fail(err, DPAS_ERANGE, "scalar_bytes",
                              "scalar_bytes: N(N-1)/2 distances for dp_degree %llu is more than "
                              "2^64 scalars of 8 B; byte counts stop below 2^64 bytes",
                              (unsigned long long)n);
        dpas_rational b = {SCALAR_BYTES, 1};
        if ((rc = dpas__bytes_field(
                 dpas__bytes_scaled((uint64_t)scalars, b, 2 * (n - 1), n, &out->scalars, err),
                 "scalar_bytes", err)) ||
            (rc = dpas__bytes_field(dpas__bytes_add(out->sent, out->scalars, &out->sent, err),
                                    "bytes_per_worker", err)))
            return rc;
        dpas__u128 more = (dpas__u128)(2 * (n - 1)) * rounds;
        if ((rc = add_messages(&out->messages, more > UINT64_MAX ? UINT64_MAX : (uint64_t)more,
                               sched, n, err)))
            return rc;
    }
    out->received = out->sent;
    return 0;
}

int dpas_scenario_links(const dpas_scenario *s, dpas_links *out, dpas_error *err)
{
    if (!s->fabric_entry)
        return dpas__fail(
            err, DPAS_EINVAL, "fleet.fabric",
            "time needs the fleet's fabric: use a registry fleet or give fleet.fabric");
    if (!s->node_entry)
        return dpas__fail(err, DPAS_EINVAL, "fleet.node",
                          "time needs the fleet's node: use a registry fleet or give fleet.node");
    out->inter_bandwidth = s->fabric_entry->bandwidth;
    out->inter_latency = s->fabric_entry->latency;
    out->intra_bandwidth = s->node_entry->intra_bandwidth;
    out->intra_latency = s->node_entry->intra_latency;
    return 0;
}

int dpas_ring_allreduce_time(double bytes, int64_t n, double bw, double lat, double *seconds,
                             dpas_error *err)
{
    if (n < 1)
        return dpas__fail(err, DPAS_EINVAL, "n_gpus", "n_gpus must be >= 1, got %lld",
                          (long long)n);
    if (!(bw > 0) || !(lat >= 0) || !(bytes >= 0))
        return dpas__fail(err, DPAS_EINVAL, "bandwidth",
                          "bandwidth must be > 0 and latency and bytes >= 0");
    double k = (double)(n - 1);
    *seconds = n == 1 ? 0.0 : 2.0 * k / (double)n * bytes / bw + 2.0 * k * lat;
    return 0;
}

int dpas_hierarchical_allreduce_time(double bytes, int64_t nodes, int64_t g, const dpas_links *L,
                                     double *seconds, dpas_error *err)
{
    if (g < 1 || nodes < 1)
        return dpas__fail(err, DPAS_EINVAL, "nodes",
                          "nodes and accelerators per node must be >= 1");
    double inter;
    int rc = dpas_ring_allreduce_time(bytes / (double)g, nodes, L->inter_bandwidth,
                                      L->inter_latency, &inter, err);
    if (rc)
        return rc;
    double k = (double)(g - 1);
    *seconds = 2.0 * (k / (double)g * bytes / L->intra_bandwidth + k * L->intra_latency) + inter;
    return 0;
}

/* Flat time of a schedule among `workers` workers, each with `x` gradient bytes, on one link of
 * bandwidth bw and latency lat. Every formula is bytes on the critical path / bw + steps x lat. */
static double flat_time(dpas_schedule_id sched, double x, double workers, const dpas_rule *rule,
                        int64_t iterations, double bw, double lat)
{
    double k = workers - 1;
    if (workers <= 1)
        return 0.0;
    switch (sched) {
    case DPAS_SCHED_ALLREDUCE:
    case DPAS_SCHED_SHARDED: return 2 * k / workers * x / bw + 2 * k * lat;
    case DPAS_SCHED_SHARDED_DISTANCE: {
        double t = 2 * k / workers * x / bw + 2 * k * lat;
        double rounds = 1, scalars = workers * k / 2;
        if (n_scalars(rule)) {
            rounds = is_iterative(rule) && iterations > 0 ? (double)iterations : 1;
            scalars = workers;
        }
        return t + rounds * (2 * k / workers * scalars * SCALAR_BYTES / bw + 2 * k * lat);
    }
    case DPAS_SCHED_ALLGATHER: return k * x / bw + k * lat;
    case DPAS_SCHED_PS: /* the server's link receives, then sends */
        return 2 * k * x / bw + 2 * lat;
    case DPAS_SCHED_PS_SEPARATE: return 2 * workers * x / bw + 2 * lat;
    default: /* in-network: up and down the full-duplex link at once */ return x / bw + 2 * lat;
    }
}

int dpas_schedule_time(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                       int64_t iterations, dpas_topology topo, const dpas_links *L, double *seconds,
                       dpas_error *err)
{
    int rc;
    if ((unsigned)sched >= DPAS_SCHED_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "schedule", "unknown schedule %d", (int)sched);
    if ((rc = dpas_scenario_validate(s, err)))
        return rc;
    return dpas__schedule_time(sched, s, rule, iterations, topo, L, seconds, err);
}

int dpas__schedule_time(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                        int64_t iterations, dpas_topology topo, const dpas_links *L,
                        double *seconds, dpas_error *err)
{
    int rc;
    if (!(L->inter_bandwidth > 0) || !(L->inter_latency >= 0) ||
        (topo == DPAS_TOPO_HIERARCHICAL && (!(L->intra_bandwidth > 0) || !(L->intra_latency >= 0))))
        return dpas__fail(err, DPAS_EINVAL, "links", "link bandwidth must be > 0 and latency >= 0");
    dpas_bytes g;
    if ((rc = dpas_bytes_of(s->parameters, s->gradient_bytes_per_param, &g, err)))
        return rc;
    const double sb = dpas_bytes_to_double(g), N = (double)s->dp_degree;
    /* One replica exchanges nothing with anyone: 0 s on every topology, as mlsysim's ring
     * AllReduce is 0 at n = 1. (A replica spanning several accelerators still reduces inside
     * itself, but that is model parallelism's traffic, not data parallelism's.) */
    if (s->dp_degree <= 1) {
        *seconds = 0.0;
        return 0;
    }
    if (topo == DPAS_TOPO_FLAT) {
        *seconds = flat_time(sched, sb, N, rule, iterations, L->inter_bandwidth, L->inter_latency);
        return 0;
    }
    /* Hierarchical, as mlsysim's two-level AllReduce: an intra-node phase over the node's link
     * (2[(g-1)/g M/bw_intra + (g-1) lat_intra]) and the schedule between nodes, each of a node's
     * g accelerators driving one fabric link with 1/g of the node's data. With several replicas
     * per node, a reducing schedule pre-reduces inside the node and a gathering one carries the
     * node's replicas' gradients; a replica spanning several nodes uses all its accelerators'
     * links. */
    const double gpn = (double)s->accelerators_per_node, nodes = (double)s->nodes;
    double participants, links, payload = sb;
    if (N >= nodes) {
        participants = nodes;
        links = gpn;
        bool gathers = sched == DPAS_SCHED_ALLGATHER || sched == DPAS_SCHED_PS ||
                       sched == DPAS_SCHED_PS_SEPARATE;
        if (gathers)
            payload = sb * N / nodes;
    } else {
        participants = N;
        links = (nodes * gpn) / N;
    }
    double intra =
        gpn > 1
            ? 2 * ((gpn - 1) / gpn * payload / L->intra_bandwidth + (gpn - 1) * L->intra_latency)
            : 0.0;
    *seconds = intra + flat_time(sched, payload / links, participants, rule, iterations,
                                 L->inter_bandwidth, L->inter_latency);
    return 0;
}
