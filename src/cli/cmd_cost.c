/* dpas cost: what each robust rule costs under each schedule on one scenario's fleet. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *cost_help =
    "usage: dpas cost [NAME|FILE] [INPUT FLAGS] [OPTIONS]\n"
    "\n"
    "What a robust aggregate costs on this scenario's fleet: for each rule x schedule, whether\n"
    "the schedule can realise the rule (and why not), the largest f the rule tolerates at\n"
    "dp_degree, the bytes each worker sends per step (exact), their ratio to the ring\n"
    "AllReduce, and the alpha-beta time per step, flat (every replica on one fabric link) and\n"
    "hierarchical (intra-node over the node's link, inter-node over the fabric, as mlsysim).\n"
    "\n"
    "  --rule R[,R...]       rules to cost (dpas rules); default every rule\n"
    "  --convention NAME     blanchard (default) or byzfl for Krum and Multi-Krum\n"
    "  --schedule S[,S...]   allreduce, allgather, ps, ps_separate, sharded, sharded_distance,\n"
    "                        innetwork; default all\n"
    "  --f F                 add whether each rule tolerates F Byzantine replicas\n"
    "  --steps K             bytes and times for K steps (default 1)\n"
    "  --iterations T        iterations of geometric_median / centered_clipping (default 10)\n"
    "  --compute-rate FLOPS  FLOP/s per worker: adds the rule's own compute time\n"
    "  --calibration FILE    alpha and beta fitted from nccl-tests output (dpas calibrate) "
    "instead\n"
    "                        of the fabric's\n"
    "  --network-model M     with --calibration: flat times from the file's measured curves,\n"
    "                        M = default (empirical where measured, piecewise outside),\n"
    "                        alpha_beta, piecewise or empirical\n"
    "  --all                 text: also the combinations that are not realisable, with why\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "      --units UNITS     si (default) or iec for text\n"
    "  -h, --help            this help\n"
    "\n"
    "inputs (as dpas eval; a positional NAME is a named scenario, FILE a YAML or JSON "
    "file):\n" SCEN_INPUT_HELP;

int cli_rules(cli *c, const char *cmd, const char *list, const char *convention,
              const dpas_rule ***rules, size_t *n, dpas_error *err)
{
    char **items = NULL;
    size_t k = 0;
    int rc = 0;
    *rules = NULL;
    *n = 0;
    if (list && (rc = cli_list(c, cmd, "--rule", list, &items, &k)))
        return rc;
    if (!list) /* every rule's default row, under the convention where it has one */
        for (size_t i = 0; i < dpas_rule_count(); i++)
            k += dpas_rule_at(i)->is_default != 0;
    const dpas_rule **r = calloc(k ? k : 1, sizeof *r);
    if (!r) {
        cli_list_free(items);
        return cli_usage(c, cmd, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; !rc && (list ? m < k : i < dpas_rule_count()); i++) {
        const char *name = list ? items[i] : dpas_rule_at(i)->name;
        if (!list && !dpas_rule_at(i)->is_default)
            continue;
        if (dpas_rule_select(name, convention, &r[m++], err))
            rc = cli_fail(c, err);
    }
    cli_list_free(items);
    if (rc) {
        free(r);
        return rc;
    }
    *rules = r;
    *n = m;
    return 0;
}

static int schedules(cli *c, const char *list, unsigned *mask)
{
    char **items;
    size_t n;
    int rc = cli_list(c, "cost", "--schedule", list, &items, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        int k = dpas_schedule_from_name(items[i]);
        if (k < 0) {
            char q[96];
            rc = cli_usage(c, "cost",
                           "--schedule: unknown schedule %s; expected allreduce, "
                           "allgather, ps, ps_separate, sharded, sharded_distance or "
                           "innetwork",
                           dpas_quote(items[i], q, sizeof q));
        } else {
            *mask |= 1u << k;
        }
    }
    cli_list_free(items);
    return rc;
}

/* A count option: --steps, --iterations, --f. */
static int count_option(cli *c, const char *flag, const char *text, int64_t min, int64_t *out)
{
    dpas_error err = {0};
    if (dpas_parse_int(flag, text, out, &err))
        return cli_fail(c, &err);
    if (*out < min)
        return cli_usage(c, "cost", "%s must be >= %lld, got %lld", flag, (long long)min,
                         (long long)*out);
    return 0;
}

typedef struct cost_args {
    scen_args a;
    dpas_cost_opts co;
    dpas_cost_view view;
    const char *rules, *schedules, *convention, *calibration, *network_model;
} cost_args;

