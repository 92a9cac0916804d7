/* SPDX-License-Identifier: Apache-2.0 */
/* Sweeps: one to three inputs varied over lists or ranges, each point a row of typed cells. Ranges
 * are walked, never materialised; the limits are checked before any work. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The key each input is, in the order of dpas_sweep_input: its name and spellings are the key
 * table's. */
static const dpas_key input_keys[DPAS_SWEEP_INPUT_COUNT] = {
    DPAS_KEY_DP_DEGREE, DPAS_KEY_PARAMETERS,     DPAS_KEY_WORKLOAD,
    DPAS_KEY_FLEET,     DPAS_KEY_GRADIENT_WIDTH, DPAS_KEY_CHECKPOINT_WIDTH,
    DPAS_KEY_RULE,      DPAS_KEY_SCHEDULE,       DPAS_KEY_F,
};

static const char *const extra_metrics[] = {
    "bytes_per_worker", "bytes_received",      "scalar_bytes", "ratio_to_allreduce",
    "time_flat_s",      "time_hierarchical_s", "max_f",        "time_basis",
    "time_band_low_s",  "time_band_high_s",    "time_s",       "time_model",
    "dp_degree"};
_Static_assert(sizeof extra_metrics / sizeof extra_metrics[0] ==
                   DPAS_METRIC_COUNT - DPAS_METRIC_BYTES_PER_WORKER,
               "a name per metric");

/* The metrics that need the point's flat or hierarchical time. */
static bool is_time(int m)
{
    return m == DPAS_METRIC_TIME_FLAT_S || m == DPAS_METRIC_TIME_HIERARCHICAL_S ||
           m == DPAS_METRIC_TIME_BASIS || m == DPAS_METRIC_TIME_BAND_LOW_S ||
           m == DPAS_METRIC_TIME_BAND_HIGH_S || m == DPAS_METRIC_TIME_S ||
           m == DPAS_METRIC_TIME_MODEL;
}

_Static_assert((int)DPAS_METRIC_BYTES_PER_WORKER == (int)DPAS_ATTR_COUNT,
               "metrics follow the attributes");

dpas_key dpas__sweep_input_key(dpas_sweep_input in) { return input_keys[in]; }

const char *dpas_sweep_input_name(dpas_sweep_input in)
{
    return (unsigned)in < DPAS_SWEEP_INPUT_COUNT ? dpas_key_name(input_keys[in]) : NULL;
}

const char *dpas_metric_name(dpas_metric m)
{
    if (m >= 0 && (int)m < DPAS_ATTR_COUNT)
        return dpas_attr_name((dpas_attr)m);
    if (m >= DPAS_METRIC_BYTES_PER_WORKER && m < DPAS_METRIC_COUNT)
        return extra_metrics[m - DPAS_METRIC_BYTES_PER_WORKER];
    return NULL;
}

int dpas_metric_from_name(const char *name)
{
    for (int m = 0; name && m < DPAS_METRIC_COUNT; m++)
        if (!strcmp(name, dpas_metric_name((dpas_metric)m)))
            return m;
    return -1;
}

int dpas_metric_needs_schedule(dpas_metric m)
{
    return (m >= DPAS_METRIC_BYTES_PER_WORKER && m <= DPAS_METRIC_TIME_HIERARCHICAL_S) ||
           (m >= DPAS_METRIC_TIME_BASIS && m <= DPAS_METRIC_TIME_S);
}
int dpas_metric_needs_rule(dpas_metric m) { return m == DPAS_METRIC_MAX_F; }

/* A count axis: dp_degree and f, int64 values. */
static bool int_axis(dpas_sweep_input in)
{
    return in == DPAS_SWEEP_DP_DEGREE || in == DPAS_SWEEP_F;
}

dpas_axis_unit dpas_metric_axis_unit(dpas_metric m)
{
    if (m == DPAS_METRIC_TIME_FLAT_S || m == DPAS_METRIC_TIME_HIERARCHICAL_S ||
        m == DPAS_METRIC_TIME_BAND_LOW_S || m == DPAS_METRIC_TIME_BAND_HIGH_S ||
        m == DPAS_METRIC_TIME_S)
        return DPAS_AXIS_SECONDS;
    if ((m >= DPAS_METRIC_BYTES_PER_WORKER && m <= DPAS_METRIC_SCALAR_BYTES) ||
        (m >= 0 && (int)m < DPAS_ATTR_COUNT && dpas_attr_kind((dpas_attr)m) == DPAS_VALUE_BYTES))
        return DPAS_AXIS_BYTES;
    return DPAS_AXIS_PLAIN;
}

