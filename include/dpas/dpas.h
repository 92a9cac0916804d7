/*
 * dpas — data-parallel attack surface.
 *
 * The public API of libdpas: the DataParallelAttackSurfaceScenario of mlsysim, computed exactly,
 * over a registry of real models and fleets.
 *
 * Ownership, stated once for the whole API:
 *   - Result structs (dpas_report, dpas_error, dpas_scenario, dpas_value) are caller-allocated.
 *   - Every dpas_*_new / dpas_*_load has a dpas_*_free that accepts NULL.
 *   - A returned `const char *` is borrowed: it lives as long as the object it came from
 *     (the registry for registry strings, static storage for names and descriptions).
 *   - A returned `char *` (renderers) is owned by the caller and released with dpas_free().
 *   - The library never prints, never exits, and has no mutable global state; every function
 *     is safe to call from several threads on distinct objects.
 *
 * Errors: fallible functions return 0 or a negative DPAS_E* code. When the caller passes a
 * dpas_error, it is filled with the code, the field at fault and a message that names the field,
 * the value and the rule ("dp_degree must be >= 1, got 0"); for files also line and column.
 *
 * Exactness: parameter counts are integers; widths (bytes per parameter) are exact rationals read
 * from decimal text; byte counts are exact (whole part plus a reduced fraction) and every product
 * is overflow-checked. Doubles carry only dimensionless factors, ratios and times.
 */
#ifndef DPAS_DPAS_H
#define DPAS_DPAS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DPAS_BUILDING) && defined(__GNUC__)
#define DPAS_API __attribute__((visibility("default")))
#else
#define DPAS_API
#endif

#define DPAS_VERSION "0.1.0"

/* ---- errors ------------------------------------------------------------------------------- */

enum {
    DPAS_OK = 0,
    DPAS_EINVAL = -1,   /* a value breaks a rule (dp_degree < 1, width <= 0, ...) */
    DPAS_EPARSE = -2,   /* malformed text: not a number, unknown unit, bad YAML/JSON */
    DPAS_ERANGE = -3,   /* a value or a product exceeds what the exact arithmetic holds */
    DPAS_ENOENT = -4,   /* unknown registry name */
    DPAS_EUNDEF = -5,   /* the attribute is undefined for these inputs */
    DPAS_ENOMEM = -6,   /* out of memory */
    DPAS_EIO = -7,      /* a file could not be read */
    DPAS_EPHYSICS = -8, /* the inputs are valid but physically infeasible */
};

typedef struct dpas_error {
    int code;          /* one of DPAS_E*, 0 when no error */
    int line, column;  /* 1-based position in a file; 0 when not from a file */
    char field[64];    /* the input or attribute at fault, "" when none */
    char message[512]; /* the whole sentence, field included */
} dpas_error;

/* A short sentence for a DPAS_E* code ("invalid value", ...). Never NULL. */
DPAS_API const char *dpas_strerror(int code);

/* ---- exact quantities ------------------------------------------------------------------------ */

/* An exact non-negative rational num/den, reduced, den > 0. Widths are in bytes per parameter. */
typedef struct dpas_rational {
    uint64_t num;
    uint64_t den;
} dpas_rational;

/* An exact byte count: whole + frac_num / frac_den, with frac_num < frac_den, reduced
 * (frac_num = 0 and frac_den = 1 when whole). Byte counts are limited to < 2^64 bytes. */
typedef struct dpas_bytes {
    uint64_t whole;
    uint64_t frac_num;
    uint64_t frac_den;
} dpas_bytes;

typedef enum dpas_units {
    DPAS_UNITS_SI = 0,    /* kB, MB, GB, TB, PB, EB: powers of 1000 (the default) */
    DPAS_UNITS_IEC = 1,   /* KiB, MiB, GiB, TiB, PiB, EiB: powers of 1024 */
    DPAS_UNITS_BYTES = 2, /* plain bytes only */
} dpas_units;

/* Largest parameter count accepted (INT64_MAX), so that counts fit every caller's int64. */
#define DPAS_MAX_COUNT INT64_MAX

