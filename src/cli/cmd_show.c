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
    "inputs:\n" SCEN_INPUT_HELP "\n"
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
    char **items;
    size_t n;
    int rc = cli_list(c, cmd, "--attr", list, &items, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        const char *tok = items[i] + strspn(items[i], " ");
        int a = dpas_attr_from_name(tok);
        if (a < 0) {
            char names[400] = "";
            for (int k = 0; k < DPAS_ATTR_COUNT; k++) {
                size_t l = strlen(names);
                snprintf(names + l, sizeof names - l, "%s%s", k ? ", " : "", dpas_attr_name(k));
            }
            dpas_error e = {.code = DPAS_EINVAL};
            snprintf(e.field, sizeof e.field, "--attr");
            char q[96];
            snprintf(e.message, sizeof e.message,
                     "--attr: unknown attribute %s; expected one of %s (see: dpas %s --help)",
                     dpas_quote(tok, q, sizeof q), names, cmd);
            rc = cli_fail(c, &e);
            break;
        }
        *mask |= 1u << a;
    }
    cli_list_free(items);
    return rc;
}

static int scenario(cli *c, int argc, char **argv, int is_show)
{
    const char *cmd = is_show ? "show" : "eval";
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         SCEN_LONG_OPTIONS,
                                         {"units", required_argument, 0, O_UNITS},
                                         {"attr", required_argument, 0, O_ATTR},
                                         {"explain", no_argument, 0, O_EXPLAIN},
                                         {0, 0, 0, 0}};
    scen_args a = {0};
    dpas_render_opts ro = {.format = DPAS_FORMAT_TEXT, .units = DPAS_UNITS_SI};
    int rc = 0, opt;
    cli_begin(c, opts);
    int common; /* cli_common_option's answer */
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if ((common = cli_common_option(c, cmd, opt, is_show ? show_help : eval_help)) !=
            CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        if (scen_take(&a, opt, optarg)) {
            if (is_show && opt == O_SCENARIO)
                return cli_usage(c, cmd, "--scenario is for eval; show takes the NAME itself");
            continue;
        }
        switch (opt) {
        case O_UNITS:
            if ((rc = cli_parse_units(c, cmd, optarg, (dpas_units *)&ro.units)))
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
    if ((rc = scen_check(c, cmd, &a)))
        return rc;
    a.positional = npos ? argv[optind] : NULL;

    dpas_error err = {0};
    dpas_report r;
    char *payload = NULL;
    if ((rc = scen_load(&a, is_show ? SCEN_POS_NAME : SCEN_POS_FILE, &err)) ||
        (rc = dpas_evaluate(&a.s, &r, &err)))
        goto fail;
    ro.label = a.label;
    if (!(payload = dpas_render_report(&a.s, &r, &ro, &err)))
        goto fail;
    scen_print_warnings(c, &r, 1);
    rc = cli_emit(c, payload);
    scen_free(&a);
    return rc;
fail:
    scen_free(&a);
    return cli_fail(c, &err);
}

int cmd_show(cli *c, int argc, char **argv) { return scenario(c, argc, argv, 1); }
int cmd_eval(cli *c, int argc, char **argv) { return scenario(c, argc, argv, 0); }
