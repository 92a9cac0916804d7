/* SPDX-License-Identifier: Apache-2.0 */
/* dpas memory: does one replica's training state fit the memory of its accelerators? */
#include "cli.h"

static int take(cli *c, void *ctx, int opt, const char *arg)
{
    return opt == O_UNITS ? cli_parse_units(c, "memory", arg, ctx) : CLI_OTHER;
}

static const struct option own[] = {{"units", required_argument, 0, O_UNITS}, {0, 0, 0, 0}};

int cmd_memory(cli *c, int argc, char **argv)
{
    dpas_units units = DPAS_UNITS_SI;
    cli_cmd cmd = {
        .name = "memory",
        .analysis = DPAS_ANALYSIS_MEMORY,
        .positional = POS_EITHER,
        .usage = "dpas memory [NAME|FILE] [INPUTS] [--state NAME] [--zero 0|1|2|3] [-o FORMAT]",
        .about = "Does one replica's training state fit the memory of its accelerators? Exit 0 "
                 "when it\nfits, 2 (a physics violation, with the numbers) when it does not. "
                 "ZeRO stages 1 to 3\npartition the zero16 state across replicas (Rajbhandari "
                 "et al. 2019).",
        .own = own,
        .own_help = "      --units UNITS     si (default), iec or bytes (exact counts)\n",
        .take = take,
        .ctx = &units,
    };
    dpas_request *rq;
    dpas_registry *reg;
    dpas_error err = {0};
    dpas_memory m;
    char *out = NULL;
    int rc = cli_request(c, &cmd, argc, argv, &rq, &reg);
    if (!rc) {
        const dpas_request_opts *o = dpas_request_opts_of(rq);
        const dpas_scenario *s = dpas_request_scenario(rq);
        if (dpas_request_memory(rq, &m, &err)) {
            rc = cli_fail(c, &err);
        } else if (!m.fits) { /* a physics violation: exit 2, with the numbers */
            err.code = DPAS_EPHYSICS;
            snprintf(err.field, sizeof err.field, "memory");
            dpas_memory_message(s, o->state, o->zero, &m, err.message, sizeof err.message);
            rc = cli_fail(c, &err);
        } else if (!(out = dpas_render_memory(s, o->state, o->zero, &m, (dpas_format)c->format,
                                              units, dpas_request_label(rq), &err))) {
            rc = cli_fail(c, &err);
        } else {
            cli_print_warnings(c, dpas_request_report(rq), 0);
            rc = cli_emit(c, out);
        }
    }
    dpas_request_free(rq);
    dpas_registry_free(reg);
    return rc < 0 ? EXIT_OK : rc;
}
