/* SPDX-License-Identifier: Apache-2.0 */
/* The key table: every key of every request, how each front end spells it, and which analyses
 * take it. The one place a front end learns its flags, query parameters and keyword arguments
 * from, and the key of each input in a scenario file (spec.c reads files by it). */
#include "request_inputs.h"

#include <string.h>

enum {
    E = 1u << DPAS_ANALYSIS_EVAL,
    C = 1u << DPAS_ANALYSIS_COST,
    R = 1u << DPAS_ANALYSIS_RULES,
    I = 1u << DPAS_ANALYSIS_INVENTORY,
    M = 1u << DPAS_ANALYSIS_MEMORY,
    S = 1u << DPAS_ANALYSIS_SWEEP,
    P = 1u << DPAS_ANALYSIS_PLOT,
    K = 1u << DPAS_ANALYSIS_CALIBRATE,
    T = 1u << DPAS_ANALYSIS_STEP,
    SCEN = E | C | I | M | S | P | T, /* every analysis of a scenario */
};

#define LIST DPAS_KEY_LIST
#define AXIS DPAS_KEY_AXIS
#define RANGE (DPAS_KEY_AXIS | DPAS_KEY_RANGE)
#define REPEAT DPAS_KEY_REPEAT
#define SWITCH DPAS_KEY_SWITCH
#define LOCAL DPAS_KEY_LOCAL
#define INPUT DPAS_KEY_INPUT
#define MEAS DPAS_KEY_MEASURE /* dpas-measure takes it */

/* The spellings: over HTTP and in Python as its name (ALL), or not over HTTP (PY: a file of
 * this machine), or not in Python (HTTP: the binding has no calibrate). */
#define ALL .query = true, .keyword = true
#define PY .keyword = true
#define HTTP .query = true
/* The kind of a value and its bounds (an integer's; none unless given). */
#define KIND(k) .kind = DPAS_TYPE_##k
#define MIN(v) .has_min = true, .min = (v)
#define MAX(v) .has_max = true, .max = (v)

/* Which rules use a key that only some rules use (issue 29: a convention given for the median, or
 * iterations for Krum, was silently ignored; the request refuses a key no chosen rule uses). */
static bool has_conventions(const dpas_rule *r)
{
    return strcmp(r->convention, dpas__conv_STANDARD) != 0;
}
static bool iterates(const dpas_rule *r) { return (r->caps & DPAS_RULE_CAP_ITERATIVE) != 0; }

/* The names an ENUM key takes, read from the library's own tables (the i-th; NULL past the
 * last). A rule of several conventions has a row per convention: each name once. */
static const char *rule_name(dpas_analysis a, size_t i)
{
    (void)a;
    for (size_t r = 0, n = 0; r < dpas_rule_count(); r++) {
        const char *name = dpas_rule_at(r)->name;
        bool seen = false;
        for (size_t j = 0; j < r && !seen; j++)
            seen = !strcmp(dpas_rule_at(j)->name, name);
        if (!seen && n++ == i)
            return name;
    }
    return NULL;
}
static const char *convention_name(dpas_analysis a, size_t i)
{
    size_t n = 0;
    for (size_t r = 0; r < dpas_rule_count(); r++) {
        const char *c = dpas_rule_at(r)->convention;
        bool seen = !strcmp(c, dpas__conv_STANDARD);
        for (size_t j = 0; j < r && !seen; j++)
            seen = !strcmp(dpas_rule_at(j)->convention, c);
        if (!seen && n++ == i)
            return c;
    }
    return a == DPAS_ANALYSIS_RULES && i == n ? "all" : NULL;
}
static const char *schedule_name(dpas_analysis a, size_t i)
{
    (void)a;
    return i < 64 ? dpas_schedule_name((dpas_schedule_id)i) : NULL;
}
static const char *netmodel_name(dpas_analysis a, size_t i)
{
    (void)a;
    return i < 64 ? dpas_netmodel_kind_name((int)i) : NULL;
}
static const char *state_name(dpas_analysis a, size_t i)
{
    (void)a;
    const dpas_convention *c = dpas_convention_at(i);
    return c ? c->name : NULL;
}
/* attr: an eval's attributes, a sweep's metrics (the attributes and more) */
static const char *attr_name(dpas_analysis a, size_t i)
{
    if (a == DPAS_ANALYSIS_EVAL)
        return i < DPAS_ATTR_COUNT ? dpas_attr_name((dpas_attr)i) : NULL;
    return i < DPAS_METRIC_COUNT ? dpas_metric_name((int)i) : NULL;
}
/* y: a metric that is a number (time_basis and time_model are words) */
static const char *y_name(dpas_analysis a, size_t i)
{
    (void)a;
    for (int m = 0, n = 0; m < DPAS_METRIC_COUNT; m++)
        if (m != DPAS_METRIC_TIME_BASIS && m != DPAS_METRIC_TIME_MODEL && (size_t)n++ == i)
            return dpas_metric_name(m);
    return NULL;
}
static const char *collective_name(dpas_analysis a, size_t i)
{
    (void)a;
    return i < DPAS_COLL_COUNT ? dpas_collective_name((int)i) : NULL;
}
static const char *precision_name(dpas_analysis a, size_t i)
{
    (void)a;
    static const char *const names[] = {"bf16", "fp16"}; /* the registry's dense peaks */
    return i < 2 ? names[i] : NULL;
}

