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

static const char *sweep_help =
    "usage: dpas sweep [NAME|FILE] [INPUTS] [--attr M,...] [--plot FILE.svg|FILE.png] [-o FORMAT]\n"
    "\n"
    "Varies one or two inputs and prints the chosen metrics for every point, streamed.\n"
    "Any of these inputs may take a list (a,b,c) or, for numbers, a range:\n"
    "  --dp, --params        A..B doubling (2..4096), A..B+S step S (8..64+8), A..B*F factor F\n"
    "  --model, --fleet, --grad, --ckpt, --rule, --schedule    lists: GPT3,Llama3_70B\n"
    "The other inputs are as in 'dpas eval' (a NAME or FILE and flags).\n"
    "\n"
    "  --attr M[,M...]       metrics: the seed's attributes (gradient_bytes, allreduce_factor, "
    "...)\n"
    "                        and bytes_per_worker, bytes_received, scalar_bytes,\n"
    "                        ratio_to_allreduce, time_flat_s, time_hierarchical_s (need a\n"
    "                        --schedule), max_f (needs a --rule)\n"
    "  --convention NAME     blanchard (default) or byzfl for krum and multi_krum\n"
    "  --iterations T        of geometric_median / centered_clipping (default 10)\n"
    "  --calibration FILE    times from nccl-tests output (dpas calibrate) instead of the fabric\n"
    "  --network-model M     default (empirical where measured, piecewise outside), alpha_beta,\n"
    "                        piecewise or empirical\n"
    "  --plot FILE           draw --y against the first varied input: .svg (built in) or .png\n"
    "  --y METRIC            the plotted metric (default: the first of --attr)\n"
    "  --title TEXT          the plot's title\n"
    "  --chart / --no-chart  a Unicode chart after a text table (default: when stdout is a "
    "terminal)\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "  -h, --help            this help\n"
    "\n"
    "Reals print with 10 significant digits; integers and byte counts in full. Points whose "
    "inputs\n"
    "break a rule (dp_degree above the accelerators, a schedule that cannot realise the rule) are\n"
    "left out and counted on stderr.\n";

/* Points a plot may hold (it keeps them all in memory). */
#define PLOT_MAX_POINTS 2000000u
/* Series a plot may draw (one per value of the second axis). */
#define PLOT_MAX_SERIES 64u

typedef struct sweep_args {
    scen_args a;
    const char *axis_text[DPAS_SWEEP_INPUT_COUNT];
    const char *attr, *plot, *ymetric, *title, *convention, *calibration, *network_model;
    int chart;
    int64_t iterations;
} sweep_args;

/* The sweep input a flag varies, or -1. */
static int sweep_input_of(int opt)
{
    switch (opt) {
    case O_DP: return DPAS_SWEEP_DP_DEGREE;
    case O_PARAMS: return DPAS_SWEEP_PARAMETERS;
    case O_MODEL: return DPAS_SWEEP_WORKLOAD;
    case O_FLEET: return DPAS_SWEEP_FLEET;
    case O_GRAD: return DPAS_SWEEP_GRADIENT_WIDTH;
    case O_CKPT: return DPAS_SWEEP_CHECKPOINT_WIDTH;
    case O_RULE: return DPAS_SWEEP_RULE;
    case O_SCHEDULE: return DPAS_SWEEP_SCHEDULE;
    default: return -1;
    }
}

/* The scenario input behind a sweep input, or -1 (rule, schedule). */
static int scenario_input_of(int in)
{
    static const int map[DPAS_SWEEP_INPUT_COUNT] = {DPAS_INPUT_DP_DEGREE,
                                                    DPAS_INPUT_PARAMETERS,
                                                    DPAS_INPUT_WORKLOAD,
                                                    DPAS_INPUT_FLEET,
                                                    DPAS_INPUT_GRADIENT_WIDTH,
                                                    DPAS_INPUT_CHECKPOINT_WIDTH,
                                                    -1,
                                                    -1};
    return map[in];
}

