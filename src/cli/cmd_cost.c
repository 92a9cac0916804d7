/* dpas cost / inventory / memory: the analyses of one scenario beyond the seed. */
#include "cli.h"

#include <getopt.h>
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
    "  --calibration FILE    alpha and beta fitted from nccl-tests output (dpas calibrate) instead\n"
    "                        of the fabric's\n"
    "  --all                 text: also the combinations that are not realisable, with why\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "      --units UNITS     si (default) or iec for text\n"
    "  -h, --help            this help\n"
    "\n"
    "inputs (as dpas eval; a positional NAME is a named scenario, FILE a YAML or JSON file):\n"
    SCEN_INPUT_HELP;

static const char *inventory_help =
    "usage: dpas inventory [NAME|FILE] [INPUT FLAGS] [-o FORMAT] [--units si|iec]\n"
    "\n"
    "What one step exposes on the wire and what lies at rest, in exact bytes: the gradient,\n"
    "its AllReduce and gather traffic, the declared checkpoint and weights, and the training\n"
    "state under named conventions (ZeRO 16, Megatron 18, mlsysim's checkpoint 14, Adam state\n"
    "12, SGD 8 and 4, 8-bit Adam 6) and weight precisions, each with its source.\n"
    "\n"
    "inputs (as dpas eval):\n" SCEN_INPUT_HELP;

static const char *memory_help =
    "usage: dpas memory [NAME|FILE] [INPUT FLAGS] [--state NAME] [--zero 0|1|2|3] [-o FORMAT]\n"
    "\n"
    "Does one replica's training state fit the memory of its accelerators? Exit 0 when it\n"
    "fits, 2 (a physics violation, with the numbers) when it does not.\n"
    "\n"
    "  --state NAME          zero16 (default), megatron18, or any convention of dpas inventory\n"
    "  --zero STAGE          ZeRO stage 1, 2 or 3 partitions the zero16 state across replicas\n"
    "                        (Rajbhandari et al. 2019); default 0\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "      --units UNITS     si (default) or iec\n"
    "\n"
    "inputs (as dpas eval):\n" SCEN_INPUT_HELP;

enum { CMD_COST, CMD_INVENTORY, CMD_MEMORY };

/* Comma-separated names to a list (for --rule, --schedule). */
static int split(char *list, char **items, int cap)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t && n < cap; t = strtok_r(NULL, ",", &save))
        items[n++] = t;
    return n;
}

