/* The dpas command line: a thin shell over libdpas. */
#ifndef DPAS_CLI_H
#define DPAS_CLI_H

#include "dpas/dpas.h"

#include <stdio.h>

/* Exit codes, as mlsysim's CLI: 0 ok, 1 bad input, 2 physics violation. */
enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_PHYSICS = 2 };

typedef struct cli {
    int format; /* dpas_format; errors are JSON objects on stdout when it is JSON */
    FILE *out, *err;
} cli;

/* Report err as the format wants; returns the exit code for it. */
int cli_fail(cli *c, const dpas_error *err);
/* A usage error: "dpas CMD: message", exit 1. */
int cli_usage(cli *c, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The options of every command: -h prints help (returns EXIT_OK: return it), -o FORMAT sets the
 * format (returns CLI_NEXT, or a usage error's exit code). CLI_OTHER: opt is neither. */
enum { CLI_NEXT = -1, CLI_OTHER = -2 };
int cli_common_option(cli *c, const char *cmd, int opt, const char *help);
/* Parse -o/--output and --units values; return 0 or a usage error exit code. */
int cli_parse_format(cli *c, const char *cmd, const char *v);
int cli_parse_units(cli *c, const char *cmd, const char *v, int *units);
/* Write a rendered payload (owned, freed here). */
int cli_emit(cli *c, char *payload);

/* ---- scenario inputs shared by show, eval, cost, inventory, memory ---- */

enum {
    O_SCENARIO = 1000, O_MODEL, O_PARAMS, O_FLEET, O_NODES, O_APN, O_DP, O_GRAD, O_CKPT,
    O_WEIGHTS, O_UNITS, O_ATTR, O_EXPLAIN,
    O_RULE, O_SCHEDULE, O_CONVENTION, O_TOPOLOGY, O_STEPS, O_ITERATIONS, O_RATE, O_F, O_N,
    O_STATE, O_ZERO, O_ALL, O_PLOT, O_Y, O_TITLE, O_CHART, O_NOCHART, O_CALIBRATION,
    O_COLLECTIVE, O_RANKS
};

/* getopt_long entries of the input flags, to splice into a command's option table. */
#define SCEN_LONG_OPTIONS                                                                       \
    {"scenario", required_argument, 0, O_SCENARIO}, {"model", required_argument, 0, O_MODEL},   \
        {"params", required_argument, 0, O_PARAMS}, {"fleet", required_argument, 0, O_FLEET},   \
        {"nodes", required_argument, 0, O_NODES},                                               \
        {"accelerators-per-node", required_argument, 0, O_APN},                                 \
        {"dp", required_argument, 0, O_DP}, {"grad", required_argument, 0, O_GRAD},             \
        {"ckpt", required_argument, 0, O_CKPT}, {                                               \
        "weights", required_argument, 0, O_WEIGHTS                                              \
    }

#define SCEN_NINPUTS 10
struct scen_input {
    int opt;
    const char *key, *flag;
};
extern const struct scen_input scen_inputs[SCEN_NINPUTS];

#define SCEN_INPUT_HELP                                                                         \
    "      --scenario NAME   start from a named scenario (dpas list scenarios)\n"                \
    "      --model NAME      workload from the registry (dpas list models), or\n"                \
    "      --params COUNT    workload.parameters: 175e9, 70.6e9, 3504872, 7B (K M B|G T)\n"      \
    "      --fleet NAME      fleet from the registry (dpas list fleets), and/or\n"               \
    "      --nodes N         fleet.count (overrides the fleet's)\n"                              \
    "      --accelerators-per-node N\n"                                                         \
    "                        fleet.node.accelerators_per_node (overrides the fleet's)\n"         \
    "      --dp N            dp_degree, the number of data-parallel replicas\n"                  \
    "      --grad WIDTH      gradient_bytes_per_param: 2 B, 16 bit, bf16, 4.127 bit, ...\n"      \
    "      --ckpt WIDTH      checkpoint_bytes_per_param: 14 B, ...\n"                            \
    "      --weights WIDTH   weight_bytes_per_param (optional; 'none' removes it)\n"

typedef struct scen_args {
    const char *given[SCEN_NINPUTS];
    const char *positional; /* NAME or FILE, or NULL */
    dpas_registry *reg;
    dpas_spec *spec;
    dpas_scenario s;
    const char *label;
} scen_args;

enum { SCEN_POS_NAME, SCEN_POS_FILE, SCEN_POS_EITHER };

/* If opt is an input flag, record it and return 1 (*rc set to a usage error when repeated). */
int scen_take(cli *c, const char *cmd, scen_args *a, int opt, const char *arg, int *rc);
/* Registry, positional, flags -> a->s. Fills err on failure. */
int scen_load(cli *c, const char *cmd, scen_args *a, int positional_kind, dpas_error *err);
void scen_free(scen_args *a);
/* Warnings of a report on stderr (not in JSON mode, where they are in the payload). */
void scen_print_warnings(cli *c, const dpas_report *r);
/* Report a getopt failure ('?') as a usage error. */
int cli_bad_option(cli *c, const char *cmd, char **argv);

/* The whole command line: argv as main's, payload to out, diagnostics to err; returns the
 * exit status and never exits. */
int dpas_cli_main(int argc, char **argv, FILE *out, FILE *err);

int cmd_scenario(cli *c, int argc, char **argv, int is_show);
int cmd_list(cli *c, int argc, char **argv);
int cmd_rules(cli *c, int argc, char **argv);
int cmd_cost(cli *c, int argc, char **argv);
int cmd_inventory(cli *c, int argc, char **argv);
int cmd_memory(cli *c, int argc, char **argv);
int cmd_sweep(cli *c, int argc, char **argv);
int cmd_calibrate(cli *c, int argc, char **argv);
/* The inter-node alpha and beta of a nccl-tests file (its AllReduce fit first). */
int cli_load_calibration(cli *c, const char *path, dpas_links *links, dpas_error *err);

#endif
