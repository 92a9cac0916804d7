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

/* The label given to the scenario (a named scenario's path, or the file's "name"), or NULL. */
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

#ifdef __cplusplus
}
#endif
#endif