static int options(cli *c, int argc, char **argv, sweep_args *x)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         SCEN_LONG_OPTIONS,
                                         {"rule", required_argument, 0, O_RULE},
                                         {"schedule", required_argument, 0, O_SCHEDULE},
                                         {"convention", required_argument, 0, O_CONVENTION},
                                         {"iterations", required_argument, 0, O_ITERATIONS},
                                         {"attr", required_argument, 0, O_ATTR},
                                         {"plot", required_argument, 0, O_PLOT},
                                         {"y", required_argument, 0, O_Y},
                                         {"title", required_argument, 0, O_TITLE},
                                         {"chart", no_argument, 0, O_CHART},
                                         {"no-chart", no_argument, 0, O_NOCHART},
                                         {"calibration", required_argument, 0, O_CALIBRATION},
                                         {"network-model", required_argument, 0, O_NETMODEL},
                                         {0, 0, 0, 0}};
    int opt, rc = 0;
    dpas_error err = {0};
    cli_begin(c, opts);
    while (!rc && (opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int common = cli_common_option(c, "sweep", opt, sweep_help);
        if (common != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common == EXIT_OK ? -1 : common;
            continue;
        }
        int ax = sweep_input_of(opt);
        if (ax >= 0) {
            x->axis_text[ax] = optarg;
            continue;
        }
        if (scen_take(&x->a, opt, optarg))
            continue;
        switch (opt) {
        case O_ATTR: x->attr = optarg; break;
        case O_PLOT: x->plot = optarg; break;
        case O_Y: x->ymetric = optarg; break;
        case O_TITLE: x->title = optarg; break;
        case O_CHART:
        case O_NOCHART:
            if (x->chart >= 0)
                rc = cli_usage(c, "sweep", "give --chart or --no-chart, not both");
            x->chart = opt == O_CHART;
            break;
        case O_CONVENTION: x->convention = optarg; break;
        case O_CALIBRATION: x->calibration = optarg; break;
        case O_NETMODEL: x->network_model = optarg; break;
        case O_ITERATIONS:
            if (dpas_parse_int("--iterations", optarg, &x->iterations, &err))
                rc = cli_fail(c, &err);
            else if (x->iterations < 1)
                rc = cli_usage(c, "sweep", "--iterations must be >= 1, got %lld",
                               (long long)x->iterations);
            break;
        default: rc = cli_bad_option(c, "sweep", argv);
        }
    }
    if (rc)
        return rc;
    if (argc - optind > 1)
        return cli_usage(c, "sweep", "sweep takes at most one NAME or FILE, got %d", argc - optind);
    x->a.positional = argc - optind ? argv[optind] : NULL;
    if (x->axis_text[DPAS_SWEEP_WORKLOAD] && x->axis_text[DPAS_SWEEP_PARAMETERS])
        return cli_usage(c, "sweep", "give --model or --params, not both");
    return 0;
}

/* Which inputs vary (at most two), and the scenario resolved with each varied input at a value
 * valid for any point: a count at 1, a name at its first value. */
