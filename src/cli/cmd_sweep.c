/* dpas sweep: vary one or two inputs over lists or ranges and stream any attributes and costs as
 * a table, CSV, JSON or Markdown, in constant memory; optionally plot one metric (SVG, PNG or a
 * Unicode chart on a terminal). */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
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
    "  --attr M[,M...]       metrics: the seed's attributes (gradient_bytes, allreduce_factor, ...)\n"
    "                        and bytes_per_worker, bytes_received, scalar_bytes,\n"
    "                        ratio_to_allreduce, time_flat_s, time_hierarchical_s (need a\n"
    "                        --schedule), max_f (needs a --rule)\n"
    "  --convention NAME     blanchard (default) or byzfl for krum and multi_krum\n"
    "  --iterations T        of geometric_median / centered_clipping (default 10)\n"
    "  --plot FILE           draw --y against the first varied input: .svg (built in) or .png\n"
    "  --y METRIC            the plotted metric (default: the first of --attr)\n"
    "  --title TEXT          the plot's title\n"
    "  --chart / --no-chart  a Unicode chart after a text table (default: when stdout is a terminal)\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "  -h, --help            this help\n"
    "\n"
    "Reals print with 10 significant digits; integers and byte counts in full. Points whose inputs\n"
    "break a rule (dp_degree above the accelerators, a schedule that cannot realise the rule) are\n"
    "left out and counted on stderr.\n";

enum { AX_DP, AX_PARAMS, AX_MODEL, AX_FLEET, AX_GRAD, AX_CKPT, AX_RULE, AX_SCHEDULE, AX_COUNT };
static const char *ax_names[AX_COUNT] = {"dp_degree", "parameters", "workload", "fleet",
                                         "gradient_bytes_per_param", "checkpoint_bytes_per_param",
                                         "rule", "schedule"};

enum {
    M_SEED0 = 0, /* the seed's attributes: M_SEED0 + dpas_attr */
    M_BYTES = DPAS_ATTR_COUNT, M_RECEIVED, M_SCALARS, M_RATIO, M_TFLAT, M_THIER, M_MAXF, M_COUNT
};
static const char *m_extra[] = {"bytes_per_worker", "bytes_received", "scalar_bytes",
                                "ratio_to_allreduce", "time_flat_s", "time_hierarchical_s", "max_f"};

static const char *metric_name(int m) { return m < DPAS_ATTR_COUNT ? dpas_attr_name(m) : m_extra[m - M_BYTES]; }

static int metric_from(const char *s)
{
    for (int m = 0; m < M_COUNT; m++)
        if (!strcmp(s, metric_name(m)))
            return m;
    return -1;
}

static int metric_unit(int m)
{
    if (m == M_TFLAT || m == M_THIER)
        return DPAS_AXIS_SECONDS;
    if (m == M_BYTES || m == M_RECEIVED || m == M_SCALARS ||
        (m < DPAS_ATTR_COUNT && dpas_attr_kind(m) == DPAS_VALUE_BYTES))
        return DPAS_AXIS_BYTES;
    return DPAS_AXIS_PLAIN;
}

typedef struct axis_vals {
    int kind;
    size_t n;
    int geometric; /* a doubling or factor range: plotted on a log axis */
    int64_t *i;    /* dp */
    uint64_t *u;   /* params */
    const void **e;  /* model, fleet entries; rules */
    dpas_rational *w;
    int *sched;
    char **label;
} axis_vals;

static void axis_free(axis_vals *a)
{
    free(a->i), free(a->u), free(a->e), free(a->w), free(a->sched);
    if (a->label)
        for (size_t k = 0; k < a->n; k++)
            free(a->label[k]);
    free(a->label);
}

