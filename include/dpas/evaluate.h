/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/evaluate.h — the seed's attributes of a scenario
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_EVALUATE_H
#define DPAS_EVALUATE_H

#include "dpas/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the scenario -------------------------------------------------------------------------- */

typedef enum dpas_attr {
    DPAS_ATTR_ACCELERATORS = 0,
    DPAS_ATTR_NODES,
    DPAS_ATTR_ACCELERATORS_PER_NODE,
    DPAS_ATTR_ACCELERATORS_PER_REPLICA,
    DPAS_ATTR_GRADIENT_BYTES,
    DPAS_ATTR_CHECKPOINT_BYTES,
    DPAS_ATTR_WEIGHT_BYTES,
    DPAS_ATTR_ALLREDUCE_FACTOR,
    DPAS_ATTR_GATHER_FACTOR,
    DPAS_ATTR_GATHER_TRAFFIC_RATIO,
    DPAS_ATTR_COUNT
} dpas_attr;

typedef enum dpas_value_kind {
    DPAS_VALUE_INT = 0,   /* .i */
    DPAS_VALUE_REAL = 1,  /* .r, dimensionless */
    DPAS_VALUE_BYTES = 2, /* .bytes, exact */
} dpas_value_kind;

typedef struct dpas_value {
    dpas_value_kind kind;
    int64_t i;
    double r;
    dpas_bytes bytes;
} dpas_value;

/* Warnings: bits of dpas_report.warnings. */
#define DPAS_WARN_UNEQUAL_REPLICAS 1u /* dp_degree does not divide the accelerators */

typedef struct dpas_report {
    int64_t accelerators;
    int64_t nodes;
    int64_t accelerators_per_node;
    double accelerators_per_replica;
    dpas_bytes gradient_bytes;
    dpas_bytes checkpoint_bytes;
    dpas_bytes weight_bytes;
    double allreduce_factor;
    int64_t gather_factor;
    double gather_traffic_ratio;
    unsigned undefined; /* bit (1u << dpas_attr) set: that attribute is undefined */
    unsigned warnings;  /* DPAS_WARN_* */
} dpas_report;

/* Check the inputs against every rule of the scenario. Errors (DPAS_EINVAL, DPAS_ERANGE): the
 * first rule broken, e.g. "dp_degree must be >= 1, got 0". */
DPAS_API int dpas_scenario_validate(const dpas_scenario *s, dpas_error *err);

/* Validate, then compute every attribute. Pure: no I/O, no allocation. Byte counts are exact;
 * accelerators_per_replica and allreduce_factor are the exact quotients correctly rounded to
 * doubles (one rounding, also past 2^53, where (double)a / (double)b rounds three times). */
DPAS_API int dpas_evaluate(const dpas_scenario *s, dpas_report *r, dpas_error *err);

/* One attribute of a report. DPAS_EUNDEF, with the reason, when it is undefined. */
DPAS_API int dpas_report_get(const dpas_report *r, dpas_attr a, dpas_value *out, dpas_error *err);

/* Why an attribute is undefined (NULL when it is defined). */
DPAS_API const char *dpas_report_undefined_reason(const dpas_report *r, dpas_attr a);

/* Attribute metadata: the seed's name, unit ("accelerator", "node", "byte", "1"), the seed's
 * description and its equation. -1 / NULL when unknown. */
DPAS_API const char *dpas_attr_name(dpas_attr a);
DPAS_API int dpas_attr_from_name(const char *name);
DPAS_API const char *dpas_attr_unit(dpas_attr a);
DPAS_API const char *dpas_attr_description(dpas_attr a);
DPAS_API const char *dpas_attr_equation(dpas_attr a);
DPAS_API dpas_value_kind dpas_attr_kind(dpas_attr a);

/* ---- ring AllReduce (mlsysim's calc_ring_allreduce_data_factor) ----------------------------- */

/* Bytes each worker moves in a ring AllReduce per byte of payload: 0 for n = 1, else
 * 2(n-1)/n. n < 1 is DPAS_EINVAL "n_gpus must be >= 1, got 0" (mlsysim's message). */
DPAS_API int dpas_ring_allreduce_factor(int64_t n, double *out, dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
