/* The dpas command line: a thin shell over libdpas. Shared by the cmd_*.c files; cli.c holds
 * the helpers, inputs.c the scenario inputs, main.c only the command table. */
#ifndef DPAS_CLI_H
#define DPAS_CLI_H

#include "dpas/dpas.h"

#include <getopt.h>
#include <stdio.h>

/* Exit codes, as mlsysim's CLI: 0 ok, 1 bad input, 2 physics violation. */
enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_PHYSICS = 2 };

/* Long-option values (short options are their characters). */
enum {
    O_SCENARIO = 1000,
    O_MODEL,
    O_PARAMS,
    O_FLEET,
    O_NODES,
    O_APN,
    O_DP,
    O_GRAD,
    O_CKPT,
    O_WEIGHTS,
    O_UNITS,
    O_ATTR,
    O_EXPLAIN,
    O_RULE,
    O_SCHEDULE,
    O_CONVENTION,
    O_TOPOLOGY,
    O_STEPS,
    O_ITERATIONS,
    O_RATE,
    O_F,
    O_N,
    O_STATE,
    O_ZERO,
    O_ALL,
    O_PLOT,
    O_Y,
    O_TITLE,
    O_CHART,
    O_NOCHART,
    O_CALIBRATION,
    O_COLLECTIVE,
    O_RANKS,
    O_NODE,
    O_FABRIC,
    O_NETMODEL,
    O_LAST = 1100
};

typedef struct cli {
    int format;   /* dpas_format of the payload, from -o */
    int err_json; /* errors as one JSON object on stdout: -o json, or seen in argv before it */
    FILE *out, *err;
    const struct option *opts; /* the running command's options (for messages) */
    unsigned char seen[256 + O_LAST - O_SCENARIO]; /* options given, to refuse repeats */
} cli;