void dpas_sweep_default_metrics(dpas_sweep *sw, int has_schedule, int has_rule)
{
    static const int seed[] = {DPAS_ATTR_GRADIENT_BYTES, DPAS_ATTR_CHECKPOINT_BYTES,
                               DPAS_ATTR_ALLREDUCE_FACTOR, DPAS_ATTR_GATHER_FACTOR,
                               DPAS_ATTR_GATHER_TRAFFIC_RATIO};
    /* a point's one time with the model that gave it, as a cost row's (issue 27: one time per
     * row; time_flat_s and time_hierarchical_s are the alternatives, by attr) */
    static const int cost[] = {DPAS_METRIC_BYTES_PER_WORKER, DPAS_METRIC_RATIO_TO_ALLREDUCE,
                               DPAS_METRIC_TIME_S, DPAS_METRIC_TIME_MODEL};
    sw->nmetrics = 0;
    if (sw->n_from_f) /* each point's N is the rule's, not given: shown first */
        sw->metrics[sw->nmetrics++] = DPAS_METRIC_N;
    for (size_t i = 0; i < (has_schedule ? 4u : 5u); i++)
        sw->metrics[sw->nmetrics++] = has_schedule ? cost[i] : seed[i];
    if (has_schedule && sw->net) /* a calibration's times say how sure they are */
        for (int m = DPAS_METRIC_TIME_BASIS; m <= DPAS_METRIC_TIME_BAND_HIGH_S; m++)
            sw->metrics[sw->nmetrics++] = m;
    if (has_rule)
        sw->metrics[sw->nmetrics++] = DPAS_METRIC_MAX_F;
}

void dpas_sweep_axis_free(dpas_sweep_axis *a)
{
    if (!a)
        return;
    if (a->label)
        for (size_t k = 0; k < a->n; k++)
            free(a->label[k]);
    free(a->label);
    free(a->i);
    free(a->u);
    free(a->entry);
    free(a->width);
    free(a->schedule);
    memset(a, 0, sizeof *a);
}

int dpas_sweep_text_varies(dpas_sweep_input in, const char *text)
{
    if (!text)
        return 0;
    bool numeric = int_axis(in) || in == DPAS_SWEEP_PARAMETERS;
    return strchr(text, ',') || (numeric && strstr(text, ".."));
}

int64_t dpas_sweep_axis_i(const dpas_sweep_axis *a, size_t i)
{
    return a->range ? (int64_t)dpas_sweep_axis_u(a, i) : a->i[i];
}

uint64_t dpas_sweep_axis_u(const dpas_sweep_axis *a, size_t i)
{
    if (!a->range)
        return a->u ? a->u[i] : (uint64_t)a->i[i];
    if (a->op == '+')
        return a->lo + a->step * i; /* within [lo, hi] by construction */
    uint64_t v = a->lo;
    while (i--)
        v *= a->step;
    return v;
}

double dpas_sweep_axis_x(const dpas_sweep_axis *a, size_t i)
{
    return a->input == DPAS_SWEEP_DP_DEGREE || a->input == DPAS_SWEEP_F
               ? (double)dpas_sweep_axis_i(a, i)
               : (double)dpas_sweep_axis_u(a, i);
}

/* A copy of [s, s + n), or NULL. */
static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int oom(dpas_error *err) { return dpas__fail(err, DPAS_ENOMEM, "", "out of memory"); }

/* "A..B", "A..B+S", "A..B*F". */
static int parse_range(const char *text, const char *dots, const char *field, dpas_sweep_axis *a,
                       dpas_error *err)
{
    char q[96];
    /* the step's '+' or the factor's '*', not the '+' of an exponent ("1e+9..1e+10") */
    const char *rest = dots + 2, *sep = strpbrk(rest, "+*");
    while (sep && *sep == '+' && sep > rest && (sep[-1] == 'e' || sep[-1] == 'E'))
        sep = strpbrk(sep + 1, "+*");
    char *lo_s = dup_n(text, (size_t)(dots - text));
    char *hi_s = dup_n(rest, sep ? (size_t)(sep - rest) : strlen(rest));
    int rc = 0;
    uint64_t st = 2;
    if (!lo_s || !hi_s)
        rc = oom(err);
    else if (!(rc = dpas_parse_count(field, lo_s, &a->lo, err)) &&
             !(rc = dpas_parse_count(field, hi_s, &a->hi, err)) && sep)
        rc = dpas_parse_count(field, sep + 1, &st, err);
    free(lo_s);
    free(hi_s);
    if (rc == DPAS_EINVAL) /* a negative end or step: the range's own rule */
        return dpas__fail(err, DPAS_EINVAL, field, "%s: a range needs %s <= A <= B, got %s", field,
                          a->input == DPAS_SWEEP_F ? "0" : "1", dpas__quote(text, q, sizeof q));
    if (rc)
        return rc;
    a->op = sep && *sep == '+' ? '+' : '*';
    a->step = st;
    a->range = 1;
    a->geometric = a->op == '*';
    /* f counts from 0 (no Byzantine replica), by a step: a factor never leaves 0 */
    uint64_t least = a->input == DPAS_SWEEP_F && a->op == '+' ? 0 : 1;
    if (a->lo < least || a->hi < a->lo)
        return dpas__fail(err, DPAS_EINVAL, field, "%s: a range needs %s <= A <= B, got %s%s",
                          field, least ? "1" : "0", dpas__quote(text, q, sizeof q),
                          a->input == DPAS_SWEEP_F && a->op == '*'
                              ? " (a range from 0 needs a step: 0..8+1)"
                              : "");
    if (int_axis(a->input) && a->hi > (uint64_t)INT64_MAX)
        return dpas__fail(err, DPAS_ERANGE, field, "%s: %s reaches beyond 2^63 - 1", field,
                          dpas__quote(text, q, sizeof q));
    if (a->op == '+' && st < 1)
        return dpas__fail(err, DPAS_EINVAL, field, "%s: the step must be >= 1, got %s", field,
                          dpas__quote(text, q, sizeof q));
    if (a->op == '*' && st < 2)
        return dpas__fail(err, DPAS_EINVAL, field, "%s: the factor must be >= 2, got %s", field,
                          dpas__quote(text, q, sizeof q));
    uint64_t n = 1;
    if (a->op == '+') {
        n = (a->hi - a->lo) / st + 1;
    } else {
        for (uint64_t v = a->lo, nx; !__builtin_mul_overflow(v, st, &nx) && nx <= a->hi; v = nx)
            n++;
    }
    if (n > DPAS_SWEEP_MAX_VALUES)
        return dpas__fail(err, DPAS_ERANGE, field,
                          "%s: %s has %llu values; a sweep axis has at most 10^8", field,
                          dpas__quote(text, q, sizeof q), (unsigned long long)n);
    a->n = (size_t)n;
    return 0;
}

