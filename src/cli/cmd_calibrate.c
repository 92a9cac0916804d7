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

/* Each option is a key of a calibrate request (the key table's); the library reads and checks
 * them, as for /api/v1/calibrate and dpas-measure's --calibration. */
static const char *key_of_opt(int opt)
{
    switch (opt) {
    case O_COLLECTIVE: return "collective";
    case O_RANKS: return "ranks";
    case O_GPUS_PER_NODE: return "gpus_per_node";
    case O_TEST: return "test";
    case O_AT: return "at";
    case O_PREDICT: return "predict";
    default: return NULL;
    }
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
    const char *plot = NULL;
    int opt, verbose = 0, rc = 0;
    dpas_error err = {0};
    dpas_request *rq = NULL;
    if (dpas_request_new(DPAS_ANALYSIS_CALIBRATE, &rq, &err))
        return cli_fail(c, &err);
    cli_begin(c, opts);
    int common; /* cli_common_option's answer */
    while (!rc && (opt = getopt_long(argc, argv, "o:hv", opts, NULL)) != -1) {
        if ((common = cli_common_option(c, "calibrate", opt, calibrate_help)) != CLI_OTHER) {
            if (common != CLI_NEXT) {
                dpas_request_free(rq);
                return common;
            }
            continue;
        }
        const char *key = key_of_opt(opt);
        if (key) {
            if (dpas_request_set(rq, key, optarg, &err))
                rc = cli_fail(c, &err);
            continue;
        }
        switch (opt) {
        case O_PLOT: {
            size_t l = strlen(optarg);
            if (l < 5 || (strcmp(optarg + l - 4, ".svg") && strcmp(optarg + l - 4, ".png")))
                rc = cli_usage(c, "calibrate", "--plot must name an .svg or .png file, got \"%s\"",
                               optarg);
            else if (!strcmp(optarg + l - 4, ".png") && !dpas_have_cairo())
                rc = cli_usage(c, "calibrate",
                               "--plot %s: this dpas was built without cairo; "
                               "use an .svg file",
                               optarg);
            plot = optarg;
            break;
        }
        case 'v': verbose = 1; break;
        default: rc = cli_bad_option(c, "calibrate", argv); break;
        }
    }
    if (!rc && argc - optind < 1)
        rc = cli_usage(c, "calibrate", "calibrate takes one or more FILEs of nccl-tests output");
    /* "-": the nccl-tests output on standard input, the only FILE then (16 MiB, as a file) */
    bool from_stdin = false;
    for (int i = optind; i < argc; i++)
        from_stdin |= !strcmp(argv[i], "-");
    if (!rc && from_stdin && argc - optind > 1)
        rc = cli_usage(c, "calibrate",
                       "\"-\" (standard input) is the only FILE when given: got %d files",
                       argc - optind);
    if (!rc && from_stdin) {
        char *in_text = NULL;
        size_t in_len = 0;
        rc = cli_read_input(c, "the nccl-tests output", 16u << 20, &in_text, &in_len);
        if (!rc && dpas_request_calibration_text(rq, in_text, in_len, "(standard input)", &err))
            rc = cli_fail(c, &err);
        free(in_text);
    }
    for (int i = optind; !rc && !from_stdin && i < argc; i++) /* each FILE: one more calibration */
        if (dpas_request_add(rq, "calibration", argv[i], &err))
            rc = cli_fail(c, &err);
    if (rc) {
        dpas_request_free(rq);
        return rc;
    }
    const dpas_netmodel *m = NULL;
    dpas_net_prediction *pred = NULL;
    size_t npred = 0;
    char *out = NULL, *notes = NULL;
    if (dpas_request_resolve(rq, NULL, &err) || !(m = dpas_request_netmodel(rq)) ||
        dpas_request_calibrate(rq, &pred, &npred, &err) ||
        !(out = dpas_render_netmodel(m, pred, npred, c->format, &err)) ||
        !(notes = dpas_netmodel_notes(m, pred, npred, verbose, &err)))
        /* the library names the tests; the CLI says how to choose them */
        /* (not to a value given and refused: "ranks must be >= 2") */
        rc = cli_fail_hint(c, &err,
                           strstr(err.message, " must ")      ? NULL
                           : !strcmp(err.field, "tests")      ? "choose with --test N[,N...]"
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
    dpas_free(out);
    dpas_free(notes);
    dpas_free(pred);
    dpas_request_free(rq);
    return rc;
}
