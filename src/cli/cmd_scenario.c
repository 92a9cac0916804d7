/* dpas show NAME / dpas eval [FILE]: one scenario, from the registry, flags and/or a file. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char *show_help =
    "usage: dpas show NAME [OPTIONS]\n"
    "\n"
    "A named scenario (see 'dpas list scenarios'): its inputs, then every attribute of\n"
    "mlsysim's DataParallelAttackSurfaceScenario with value and unit. Input flags of\n"
    "'dpas eval' (--dp, --grad, ...) override the scenario's inputs.\n"
    "\n"
    "options:\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "      --units UNITS     byte counts in text: si (GB, default), iec (GiB) or bytes\n"
    "      --attr A[,B...]   only these attributes (an undefined one is an error)\n"
    "      --explain         each attribute's equation with the numbers substituted\n"
    "  -h, --help            this help\n";

static const char *eval_help =
    "usage: dpas eval [FILE.yaml|FILE.json] [OPTIONS]\n"
    "\n"
    "A scenario from flags, from a file, or both (flags override the file).\n"
    "\n"
    "inputs:\n" SCEN_INPUT_HELP
    "\n"
    "output:\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "      --units UNITS     byte counts in text: si (GB, default), iec (GiB) or bytes\n"
    "      --attr A[,B...]   only these attributes (an undefined one is an error)\n"
    "      --explain         each attribute's equation with the numbers substituted\n"
    "  -h, --help            this help\n"
    "\n"
    "A file holds the same inputs under the seed's names, e.g.\n"
    "  workload: Llama3_70B            # or {name: mine, parameters: 70.6e9}\n"
    "  fleet: {nodes: 12, accelerators_per_node: 8}   # or a registry name\n"
    "  dp_degree: 96\n"
    "  gradient_bytes_per_param: bf16\n"
    "  checkpoint_bytes_per_param: 14 B\n"
    "  weight_bytes_per_param: 2 B     # optional\n";

static int parse_attrs(cli *c, const char *cmd, const char *list, unsigned *mask)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        int a = dpas_attr_from_name(tok);
        if (a < 0) {
            char names[400] = "";
            for (int i = 0; i < DPAS_ATTR_COUNT; i++) {
                size_t l = strlen(names);
                snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", dpas_attr_name(i));
            }
            return cli_usage(c, cmd, "--attr: unknown attribute \"%s\"; expected one of %s", tok, names);
        }
        *mask |= 1u << a;
    }
    if (!*mask)
        return cli_usage(c, cmd, "--attr needs at least one attribute name");
    return 0;
}

int cmd_scenario(cli *c, int argc, char **argv, int is_show)
{
    const char *cmd = is_show ? "show" : "eval";
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        SCEN_LONG_OPTIONS,
        {"units", required_argument, 0, O_UNITS}, {"attr", required_argument, 0, O_ATTR},
        {"explain", no_argument, 0, O_EXPLAIN}, {0, 0, 0, 0}};
    scen_args a = {0};
    dpas_render_opts ro = {.format = DPAS_FORMAT_TEXT, .units = DPAS_UNITS_SI};
    int rc = 0, opt;
    opterr = 0;
    optind = 0; /* 0: glibc re-initialises getopt fully (the CLI may run many times in one process) */
    int common; /* cli_common_option's answer */
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if (scen_take(c, cmd, &a, opt, optarg, &rc)) {
            if (rc)
                return rc;
            if (is_show && opt == O_SCENARIO)
                return cli_usage(c, cmd, "--scenario is for eval; show takes the NAME itself");
            continue;
        }
        if ((common = cli_common_option(c, cmd, opt, is_show ? show_help : eval_help)) != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        switch (opt) {
        case O_UNITS:
            if ((rc = cli_parse_units(c, cmd, optarg, &ro.units)))
                return rc;
            break;
        case O_ATTR:
            if ((rc = parse_attrs(c, cmd, optarg, &ro.attrs)))
                return rc;
            break;
        case O_EXPLAIN: ro.explain = 1; break;
        default: return cli_bad_option(c, cmd, argv);
        }
    }
    ro.format = c->format;
    int npos = argc - optind;
    if (is_show && npos != 1)
        return npos ? cli_usage(c, cmd, "show takes one scenario NAME, got %d", npos)
                    : cli_usage(c, cmd, "show needs a scenario NAME");
    if (!is_show && npos > 1)
        return cli_usage(c, cmd, "eval takes at most one FILE, got %d", npos);
    if (a.given[1] && a.given[2])
        return cli_usage(c, cmd, "give --model or --params, not both");
    a.positional = npos ? argv[optind] : NULL;

    dpas_error err = {0};
    dpas_report r;
    char *payload = NULL;
    if ((rc = scen_load(c, cmd, &a, is_show ? SCEN_POS_NAME : SCEN_POS_FILE, &err)) ||
        (rc = dpas_evaluate(&a.s, &r, &err)))
        goto fail;
    ro.label = a.label;
    if (!(payload = dpas_render_report(&a.s, &r, &ro, &err)))
        goto fail;
    scen_print_warnings(c, &r);
    rc = cli_emit(c, payload);
    scen_free(&a);
    return rc;
fail:
    scen_free(&a);
    return cli_fail(c, &err);
}