/* One list item into slot k. */
static int parse_item(dpas_sweep_axis *a, size_t k, const char *t, const char *field,
                      const dpas_registry *reg, const char *convention, dpas_error *err)
{
    int rc = 0;
    const char *label = t;
    switch (a->input) {
    case DPAS_SWEEP_DP_DEGREE: return dpas_parse_int(field, t, &a->i[k], err);
    case DPAS_SWEEP_F:
        if ((rc = dpas_parse_int(field, t, &a->i[k], err)))
            return rc;
        if (a->i[k] < 0)
            return dpas__fail(err, DPAS_EINVAL, field, "%s must be >= 0, got %s", field, t);
        return 0;
    case DPAS_SWEEP_PARAMETERS: return dpas__parse_count_positive(field, t, &a->u[k], err);
    case DPAS_SWEEP_WORKLOAD: {
        if ((rc = dpas_registry_find(reg, DPAS_KIND_MODEL, t, &a->entry[k], err)))
            return rc;
        const dpas_model *m = a->entry[k];
        if (!m->parameters)
            return dpas__fail(err, DPAS_EINVAL, field, "workload %s has no parameter count: %s",
                              m->path, m->missing ? m->missing : "none in the registry");
        label = m->name;
        break;
    }
    case DPAS_SWEEP_FLEET:
        if ((rc = dpas_registry_find(reg, DPAS_KIND_FLEET, t, &a->entry[k], err)))
            return rc;
        label = ((const dpas_fleet *)a->entry[k])->name;
        break;
    case DPAS_SWEEP_GRADIENT_WIDTH:
    case DPAS_SWEEP_CHECKPOINT_WIDTH:
        if ((rc = dpas_parse_width(field, t, &a->width[k], err)))
            return rc;
        break;
    case DPAS_SWEEP_RULE:
        if ((rc = dpas_rule_select(t, convention, (const dpas_rule **)&a->entry[k], err)))
            return rc;
        label = ((const dpas_rule *)a->entry[k])->name;
        break;
    default:
        if ((rc = dpas_schedule_parse(field, t, &a->schedule[k], err)))
            return rc;
        label = dpas_schedule_name(a->schedule[k]);
        break;
    }
    if (!(a->label[k] = dup_n(label, strlen(label))))
        return oom(err);
    return 0;
}

/* Value k of a list axis as a key that equal values share (an entry, a width, a count). */
typedef struct axis_value {
    uint64_t a, b;
    size_t k;
} axis_value;

static axis_value value_of(const dpas_sweep_axis *a, size_t k)
{
    switch (a->input) {
    case DPAS_SWEEP_DP_DEGREE:
    case DPAS_SWEEP_F: return (axis_value){(uint64_t)a->i[k], 0, k};
    case DPAS_SWEEP_PARAMETERS: return (axis_value){a->u[k], 0, k};
    case DPAS_SWEEP_GRADIENT_WIDTH:
    case DPAS_SWEEP_CHECKPOINT_WIDTH: return (axis_value){a->width[k].num, a->width[k].den, k};
    case DPAS_SWEEP_SCHEDULE: return (axis_value){(uint64_t)a->schedule[k], 0, k};
    default: return (axis_value){(uint64_t)(uintptr_t)a->entry[k], 0, k};
    }
}

static int cmp_value(const void *x, const void *y)
{
    const axis_value *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->k < q->k ? -1 : p->k > q->k;
}

/* A value listed twice would be a point twice: refused, as a rule listed twice is (widths are
 * reduced, so 2 B and 16 bit are one value; a model by its path and its name, one entry). */
