/* SPDX-License-Identifier: Apache-2.0 */
/* dpas list KIND: the registry's entries, the precision names, or the keys of a request. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char *list_help =
    "usage: dpas list KIND [-o text|json|csv|markdown]\n"
    "\n"
    "KIND: models, hardware, nodes, fabrics, fleets, scenarios or precisions; or keys: every\n"
    "input and option of a request, as each front end spells it.\n"
    "Each entry resolves by its full path (Models.Language.GPT3) or its short name (GPT3).\n"
    "Sources of every entry: data/registry/registry.json and the README.\n";

int cmd_list(cli *c, int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int opt, rc;
    cli_begin(c, opts);
    int common; /* cli_common_option's answer */
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if ((common = cli_common_option(c, "list", opt, list_help)) != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        switch (opt) {
        default: return cli_bad_option(c, "list", argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage(c, "list",
                         "list takes one KIND: models, hardware, nodes, fabrics, "
                         "fleets, scenarios or precisions");
    dpas_error err = {0};
    dpas_kind kind;
    if (dpas_kind_from_listing(argv[optind], &kind, NULL))
        return cli_usage(c, "list",
                         "unknown KIND %s; expected models, hardware, nodes, fabrics, fleets, "
                         "scenarios or precisions",
                         dpas_quote(argv[optind], (char[96]){0}, 96));
    dpas_registry *reg = NULL;
    if ((rc = dpas_registry_builtin(&reg, &err)))
        return cli_fail(c, &err);
    char *out = dpas_render_list(reg, kind, c->format, &err);
    dpas_registry_free(reg);
    if (!out)
        return cli_fail(c, &err);
    return cli_emit(c, out);
}
