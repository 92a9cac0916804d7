/* dpas show NAME / dpas eval [FILE]: one scenario, from the registry, flags and/or a file. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
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
    "inputs:\n"
    "      --scenario NAME   start from a named scenario\n"
    "      --model NAME      workload from the registry (dpas list models), or\n"
    "      --params COUNT    workload.parameters: 175e9, 70.6e9, 3504872, 7B (K M B|G T)\n"
    "      --fleet NAME      fleet from the registry (dpas list fleets), and/or\n"
    "      --nodes N         fleet.count (overrides the fleet's)\n"
    "      --accelerators-per-node N\n"
    "                        fleet.node.accelerators_per_node (overrides the fleet's)\n"
    "      --dp N            dp_degree, the number of data-parallel replicas\n"
    "      --grad WIDTH      gradient_bytes_per_param: 2 B, 16 bit, bf16, 4.127 bit, ...\n"
    "      --ckpt WIDTH      checkpoint_bytes_per_param: 14 B, ...\n"
    "      --weights WIDTH   weight_bytes_per_param (optional; 'none' removes it)\n"
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

enum {
    O_SCENARIO = 1000, O_MODEL, O_PARAMS, O_FLEET, O_NODES, O_APN, O_DP, O_GRAD, O_CKPT,
    O_WEIGHTS, O_UNITS, O_ATTR, O_EXPLAIN
};

/* Spec keys for the input flags, in the order they are applied: a registry fleet first, so
 * that --nodes and --accelerators-per-node override it. */
static const struct { int opt; const char *key, *flag; } inputs[] = {
    {O_SCENARIO, "scenario", "--scenario"}, {O_MODEL, "model", "--model"},
    {O_PARAMS, "params", "--params"},       {O_FLEET, "fleet", "--fleet"},
    {O_NODES, "nodes", "--nodes"},          {O_APN, "accelerators_per_node", "--accelerators-per-node"},
    {O_DP, "dp", "--dp"},                   {O_GRAD, "grad", "--grad"},
    {O_CKPT, "ckpt", "--ckpt"},             {O_WEIGHTS, "weights", "--weights"},
};
#define NINPUTS (sizeof inputs / sizeof inputs[0])

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
        {"scenario", required_argument, 0, O_SCENARIO}, {"model", required_argument, 0, O_MODEL},
        {"params", required_argument, 0, O_PARAMS}, {"fleet", required_argument, 0, O_FLEET},
        {"nodes", required_argument, 0, O_NODES},
        {"accelerators-per-node", required_argument, 0, O_APN},
        {"dp", required_argument, 0, O_DP}, {"grad", required_argument, 0, O_GRAD},
        {"ckpt", required_argument, 0, O_CKPT}, {"weights", required_argument, 0, O_WEIGHTS},
        {"units", required_argument, 0, O_UNITS}, {"attr", required_argument, 0, O_ATTR},
        {"explain", no_argument, 0, O_EXPLAIN}, {0, 0, 0, 0}};
    const char *given[NINPUTS] = {0};
    dpas_render_opts ro = {.format = DPAS_FORMAT_TEXT, .units = DPAS_UNITS_SI};
    int rc, opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'h': fputs(is_show ? show_help : eval_help, c->out); return EXIT_OK;
        case 'o':
            if ((rc = cli_parse_format(c, cmd, optarg)))
                return rc;
            break;
        case O_UNITS:
            if ((rc = cli_parse_units(c, cmd, optarg, &ro.units)))
                return rc;
            break;
        case O_ATTR:
            if ((rc = parse_attrs(c, cmd, optarg, &ro.attrs)))
                return rc;
            break;
        case O_EXPLAIN: ro.explain = 1; break;
        case '?':
            if (optopt && optopt < 256 && strchr("o", optopt))
                return cli_usage(c, cmd, "-%c needs a value", optopt);
            if (optopt >= O_SCENARIO)
                return cli_usage(c, cmd, "%s needs a value", argv[optind - 1]);
            return cli_usage(c, cmd, "unknown option \"%s\"", argv[optind - 1]);
        default:
            for (size_t i = 0; i < NINPUTS; i++)
                if (inputs[i].opt == opt) {
                    if (given[i])
                        return cli_usage(c, cmd, "%s is given twice", inputs[i].flag);
                    given[i] = optarg;
                }
            if (is_show && opt == O_SCENARIO)
                return cli_usage(c, cmd, "--scenario is for eval; show takes the NAME itself");
            break;
        }
    }
    ro.format = c->format;
    int npos = argc - optind;
    if (is_show && npos != 1)
        return cli_usage(c, cmd, npos ? "show takes one scenario NAME, got %d" : "show needs a scenario NAME%.0d", npos);
    if (!is_show && npos > 1)
        return cli_usage(c, cmd, "eval takes at most one FILE, got %d", npos);
    if (given[1] && given[2])
        return cli_usage(c, cmd, "give --model or --params, not both");

    dpas_error err = {0};
    dpas_registry *reg = NULL;
    dpas_spec *spec = dpas_spec_new();
    char *payload = NULL;
    int exit_code = EXIT_OK;
    if (!spec) {
        err.code = DPAS_ENOMEM;
        snprintf(err.message, sizeof err.message, "out of memory");
        return cli_fail(c, &err);
    }
    if ((rc = dpas_registry_builtin(&reg, &err)))
        goto fail;
    if (is_show && (rc = dpas_spec_set(spec, "scenario", argv[optind], "scenario", &err)))
        goto fail;
    if (!is_show && npos == 1 && (rc = dpas_spec_load_file(spec, argv[optind], &err)))
        goto fail;
    for (size_t i = 0; i < NINPUTS; i++) {
        if (!given[i])
            continue;
        const char *v = given[i];
        if (inputs[i].opt == O_WEIGHTS && !strcmp(v, "none"))
            v = NULL;
        if ((rc = dpas_spec_set(spec, inputs[i].key, v, inputs[i].flag, &err)))
            goto fail;
    }
    dpas_scenario s;
    dpas_report r;
    if ((rc = dpas_spec_resolve(spec, reg, &s, &err)) || (rc = dpas_evaluate(&s, &r, &err)))
        goto fail;
    ro.label = dpas_spec_label(spec);
    if (ro.label && is_show) { /* the named scenario's full path */
        const void *e;
        if (!dpas_registry_find(reg, DPAS_KIND_SCENARIO, ro.label, &e, NULL))
            ro.label = ((const dpas_named_scenario *)e)->path;
    }
    if (!(payload = dpas_render_report(&s, &r, &ro, &err)))
        goto fail;
    if (c->format != DPAS_FORMAT_JSON) {
        for (unsigned bit = 1; bit && bit <= r.warnings; bit <<= 1) {
            if (r.warnings & bit) {
                char w[400];
                dpas_warning_message(&r, bit, w, sizeof w);
                fprintf(c->err, "dpas: warning: %s\n", w);
            }
        }
    }
    exit_code = cli_emit(c, payload);
    goto done;
fail:
    exit_code = cli_fail(c, &err);
done:
    dpas_spec_free(spec);
    dpas_registry_free(reg);
    return exit_code;
}