static int no_value_twice(const dpas_sweep_axis *a, const char *field, const char *text,
                          dpas_error *err)
{
    axis_value *v = malloc(a->n * sizeof *v);
    char q[96];
    if (!v)
        return oom(err);
    for (size_t k = 0; k < a->n; k++)
        v[k] = value_of(a, k);
    qsort(v, a->n, sizeof *v, cmp_value);
    size_t twice = SIZE_MAX;
    for (size_t k = 1; k < a->n && twice == SIZE_MAX; k++)
        if (v[k].a == v[k - 1].a && v[k].b == v[k - 1].b)
            twice = v[k].k; /* the later of the two, in the list's order */
    free(v);
    if (twice == SIZE_MAX)
        return 0;
    const char *p = text;
    for (size_t k = 0; k < twice; k++)
        p = strchr(p, ',') + 1;
    char *item = dup_n(p, strcspn(p, ","));
    int rc = item ? dpas__fail(err, DPAS_EINVAL, field, "%s: %s is given twice", field,
                               dpas__quote(item, q, sizeof q))
                  : oom(err);
    free(item);
    return rc;
}

int dpas_sweep_axis_parse(dpas_sweep_input in, const char *text, const char *field,
                          const dpas_registry *reg, const char *convention, dpas_sweep_axis *a,
                          dpas_error *err)
{
    memset(a, 0, sizeof *a);
    a->input = in;
    if ((unsigned)in >= DPAS_SWEEP_INPUT_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "input", "unknown sweep input %d", (int)in);
    if (!field)
        field = dpas_key_name(input_keys[in]);
    if (!text)
        return dpas__fail(err, DPAS_EINVAL, field, "%s: no values given", field);
    bool numeric = int_axis(in) || in == DPAS_SWEEP_PARAMETERS;
    const char *dots = numeric ? strstr(text, "..") : NULL;
    if (dots && !strchr(text, ','))
        return parse_range(text, dots, field, a, err);
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    if (cap > DPAS_SWEEP_MAX_VALUES)
        return dpas__fail(err, DPAS_ERANGE, field, "%s: more than 10^8 values", field);
    bool ok = true;
    if (int_axis(in))
        ok = (a->i = calloc(cap, sizeof *a->i)) != NULL;
    else if (in == DPAS_SWEEP_PARAMETERS)
        ok = (a->u = calloc(cap, sizeof *a->u)) != NULL;
    else
        ok = (a->label = calloc(cap, sizeof *a->label)) &&
             (a->entry = calloc(cap, sizeof *a->entry)) &&
             (a->width = calloc(cap, sizeof *a->width)) &&
             (a->schedule = calloc(cap, sizeof *a->schedule));
    if (!ok) {
        dpas_sweep_axis_free(a);
        return oom(err);
    }
    for (const char *p = text;;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char *t = dup_n(p, l), q[96];
        int rc = !t   ? oom(err)
                 : !l ? dpas__fail(err, DPAS_EINVAL, field, "%s: an empty value in the list %s",
                                   field, dpas__quote(text, q, sizeof q))
                      : parse_item(a, a->n, t, field, reg, convention, err);
        free(t);
        a->n += rc == 0;
        if (rc) {
            dpas_sweep_axis_free(a);
            return rc;
        }
        if (!e)
            break;
        p = e + 1;
    }
    int rc = no_value_twice(a, field, text, err);
    if (rc)
        dpas_sweep_axis_free(a);
    return rc;
}

int dpas_sweep_check(const dpas_sweep *sw, dpas_error *err)
{
    if (sw->naxes < 1 || sw->naxes > DPAS_SWEEP_MAX_AXES)
        return dpas__fail(err, DPAS_EINVAL, "axes", "a sweep varies one to three inputs, got %d",
                          sw->naxes);
    uint64_t points = sw->axes[0].n;
    for (int k = 1; k < sw->naxes; k++)
        if (__builtin_mul_overflow(points, (uint64_t)sw->axes[k].n, &points))
            points = UINT64_MAX;
    if (points > DPAS_SWEEP_MAX_POINTS) {
        dpas__buf b = {0};
        for (int k = 0; k < sw->naxes; k++)
            dpas__buf_printf(&b, "%s%s", k ? " x " : "", dpas_sweep_input_name(sw->axes[k].input));
        int rc = dpas__fail(err, DPAS_ERANGE, "sweep",
                            "the sweep has %llu points; at most 10^9 (%s values)",
                            (unsigned long long)points, b.data ? b.data : "");
        free(b.data);
        return rc;
    }
    bool sched = sw->schedule >= 0, rule = sw->rule != NULL, f = sw->has_f;
    for (int k = 0; k < sw->naxes; k++) {
        sched |= sw->axes[k].input == DPAS_SWEEP_SCHEDULE;
        rule |= sw->axes[k].input == DPAS_SWEEP_RULE;
        f |= sw->axes[k].input == DPAS_SWEEP_F;
    }
    if (f && !rule)
        return dpas__fail(err, DPAS_EINVAL, "f",
                          "f needs a rule: its N (min_n) and whether a point tolerates f are the "
                          "rule's");
    if (sw->nmetrics < 1)
        return dpas__fail(err, DPAS_EINVAL, "metrics", "a sweep needs at least one metric");
    for (int i = 0; i < sw->nmetrics; i++) {
        int m = sw->metrics[i];
        if (!dpas_metric_name(m))
            return dpas__fail(err, DPAS_EINVAL, "metrics", "unknown metric %d", m);
        if (dpas_metric_needs_schedule(m) && !sched)
            return dpas__fail(err, DPAS_EINVAL, "schedule", "%s needs a schedule",
                              dpas_metric_name(m));
        if (dpas_metric_needs_rule(m) && !rule)
            return dpas__fail(err, DPAS_EINVAL, "rule", "%s needs a rule", dpas_metric_name(m));
    }
    return 0;
}