/* A numeric range "A..B", "A..B+S" or "A..B*F", or a list. */
static int parse_numeric(cli *c, const char *flag, const char *v, int is_count, axis_vals *a)
{
    dpas_error err = {0};
    const char *dots = strstr(v, "..");
    size_t cap = 16;
    a->n = 0;
    if (is_count)
        a->u = malloc(cap * sizeof *a->u);
    else
        a->i = malloc(cap * sizeof *a->i);
    if (!a->u && !a->i)
        return cli_usage(c, "sweep", "out of memory");
#define PUSH(val)                                                                               \
    do {                                                                                        \
        if (a->n == cap) {                                                                      \
            cap *= 2;                                                                           \
            void *p_ = is_count ? realloc(a->u, cap * sizeof *a->u) : realloc(a->i, cap * sizeof *a->i); \
            if (!p_)                                                                            \
                return cli_usage(c, "sweep", "out of memory");                                  \
            if (is_count)                                                                       \
                a->u = p_;                                                                      \
            else                                                                                \
                a->i = p_;                                                                      \
        }                                                                                       \
        if (is_count)                                                                           \
            a->u[a->n++] = (uint64_t)(val);                                                     \
        else                                                                                    \
            a->i[a->n++] = (int64_t)(val);                                                      \
    } while (0)
    if (dots) {
        char lo_s[64], rest[64], hi_s[64], st_s[64] = "";
        size_t ll = (size_t)(dots - v);
        if (ll >= sizeof lo_s || strlen(dots + 2) >= sizeof rest)
            return cli_usage(c, "sweep", "%s: range \"%s\" is too long", flag, v);
        memcpy(lo_s, v, ll);
        lo_s[ll] = '\0';
        snprintf(rest, sizeof rest, "%s", dots + 2);
        char op = 'x';
        char *sep = strpbrk(rest, "+*");
        if (sep) {
            op = *sep;
            snprintf(st_s, sizeof st_s, "%s", sep + 1);
            *sep = '\0';
        }
        snprintf(hi_s, sizeof hi_s, "%s", rest);
        uint64_t lo, hi, st = 2;
        if (dpas_parse_count(flag, lo_s, &lo, &err) || dpas_parse_count(flag, hi_s, &hi, &err) ||
            (st_s[0] && dpas_parse_count(flag, st_s, &st, &err)))
            return cli_fail(c, &err);
        if (lo < 1 || hi < lo)
            return cli_usage(c, "sweep", "%s: a range needs 1 <= A <= B, got \"%s\"", flag, v);
        if (op == '+' && st < 1)
            return cli_usage(c, "sweep", "%s: the step must be >= 1, got \"%s\"", flag, v);
        if (op != '+' && st < 2)
            return cli_usage(c, "sweep", "%s: the factor must be >= 2, got \"%s\"", flag, v);
        if (op == '+' && (hi - lo) / st >= 100000000u)
            return cli_usage(c, "sweep", "%s: more than 10^8 values in \"%s\"", flag, v);
        a->geometric = op != '+';
        for (uint64_t x = lo; x <= hi;) {
            PUSH(x);
            uint64_t nx;
            if (op == '+' ? __builtin_add_overflow(x, st, &nx) : __builtin_mul_overflow(x, st, &nx))
                break;
            x = nx;
        }
        return 0;
    }
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (is_count) {
            uint64_t x;
            if (dpas_parse_count(flag, t, &x, &err))
                return cli_fail(c, &err);
            PUSH(x);
        } else {
            int64_t x;
            if (dpas_parse_int(flag, t, &x, &err))
                return cli_fail(c, &err);
            PUSH(x);
        }
    }
    if (!a->n)
        return cli_usage(c, "sweep", "%s needs at least one value", flag);
    return 0;
#undef PUSH
}

static int parse_names(cli *c, const char *flag, const char *v, axis_vals *a,
                       const dpas_registry *reg, const char *convention)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", v);
    size_t cap = 1;
    for (const char *p = v; *p; p++)
        cap += *p == ',';
    a->label = calloc(cap, sizeof *a->label);
    a->e = calloc(cap, sizeof *a->e);
    a->w = calloc(cap, sizeof *a->w);
    a->sched = calloc(cap, sizeof *a->sched);
    if (!a->label || !a->e || !a->w || !a->sched)
        return cli_usage(c, "sweep", "out of memory");
    dpas_error err = {0};
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t k = a->n;
        switch (a->kind) {
        case AX_MODEL: {
            if (dpas_registry_find(reg, DPAS_KIND_MODEL, t, &a->e[k], &err))
                return cli_fail(c, &err);
            const dpas_model *m = a->e[k];
            if (!m->parameters) {
                err.code = DPAS_EINVAL;
                snprintf(err.message, sizeof err.message, "workload %s has no parameter count: %s",
                         m->path, m->missing ? m->missing : "none in the registry");
                return cli_fail(c, &err);
            }
            a->label[k] = strdup(m->name);
            break;
        }
        case AX_FLEET:
            if (dpas_registry_find(reg, DPAS_KIND_FLEET, t, &a->e[k], &err))
                return cli_fail(c, &err);
            a->label[k] = strdup(((const dpas_fleet *)a->e[k])->name);
            break;
        case AX_GRAD:
        case AX_CKPT:
            if (dpas_parse_width(flag, t, &a->w[k], &err))
                return cli_fail(c, &err);
            a->label[k] = strdup(t);
            break;
        case AX_RULE:
            if (dpas_rule_select(t, convention, (const dpas_rule **)&a->e[k], &err))
                return cli_fail(c, &err);
            a->label[k] = strdup(((const dpas_rule *)a->e[k])->name);
            break;
        default:
            a->sched[k] = dpas_schedule_from_name(t);
            if (a->sched[k] < 0)
                return cli_usage(c, "sweep", "--schedule: unknown schedule \"%s\"; expected allreduce, "
                                             "allgather, ps, ps_separate, sharded, sharded_distance or "
                                             "innetwork", t);
            a->label[k] = strdup(dpas_schedule_name(a->sched[k]));
            break;
        }
        if (!a->label[k])
            return cli_usage(c, "sweep", "out of memory");
        a->n++;
    }
    if (!a->n)
        return cli_usage(c, "sweep", "%s needs at least one value", flag);
    return 0;
}

