/* SPDX-License-Identifier: Apache-2.0 */
/* dpas cost: what each robust rule costs under each schedule on one scenario's fleet. */
#include "cli.h"

typedef struct view {
    dpas_cost_view v;
} view;

static int take(cli *c, void *ctx, int opt, const char *arg)
{
    view *x = ctx;
    if (opt == O_ALL)
        return x->v.all = 1, 0;
    return opt == O_UNITS ? cli_parse_units(c, "cost", arg, &x->v.units) : CLI_OTHER;
}

static const struct option own[] = {
    {"units", required_argument, 0, O_UNITS}, {"all", no_argument, 0, O_ALL}, {0, 0, 0, 0}};

int cmd_cost(cli *c, int argc, char **argv)
{
    view x = {.v = {.units = DPAS_UNITS_SI}};
    cli_cmd cmd = {
        .name = "cost",
        .analysis = DPAS_ANALYSIS_COST,
        .positional = POS_EITHER,
        .usage = "dpas cost [NAME|FILE] [INPUTS] [OPTIONS]",
        .about = "What a robust aggregate costs on this scenario's fleet: for each rule x "
                 "schedule, whether\nthe schedule can realise the rule (and why not), the "
                 "largest f the rule tolerates at\ndp_degree, the bytes each worker sends per "
                 "step (exact), their ratio to the ring\nAllReduce, and one time per step with the "
                 "model that gave it: a calibration's curves (each\nschedule the sum of the "
                 "collectives it runs, with its basis and band) or the alpha-beta\ntime, "
                 "hierarchical (pre-reducing inside a node, as mlsysim) where that is sound, else "
                 "flat.\nA positional "
                 "NAME is a named scenario, FILE a YAML or JSON file.",
        .own = own,
        .own_help = "      --all             text: also the combinations that are not "
                    "realisable, with why,\n"
                    "                        and the flat and hierarchical alternatives\n"
                    "      --units UNITS     si (default), iec or bytes (exact counts) for text\n",
        .take = take,
        .ctx = &x,
    };
    dpas_request *rq;
    dpas_registry *reg;
    dpas_cost *cost = NULL;
    dpas_error err = {0};
    char *out = NULL;
    int rc = cli_request(c, &cmd, argc, argv, &rq, &reg);
    if (!rc) {
        x.v.format = (dpas_format)c->format;
        x.v.label = dpas_request_label(rq);
        if (dpas_request_cost(rq, &cost, &err) || !(out = dpas_render_cost(cost, &x.v, &err))) {
            rc = cli_fail(c, &err);
        } else {
            cli_print_warnings(c, dpas_request_report(rq), 0);
            rc = cli_emit(c, out);
        }
    }
    dpas_cost_free(cost);
    dpas_request_free(rq);
    dpas_registry_free(reg);
    return rc < 0 ? EXIT_OK : rc;
}
