/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/schedules.h — schedules: exact bytes and alpha-beta time
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_SCHEDULES_H
#define DPAS_SCHEDULES_H

#include "dpas/rules.h"
#include "dpas/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- schedules: bytes and time ---------------------------------------------------------------- */

/* The schedules, by name: the one name table (X-macro, as DPAS_FORMAT_MAP) that the library,
 * the key table (the CLI's help, OpenAPI's enum) and the messages read. X(id, name). */
#define DPAS_SCHEDULE_MAP(X)                                                                       \
    X(ALLREDUCE, "allreduce")     /* ring AllReduce of the sum */                                  \
    X(ALLGATHER, "allgather")     /* all-gather every gradient, the rule locally (the seed's) */   \
    X(PS, "ps")                   /* parameter server on one of the workers */                     \
    X(PS_SEPARATE, "ps_separate") /* parameter server on a separate node */                        \
    X(SHARDED, "sharded")         /* all-to-all of shards, rule per shard, all-gather (BTARD) */   \
    X(SHARDED_DISTANCE, "sharded_distance") /* sharded + AllReduce of partial distances */         \
    X(INNETWORK, "innetwork")               /* in-network AllReduce (SHARP) */

typedef enum dpas_schedule_id {
    DPAS_SCHED_NONE = -1, /* none given (dpas_sweep.schedule) */
#define DPAS__SCHEDULE_ENUM(id, name) DPAS_SCHED_##id,
    DPAS_SCHEDULE_MAP(DPAS__SCHEDULE_ENUM)
#undef DPAS__SCHEDULE_ENUM
        DPAS_SCHED_COUNT
} dpas_schedule_id;

DPAS_API const char *dpas_schedule_name(dpas_schedule_id s);    /* "allreduce", ... */
DPAS_API const char *dpas_schedule_summary(dpas_schedule_id s); /* one line */
DPAS_API const char *dpas_schedule_source(dpas_schedule_id s);
DPAS_API int dpas_schedule_from_name(const char *name); /* -1 when unknown */
/* The same with an error: DPAS_ENOENT naming `field`, the name and every schedule. */
DPAS_API int dpas_schedule_parse(const char *field, const char *name, dpas_schedule_id *out,
                                 dpas_error *err);

/* Can the schedule realise the rule? 1 or 0; when 0 and why is not NULL, *why says why. */
DPAS_API int dpas_schedule_realises(dpas_schedule_id s, const dpas_rule *rule, const char **why);

/* Bytes one step moves, per worker (a worker is a data-parallel replica). "sent" and
 * "received" are those of the busiest worker (the server for a parameter server). Exact. */
typedef struct dpas_traffic {
    dpas_bytes sent;
    dpas_bytes received;
    dpas_bytes scalars; /* of which: distance or norm scalars (sharded_distance), else 0 */
    int64_t messages;   /* latency steps (alpha terms) on the critical path */
} dpas_traffic;

/* Bytes of the schedule for a scenario; `iterations` is the iteration count of iterative rules
 * (geometric median, centered clipping) on sharded_distance, 0 otherwise (negative: DPAS_EINVAL).
 * Every count is checked: DPAS_ERANGE names the field that leaves its range, "bytes_per_worker"
 * or "scalar_bytes" (a byte count reaching 2^64 bytes, or a fraction of a byte whose denominator
 * needs more than 64 bits; the N(N-1)/2 distances or N x iterations norms are counted in 128
 * bits) or "messages" (2(N-1) latency steps and more pass 2^63 - 1 for N above 2^62). */
DPAS_API int dpas_schedule_traffic(dpas_schedule_id sched, const dpas_scenario *s,
                                   const dpas_rule *rule, int64_t iterations, dpas_traffic *out,
                                   dpas_error *err);

typedef enum dpas_topology {
    DPAS_TOPO_FLAT = 0,         /* every replica one worker on one fabric link */
    DPAS_TOPO_HIERARCHICAL = 1, /* intra-node over the node's link, inter-node over the fabric */
} dpas_topology;

/* The links a time is computed over: fabric (inter-node) and node (intra-node). */
typedef struct dpas_links {
    double inter_bandwidth, inter_latency; /* bytes/s, s */
    double intra_bandwidth, intra_latency; /* bytes/s, s */
} dpas_links;

/* The links of the scenario's fleet (its fabric and node), or DPAS_EINVAL naming what is
 * missing (a custom fleet without fabric or node). */
DPAS_API int dpas_scenario_links(const dpas_scenario *s, dpas_links *out, dpas_error *err);

/* alpha-beta time of one step of a schedule, in seconds: 0 at dp_degree 1 (one replica
 * exchanges nothing), flat and hierarchical alike. */
DPAS_API int dpas_schedule_time(dpas_schedule_id sched, const dpas_scenario *s,
                                const dpas_rule *rule, int64_t iterations, dpas_topology topo,
                                const dpas_links *links, double *seconds, dpas_error *err);

/* mlsysim's ring AllReduce time: 2(n-1)/n * bytes/bw + 2(n-1)*latency; 0 for n = 1. */
DPAS_API int dpas_ring_allreduce_time(double bytes, int64_t n, double bandwidth, double latency,
                                      double *seconds, dpas_error *err);
/* mlsysim's hierarchical AllReduce: 2[(g-1)/g * M/bw_intra + (g-1) lat_intra]
 *  + ring_allreduce(M/g, nodes, bw_inter, lat_inter). */
DPAS_API int dpas_hierarchical_allreduce_time(double bytes, int64_t nodes, int64_t g,
                                              const dpas_links *links, double *seconds,
                                              dpas_error *err);

/* Floating-point operations of the rule over n gradients of d coordinates (an estimate from its
 * complexity; `iterations` for iterative rules). */
DPAS_API double dpas_rule_flops(const dpas_rule *rule, int64_t n, uint64_t d, int64_t iterations);
/* Memory passes of the rule over its n x d input: the bytes it moves are this many times the
 * n x d gradients' bytes (reads, and the n rows a pre-aggregation writes). Counted from the
 * kernels' structure (src/lib/kernels/) and checked against bench/bench_kernels (docs/cli.md):
 * a coordinate-wise selection or sort reads each coordinate's n values once (1; meamed 2: the
 * median, then the values nearest it); a distance rule reads the rows once for all n(n-1)/2
 * distances (blocks of every row stay in cache) and once more to average what it selects
 * (Krum and brute pick one row: 1 + 1/n); an iterative rule 2 per iteration; a pre-aggregation
 * reads twice and writes n rows (3). */
DPAS_API double dpas_rule_passes(const dpas_rule *rule, int64_t n, int64_t iterations);
/* The roofline of the rule's own compute on one worker: max(flops / peak, bytes / bandwidth).
 * peak or bandwidth <= 0 (or NaN) leaves that bound out; both out: NaN. *bound (may be NULL)
 * is "memory" or "compute" (static), the bound that holds (NULL when NaN). */
DPAS_API double dpas_roofline_time(double flops, double bytes, double peak, double bandwidth,
                                   const char **bound);

#ifdef __cplusplus
}
#endif
#endif
