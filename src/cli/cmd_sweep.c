/* SPDX-License-Identifier: Apache-2.0 */
/* dpas sweep: vary one or two inputs over lists or ranges (the library's dpas_sweep) and stream
 * the chosen metrics through the table writer in constant memory; optionally plot one metric
 * (SVG, PNG, or a Unicode chart on a terminal). A plot is drawn before the table is written, so
 * a plot that fails leaves stdout empty. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Points a plot may hold (it keeps them all in memory). */
#define PLOT_MAX_POINTS 2000000u
/* Series a plot may draw (one per value of the second axis). */
#define PLOT_MAX_SERIES 64u

typedef struct sweep_args {
    const char *plot;
    int chart; /* 1 --chart, 0 --no-chart, -1 neither */
} sweep_args;

static int take(cli *c, void *ctx, int opt, const char *arg)
{
    sweep_args *x = ctx;
    switch (opt) {
    case O_PLOT: x->plot = arg; return 0;
    case O_CHART:
    case O_NOCHART:
        if (x->chart >= 0)
            return cli_usage(c, "sweep", "give --chart or --no-chart, not both");
        x->chart = opt == O_CHART;
        return 0;
    default: return CLI_OTHER;
    }
}

/* A plot (a file or a chart) is a plot request: its y and title are keys of the library's. */
static dpas_analysis choose(void *ctx)
{
    const sweep_args *x = ctx;
    return x->plot || x->chart > 0 ? DPAS_ANALYSIS_PLOT : DPAS_ANALYSIS_SWEEP;
}

static const struct option own[] = {{"plot", required_argument, 0, O_PLOT},
                                    {"chart", no_argument, 0, O_CHART},
                                    {"no-chart", no_argument, 0, O_NOCHART},
                                    {0, 0, 0, 0}};

static const char *own_help =
    "      --plot FILE       draw y against the first varied input: .svg (built in) or .png\n"
    "      --chart / --no-chart  a Unicode chart after a text table (default: when stdout is a\n"
    "                        terminal)\n";

static const char *about =
    "Varies one or two inputs and prints the chosen metrics for every point, streamed. Any of\n"
    "dp_degree, parameters, workload, fleet, gradient_bytes_per_param,\n"
    "checkpoint_bytes_per_param, rule and schedule may take a list (a,b,c) or, for dp_degree\n"
    "and parameters, a range: A..B doubling (2..4096), A..B+S step S (8..64+8), A..B*F factor\n"
    "F. The metrics (attr) are the seed's attributes (gradient_bytes, allreduce_factor, ...)\n"
    "and bytes_per_worker, bytes_received, scalar_bytes, ratio_to_allreduce, time_s (the\n"
    "point's one time, as cost's), time_flat_s, time_hierarchical_s (they need a schedule), max_f "
    "(needs a rule). Points whose inputs break\n"
    "a rule (dp_degree above the accelerators, a schedule that cannot realise the rule) are left\n"
    "out and counted on stderr. A positional NAME is a named scenario, FILE a YAML or JSON file.";

typedef struct plot_data {
    double *x, *y;
    dpas_series *ser;
    char **names;
    size_t n0, n1;
    dpas_plot_spec spec;
    char title[160], xlabel[64], ylabel[64];
} plot_data;

static void plot_free(plot_data *p)
{
    for (size_t k = 0; p->names && k < p->n1; k++)
        free(p->names[k]);
    free(p->names);
    free(p->x), free(p->y), free(p->ser);
}

