/* SPDX-License-Identifier: Apache-2.0 */
/* dpas sweep: vary one to three inputs over lists or ranges (the library's dpas_sweep) and stream
 * the chosen metrics through the table writer in constant memory; optionally plot one metric
 * (SVG, PNG, or a Unicode chart on a terminal). A plot is drawn before the table is written, so
 * a plot that fails leaves stdout empty. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sweep_args {
    const char *plot, *data;
    int chart; /* 1 --chart, 0 --no-chart, -1 neither */
    int width, height;
    double font_size;
    const char *font, *xlabel, *ylabel;
} sweep_args;

/* A whole number of pixels (points in a PDF) or a font size, within bounds. */
static int number(cli *c, const char *opt, const char *arg, double lo, double hi, double *out)
{
    char *end, q[96];
    errno = 0;
    double v = strtod(arg, &end);
    if (end == arg || *end || errno || !(v >= lo && v <= hi))
        return cli_usage(c, "sweep", "%s must be a number from %g to %g, got %s", opt, lo, hi,
                         dpas_quote(arg, q, sizeof q));
    *out = v;
    return 0;
}

static int take(cli *c, void *ctx, int opt, const char *arg)
{
    sweep_args *x = ctx;
    double v;
    int rc;
    switch (opt) {
    case O_PLOT: x->plot = arg; return 0;
    case O_DATA: x->data = arg; return 0;
    case O_FONT: x->font = arg; return 0;
    case O_XLABEL: x->xlabel = arg; return 0;
    case O_YLABEL: x->ylabel = arg; return 0;
    case O_WIDTH:
    case O_HEIGHT:
        if ((rc = number(c, opt == O_WIDTH ? "--width" : "--height", arg, 100, 20000, &v)))
            return rc;
        if (v != (int)v)
            return cli_usage(c, "sweep", "%s must be a whole number, got %s",
                             opt == O_WIDTH ? "--width" : "--height", arg);
        *(opt == O_WIDTH ? &x->width : &x->height) = (int)v;
        return 0;
    case O_FONT_SIZE: return number(c, "--font-size", arg, 4, 72, &x->font_size);
    case O_CHART:
    case O_NOCHART:
        if (x->chart >= 0)
            return cli_usage(c, "sweep", "give --chart or --no-chart, not both");
        x->chart = opt == O_CHART;
        return 0;
    default: return CLI_OTHER;
    }
}

/* A plot (a file, its data or a chart) is a plot request: its y and title are keys of the
 * library's. */
static dpas_analysis choose(void *ctx)
{
    const sweep_args *x = ctx;
    return x->plot || x->data || x->chart > 0 ? DPAS_ANALYSIS_PLOT : DPAS_ANALYSIS_SWEEP;
}

static const struct option own[] = {{"plot", required_argument, 0, O_PLOT},
                                    {"data", required_argument, 0, O_DATA},
                                    {"width", required_argument, 0, O_WIDTH},
                                    {"height", required_argument, 0, O_HEIGHT},
                                    {"font", required_argument, 0, O_FONT},
                                    {"font-size", required_argument, 0, O_FONT_SIZE},
                                    {"xlabel", required_argument, 0, O_XLABEL},
                                    {"ylabel", required_argument, 0, O_YLABEL},
                                    {"chart", no_argument, 0, O_CHART},
                                    {"no-chart", no_argument, 0, O_NOCHART},
                                    {0, 0, 0, 0}};

static const char *own_help =
    "      --plot FILE       draw y against the first varied input: .svg (built in), .png or\n"
    "                        .pdf (cairo); a second varied input makes the series, a third the\n"
    "                        panels (stacked; a page each in a PDF)\n"
    "      --data FILE       the plotted numbers as CSV (panel, series, x, y), beside the plot\n"
    "      --width PX, --height PX  one panel's size (PDF: points; default 800 x 500)\n"
    "      --font FAMILY, --font-size PT  the text's font (default DejaVu Sans, 12)\n"
    "      --xlabel TEXT, --ylabel TEXT  the axes' labels (default: the input's and metric's "
    "name)\n"
    "      --chart / --no-chart  a Unicode chart after a text table (default: when stdout is a\n"
    "                        terminal)\n";