static int resolve(cli *c, sweep_args *x, dpas_sweep *sw, char **placeholders, dpas_error *err)
{
    int rc;
    for (int k = 0; k < DPAS_SWEEP_INPUT_COUNT; k++) {
        const char *v = x->axis_text[k];
        if (!v)
            continue;
        bool varies = dpas_sweep_text_varies((dpas_sweep_input)k, v);
        if (varies) {
            if (sw->naxes == 2)
                return cli_usage(c, "sweep",
                                 "a sweep varies at most two inputs; %s, %s and %s all vary",
                                 dpas_sweep_input_name(sw->axes[0].input),
                                 dpas_sweep_input_name(sw->axes[1].input),
                                 dpas_sweep_input_name((dpas_sweep_input)k));
            sw->axes[sw->naxes++].input = (dpas_sweep_input)k;
        }
        int in = scenario_input_of(k);
        if (in < 0)
            continue;
        if (varies && (k == DPAS_SWEEP_DP_DEGREE || k == DPAS_SWEEP_PARAMETERS))
            placeholders[k] = strdup("1");
        else
            placeholders[k] = strndup(v, strcspn(v, ","));
        if (!placeholders[k])
            return cli_usage(c, "sweep", "out of memory");
        x->a.given[in] = placeholders[k];
    }
    if (!sw->naxes)
        return cli_usage(c, "sweep",
                         "nothing varies: give a list (--dp 8,16,32) or a range "
                         "(--dp 2..4096) for one or two inputs");
    /* each fleet of a varied --fleet brings its nodes, node and fabric: a flag for one of them
     * would be overridden at every point, given and never used */
    for (int k = 0; k < sw->naxes; k++) {
        if (sw->axes[k].input != DPAS_SWEEP_FLEET)
            continue;
        static const dpas_input parts[] = {DPAS_INPUT_NODES, DPAS_INPUT_ACCELERATORS_PER_NODE,
                                           DPAS_INPUT_NODE, DPAS_INPUT_FABRIC};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            if (x->a.given[parts[i]])
                return cli_usage(c, "sweep",
                                 "%s cannot be given with a varied --fleet: each fleet has its "
                                 "own (give one --fleet, or drop %s)",
                                 dpas_input_flag(parts[i]), dpas_input_flag(parts[i]));
    }
    /* A fixed dp_degree is checked point by point, not against the first value of a varied
     * fleet or workload (the order of a list must not decide which points are kept). */
    const char *dp = x->axis_text[DPAS_SWEEP_DP_DEGREE];
    bool fixed_dp = dp && !dpas_sweep_text_varies(DPAS_SWEEP_DP_DEGREE, dp);
    int64_t dp_value = 0;
    if (fixed_dp) {
        if (dpas_parse_int("--dp", dp, &dp_value, err))
            return cli_fail(c, err);
        x->a.given[DPAS_INPUT_DP_DEGREE] = "1";
    }
    if ((rc = scen_load(&x->a, SCEN_POS_EITHER, err)))
        return cli_fail(c, err);
    sw->base = x->a.s;
    if (fixed_dp)
        sw->base.dp_degree = dp_value;
    return 0;
}

/* The axes' values, the fixed rule and schedule. */
static int axes(cli *c, sweep_args *x, dpas_sweep *sw, dpas_error *err)
{
    for (int i = 0; i < sw->naxes; i++) {
        dpas_sweep_input in = sw->axes[i].input;
        if (dpas_sweep_axis_parse(in, x->axis_text[in], dpas_sweep_input_flag(in), x->a.reg,
                                  x->convention, &sw->axes[i], err))
            return cli_fail(c, err);
    }
    const char *rule = x->axis_text[DPAS_SWEEP_RULE], *sched = x->axis_text[DPAS_SWEEP_SCHEDULE];
    if (rule && !dpas_sweep_text_varies(DPAS_SWEEP_RULE, rule) &&
        dpas_rule_select(rule, x->convention, &sw->rule, err))
        return cli_fail(c, err);
    if (x->convention && !rule) { /* a convention with no rule to apply to is still checked */
        const dpas_rule *any;
        if (dpas_rule_select("krum", x->convention, &any, err))
            return cli_fail(c, err);
    }
    if (sched && !dpas_sweep_text_varies(DPAS_SWEEP_SCHEDULE, sched)) {
        sw->schedule = dpas_schedule_from_name(sched);
        if (sw->schedule < 0) {
            char q[96];
            return cli_usage(c, "sweep",
                             "--schedule: unknown schedule %s; expected allreduce, "
                             "allgather, ps, ps_separate, sharded, sharded_distance "
                             "or innetwork",
                             dpas_quote(sched, q, sizeof q));
        }
    }
    return 0;
}

