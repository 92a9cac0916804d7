/* dpas calibrate FILE: network models from nccl-tests output, and their predictions. */
#include "cli.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *calibrate_help =
    "usage: dpas calibrate FILE [--collective C] [--ranks N] [--predict SIZE[,SIZE...]]\n"
    "                      [--plot FILE.svg|FILE.png] [-v] [-o FORMAT]\n"
    "\n"
    "Reads nccl-tests output as it was captured (its table with or without '#', any layout since\n"
    "2017, srun/mpirun/kubectl/pdsh line prefixes, other programs' lines skipped and counted, or "
    "a\n"
    "CSV whose header names size and time columns) and fits three models of time against size\n"
    "to each test, with nccl-tests' bus factors (time = steps x alpha + factor x size / beta;\n"
    "all_reduce 2(n-1) steps and 2(n-1)/n, all_gather and reduce_scatter n-1 and (n-1)/n,\n"
    "broadcast and reduce n-1 and 1):\n"
    "  alpha_beta  one line over every size (least squares on the relative error)\n"
    "  piecewise   one line per protocol regime, the breakpoints chosen from the data\n"
    "  empirical   the measured curve; between two sizes the line through both; outside, the\n"
    "              outermost regime's slope (extrapolated, with a warning)\n"
    "Prints each model's parameters, the regimes and the residuals per size. The collective and\n"
    "the rank count come from the file ('# Collective test starting', '#  Rank' lines) or, "
    "failing\n"
    "that, from busbw/algbw (a note says so).\n"
    "\n"
    "  --collective C        all_reduce, all_gather, reduce_scatter, broadcast or reduce: choose\n"
    "                        that test, or name it when the file cannot tell\n"
    "  --ranks N             likewise for the rank count\n"
    "  --predict SIZES       the time of each size under every model (4096, 16MiB, 1GB, ...;\n"
    "                        nccl-tests' size: all_gather's is the gathered total)\n"
    "  --plot FILE           measured time and the models against size, SVG or PNG\n"
    "  -v, --verbose         notes on how the file was read (lines skipped, prefixes)\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n";

enum { O_PREDICT = 3000, O_VERBOSE };

int cli_load_calibration(cli *c, const char *path, dpas_links *links, dpas_error *err)
{
    (void)c;
    dpas_netmodel *m;
    int rc = dpas_netmodel_load(path, NULL, 0, &m, err);
    if (rc)
        return rc;
    const dpas_curve *cv = &m->curves[0]; /* an AllReduce first: the ring schedules' collective */
    for (size_t i = 0; i < m->ncurves; i++)
        if (m->curves[i].collective == DPAS_COLL_ALL_REDUCE) {
            cv = &m->curves[i];
            break;
        }
    const dpas_fit *f = &cv->fits[DPAS_NETMODEL_ALPHA_BETA - 1];
    if (!f->defined) {
        snprintf(err->message, sizeof err->message, "%s: %s", path, f->reason);
        err->code = DPAS_EINVAL;
        snprintf(err->field, sizeof err->field, "calibration");
        dpas_netmodel_free(m);
        return DPAS_EINVAL;
    }
    links->inter_bandwidth = f->beta;
    links->inter_latency = f->alpha;
    dpas_netmodel_free(m);
    return 0;
}

/* "16MiB,1GB,4096" -> sizes. */
static int parse_sizes(cli *c, const char *text, uint64_t **sizes, size_t *n, dpas_error *err)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    uint64_t *s = malloc(cap * sizeof *s);
    char *copy = strdup(text);
    if (!s || !copy) {
        free(s), free(copy);
        return cli_usage(c, "calibrate", "out of memory");
    }
    size_t k = 0;
    int rc = 0;
    for (char *p = copy, *next; p && !rc; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = '\0';
        if (!*p)
            rc = cli_usage(c, "calibrate", "--predict: an empty size in \"%s\"", text);
        else if (dpas_parse_size_bytes("--predict", p, &s[k], err))
            rc = cli_fail(c, err);
        else
            k++;
    }
    free(copy);
    if (rc) {
        free(s);
        return rc;
    }
    *sizes = s, *n = k;
    return 0;
}

