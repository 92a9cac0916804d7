/* SPDX-License-Identifier: Apache-2.0 */
/* dpas: the command table and the entry point; every command lives in its own cmd_*.c. */
#include "cli.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *usage_text =
    "usage: dpas COMMAND [OPTIONS]\n"
    "\n"
    "The data-parallel attack surface of a training job: mlsysim's\n"
    "DataParallelAttackSurfaceScenario, computed exactly.\n"
    "\n"
    "commands:\n"
    "  show NAME          a named scenario (dpas list scenarios): inputs and every attribute\n"
    "  eval [FILE]        a scenario from flags and/or a YAML or JSON file\n"
    "  list KIND          registry entries: models, hardware, nodes, fabrics, fleets,\n"
    "                     scenarios, precisions\n"
    "  rules              robust aggregation rules: resilience, max f for --n, min n for --f\n"
    "  cost [NAME|FILE]   rule x schedule: bytes per worker, ratio to AllReduce, time per step\n"
    "  step [NAME|FILE]   the training step around each exchange: what robustness adds to it\n"
    "  inventory [NAME|FILE]  bytes on the wire per step and at rest, by convention\n"
    "  memory [NAME|FILE] does one replica's training state fit its accelerators? (exit 2 if not)\n"
    "  sweep [NAME|FILE]  vary one to three inputs; stream a table; plot (SVG, PNG, PDF, "
    "terminal)\n"
    "  calibrate FILE     fit network models from nccl-tests output; predict times\n"
    "  serve              the calculator in a browser and an HTTP JSON API (loopback:8080)\n"
    "\n"
    "Run 'dpas help COMMAND' (or 'dpas COMMAND --help') for a command's options.\n"
    "'dpas --version' (-V) prints the version.\n"
    "Exit status: 0 ok, 1 bad input, 2 physics violation.\n";

static const struct {
    const char *name;
    int (*run)(cli *c, int argc, char **argv);
} commands[] = {
    {"show", cmd_show},     {"eval", cmd_eval},   {"list", cmd_list},
    {"rules", cmd_rules},   {"cost", cmd_cost},   {"inventory", cmd_inventory},
    {"memory", cmd_memory}, {"sweep", cmd_sweep}, {"calibrate", cmd_calibrate},
    {"serve", cmd_serve},   {"step", cmd_step},
};

/* Pre-scan argv for "-o json" (and the abbreviations getopt accepts, --out json, --output=json)
 * so that even an early usage error comes out as JSON. */
static void prescan_format(cli *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        size_t l = strcspn(a, "=");
        bool longopt = l >= 3 && !strncmp(a, "--output", l);
        const char *v = NULL;
        if (!strcmp(a, "-o") || (longopt && !a[l]))
            v = i + 1 < argc ? argv[i + 1] : NULL;
        else if (!strncmp(a, "-o", 2) && a[1] == 'o')
            v = a + 2;
        else if (longopt)
            v = a + l + 1;
        if (v && !strcasecmp(v, "json"))
            c->err_json = 1; /* for errors before -o is parsed; the payload's format is -o's */
    }
}

int dpas_cli_main(int argc, char **argv, FILE *in, FILE *out, FILE *errf)
{
    cli c = {.format = DPAS_FORMAT_TEXT, .in = in, .out = out, .err = errf};
    prescan_format(&c, argc, argv);
    if (argc < 2)
        return fputs(usage_text, errf), EXIT_BAD_INPUT;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") && argc >= 3) {
        /* dpas help [-o FORMAT] CMD: that command's own --help (an unknown CMD is refused below) */
        int at = 2;
        while (at < argc && argv[at][0] == '-')
            at += (!strcmp(argv[at], "-o") || !strcmp(argv[at], "--output")) ? 2 : 1;
        for (int i = at + 1; at < argc && i < argc; i++) /* one command: the rest are options */
            if (argv[i][0] != '-' && strcmp(argv[i - 1], "-o") && strcmp(argv[i - 1], "--output"))
                return cli_usage(&c, "", "help takes one command, got \"%s\" and \"%s\"", argv[at],
                                 argv[i]);
        if (at < argc) {
            char **args = calloc((size_t)argc + 1, sizeof *args);
            if (!args)
                return cli_usage(&c, "", "out of memory");
            int k = 0;
            args[k++] = argv[0], args[k++] = argv[at], args[k++] = "--help";
            for (int i = 2; i < argc; i++)
                if (i != at)
                    args[k++] = argv[i];
            int rc = dpas_cli_main(k, args, in, out, errf);
            free(args);
            return rc;
        }
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help"))
        return cli_emit(&c, strdup(usage_text));
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version"))
        for (int i = 2; i < argc; i++) { /* -o FORMAT may follow (errors in JSON), nothing else */
            if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
                i++;
                continue;
            }
            if (strncmp(argv[i], "-o", 2) && strncmp(argv[i], "--output=", 9))
                return cli_usage(&c, "", "%s takes no arguments, got \"%s\"", cmd, argv[i]);
        }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version"))
        return cli_emit(&c, strdup("dpas " DPAS_VERSION "\n"));
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name)) {
            int rc = commands[i].run(&c, argc - 1, argv + 1);
            /* a payload written in pieces (sweep) is checked once more as a whole */
            if (fflush(out) || ferror(out))
                return rc ? rc : cli_write_failed(&c);
            return rc;
        }
    return cli_usage(&c, "",
                     "unknown command \"%s\"; expected show, eval, list, rules, cost, step, "
                     "inventory, memory, sweep, calibrate or serve",
                     cmd);
}