/* Parse a width (bytes per parameter) from text, exactly: "2 B", "2 byte", "2 bytes", "14B",
 * "16 bit", "4.127 bits", "0.5 B", "1e-1 B", or a precision name ("bf16", case-insensitive).
 * A number needs a unit. `field` names the input in messages. Errors: DPAS_EPARSE (malformed,
 * no unit, unknown unit or name, NaN/inf), DPAS_EINVAL (zero or negative), DPAS_ERANGE. */
DPAS_API int dpas_parse_width(const char *field, const char *text, dpas_rational *out,
                              dpas_error *err);

/* Parse a count exactly: "175e9", "70.6e9", "3504872", "1.5B", "7B", "340M", "10K", "1.76T".
 * Suffixes (one letter, right after the number): K or k = 10^3, M = 10^6, B or G = 10^9,
 * T = 10^12. The result must be a whole number in [0, DPAS_MAX_COUNT]. Negative values are
 * DPAS_EINVAL; fractions, malformed text, NaN/inf DPAS_EPARSE; overflow DPAS_ERANGE. */
DPAS_API int dpas_parse_count(const char *field, const char *text, uint64_t *out,
                              dpas_error *err);

/* Parse a plain decimal integer ("128", "-3") into int64. Errors: DPAS_EPARSE, DPAS_ERANGE. */
DPAS_API int dpas_parse_int(const char *field, const char *text, int64_t *out, dpas_error *err);

/* Exact decimal text of a byte count: "350000000000", "1808075.843". Writes at most `cap`
 * bytes including the NUL; returns the length the full text needs (snprintf-style). The text is
 * exact whenever frac_den has no prime factors but 2 and 5, which holds for every width read
 * from decimal text; otherwise it is rounded to 30 decimals. */
DPAS_API size_t dpas_format_bytes_exact(dpas_bytes b, char *buf, size_t cap);

/* A human byte count: "350 GB", "2.45 TB", "325.963 GiB", "512 B" (at most 3 decimals, trailing
 * zeros dropped; approximate except for DPAS_UNITS_BYTES, which gives the exact count). */
DPAS_API size_t dpas_format_bytes_human(dpas_bytes b, dpas_units units, char *buf, size_t cap);

/* A width as exact text in bytes: "2 B", "0.515875 B". */
DPAS_API size_t dpas_format_width(dpas_rational w, char *buf, size_t cap);

/* The exact value of count × width in bytes. Errors: DPAS_ERANGE when the product reaches 2^64
 * bytes, DPAS_EINVAL when width.den == 0. */
DPAS_API int dpas_bytes_of(uint64_t count, dpas_rational width, dpas_bytes *out, dpas_error *err);

/* v with 10 significant digits, as "%.10g" (buf: at least 32 bytes); fast, for tables of
 * millions of rows. Returns the length. */
DPAS_API size_t dpas_format_g10(double v, char *buf);

/* The byte count as a double (for plotting and times only). */
DPAS_API double dpas_bytes_to_double(dpas_bytes b);

/* Precision names known to dpas_parse_width (mlsysim's PRECISION_MAP). */
typedef struct dpas_precision {
    const char *name;    /* "bf16" */
    dpas_rational width; /* bytes per parameter */
    const char *source;
} dpas_precision;
DPAS_API size_t dpas_precision_count(void);
DPAS_API const dpas_precision *dpas_precision_at(size_t i);

/* ---- registry ------------------------------------------------------------------------------ */

typedef enum dpas_kind {
    DPAS_KIND_MODEL = 0,
    DPAS_KIND_HARDWARE,
    DPAS_KIND_NODE,
    DPAS_KIND_FABRIC,
    DPAS_KIND_FLEET,
    DPAS_KIND_SCENARIO,
    DPAS_KIND_COUNT
} dpas_kind;

typedef struct dpas_model {
    const char *path;    /* "Models.Language.GPT3" */
    const char *name;    /* "GPT3" */
    const char *display; /* "GPT-3 (175B)" */
    uint64_t parameters; /* 0: the registry gives no parameter count (see missing) */
    uint64_t active_parameters; /* sparse models; 0 when dense or unknown */
    const char *missing; /* why there is no parameter count, or NULL */
    const char *notes;
    const char *source;
} dpas_model;