static int write_plot(cli *c, const dpas_netmodel *m, const char *plot, dpas_error *err)
{
    size_t l = strlen(plot);
    if (l > 4 && !strcmp(plot + l - 4, ".png"))
        return dpas_netmodel_png(m, plot, err) ? cli_fail(c, err) : 0;
    char *svg = dpas_netmodel_svg(m, err);
    if (!svg)
        return cli_fail(c, err);
    int rc = dpas_write_output(plot, "--plot", svg, strlen(svg), err);
    dpas_free(svg);
    if (rc)
        return cli_fail(c, err);
    return 0;
}

int cmd_calibrate(cli *c, int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {"collective", required_argument, 0, O_COLLECTIVE},
                                         {"ranks", required_argument, 0, O_RANKS},
                                         {"predict", required_argument, 0, O_PREDICT},
                                         {"plot", required_argument, 0, O_PLOT},
                                         {"verbose", no_argument, 0, 'v'},
                                         {0, 0, 0, 0}};
    const char *coll = NULL, *predict = NULL, *plot = NULL;
    int64_t ranks = 0;
    int opt, verbose = 0;
    dpas_error err = {0};
    cli_begin(c, opts);
    int common; /* cli_common_option's answer */
    while ((opt = getopt_long(argc, argv, "o:hv", opts, NULL)) != -1) {
        if ((common = cli_common_option(c, "calibrate", opt, calibrate_help)) != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        switch (opt) {
        case O_COLLECTIVE: {
            int k;
            if (dpas_collective_parse(optarg, &k, &err))
                return cli_fail(c, &err);
            coll = optarg;
            break;
        }
        case O_RANKS:
            if (dpas_parse_int("--ranks", optarg, &ranks, &err))
                return cli_fail(c, &err);
            if (ranks < 2) /* one rank moves nothing over a link: nothing to calibrate */
                return cli_usage(c, "calibrate", "--ranks must be >= 2, got %lld",
                                 (long long)ranks);
            break;
        case O_PREDICT: predict = optarg; break;
        case O_PLOT: {
            size_t l = strlen(optarg);
            if (l < 5 || (strcmp(optarg + l - 4, ".svg") && strcmp(optarg + l - 4, ".png")))
                return cli_usage(c, "calibrate",
                                 "--plot must name an .svg or .png file, got \"%s\"", optarg);
            if (!strcmp(optarg + l - 4, ".png") && !dpas_have_cairo())
                return cli_usage(c, "calibrate",
                                 "--plot %s: this dpas was built without cairo; "
                                 "use an .svg file",
                                 optarg);
            plot = optarg;
            break;
        }
        case 'v': verbose = 1; break;
        default: return cli_bad_option(c, "calibrate", argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage(c, "calibrate", "calibrate takes one FILE of nccl-tests output");
    uint64_t *sizes = NULL;
    size_t nsizes = 0;
    int rc;
    if (predict && (rc = parse_sizes(c, predict, &sizes, &nsizes, &err)))
        return rc;
    dpas_netmodel *m;
    if (dpas_netmodel_load(argv[optind], coll, ranks, &m, &err)) {
        free(sizes);
        return cli_fail(c, &err);
    }
    dpas_net_prediction *pred = NULL;
    size_t npred = 0;
    char *out = NULL, *notes = NULL;
    rc = 0;
    if (dpas_netmodel_predict(m, sizes, nsizes, &pred, &npred, &err) ||
        !(out = dpas_render_netmodel(m, pred, npred, c->format, &err)) ||
        !(notes = dpas_netmodel_notes(m, pred, npred, verbose, &err)))
        rc = cli_fail(c, &err);
    if (!rc && plot)
        rc = write_plot(c, m, plot, &err);
    if (!rc) {
        if (c->format != DPAS_FORMAT_JSON) /* in JSON the notes are in the payload */
            fputs(notes, c->err);
        rc = cli_emit(c, out);
        out = NULL;
    }
    dpas_free(out);
    dpas_free(notes);
    dpas_free(pred);
    free(sizes);
    dpas_netmodel_free(m);
    return rc;
}
