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

/* The optimizer of a mixed-precision training state: K bytes per parameter of optimizer state
 * (the fp32 master weights included), beside 2 B of 16-bit weights and 2 B of 16-bit
 * gradients: the "zero16" state is 2 + 2 + K with Adam's K = 12 (ZeRO, Rajbhandari et al.). */
typedef struct dpas_optimizer {
    const char *name;     /* "adam" (the default), "adam_8bit", "sgd_momentum", "sgd" */
    uint64_t state_bytes; /* K */
    const char *what;
    const char *source;
} dpas_optimizer;

DPAS_API size_t dpas_optimizer_count(void);
DPAS_API const dpas_optimizer *dpas_optimizer_at(size_t i);
/* By name ("sgd-momentum" is "sgd_momentum"); DPAS_ENOENT naming "optimizer" otherwise. */
DPAS_API int dpas_optimizer_find(const char *name, const dpas_optimizer **out, dpas_error *err);

/* Activation recomputation (checkpointing) of a transformer layer. */
typedef enum dpas_recompute {
    DPAS_RECOMPUTE_UNKNOWN = -1, /* none: dpas_memory.smallest_recompute when none fits */
    DPAS_RECOMPUTE_NONE = 0,     /* every activation kept: sbh(34 + 5as/h) bytes per layer */
    DPAS_RECOMPUTE_SELECTIVE, /* attention's softmax, dropout and score inputs recomputed: 34sbh */
    DPAS_RECOMPUTE_FULL,      /* only each layer's input kept: 2sbh; the forward runs twice */
    DPAS_RECOMPUTE_COUNT
} dpas_recompute;

DPAS_API const char *dpas_recompute_name(dpas_recompute r); /* "none", "selective", "full" */
DPAS_API int dpas_recompute_from_name(const char *name);    /* -1 when unknown */

/* The activations one micro-batch of b sequences of s tokens keeps for the backward, in bytes,
 * per transformer layer and for the shape's L layers, as Korthikanti et al. 2022 ("Reducing
 * Activation Recomputation in Large Transformer Models", Sec. 4.1 Eq. (1) and Table 2, without
 * tensor or sequence parallelism, 16-bit activations, 1-byte dropout masks) count them:
 * none sbh(34 + 5as/h) = 34sbh + 5as^2b, selective 34sbh, full 2sbh; the total is L times that
 * (the embedding's dropout and the output layer and loss of the paper's Sec. 4.3 are not
 * counted). sequence 0: the shape's. Exact; DPAS_ERANGE ("micro_batch") past 2^64 B. */
DPAS_API int dpas_activation_bytes(const dpas_model_shape *shape, uint64_t micro_batch,
                                   uint64_t sequence, dpas_recompute r, dpas_bytes *per_layer,
                                   dpas_bytes *total, dpas_error *err);
/* Does the shape's layer match the one the paper counts (an MLP of 4h, as many key/value
 * heads as heads)? 0: the count is an estimate for this layer. */
DPAS_API int dpas_activation_shape_covered(const dpas_model_shape *shape);

/* What a memory check counts. */
typedef struct dpas_memory_opts {
    const dpas_convention *state;    /* NULL: zero16 */
    int zero;                        /* the ZeRO stage, 0 to 3 (stages need zero16) */
    const dpas_optimizer *optimizer; /* NULL: adam; another needs zero16 (its K replaces 12) */
    const dpas_model_shape *shape;   /* the workload's (NULL or layers 0: activations not
                                        counted, and activations_note says why) */
    const char *no_shape_why;        /* why there is no shape (NULL: a generic reason) */
    uint64_t micro_batch;            /* sequences per replica per forward; 0: not counted */
    uint64_t sequence;               /* tokens per sequence; 0: the shape's */
    dpas_recompute recompute;
    /* Tokens per step over every replica; nonzero (with micro_batch 0): the micro-batch is each
     * replica's share, ceil(step_tokens / (N x sequence)), at the scenario's dp_degree and at
     * every dp_degree the search for where it fits tries (as `dpas step` defaults it). */
    uint64_t step_tokens;
} dpas_memory_opts;

/* One replica's training state and activations against the memory of its accelerators.
 * zero_stage 0..3 partitions the mixed-precision state across the dp_degree replicas as ZeRO
 * does (Rajbhandari et al. 2019: stage 1 (4 + K/N) bytes/param, stage 2 (2 + (K + 2)/N),
 * stage 3 (K + 4)/N; K = 12 for Adam); stages above 0 need the "zero16" convention. */
typedef struct dpas_memory {
    dpas_bytes state;    /* bytes of training state per replica */
    dpas_bytes capacity; /* bytes of accelerator memory of the smallest replica: when dp_degree
                            does not divide the accelerators A, A mod N replicas have one more
                            than floor(A/N) and the rest floor(A/N); the state must fit them */
    dpas_bytes headroom; /* |capacity - total|: free memory when it fits, else the shortfall */
    double utilisation;  /* total / capacity */
    int fits;            /* total <= capacity */
    double accelerators_per_replica; /* the smallest replica's accelerators, floor(A / N) */
    /* Where it would fit: the smallest ZeRO stage (0 to 3; stages need zero16) that fits at this
     * dp_degree, -1 when none does; the largest X (up to the accelerators) such that every
     * dp_degree from 1 to X fits on this fleet at this stage (X + 1 does not), 0 when 1 does not
     * (then none does). */
    int smallest_zero_stage;
    int64_t largest_dp_degree;
    /* Activations (dpas_activation_bytes x micro_batch's sequences), when counted. */
    int activations_counted;
    dpas_bytes activations_per_layer, activations;
    dpas_bytes total;               /* state + activations: what fits decides on */
    const char *optimizer;          /* the optimizer's name (zero16), or NULL (another state) */
    uint64_t optimizer_bytes;       /* its K */
    const char *recompute;          /* "none", "selective" or "full" */
    int64_t layers;                 /* the shape's L (0 without activations) */
    uint64_t micro_batch, sequence; /* as counted (0 without activations) */
    /* The fewest replicas that fit at this stage with accelerators_per_replica accelerators each
     * on whole nodes (the fleet grown or shrunk to smallest_nodes nodes = N x
     * accelerators_per_replica accelerators; N a multiple of what makes the nodes whole), 0 when
     * none up to 2^40 does: `--nodes smallest_nodes --dp N` fits, and the whole-node fleet one
     * step smaller does not. */
    int64_t smallest_dp_degree;
    /* The least activation recomputation that fits at this stage and dp_degree,
     * DPAS_RECOMPUTE_UNKNOWN when none does or activations are not counted. */
    dpas_recompute smallest_recompute;
    char activations_note[240]; /* how they are counted, or why they are not */
    int64_t smallest_nodes;     /* the nodes of smallest_dp_degree (0 with it) */
} dpas_memory;

/* DPAS_ERANGE names "state_bytes", "capacity_bytes" or "headroom_bytes"; an accelerator of 0 B
 * is DPAS_EINVAL (its utilisation would be infinite). */
DPAS_API int dpas_memory_check(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                               dpas_memory *out, dpas_error *err);
/* The same with an optimizer and activations. */
DPAS_API int dpas_memory_check_opts(const dpas_scenario *s, const dpas_memory_opts *o,
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
