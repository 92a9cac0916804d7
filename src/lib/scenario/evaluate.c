/* SPDX-License-Identifier: Apache-2.0 */
/* The DataParallelAttackSurfaceScenario: validation and every attribute of the seed.
 * Pure functions: no I/O, no allocation. Byte counts are exact; factors are doubles, each the
 * exact value correctly rounded (one rounding, also past 2^53). */
#include "../internal.h"

#include <string.h>

typedef struct attr_info {
    const char *name, *unit, *description, *equation;
    dpas_value_kind kind;
} attr_info;

static const attr_info attrs[DPAS_ATTR_COUNT] = {
    {"accelerators", "accelerators", "Accelerator count copied from the composed fleet definition.",
     "fleet.total_accelerators", DPAS_VALUE_INT},
    {"nodes", "nodes", "Node count copied from the composed fleet definition.", "fleet.count",
     DPAS_VALUE_INT},
    {"accelerators_per_node", "accelerators",
     "Accelerator count per node copied from the fleet's node definition.",
     "fleet.node.accelerators_per_node", DPAS_VALUE_INT},
    {"accelerators_per_replica", "accelerators",
     "Mean accelerator count allocated to each data-parallel replica.", "accelerators / dp_degree",
     DPAS_VALUE_REAL},
    {"gradient_bytes", "B",
     "Bytes in one replica's parameter gradients, using the declared gradient width.",
     "memory_from_params(workload.parameters, gradient_bytes_per_param).to('byte')",
     DPAS_VALUE_BYTES},
    {"checkpoint_bytes", "B",
     "Bytes in one parameter checkpoint, using the declared checkpoint width.",
     "memory_from_params(workload.parameters, checkpoint_bytes_per_param).to('byte')",
     DPAS_VALUE_BYTES},
    {"weight_bytes", "B",
     "Bytes in the optional serving checkpoint; requires weight_bytes_per_param.",
     "memory_from_params(workload.parameters, weight_bytes_per_param).to('byte')",
     DPAS_VALUE_BYTES},
    {"allreduce_factor", "1",
     "Dimensionless per-worker ring AllReduce bytes per gradient byte, from "
     "calc_ring_allreduce_data_factor.",
     "calc_ring_allreduce_data_factor(dp_degree)", DPAS_VALUE_REAL},
    {"gather_factor", "1",
     "Per-worker gathered gradient copies from the other data-parallel replicas.", "dp_degree - 1",
     DPAS_VALUE_INT},
    {"gather_traffic_ratio", "1",
     "Dimensionless all-gather-to-ring-AllReduce traffic ratio; requires more than one replica.",
     "gather_factor / allreduce_factor", DPAS_VALUE_REAL},
};

const char *dpas_attr_name(dpas_attr a)
{
    return (unsigned)a < DPAS_ATTR_COUNT ? attrs[a].name : NULL;
}
const char *dpas_attr_unit(dpas_attr a)
{
    return (unsigned)a < DPAS_ATTR_COUNT ? attrs[a].unit : NULL;
}
const char *dpas_attr_description(dpas_attr a)
{
    return (unsigned)a < DPAS_ATTR_COUNT ? attrs[a].description : NULL;
}
const char *dpas_attr_equation(dpas_attr a)
{
    return (unsigned)a < DPAS_ATTR_COUNT ? attrs[a].equation : NULL;
}
dpas_value_kind dpas_attr_kind(dpas_attr a)
{
    return (unsigned)a < DPAS_ATTR_COUNT ? attrs[a].kind : DPAS_VALUE_INT;
}

int dpas_attr_from_name(const char *name)
{
    for (int a = 0; a < DPAS_ATTR_COUNT; a++)
        if (name && !strcmp(name, attrs[a].name))
            return a;
    return -1;
}

int dpas_ring_allreduce_factor(int64_t n, double *out, dpas_error *err)
{
    if (n < 1)
        return dpas__fail(err, DPAS_EINVAL, "n_gpus", "n_gpus must be >= 1, got %lld",
                          (long long)n);
    /* 2(n-1)/n rounded once (2(n-1) < 2^64): (2.0 * (n-1)) / n rounds three times past 2^53 */
    *out = n == 1 ? 0.0 : dpas__ratio(2 * (uint64_t)(n - 1), (uint64_t)n);
    return 0;
}

