/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/inventory.h — byte conventions, what a step exposes, the memory check
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_INVENTORY_H
#define DPAS_INVENTORY_H

#include "dpas/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- byte conventions, inventory, memory ----------------------------------------------------- */

typedef struct dpas_convention {
    const char *name;    /* "zero16", "adam_state", "mlsysim_ckpt", ... */
    dpas_rational width; /* bytes per parameter */
    const char *what;    /* "mixed-precision Adam training state" */
    const char *source;
    int is_training_state; /* weights + gradients + optimizer (usable for memory feasibility) */
} dpas_convention;

DPAS_API size_t dpas_convention_count(void);
DPAS_API const dpas_convention *dpas_convention_at(size_t i);
DPAS_API int dpas_convention_find(const char *name, const dpas_convention **out, dpas_error *err);

/* One replica's training state against the memory of its accelerators. zero_stage 0..3
 * partitions the mixed-precision Adam state across the dp_degree replicas as ZeRO does
 * (Rajbhandari et al. 2019: stage 1 (4 + 12/N) bytes/param, stage 2 (2 + 14/N), stage 3 16/N);
 * stages above 0 need the "zero16" convention. */
typedef struct dpas_memory {
    dpas_bytes state;    /* bytes of training state per replica */
    dpas_bytes capacity; /* bytes of accelerator memory per replica (a mean when unequal) */
    dpas_bytes headroom; /* |capacity - state|: free memory when it fits, else the shortfall */
    double utilisation;  /* state / capacity */
    int fits;            /* state <= capacity */
    double accelerators_per_replica; /* the seed's accelerators / dp_degree (a mean when unequal) */
    /* Where it would fit: the smallest ZeRO stage (0 to 3; stages need zero16) that fits at this
     * dp_degree, -1 when none does; the largest dp_degree (1 to the accelerators) that fits at
     * this stage, 0 when none does. */
    int smallest_zero_stage;
    int64_t largest_dp_degree;
} dpas_memory;

/* DPAS_ERANGE names "state_bytes", "capacity_bytes" or "headroom_bytes"; an accelerator of 0 B
 * is DPAS_EINVAL (its utilisation would be infinite). */
DPAS_API int dpas_memory_check(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                               dpas_memory *out, dpas_error *err);

/* What a step exposes on the wire and what lies at rest, in exact bytes. */
typedef struct dpas_inventory_row {
    char item[48];     /* "gradient_bytes", "allgather_per_worker", "zero16", "weights_int4" */
    const char *where; /* "wire" (per step) or "rest" */
    char basis[64];    /* how it is counted: "P x 2 B", "2(N-1)/N x gradient_bytes" */
    dpas_bytes bytes;
    const char *source;
} dpas_inventory_row;

/* Fill up to cap rows; *n is the number of rows (call with cap 0 to count). A row whose bytes
 * leave the exact range is DPAS_ERANGE with the row's item as the field ("zero16",
 * "allgather_job_total"). A basis too long for the row ("P x " and a width of 40 digits) names
 * the input instead ("P x gradient_bytes_per_param"): never cut. */
DPAS_API int dpas_inventory(const dpas_scenario *s, dpas_inventory_row *rows, size_t cap, size_t *n,
                            dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