void dpas_sweep_columns(const dpas_sweep *sw, dpas_column *cols)
{
    for (int k = 0; k < sw->naxes; k++) {
        dpas_sweep_input in = sw->axes[k].input;
        dpas_col_type t = int_axis(in)                  ? DPAS_COL_INT
                          : in == DPAS_SWEEP_PARAMETERS ? DPAS_COL_UINT
                                                        : DPAS_COL_TEXT;
        cols[k] = (dpas_column){dpas_key_name(input_keys[in]), t, DPAS_COL_LEFT};
    }
    for (int i = 0; i < sw->nmetrics; i++) {
        int m = sw->metrics[i];
        dpas_col_type t = DPAS_COL_REAL;
        if (m < DPAS_ATTR_COUNT)
            t = dpas_attr_kind((dpas_attr)m) == DPAS_VALUE_INT     ? DPAS_COL_INT
                : dpas_attr_kind((dpas_attr)m) == DPAS_VALUE_BYTES ? DPAS_COL_BYTES
                                                                   : DPAS_COL_REAL;
        else if (m <= DPAS_METRIC_SCALAR_BYTES)
            t = DPAS_COL_BYTES;
        else if (m == DPAS_METRIC_MAX_F || m == DPAS_METRIC_N)
            t = DPAS_COL_INT;
        else if (m == DPAS_METRIC_TIME_BASIS || m == DPAS_METRIC_TIME_MODEL)
            t = DPAS_COL_TEXT;
        cols[sw->naxes + i] = (dpas_column){dpas_metric_name(m), t, DPAS_COL_G10};
    }
}

/* The point's inputs: the base with the axes' values. */
static void apply(const dpas_sweep *sw, const size_t idx[DPAS_SWEEP_MAX_AXES], dpas_scenario *s,
                  const dpas_rule **r, int *sched, int64_t *f, dpas_cell *cells)
{
    for (int k = 0; k < sw->naxes; k++) {
        const dpas_sweep_axis *x = &sw->axes[k];
        size_t j = idx[k];
        switch (x->input) {
        case DPAS_SWEEP_DP_DEGREE:
            s->dp_degree = dpas_sweep_axis_i(x, j);
            cells[k] = dpas_cell_int(s->dp_degree);
            continue;
        case DPAS_SWEEP_F:
            *f = dpas_sweep_axis_i(x, j);
            cells[k] = dpas_cell_int(*f);
            continue;
        case DPAS_SWEEP_PARAMETERS:
            s->parameters = dpas_sweep_axis_u(x, j);
            s->workload = "custom";
            cells[k] = dpas_cell_uint(s->parameters);
            continue;
        case DPAS_SWEEP_WORKLOAD: {
            const dpas_model *m = x->entry[j];
            s->parameters = m->parameters;
            s->workload = m->path;
            break;
        }
        case DPAS_SWEEP_FLEET: {
            const dpas_fleet *fl = x->entry[j];
            s->fleet = fl->path, s->fleet_entry = fl, s->node_entry = fl->node;
            s->fabric_entry = fl->fabric;
            s->nodes = fl->count, s->accelerators_per_node = fl->node->accelerators_per_node;
            break;
        }
        case DPAS_SWEEP_GRADIENT_WIDTH: s->gradient_bytes_per_param = x->width[j]; break;
        case DPAS_SWEEP_CHECKPOINT_WIDTH: s->checkpoint_bytes_per_param = x->width[j]; break;
        case DPAS_SWEEP_RULE: *r = x->entry[j]; break;
        default: *sched = x->schedule[j]; break;
        }
        cells[k] = dpas_cell_text(x->label[j]);
    }
}

/* The point's row of cost (its schedule under its rule, or the schedule alone), as dpas_cost
 * computes a row: one step, the links of the point's fleet or the calibration's. */