static int analysis(cli *c, int argc, char **argv, int which)
{
    static const char *names[] = {"cost", "inventory", "memory"};
    const char *cmd = names[which];
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        SCEN_LONG_OPTIONS,
        {"units", required_argument, 0, O_UNITS}, {"rule", required_argument, 0, O_RULE},
        {"schedule", required_argument, 0, O_SCHEDULE},
        {"convention", required_argument, 0, O_CONVENTION},
        {"steps", required_argument, 0, O_STEPS}, {"iterations", required_argument, 0, O_ITERATIONS},
        {"compute-rate", required_argument, 0, O_RATE}, {"f", required_argument, 0, O_F},
        {"state", required_argument, 0, O_STATE}, {"zero", required_argument, 0, O_ZERO},
        {"all", no_argument, 0, O_ALL}, {"calibration", required_argument, 0, O_CALIBRATION},
        {0, 0, 0, 0}};
    /* options that belong to one command only */
    static const struct { int opt, cmd; const char *flag; } owner[] = {
        {O_RULE, CMD_COST, "--rule"}, {O_SCHEDULE, CMD_COST, "--schedule"},
        {O_CONVENTION, CMD_COST, "--convention"}, {O_STEPS, CMD_COST, "--steps"},
        {O_ITERATIONS, CMD_COST, "--iterations"}, {O_RATE, CMD_COST, "--compute-rate"},
        {O_F, CMD_COST, "--f"}, {O_ALL, CMD_COST, "--all"}, {O_STATE, CMD_MEMORY, "--state"},
        {O_ZERO, CMD_MEMORY, "--zero"}, {O_CALIBRATION, CMD_COST, "--calibration"}};
    scen_args a = {0};
    dpas_cost_opts co = {.f = -1};
    dpas_cost_view view = {.units = DPAS_UNITS_SI};
    const char *rule_list = NULL, *sched_list = NULL, *conv = NULL, *state = "zero16";
    const char *calibration = NULL;
    dpas_links cal_links;
    int64_t zero = 0;
    int rc = 0, opt;
    dpas_error err = {0};
    opterr = 0;
    optind = 0; /* 0: glibc re-initialises getopt fully (the CLI may run many times in one process) */
    int common; /* cli_common_option's answer */
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if (scen_take(c, cmd, &a, opt, optarg, &rc)) {
            if (rc)
                return rc;
            continue;
        }
        for (size_t i = 0; i < sizeof owner / sizeof owner[0]; i++)
            if (owner[i].opt == opt && owner[i].cmd != which)
                return cli_usage(c, cmd, "%s is an option of dpas %s, not of %s", owner[i].flag,
                                 names[owner[i].cmd], cmd);
        int64_t v;
        if ((common = cli_common_option(c, cmd, opt, which == CMD_COST ? cost_help : which == CMD_INVENTORY ? inventory_help : memory_help)) != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        switch (opt) {
        case O_UNITS:
            if ((rc = cli_parse_units(c, cmd, optarg, (int *)&view.units)))
                return rc;
            break;
        case O_RULE: rule_list = optarg; break;
        case O_SCHEDULE: sched_list = optarg; break;
        case O_CONVENTION: conv = optarg; break;
        case O_STATE: state = optarg; break;
        case O_ALL: view.all = 1; break;
        case O_CALIBRATION: calibration = optarg; break;
        case O_STEPS:
        case O_ITERATIONS:
        case O_F:
        case O_ZERO:
            if (dpas_parse_int(opt == O_STEPS ? "--steps" : opt == O_ITERATIONS ? "--iterations"
                                            : opt == O_F ? "--f" : "--zero",
                               optarg, &v, &err))
                return cli_fail(c, &err);
            if (opt == O_STEPS && v < 1)
                return cli_usage(c, cmd, "--steps must be >= 1, got %lld", (long long)v);
            if (opt == O_ITERATIONS && v < 1)
                return cli_usage(c, cmd, "--iterations must be >= 1, got %lld", (long long)v);
            if (opt == O_F && v < 0)
                return cli_usage(c, cmd, "--f must be >= 0, got %lld", (long long)v);
            if (opt == O_ZERO && (v < 0 || v > 3))
                return cli_usage(c, cmd, "--zero must be 0, 1, 2 or 3, got %lld", (long long)v);
            if (opt == O_STEPS)
                co.steps = v;
            else if (opt == O_ITERATIONS)
                co.iterations = v;
            else if (opt == O_F)
                co.f = v;
            else
                zero = v;
            break;
        case O_RATE: {
            uint64_t r;
            if (dpas_parse_count("--compute-rate", optarg, &r, &err))
                return cli_fail(c, &err);
            if (r == 0)
                return cli_usage(c, cmd, "--compute-rate must be > 0, got %s", optarg);
            co.compute_rate = (double)r;
            break;
        }
        default: return cli_bad_option(c, cmd, argv);
        }
    }
    view.format = (dpas_format)c->format;
    int npos = argc - optind;
    if (npos > 1)
        return cli_usage(c, cmd, "%s takes at most one NAME or FILE, got %d", cmd, npos);
    if (a.given[1] && a.given[2])
        return cli_usage(c, cmd, "give --model or --params, not both");
    a.positional = npos ? argv[optind] : NULL;

    /* rules and schedules are checked before the scenario, so a typo is named first */
    const dpas_rule *rules[32];
    char rbuf[512], sbuf[512];
    if (rule_list) {
        char *items[32];
        snprintf(rbuf, sizeof rbuf, "%s", rule_list);
        int n = split(rbuf, items, 32);
        if (!n)
            return cli_usage(c, cmd, "--rule needs at least one rule name");
        for (int i = 0; i < n; i++)
            if (dpas_rule_select(items[i], conv, &rules[i], &err))
                return cli_fail(c, &err);
        co.rules = rules;
        co.nrules = (size_t)n;
    } else if (conv) {
        size_t n = 0;
        for (size_t i = 0; i < dpas_rule_count() && n < 32; i++) {
            const dpas_rule *r = dpas_rule_at(i);
            if (!r->is_default)
                continue;
            if (dpas_rule_select(r->name, conv, &rules[n++], &err))
                return cli_fail(c, &err);
        }
        co.rules = rules;
        co.nrules = n;
    }
    if (sched_list) {
        char *items[16];
        snprintf(sbuf, sizeof sbuf, "%s", sched_list);
        int n = split(sbuf, items, 16);
        if (!n)
            return cli_usage(c, cmd, "--schedule needs at least one schedule name");
        for (int i = 0; i < n; i++) {
            int k = dpas_schedule_from_name(items[i]);
            if (k < 0)
                return cli_usage(c, cmd, "--schedule: unknown schedule \"%s\"; expected allreduce, "
                                         "allgather, ps, ps_separate, sharded, sharded_distance or "
                                         "innetwork", items[i]);
            co.schedules |= 1u << k;
        }
    }
    if (calibration) {
        if (cli_load_calibration(c, calibration, &cal_links, &err))
            return cli_fail(c, &err);
        co.links = &cal_links;
        co.links_source = calibration;
    }
    const dpas_convention *convention = NULL;
    if (which == CMD_MEMORY && dpas_convention_find(state, &convention, &err))
        return cli_fail(c, &err);

    char *out = NULL;
    dpas_report r;
    if ((rc = scen_load(c, cmd, &a, SCEN_POS_EITHER, &err)) || (rc = dpas_evaluate(&a.s, &r, &err)))
        goto fail;
    if (which == CMD_COST) {
        view.label = a.label;
        dpas_cost *cost;
        if ((rc = dpas_cost_compute(&a.s, &co, &cost, &err)))
            goto fail;
        out = dpas_render_cost(cost, &view, &err);
        dpas_cost_free(cost);
    } else if (which == CMD_INVENTORY) {
        dpas_inventory_row *inv = NULL;
        size_t ninv = 0;
        if ((rc = dpas_inventory(&a.s, NULL, 0, &ninv, &err)))
            goto fail;
        if (!(inv = calloc(ninv, sizeof *inv))) {
            snprintf(err.message, sizeof err.message, "out of memory");
            err.code = DPAS_ENOMEM;
            goto fail;
        }
        if (!(rc = dpas_inventory(&a.s, inv, ninv, &ninv, &err)))
            out = dpas_render_inventory(inv, ninv, view.format, view.units, a.label, &err);
        free(inv);
    } else {
        dpas_memory m;
        if ((rc = dpas_memory_check(&a.s, convention, (int)zero, &m, &err)))
            goto fail;
        if (!m.fits) {
            err.code = DPAS_EPHYSICS;
            snprintf(err.field, sizeof err.field, "memory");
            dpas_memory_message(&a.s, convention, (int)zero, &m, err.message, sizeof err.message);
            goto fail;
        }
        out = dpas_render_memory(&a.s, convention, (int)zero, &m, view.format, view.units, a.label, &err);
    }
    if (!out)
        goto fail;
    scen_print_warnings(c, &r);
    rc = cli_emit(c, out);
    scen_free(&a);
    return rc;
fail:
    scen_free(&a);
    return cli_fail(c, &err);
}

int cmd_cost(cli *c, int argc, char **argv) { return analysis(c, argc, argv, CMD_COST); }
int cmd_inventory(cli *c, int argc, char **argv) { return analysis(c, argc, argv, CMD_INVENTORY); }
int cmd_memory(cli *c, int argc, char **argv) { return analysis(c, argc, argv, CMD_MEMORY); }
