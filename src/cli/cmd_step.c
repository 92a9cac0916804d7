/* SPDX-License-Identifier: Apache-2.0 */
/* dpas step: the training step around each rule's exchange, and the share of it robustness adds. */
#include "cli.h"

typedef struct view {
    dpas_step_view v;
} view;

static int take(cli *c, void *ctx, int opt, const char *arg)
{
    view *x = ctx;
    if (opt == O_ALL)
        return x->v.all = 1, 0;
    return opt == O_UNITS ? cli_parse_units(c, "step", arg, &x->v.units) : CLI_OTHER;
}

static const struct option own[] = {
    {"units", required_argument, 0, O_UNITS}, {"all", no_argument, 0, O_ALL}, {0, 0, 0, 0}};

int cmd_step(cli *c, int argc, char **argv)
{
    view x = {.v = {.units = DPAS_UNITS_SI}};
    cli_cmd cmd = {
        .name = "step",
        .analysis = DPAS_ANALYSIS_STEP,
        .positional = POS_EITHER,
        .usage = "dpas step [NAME|FILE] [INPUTS] --tokens COUNT [OPTIONS]",
        .about = "The training step around each rule x schedule's exchange: the forward and "
                 "backward compute\n(6 x parameters x tokens FLOPs at the accelerators' peak x "
                 "MFU, given or assumed), the\nexchange from the time model of dpas cost, "
                 "bucket by bucket as PyTorch DDP (the backward\nhides all but what its buckets "
                 "cannot), the robust rule's own compute after the last\nbucket, ZeRO's "
                 "parameter all-gathers (--zero); the step, its band, and the share of it\n"
                 "robustness adds over the mean under allreduce. Not modelled: tensor, pipeline "
                 "and expert\nparallelism, offload, stragglers. A positional NAME is a named "
                 "scenario, FILE a YAML or\nJSON file.",
        .own = own,
        .own_help = "      --all             text: also the combinations that are not "
                    "realisable, with why\n"
                    "      --units UNITS     si (default), iec or bytes (exact counts) for text\n",
        .take = take,
        .ctx = &x,
    };
    dpas_request *rq;
    dpas_registry *reg;
    dpas_step *st = NULL;
    dpas_error err = {0};
    char *out = NULL;
    int rc = cli_request(c, &cmd, argc, argv, &rq, &reg);
    if (!rc) {
        x.v.format = (dpas_format)c->format;
        x.v.label = dpas_request_label(rq);
        if (dpas_request_step(rq, &st, &err) || !(out = dpas_render_step(st, &x.v, &err))) {
            rc = cli_fail(c, &err);
        } else {
            cli_print_warnings(c, dpas_request_report(rq), 0);
            rc = cli_emit(c, out);
        }
    }
    dpas_step_free(st);
    dpas_request_free(rq);
    dpas_registry_free(reg);
    return rc < 0 ? EXIT_OK : rc;
}