static int options(cli *c, int argc, char **argv, cost_args *x)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         SCEN_LONG_OPTIONS,
                                         {"units", required_argument, 0, O_UNITS},
                                         {"rule", required_argument, 0, O_RULE},
                                         {"schedule", required_argument, 0, O_SCHEDULE},
                                         {"convention", required_argument, 0, O_CONVENTION},
                                         {"steps", required_argument, 0, O_STEPS},
                                         {"iterations", required_argument, 0, O_ITERATIONS},
                                         {"compute-rate", required_argument, 0, O_RATE},
                                         {"f", required_argument, 0, O_F},
                                         {"all", no_argument, 0, O_ALL},
                                         {"calibration", required_argument, 0, O_CALIBRATION},
                                         {"network-model", required_argument, 0, O_NETMODEL},
                                         {0, 0, 0, 0}};
    int opt, rc = 0;
    cli_begin(c, opts);
    while (!rc && (opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int common = cli_common_option(c, "cost", opt, cost_help);
        if (common != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common == EXIT_OK ? -1 : common; /* -1: help was printed */
            continue;
        }
        if (scen_take(&x->a, opt, optarg))
            continue;
        switch (opt) {
        case O_UNITS: rc = cli_parse_units(c, "cost", optarg, &x->view.units); break;
        case O_RULE: x->rules = optarg; break;
        case O_SCHEDULE: x->schedules = optarg; break;
        case O_CONVENTION: x->convention = optarg; break;
        case O_ALL: x->view.all = 1; break;
        case O_CALIBRATION: x->calibration = optarg; break;
        case O_NETMODEL: x->network_model = optarg; break;
        case O_STEPS: rc = count_option(c, "--steps", optarg, 1, &x->co.steps); break;
        case O_ITERATIONS:
            rc = count_option(c, "--iterations", optarg, 1, &x->co.iterations);
            break;
        case O_F: rc = count_option(c, "--f", optarg, 0, &x->co.f); break;
        case O_RATE: {
            uint64_t r;
            dpas_error err = {0};
            if (dpas_parse_count("--compute-rate", optarg, &r, &err))
                rc = cli_fail(c, &err);
            else if (r == 0)
                rc = cli_usage(c, "cost", "--compute-rate must be > 0, got %s", optarg);
            x->co.compute_rate = (double)r;
            break;
        }
        default: rc = cli_bad_option(c, "cost", argv);
        }
    }
    if (rc)
        return rc;
    x->view.format = (dpas_format)c->format;
    if (argc - optind > 1)
        return cli_usage(c, "cost", "cost takes at most one NAME or FILE, got %d", argc - optind);
    x->a.positional = argc - optind ? argv[optind] : NULL;
    return scen_check(c, "cost", &x->a);
}

int cmd_cost(cli *c, int argc, char **argv)
{
    cost_args x = {.co = {.f = -1}, .view = {.units = DPAS_UNITS_SI}};
    dpas_error err = {0};
    const dpas_rule **rules = NULL;
    dpas_links cal_links;
    dpas_netmodel *net = NULL;
    dpas_cost *cost = NULL;
    dpas_report r;
    char *out = NULL;
    int rc = options(c, argc, argv, &x);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    /* rules and schedules are checked before the scenario, so a typo is named first */
    if ((x.rules || x.convention) &&
        (rc = cli_rules(c, "cost", x.rules, x.convention, &rules, &x.co.nrules, &err)))
        return rc;
    x.co.rules = rules;
    if (x.schedules && (rc = schedules(c, x.schedules, &x.co.schedules)))
        goto done;
    if ((rc = cli_network(c, "cost", x.calibration, x.network_model, &cal_links, &net,
                          &x.co.net_kind)))
        goto done;
    if (x.calibration) {
        x.co.links = &cal_links;
        x.co.links_source = x.calibration;
        x.co.net = net;
    }
    if ((rc = scen_load(&x.a, SCEN_POS_EITHER, &err)) || (rc = dpas_evaluate(&x.a.s, &r, &err)) ||
        (rc = dpas_cost_compute(&x.a.s, &x.co, &cost, &err)))
        goto fail;
    x.view.label = x.a.label;
    if (!(out = dpas_render_cost(cost, &x.view, &err)))
        goto fail;
    scen_print_warnings(c, &r, 0);
    rc = cli_emit(c, out);
    goto done;
fail:
    rc = cli_fail(c, &err);
done:
    dpas_netmodel_free(net);
    dpas_cost_free(cost);
    free(rules);
    scen_free(&x.a);
    return rc;
}
