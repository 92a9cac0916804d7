/* SPDX-License-Identifier: Apache-2.0 */
/* dpas show NAME / dpas eval [FILE]: one scenario, from the registry, flags and/or a file. */
#include "cli.h"

#include <string.h>

typedef struct view {
    const char *cmd;
    dpas_units units;
} view;

static int take(cli *c, void *ctx, int opt, const char *arg)
{
    view *v = ctx;
    return opt == O_UNITS ? cli_parse_units(c, v->cmd, arg, &v->units) : CLI_OTHER;
}

static const struct option own[] = {{"units", required_argument, 0, O_UNITS}, {0, 0, 0, 0}};
static const char *own_help =
    "      --units UNITS     byte counts in text: si (GB, default), iec (GiB) or bytes\n";

static int scenario(cli *c, int argc, char **argv, int is_show)
{
    view v = {is_show ? "show" : "eval", DPAS_UNITS_SI};
    cli_cmd cmd = {
        .name = is_show ? "show" : "eval",
        .analysis = DPAS_ANALYSIS_EVAL,
        .positional = is_show ? POS_NAME : POS_FILE,
        .usage = is_show ? "dpas show NAME [OPTIONS]" : "dpas eval [FILE.yaml|FILE.json] [OPTIONS]",
        .about = is_show ? "A named scenario (see 'dpas list scenarios'): its inputs, then every "
                           "attribute of\nmlsysim's DataParallelAttackSurfaceScenario with value "
                           "and unit. Input flags\n(--dp, --grad, ...) override the scenario's "
                           "inputs."
                         : "A scenario from flags, from a file, or both (flags override the "
                           "file). A file\nholds the same inputs under the keys below, e.g.\n"
                           "  workload: Llama3_70B            # or {name: mine, parameters: "
                           "70.6e9}\n"
                           "  fleet: {nodes: 12, accelerators_per_node: 8}   # or a registry "
                           "name\n"
                           "  dp_degree: 96\n"
                           "  gradient_bytes_per_param: bf16\n"
                           "  checkpoint_bytes_per_param: 14 B\n"
                           "  weight_bytes_per_param: 2 B     # optional",
        .own = own,
        .own_help = own_help,
        .take = take,
        .ctx = &v,
    };
    dpas_request *rq;
    dpas_registry *reg;
    dpas_error err = {0};
    int rc = cli_request(c, &cmd, argc, argv, &rq, &reg);
    if (!rc) {
        const dpas_request_opts *o = dpas_request_opts_of(rq);
        dpas_render_opts ro = {.format = c->format,
                               .units = v.units,
                               .explain = o->explain,
                               .attrs = o->attrs,
                               .label = dpas_request_label(rq)};
        const dpas_report *r = dpas_request_report(rq);
        char *payload = dpas_render_report(dpas_request_scenario(rq), r, &ro, &err);
        if (!payload) {
            rc = cli_fail(c, &err);
        } else {
            cli_print_warnings(c, r, 1);
            rc = cli_emit(c, payload);
        }
    }
    dpas_request_free(rq);
    dpas_registry_free(reg);
    return rc < 0 ? EXIT_OK : rc;
}

int cmd_show(cli *c, int argc, char **argv) { return scenario(c, argc, argv, 1); }
int cmd_eval(cli *c, int argc, char **argv) { return scenario(c, argc, argv, 0); }