/* One entry per key: how each front end spells it (name, alias, CLI flag and metavar, over
 * HTTP, in Python), the analyses that take it, how it is read (flags), what a value is (kind,
 * bounds, unit, default, the names it takes), one description (every front end's help), and
 * the rules that use it. A new key is one entry here plus its use in the library. */
static const struct key_row {
    const char *name, *alias, *flag, *metavar;
    const char *file;    /* its key in a scenario file (the inputs) */
    bool query, keyword; /* spelled as its name over HTTP, in Python */
    unsigned analyses, flags;
    dpas_key_type kind;
    bool has_min, has_max;
    int64_t min, max;
    const char *unit, *def, *see;
    const char *(*value)(dpas_analysis a, size_t i);
    const char *help;
    bool (*used_by)(const dpas_rule *r); /* NULL: every rule uses it (or none needs to) */
} keys[DPAS_KEY_COUNT] = {
    [DPAS_KEY_NAME] = {"name", ALL, .file = "name", .analyses = SCEN, .flags = INPUT, KIND(TEXT),
                       .help = "the scenario's label in reports"},
    [DPAS_KEY_SCENARIO] = {"scenario", .flag = "--scenario", .metavar = "NAME", ALL,
                           .file = "scenario", .analyses = SCEN, .flags = INPUT, KIND(NAME),
                           .see = "scenarios", .help = "a named scenario to start from"},
    [DPAS_KEY_WORKLOAD] = {"workload", "model", "--model", "NAME", ALL, .file = "workload",
                           .analyses = SCEN, .flags = INPUT | AXIS | MEAS, KIND(NAME),
                           .see = "models", .help = "a registry model"},
    [DPAS_KEY_WORKLOAD_NAME] = {"workload_name", .flag = "--workload-name", .metavar = "TEXT", ALL,
                                .file = "workload.name", .analyses = SCEN, .flags = INPUT,
                                KIND(TEXT),
                                .help = "the label of a workload given by its parameters"},
    [DPAS_KEY_PARAMETERS] = {"parameters", .flag = "--params", .metavar = "COUNT", ALL,
                             .file = "workload.parameters", .analyses = SCEN,
                             .flags = INPUT | RANGE | MEAS, KIND(COUNT), .unit = "parameters",
                             .help = "the workload's parameter count: 175e9, 70.6e9, 7B"},
    [DPAS_KEY_FLEET] = {"fleet", .flag = "--fleet", .metavar = "NAME", ALL, .file = "fleet",
                        .analyses = SCEN, .flags = INPUT | AXIS, KIND(NAME), .see = "fleets",
                        .help = "a registry fleet"},
    [DPAS_KEY_FLEET_NAME] = {"fleet_name", .flag = "--fleet-name", .metavar = "TEXT", ALL,
                             .file = "fleet.name", .analyses = SCEN, .flags = INPUT, KIND(TEXT),
                             .help = "the label of a fleet given by its parts"},
    [DPAS_KEY_NODES] = {"nodes", .flag = "--nodes", .metavar = "N", ALL, .file = "fleet.nodes",
                        .analyses = SCEN, .flags = INPUT, KIND(INTEGER),
                        .help = "the fleet's node count (overrides a registry fleet's)"},
    [DPAS_KEY_ACCELERATORS_PER_NODE] = {"accelerators_per_node", .flag = "--accelerators-per-node",
                                        .metavar = "N", ALL, .file = "fleet.accelerators_per_node",
                                        .analyses = SCEN, .flags = INPUT, KIND(INTEGER),
                                        .help = "accelerators per node (overrides the fleet's)"},
    [DPAS_KEY_NODE] = {"node", .flag = "--node", .metavar = "NAME", ALL, .file = "fleet.node",
                       .analyses = SCEN, .flags = INPUT, KIND(NAME),
                       .help = "a registry node: accelerator and intra-node link"},
    [DPAS_KEY_FABRIC] = {"fabric", .flag = "--fabric", .metavar = "NAME", ALL,
                         .file = "fleet.fabric", .analyses = SCEN, .flags = INPUT, KIND(NAME),
                         .help = "a registry fabric: the inter-node link"},
    [DPAS_KEY_DP_DEGREE] = {"dp_degree", .flag = "--dp", .metavar = "N", ALL, .file = "dp_degree",
                            .analyses = SCEN, .flags = INPUT | RANGE, KIND(INTEGER),
                            .help = "data-parallel replicas"},
    [DPAS_KEY_GRADIENT_WIDTH] = {"gradient_bytes_per_param", .flag = "--grad", .metavar = "WIDTH",
                                 ALL, .file = "gradient_bytes_per_param", .analyses = SCEN,
                                 .flags = INPUT | AXIS | MEAS, KIND(WIDTH), .unit = "B/parameter",
                                 .help = "2 B, 16 bit, bf16, 4.127 bit, ..."},
    [DPAS_KEY_CHECKPOINT_WIDTH] = {"checkpoint_bytes_per_param", .flag = "--ckpt",
                                   .metavar = "WIDTH", ALL, .file = "checkpoint_bytes_per_param",
                                   .analyses = SCEN, .flags = INPUT | AXIS, KIND(WIDTH),
                                   .unit = "B/parameter", .help = "14 B, ..."},
    [DPAS_KEY_WEIGHT_WIDTH] = {"weight_bytes_per_param", .flag = "--weights", .metavar = "WIDTH",
                               ALL, .file = "weight_bytes_per_param", .analyses = SCEN,
                               .flags = INPUT, KIND(WIDTH), .unit = "B/parameter",
                               .help = "optional; none removes it"},
    [DPAS_KEY_RULE] = {"rule", .flag = "--rule", .metavar = "R[,R...]", ALL,
                       .analyses = C | S | P | T, .flags = LIST | AXIS | MEAS, KIND(ENUM),
                       .see = "rules", .value = rule_name,
                       .help = "robust rules; cost: default every rule"},
    [DPAS_KEY_SCHEDULE] = {"schedule", .flag = "--schedule", .metavar = "S[,S...]", ALL,
                           .analyses = C | S | P | T, .flags = LIST | AXIS | MEAS, KIND(ENUM),
                           .value = schedule_name, .help = "schedules; cost: default all"},
    [DPAS_KEY_CONVENTION] = {"convention", .flag = "--convention", .metavar = "NAME", ALL,
                             .analyses = C | R | S | P | T, .flags = MEAS, KIND(ENUM),
                             .def = dpas__conv_BLANCHARD, .value = convention_name,
                             .help = "blanchard (default) or byzfl for Krum and Multi-Krum; "
                                     "rules: all",
                             .used_by = has_conventions},
    [DPAS_KEY_F] = {"f", .flag = "--f", .metavar = "F", ALL, .analyses = C | R | S | P,
                    .flags = RANGE | MEAS, KIND(INTEGER), MIN(0),
                    .help = "Byzantine replicas: cost adds tolerates, rules min_n; sweep: N = "
                            "min_n(f) unless dp_degree is given"},
    [DPAS_KEY_N] = {"n", .flag = "--n", .metavar = "N", ALL, .analyses = R, KIND(INTEGER), MIN(1),
                    .help = "replicas: rules adds max_f"},
    [DPAS_KEY_STEPS] = {"steps", .flag = "--steps", .metavar = "K", ALL, .analyses = C,
                        KIND(INTEGER), MIN(1), .def = "1",
                        .help = "bytes and times for K steps (default 1)"},
    [DPAS_KEY_ITERATIONS] = {"iterations", .flag = "--iterations", .metavar = "T", ALL,
                             .analyses = C | S | P | T, .flags = MEAS, KIND(INTEGER), MIN(1),
                             .def = "10",
                             .help = "of geometric_median and centered_clipping (default 10)",
                             .used_by = iterates},
    [DPAS_KEY_COMPUTE_RATE] = {"compute_rate", .flag = "--compute-rate", .metavar = "FLOPS", ALL,
                               .analyses = C | T, KIND(RATE), .unit = "FLOP/s",
                               .help = "FLOP/s per worker: adds the rule's own compute time"},
    [DPAS_KEY_MEMORY_BANDWIDTH] =
        {"memory_bandwidth", .flag = "--memory-bandwidth", .metavar = "B/s", ALL, .analyses = C | T,
         KIND(RATE), .unit = "B/s",
         .help = "memory bytes/s per worker (default: the node's "
                 "accelerator's HBM): the rule's compute is "
                 "max(flops/rate, bytes/this)"},
    [DPAS_KEY_CALIBRATION] = {"calibration", .flag = "--calibration", .metavar = "FILE", PY,
                              .analyses = C | S | P | K | T, .flags = REPEAT | LOCAL | MEAS,
                              KIND(FILE),
                              .help = "nccl-tests output: files of one cluster (A,B or repeated; "
                                      "a file once), read and fitted once as one model"},
    [DPAS_KEY_NETWORK_MODEL] = {"network_model", .flag = "--network-model", .metavar = "M", ALL,
                                .analyses = C | S | P | T, .flags = MEAS, KIND(ENUM),
                                .def = "default", .value = netmodel_name,
                                .help = "with calibration: default (the measured curve at a "
                                        "measured scale and size, the nccl model elsewhere), "
                                        "nccl, empirical, piecewise or alpha_beta"},
    [DPAS_KEY_STATE] = {"state", .flag = "--state", .metavar = "NAME", ALL, .analyses = M,
                        KIND(ENUM), .def = "zero16", .value = state_name,
                        .help = "zero16 (default), megatron18, or a convention of dpas "
                                "inventory"},
    [DPAS_KEY_ZERO] = {"zero", .flag = "--zero", .metavar = "STAGE", ALL, .analyses = C | M | T,
                       KIND(INTEGER), MIN(0), MAX(3), .def = "0",
                       .help = "ZeRO stage 0 (default), 1, 2 or 3"},
    [DPAS_KEY_ATTR] = {"attr", .flag = "--attr", .metavar = "A[,A...]", ALL, .analyses = E | S | P,
                       .flags = LIST, KIND(ENUM), .value = attr_name,
                       .help = "eval: attributes to show; sweep: metrics"},
    [DPAS_KEY_EXPLAIN] = {"explain", .flag = "--explain", ALL, .analyses = E, .flags = SWITCH,
                          KIND(SWITCH), .def = "false",
                          .help = "each attribute's equation with the numbers substituted"},
    [DPAS_KEY_Y] = {"y", .flag = "--y", .metavar = "METRIC", ALL, .analyses = P, KIND(ENUM),
                    .value = y_name, .help = "the plotted metric (default: the first of attr)"},
    [DPAS_KEY_TITLE] = {"title", .flag = "--title", .metavar = "TEXT", ALL, .analyses = P,
                        KIND(TEXT), .help = "the plot's title"},
    /* calibrate's (no Python keyword: the binding has no calibrate) */
    [DPAS_KEY_COLLECTIVE] = {"collective", .flag = "--collective", .metavar = "C", HTTP,
                             .analyses = K, KIND(ENUM), .value = collective_name,
                             .help = "keep the tests of this collective, or name it where a file "
                                     "cannot tell"},
    [DPAS_KEY_RANKS] = {"ranks", .flag = "--ranks", .metavar = "N", HTTP, .analyses = K,
                        KIND(INTEGER), MIN(2),
                        .help = "keep the tests on N ranks (>= 2), or name it where a file "
                                "cannot tell"},
    [DPAS_KEY_GPUS_PER_NODE] = {"gpus_per_node", .flag = "--gpus-per-node", .metavar = "G", HTTP,
                                .analyses = K, KIND(INTEGER), MIN(1),
                                .help = "ranks per node of every test (wins over Rank lines, "
                                        "with a note)"},
    [DPAS_KEY_TEST] = {"test", .flag = "--test", .metavar = "K[,K...]", HTTP, .analyses = K,
                       .flags = LIST, KIND(INTEGER), MIN(1),
                       .help = "the tests to fit, numbered from 1 across the files by name"},
    [DPAS_KEY_AT] = {"at", .flag = "--at", .metavar = "SCALE[,...]", HTTP, .analyses = K,
                     .flags = LIST, KIND(SCALE),
                     .help = "predict at these scales: RANKS or NODESxGPUS (540x4)"},
    [DPAS_KEY_PREDICT] = {"predict", .flag = "--predict", .metavar = "SIZE[,...]", HTTP,
                          .analyses = K, .flags = LIST, KIND(BYTES), .unit = "B",
                          .help = "predict these sizes (4096, 16MiB, 1GB; all_gather: the "
                                  "total)"},
    [DPAS_KEY_TOKENS] = {"tokens", .flag = "--tokens", .metavar = "COUNT", ALL, .analyses = T,
                         KIND(COUNT), MIN(1), .unit = "tokens",
                         .help = "tokens per step over every replica: 4M, 16.8e6 (or "
                                 "global_batch and sequence)"},
    [DPAS_KEY_GLOBAL_BATCH] = {"global_batch", .flag = "--global-batch", .metavar = "COUNT", ALL,
                               .analyses = T, KIND(COUNT), MIN(1), .unit = "sequences",
                               .help = "sequences per step over every replica (with sequence)"},
    [DPAS_KEY_SEQUENCE] = {"sequence", .flag = "--sequence", .metavar = "COUNT", ALL,
                           .analyses = M | T, KIND(COUNT), MIN(1), .unit = "tokens",
                           .help = "tokens per sequence (step: with global_batch; memory: default "
                                   "the model's)"},
    [DPAS_KEY_MFU] = {"mfu", .flag = "--mfu", .metavar = "FRACTION", ALL, .analyses = T, KIND(REAL),
                      .def = "0.40",
                      .help = "model-FLOPs utilisation in (0, 1], 0.45 or 45%; default 0.40, "
                              "assumed (Llama 3 paper: 38-43%)"},
    [DPAS_KEY_BUCKET_BYTES] = {"bucket_bytes", .flag = "--bucket", .metavar = "BYTES", ALL,
                               .analyses = T, KIND(BYTES), .unit = "B", .def = "25 MiB",
                               .help = "gradient bytes per bucket (default 25 MiB, as PyTorch "
                                       "DDP)"},
    [DPAS_KEY_PRECISION] = {"precision", .flag = "--precision", .metavar = "NAME", ALL,
                            .analyses = T, KIND(ENUM), .def = "bf16", .value = precision_name,
                            .help = "the compute's precision: bf16 (default) or fp16, the "
                                    "accelerator's dense peak; another: give compute_rate"},
    [DPAS_KEY_PARALLELISM] = {"parallelism", .flag = "--parallelism", .metavar = "P[,P...]", ALL,
                              .analyses = C | M | T, .flags = LIST, KIND(ENUM), .def = "data",
                              .help = "data (the default, the only one modelled); tensor, "
                                      "pipeline, expert and context are refused with why"},
    [DPAS_KEY_OFFLOAD] = {"offload", .flag = "--offload", .metavar = "WHERE", ALL,
                          .analyses = C | M | T, KIND(ENUM), .def = "none",
                          .help = "none (the default, the only one modelled); cpu and nvme are "
                                  "refused with why"},
    /* issue 32's memory keys: each entry self-contained */
    [DPAS_KEY_OPTIMIZER] = {"optimizer", .flag = "--optimizer", .metavar = "NAME", ALL,
                            .analyses = M | T, KIND(ENUM), .def = "adam",
                            .help = "the optimizer's state: adam (default, 12 B/param), adam_8bit "
                                    "(6), sgd_momentum (8) or sgd (4), beside 16-bit weights and "
                                    "gradients"},
    [DPAS_KEY_RECOMPUTE] = {"recompute", .flag = "--recompute", .metavar = "HOW", ALL,
                            .analyses = M | T, KIND(ENUM), .def = "none",
                            .help = "activation recomputation: none (default), selective or full "
                                    "(Korthikanti et al. 2022)"},
    [DPAS_KEY_MICRO_BATCH] = {"micro_batch", .flag = "--micro-batch", .metavar = "COUNT", ALL,
                              .analyses = M | T, KIND(COUNT), MIN(1), .unit = "sequences",
                              .help = "sequences per replica per forward pass: counts the "
                                      "activations (step: default the replica's share of the "
                                      "batch)"},
    [DPAS_KEY_STRAGGLERS] = {"stragglers", .flag = "--stragglers", .metavar = "WHAT", ALL,
                             .analyses = C | M | T, KIND(ENUM), .def = "none",
                             .help = "none (the default, the only one modelled); anything else is "
                                     "refused with why"},
#ifdef DPAS_TEST_KEY
    /* the schema test's key (tests/schema): one entry, found in every front end's help */
    [DPAS_KEY_TEST_DUMMY] = {"dummy_test_key", .flag = "--dummy-test-key", .metavar = "N", ALL,
                             .analyses = C, .flags = MEAS, KIND(INTEGER), MIN(3), MAX(9),
                             .def = "5", .help = "a key of the test build only"},
#endif
};

