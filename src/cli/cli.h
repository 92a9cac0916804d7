/* SPDX-License-Identifier: Apache-2.0 */
/* The dpas command line: a thin shell over libdpas. Shared by the cmd_*.c files; cli.c holds
 * the helpers, inputs.c the scenario inputs, main.c only the command table. */
#ifndef DPAS_CLI_H
#define DPAS_CLI_H

#include "dpas/dpas.h"

#include <getopt.h>
#include <stdio.h>

/* Exit codes, as mlsysim's CLI: 0 ok, 1 bad input, 2 physics violation. */
enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_PHYSICS = 2 };

/* Long-option values of the CLI's own options (short options are their characters); the keys
 * of a request are O_KEY + their dpas_key. */
enum {
    O_FIRST = 1000,
    O_UNITS = O_FIRST,
    O_ALL,
    O_PLOT,
    O_CHART,
    O_NOCHART,
    O_DATA, /* sweep's figure: the plotted numbers, its size, fonts and labels */
    O_WIDTH,
    O_HEIGHT,
    O_FONT,
    O_FONT_SIZE,
    O_XLABEL,
    O_YLABEL,
    O_KEY = 2000
};

typedef struct cli {
    int format;   /* dpas_format of the payload, from -o */
    int err_json; /* errors as one JSON object on stdout: -o json, or seen in argv before it */
    FILE *in; /* standard input, for a FILE given as "-"; NULL where there is none (the fuzzer) */
    FILE *out, *err;
    const struct option *opts; /* the running command's options (for messages) */
    int seen[64];              /* the CLI's own options given, to refuse a repeat */
    size_t nseen;
} cli;

/* Report err as the format wants; returns the exit code for it. */
int cli_fail(cli *c, const dpas_error *err);
/* The same with a hint after the library's message ("give --dp N"), or NULL. */
int cli_fail_hint(cli *c, const dpas_error *err, const char *hint);
/* A usage error: "dpas CMD: message", exit 1. */
int cli_usage(cli *c, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Read standard input whole (a FILE given as "-"), at most max bytes: 0 and a malloc'd text
 * (NUL-terminated) or the exit code of the error it reported (too large, not readable, none). */
int cli_read_input(cli *c, const char *what, size_t max, char **text, size_t *len);
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
/* Write a rendered payload (owned, freed here); a write error is an error exit. */
int cli_emit(cli *c, char *payload);
/* A dpas_sink_fn writing to c->out (ctx = c). */
int cli_sink(void *ctx, const char *data, size_t len);
/* Report that stdout could not be written; returns the exit code. */
int cli_write_failed(cli *c);

/* ---- requests: the commands over the library's request (inputs.c) ---- */

/* Which positional argument a command takes. */
enum { POS_NONE, POS_NAME, POS_FILE, POS_EITHER };

/* A command over one request: its flags are the library's key table (every key's flag, so that
 * the library refuses a key the analysis does not take, as every front end does) and the
 * command's own options, which `take` takes (0, an exit code, or CLI_OTHER: not its own). */
typedef struct cli_cmd {
    const char *name; /* "cost" */
    dpas_analysis analysis;
    int positional;            /* POS_* */
    const char *usage, *about; /* the help's first line and paragraph */
    const struct option *own;  /* the command's own long options, {0} at the end */
    const char *own_help;      /* their lines of help */
    int (*take)(cli *c, void *ctx, int opt, const char *arg);
    dpas_analysis (*choose)(void *ctx); /* after the options: the analysis, when it depends on
                                           them (NULL: `analysis`) */
    void *ctx;
} cli_cmd;

/* Options, positional argument and keys into a resolved request (*rq, *reg: the caller frees
 * them with dpas_request_free and dpas_registry_free, also on failure). Returns 0, the exit code
 * of an error it reported, or -1 when help was printed (exit 0). */
int cli_request(cli *c, const cli_cmd *cmd, int argc, char **argv, dpas_request **rq,
                dpas_registry **reg);
/* One key's line of help, from the key table: "  --dp N    dp_degree: data-parallel replicas". */
void cli_key_help(FILE *f, dpas_key k);
/* Report a request's error with the CLI's hint (the flag of a missing key). */
int cli_fail_request(cli *c, const dpas_request *rq, const dpas_error *err);
/* Warnings of a report on stderr (not when the payload carries them: show and eval in JSON). */
void cli_print_warnings(cli *c, const dpas_report *r, int in_payload);

/* The whole command line: argv as main's, payload to out, diagnostics to err; returns the
 * exit status and never exits. */
int dpas_cli_main(int argc, char **argv, FILE *in, FILE *out, FILE *err);

int cmd_show(cli *c, int argc, char **argv);
int cmd_eval(cli *c, int argc, char **argv);
int cmd_list(cli *c, int argc, char **argv);
int cmd_rules(cli *c, int argc, char **argv);
int cmd_cost(cli *c, int argc, char **argv);
int cmd_step(cli *c, int argc, char **argv);
int cmd_inventory(cli *c, int argc, char **argv);
int cmd_memory(cli *c, int argc, char **argv);
int cmd_sweep(cli *c, int argc, char **argv);
int cmd_calibrate(cli *c, int argc, char **argv);
int cmd_serve(cli *c, int argc, char **argv); /* src/serve/cmd_serve.c */

#endif