static int point_cost(const dpas_sweep *sw, const dpas_scenario *s, const dpas_rule *r, int sc,
                      int64_t f, bool need_time, dpas_cost_row *row, dpas_error *err)
{
    dpas__cost_ctx x = {.steps = 1,
                        .iterations = sw->iterations > 0 ? sw->iterations : 10,
                        .f = f,
                        .net = need_time ? sw->net : NULL,
                        .net_kind = sw->net_kind};
    int rc = dpas__cost_ctx_init(s, sw->links, &x, err);
    if (rc)
        return rc;
    if (need_time && !x.have_links) { /* no fabric and node, no calibration: say which */
        dpas_links L;
        return dpas_scenario_links(s, &L, err);
    }
    if (!need_time)
        x.have_links = 0; /* no time asked for: none computed */
    row->schedule = (dpas_schedule_id)sc;
    if ((rc = dpas__cost_row(s, &x, r, row, err)))
        return rc;
    if (!row->realisable)
        return dpas__fail(err, DPAS_EINVAL, "schedule", "schedule %s cannot realise %s: %s",
                          dpas_schedule_name(row->schedule), r->name, row->why);
    return 0;
}

/* A metric's cell, and its value as a double for a plot (NAN when null). */
static double metric_cell(int m, const dpas_report *rep, const dpas_cost_row *row,
                          const dpas_rule *r, int64_t n, dpas_cell *c)
{
    if (m < DPAS_ATTR_COUNT) {
        dpas_value x;
        if (dpas_report_get(rep, (dpas_attr)m, &x, NULL))
            return *c = dpas_cell_null(), NAN;
        if (x.kind == DPAS_VALUE_INT)
            return *c = dpas_cell_int(x.i), (double)x.i;
        if (x.kind == DPAS_VALUE_BYTES)
            return *c = dpas_cell_bytes(x.bytes), dpas_bytes_to_double(x.bytes);
        return *c = dpas_cell_real(x.r), x.r;
    }
    double v = NAN;
    switch (m) {
    case DPAS_METRIC_BYTES_PER_WORKER: *c = dpas_cell_bytes(row->bytes_per_worker); break;
    case DPAS_METRIC_BYTES_RECEIVED: *c = dpas_cell_bytes(row->bytes_received); break;
    case DPAS_METRIC_SCALAR_BYTES: *c = dpas_cell_bytes(row->scalar_bytes); break;
    case DPAS_METRIC_RATIO_TO_ALLREDUCE: v = row->ratio_to_allreduce; break;
    case DPAS_METRIC_TIME_FLAT_S: v = row->time_flat_s; break;
    case DPAS_METRIC_TIME_HIERARCHICAL_S: v = row->time_hierarchical_s; break;
    case DPAS_METRIC_TIME_BAND_LOW_S: v = row->time_band_lo_s; break;
    case DPAS_METRIC_TIME_BAND_HIGH_S: v = row->time_band_hi_s; break;
    case DPAS_METRIC_TIME_S: v = row->time_s; break;
    case DPAS_METRIC_N: return *c = dpas_cell_int(n), (double)n;
    case DPAS_METRIC_TIME_BASIS: {
        const char *b = dpas_time_basis_name(row->time_basis);
        return *c = b ? dpas_cell_text(b) : dpas_cell_null(), NAN;
    }
    case DPAS_METRIC_TIME_MODEL:
        return *c = row->realisable && row->time_model ? dpas_cell_text(row->time_model)
                                                       : dpas_cell_null(),
               NAN;
    default: { /* max_f */
        int64_t mf = -1;
        if (r)
            dpas_rule_max_f(r, n, &mf, NULL);
        return *c = mf >= 0 ? dpas_cell_int(mf) : dpas_cell_null(), mf >= 0 ? (double)mf : NAN;
    }
    }
    if (m <= DPAS_METRIC_SCALAR_BYTES)
        return dpas_bytes_to_double(c->bytes);
    *c = isnan(v) ? dpas_cell_null() : dpas_cell_real(v);
    return v;
}

int dpas_sweep_point(const dpas_sweep *sw, size_t i0, size_t i1, dpas_cell *cells,
                     dpas_metric ymetric, double *y, dpas_error *err)
{
    const size_t idx[DPAS_SWEEP_MAX_AXES] = {i0, i1, 0};
    return dpas_sweep_point_at(sw, idx, cells, ymetric, y, err);
}