/* Pass one: every point's plotted metric, and the plot's axes. */
static int collect(cli *c, const char *title, const dpas_sweep *sw, int ym, plot_data *p)
{
    p->n0 = sw->axes[0].n;
    p->n1 = sw->naxes > 1 ? sw->axes[1].n : 1;
    if ((uint64_t)p->n0 * p->n1 > PLOT_MAX_POINTS)
        return cli_usage(c, "sweep", "%llu points are too many to plot (at most 2,000,000)",
                         (unsigned long long)p->n0 * p->n1);
    if (p->n1 > PLOT_MAX_SERIES)
        return cli_usage(c, "sweep", "%zu series are too many to plot (at most 64 values of %s)",
                         p->n1, dpas_sweep_input_name(sw->axes[1].input));
    p->x = malloc(p->n0 * p->n1 * sizeof *p->x);
    p->y = malloc(p->n0 * p->n1 * sizeof *p->y);
    p->ser = calloc(p->n1, sizeof *p->ser);
    p->names = calloc(p->n1, sizeof *p->names);
    dpas_cell *cells = calloc((size_t)(sw->naxes + sw->nmetrics), sizeof *cells);
    bool ok = p->x && p->y && p->ser && p->names && cells;
    for (size_t i1 = 0; ok && i1 < p->n1; i1++) {
        for (size_t i0 = 0; i0 < p->n0; i0++) {
            size_t k = i1 * p->n0 + i0;
            p->x[k] = dpas_sweep_axis_x(&sw->axes[0], i0);
            if (dpas_sweep_point(sw, i0, i1, cells, ym, &p->y[k], NULL))
                p->y[k] = NAN;
        }
        if (sw->naxes > 1) {
            const dpas_sweep_axis *a1 = &sw->axes[1];
            char num[32];
            if (a1->label)
                p->names[i1] = strdup(a1->label[i1]);
            else if (a1->input == DPAS_SWEEP_DP_DEGREE)
                snprintf(num, sizeof num, "%lld", (long long)dpas_sweep_axis_i(a1, i1)),
                    p->names[i1] = strdup(num);
            else
                snprintf(num, sizeof num, "%llu", (unsigned long long)dpas_sweep_axis_u(a1, i1)),
                    p->names[i1] = strdup(num);
            ok = p->names[i1] != NULL;
        }
        p->ser[i1] = (dpas_series){p->names[i1], p->x + i1 * p->n0, p->y + i1 * p->n0, p->n0};
    }
    free(cells);
    if (!ok)
        return cli_usage(c, "sweep", "out of memory");
    double ylo = INFINITY, yhi = 0;
    for (size_t i = 0; i < p->n0 * p->n1; i++)
        if (isfinite(p->y[i]) && p->y[i] > 0)
            ylo = fmin(ylo, p->y[i]), yhi = fmax(yhi, p->y[i]);
    const char *xn = dpas_sweep_input_name(sw->axes[0].input), *yn = dpas_metric_name(ym);
    snprintf(p->ylabel, sizeof p->ylabel, "%s", yn);
    snprintf(p->xlabel, sizeof p->xlabel, "%s", xn);
    snprintf(p->title, sizeof p->title, "%s vs %s", yn, xn); /* the user's title is not cut */
    p->spec = (dpas_plot_spec){
        .title = title ? title : p->title,
        .xlabel = p->xlabel,
        .ylabel = p->ylabel,
        .xlog = sw->axes[0].geometric ? (sw->axes[0].input == DPAS_SWEEP_DP_DEGREE ? 2 : 10) : 0,
        .ylog = yhi > 0 && yhi / ylo > 100 ? 10 : 0,
        .xunit = DPAS_AXIS_PLAIN,
        .yunit = dpas_metric_axis_unit(ym)};
    return 0;
}

static int write_plot(cli *c, const char *path, const plot_data *p)
{
    dpas_error err = {0};
    size_t l = strlen(path);
    unsigned char *data = NULL;
    size_t len = 0;
    int rc;
    if (l > 4 && !strcmp(path + l - 4, ".png")) {
        rc = dpas_plot_png_data(&p->spec, p->ser, p->n1, &data, &len, &err);
    } else {
        data = (unsigned char *)dpas_plot_svg(&p->spec, p->ser, p->n1, &err);
        rc = data ? 0 : -1;
        len = data ? strlen((const char *)data) : 0;
    }
    /* made whole in memory first, then written through dpas_write_output: regular files only,
     * never blocking on a FIFO, nothing written when the plot failed */
    if (!rc)
        rc = dpas_write_output(path, "--plot", data, len, &err);
    dpas_free(data);
    return rc ? cli_fail(c, &err) : 0;
}

/* Pass two: the table, streamed. Nothing is written before the first point that is kept. */
typedef struct table_ctx {
    cli *c;
    const dpas_sweep *sw;
    dpas_column cols[2 + DPAS_METRIC_COUNT];
    dpas_writer *w;
    dpas_error err;
} table_ctx;

static int table_row(void *ctx, const dpas_cell *cells)
{
    table_ctx *t = ctx;
    dpas_writer_opts wo = {.format = (dpas_format)t->c->format, .stream = 1};
    int rc;
    if (!t->w && (rc = dpas_writer_new(t->cols, dpas_sweep_ncolumns(t->sw), &wo, cli_sink, t->c,
                                       &t->w, &t->err)))
        return rc;
    return dpas_writer_row(t->w, cells, &t->err);
}

static int table(cli *c, const dpas_sweep *sw, dpas_sweep_tally *tally)
{
    table_ctx t = {.c = c, .sw = sw};
    dpas_error err = {0};
    dpas_sweep_columns(sw, t.cols);
    int rc = dpas_sweep_rows(sw, table_row, &t, tally, &err);
    if (rc && !tally->shown) /* every point left out */
        return cli_fail(c, &err);
    if (!rc && !(rc = dpas_writer_end(t.w, &t.err)) && c->format == DPAS_FORMAT_JSON)
        rc = cli_sink(c, "\n", 1);
    dpas_writer_free(t.w);
    return rc ? cli_write_failed(c) : 0;
}

