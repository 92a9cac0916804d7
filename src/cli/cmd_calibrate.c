/* dpas calibrate FILE: alpha and beta from nccl-tests output. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char *calibrate_help =
    "usage: dpas calibrate FILE [--collective all_reduce|all_gather] [--ranks N] [-o FORMAT]\n"
    "\n"
    "Fits the alpha-beta model to nccl-tests output (all_reduce_perf or all_gather_perf: its\n"
    "default table, or a CSV whose header names size and time columns): time = steps x alpha +\n"
    "factor x size / beta with nccl-tests' bus factors (all_reduce 2(n-1) steps and 2(n-1)/n;\n"
    "all_gather n-1 steps and (n-1)/n of the total size), by least squares on the relative\n"
    "error. Prints alpha, beta and the quality of the fit; 'dpas cost --calibration FILE' uses them.\n"
    "\n"
    "  --collective C        when the file does not say (no '# Collective test starting' line)\n"
    "  --ranks N             when the file does not say (no '#  Rank' lines)\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n";

int cli_load_calibration(cli *c, const char *path, dpas_links *links, dpas_error *err)
{
    (void)c;
    dpas_calibration cal[8];
    size_t n = 0;
    int rc = dpas_calibrate_file(path, NULL, 0, cal, 8, &n, err);
    if (rc)
        return rc;
    size_t pick = 0; /* an AllReduce fit first: it is what the ring schedules are made of */
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cal[i].collective, "all_reduce")) {
            pick = i;
            break;
        }
    links->inter_bandwidth = cal[pick].beta;
    links->inter_latency = cal[pick].alpha;
    return 0;
}

int cmd_calibrate(cli *c, int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"collective", required_argument, 0, O_COLLECTIVE}, {"ranks", required_argument, 0, O_RANKS},
        {0, 0, 0, 0}};
    const char *coll = NULL;
    int64_t ranks = 0;
    int opt;
    dpas_error err = {0};
    cli_begin(c, opts);
    int common; /* cli_common_option's answer */
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if ((common = cli_common_option(c, "calibrate", opt, calibrate_help)) != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        switch (opt) {
        case O_COLLECTIVE: coll = optarg; break;
        case O_RANKS:
            if (dpas_parse_int("--ranks", optarg, &ranks, &err))
                return cli_fail(c, &err);
            if (ranks < 2)
                return cli_usage(c, "calibrate", "--ranks must be >= 2, got %lld", (long long)ranks);
            break;
        default: return cli_bad_option(c, "calibrate", argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage(c, "calibrate", "calibrate takes one FILE of nccl-tests output");
    dpas_calibration cal[8];
    size_t n = 0;
    if (dpas_calibrate_file(argv[optind], coll, ranks, cal, 8, &n, &err))
        return cli_fail(c, &err);
    char *out = dpas_render_calibration(cal, n, c->format, &err);
    if (!out)
        return cli_fail(c, &err);
    return cli_emit(c, out);
}