static const char *about =
    "Varies one to three inputs and prints the chosen metrics for every point, streamed. Any of\n"
    "dp_degree, parameters, workload, fleet, gradient_bytes_per_param,\n"
    "checkpoint_bytes_per_param, rule, schedule and f may take a list (a,b,c) or, for dp_degree,\n"
    "parameters and f, a range: A..B doubling (2..4096), A..B+S step S (8..64+8, 0..8+1), A..B*F\n"
    "factor F. With f and no dp_degree, each point's N is min_n(f) of its rule (a dp_degree\n"
    "column shows it). The metrics (attr) are the seed's attributes (gradient_bytes,\n"
    "allreduce_factor, ...) and bytes_per_worker, bytes_received, scalar_bytes,\n"
    "ratio_to_allreduce, time_s (the point's one time, as cost's), time_flat_s,\n"
    "time_hierarchical_s (they need a schedule), max_f (needs a rule), dp_degree. Points whose\n"
    "inputs break a rule (dp_degree above the accelerators, a schedule that cannot realise the\n"
    "rule, a rule that does not tolerate f at the N given) are left out and counted on stderr. A\n"
    "positional NAME is a named scenario, FILE a YAML or JSON file.";

typedef struct plot_data {
    dpas_sweep_figure *fig;
    char **titles; /* a panel's title each (with a third varied input) */
    dpas_plot_spec spec;
    char title[160];
} plot_data;

static void plot_free(plot_data *p)
{
    for (size_t k = 0; p->titles && p->fig && k < p->fig->nfacets; k++)
        free(p->titles[k]);
    free(p->titles);
    dpas_sweep_figure_free(p->fig);
}

/* Pass one: every point's plotted metric (the library's figure), and the plot's look. */
static int collect(cli *c, const sweep_args *x, const char *title, const dpas_sweep *sw, int ym,
                   plot_data *p)
{
    dpas_error err = {0};
    if (dpas_sweep_figure_new(sw, ym, &p->fig, &err))
        return cli_fail(c, &err);
    const dpas_sweep_figure *g = p->fig;
    snprintf(p->title, sizeof p->title, "%s vs %s", g->yname, g->xname);
    p->spec = (dpas_plot_spec){.title = title ? title : p->title, /* the user's title is not cut */
                               .xlabel = x->xlabel ? x->xlabel : g->xname,
                               .ylabel = x->ylabel ? x->ylabel : g->yname,
                               .xlog = g->xlog,
                               .ylog = g->ylog,
                               .xunit = g->xunit,
                               .yunit = g->yunit,
                               .width = x->width,
                               .height = x->height,
                               .font = x->font,
                               .font_size = x->font_size,
                               .legend_title = g->series_input};
    if (g->facet_input) {
        if (!(p->titles = calloc(g->nfacets, sizeof *p->titles)))
            return cli_usage(c, "sweep", "out of memory");
        for (size_t k = 0; k < g->nfacets; k++) {
            size_t n =
                strlen(p->spec.title) + strlen(g->facet_input) + strlen(g->facet_names[k]) + 8;
            if (!(p->titles[k] = malloc(n)))
                return cli_usage(c, "sweep", "out of memory");
            snprintf(p->titles[k], n, "%s (%s %s)", p->spec.title, g->facet_input,
                     g->facet_names[k]);
        }
    }
    return 0;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t l = strlen(s), t = strlen(tail);
    return l > t && !strcmp(s + l - t, tail);
}

/* The plot made whole in memory (nothing is written when it fails); the caller frees *data with
 * dpas_free. */
static int make_plot(const char *path, const plot_data *p, unsigned char **data, size_t *len,
                     dpas_error *err)
{
    dpas_plot_format fmt = ends_with(path, ".png")   ? DPAS_PLOT_PNG
                           : ends_with(path, ".pdf") ? DPAS_PLOT_PDF
                                                     : DPAS_PLOT_SVG;
    const dpas_sweep_figure *g = p->fig;
    return dpas_plot_figure(&p->spec, fmt, g->series, g->nseries, g->nfacets,
                            (const char *const *)p->titles, data, len, err);
}