/* The plot's checks that are the CLI's own: a chart in text only, a file it can write. */
static int plot_checks(cli *c, const sweep_args *x)
{
    char q[96];
    if (x->chart > 0 && c->format != DPAS_FORMAT_TEXT)
        return cli_usage(c, "sweep", "--chart draws after a text table; it cannot go into -o %s",
                         c->format == DPAS_FORMAT_JSON  ? "json"
                         : c->format == DPAS_FORMAT_CSV ? "csv"
                                                        : "markdown");
    if (!x->plot)
        return 0;
    size_t l = strlen(x->plot);
    bool svg = l > 4 && !strcmp(x->plot + l - 4, ".svg"),
         png = l > 4 && !strcmp(x->plot + l - 4, ".png");
    if (!svg && !png)
        return cli_usage(c, "sweep", "--plot must name an .svg or .png file, got %s",
                         dpas_quote(x->plot, q, sizeof q));
    if (png && !dpas_have_cairo())
        return cli_usage(c, "sweep",
                         "this dpas was built without cairo: --plot needs an .svg file");
    return 0;
}

/* By default a chart on a terminal, when the chart can be drawn at all. */
static bool default_chart(cli *c, const dpas_sweep *sw)
{
    dpas_sweep_input x0 = sw->axes[0].input;
    uint64_t pts = (uint64_t)sw->axes[0].n * (sw->naxes > 1 ? sw->axes[1].n : 1);
    return c->format == DPAS_FORMAT_TEXT && isatty(fileno(c->out)) &&
           (x0 == DPAS_SWEEP_DP_DEGREE || x0 == DPAS_SWEEP_PARAMETERS) && pts <= PLOT_MAX_POINTS &&
           (sw->naxes < 2 || sw->axes[1].n <= PLOT_MAX_SERIES);
}

static int run(cli *c, sweep_args *x, const dpas_request *rq, plot_data *p)
{
    const dpas_sweep *sw = dpas_request_sweep(rq);
    const dpas_request_opts *o = dpas_request_opts_of(rq);
    dpas_error err = {0};
    int rc, ym = dpas_request_analysis(rq) == DPAS_ANALYSIS_PLOT ? (int)o->y : sw->metrics[0];
    if (x->chart < 0)
        x->chart = default_chart(c, sw);
    if ((x->plot || x->chart) && (rc = collect(c, o->title, sw, ym, p)))
        return rc;
    if (x->plot && (rc = write_plot(c, x->plot, p)))
        return rc;
    dpas_sweep_tally tally;
    if ((rc = table(c, sw, &tally)))
        return rc;
    if (x->chart) {
        char *txt = dpas_plot_text(&p->spec, p->ser, p->n1, 64, 16, &err);
        if (txt && (cli_sink(c, "\n", 1) || cli_sink(c, txt, strlen(txt))))
            rc = cli_write_failed(c);
        dpas_free(txt);
    }
    if (tally.skipped)
        fprintf(c->err, "dpas: warning: %llu of %llu points left out; the first: %s\n",
                (unsigned long long)tally.skipped,
                (unsigned long long)(tally.skipped + tally.shown), tally.first);
    if (sw->net) {
        /* the files in the model's order (by name), so the note does not depend on theirs */
        fputs("dpas: note: times from the calibration of ", c->err);
        for (size_t i = 0; i < sw->net->nlogs; i++)
            fprintf(c->err, "%s%s", i ? ", " : "", sw->net->logs[i]->origin);
        fprintf(c->err, " (network model %s%s)\n", dpas_netmodel_kind_name(sw->net_kind),
                sw->net_kind == DPAS_NETMODEL_DEFAULT
                    ? ": the measured curve at a measured scale and size, the nccl model elsewhere"
                    : "");
    }
    return rc;
}

int cmd_sweep(cli *c, int argc, char **argv)
{
    sweep_args x = {.chart = -1};
    cli_cmd cmd = {
        .name = "sweep",
        .analysis = DPAS_ANALYSIS_PLOT, /* its help lists the plot's keys too */
        .positional = POS_EITHER,
        .usage = "dpas sweep [NAME|FILE] [INPUTS] [--attr M,...] [--plot FILE.svg|FILE.png] "
                 "[-o FORMAT]",
        .about = about,
        .own = own,
        .own_help = own_help,
        .take = take,
        .choose = choose,
        .ctx = &x,
    };
    dpas_request *rq;
    dpas_registry *reg;
    plot_data p = {0};
    int rc = cli_request(c, &cmd, argc, argv, &rq, &reg);
    if (!rc && !(rc = plot_checks(c, &x)))
        rc = run(c, &x, rq, &p);
    plot_free(&p);
    dpas_request_free(rq);
    dpas_registry_free(reg);
    return rc < 0 ? EXIT_OK : rc;
}