int dpas_sweep_point_at(const dpas_sweep *sw, const size_t idx[DPAS_SWEEP_MAX_AXES],
                        dpas_cell *cells, dpas_metric ymetric, double *y, dpas_error *err)
{
    dpas_scenario s = sw->base;
    const dpas_rule *r = sw->rule;
    int sc = sw->schedule, rc;
    int64_t f = sw->has_f ? sw->f : -1;
    if (y)
        *y = NAN;
    apply(sw, idx, &s, &r, &sc, &f, cells);
    if (f >= 0 && r) {
        int64_t min_n = -1, max_f = -1;
        if (sw->n_from_f) { /* N follows f: the rule's least N that tolerates it */
            if ((rc = dpas_rule_min_n(r, f, &min_n, err)))
                return rc;
            if (min_n < 0)
                return dpas__fail(err, DPAS_EINVAL, "f", "%s tolerates no f = %lld at any N",
                                  r->name, (long long)f);
            s.dp_degree = min_n;
        } else if ((rc = dpas_rule_max_f(r, s.dp_degree, &max_f, err))) {
            return rc;
        } else if (max_f < f) { /* a configuration that does not tolerate f costs nothing useful */
            return dpas__fail(err, DPAS_EINVAL, "f",
                              "%s at dp_degree %lld tolerates f <= %lld, not %lld", r->name,
                              (long long)s.dp_degree, (long long)max_f, (long long)f);
        }
    }
    dpas_report rep;
    /* the point's scenario is validated once; its attributes and its row trust it */
    if ((rc = dpas_scenario_validate(&s, err)) || (rc = dpas__evaluate(&s, &rep, err)))
        return rc;
    bool need_cost = false, need_time = false;
    for (int i = 0; i < sw->nmetrics; i++) {
        need_cost |= dpas_metric_needs_schedule(sw->metrics[i]);
        need_time |= is_time(sw->metrics[i]);
    }
    dpas_cost_row row = {0};
    if (sc >= 0 && r && !need_cost && !dpas_schedule_realises((dpas_schedule_id)sc, r, &row.why))
        return dpas__fail(err, DPAS_EINVAL, "schedule", "schedule %s cannot realise %s: %s",
                          dpas_schedule_name((dpas_schedule_id)sc), r->name, row.why);
    if (need_cost && (rc = point_cost(sw, &s, r, sc, f, need_time, &row, err)))
        return rc;
    for (int i = 0; i < sw->nmetrics; i++) {
        double v = metric_cell(sw->metrics[i], &rep, &row, r, s.dp_degree, &cells[sw->naxes + i]);
        if (y && sw->metrics[i] == ymetric)
            *y = v;
    }
    return 0;
}

size_t dpas_sweep_values(const dpas_sweep *sw, int axis)
{
    return axis >= 0 && axis < sw->naxes ? sw->axes[axis].n : 1;
}

size_t dpas_sweep_ncolumns(const dpas_sweep *sw) { return (size_t)(sw->naxes + sw->nmetrics); }

int dpas_sweep_rows(const dpas_sweep *sw, dpas_sweep_fn fn, void *ctx, dpas_sweep_tally *tally,
                    dpas_error *err)
{
    const size_t n0 = dpas_sweep_values(sw, 0), n1 = dpas_sweep_values(sw, 1),
                 n2 = dpas_sweep_values(sw, 2);
    dpas_cell cells[DPAS_SWEEP_MAX_AXES + DPAS_METRIC_COUNT];
    dpas_error pe;
    int rc = 0;
    memset(tally, 0, sizeof *tally);
    for (size_t i0 = 0; !rc && i0 < n0; i0++)
        for (size_t i1 = 0; !rc && i1 < n1; i1++)
            for (size_t i2 = 0; !rc && i2 < n2; i2++) {
                const size_t idx[DPAS_SWEEP_MAX_AXES] = {i0, i1, i2};
                if (dpas_sweep_point_at(sw, idx, cells, -1, NULL, &pe)) {
                    if (!tally->skipped++)
                        snprintf(tally->first, sizeof tally->first, "%s", pe.message);
                    continue;
                }
                tally->shown++;
                rc = fn(ctx, cells);
            }
    if (!rc && !tally->shown)
        return dpas__fail(err, DPAS_EINVAL, dpas_sweep_input_name(sw->axes[0].input),
                          "every point of the sweep was left out; the first: %s", tally->first);
    return rc;
}

/* ---- a sweep as a figure ---- */

void dpas_sweep_figure_free(dpas_sweep_figure *fig)
{
    if (!fig)
        return;
    for (size_t k = 0; fig->series_names && k < fig->nseries; k++)
        free(fig->series_names[k]);
    for (size_t k = 0; fig->facet_names && k < fig->nfacets; k++)
        free(fig->facet_names[k]);
    free(fig->series_names), free(fig->facet_names);
    free(fig->x), free(fig->y), free(fig->series);
    free(fig);
}

/* Value i of an axis as a legend or a facet shows it: the label, or the number. */
static char *value_name(const dpas_sweep_axis *a, size_t i)
{
    char num[32];
    if (a->label)
        return dup_n(a->label[i], strlen(a->label[i]));
    if (int_axis(a->input))
        snprintf(num, sizeof num, "%lld", (long long)dpas_sweep_axis_i(a, i));
    else
        snprintf(num, sizeof num, "%llu", (unsigned long long)dpas_sweep_axis_u(a, i));
    return dup_n(num, strlen(num));
}

