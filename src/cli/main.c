/* dpas: entry point, subcommand dispatch and the error conventions shared by every command. */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
    "  inventory [NAME|FILE]  bytes on the wire per step and at rest, by convention\n"
    "  memory [NAME|FILE] does one replica's training state fit its accelerators? (exit 2 if not)\n"
    "  sweep [NAME|FILE]  vary one or two inputs; stream a table; plot (SVG, PNG, terminal)\n"
    "  calibrate FILE     fit alpha and beta from nccl-tests output\n"
    "\n"
    "Run 'dpas COMMAND --help' for a command's options. 'dpas --version' prints the version.\n"
    "Exit status: 0 ok, 1 bad input, 2 physics violation.\n";

int cli_fail(cli *c, const dpas_error *err)
{
    if (c->format == DPAS_FORMAT_JSON) {
        char *j = dpas_render_error_json(err);
        if (j)
            fputs(j, c->out);
        dpas_free(j);
    } else {
        fprintf(c->err, "dpas: error: %s\n", err->message);
    }
    return err->code == DPAS_EPHYSICS ? EXIT_PHYSICS : EXIT_BAD_INPUT;
}

int cli_usage(cli *c, const char *cmd, const char *fmt, ...)
{
    dpas_error e = {.code = DPAS_EINVAL};
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(e.message, sizeof e.message, "%s (see: dpas %s%s--help)", msg, cmd ? cmd : "",
             cmd && *cmd ? " " : "");
    return cli_fail(c, &e);
}

int cli_bad_option(cli *c, const char *cmd, char **argv)
{
    if (optopt == 'o')
        return cli_usage(c, cmd, "-o needs a value");
    if (optopt >= O_SCENARIO)
        return cli_usage(c, cmd, "%s needs a value", argv[optind - 1]);
    if (optopt > 0 && optopt < 256) /* a short option, perhaps inside a cluster such as -xo */
        return cli_usage(c, cmd, "unknown option \"-%c\"", optopt);
    return cli_usage(c, cmd, "unknown option \"%s\"", argv[optind - 1]);
}

int cli_common_option(cli *c, const char *cmd, int opt, const char *help)
{
    if (opt == 'h') {
        fputs(help, c->out);
        return EXIT_OK;
    }
    if (opt == 'o') {
        int rc = cli_parse_format(c, cmd, optarg);
        return rc ? rc : CLI_NEXT;
    }
    return CLI_OTHER;
}

int cli_parse_format(cli *c, const char *cmd, const char *v)
{
    static const char *names[] = {"text", "json", "csv", "markdown"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(v, names[i])) {
            c->format = i;
            return 0;
        }
    if (!strcmp(v, "md")) {
        c->format = DPAS_FORMAT_MARKDOWN;
        return 0;
    }
    return cli_usage(c, cmd, "--output must be text, json, csv or markdown, got \"%s\"", v);
}

int cli_parse_units(cli *c, const char *cmd, const char *v, int *units)
{
    if (!strcmp(v, "si"))
        *units = DPAS_UNITS_SI;
    else if (!strcmp(v, "iec"))
        *units = DPAS_UNITS_IEC;
    else if (!strcmp(v, "bytes"))
        *units = DPAS_UNITS_BYTES;
    else
        return cli_usage(c, cmd, "--units must be si, iec or bytes, got \"%s\"", v);
    return 0;
}

int cli_emit(cli *c, char *payload)
{
    if (!payload) {
        dpas_error e = {.code = DPAS_ENOMEM};
        snprintf(e.message, sizeof e.message, "out of memory");
        return cli_fail(c, &e);
    }
    fputs(payload, c->out);
    dpas_free(payload);
    return EXIT_OK;
}

/* Pre-scan argv for "-o json" so that even an early usage error comes out as JSON. */
static void prescan_format(cli *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            if (!strcmp(argv[i + 1], "json"))
                c->format = DPAS_FORMAT_JSON;
        } else if (!strcmp(a, "-ojson") || !strcmp(a, "--output=json")) {
            c->format = DPAS_FORMAT_JSON;
        }
    }
}

int dpas_cli_main(int argc, char **argv, FILE *out, FILE *errf)
{
    cli c = {DPAS_FORMAT_TEXT, out, errf};
    prescan_format(&c, argc, argv);
    if (argc < 2)
        return fputs(usage_text, errf), EXIT_BAD_INPUT;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help"))
        return fputs(usage_text, out), EXIT_OK;
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version"))
        return fprintf(out, "dpas %s\n", DPAS_VERSION), EXIT_OK;
    if (!strcmp(cmd, "show"))
        return cmd_scenario(&c, argc - 1, argv + 1, 1);
    if (!strcmp(cmd, "eval"))
        return cmd_scenario(&c, argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "list"))
        return cmd_list(&c, argc - 1, argv + 1);
    if (!strcmp(cmd, "rules"))
        return cmd_rules(&c, argc - 1, argv + 1);
    if (!strcmp(cmd, "cost"))
        return cmd_cost(&c, argc - 1, argv + 1);
    if (!strcmp(cmd, "inventory"))
        return cmd_inventory(&c, argc - 1, argv + 1);
    if (!strcmp(cmd, "memory"))
        return cmd_memory(&c, argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep"))
        return cmd_sweep(&c, argc - 1, argv + 1);
    if (!strcmp(cmd, "calibrate"))
        return cmd_calibrate(&c, argc - 1, argv + 1);
    return cli_usage(&c, "", "unknown command \"%s\"; expected show, eval, list, rules, cost, "
                             "inventory, memory, sweep or calibrate", cmd);
}
