/* SPDX-License-Identifier: Apache-2.0 */
/* dpas calibrate FILE: network models from nccl-tests output, and their predictions. */
#include "cli.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *calibrate_help =
    "usage: dpas calibrate FILE [FILE...] [--collective C] [--ranks N] [--gpus-per-node G]\n"
    "                      [--test K[,K...]] [--at SCALE[,SCALE...]] [--predict SIZE[,SIZE...]]\n"
    "                      [--plot FILE.svg|FILE.png] [-v] [-o FORMAT]\n"
    "\n"
    "Reads nccl-tests output as it was captured (its table with or without '#', any layout since\n"
    "2017, srun/mpirun/kubectl/pdsh prefixes, other programs' lines skipped and counted, or a CSV\n"
    "whose header names size and time columns), one or more files of one cluster at one or more\n"
    "scales, and fits models of time against size:\n"
    "  alpha_beta  one line per test (time = steps x alpha + factor x size / beta, nccl-tests'\n"
    "              ring steps and bus factor)\n"
    "  piecewise   one such line per protocol regime, the breakpoints chosen from the data\n"
    "  empirical   the measured curve; between two sizes the line through both\n"
    "  nccl        NCCL's own tuning model (ring and tree, LL/LL128/Simple, hops inside and\n"
    "              across nodes, bandwidth per node) fitted to every test of a collective at\n"
    "              once: what transfers to a scale no file measured\n"
    "The default (what cost and sweep use): the measured curve at a measured scale, the nccl "
    "model\n"
    "through the measurements elsewhere. Each predicted time says its basis (measured,\n"
    "interpolated, extrapolated_size, transferred) and a band from the calibration's own errors\n"
    "on what it did not see. Ranks and nodes come from the file's Rank lines.\n"
    "\n"
    "  --collective C        all_reduce, all_gather, reduce_scatter, broadcast, reduce,\n"
    "                        alltoall, gather, scatter or sendrecv: keep those tests, or name\n"
    "                        it when a file cannot tell\n"
    "  --ranks N             likewise for the rank count\n"
    "  --gpus-per-node G     ranks per node of the files whose Rank lines name no hosts\n"
    "                        (otherwise assumed: 8 when the ranks are a multiple of 8, else one\n"
    "                        node)\n"
    "  --test K[,K...]       use only these tests (numbered from 1 across the files)\n"
    "  --at SCALE[,...]      predict at these scales: RANKS (with the files' ranks per node) or\n"
    "                        NODESxGPUS (540x4); with no --predict, at the measured sizes\n"
    "  --predict SIZES       the time of each size under every model (4096, 16MiB, 1GB, ...;\n"
    "                        nccl-tests' size: all_gather's is the gathered total)\n"
    "  --plot FILE           measured time and the models against size, SVG or PNG\n"
    "  -v, --verbose         notes on how the files were read (lines skipped, prefixes)\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n";

enum { O_PREDICT = 3000, O_VERBOSE, O_AT, O_TEST, O_GPUS_PER_NODE };

/* A comma-separated list: each item parsed by `item` into out[k] (elem bytes each); empty
 * items and repeated values refused. */
typedef int (*item_fn)(const char *flag, const char *text, void *out, dpas_error *err);

static int parse_list(cli *c, const char *flag, const char *noun, const char *text, size_t elem,
                      item_fn item, void **out, size_t *n, dpas_error *err)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    char *v = calloc(cap, elem), *copy = strdup(text);
    if (!v || !copy) {
        free(v), free(copy);
        return cli_usage(c, "calibrate", "out of memory");
    }
    size_t k = 0;
    int rc = 0;
    for (char *p = copy, *next; p && !rc; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = '\0';
        if (!*p) {
            rc = cli_usage(c, "calibrate", "%s: an empty %s in \"%s\"", flag, noun, text);
        } else if (item(flag, p, v + k * elem, err)) {
            rc = cli_fail(c, err);
        } else {
            for (size_t j = 0; j < k && !rc; j++)
                if (!memcmp(v + j * elem, v + k * elem, elem))
                    rc = cli_usage(c, "calibrate", "%s: \"%s\" is listed twice", flag, p);
            k++;
        }
    }
    free(copy);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v, *n = k;
    return 0;
}

static int size_item(const char *flag, const char *text, void *out, dpas_error *err)
{
    return dpas_parse_size_bytes(flag, text, out, err);
}

static int scale_item(const char *flag, const char *text, void *out, dpas_error *err)
{
    return dpas_scale_parse(flag, text, out, err);
}

static int test_item(const char *flag, const char *text, void *out, dpas_error *err)
{
    int64_t v;
    int rc = dpas_parse_int(flag, text, &v, err);
    if (!rc && v < 1) {
        snprintf(err->field, sizeof err->field, "%s", flag);
        snprintf(err->message, sizeof err->message, "%s: tests are numbered from 1, got %lld", flag,
                 (long long)v);
        return err->code = DPAS_EINVAL;
    }
    if (!rc)
        *(size_t *)out = (size_t)v;
    return rc;
}