int dpas_sweep_figure_new(const dpas_sweep *sw, dpas_metric ym, dpas_sweep_figure **out,
                          dpas_error *err)
{
    *out = NULL;
    int rc = dpas_sweep_check(sw, err);
    if (rc)
        return rc;
    dpas_sweep_input x0 = sw->axes[0].input;
    if (!int_axis(x0) && x0 != DPAS_SWEEP_PARAMETERS)
        return dpas__fail(err, DPAS_EINVAL, dpas_sweep_input_name(x0),
                          "a plot needs a numeric first varied input (dp_degree, parameters or f), "
                          "got %s",
                          dpas_sweep_input_name(x0));
    bool listed = false;
    for (int i = 0; i < sw->nmetrics; i++)
        listed |= sw->metrics[i] == ym;
    if (!listed || ym == DPAS_METRIC_TIME_BASIS)
        return dpas__fail(err, DPAS_EINVAL, "y",
                          "y must be a number among the metrics shown, got %s",
                          dpas_metric_name(ym) ? dpas_metric_name(ym) : "none");
    size_t n0 = sw->axes[0].n, n1 = dpas_sweep_values(sw, 1), n2 = dpas_sweep_values(sw, 2);
    if (n1 > DPAS_FIGURE_MAX_SERIES)
        return dpas__fail(err, DPAS_ERANGE, dpas_sweep_input_name(sw->axes[1].input),
                          "%zu series are too many to plot (at most %u values of %s)", n1,
                          DPAS_FIGURE_MAX_SERIES, dpas_sweep_input_name(sw->axes[1].input));
    if (n2 > DPAS_FIGURE_MAX_FACETS)
        return dpas__fail(err, DPAS_ERANGE, dpas_sweep_input_name(sw->axes[2].input),
                          "%zu facets are too many to plot (at most %u values of %s)", n2,
                          DPAS_FIGURE_MAX_FACETS, dpas_sweep_input_name(sw->axes[2].input));
    if ((uint64_t)n0 * n1 * n2 > DPAS_FIGURE_MAX_POINTS)
        return dpas__fail(err, DPAS_ERANGE, "sweep",
                          "%llu points are too many to plot (at most 2,000,000)",
                          (unsigned long long)n0 * n1 * n2);
    dpas_sweep_figure *g = calloc(1, sizeof *g);
    dpas_cell *cells = calloc((size_t)(sw->naxes + sw->nmetrics), sizeof *cells);
    size_t np = n0 * n1 * n2;
    if (!g || !cells || !(g->x = malloc(np * sizeof *g->x)) ||
        !(g->y = malloc(np * sizeof *g->y)) || !(g->series = calloc(n1 * n2, sizeof *g->series)) ||
        !(g->series_names = calloc(n1, sizeof *g->series_names)) ||
        !(g->facet_names = calloc(n2, sizeof *g->facet_names))) {
        free(cells);
        dpas_sweep_figure_free(g);
        return oom(err);
    }
    g->ymetric = ym, g->npoints = n0, g->nseries = n1, g->nfacets = n2;
    for (size_t k = 0; sw->naxes > 1 && k < n1; k++)
        if (!(g->series_names[k] = value_name(&sw->axes[1], k)))
            rc = oom(err);
    for (size_t k = 0; sw->naxes > 2 && k < n2; k++)
        if (!(g->facet_names[k] = value_name(&sw->axes[2], k)))
            rc = oom(err);
    dpas_error pe;
    bool nonpositive = false;
    double ylo = INFINITY, yhi = 0;
    for (size_t i2 = 0; !rc && i2 < n2; i2++)
        for (size_t i1 = 0; i1 < n1; i1++) {
            size_t base_ = (i2 * n1 + i1) * n0;
            for (size_t i0 = 0; i0 < n0; i0++) {
                const size_t idx[DPAS_SWEEP_MAX_AXES] = {i0, i1, i2};
                double *y = &g->y[base_ + i0];
                g->x[base_ + i0] = dpas_sweep_axis_x(&sw->axes[0], i0);
                if (dpas_sweep_point_at(sw, idx, cells, ym, y, &pe)) {
                    *y = NAN;
                    if (!g->skipped++)
                        snprintf(g->first, sizeof g->first, "%s", pe.message);
                    continue;
                }
                g->kept++;
                if (isfinite(*y) && *y > 0)
                    ylo = fmin(ylo, *y), yhi = fmax(yhi, *y);
                nonpositive |= isfinite(*y) && *y <= 0;
            }
            g->series[i2 * n1 + i1] =
                (dpas_series){g->series_names[i1], g->x + base_, g->y + base_, n0};
        }
    free(cells);
    if (!rc && !g->kept)
        rc = dpas__fail(err, DPAS_EINVAL, dpas_sweep_input_name(x0),
                        "every point of the sweep was left out; the first: %s", g->first);
    if (rc) {
        dpas_sweep_figure_free(g);
        return rc;
    }
    g->xname = dpas_sweep_input_name(x0);
    g->yname = dpas_metric_name(ym);
    g->series_input = sw->naxes > 1 ? dpas_sweep_input_name(sw->axes[1].input) : NULL;
    g->facet_input = sw->naxes > 2 ? dpas_sweep_input_name(sw->axes[2].input) : NULL;
    g->xlog = sw->axes[0].geometric ? (int_axis(x0) ? 2 : 10) : 0;
    /* a log y only when every value can be drawn on it: a series of zeros (mean's max_f) would
     * be in the legend with no line */
    g->ylog = !nonpositive && yhi > 0 && yhi / ylo > 100 ? 10 : 0;
    g->xunit = DPAS_AXIS_PLAIN;
    g->yunit = dpas_metric_axis_unit(ym);
    *out = g;
    return 0;
}