static int metrics(cli *c, sweep_args *x, dpas_sweep *sw)
{
    if (!x->attr) {
        dpas_sweep_default_metrics(sw, x->axis_text[DPAS_SWEEP_SCHEDULE] != NULL,
                                   x->axis_text[DPAS_SWEEP_RULE] != NULL);
        return 0;
    }
    char **items;
    size_t n;
    int rc = cli_list(c, "sweep", "--attr", x->attr, &items, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        char q[96];
        int m = dpas_metric_from_name(items[i]);
        bool twice = false;
        for (int k = 0; k < sw->nmetrics; k++)
            twice |= sw->metrics[k] == m;
        if (m < 0)
            rc = cli_usage(c, "sweep", "--attr: unknown metric %s",
                           dpas_quote(items[i], q, sizeof q));
        else if (twice)
            rc = cli_usage(c, "sweep", "--attr: %s is given twice", items[i]);
        else
            sw->metrics[sw->nmetrics++] = m;
    }
    cli_list_free(items);
    return rc;
}

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
static int collect(cli *c, const sweep_args *x, const dpas_sweep *sw, int ym, plot_data *p)
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
        .title = x->title ? x->title : p->title,
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
static int table(cli *c, const dpas_sweep *sw, size_t *shown, size_t *skipped, char *first_skip,
                 size_t cap)
{
    size_t n0 = sw->axes[0].n, n1 = sw->naxes > 1 ? sw->axes[1].n : 1,
           nc = (size_t)(sw->naxes + sw->nmetrics);
    dpas_column cols[2 + DPAS_METRIC_COUNT];
    dpas_cell cells[2 + DPAS_METRIC_COUNT];
    dpas_sweep_columns(sw, cols);
    dpas_writer_opts wo = {.format = (dpas_format)c->format, .stream = 1};
    dpas_writer *w = NULL;
    dpas_error err = {0}, pe;
    int rc = 0;
    for (size_t i0 = 0; !rc && i0 < n0; i0++)
        for (size_t i1 = 0; !rc && i1 < n1; i1++) {
            if (dpas_sweep_point(sw, i0, i1, cells, -1, NULL, &pe)) {
                if (!(*skipped)++)
                    snprintf(first_skip, cap, "%s", pe.message);
                continue;
            }
            if (!w && dpas_writer_new(cols, nc, &wo, cli_sink, c, &w, &err))
                return cli_fail(c, &err);
            rc = dpas_writer_row(w, cells, &err);
            ++*shown;
        }
    if (!w) { /* every point left out */
        err.code = DPAS_EINVAL;
        snprintf(err.message, sizeof err.message,
                 "every point of the sweep was left out; the first: %s", first_skip);
        return cli_fail(c, &err);
    }
    if (!rc && !(rc = dpas_writer_end(w, &err)) && c->format == DPAS_FORMAT_JSON)
        rc = cli_sink(c, "\n", 1);
    dpas_writer_free(w);
    return rc ? cli_write_failed(c) : 0;
}