/* ---- fast output ---- */

typedef struct out {
    char *buf;
    size_t len, cap;
    FILE *f;
} out;

static void out_flush(out *o)
{
    fwrite(o->buf, 1, o->len, o->f);
    o->len = 0;
}

static void out_str(out *o, const char *s, size_t n)
{
    if (o->len + n > o->cap)
        out_flush(o);
    if (n > o->cap) {
        fwrite(s, 1, n, o->f);
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void out_s(out *o, const char *s) { out_str(o, s, strlen(s)); }

static size_t u64_text(uint64_t v, char *b)
{
    char t[24];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        b[i] = t[n - 1 - i];
    b[n] = '\0';
    return n;
}

static size_t i64_text(int64_t v, char *b)
{
    if (v < 0) {
        b[0] = '-';
        return 1 + u64_text(0 - (uint64_t)v, b + 1);
    }
    return u64_text((uint64_t)v, b);
}

/* ---- the sweep ---- */

typedef struct point {
    double v[M_COUNT];
    char text[M_COUNT][48];
    bool have[M_COUNT];
} point;

int cmd_sweep(cli *c, int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        SCEN_LONG_OPTIONS,
        {"rule", required_argument, 0, O_RULE}, {"schedule", required_argument, 0, O_SCHEDULE},
        {"convention", required_argument, 0, O_CONVENTION},
        {"iterations", required_argument, 0, O_ITERATIONS}, {"attr", required_argument, 0, O_ATTR},
        {"plot", required_argument, 0, O_PLOT}, {"y", required_argument, 0, O_Y},
        {"title", required_argument, 0, O_TITLE}, {"chart", no_argument, 0, O_CHART},
        {"no-chart", no_argument, 0, O_NOCHART}, {0, 0, 0, 0}};
    scen_args a = {0};
    const char *axis_text[AX_COUNT] = {0};
    const char *attr = NULL, *plot = NULL, *ymetric = NULL, *title = NULL, *conv = NULL;
    int chart = -1, rc = 0, opt;
    int64_t iters = 10;
    dpas_error err = {0};
    opterr = 0;
    optind = 0; /* 0: glibc re-initialises getopt fully (the CLI may run many times in one process) */
    int common; /* cli_common_option's answer */
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int ax = opt == O_DP ? AX_DP : opt == O_PARAMS ? AX_PARAMS : opt == O_MODEL ? AX_MODEL
                 : opt == O_FLEET ? AX_FLEET : opt == O_GRAD ? AX_GRAD : opt == O_CKPT ? AX_CKPT
                 : opt == O_RULE ? AX_RULE : opt == O_SCHEDULE ? AX_SCHEDULE : -1;
        if (ax >= 0) {
            static const char *flags[AX_COUNT] = {"--dp", "--params", "--model", "--fleet", "--grad",
                                                  "--ckpt", "--rule", "--schedule"};
            if (axis_text[ax])
                return cli_usage(c, "sweep", "%s is given twice", flags[ax]);
            axis_text[ax] = optarg;
            continue;
        }
        if (scen_take(c, "sweep", &a, opt, optarg, &rc)) {
            if (rc)
                return rc;
            continue;
        }
        if ((common = cli_common_option(c, "sweep", opt, sweep_help)) != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        switch (opt) {
        case O_ATTR: attr = optarg; break;
        case O_PLOT: plot = optarg; break;
        case O_Y: ymetric = optarg; break;
        case O_TITLE: title = optarg; break;
        case O_CHART: chart = 1; break;
        case O_NOCHART: chart = 0; break;
        case O_CONVENTION: conv = optarg; break;
        case O_ITERATIONS:
            if (dpas_parse_int("--iterations", optarg, &iters, &err))
                return cli_fail(c, &err);
            if (iters < 1)
                return cli_usage(c, "sweep", "--iterations must be >= 1, got %lld", (long long)iters);
            break;
        default: return cli_bad_option(c, "sweep", argv);
        }
    }
    if (argc - optind > 1)
        return cli_usage(c, "sweep", "sweep takes at most one NAME or FILE, got %d", argc - optind);
    a.positional = argc - optind ? argv[optind] : NULL;
    if (axis_text[AX_MODEL] && axis_text[AX_PARAMS])
        return cli_usage(c, "sweep", "give --model or --params, not both");
    if (conv && !axis_text[AX_RULE]) { /* a convention with no rule to apply to is still checked */
        const dpas_rule *any;
        if (dpas_rule_select("krum", conv, &any, &err))
            return cli_fail(c, &err);
    }

    /* Which inputs vary: the first two with more than one value (or a range) are the axes. */
    int axes[2] = {-1, -1}, naxes = 0;
    for (int k = 0; k < AX_COUNT; k++) {
        if (!axis_text[k])
            continue;
        bool multi = strchr(axis_text[k], ',') || ((k == AX_DP || k == AX_PARAMS) && strstr(axis_text[k], ".."));
        if (!multi)
            continue;
        if (naxes == 2)
            return cli_usage(c, "sweep", "a sweep varies at most two inputs; %s, %s and %s all vary",
                             ax_names[axes[0]], ax_names[axes[1]], ax_names[k]);
        axes[naxes++] = k;
    }
    if (!naxes)
        return cli_usage(c, "sweep", "nothing varies: give a list (--dp 8,16,32) or a range "
                                     "(--dp 2..4096) for one or two inputs");
    /* single-valued inputs go to the scenario as usual; a varied one starts at its first value */
    static const int ax_input[AX_COUNT] = {6, 2, 1, 3, 7, 8, -1, -1}; /* index in scen_inputs */
    char first[AX_COUNT][128];
    for (int k = 0; k < AX_COUNT; k++) {
        if (!axis_text[k] || ax_input[k] < 0)
            continue;
        const char *v = axis_text[k];
        size_t l = strcspn(v, ",");
        const char *dots = strstr(v, "..");
        if (dots && (size_t)(dots - v) < l)
            l = (size_t)(dots - v);
        snprintf(first[k], sizeof first[k], "%.*s", (int)l, v);
        /* a varied count is set point by point: resolve with 1, valid for any fleet, so that a
         * first value that breaks a rule leaves out only its own points */
        if ((k == AX_DP || k == AX_PARAMS) && l < strlen(v))
            snprintf(first[k], sizeof first[k], "1");
        if (a.given[ax_input[k]])
            return cli_usage(c, "sweep", "%s is given twice", scen_inputs[ax_input[k]].flag);
        a.given[ax_input[k]] = first[k];
    }
    if (a.given[1] && a.given[2])
        return cli_usage(c, "sweep", "give --model or --params, not both");
    if ((rc = scen_load(c, "sweep", &a, SCEN_POS_EITHER, &err))) {
        /* the first point may break a rule that later ones keep; resolution errors are fatal */
        scen_free(&a);
        return cli_fail(c, &err);
    }

    /* axis values */
    axis_vals av[2] = {{0}, {0}};
    for (int i = 0; i < naxes; i++) {
        av[i].kind = axes[i];
        char flag[32];
        snprintf(flag, sizeof flag, "--%s", axes[i] == AX_DP ? "dp" : axes[i] == AX_PARAMS ? "params"
                 : axes[i] == AX_MODEL ? "model" : axes[i] == AX_FLEET ? "fleet" : axes[i] == AX_GRAD ? "grad"
                 : axes[i] == AX_CKPT ? "ckpt" : axes[i] == AX_RULE ? "rule" : "schedule");
        rc = axes[i] == AX_DP || axes[i] == AX_PARAMS
                 ? parse_numeric(c, flag, axis_text[axes[i]], axes[i] == AX_PARAMS, &av[i])
                 : parse_names(c, flag, axis_text[axes[i]], &av[i], a.reg, conv);
        if (rc) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return rc;
        }
    }
    /* fixed rule and schedule */
    const dpas_rule *rule = NULL;
    int sched = -1;
    if (axis_text[AX_RULE] && (naxes < 1 || (axes[0] != AX_RULE && axes[naxes - 1] != AX_RULE))) {
        if (dpas_rule_select(axis_text[AX_RULE], conv, &rule, &err)) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_fail(c, &err);
        }
    }
    if (axis_text[AX_SCHEDULE] && axes[0] != AX_SCHEDULE && axes[1] != AX_SCHEDULE) {
        sched = dpas_schedule_from_name(axis_text[AX_SCHEDULE]);
        if (sched < 0) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_usage(c, "sweep", "--schedule: unknown schedule \"%s\"", axis_text[AX_SCHEDULE]);
        }
    }
    bool has_sched = axis_text[AX_SCHEDULE] != NULL, has_rule = axis_text[AX_RULE] != NULL;
    /* metrics */
    int metrics[M_COUNT], nm = 0;
    if (attr) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", attr);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t && nm < M_COUNT; t = strtok_r(NULL, ",", &save)) {
            int m = metric_from(t);
            if (m < 0) {
                axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
                return cli_usage(c, "sweep", "--attr: unknown metric \"%s\"", t);
            }
            metrics[nm++] = m;
        }
    } else {
        if (has_sched) {
            metrics[nm++] = M_BYTES;
            metrics[nm++] = M_RATIO;
            metrics[nm++] = M_TFLAT;
            metrics[nm++] = M_THIER;
        } else {
            metrics[nm++] = DPAS_ATTR_GRADIENT_BYTES;
            metrics[nm++] = DPAS_ATTR_CHECKPOINT_BYTES;
            metrics[nm++] = DPAS_ATTR_ALLREDUCE_FACTOR;
            metrics[nm++] = DPAS_ATTR_GATHER_FACTOR;
            metrics[nm++] = DPAS_ATTR_GATHER_TRAFFIC_RATIO;
        }
        if (has_rule)
            metrics[nm++] = M_MAXF;
    }
    bool need_cost = false, need_time = false;
    for (int i = 0; i < nm; i++) {
        int m = metrics[i];
        if (m >= M_BYTES && m <= M_THIER && !has_sched) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_usage(c, "sweep", "%s needs a --schedule", metric_name(m));
        }
        if (m == M_MAXF && !has_rule) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_usage(c, "sweep", "max_f needs a --rule");
        }
        need_cost |= m >= M_BYTES && m <= M_THIER;
        need_time |= m == M_TFLAT || m == M_THIER;
    }
    int ym = -1;
    if (ymetric) {
        ym = metric_from(ymetric);
        bool listed = false;
        for (int i = 0; i < nm; i++)
            listed |= metrics[i] == ym;
        if (ym < 0 || !listed) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_usage(c, "sweep", "--y must be one of the metrics shown (--attr), got \"%s\"", ymetric);
        }
    } else {
        ym = metrics[0];
    }
    bool numeric_x = axes[0] == AX_DP || axes[0] == AX_PARAMS;
    if (chart < 0)
        chart = c->format == DPAS_FORMAT_TEXT && isatty(1) && numeric_x;
    if ((plot || chart) && !numeric_x) {
        axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
        return cli_usage(c, "sweep", "a plot needs a numeric first varied input (--dp or --params), "
                                     "got %s", ax_names[axes[0]]);
    }
    if (plot) {
        size_t l = strlen(plot);
        bool svg = l > 4 && !strcmp(plot + l - 4, ".svg"), png = l > 4 && !strcmp(plot + l - 4, ".png");
        if (!svg && !png) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_usage(c, "sweep", "--plot must name an .svg or .png file, got \"%s\"", plot);
        }
        if (png && !dpas_have_cairo()) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_usage(c, "sweep", "this dpas was built without cairo: --plot needs an .svg file");
        }
    }

    /* points to plot: one series per value of the second axis */
    size_t n0 = av[0].n, n1 = naxes > 1 ? av[1].n : 1;
    double *px = NULL, *py = NULL;
    bool collect = plot || chart;
    if (collect) {
        if (n0 * n1 > 2000000) {
            axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_usage(c, "sweep", "%zu points are too many to plot (at most 2,000,000)", n0 * n1);
        }
        px = malloc(n0 * n1 * sizeof *px), py = malloc(n0 * n1 * sizeof *py);
        if (!px || !py) {
            free(px), free(py), axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
            return cli_usage(c, "sweep", "out of memory");
        }
        for (size_t i = 0; i < n0 * n1; i++)
            py[i] = NAN;
    }

    out o = {malloc(1 << 20), 0, 1 << 20, c->out};
    if (!o.buf) {
        free(px), free(py), axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
        return cli_usage(c, "sweep", "out of memory");
    }
    /* header */
    const int fmt = c->format;
    const int W = 16;
    char cell[96];
    if (fmt == DPAS_FORMAT_CSV || fmt == DPAS_FORMAT_MARKDOWN || fmt == DPAS_FORMAT_TEXT) {
        const char *sep = fmt == DPAS_FORMAT_CSV ? "," : fmt == DPAS_FORMAT_MARKDOWN ? " | " : "  ";
        if (fmt == DPAS_FORMAT_MARKDOWN)
            out_s(&o, "| ");
        for (int i = 0; i < naxes + nm; i++) {
            const char *h = i < naxes ? ax_names[axes[i]] : metric_name(metrics[i - naxes]);
            if (i)
                out_s(&o, sep);
            if (fmt == DPAS_FORMAT_TEXT) {
                snprintf(cell, sizeof cell, i < naxes ? "%-*s" : "%*s", W, h);
                out_s(&o, cell);
            } else {
                out_s(&o, h);
            }
        }
        out_s(&o, fmt == DPAS_FORMAT_MARKDOWN ? " |\n|" : "\n");
        if (fmt == DPAS_FORMAT_MARKDOWN) {
            for (int i = 0; i < naxes + nm; i++)
                out_s(&o, i < naxes ? "---|" : "---:|");
            out_s(&o, "\n");
        }
    } else {
        out_s(&o, "[");
    }

    dpas_scenario base = a.s;
    dpas_links L = {0};
    size_t shown = 0, skipped = 0;
    char first_skip[400] = "";
    for (size_t i0 = 0; i0 < n0; i0++) {
        for (size_t i1 = 0; i1 < n1; i1++) {
            dpas_scenario s = base;
            const dpas_rule *r = rule;
            int sc = sched;
            size_t idx[2] = {i0, i1};
            for (int k = 0; k < naxes; k++) {
                axis_vals *x = &av[k];
                size_t j = idx[k];
                switch (x->kind) {
                case AX_DP: s.dp_degree = x->i[j]; break;
                case AX_PARAMS: s.parameters = x->u[j]; s.workload = "custom"; break;
                case AX_MODEL: {
                    const dpas_model *m = x->e[j];
                    s.parameters = m->parameters;
                    s.workload = m->path;
                    break;
                }
                case AX_FLEET: {
                    const dpas_fleet *f = x->e[j];
                    s.fleet = f->path, s.fleet_entry = f, s.node_entry = f->node, s.fabric_entry = f->fabric;
                    s.nodes = f->count, s.accelerators_per_node = f->node->accelerators_per_node;
                    break;
                }
                case AX_GRAD: s.gradient_bytes_per_param = x->w[j]; break;
                case AX_CKPT: s.checkpoint_bytes_per_param = x->w[j]; break;
                case AX_RULE: r = x->e[j]; break;
                default: sc = x->sched[j]; break;
                }
            }
            dpas_report rep;
            dpas_error pe;
            const char *why = NULL;
            int bad = dpas_evaluate(&s, &rep, &pe);
            if (!bad && sc >= 0 && r && !dpas_schedule_realises((dpas_schedule_id)sc, r, &why)) {
                bad = 1;
                snprintf(pe.message, sizeof pe.message, "schedule %s cannot realise %s: %s",
                         dpas_schedule_name((dpas_schedule_id)sc), r->name, why);
            }
            point p;
            memset(p.have, 0, sizeof p.have);
            dpas_traffic tr;
            if (!bad && need_cost)
                bad = dpas_schedule_traffic((dpas_schedule_id)sc, &s, r, iters, &tr, &pe);
            if (!bad && need_time) /* the links of this point's fleet */
                bad = dpas_scenario_links(&s, &L, &pe) ||
                      dpas_schedule_time((dpas_schedule_id)sc, &s, r, iters, DPAS_TOPO_FLAT, &L, &p.v[M_TFLAT], &pe) ||
                      dpas_schedule_time((dpas_schedule_id)sc, &s, r, iters, DPAS_TOPO_HIERARCHICAL, &L, &p.v[M_THIER], &pe);
            if (bad) {
                if (!skipped++)
                    snprintf(first_skip, sizeof first_skip, "%s", pe.message);
                continue;
            }
            /* the row */
            char rowbuf[1024];
            size_t rl = 0;
            const char *sep = fmt == DPAS_FORMAT_CSV ? "," : fmt == DPAS_FORMAT_MARKDOWN ? " | " : "  ";
            if (fmt == DPAS_FORMAT_JSON)
                out_s(&o, shown ? ",\n  {" : "\n  {");
            else if (fmt == DPAS_FORMAT_MARKDOWN)
                out_s(&o, "| ");
            for (int k = 0; k < naxes + nm; k++) {
                bool quote = false, null = false;
                const char *name;
                if (k < naxes) {
                    axis_vals *x = &av[k];
                    name = ax_names[x->kind];
                    if (x->kind == AX_DP)
                        i64_text(x->i[idx[k]], cell);
                    else if (x->kind == AX_PARAMS)
                        u64_text(x->u[idx[k]], cell);
                    else
                        snprintf(cell, sizeof cell, "%s", x->label[idx[k]]), quote = true;
                } else {
                    int m = metrics[k - naxes];
                    name = metric_name(m);
                    if (m < DPAS_ATTR_COUNT) {
                        dpas_value v;
                        if (dpas_report_get(&rep, (dpas_attr)m, &v, NULL)) {
                            null = true;
                        } else if (v.kind == DPAS_VALUE_INT) {
                            i64_text(v.i, cell);
                        } else if (v.kind == DPAS_VALUE_BYTES) {
                            if (v.bytes.frac_num)
                                dpas_format_bytes_exact(v.bytes, cell, sizeof cell);
                            else
                                u64_text(v.bytes.whole, cell);
                        } else {
                            dpas_format_g10(v.r, cell);
                        }
                        if (!null && m == ym && collect)
                            py[i1 * n0 + i0] = v.r;
                    } else {
                        double val = 0;
                        dpas_bytes b = {0, 0, 1};
                        bool isbytes = false;
                        switch (m) {
                        case M_BYTES: b = tr.sent, isbytes = true; break;
                        case M_RECEIVED: b = tr.received, isbytes = true; break;
                        case M_SCALARS: b = tr.scalars, isbytes = true; break;
                        case M_RATIO: {
                            dpas_traffic ar;
                            dpas_schedule_traffic(DPAS_SCHED_ALLREDUCE, &s, NULL, 0, &ar, NULL);
                            double den = dpas_bytes_to_double(ar.sent);
                            if (den > 0)
                                val = dpas_bytes_to_double(tr.sent) / den;
                            else
                                null = true;
                            break;
                        }
                        case M_TFLAT: val = p.v[M_TFLAT]; break;
                        case M_THIER: val = p.v[M_THIER]; break;
                        default: {
                            int64_t mf = -1;
                            if (r)
                                dpas_rule_max_f(r, s.dp_degree, &mf, NULL);
                            val = (double)mf;
                            if (mf < 0)
                                null = true;
                        }
                        }
                        if (isbytes) {
                            val = dpas_bytes_to_double(b);
                            if (b.frac_num)
                                dpas_format_bytes_exact(b, cell, sizeof cell);
                            else
                                u64_text(b.whole, cell);
                        } else if (m == M_MAXF && !null) {
                            i64_text((int64_t)val, cell);
                        } else if (!null) {
                            dpas_format_g10(val, cell);
                        }
                        if (!null && m == ym && collect)
                            py[i1 * n0 + i0] = val;
                    }
                }
                if (null)
                    snprintf(cell, sizeof cell, "%s", fmt == DPAS_FORMAT_JSON ? "null" : fmt == DPAS_FORMAT_TEXT ? "-" : "");
                /* assembled by hand: snprintf per cell would cost more than the arithmetic */
                size_t cl = strlen(cell), nl = strlen(name), sl = strlen(sep);
                if (rl + cl + nl + 2 * W + 16 >= sizeof rowbuf)
                    break;
                if (fmt == DPAS_FORMAT_JSON) {
                    if (k)
                        memcpy(rowbuf + rl, ", ", 2), rl += 2;
                    rowbuf[rl++] = '"';
                    memcpy(rowbuf + rl, name, nl), rl += nl;
                    memcpy(rowbuf + rl, "\": ", 3), rl += 3;
                    if (quote)
                        rowbuf[rl++] = '"';
                    memcpy(rowbuf + rl, cell, cl), rl += cl;
                    if (quote)
                        rowbuf[rl++] = '"';
                } else {
                    if (k)
                        memcpy(rowbuf + rl, sep, sl), rl += sl;
                    size_t pad = fmt == DPAS_FORMAT_TEXT && cl < (size_t)W ? (size_t)W - cl : 0;
                    if (k >= naxes)
                        memset(rowbuf + rl, ' ', pad), rl += pad;
                    memcpy(rowbuf + rl, cell, cl), rl += cl;
                    if (k < naxes)
                        memset(rowbuf + rl, ' ', pad), rl += pad;
                }
            }
            out_str(&o, rowbuf, rl);
            out_s(&o, fmt == DPAS_FORMAT_JSON ? "}" : fmt == DPAS_FORMAT_MARKDOWN ? " |\n" : "\n");
            if (collect)
                px[i1 * n0 + i0] = av[0].kind == AX_DP ? (double)av[0].i[i0] : (double)av[0].u[i0];
            shown++;
        }
    }
    if (fmt == DPAS_FORMAT_JSON)
        out_s(&o, shown ? "\n]\n" : "]\n");
    int status = EXIT_OK;
    if (!shown) {
        o.len = 0; /* no partial payload */
        free(o.buf);
        err.code = DPAS_EINVAL;
        snprintf(err.message, sizeof err.message, "every point of the sweep was left out; the first: %s",
                 first_skip);
        free(px), free(py), axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
        return cli_fail(c, &err);
    }
    if (skipped)
        fprintf(c->err, "dpas: warning: %zu of %zu points left out; the first: %s\n", skipped,
                skipped + shown, first_skip);
    /* the plot */
    if (collect) {
        dpas_series *ser = calloc(n1, sizeof *ser);
        char ytitle[128], xt[64], tt[256];
        snprintf(ytitle, sizeof ytitle, "%s", metric_name(ym));
        snprintf(xt, sizeof xt, "%s", ax_names[axes[0]]);
        snprintf(tt, sizeof tt, "%s%s%s", title ? title : metric_name(ym), title ? "" : " vs ",
                 title ? "" : ax_names[axes[0]]);
        for (size_t k = 0; k < n1 && ser; k++) {
            ser[k].name = naxes > 1 ? av[1].label ? av[1].label[k] : NULL : NULL;
            ser[k].x = px + k * n0;
            ser[k].y = py + k * n0;
            ser[k].n = n0;
        }
        char numlabel[32][24];
        if (ser && naxes > 1 && !av[1].label)
            for (size_t k = 0; k < n1 && k < 32; k++) {
                if (av[1].kind == AX_DP)
                    i64_text(av[1].i[k], numlabel[k]);
                else
                    u64_text(av[1].u[k], numlabel[k]);
                ser[k].name = numlabel[k];
            }
        double ylo = INFINITY, yhi = 0;
        for (size_t i = 0; i < n0 * n1; i++)
            if (isfinite(py[i]) && py[i] > 0)
                ylo = fmin(ylo, py[i]), yhi = fmax(yhi, py[i]);
        dpas_plot_spec ps = {.title = tt, .xlabel = xt, .ylabel = ytitle,
                             .xlog = av[0].geometric ? (av[0].kind == AX_DP ? 2 : 10) : 0,
                             .ylog = yhi > 0 && yhi / ylo > 100 ? 10 : 0,
                             .xunit = DPAS_AXIS_PLAIN, .yunit = metric_unit(ym)};
        if (!ser) {
            status = cli_usage(c, "sweep", "out of memory");
        } else if (plot) {
            size_t l = strlen(plot);
            if (!strcmp(plot + l - 4, ".svg")) {
                char *svg = dpas_plot_svg(&ps, ser, n1, &err);
                FILE *f = svg ? fopen(plot, "wb") : NULL;
                if (!svg)
                    status = cli_fail(c, &err);
                else if (!f || fputs(svg, f) < 0 || fclose(f)) {
                    snprintf(err.message, sizeof err.message, "cannot write %s", plot);
                    err.code = DPAS_EIO;
                    status = cli_fail(c, &err);
                }
                dpas_free(svg);
            } else if (dpas_plot_png(&ps, ser, n1, plot, &err)) {
                status = cli_fail(c, &err);
            }
        }
        if (!status && chart && ser) {
            char *txt = dpas_plot_text(&ps, ser, n1, 64, 16, &err);
            if (txt) {
                out_s(&o, "\n");
                out_s(&o, txt);
                dpas_free(txt);
            }
        }
        free(ser);
    }
    out_flush(&o);
    free(o.buf);
    free(px), free(py), axis_free(&av[0]), axis_free(&av[1]), scen_free(&a);
    return status;
}