/* A growing buffer, the CSV's sink. */
typedef struct mem_buf {
    char *data;
    size_t len, cap;
    int oom;
} mem_buf;

static int mem_sink(void *ctx, const char *data, size_t len)
{
    mem_buf *b = ctx;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return b->oom = 1, DPAS_ENOMEM;
        b->data = d, b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

/* The plotted numbers as CSV through the table writer, in memory: a row per point drawn or left
 * out (y empty), the panel's and the series' values when they vary. */
static int make_data(const plot_data *p, mem_buf *b, dpas_error *err)
{
    const dpas_sweep_figure *g = p->fig;
    dpas_column cols[4];
    size_t nc = 0;
    if (g->facet_input)
        cols[nc++] = (dpas_column){g->facet_input, DPAS_COL_TEXT, DPAS_COL_LEFT};
    if (g->series_input)
        cols[nc++] = (dpas_column){g->series_input, DPAS_COL_TEXT, DPAS_COL_LEFT};
    cols[nc++] = (dpas_column){g->xname, DPAS_COL_REAL, DPAS_COL_G10};
    cols[nc++] = (dpas_column){g->yname, DPAS_COL_REAL, DPAS_COL_G10};
    dpas_writer_opts wo = {.format = DPAS_FORMAT_CSV};
    dpas_writer *w = NULL;
    int rc = dpas_writer_new(cols, nc, &wo, mem_sink, b, &w, err);
    for (size_t f = 0; !rc && f < g->nfacets; f++)
        for (size_t k = 0; !rc && k < g->nseries; k++)
            for (size_t i = 0; !rc && i < g->npoints; i++) {
                const dpas_series *s = &g->series[f * g->nseries + k];
                dpas_cell row[4];
                size_t j = 0;
                if (g->facet_input)
                    row[j++] = dpas_cell_text(g->facet_names[f]);
                if (g->series_input)
                    row[j++] = dpas_cell_text(g->series_names[k]);
                row[j++] = dpas_cell_real(s->x[i]);
                row[j++] = isfinite(s->y[i]) ? dpas_cell_real(s->y[i]) : dpas_cell_null();
                rc = dpas_writer_row(w, row, err);
            }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    if (b->oom && !rc)
        rc = DPAS_ENOMEM;
    if (b->oom)
        snprintf(err->message, sizeof err->message, "out of memory");
    return rc;
}

/* The plot and its data, made whole in memory, then written together through
 * dpas_write_outputs: regular files only, never blocking on a FIFO; both replaced or neither (a
 * --data that cannot be written leaves the old plot as it was, and the other way round). */
static int write_files(cli *c, const sweep_args *x, const plot_data *p)
{
    dpas_error err = {0};
    unsigned char *plot = NULL;
    size_t plot_len = 0;
    mem_buf b = {0};
    dpas_output outs[2];
    size_t n = 0;
    int rc = 0;
    if (x->plot && !(rc = make_plot(x->plot, p, &plot, &plot_len, &err)))
        outs[n++] = (dpas_output){x->plot, "--plot", plot, plot_len};
    if (!rc && x->data && !(rc = make_data(p, &b, &err)))
        outs[n++] = (dpas_output){x->data, "--data", b.data ? b.data : "", b.len};
    if (!rc && n)
        rc = dpas_write_outputs(outs, n, &err);
    dpas_free(plot);
    free(b.data);
    return rc ? cli_fail(c, &err) : 0;
}

/* Pass two: the table, streamed. Nothing is written before the first point that is kept. */
typedef struct table_ctx {
    cli *c;
    const dpas_sweep *sw;
    dpas_column cols[DPAS_SWEEP_MAX_AXES + DPAS_METRIC_COUNT];
    dpas_writer *w;
    dpas_error err;
} table_ctx;

static int table_row(void *ctx, const dpas_cell *cells)
{
    table_ctx *t = ctx;
    dpas_writer_opts wo = {.format = (dpas_format)t->c->format, .stream = 1, .document = 1};
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

/* The plot's checks that are the CLI's own: a chart in text only, files it can write. */
static int plot_checks(cli *c, const sweep_args *x)
{
    char q[96];
    if (x->chart > 0 && c->format != DPAS_FORMAT_TEXT)
        return cli_usage(c, "sweep", "--chart draws after a text table; it cannot go into -o %s",
                         dpas_format_name((dpas_format)c->format));
    if (!x->plot &&
        (x->width || x->height || x->font || x->font_size > 0 || x->xlabel || x->ylabel))
        return cli_usage(c, "sweep",
                         "--width, --height, --font, --font-size, --xlabel and --ylabel set the "
                         "look of a --plot: give --plot FILE");
    if (x->data && !ends_with(x->data, ".csv"))
        return cli_usage(c, "sweep", "--data must name a .csv file, got %s",
                         dpas_quote(x->data, q, sizeof q));
    if (x->plot && x->data && !strcmp(x->plot, x->data))
        return cli_usage(c, "sweep", "--plot and --data name the same file %s",
                         dpas_quote(x->data, q, sizeof q));
    if (!x->plot)
        return 0;
    bool svg = ends_with(x->plot, ".svg"), png = ends_with(x->plot, ".png"),
         pdf = ends_with(x->plot, ".pdf");
    if (!svg && !png && !pdf)
        return cli_usage(c, "sweep", "--plot must name an .svg, .png or .pdf file, got %s",
                         dpas_quote(x->plot, q, sizeof q));
    if ((png || pdf) && !dpas_have_cairo())
        return cli_usage(c, "sweep",
                         "this dpas was built without cairo: --plot needs an .svg file");
    return 0;
}

/* By default a chart on a terminal, when the chart can be drawn at all. */
static bool default_chart(cli *c, const dpas_sweep *sw)
{
    dpas_sweep_input x0 = sw->axes[0].input;
    uint64_t pts = (uint64_t)sw->axes[0].n * dpas_sweep_values(sw, 1);
    return c->format == DPAS_FORMAT_TEXT && isatty(fileno(c->out)) && sw->naxes < 3 &&
           (x0 == DPAS_SWEEP_DP_DEGREE || x0 == DPAS_SWEEP_PARAMETERS || x0 == DPAS_SWEEP_F) &&
           pts <= DPAS_FIGURE_MAX_POINTS && dpas_sweep_values(sw, 1) <= DPAS_FIGURE_MAX_SERIES;
}

static int run(cli *c, sweep_args *x, const dpas_request *rq, plot_data *p)
{
    const dpas_sweep *sw = dpas_request_sweep(rq);
    const dpas_request_opts *o = dpas_request_opts_of(rq);
    dpas_error err = {0};
    int rc, ym = dpas_request_analysis(rq) == DPAS_ANALYSIS_PLOT ? (int)o->y : sw->metrics[0];
    if (x->chart < 0)
        x->chart = default_chart(c, sw);
    if (x->chart > 0 && sw->naxes > 2)
        return cli_usage(c, "sweep",
                         "--chart draws one panel; with three varied inputs give --plot FILE");
    if ((x->plot || x->data || x->chart) && (rc = collect(c, x, o->title, sw, ym, p)))
        return rc;
    if ((x->plot || x->data) && (rc = write_files(c, x, p)))
        return rc;
    dpas_sweep_tally tally;
    if ((rc = table(c, sw, &tally)))
        return rc;
    if (x->chart) {
        const dpas_sweep_figure *g = p->fig;
        char *txt = dpas_plot_text(&p->spec, g->series, g->nseries, 64, 16, &err);
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
        .usage = "dpas sweep [NAME|FILE] [INPUTS] [--attr M,...] [--plot FILE.svg|.png|.pdf] "
                 "[--data FILE.csv] [-o FORMAT]",
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