static int check_width(const char *field, dpas_rational w, dpas_error *err)
{
    if (w.den == 0 || w.num == 0) {
        char t[64] = "0 B";
        if (w.den)
            dpas_format_width(w, t, sizeof t);
        return dpas__fail(err, DPAS_EINVAL, field, "%s must be > 0, got %s", field, t);
    }
    return 0;
}

int dpas_scenario_validate(const dpas_scenario *s, dpas_error *err)
{
    if (!s)
        return dpas__fail(err, DPAS_EINVAL, "scenario", "no scenario given");
    if (s->parameters == 0)
        return dpas__fail(err, DPAS_EINVAL, "parameters",
                          "parameters must be >= 1, got 0 (workload %s)",
                          s->workload ? s->workload : "unnamed");
    if (s->parameters > (uint64_t)DPAS_MAX_COUNT)
        return dpas__fail(err, DPAS_ERANGE, "parameters", "parameters must be <= %lld, got %llu",
                          (long long)DPAS_MAX_COUNT, (unsigned long long)s->parameters);
    if (s->nodes < 1)
        return dpas__fail(err, DPAS_EINVAL, "nodes", "nodes must be >= 1, got %lld",
                          (long long)s->nodes);
    if (s->accelerators_per_node < 1)
        return dpas__fail(err, DPAS_EINVAL, "accelerators_per_node",
                          "accelerators_per_node must be >= 1, got %lld",
                          (long long)s->accelerators_per_node);
    int64_t acc;
    if (__builtin_mul_overflow(s->nodes, s->accelerators_per_node, &acc))
        return dpas__fail(err, DPAS_ERANGE, "accelerators",
                          "accelerators = nodes x accelerators_per_node = %lld x %lld overflows "
                          "a 64-bit count",
                          (long long)s->nodes, (long long)s->accelerators_per_node);
    if (s->dp_degree < 1)
        return dpas__fail(err, DPAS_EINVAL, "dp_degree", "dp_degree must be >= 1, got %lld",
                          (long long)s->dp_degree);
    if (s->dp_degree > acc)
        return dpas__fail(err, DPAS_EINVAL, "dp_degree",
                          "dp_degree must be <= accelerators (%lld), got %lld: each replica needs "
                          "at least one accelerator",
                          (long long)acc, (long long)s->dp_degree);
    int rc;
    if ((rc = check_width("gradient_bytes_per_param", s->gradient_bytes_per_param, err)) ||
        (rc = check_width("checkpoint_bytes_per_param", s->checkpoint_bytes_per_param, err)))
        return rc;
    if (s->weight_bytes_per_param.den != 0 &&
        (rc = check_width("weight_bytes_per_param", s->weight_bytes_per_param, err)))
        return rc;
    return 0;
}

static int bytes_attr(const char *attr, uint64_t p, dpas_rational w, dpas_bytes *out,
                      dpas_error *err)
{
    return dpas__bytes_field(dpas_bytes_of(p, w, out, err), attr, err);
}

int dpas_evaluate(const dpas_scenario *s, dpas_report *r, dpas_error *err)
{
    int rc = dpas_scenario_validate(s, err);
    return rc ? rc : dpas__evaluate(s, r, err);
}

