/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/request.h — one typed request for every front end: keys in, validated once.
 * Part of the public API; include "dpas/dpas.h".
 *
 * Every front end parses its own syntax into key/value pairs and nothing else: the CLI its
 * flags, `dpas serve` its query, the Python binding its keyword arguments, dpas-measure its
 * options. This parser turns them into one typed request: the scenario's inputs (through the
 * input table of dpas/spec.h), the analysis, and its options, checked once against one table of
 * what each analysis takes. A key the analysis does not use is refused here, the same way for
 * every front end; so are a key given twice, a value listed twice and a value that breaks a
 * rule. Messages name keys ("dp_degree is required"), never a front end's spelling of them:
 * each front end adds its own hint from the key table (dpas_key_flag, dpas_key_query, ...).
 *
 * The flow of one request:
 *   dpas_request_new(analysis) -> dpas_request_set/_add per key (and a scenario file, if any)
 *   -> dpas_request_resolve (every check, the scenario resolved and evaluated once, a
 *   calibration read and fitted once) -> the typed request (dpas_request_scenario, _report,
 *   _opts) -> the analysis (dpas_request_cost, dpas_request_rules, ..., or the sweep's points).
 *
 * Ownership: a dpas_request owns everything it returns (borrowed pointers live until
 * dpas_request_free); it borrows the registry passed to dpas_request_resolve. */
#ifndef DPAS_REQUEST_H
#define DPAS_REQUEST_H

#include "dpas/cost.h"
#include "dpas/inventory.h"
#include "dpas/spec.h"
#include "dpas/step.h"
#include "dpas/sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a request asks for. */
typedef enum dpas_analysis {
    DPAS_ANALYSIS_EVAL = 0,  /* the seed's attributes (dpas show, dpas eval) */
    DPAS_ANALYSIS_COST,      /* rule x schedule rows (dpas cost) */
    DPAS_ANALYSIS_RULES,     /* the rule catalogue (dpas rules) */
    DPAS_ANALYSIS_INVENTORY, /* bytes on the wire and at rest (dpas inventory) */
    DPAS_ANALYSIS_MEMORY,    /* does the training state fit (dpas memory) */
    DPAS_ANALYSIS_SWEEP,     /* one or two inputs varied, a row per point (dpas sweep) */
    DPAS_ANALYSIS_PLOT,      /* a sweep drawn as a chart (dpas sweep --plot, /api/v1/plot.svg) */
    DPAS_ANALYSIS_CALIBRATE, /* network models from nccl-tests output (dpas calibrate,
                                /api/v1/calibrate, dpas-measure --calibration) */
    DPAS_ANALYSIS_STEP,      /* the training step around each rule's exchange (dpas step) */
    DPAS_ANALYSIS_COUNT
} dpas_analysis;

/* Every key of every request: the scenario's inputs first, numbered as dpas_input, then the
 * options of the analyses. */
typedef enum dpas_key {
    DPAS_KEY_NAME = DPAS_INPUT_NAME,
    DPAS_KEY_SCENARIO = DPAS_INPUT_SCENARIO,
    DPAS_KEY_WORKLOAD = DPAS_INPUT_WORKLOAD,
    DPAS_KEY_WORKLOAD_NAME = DPAS_INPUT_WORKLOAD_NAME,
    DPAS_KEY_PARAMETERS = DPAS_INPUT_PARAMETERS,
    DPAS_KEY_FLEET = DPAS_INPUT_FLEET,
    DPAS_KEY_FLEET_NAME = DPAS_INPUT_FLEET_NAME,
    DPAS_KEY_NODES = DPAS_INPUT_NODES,
    DPAS_KEY_ACCELERATORS_PER_NODE = DPAS_INPUT_ACCELERATORS_PER_NODE,
    DPAS_KEY_NODE = DPAS_INPUT_NODE,
    DPAS_KEY_FABRIC = DPAS_INPUT_FABRIC,
    DPAS_KEY_DP_DEGREE = DPAS_INPUT_DP_DEGREE,
    DPAS_KEY_GRADIENT_WIDTH = DPAS_INPUT_GRADIENT_WIDTH,
    DPAS_KEY_CHECKPOINT_WIDTH = DPAS_INPUT_CHECKPOINT_WIDTH,
    DPAS_KEY_WEIGHT_WIDTH = DPAS_INPUT_WEIGHT_WIDTH,
    DPAS_KEY_RULE = DPAS_INPUT_COUNT, /* rules: a list (cost), one or a list to vary (sweep) */
    DPAS_KEY_SCHEDULE,                /* schedules, likewise */
    DPAS_KEY_CONVENTION,              /* blanchard or byzfl where a rule has it (rules: or all) */
    DPAS_KEY_F,                       /* Byzantine replicas */
    DPAS_KEY_N,                       /* replicas (rules) */
    DPAS_KEY_STEPS,                   /* steps of a cost */
    DPAS_KEY_ITERATIONS,              /* of the iterative rules */
    DPAS_KEY_COMPUTE_RATE,            /* FLOP/s per worker */
    DPAS_KEY_MEMORY_BANDWIDTH,        /* bytes/s per worker (the rule's memory bound) */
    DPAS_KEY_CALIBRATION,             /* nccl-tests files (paths on this machine) */
    DPAS_KEY_NETWORK_MODEL,           /* the calibration's model: default, alpha_beta, ... */
    DPAS_KEY_STATE,                   /* the memory check's byte convention */
    DPAS_KEY_ZERO,                    /* the ZeRO stage */
    DPAS_KEY_ATTR,                    /* attributes (eval) or metrics (sweep, plot) to show */
    DPAS_KEY_EXPLAIN,                 /* equations with the numbers substituted (eval) */
    DPAS_KEY_Y,                       /* the plotted metric */
    DPAS_KEY_TITLE,                   /* the plot's title */
    DPAS_KEY_COLLECTIVE,              /* calibrate: the tests' collective (keep, or name it) */
    DPAS_KEY_RANKS,                   /* calibrate: the tests' rank count (keep, or name it) */
    DPAS_KEY_GPUS_PER_NODE,           /* calibrate: ranks per node (wins over Rank lines) */
    DPAS_KEY_TEST,                    /* calibrate: the tests to fit, numbered from 1 */
    DPAS_KEY_AT,                      /* calibrate: scales to predict at (2160, 540x4) */
    DPAS_KEY_PREDICT,                 /* calibrate: sizes to predict (16MiB, 1GB) */
    DPAS_KEY_TOKENS,                  /* step: tokens per step over every replica */
    DPAS_KEY_GLOBAL_BATCH,            /* step: sequences per step (with sequence) */
    DPAS_KEY_SEQUENCE,                /* step: tokens per sequence */
    DPAS_KEY_MFU,                     /* step: model-FLOPs utilisation */
    DPAS_KEY_BUCKET_BYTES,            /* step: gradient bytes per DDP bucket */
    DPAS_KEY_PRECISION,               /* step: the compute's precision (its peak) */
    DPAS_KEY_PARALLELISM,             /* data only: the others are refused with why */
    DPAS_KEY_OFFLOAD,                 /* none only: offload is refused with why */
    DPAS_KEY_OPTIMIZER,               /* memory, step: the optimizer whose state is held */
    DPAS_KEY_RECOMPUTE,               /* memory, step: activation recomputation */
    DPAS_KEY_MICRO_BATCH,             /* memory, step: sequences per replica per forward */
    DPAS_KEY_STRAGGLERS,              /* none only: stragglers are refused with why */
#ifdef DPAS_TEST_KEY
    DPAS_KEY_TEST_DUMMY, /* test builds only (-DDPAS_TEST_KEY): one table entry, no use */
#endif
    DPAS_KEY_COUNT
} dpas_key;

/* How a key's value is read (bits of dpas_key_flags). */
#define DPAS_KEY_LIST 1u      /* a comma-separated list; an item listed twice is an error */
#define DPAS_KEY_AXIS 2u      /* a sweep varies it when given a list or a range */
#define DPAS_KEY_REPEAT 4u    /* given several times, each value one more item (file paths) */
#define DPAS_KEY_SWITCH 8u    /* true or false (1 or 0); a CLI flag without a value */
#define DPAS_KEY_LOCAL 16u    /* names files of this machine: not taken over HTTP */
#define DPAS_KEY_INPUT 32u    /* a scenario input (the others are options of an analysis) */
#define DPAS_KEY_RANGE 64u    /* a sweep also takes a range (2..4096, 0..8+1) */
#define DPAS_KEY_MEASURE 128u /* an option of dpas-measure too (its run: a cost on the ranks) */

/* What a key's value is: the key types, by name (X-macro: the one name table of the types;
 * a front end's type follows from it: an integer is a whole number, a count may carry an SI
 * multiplier (7B, 4M), bytes and widths a unit (25 MiB, bf16), a rate a unit per second). */
#define DPAS_KEY_TYPE_MAP(X)                                                                       \
    X(TEXT, "text")       /* free text: a label, a title */                                        \
    X(INTEGER, "integer") /* a whole number (dpas_parse_int) */                                    \
    X(COUNT, "count")     /* a whole number, SI multipliers allowed: 175e9, 7B, 4M */              \
    X(BYTES, "bytes")     /* a byte size: 4096, 25 MiB, 1GB */                                     \
    X(WIDTH, "width")     /* bytes per parameter: 2 B, 16 bit, bf16 */                             \
    X(REAL, "real")       /* a real number (a fraction: 0.45 or 45%) */                            \
    X(RATE, "rate")       /* a rate with its unit: 989 TFLOP/s, 3.35 TB/s */                       \
    X(ENUM, "enum")       /* one of a fixed set of names (dpas_key_value) */                       \
    X(NAME, "name")       /* a registry entry's name (dpas_key_see lists them) */                  \
    X(FILE, "file")       /* a file of this machine */                                             \
    X(SWITCH, "switch")   /* true or false (1 or 0) */                                             \
    X(SCALE, "scale")     /* RANKS or NODESxGPUS (540x4) */

typedef enum dpas_key_type {
#define DPAS__TYPE_ENUM(id, name) DPAS_TYPE_##id,
    DPAS_KEY_TYPE_MAP(DPAS__TYPE_ENUM)
#undef DPAS__TYPE_ENUM
        DPAS_KEY_TYPE_COUNT
} dpas_key_type;

/* The key table. dpas_key_name: the key ("dp_degree"), also its name in messages and in
 * dpas_error.field; dpas_key_alias: another name the parser takes ("model"), or NULL;
 * dpas_key_flag / dpas_key_metavar: the CLI's spelling ("--dp", "N"; NULL metavar for a switch);
 * dpas_key_query: the HTTP query parameter (NULL: not over HTTP); dpas_key_keyword: the Python
 * keyword argument; dpas_key_file: the key in a scenario file ("fleet.nodes"; NULL for the
 * options); dpas_key_help: one line. Each is NULL out of range. */
DPAS_API const char *dpas_key_name(dpas_key k);
DPAS_API const char *dpas_key_alias(dpas_key k);
DPAS_API const char *dpas_key_flag(dpas_key k);
DPAS_API const char *dpas_key_metavar(dpas_key k);
DPAS_API const char *dpas_key_query(dpas_key k);
DPAS_API const char *dpas_key_keyword(dpas_key k);
DPAS_API const char *dpas_key_file(dpas_key k);
DPAS_API const char *dpas_key_help(dpas_key k);
DPAS_API unsigned dpas_key_flags(dpas_key k);
/* The key's schema. dpas_key_type_of: what one value (one item of a list) is (DPAS_TYPE_TEXT out
 * of range); dpas_key_type_name: "integer", "count", ... (NULL out of range);
 * dpas_key_bounds: the bounds of an integer key, each set only where there is one (returns 1 |
 * 2 when min | max is set, 0 when none); dpas_key_unit: the value's unit ("B", "FLOP/s") or
 * NULL; dpas_key_default: the value the request takes when the key is not given, as text, or
 * NULL (none, or it depends on the scenario: the help says); dpas_key_see: the listing of the
 * names a NAME or ENUM key takes ("models", "rules") or NULL; dpas_key_value: the i-th name an
 * ENUM key takes in analysis a (NULL past the last, or when the names are open). */
DPAS_API dpas_key_type dpas_key_type_of(dpas_key k);
DPAS_API const char *dpas_key_type_name(dpas_key_type v);
DPAS_API int dpas_key_bounds(dpas_key k, int64_t *min, int64_t *max);
DPAS_API const char *dpas_key_unit(dpas_key k);
DPAS_API const char *dpas_key_default(dpas_key k);
DPAS_API const char *dpas_key_see(dpas_key k);
DPAS_API const char *dpas_key_value(dpas_key k, dpas_analysis a, size_t i);
/* The key of a name or alias ("dp_degree", "model"); -1 when none. */
DPAS_API int dpas_key_from_name(const char *name);
/* Does the analysis take the key? */
DPAS_API int dpas_analysis_takes(dpas_analysis a, dpas_key k);
/* "eval", "cost", ...; NULL out of range; and the reverse (-1 when unknown). */
DPAS_API const char *dpas_analysis_name(dpas_analysis a);
DPAS_API int dpas_analysis_from_name(const char *name);

/* The options of the analyses that have no struct of their own. */
typedef struct dpas_request_opts {
    dpas_cost_opts cost;    /* cost: rules (NULL: every default rule), schedules, f, steps, ... */
    int64_t n, f;           /* rules: -1 when not asked */
    const char *convention; /* rules and sweeps: as given, or NULL */
    const dpas_convention *state;   /* memory: zero16 unless asked */
    int zero;                       /* memory: the ZeRO stage */
    unsigned attrs;                 /* eval: bit per dpas_attr to show; 0 = all */
    int explain;                    /* eval */
    dpas_metric y;                  /* plot: the plotted metric */
    const char *title;              /* plot: the title asked for, or NULL */
    const char *const *calibration; /* the calibration files, as given */
    size_t ncalibration;
    const dpas_optimizer *optimizer; /* memory, step: adam unless asked */
    dpas_recompute recompute;        /* memory, step */
    uint64_t micro_batch;            /* memory, step: 0 when not given */
    uint64_t sequence;               /* memory: tokens per sequence, 0: the model's */
} dpas_request_opts;

typedef struct dpas_request dpas_request;

/* A request of one analysis. *out is the caller's: dpas_request_free. */
DPAS_API int dpas_request_new(dpas_analysis a, dpas_request **out, dpas_error *err);
DPAS_API void dpas_request_free(dpas_request *rq);

/* One key from text, as a front end has it (a list as "median,krum", a range as "2..4096").
 * Errors now: an unknown key (DPAS_EINVAL, field "key"), a key given twice; the value itself is
 * checked by dpas_request_resolve. A REPEAT key takes each call as one more item. */
DPAS_API int dpas_request_set(dpas_request *rq, const char *key, const char *value,
                              dpas_error *err);
/* One item of a LIST, AXIS or REPEAT key (a front end whose lists are lists: Python); for any
 * other key the same as dpas_request_set. An item of a comma-separated list may not hold a
 * comma. */
DPAS_API int dpas_request_add(dpas_request *rq, const char *key, const char *item, dpas_error *err);
/* The scenario to start from, below every key: a scenario file (as dpas_spec_load_file and
 * dpas_spec_load_text), or one input at a time (dpas_request_base, as a file's key would set
 * it; a later one overrides an earlier one). Keys override what these set. */
DPAS_API int dpas_request_load_file(dpas_request *rq, const char *path, dpas_error *err);
DPAS_API int dpas_request_load_text(dpas_request *rq, const char *text, size_t len, int is_json,
                                    const char *origin, dpas_error *err);
DPAS_API int dpas_request_base(dpas_request *rq, const char *key, const char *value,
                               dpas_error *err);

/* A calibration given as text rather than as a file path (nccl-tests output a client sent, as
 * `dpas serve` takes a multipart "calibration" part): each call one more file of the one
 * calibration; origin names it in messages and as the links' source. The text is copied. A
 * request takes files (the calibration key) or texts, not both. */
DPAS_API int dpas_request_calibration_text(dpas_request *rq, const char *text, size_t len,
                                           const char *origin, dpas_error *err);

/* Check everything and build the typed request, in one fixed order whatever the order the keys
 * came in: keys the analysis does not take, then the options, then the scenario (resolved and
 * evaluated once), then what depends on both (a sweep's axes and metrics, a plot's y). Reads
 * the calibration files, once. Call once. */
DPAS_API int dpas_request_resolve(dpas_request *rq, const dpas_registry *reg, dpas_error *err);

/* After a failed resolve: the key whose absence is the error ("dp_degree is required",
 * "time_flat_s needs a schedule"), for a front end's hint; -1 when the error is of another kind. */
DPAS_API int dpas_request_missing(const dpas_request *rq);

/* The typed request, after a successful resolve (NULL before). The scenario and its report:
 * for a sweep or a plot, the inputs that do not vary (the report then is not meaningful). */
DPAS_API dpas_analysis dpas_request_analysis(const dpas_request *rq);
DPAS_API const dpas_scenario *dpas_request_scenario(const dpas_request *rq);
DPAS_API const dpas_report *dpas_request_report(const dpas_request *rq);
/* The scenario's label (dpas_spec_label), or NULL. */
DPAS_API const char *dpas_request_label(const dpas_request *rq);
DPAS_API const dpas_request_opts *dpas_request_opts_of(const dpas_request *rq);
/* The sweep of a sweep or plot request (its axes, metrics, rule and schedule). */
DPAS_API const dpas_sweep *dpas_request_sweep(const dpas_request *rq);

/* The analyses over a resolved request. Each is the analysis' own function called with the
 * request's scenario and options. */
DPAS_API int dpas_request_cost(const dpas_request *rq, dpas_cost **out, dpas_error *err);
/* rows holds dpas_rule_count() entries. */
DPAS_API int dpas_request_rules(const dpas_request *rq, dpas_rule_row *rows, size_t *nrows,
                                dpas_error *err);
/* *rows is the caller's (dpas_free); *n rows. */
DPAS_API int dpas_request_inventory(const dpas_request *rq, dpas_inventory_row **rows, size_t *n,
                                    dpas_error *err);
DPAS_API int dpas_request_memory(const dpas_request *rq, dpas_memory *out, dpas_error *err);
/* calibrate: the model read and fitted from the request's calibration, once, with its
 * collective, ranks, gpus_per_node and test (borrowed from the request; NULL before a resolve
 * or for another analysis); the number of prediction rows asked for per collective (the sizes
 * of predict times the scales of at, 1 scale when at is not given; 0 without predict: every
 * measured size), for a budget counted before they are computed; and the predictions at those
 * sizes and scales (*rows is the caller's, dpas_free). */
DPAS_API const dpas_netmodel *dpas_request_netmodel(const dpas_request *rq);
DPAS_API size_t dpas_request_predictions_asked(const dpas_request *rq);
DPAS_API int dpas_request_calibrate(const dpas_request *rq, dpas_net_prediction **rows,
                                    size_t *nrows, dpas_error *err);
/* *out is the caller's: dpas_step_free. */
DPAS_API int dpas_request_step(const dpas_request *rq, dpas_step **out, dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
