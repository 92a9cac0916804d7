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
/* Parse -o/--output and --units values; return 0 or a usage error exit code. */
int cli_parse_format(cli *c, const char *cmd, const char *v);
int cli_parse_units(cli *c, const char *cmd, const char *v, int *units);
/* Write a rendered payload (owned, freed here). */
int cli_emit(cli *c, char *payload);

int cmd_scenario(cli *c, int argc, char **argv, int is_show);
int cmd_list(cli *c, int argc, char **argv);

#endif