typedef struct dpas_hardware {
    const char *path, *name, *display;
    dpas_bytes memory;        /* per accelerator */
    double peak_flops;        /* dense FP16, FLOP/s */
    double hbm_bandwidth;     /* bytes/s */
    double nvlink_bandwidth;  /* bytes/s, bidirectional total */
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
    double bandwidth;       /* bytes/s per link per direction */
    double latency;         /* seconds */
    const char *topology;   /* "fat-tree" */
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
    int kind; /* dpas_value_kind */
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

/* Validate, then compute every attribute. Pure: no I/O, no allocation. */
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

/* ---- robust aggregation rules -------------------------------------------------------------- */

/* Every resilience condition in the catalogue has the form n >= a*f + b (n replicas, f of them
 * Byzantine); "mean" tolerates none (a = 0: only f = 0). Where libraries disagree (Krum:
 * n >= 2f + 3 in Blanchard et al. and Garfield, 2f < n in ByzFL), each convention is a row of
 * its own and one is the rule's default. */
typedef struct dpas_rule {
    const char *name;        /* the CLI name: "krum", "trimmed_mean", ... */
    const char *display;     /* "Krum" */
    const char *convention;  /* "blanchard", "byzfl", or "standard" when all agree */
    int is_default;          /* the convention used when none is named */
    int a, b;                /* condition n >= a*f + b; a == 0: tolerates no Byzantine replica */
    const char *condition;   /* "n >= 2f + 3" */
    const char *compute;     /* "O(n^2 d)" */
    int coordinatewise;      /* the rule works coordinate by coordinate (shardable) */
    int needs_distances;     /* needs pairwise distances or norms of full gradients */
    const char *neighbours;  /* Krum's neighbour count under this convention, or NULL */
    const char *source;
    const char *notes;
} dpas_rule;

DPAS_API size_t dpas_rule_count(void);
DPAS_API const dpas_rule *dpas_rule_at(size_t i);
/* Find a rule by name (aliases: "mda" for brute, "geomed" for geometric_median, "cc" for
 * centered_clipping, "signsgd" for sign_majority) under a convention (NULL: its default).
 * DPAS_ENOENT with the known names or conventions. */
DPAS_API int dpas_rule_find(const char *name, const char *convention, const dpas_rule **out,
                            dpas_error *err);
/* A rule as a command line names it: under `convention` where the rule has that convention, else
 * under its default (so "byzfl" picks ByzFL's Krum and leaves the median alone). A convention no
 * rule has is DPAS_ENOENT, as is an unknown rule. */
DPAS_API int dpas_rule_select(const char *name, const char *convention, const dpas_rule **out,
                              dpas_error *err);
/* The largest f the rule tolerates with n replicas; -1 when even f = 0 is not enough
 * (Krum needs n >= 3). n < 1 is DPAS_EINVAL. */
DPAS_API int dpas_rule_max_f(const dpas_rule *rule, int64_t n, int64_t *max_f, dpas_error *err);
/* The smallest n for f Byzantine replicas; -1 when no n suffices (mean with f > 0).
 * f < 0 is DPAS_EINVAL; overflow DPAS_ERANGE. */
DPAS_API int dpas_rule_min_n(const dpas_rule *rule, int64_t f, int64_t *min_n, dpas_error *err);
/* Does the rule tolerate f Byzantine replicas among n? */
DPAS_API int dpas_rule_tolerates(const dpas_rule *rule, int64_t n, int64_t f);

/* ---- schedules: bytes and time ---------------------------------------------------------------- */

typedef enum dpas_schedule_id {
    DPAS_SCHED_ALLREDUCE = 0,     /* ring AllReduce of the sum */
    DPAS_SCHED_ALLGATHER,         /* all-gather every gradient, the rule locally (the seed's gather) */
    DPAS_SCHED_PS,                /* parameter server on one of the workers */
    DPAS_SCHED_PS_SEPARATE,       /* parameter server on a separate node */
    DPAS_SCHED_SHARDED,           /* all-to-all of shards, rule per shard, all-gather (BTARD) */
    DPAS_SCHED_SHARDED_DISTANCE,  /* sharded + AllReduce of partial pairwise distances */
    DPAS_SCHED_INNETWORK,         /* in-network AllReduce (SHARP) */
    DPAS_SCHED_COUNT
} dpas_schedule_id;

DPAS_API const char *dpas_schedule_name(dpas_schedule_id s);    /* "allreduce", ... */
DPAS_API const char *dpas_schedule_summary(dpas_schedule_id s); /* one line */
DPAS_API const char *dpas_schedule_source(dpas_schedule_id s);
DPAS_API int dpas_schedule_from_name(const char *name);          /* -1 when unknown */

/* Can the schedule realise the rule? 1 or 0; when 0 and why is not NULL, *why says why. */
DPAS_API int dpas_schedule_realises(dpas_schedule_id s, const dpas_rule *rule, const char **why);

/* Bytes one step moves, per worker (a worker is a data-parallel replica). "sent" and
 * "received" are those of the busiest worker (the server for a parameter server). Exact. */
typedef struct dpas_traffic {
    dpas_bytes sent;
    dpas_bytes received;
    dpas_bytes scalars;   /* of which: distance or norm scalars (sharded_distance), else 0 */
    int64_t messages;     /* latency steps (alpha terms) on the critical path */
} dpas_traffic;

/* Bytes of the schedule for a scenario; `iterations` is the iteration count of iterative rules
 * (geometric median, centered clipping) on sharded_distance, 0 otherwise. */
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

/* alpha-beta time of one step of a schedule, in seconds. */
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

/* ---- byte conventions, inventory, memory ----------------------------------------------------- */

typedef struct dpas_convention {
    const char *name;     /* "zero16", "adam_state", "mlsysim_ckpt", ... */
    dpas_rational width;  /* bytes per parameter */
    const char *what;     /* "mixed-precision Adam training state" */
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
    dpas_bytes state;         /* bytes of training state per replica */
    dpas_bytes capacity;      /* bytes of accelerator memory per replica (a mean when unequal) */
    double headroom;          /* capacity - state, bytes (negative: does not fit) */
    double utilisation;       /* state / capacity */
    int fits;
} dpas_memory;

DPAS_API int dpas_memory_check(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                               dpas_memory *out, dpas_error *err);

/* What a step exposes on the wire and what lies at rest, in exact bytes. */
typedef struct dpas_inventory_row {
    char item[48];       /* "gradient_bytes", "allgather_per_worker", "zero16", "weights_int4" */
    const char *where;   /* "wire" (per step) or "rest" */
    char basis[64];      /* how it is counted: "P x 2 B", "2(N-1)/N x gradient_bytes" */
    dpas_bytes bytes;
    const char *source;
} dpas_inventory_row;

/* Fill up to cap rows; *n is the number of rows (call with cap 0 to count). */
DPAS_API int dpas_inventory(const dpas_scenario *s, dpas_inventory_row *rows, size_t cap,
                            size_t *n, dpas_error *err);

/* ---- aggregation kernels (float32) ------------------------------------------------------------ */

/* The rules run on n gradients of d float32 coordinates, given as n row pointers (row i is
 * x[i][0..d)). Semantics, for every rule:
 *   mean               sum / n per coordinate.
 *   median             per coordinate; for even n the mean of the two middle values.
 *   trimmed_mean       per coordinate, drop the f largest and f smallest, average the n - 2f left.
 *   meamed             per coordinate, the mean of the n - f values closest to the median (the
 *                      closest contiguous run of the sorted values; ties: the lower run).
 *   sign_majority      per coordinate, the sign (+1, -1, or 0 on a tie) of the sum of signs.
 *   krum               the gradient with the smallest score: the sum of squared distances to its
 *                      k nearest others, k = n - f - 2 (blanchard) or n - f - 1 (byzfl); ties: the
 *                      lowest index.
 *   multi_krum         the mean of the m best-scored gradients (m = n - f unless given).
 *   bulyan             n - 2f Krum selections, each over the gradients not yet selected (with
 *                      k = max(1, r - f - 2) neighbours among the r remaining), then per
 *                      coordinate the mean of the n - 4f selected values closest to their median.
 *   centered_clipping  starts from the coordinate-wise median v and repeats `iterations` times
 *                      v += mean_i((x_i - v) min(1, tau / ||x_i - v||)); tau defaults to the
 *                      median of the n distances ||x_i - v0||.
 * Sorting uses a fixed comparator network with min(a, b) = a < b ? a : b: +-Inf sort as the
 * extremes they are; a NaN makes the result of its coordinate unspecified (it may be NaN or one of
 * the inputs) and leaves every other coordinate as it would be; the distance rules see a NaN
 * distance as not smaller than any other, so a gradient with a NaN is never preferred to one
 * without. Nothing crashes. The condition of the rule (dpas_rule_tolerates with f) must hold:
 * DPAS_EINVAL otherwise. */
typedef struct dpas_agg_opts {
    int64_t f;          /* Byzantine gradients the rule guards against */
    int64_t m;          /* multi_krum: how many to average; 0 = n - f */
    int64_t iterations; /* centered_clipping; 0 = 10 */
    double tau;         /* centered_clipping radius; 0 = adaptive */
    int generic;        /* 1: the portable kernels even where AVX2 is there (for tests) */
} dpas_agg_opts;

/* Aggregate into out[0..d). `selected` (n entries, may be NULL) receives the indices the
 * distance rules selected, *nselected their count (0 for the other rules). */
DPAS_API int dpas_aggregate(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, float *out, int64_t *selected,
                            size_t *nselected, dpas_error *err);

/* Squared distances ||x_i - x_j||^2 of the rows, added into D (n x n, row-major, symmetric,
 * zero diagonal): call once per shard with the same D to sum over shards. */
DPAS_API void dpas_pairwise_sqdist_add(const float *const *x, size_t n, size_t d, double *D);

/* The selection of krum, multi_krum or bulyan from the full distance matrix D. */
DPAS_API int dpas_select(const dpas_rule *rule, const double *D, size_t n, const dpas_agg_opts *o,
                         int64_t *selected, size_t *nselected, dpas_error *err);

/* The aggregate of a selection (krum, multi_krum: the mean of the selected rows; bulyan: its
 * coordinate-wise phase over the selected rows). */
DPAS_API int dpas_aggregate_selected(const dpas_rule *rule, const float *const *x, size_t n,
                                     size_t d, const dpas_agg_opts *o, const int64_t *selected,
                                     size_t nselected, float *out, dpas_error *err);

/* Which instruction set the kernels use here: "avx2" or "generic". */
DPAS_API const char *dpas_kernel_isa(void);

/* ---- rendering the analyses -------------------------------------------------------------------- */

/* The rule catalogue as a table: with n > 0 a "max_f" column, with f >= 0 a "min_n" column.
 * convention: NULL for each rule's default row, "all" for every row, or a convention name that
 * replaces the default where a rule has it. */
DPAS_API char *dpas_render_rules(int64_t n, int64_t f, const char *convention, int format,
                                 dpas_error *err);

typedef struct dpas_cost_opts {
    const dpas_rule *const *rules; /* the rules to cost, or NULL for every default rule */
    size_t nrules;
    unsigned schedules;   /* bit per dpas_schedule_id; 0 = all */
    int64_t iterations;   /* of iterative rules (geometric median, centered clipping); 0 = 10 */
    int64_t steps;        /* bytes and times for this many steps; 0 = 1 */
    int64_t f;            /* Byzantine replicas to tolerate, -1 = not asked */
    double compute_rate;  /* FLOP/s per worker for the rule's own compute; 0 = not computed */
    int all;              /* text: list the combinations that are not realisable too */
    int format, units;
    const char *label;
    const dpas_links *links; /* inter-node alpha and beta to use instead of the fabric's (a
                                calibration), or NULL; intra-node still from the fleet's node */
    const char *links_source; /* where they come from, for the output */
} dpas_cost_opts;

/* rule x schedule: realisable or why not, max f at dp_degree, bytes per worker (exact), ratio to
 * the ring AllReduce, time per step flat and hierarchical (when the fleet's links are known). */
DPAS_API char *dpas_render_cost(const dpas_scenario *s, const dpas_cost_opts *o, dpas_error *err);

DPAS_API char *dpas_render_inventory(const dpas_scenario *s, int format, int units,
                                     const char *label, dpas_error *err);

DPAS_API char *dpas_render_memory(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                                  const dpas_memory *m, int format, int units, const char *label,
                                  dpas_error *err);
/* "one replica's training state (2.8 TB, zero16) exceeds ..." for a check that does not fit. */
DPAS_API size_t dpas_memory_message(const dpas_scenario *s, const dpas_convention *c,
                                    int zero_stage, const dpas_memory *m, char *buf, size_t cap);

/* ---- plots ------------------------------------------------------------------------------------- */

typedef enum dpas_axis_unit {
    DPAS_AXIS_PLAIN = 0,   /* numbers */
    DPAS_AXIS_BYTES = 1,   /* tick labels in SI bytes: 1 GB, 10 TB */
    DPAS_AXIS_SECONDS = 2, /* tick labels in us, ms, s */
} dpas_axis_unit;

typedef struct dpas_series {
    const char *name;
    const double *x, *y; /* n points; points with a non-finite or (on a log axis) non-positive
                            coordinate are left out */
    size_t n;
} dpas_series;

typedef struct dpas_plot_spec {
    const char *title, *xlabel, *ylabel;
    int xlog, ylog;     /* 0 linear, 2 log base 2, 10 log base 10 */
    int xunit, yunit;   /* dpas_axis_unit */
    int width, height;  /* pixels; 0 = 800 x 500 */
} dpas_plot_spec;

/* A line chart with axes, ticks, grid, legend and title, as SVG text (deterministic: the same
 * input gives the same bytes). Caller owns the string (dpas_free). */
DPAS_API char *dpas_plot_svg(const dpas_plot_spec *spec, const dpas_series *series, size_t nseries,
                             dpas_error *err);
/* The same chart as a PNG file through cairo; DPAS_EINVAL when built without cairo. */
DPAS_API int dpas_plot_png(const dpas_plot_spec *spec, const dpas_series *series, size_t nseries,
                           const char *path, dpas_error *err);
DPAS_API int dpas_have_cairo(void);
/* The chart in Unicode characters, cols x rows cells of plot area (for a terminal). */
DPAS_API char *dpas_plot_text(const dpas_plot_spec *spec, const dpas_series *series, size_t nseries,
                              int cols, int rows, dpas_error *err);

/* ---- calibration from nccl-tests ---------------------------------------------------------------- */

typedef struct dpas_calibration {
    char collective[32];  /* "all_reduce" or "all_gather" */
    int64_t ranks;
    size_t points;
    double alpha;         /* seconds per latency step */
    double beta;          /* bytes/s per link */
    double r2;            /* of the fit of time against size */
    double max_rel_residual;
} dpas_calibration;

/* Fit alpha and beta from nccl-tests output (its default table, or CSV with a header naming at
 * least size and time columns): time = steps x alpha + factor x size / beta, with nccl-tests'
 * factors (all_reduce: 2(n-1) steps, 2(n-1)/n; all_gather: n-1 steps, (n-1)/n of the total
 * size), by least squares on the relative error. One result per collective found (up to cap).
 * collective and ranks (0) override what the file says. Errors name the line. */
DPAS_API int dpas_calibrate_text(const char *text, size_t len, const char *origin,
                                 const char *collective, int64_t ranks, dpas_calibration *out,
                                 size_t cap, size_t *n, dpas_error *err);
DPAS_API int dpas_calibrate_file(const char *path, const char *collective, int64_t ranks,
                                 dpas_calibration *out, size_t cap, size_t *n, dpas_error *err);
/* The fits as a table: collective, ranks, points, alpha_s, beta_bytes_per_s, r2,
 * max_rel_residual. */
DPAS_API char *dpas_render_calibration(const dpas_calibration *c, size_t n, int format,
                                       dpas_error *err);

/* ---- scenario files and rendering ------------------------------------------------------------ */

/* The inputs of a scenario as read from text, before resolution. Any pointer may be NULL
 * (absent). Owned by whoever fills it; see dpas_spec_free. */
typedef struct dpas_spec dpas_spec;

DPAS_API dpas_spec *dpas_spec_new(void);
DPAS_API void dpas_spec_free(dpas_spec *spec);

/* Read a scenario file (YAML, or JSON when the name ends in .json or the text starts with '{')
 * into spec, field by field; later calls and setters override earlier values. */
DPAS_API int dpas_spec_load_file(dpas_spec *spec, const char *path, dpas_error *err);
DPAS_API int dpas_spec_load_text(dpas_spec *spec, const char *text, size_t len, int is_json,
                                 const char *origin, dpas_error *err);

/* Set one input from text (as a CLI flag would). Keys: "name", "scenario", "model", "params",
 * "fleet", "nodes", "accelerators_per_node", "node", "fabric", "dp", "grad", "ckpt",
 * "weights". `field` names the input in later messages ("--dp"); NULL uses the seed's name.
 * A NULL value for "weights" removes the width (None). "model" and "params" replace each other,
 * as do "fleet" and an inline fleet. Errors: DPAS_EINVAL for an unknown key. */
DPAS_API int dpas_spec_set(dpas_spec *spec, const char *key, const char *value, const char *field,
                           dpas_error *err);

/* Resolve a spec against a registry into scenario inputs and validate them
 * (dpas_scenario_validate). The scenario's strings are borrowed from spec and reg: keep both
 * alive while using it. Errors name the missing or bad input, with its file position when it
 * came from a file. */
DPAS_API int dpas_spec_resolve(dpas_spec *spec, const dpas_registry *reg, dpas_scenario *out,
                               dpas_error *err);

/* The label of the scenario: the file's "name", else the named scenario's full path (once
 * resolved), or NULL. */
DPAS_API const char *dpas_spec_label(const dpas_spec *spec);

typedef enum dpas_format {
    DPAS_FORMAT_TEXT = 0,
    DPAS_FORMAT_JSON,
    DPAS_FORMAT_CSV,
    DPAS_FORMAT_MARKDOWN,
} dpas_format;

typedef struct dpas_render_opts {
    int format;        /* dpas_format */
    int units;         /* dpas_units, for text and markdown */
    int explain;       /* add each attribute's equation with the numbers substituted */
    unsigned attrs;    /* bit per dpas_attr to show; 0 = all */
    const char *label; /* scenario label, or NULL */
} dpas_render_opts;

/* Render inputs and report. Returns a NUL-terminated string owned by the caller (dpas_free),
 * or NULL with err set (DPAS_EUNDEF when an attribute asked for by `attrs` is undefined). */
DPAS_API char *dpas_render_report(const dpas_scenario *s, const dpas_report *r,
                                  const dpas_render_opts *opts, dpas_error *err);

/* The sentence for one warning bit of a report ("dp_degree 96 does not divide ..."). */
DPAS_API size_t dpas_warning_message(const dpas_report *r, unsigned warning, char *buf, size_t cap);

/* Render a mlsysim-style error object {"status":"error","title":...,"reason":...} + "\n". */
DPAS_API char *dpas_render_error_json(const dpas_error *err);

/* Render a registry listing (kind, or -1 for precisions). */
DPAS_API char *dpas_render_list(const dpas_registry *reg, int kind, int format, dpas_error *err);

DPAS_API void dpas_free(void *p);

/* sizeof of a public struct by name ("dpas_scenario", "dpas_report", ...), 0 when unknown: lets
 * a binding (the Python ctypes one) check its mirrors of the structs at load time. */
DPAS_API size_t dpas_sizeof(const char *type_name);

/* The library's version, DPAS_VERSION. */
DPAS_API const char *dpas_version(void);

#ifdef __cplusplus
}
#endif
#endif
