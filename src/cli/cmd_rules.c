/* SPDX-License-Identifier: Apache-2.0 */
/* dpas rules: the catalogue of robust aggregation rules, with max f for n and min n for f. */
#include "cli.h"

int cmd_rules(cli *c, int argc, char **argv)
{
    cli_cmd cmd = {
        .name = "rules",
        .analysis = DPAS_ANALYSIS_RULES,
        .positional = POS_NONE,
        .usage = "dpas rules [--n N] [--f F] [--convention NAME|all] [-o FORMAT]",
        .about = "The Byzantine-robust aggregation rules dpas knows: each rule's resilience "
                 "condition on\nn replicas with f Byzantine ones, its compute cost, whether it "
                 "works coordinate by\ncoordinate (and so can be sharded), and its sources. Where "
                 "sources disagree (Krum:\nblanchard n >= 2f + 3, the default; byzfl 2f < n), "
                 "--convention picks one; all lists every\nconvention.",
    };
    dpas_request *rq;
    dpas_registry *reg;
    dpas_error err = {0};
    dpas_rule_row rows[64];
    size_t nrows;
    char *out = NULL;
    int rc = cli_request(c, &cmd, argc, argv, &rq, &reg);
    if (!rc) {
        const dpas_request_opts *o = dpas_request_opts_of(rq);
        if (dpas_rule_count() > sizeof rows / sizeof rows[0]) /* the catalogue outgrew it */
            rc = cli_usage(c, "rules", "the rule catalogue has %zu rows, over %zu",
                           dpas_rule_count(), sizeof rows / sizeof rows[0]);
        else if (dpas_request_rules(rq, rows, &nrows, &err) ||
                 !(out = dpas_render_rules(rows, nrows, o->n > 0, o->f >= 0, (dpas_format)c->format,
                                           &err)))
            rc = cli_fail(c, &err);
        else
            rc = cli_emit(c, out);
    }
    dpas_request_free(rq);
    dpas_registry_free(reg);
    return rc < 0 ? EXIT_OK : rc;
}
