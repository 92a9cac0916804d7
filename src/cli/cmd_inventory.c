/* dpas inventory: what one step exposes on the wire and what lies at rest, in exact bytes. */
#include "cli.h"

#include <stdlib.h>

static const char *inventory_help =
    "usage: dpas inventory [NAME|FILE] [INPUT FLAGS] [-o FORMAT] [--units si|iec]\n"
    "\n"
    "What one step exposes on the wire and what lies at rest, in exact bytes: the gradient,\n"
    "its AllReduce and gather traffic, the declared checkpoint and weights, and the training\n"
    "state under named conventions (ZeRO 16, Megatron 18, mlsysim's checkpoint 14, Adam state\n"
    "12, SGD 8 and 4, 8-bit Adam 6) and weight precisions, each with its source.\n"
    "\n"
    "inputs (as dpas eval):\n" SCEN_INPUT_HELP;

int cmd_inventory(cli *c, int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         SCEN_LONG_OPTIONS,
                                         {"units", required_argument, 0, O_UNITS},
                                         {0, 0, 0, 0}};
    scen_args a = {0};
    dpas_units units = DPAS_UNITS_SI;
    dpas_inventory_row *rows = NULL;
    dpas_error err = {0};
    dpas_report r;
    size_t n = 0;
    int opt, rc = 0;
    cli_begin(c, opts);
    while (!rc && (opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int common = cli_common_option(c, "inventory", opt, inventory_help);
        if (common != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
        } else if (!scen_take(&a, opt, optarg)) {
            rc = opt == O_UNITS ? cli_parse_units(c, "inventory", optarg, &units)
                                : cli_bad_option(c, "inventory", argv);
        }
    }
    if (rc)
        return rc;
    if (argc - optind > 1)
        return cli_usage(c, "inventory", "inventory takes at most one NAME or FILE, got %d",
                         argc - optind);
    a.positional = argc - optind ? argv[optind] : NULL;
    if ((rc = scen_check(c, "inventory", &a)))
        return rc;
    char *out = NULL;
    if ((rc = scen_load(&a, SCEN_POS_EITHER, &err)) || (rc = dpas_evaluate(&a.s, &r, &err)) ||
        (rc = dpas_inventory(&a.s, NULL, 0, &n, &err)))
        goto fail;
    if (!(rows = calloc(n ? n : 1, sizeof *rows))) {
        rc = cli_usage(c, "inventory", "out of memory");
        goto done;
    }
    if ((rc = dpas_inventory(&a.s, rows, n, &n, &err)) ||
        !(out = dpas_render_inventory(rows, n, (dpas_format)c->format, units, a.label, &err)))
        goto fail;
    scen_print_warnings(c, &r, 0);
    rc = cli_emit(c, out);
    goto done;
fail:
    rc = cli_fail(c, &err);
done:
    free(rows);
    scen_free(&a);
    return rc;
}
