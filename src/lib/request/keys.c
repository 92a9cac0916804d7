/* SPDX-License-Identifier: Apache-2.0 */
/* The key table: every key of every request, how each front end spells it, and which analyses
 * take it. The one place a front end learns its flags, query parameters and keyword arguments
 * from; the scenario file's keys come from the input table (dpas_input_path). */
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
#define REPEAT DPAS_KEY_REPEAT
#define SWITCH DPAS_KEY_SWITCH
#define LOCAL DPAS_KEY_LOCAL
#define INPUT DPAS_KEY_INPUT

/* Which rules use a key that only some rules use (issue 29: a convention given for the median, or
 * iterations for Krum, was silently ignored; the request refuses a key no chosen rule uses). */
static bool has_conventions(const dpas_rule *r) { return strcmp(r->convention, "standard") != 0; }
static bool iterates(const dpas_rule *r) { return (r->caps & DPAS_RULE_CAP_ITERATIVE) != 0; }

static const struct key_row {
    const char *name, *alias, *flag, *metavar;
    bool query, keyword; /* spelled as its name over HTTP, in Python */
    unsigned analyses, flags;
    const char *help;
    bool (*used_by)(const dpas_rule *r); /* NULL: every rule uses it (or none needs to) */
} keys[DPAS_KEY_COUNT] = {
    [DPAS_KEY_NAME] = {"name", NULL, NULL, NULL, true, true, SCEN, INPUT,
                       "the scenario's label in reports (no CLI flag)"},
    [DPAS_KEY_SCENARIO] = {"scenario", NULL, "--scenario", "NAME", true, true, SCEN, INPUT,
                           "a named scenario to start from (dpas list scenarios)"},
    [DPAS_KEY_WORKLOAD] = {"workload", "model", "--model", "NAME", true, true, SCEN, INPUT | AXIS,
                           "a registry model (dpas list models)"},
    [DPAS_KEY_WORKLOAD_NAME] = {"workload_name", NULL, "--workload-name", "TEXT", true, true, SCEN,
                                INPUT, "the label of a workload given by its parameters"},
    [DPAS_KEY_PARAMETERS] = {"parameters", NULL, "--params", "COUNT", true, true, SCEN,
                             INPUT | AXIS, "the workload's parameter count: 175e9, 70.6e9, 7B"},
    [DPAS_KEY_FLEET] = {"fleet", NULL, "--fleet", "NAME", true, true, SCEN, INPUT | AXIS,
                        "a registry fleet (dpas list fleets)"},
    [DPAS_KEY_FLEET_NAME] = {"fleet_name", NULL, "--fleet-name", "TEXT", true, true, SCEN, INPUT,
                             "the label of a fleet given by its parts"},
    [DPAS_KEY_NODES] = {"nodes", NULL, "--nodes", "N", true, true, SCEN, INPUT,
                        "the fleet's node count (overrides a registry fleet's)"},
    [DPAS_KEY_ACCELERATORS_PER_NODE] = {"accelerators_per_node", NULL, "--accelerators-per-node",
                                        "N", true, true, SCEN, INPUT,
                                        "accelerators per node (overrides the fleet's)"},
    [DPAS_KEY_NODE] = {"node", NULL, "--node", "NAME", true, true, SCEN, INPUT,
                       "a registry node: accelerator and intra-node link"},
    [DPAS_KEY_FABRIC] = {"fabric", NULL, "--fabric", "NAME", true, true, SCEN, INPUT,
                         "a registry fabric: the inter-node link"},
    [DPAS_KEY_DP_DEGREE] = {"dp_degree", NULL, "--dp", "N", true, true, SCEN, INPUT | AXIS,
                            "data-parallel replicas"},
    [DPAS_KEY_GRADIENT_WIDTH] = {"gradient_bytes_per_param", NULL, "--grad", "WIDTH", true, true,
                                 SCEN, INPUT | AXIS, "2 B, 16 bit, bf16, 4.127 bit, ..."},
    [DPAS_KEY_CHECKPOINT_WIDTH] = {"checkpoint_bytes_per_param", NULL, "--ckpt", "WIDTH", true,
                                   true, SCEN, INPUT | AXIS, "14 B, ..."},
    [DPAS_KEY_WEIGHT_WIDTH] = {"weight_bytes_per_param", NULL, "--weights", "WIDTH", true, true,
                               SCEN, INPUT, "optional; none removes it"},
    [DPAS_KEY_RULE] = {"rule", NULL, "--rule", "R[,R...]", true, true, C | S | P | T, LIST | AXIS,
                       "robust rules (dpas rules); cost: default every rule"},
    [DPAS_KEY_SCHEDULE] = {"schedule", NULL, "--schedule", "S[,S...]", true, true, C | S | P | T,
                           LIST | AXIS, "schedules; cost: default all"},
    [DPAS_KEY_CONVENTION] = {"convention", NULL, "--convention", "NAME", true, true,
                             C | R | S | P | T, 0,
                             "blanchard (default) or byzfl for Krum and Multi-Krum; rules: all",
                             has_conventions},
    [DPAS_KEY_F] = {"f", NULL, "--f", "F", true, true, C | R | S | P, AXIS,
                    "Byzantine replicas: cost adds tolerates, rules min_n; sweep: N = min_n(f) "
                    "unless dp_degree is given"},
    [DPAS_KEY_N] = {"n", NULL, "--n", "N", true, true, R, 0, "replicas: rules adds max_f"},
    [DPAS_KEY_STEPS] = {"steps", NULL, "--steps", "K", true, true, C, 0,
                        "bytes and times for K steps (default 1)"},
    [DPAS_KEY_ITERATIONS] = {"iterations", NULL, "--iterations", "T", true, true, C | S | P | T, 0,
                             "of geometric_median and centered_clipping (default 10)", iterates},
    [DPAS_KEY_COMPUTE_RATE] = {"compute_rate", NULL, "--compute-rate", "FLOPS", true, true, C | T,
                               0, "FLOP/s per worker: adds the rule's own compute time"},
    [DPAS_KEY_MEMORY_BANDWIDTH] = {"memory_bandwidth", NULL, "--memory-bandwidth", "B/s", true,
                                   true, C | T, 0,
                                   "memory bytes/s per worker (default: the node's accelerator's "
                                   "HBM): the rule's compute is max(flops/rate, bytes/this)"},
    [DPAS_KEY_CALIBRATION] = {"calibration", NULL, "--calibration", "FILE", false, true,
                              C | S | P | K | T, REPEAT | LOCAL,
                              "nccl-tests output: files of one cluster (A,B or repeated; a file "
                              "once), read and fitted once as one model"},
    [DPAS_KEY_NETWORK_MODEL] = {"network_model", NULL, "--network-model", "M", true, true,
                                C | S | P | T, 0,
                                "with calibration: default (the measured curve at a measured "
                                "scale and size, the nccl model elsewhere), nccl, empirical, "
                                "piecewise or alpha_beta"},
    [DPAS_KEY_STATE] = {"state", NULL, "--state", "NAME", true, true, M, 0,
                        "zero16 (default), megatron18, or a convention of dpas inventory"},
    [DPAS_KEY_ZERO] = {"zero", NULL, "--zero", "STAGE", true, true, C | M | T, 0,
                       "ZeRO stage 0 (default), 1, 2 or 3"},
    [DPAS_KEY_ATTR] = {"attr", NULL, "--attr", "A[,A...]", true, true, E | S | P, LIST,
                       "eval: attributes to show; sweep: metrics"},
    [DPAS_KEY_EXPLAIN] = {"explain", NULL, "--explain", NULL, true, true, E, SWITCH,
                          "each attribute's equation with the numbers substituted"},
    [DPAS_KEY_Y] = {"y", NULL, "--y", "METRIC", true, true, P, 0,
                    "the plotted metric (default: the first of attr)"},
    [DPAS_KEY_TITLE] = {"title", NULL, "--title", "TEXT", true, true, P, 0, "the plot's title"},
    /* calibrate's (no Python keyword: the binding has no calibrate) */
    [DPAS_KEY_COLLECTIVE] = {"collective", NULL, "--collective", "C", true, false, K, 0,
                             "keep the tests of this collective, or name it where a file "
                             "cannot tell"},
    [DPAS_KEY_RANKS] = {"ranks", NULL, "--ranks", "N", true, false, K, 0,
                        "keep the tests on N ranks (>= 2), or name it where a file cannot tell"},
    [DPAS_KEY_GPUS_PER_NODE] = {"gpus_per_node", NULL, "--gpus-per-node", "G", true, false, K, 0,
                                "ranks per node of every test (wins over Rank lines, with a "
                                "note)"},
    [DPAS_KEY_TEST] = {"test", NULL, "--test", "K[,K...]", true, false, K, LIST,
                       "the tests to fit, numbered from 1 across the files by name"},
    [DPAS_KEY_AT] = {"at", NULL, "--at", "SCALE[,...]", true, false, K, LIST,
                     "predict at these scales: RANKS or NODESxGPUS (540x4)"},
    [DPAS_KEY_PREDICT] = {"predict", NULL, "--predict", "SIZE[,...]", true, false, K, LIST,
                          "predict these sizes (4096, 16MiB, 1GB; all_gather: the total)"},
    [DPAS_KEY_TOKENS] = {"tokens", NULL, "--tokens", "COUNT", true, true, T, 0,
                         "tokens per step over every replica: 4M, 16.8e6 (or global_batch and "
                         "sequence)"},
    [DPAS_KEY_GLOBAL_BATCH] = {"global_batch", NULL, "--global-batch", "COUNT", true, true, T, 0,
                               "sequences per step over every replica (with sequence)"},
    [DPAS_KEY_SEQUENCE] = {"sequence", NULL, "--sequence", "COUNT", true, true, M | T, 0,
                           "tokens per sequence (step: with global_batch; memory: default the "
                           "model's)"},
    [DPAS_KEY_MFU] = {"mfu", NULL, "--mfu", "FRACTION", true, true, T, 0,
                      "model-FLOPs utilisation in (0, 1], 0.45 or 45%; default 0.40, assumed "
                      "(Llama 3 paper: 38-43%)"},
    [DPAS_KEY_BUCKET_BYTES] = {"bucket_bytes", NULL, "--bucket", "BYTES", true, true, T, 0,
                               "gradient bytes per bucket (default 25 MiB, as PyTorch DDP)"},
    [DPAS_KEY_PRECISION] = {"precision", NULL, "--precision", "NAME", true, true, T, 0,
                            "the compute's precision: bf16 (default) or fp16, the accelerator's "
                            "dense peak; another: give compute_rate"},
    [DPAS_KEY_PARALLELISM] = {"parallelism", NULL, "--parallelism", "P[,P...]", true, true,
                              C | M | T, LIST,
                              "data (the default, the only one modelled); tensor, pipeline, "
                              "expert and context are refused with why"},
    [DPAS_KEY_OFFLOAD] = {"offload", NULL, "--offload", "WHERE", true, true, C | M | T, 0,
                          "none (the default, the only one modelled); cpu and nvme are refused "
                          "with why"},
    /* issue 32's memory keys: each entry self-contained */
    [DPAS_KEY_OPTIMIZER] = {"optimizer", NULL, "--optimizer", "NAME", true, true, M | T, 0,
                            "the optimizer's state: adam (default, 12 B/param), adam_8bit (6), "
                            "sgd_momentum (8) or sgd (4), beside 16-bit weights and gradients"},
    [DPAS_KEY_RECOMPUTE] = {"recompute", NULL, "--recompute", "HOW", true, true, M | T, 0,
                            "activation recomputation: none (default), selective or full "
                            "(Korthikanti et al. 2022)"},
    [DPAS_KEY_MICRO_BATCH] = {"micro_batch", NULL, "--micro-batch", "COUNT", true, true, M | T, 0,
                              "sequences per replica per forward pass: counts the activations "
                              "(step: default the replica's share of the batch)"},
    [DPAS_KEY_STRAGGLERS] = {"stragglers", NULL, "--stragglers", "WHAT", true, true, C | M | T, 0,
                             "none (the default, the only one modelled); anything else is "
                             "refused with why"},
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
const char *dpas_key_file(dpas_key k)
{
    return (unsigned)k < DPAS_INPUT_COUNT ? dpas_input_path((dpas_input)k) : NULL;
}
const char *dpas_key_help(dpas_key k) { return row(k) ? row(k)->help : NULL; }
unsigned dpas_key_flags(dpas_key k) { return row(k) ? row(k)->flags : 0; }

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