static const char *const kind_names[DPAS_KEY_TYPE_COUNT] = {
#define KIND_NAME(id, name) name,
    DPAS_KEY_TYPE_MAP(KIND_NAME)
#undef KIND_NAME
};

static const char *const analyses[DPAS_ANALYSIS_COUNT] = {
    "eval", "cost", "rules", "inventory", "memory", "sweep", "plot", "calibrate", "step",
};

static const struct key_row *row(dpas_key k)
{
    return (unsigned)k < DPAS_KEY_COUNT ? &keys[k] : NULL;
}

const char *dpas_key_name(dpas_key k) { return row(k) ? row(k)->name : NULL; }
const char *dpas_key_alias(dpas_key k) { return row(k) ? row(k)->alias : NULL; }
const char *dpas_key_flag(dpas_key k) { return row(k) ? row(k)->flag : NULL; }
const char *dpas_key_metavar(dpas_key k) { return row(k) ? row(k)->metavar : NULL; }
const char *dpas_key_query(dpas_key k) { return row(k) && row(k)->query ? row(k)->name : NULL; }
const char *dpas_key_keyword(dpas_key k) { return row(k) && row(k)->keyword ? row(k)->name : NULL; }
const char *dpas_key_file(dpas_key k) { return row(k) ? row(k)->file : NULL; }
const char *dpas_key_help(dpas_key k) { return row(k) ? row(k)->help : NULL; }
unsigned dpas_key_flags(dpas_key k) { return row(k) ? row(k)->flags : 0; }
dpas_key_type dpas_key_type_of(dpas_key k) { return row(k) ? row(k)->kind : DPAS_TYPE_TEXT; }
const char *dpas_key_type_name(dpas_key_type v)
{
    return (unsigned)v < DPAS_KEY_TYPE_COUNT ? kind_names[v] : NULL;
}
int dpas_key_bounds(dpas_key k, int64_t *min, int64_t *max)
{
    const struct key_row *r = row(k);
    if (!r)
        return 0;
    if (r->has_min && min)
        *min = r->min;
    if (r->has_max && max)
        *max = r->max;
    return (r->has_min ? 1 : 0) | (r->has_max ? 2 : 0);
}
const char *dpas_key_unit(dpas_key k) { return row(k) ? row(k)->unit : NULL; }
const char *dpas_key_default(dpas_key k) { return row(k) ? row(k)->def : NULL; }
const char *dpas_key_see(dpas_key k) { return row(k) ? row(k)->see : NULL; }
const char *dpas_key_value(dpas_key k, dpas_analysis a, size_t i)
{
    return row(k) && row(k)->value ? row(k)->value(a, i) : NULL;
}

int dpas__key_used_by(dpas_key k, const dpas_rule *r)
{
    return !row(k) || !row(k)->used_by ? -1 : row(k)->used_by(r) ? 1 : 0;
}

int dpas_key_from_name(const char *name)
{
    for (int k = 0; name && k < DPAS_KEY_COUNT; k++)
        if (!strcmp(name, keys[k].name) || (keys[k].alias && !strcmp(name, keys[k].alias)))
            return k;
    return -1;
}

int dpas_analysis_takes(dpas_analysis a, dpas_key k)
{
    return (unsigned)a < DPAS_ANALYSIS_COUNT && row(k) && (row(k)->analyses & (1u << a));
}

const char *dpas_analysis_name(dpas_analysis a)
{
    return (unsigned)a < DPAS_ANALYSIS_COUNT ? analyses[a] : NULL;
}

int dpas_analysis_from_name(const char *name)
{
    for (int a = 0; name && a < DPAS_ANALYSIS_COUNT; a++)
        if (!strcmp(name, analyses[a]))
            return a;
    return -1;
}
