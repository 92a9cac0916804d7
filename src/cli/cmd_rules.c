/* dpas rules: the catalogue of robust aggregation rules, with max f for n and min n for f. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char *rules_help =
    "usage: dpas rules [--n N] [--f F] [--convention NAME|all] [-o FORMAT]\n"
    "\n"
    "The Byzantine-robust aggregation rules dpas knows: each rule's resilience condition on\n"
    "n replicas with f Byzantine ones, its compute cost, whether it works coordinate by\n"
    "coordinate (and so can be sharded), and its sources.\n"
    "\n"
    "  --n N                 add max_f: the largest f the rule tolerates with N replicas\n"
    "  --f F                 add min_n: the smallest number of replicas for F Byzantine ones\n"
    "  --convention NAME     where sources disagree (Krum: blanchard n >= 2f + 3, the default;\n"
    "                        byzfl 2f < n), use NAME; 'all' lists every convention\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "  -h, --help            this help\n";

int cmd_rules(cli *c, int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {"n", required_argument, 0, O_N},
                                         {"f", required_argument, 0, O_F},
                                         {"convention", required_argument, 0, O_CONVENTION},
                                         {0, 0, 0, 0}};
    int64_t n = -1, f = -1;
    const char *conv = NULL;
    int opt;
    dpas_error err = {0};
    cli_begin(c, opts);
    int common; /* cli_common_option's answer */
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if ((common = cli_common_option(c, "rules", opt, rules_help)) != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        switch (opt) {
        case O_N:
            if (dpas_parse_int("--n", optarg, &n, &err))
                return cli_fail(c, &err);
            if (n < 1)
                return cli_usage(c, "rules", "--n must be >= 1, got %lld", (long long)n);
            break;
        case O_F:
            if (dpas_parse_int("--f", optarg, &f, &err))
                return cli_fail(c, &err);
            if (f < 0)
                return cli_usage(c, "rules", "--f must be >= 0, got %lld", (long long)f);
            break;
        case O_CONVENTION: conv = optarg; break;
        default: return cli_bad_option(c, "rules", argv);
        }
    }
    if (optind < argc)
        return cli_usage(c, "rules", "rules takes no arguments, got \"%s\"", argv[optind]);
    dpas_rule_row rows[64];
    size_t nrows;
    if (dpas_rules_list(n, f, conv, rows, &nrows, &err))
        return cli_fail(c, &err);
    char *out = dpas_render_rules(rows, nrows, n > 0, f >= 0, (dpas_format)c->format, &err);
    if (!out)
        return cli_fail(c, &err);
    return cli_emit(c, out);
}
