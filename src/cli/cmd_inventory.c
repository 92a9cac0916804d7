/* SPDX-License-Identifier: Apache-2.0 */
/* dpas inventory: what one step exposes on the wire and what lies at rest, in exact bytes. */
#include "cli.h"

static int take(cli *c, void *ctx, int opt, const char *arg)
{
    return opt == O_UNITS ? cli_parse_units(c, "inventory", arg, ctx) : CLI_OTHER;
}

static const struct option own[] = {{"units", required_argument, 0, O_UNITS}, {0, 0, 0, 0}};

int cmd_inventory(cli *c, int argc, char **argv)
{
    dpas_units units = DPAS_UNITS_SI;
    cli_cmd cmd = {
        .name = "inventory",
        .analysis = DPAS_ANALYSIS_INVENTORY,
        .positional = POS_EITHER,
        .usage = "dpas inventory [NAME|FILE] [INPUTS] [-o FORMAT] [--units si|iec]",
        .about = "What one step exposes on the wire and what lies at rest, in exact bytes: the "
                 "gradient,\nits AllReduce and gather traffic, the declared checkpoint and "
                 "weights, and the training\nstate under named conventions (ZeRO 16, Megatron "
                 "18, mlsysim's checkpoint 14, Adam state\n12, SGD 8 and 4, 8-bit Adam 6) and "
                 "weight precisions, each with its source.",
        .own = own,
        .own_help = "      --units UNITS     si (default), iec or bytes (exact counts)\n",
        .take = take,
        .ctx = &units,
    };
    dpas_request *rq;
    dpas_registry *reg;
    dpas_inventory_row *rows = NULL;
    dpas_error err = {0};
    size_t n = 0;
    char *out = NULL;
    int rc = cli_request(c, &cmd, argc, argv, &rq, &reg);
    if (!rc) {
        if (dpas_request_inventory(rq, &rows, &n, &err) ||
            !(out = dpas_render_inventory(rows, n, (dpas_format)c->format, units,
                                          dpas_request_label(rq), &err))) {
            rc = cli_fail(c, &err);
        } else {
            cli_print_warnings(c, dpas_request_report(rq), 0);
            rc = cli_emit(c, out);
        }
    }
    dpas_free(rows);
    dpas_request_free(rq);
    dpas_registry_free(reg);
    return rc < 0 ? EXIT_OK : rc;
}