int cmd_sweep(cli *c, int argc, char **argv)
{
    sweep_args x = {.chart = -1, .iterations = 10};
    dpas_sweep sw = {.schedule = -1};
    char *placeholders[DPAS_SWEEP_INPUT_COUNT] = {0};
    plot_data p = {0};
    dpas_error err = {0};
    dpas_links cal_links;
    dpas_netmodel *net = NULL;
    int rc = options(c, argc, argv, &x);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    sw.iterations = x.iterations;
    if ((rc = cli_network(c, "sweep", x.calibration, x.network_model, &cal_links, &net,
                          &sw.net_kind)))
        goto done;
    if (x.calibration)
        sw.links = &cal_links, sw.net = net;
    if ((rc = resolve(c, &x, &sw, placeholders, &err)) || (rc = axes(c, &x, &sw, &err)) ||
        (rc = metrics(c, &x, &sw)))
        goto done;
    for (int i = 0; i < sw.nmetrics && !rc; i++) { /* the library's rule, with the flag to give */
        int m = sw.metrics[i];
        if (dpas_metric_needs_schedule(m) && !x.axis_text[DPAS_SWEEP_SCHEDULE])
            rc = cli_usage(c, "sweep", "%s needs a --schedule", dpas_metric_name(m));
        else if (dpas_metric_needs_rule(m) && !x.axis_text[DPAS_SWEEP_RULE])
            rc = cli_usage(c, "sweep", "%s needs a --rule", dpas_metric_name(m));
    }
    if (rc)
        goto done;
    if (dpas_sweep_check(&sw, &err)) {
        rc = cli_fail(c, &err);
        goto done;
    }
    int ym = sw.metrics[0];
    if (x.ymetric) {
        ym = dpas_metric_from_name(x.ymetric);
        bool listed = false;
        for (int i = 0; i < sw.nmetrics; i++)
            listed |= sw.metrics[i] == ym;
        if (ym < 0 || !listed) {
            char q[96];
            rc = cli_usage(c, "sweep", "--y must be one of the metrics shown (--attr), got %s",
                           dpas_quote(x.ymetric, q, sizeof q));
            goto done;
        }
    }
    dpas_sweep_input x0 = sw.axes[0].input;
    bool numeric_x = x0 == DPAS_SWEEP_DP_DEGREE || x0 == DPAS_SWEEP_PARAMETERS;
    if (x.chart > 0 && c->format != DPAS_FORMAT_TEXT) {
        rc = cli_usage(c, "sweep", "--chart draws after a text table; it cannot go into -o %s",
                       c->format == DPAS_FORMAT_JSON  ? "json"
                       : c->format == DPAS_FORMAT_CSV ? "csv"
                                                      : "markdown");
        goto done;
    }
    if (x.chart < 0) { /* by default on a terminal, when the chart can be drawn at all */
        uint64_t pts = (uint64_t)sw.axes[0].n * (sw.naxes > 1 ? sw.axes[1].n : 1);
        x.chart = c->format == DPAS_FORMAT_TEXT && isatty(fileno(c->out)) && numeric_x &&
                  pts <= PLOT_MAX_POINTS && (sw.naxes < 2 || sw.axes[1].n <= PLOT_MAX_SERIES);
    }
    if ((x.title || x.ymetric) && !x.plot && !x.chart) {
        rc = cli_usage(c, "sweep", "%s is for a plot: give --plot FILE or --chart",
                       x.title ? "--title" : "--y");
        goto done;
    }
    if ((x.plot || x.chart) && !numeric_x) {
        rc = cli_usage(c, "sweep",
                       "a plot needs a numeric first varied input (--dp or --params), "
                       "got %s",
                       dpas_sweep_input_name(x0));
        goto done;
    }
    if (x.plot) {
        size_t l = strlen(x.plot);
        bool svg = l > 4 && !strcmp(x.plot + l - 4, ".svg"),
             png = l > 4 && !strcmp(x.plot + l - 4, ".png");
        char q[96];
        if (!svg && !png)
            rc = cli_usage(c, "sweep", "--plot must name an .svg or .png file, got %s",
                           dpas_quote(x.plot, q, sizeof q));
        else if (png && !dpas_have_cairo())
            rc = cli_usage(c, "sweep",
                           "this dpas was built without cairo: --plot needs an .svg file");
        if (rc)
            goto done;
    }
    if ((x.plot || x.chart) && (rc = collect(c, &x, &sw, ym, &p)))
        goto done;
    if (x.plot && (rc = write_plot(c, x.plot, &p)))
        goto done;
    size_t shown = 0, skipped = 0;
    char first_skip[600] = "";
    if ((rc = table(c, &sw, &shown, &skipped, first_skip, sizeof first_skip)))
        goto done;
    if (x.chart) {
        char *txt = dpas_plot_text(&p.spec, p.ser, p.n1, 64, 16, &err);
        if (txt && (cli_sink(c, "\n", 1) || cli_sink(c, txt, strlen(txt))))
            rc = cli_write_failed(c);
        dpas_free(txt);
    }
    if (skipped)
        fprintf(c->err, "dpas: warning: %zu of %zu points left out; the first: %s\n", skipped,
                skipped + shown, first_skip);
    if (net)
        fprintf(
            c->err, "dpas: note: flat times from the measured curves of %s (network model %s%s)\n",
            x.calibration, dpas_netmodel_kind_name(sw.net_kind),
            sw.net_kind == DPAS_NETMODEL_DEFAULT ? ": empirical where measured, piecewise outside"
                                                 : "");
done:
    dpas_netmodel_free(net);
    plot_free(&p);
    dpas_sweep_axis_free(&sw.axes[0]);
    dpas_sweep_axis_free(&sw.axes[1]);
    for (int k = 0; k < DPAS_SWEEP_INPUT_COUNT; k++)
        free(placeholders[k]);
    scen_free(&x.a);
    return rc;
}