/* "16MiB,1GB,4096" -> sizes. */
static int parse_sizes(cli *c, const char *text, uint64_t **sizes, size_t *n, dpas_error *err)
{
    return parse_list(c, "--predict", "size", text, sizeof **sizes, size_item, (void **)sizes, n,
                      err);
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
                                         {"gpus-per-node", required_argument, 0, O_GPUS_PER_NODE},
                                         {"test", required_argument, 0, O_TEST},
                                         {"at", required_argument, 0, O_AT},
                                         {"predict", required_argument, 0, O_PREDICT},
                                         {"plot", required_argument, 0, O_PLOT},
                                         {"verbose", no_argument, 0, 'v'},
                                         {0, 0, 0, 0}};
    const char *coll = NULL, *predict = NULL, *plot = NULL, *at = NULL, *tests = NULL;
    int64_t ranks = 0, per_node = 0;
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
        case O_GPUS_PER_NODE:
            if (dpas_parse_int("--gpus-per-node", optarg, &per_node, &err))
                return cli_fail(c, &err);
            if (per_node < 1)
                return cli_usage(c, "calibrate", "--gpus-per-node must be >= 1, got %lld",
                                 (long long)per_node);
            break;
        case O_TEST: tests = optarg; break;
        case O_AT: at = optarg; break;
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
    if (argc - optind < 1)
        return cli_usage(c, "calibrate", "calibrate takes one or more FILEs of nccl-tests output");
    uint64_t *sizes = NULL;
    dpas_scale *scales = NULL;
    size_t *chosen = NULL;
    size_t nsizes = 0, nscales = 0, nchosen = 0;
    int rc = 0;
    if ((predict && (rc = parse_sizes(c, predict, &sizes, &nsizes, &err))) ||
        (at && (rc = parse_list(c, "--at", "scale", at, sizeof *scales, scale_item,
                                (void **)&scales, &nscales, &err))) ||
        (tests && (rc = parse_list(c, "--test", "test", tests, sizeof *chosen, test_item,
                                   (void **)&chosen, &nchosen, &err)))) {
        free(sizes), free(scales), free(chosen);
        return rc;
    }
    dpas_calib_options copt = {.collective = coll,
                               .ranks = ranks,
                               .per_node = per_node,
                               .tests = chosen,
                               .ntests = nchosen};
    dpas_netmodel *m = NULL;
    dpas_net_prediction *pred = NULL;
    size_t npred = 0;
    char *out = NULL, *notes = NULL;
    /* "-": the nccl-tests output on standard input, the only FILE then (16 MiB, as a file) */
    char *in_text = NULL;
    size_t in_len = 0;
    bool from_stdin = false;
    for (int i = optind; i < argc; i++)
        from_stdin |= !strcmp(argv[i], "-");
    if (from_stdin && argc - optind > 1)
        rc = cli_usage(c, "calibrate",
                       "\"-\" (standard input) is the only FILE when given: got %d files",
                       argc - optind);
    else if (from_stdin)
        rc = cli_read_input(c, "the nccl-tests output", 16u << 20, &in_text, &in_len);
    if (rc) {
        free(sizes), free(scales), free(chosen);
        return rc;
    }
    const char *origin = "(standard input)";
    if ((from_stdin ? dpas_netmodel_from_texts((const char *const *)&in_text, &in_len, &origin, 1,
                                               &copt, &m, &err)
                    : dpas_netmodel_load_files((const char *const *)argv + optind,
                                               (size_t)(argc - optind), &copt, &m, &err)) ||
        dpas_netmodel_predict_at(m, sizes, nsizes, scales, nscales, &pred, &npred, &err) ||
        !(out = dpas_render_netmodel(m, pred, npred, c->format, &err)) ||
        !(notes = dpas_netmodel_notes(m, pred, npred, verbose, &err)))
        /* the library names the tests; the CLI says how to choose them */
        rc = cli_fail_hint(c, &err,
                           !strcmp(err.field, "tests")        ? "choose with --test N[,N...]"
                           : !strcmp(err.field, "collective") ? "choose with --collective C"
                           : !strcmp(err.field, "ranks")      ? "give --ranks N"
                                                              : NULL);
    if (!rc && plot)
        rc = write_plot(c, m, plot, &err);
    if (!rc) {
        if (c->format != DPAS_FORMAT_JSON) /* in JSON the notes are in the payload */
            fputs(notes, c->err);
        rc = cli_emit(c, out);
        out = NULL;
    }
    free(in_text);
    dpas_free(out);
    dpas_free(notes);
    dpas_free(pred);
    free(sizes), free(scales), free(chosen);
    dpas_netmodel_free(m);
    return rc;
}
