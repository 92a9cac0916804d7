/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/registry.h — the registry of models, hardware, nodes, fabrics, fleets and scenarios, and the scenario inputs
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_REGISTRY_H
#define DPAS_REGISTRY_H

#include "dpas/units.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- registry ------------------------------------------------------------------------------ */

typedef enum dpas_kind {
    DPAS_KIND_MODEL = 0,
    DPAS_KIND_HARDWARE,
    DPAS_KIND_NODE,
    DPAS_KIND_FABRIC,
    DPAS_KIND_FLEET,
    DPAS_KIND_SCENARIO,
    DPAS_KIND_COUNT,
    /* Listings that are not registry kinds: the precision names, and the keys of a request. */
    DPAS_LIST_PRECISIONS = -1,
    DPAS_LIST_KEYS = -2
} dpas_kind;

/* A transformer's shape, where the model is public: what the activations' memory needs
 * (Korthikanti et al. 2022). All 0 (and source NULL) when the registry gives none. */
typedef struct dpas_model_shape {
    int64_t layers;   /* transformer layers, L */
    int64_t hidden;   /* hidden size, h */
    int64_t heads;    /* attention heads, a */
    int64_t kv_heads; /* key/value heads (heads unless grouped-query attention) */
    int64_t ffn;      /* the MLP's inner size (4h in GPT's layer) */
    int64_t sequence; /* the training sequence length, s */
    const char *source;
} dpas_model_shape;

typedef struct dpas_model {
    const char *path;           /* "Models.Language.GPT3" */
    const char *name;           /* "GPT3" */
    const char *display;        /* "GPT-3 (175B)" */
    uint64_t parameters;        /* 0: the registry gives no parameter count (see missing) */
    uint64_t active_parameters; /* sparse models; 0 when dense or unknown */
    const char *missing;        /* why there is no parameter count, or NULL */
    const char *notes;
    const char *source;
    dpas_model_shape shape; /* layers 0: no shape in the registry */
} dpas_model;

typedef struct dpas_hardware {
    const char *path, *name, *display;
    dpas_bytes memory;       /* per accelerator */
    double peak_flops;       /* dense FP16, FLOP/s */
    double hbm_bandwidth;    /* bytes/s */
    double nvlink_bandwidth; /* bytes/s, bidirectional total */
    double tdp_watts;
    const char *source;
} dpas_hardware;

typedef struct dpas_node {
    const char *path, *name, *display;
    const dpas_hardware *accelerator;
    int64_t accelerators_per_node;
    double intra_bandwidth; /* bytes/s per direction */
    double intra_latency;   /* seconds */
    const char *source;
} dpas_node;

typedef struct dpas_fabric {
    const char *path, *name, *display;
    double bandwidth;     /* bytes/s per link per direction */
    double latency;       /* seconds */
    const char *topology; /* "fat-tree" */
    double oversubscription;
    const char *source;
} dpas_fabric;

typedef struct dpas_fleet {
    const char *path, *name, *display;
    const dpas_node *node;
    int64_t count; /* nodes */
    const dpas_fabric *fabric;
    const char *source;
} dpas_fleet;

/* The inputs of one DataParallelAttackSurfaceScenario. Strings are borrowed labels. */
typedef struct dpas_scenario {
    const char *workload;          /* label of the workload ("Models.Language.GPT3", "custom") */
    uint64_t parameters;           /* workload.parameters, > 0 */
    const char *fleet;             /* label of the fleet */
    int64_t nodes;                 /* fleet.count */
    int64_t accelerators_per_node; /* fleet.node.accelerators_per_node */
    int64_t dp_degree;
    dpas_rational gradient_bytes_per_param;
    dpas_rational checkpoint_bytes_per_param;
    dpas_rational weight_bytes_per_param; /* den == 0: None (absent) */
    /* registry entries behind the inputs, when known, else NULL (borrowed): the fleet, its node
     * (accelerator and intra-node link) and its fabric (inter-node link) */
    const dpas_fleet *fleet_entry;
    const dpas_node *node_entry;
    const dpas_fabric *fabric_entry;
} dpas_scenario;

typedef struct dpas_named_scenario {
    const char *path, *name, *display;
    dpas_scenario scenario;
    const dpas_model *workload_entry;
    const char *notes;
    const char *source;
} dpas_named_scenario;

typedef struct dpas_registry dpas_registry;

/* Load the built-in registry (embedded at build time from data/registry/registry.json).
 * *out is owned by the caller: dpas_registry_free(). */
DPAS_API int dpas_registry_builtin(dpas_registry **out, dpas_error *err);

/* Load a registry from JSON text of the same schema. */
DPAS_API int dpas_registry_load_json(const char *text, size_t len, dpas_registry **out,
                                     dpas_error *err);

DPAS_API void dpas_registry_free(dpas_registry *reg);

/* Entries of one kind, in registry order; the pointer is one of dpas_model, dpas_hardware,
 * dpas_node, dpas_fabric, dpas_fleet, dpas_named_scenario according to kind. */
DPAS_API size_t dpas_registry_count(const dpas_registry *reg, dpas_kind kind);
DPAS_API const void *dpas_registry_at(const dpas_registry *reg, dpas_kind kind, size_t i);

/* Find by full path ("Systems.Clusters.Training_1K") or short name ("Training_1K"), exactly
 * or, failing that, case-insensitively when that is unambiguous. An unknown name is DPAS_ENOENT
 * with a message that lists the closest names. */
DPAS_API int dpas_registry_find(const dpas_registry *reg, dpas_kind kind, const char *name,
                                const void **out, dpas_error *err);

/* "model", "hardware", "node", "fabric", "fleet", "scenario"; NULL when out of range. */
DPAS_API const char *dpas_kind_name(dpas_kind kind);
/* A listing's kind by name, singular or plural ("models", "fleet", ...): a dpas_kind,
 * DPAS_LIST_PRECISIONS for "precisions", DPAS_LIST_KEYS for "keys", or DPAS_ENOENT naming them. */
DPAS_API int dpas_kind_from_listing(const char *name, dpas_kind *kind, dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
