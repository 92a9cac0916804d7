/* SPDX-License-Identifier: Apache-2.0 */
/* dpas calibrate FILE: network models from nccl-tests output, and their predictions. */
#include "cli.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The help: what calibrate does, then the keys a calibrate takes from the key table (their
 * flags, each one line), then its own options. */
static const char *calibrate_about =
    "usage: dpas calibrate FILE [FILE...] [KEYS] [--plot FILE.svg|FILE.png] [-v] [-o FORMAT]\n"
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
    "on what it did not see. Ranks and nodes come from the file's Rank lines (without hosts:\n"
    "8 per node when the ranks are a multiple of 8, else one node); with --at and no --predict,\n"
    "the predictions are at the measured sizes.\n"
    "\n";
static const char *calibrate_own =
    "  --plot FILE                  measured time and the models against size, SVG or PNG\n"
    "  -v, --verbose                notes on how the files were read (lines skipped, prefixes)\n";

/* Each FILE is one more "calibration" (a positional argument, not a flag). */
static bool is_key_option(dpas_key k)
{
    return dpas_analysis_takes(DPAS_ANALYSIS_CALIBRATE, k) && dpas_key_flag(k) &&
           k != DPAS_KEY_CALIBRATION;
}

static char *help_text(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fputs(calibrate_about, f);
    fputs("options (keys of a calibrate request):\n", f);
    for (int k = 0; k < DPAS_KEY_COUNT; k++)
        if (is_key_option((dpas_key)k))
            cli_key_help(f, (dpas_key)k);
    fputs(calibrate_own, f);
    fputs("  -o, --output FORMAT          ",
          f); /* the library's format table, the first the default */
    for (int i = 0; dpas_format_name((dpas_format)i); i++)
        fprintf(f, "%s%s%s",
                i == 0                                   ? ""
                : dpas_format_name((dpas_format)(i + 1)) ? ", "
                                                         : " or ",
                dpas_format_name((dpas_format)i), i == 0 ? " (default)" : "");
    fputs("\n  -h, --help                   this help\n", f);
    return fclose(f) ? (free(text), NULL) : text;
}

/* The long options: the CLI's own, then every key a calibrate takes by its flag (O_KEY + key). */
static struct option *options_of(void)
{
    static const struct option own[] = {{"output", required_argument, 0, 'o'},
                                        {"help", no_argument, 0, 'h'},
                                        {"plot", required_argument, 0, O_PLOT},
                                        {"verbose", no_argument, 0, 'v'}};
    size_t nown = sizeof own / sizeof own[0];
    struct option *o = calloc(nown + DPAS_KEY_COUNT + 1, sizeof *o), *p = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < nown; i++)
        *p++ = own[i];
    for (int k = 0; k < DPAS_KEY_COUNT; k++)
        if (is_key_option((dpas_key)k))
            *p++ = (struct option){dpas_key_flag((dpas_key)k) + 2,
                                   dpas_key_metavar((dpas_key)k) ? required_argument : no_argument,
                                   0, O_KEY + k};
    return o;
}

/* "choose with --test K[,K...]": how to give a key the library found missing or ambiguous. */
static char *hint_of(const dpas_error *err)
{
    static const char *const verbs[][2] = {
        {"tests", "choose with"}, {"collective", "choose with"}, {"ranks", "give"}};
    if (strstr(err->message, " must ")) /* not to a value given and refused */
        return NULL;
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        if (strcmp(err->field, verbs[i][0]))
            continue;
        int k = dpas_key_from_name(!strcmp(verbs[i][0], "tests") ? "test" : verbs[i][0]);
        const char *flag = k >= 0 ? dpas_key_flag((dpas_key)k) : NULL;
        const char *mv = k >= 0 ? dpas_key_metavar((dpas_key)k) : NULL;
        char *h = NULL;
        size_t n = 0;
        FILE *f = flag ? open_memstream(&h, &n) : NULL;
        if (!f)
            return NULL;
        fprintf(f, "%s %s%s%s", verbs[i][1], flag, mv ? " " : "", mv ? mv : "");
        return fclose(f) ? (free(h), NULL) : h;
    }
    return NULL;
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
    struct option *opts = options_of();
    char *help = opts ? help_text() : NULL;
    if (!help) {
        free(opts);
        return cli_usage(c, "calibrate", "out of memory");
    }
    const char *plot = NULL;
    int opt, verbose = 0, rc = 0;
    dpas_error err = {0};
    dpas_request *rq = NULL;
    if (dpas_request_new(DPAS_ANALYSIS_CALIBRATE, &rq, &err)) {
        free(opts);
        free(help);
        return cli_fail(c, &err);
    }
    cli_begin(c, opts);
    int common; /* cli_common_option's answer */
    while (!rc && (opt = getopt_long(argc, argv, "o:hv", opts, NULL)) != -1) {
        if ((common = cli_common_option(c, "calibrate", opt, help)) != CLI_OTHER) {
            if (common != CLI_NEXT) {
                dpas_request_free(rq);
                c->opts = NULL;
                free(opts);
                free(help);
                return common;
            }
            continue;
        }
        if (opt >= O_KEY && opt < O_KEY + DPAS_KEY_COUNT) {
            if (dpas_request_set(rq, dpas_key_name((dpas_key)(opt - O_KEY)), optarg, &err))
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
    c->opts = NULL;
    free(opts);
    free(help);
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
        !(notes = dpas_netmodel_notes(
              m, pred, npred, verbose,
              &err))) { /* the library names the tests; the CLI says how to choose them (the key's flag) */
        char *hint = hint_of(&err);
        rc = cli_fail_hint(c, &err, hint);
        free(hint);
    }
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