/* Report err as the format wants; returns the exit code for it. */
int cli_fail(cli *c, const dpas_error *err);
/* A usage error: "dpas CMD: message", exit 1. */
int cli_usage(cli *c, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Report a getopt failure ('?') as a usage error. */
int cli_bad_option(cli *c, const char *cmd, char **argv);
/* Start parsing a command's options (resets getopt and the options seen). */
void cli_begin(cli *c, const struct option *opts);
/* The options of every command, called first for each option getopt returns: a repeated option
 * is a usage error; -h prints help (returns EXIT_OK: return it); -o FORMAT sets the format
 * (returns CLI_NEXT, or a usage error's exit code). CLI_OTHER: opt is neither. */
enum { CLI_NEXT = -1, CLI_OTHER = -2 };
int cli_common_option(cli *c, const char *cmd, int opt, const char *help);
/* Parse -o/--output and --units values; return 0 or a usage error exit code. */
int cli_parse_format(cli *c, const char *cmd, const char *v);
int cli_parse_units(cli *c, const char *cmd, const char *v, dpas_units *units);
/* Split a comma-separated list (no limit; an empty item is an error). *items[0] owns the
 * storage: cli_list_free. */
int cli_list(cli *c, const char *cmd, const char *flag, const char *text, char ***items, size_t *n);
void cli_list_free(char **items);
/* Write a rendered payload (owned, freed here); a write error is an error exit. */
int cli_emit(cli *c, char *payload);
/* A dpas_sink_fn writing to c->out (ctx = c). */
int cli_sink(void *ctx, const char *data, size_t len);
/* Report that stdout could not be written; returns the exit code. */
int cli_write_failed(cli *c);

/* ---- scenario inputs shared by show, eval, cost, inventory, memory, sweep ---- */

/* getopt_long entries of the input flags, to splice into a command's option table. */
#define SCEN_LONG_OPTIONS                                                                          \
    {"scenario", required_argument, 0, O_SCENARIO}, {"model", required_argument, 0, O_MODEL},      \
        {"params", required_argument, 0, O_PARAMS}, {"fleet", required_argument, 0, O_FLEET},      \
        {"nodes", required_argument, 0, O_NODES},                                                  \
        {"accelerators-per-node", required_argument, 0, O_APN},                                    \
        {"node", required_argument, 0, O_NODE}, {"fabric", required_argument, 0, O_FABRIC},        \
        {"dp", required_argument, 0, O_DP}, {"grad", required_argument, 0, O_GRAD},                \
        {"ckpt", required_argument, 0, O_CKPT},                                                    \
    {                                                                                              \
        "weights", required_argument, 0, O_WEIGHTS                                                 \
    }

#define SCEN_INPUT_HELP                                                                            \
    "      --scenario NAME   start from a named scenario (dpas list scenarios)\n"                  \
    "      --model NAME      workload from the registry (dpas list models), or\n"                  \
    "      --params COUNT    workload.parameters: 175e9, 70.6e9, 3504872, 7B (K M B|G T)\n"        \
    "      --fleet NAME      fleet from the registry (dpas list fleets), and/or\n"                 \
    "      --nodes N         fleet.count (overrides the fleet's)\n"                                \
    "      --accelerators-per-node N\n"                                                            \
    "                        fleet.node.accelerators_per_node (overrides the fleet's)\n"           \
    "      --node NAME       fleet.node: a registry node (accelerator, intra-node link)\n"         \
    "      --fabric NAME     fleet.fabric: a registry fabric (inter-node link)\n"                  \
    "      --dp N            dp_degree, the number of data-parallel replicas\n"                    \
    "      --grad WIDTH      gradient_bytes_per_param: 2 B, 16 bit, bf16, 4.127 bit, ...\n"        \
    "      --ckpt WIDTH      checkpoint_bytes_per_param: 14 B, ...\n"                              \
    "      --weights WIDTH   weight_bytes_per_param (optional; 'none' removes it)\n"

typedef struct scen_args {
    const char *given[DPAS_INPUT_COUNT]; /* the flags' text, by input */
    const char *positional;              /* NAME or FILE, or NULL */
    dpas_registry *reg;
    dpas_spec *spec;
    dpas_scenario s;
    const char *label;
} scen_args;

enum { SCEN_POS_NAME, SCEN_POS_FILE, SCEN_POS_EITHER };

/* The input a flag sets, or -1 when opt is no input flag. */
int scen_input_of(int opt);
/* If opt is an input flag, record it and return 1. */
int scen_take(scen_args *a, int opt, const char *arg);
/* Both --model and --params: a usage error's exit code, else 0. */
int scen_check(cli *c, const char *cmd, const scen_args *a);
/* Registry, positional, flags -> a->s. Fills err on failure. */
int scen_load(scen_args *a, int positional_kind, dpas_error *err);
void scen_free(scen_args *a);
/* Warnings of a report on stderr (not when the payload carries them: show and eval in JSON). */
void scen_print_warnings(cli *c, const dpas_report *r, int in_payload);

/* The whole command line: argv as main's, payload to out, diagnostics to err; returns the
 * exit status and never exits. */
int dpas_cli_main(int argc, char **argv, FILE *out, FILE *err);

int cmd_show(cli *c, int argc, char **argv);
int cmd_eval(cli *c, int argc, char **argv);
int cmd_list(cli *c, int argc, char **argv);
int cmd_rules(cli *c, int argc, char **argv);
int cmd_cost(cli *c, int argc, char **argv);
int cmd_inventory(cli *c, int argc, char **argv);
int cmd_memory(cli *c, int argc, char **argv);
int cmd_sweep(cli *c, int argc, char **argv);
int cmd_calibrate(cli *c, int argc, char **argv);
int cmd_serve(cli *c, int argc, char **argv); /* src/serve/cmd_serve.c */
/* The inter-node alpha and beta of a nccl-tests file (its AllReduce fit first). */
int cli_load_calibration(cli *c, const char *path, dpas_links *links, dpas_error *err);
/* --calibration FILE [--network-model K] for cost and sweep: the links (the AllReduce's
 * alpha-beta line) and, with K, the network model (*net, freed by the caller). */
int cli_network(cli *c, const char *cmd, const char *path, const char *model, dpas_links *links,
                dpas_netmodel **net, int *kind);
/* --rule and --convention to rules, --schedule to a mask (cost and sweep). */
int cli_rules(cli *c, const char *cmd, const char *list, const char *convention,
              const dpas_rule ***rules, size_t *n, dpas_error *err);

#endif