int dpas__evaluate(const dpas_scenario *s, dpas_report *r, dpas_error *err)
{
    int rc;
    /* every field is assigned below; a memset here costs as much as the arithmetic */
    r->undefined = 0;
    r->warnings = 0;
    r->gather_traffic_ratio = 0.0;
    const int64_t n = s->dp_degree;
    r->nodes = s->nodes;
    r->accelerators_per_node = s->accelerators_per_node;
    r->accelerators = s->nodes * s->accelerators_per_node; /* overflow checked in validate */
    /* one correctly rounded division: (double)a / (double)n rounds a, n and the quotient, which
     * differs from the exact quotient's nearest double once a or n passes 2^53 */
    r->accelerators_per_replica = dpas__ratio((uint64_t)r->accelerators, (uint64_t)n);
    if (r->accelerators % n)
        r->warnings |= DPAS_WARN_UNEQUAL_REPLICAS;
    if ((rc = bytes_attr("gradient_bytes", s->parameters, s->gradient_bytes_per_param,
                         &r->gradient_bytes, err)) ||
        (rc = bytes_attr("checkpoint_bytes", s->parameters, s->checkpoint_bytes_per_param,
                         &r->checkpoint_bytes, err)))
        return rc;
    if (s->weight_bytes_per_param.den) {
        if ((rc = bytes_attr("weight_bytes", s->parameters, s->weight_bytes_per_param,
                             &r->weight_bytes, err)))
            return rc;
    } else {
        r->weight_bytes = (dpas_bytes){0, 0, 1};
        r->undefined |= 1u << DPAS_ATTR_WEIGHT_BYTES;
    }
    dpas_ring_allreduce_factor(n, &r->allreduce_factor, NULL);
    r->gather_factor = n - 1;
    /* gather_factor / allreduce_factor = (n-1) / (2(n-1)/n) = n/2 exactly; n/2.0 is that value
     * correctly rounded, where dividing the two rounded factors could be off by an ulp. */
    if (n > 1)
        r->gather_traffic_ratio = (double)n / 2.0;
    else
        r->undefined |= 1u << DPAS_ATTR_GATHER_TRAFFIC_RATIO;
    return 0;
}

const char *dpas_report_undefined_reason(const dpas_report *r, dpas_attr a)
{
    if (!r || (unsigned)a >= DPAS_ATTR_COUNT || !(r->undefined & (1u << a)))
        return NULL;
    if (a == DPAS_ATTR_WEIGHT_BYTES)
        return "requires weight_bytes_per_param";
    if (a == DPAS_ATTR_GATHER_TRAFFIC_RATIO)
        return "requires more than one replica (allreduce_factor is 0 at dp_degree 1)";
    return "undefined";
}

int dpas_report_get(const dpas_report *r, dpas_attr a, dpas_value *out, dpas_error *err)
{
    if ((unsigned)a >= DPAS_ATTR_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "attribute", "unknown attribute %d", (int)a);
    memset(out, 0, sizeof *out);
    out->kind = attrs[a].kind;
    out->bytes.frac_den = 1;
    if (r->undefined & (1u << a))
        return dpas__fail(err, DPAS_EUNDEF, attrs[a].name, "%s is undefined: %s", attrs[a].name,
                          dpas_report_undefined_reason(r, a));
    switch (a) {
    case DPAS_ATTR_ACCELERATORS: out->i = r->accelerators; break;
    case DPAS_ATTR_NODES: out->i = r->nodes; break;
    case DPAS_ATTR_ACCELERATORS_PER_NODE: out->i = r->accelerators_per_node; break;
    case DPAS_ATTR_ACCELERATORS_PER_REPLICA: out->r = r->accelerators_per_replica; break;
    case DPAS_ATTR_GRADIENT_BYTES: out->bytes = r->gradient_bytes; break;
    case DPAS_ATTR_CHECKPOINT_BYTES: out->bytes = r->checkpoint_bytes; break;
    case DPAS_ATTR_WEIGHT_BYTES: out->bytes = r->weight_bytes; break;
    case DPAS_ATTR_ALLREDUCE_FACTOR: out->r = r->allreduce_factor; break;
    case DPAS_ATTR_GATHER_FACTOR: out->i = r->gather_factor; break;
    case DPAS_ATTR_GATHER_TRAFFIC_RATIO: out->r = r->gather_traffic_ratio; break;
    default: break;
    }
    if (out->kind == DPAS_VALUE_INT)
        out->r = (double)out->i;
    else if (out->kind == DPAS_VALUE_BYTES)
        out->r = dpas_bytes_to_double(out->bytes);
    return 0;
}
