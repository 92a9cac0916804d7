/* Network models fitted to nccl-tests curves. NCCL changes protocol (LL, LL128, Simple) and
 * algorithm (ring, tree, NVLS) with the message size, so one alpha-beta line over 8 B - 8 GiB
 * misses the sizes that matter (a DDP gradient bucket is 4-32 MiB). Three models:
 *   alpha_beta  one line t = a + c x over every size, least squares on the relative error (the
 *               small sizes, which carry a, count as much as the large ones, which carry c);
 *   piecewise   consecutive regimes, each such a line, the splits chosen by dynamic programming:
 *               minimum of (sum of squared relative residuals + a penalty per regime);
 *   empirical   the measurements themselves; between two sizes the line through both (an
 *               alpha-beta line: exact when both lie in one regime); outside, the outermost
 *               measurement continued with the outermost regime's slope.
 * With the ring model of the collective (dpas_collective_ring), a = steps x alpha and
 * c = factor / beta, so beta is a bus bandwidth, comparable with nccl-tests' busbw. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one alpha-beta line, by weighted least squares ----------------------------------------- */

/* Sums over points with weight 1/t^2 (relative residuals). */
typedef struct sums {
    double w, x, y, xx, xy, yy;
} sums;

static void sums_add(sums *s, double x, double t)
{
    double w = 1.0 / (t * t);
    s->w += w, s->x += w * x, s->y += w * t, s->xx += w * x * x, s->xy += w * x * t;
    s->yy += 1.0;
}

static sums sums_sub(sums a, sums b)
{
    return (sums){a.w - b.w, a.x - b.x, a.y - b.y, a.xx - b.xx, a.xy - b.xy, a.yy - b.yy};
}

static double ssr(const sums *s, double a, double c)
{
    double v =
        a * a * s->w + c * c * s->xx + s->yy + 2 * a * c * s->x - 2 * a * s->y - 2 * c * s->xy;
    return v > 0 ? v : 0;
}

/* The line t = a + c x with a >= 0 and c >= 0 minimising the sum of squared relative
 * residuals: the unconstrained optimum when it is feasible, else the better of the two
 * boundaries (a = 0, c = 0), where the problem is one-dimensional. */
static double fit_line(const sums *s, double *a, double *c)
{
    double det = s->w * s->xx - s->x * s->x;
    if (det > 1e-12 * s->w * s->xx) {
        double cc = (s->w * s->xy - s->x * s->y) / det, aa = (s->xx * s->y - s->x * s->xy) / det;
        if (aa >= 0 && cc >= 0 && isfinite(aa) && isfinite(cc)) {
            *a = aa, *c = cc;
            return ssr(s, aa, cc);
        }
    }
    double c0 = s->xx > 0 ? fmax(s->xy / s->xx, 0) : 0, a0 = s->w > 0 ? fmax(s->y / s->w, 0) : 0;
    double e1 = ssr(s, 0, c0), e2 = ssr(s, a0, 0);
    if (e1 <= e2) {
        *a = 0, *c = c0;
        return e1;
    }
    *a = a0, *c = 0;
    return e2;
}

/* ---- curves --------------------------------------------------------------------------------- */

typedef struct pt {
    uint64_t bytes;
    double seconds;
} pt;

static int cmp_pt(const void *a, const void *b)
{
    const pt *p = a, *q = b;
    return p->bytes < q->bytes ? -1 : p->bytes > q->bytes;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int set_fail(dpas_fit *f, const char *fmt, ...) DPAS__PRINTF(2, 3);
static int set_fail(dpas_fit *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dpas__mark_cut(f->reason, sizeof f->reason, vsnprintf(f->reason, sizeof f->reason, fmt, ap));
    va_end(ap);
    f->defined = 0;
    f->alpha = f->beta = f->r2 = NAN;
    f->max_rel_residual = f->median_rel_residual = NAN;
    return 0;
}

/* Residuals of predicted against measured, their worst and median. */
static int residuals(dpas_curve *cv, dpas_fit *f)
{
    size_t n = cv->n;
    double *abs_r = malloc(n * sizeof *abs_r);
    if (!abs_r)
        return DPAS_ENOMEM;
    size_t m = 0;
    f->max_rel_residual = NAN;
    for (size_t i = 0; i < n; i++) {
        double r = (f->predicted[i] - cv->seconds[i]) / cv->seconds[i];
        f->rel_residual[i] = r;
        if (!isfinite(r))
            continue;
        abs_r[m++] = fabs(r);
        if (!(fabs(r) <= f->max_rel_residual)) {
            f->max_rel_residual = fabs(r);
            f->worst = i;
        }
    }
    qsort(abs_r, m, sizeof *abs_r, cmp_double);
    f->median_rel_residual = !m      ? NAN
                             : m % 2 ? abs_r[m / 2]
                                     : (abs_r[m / 2 - 1] + abs_r[m / 2]) / 2;
    free(abs_r);
    return 0;
}

static double line_at(const dpas_regime *g, double steps, double factor, double x)
{
    return steps * g->alpha + (isinf(g->beta) ? 0 : factor * x / g->beta);
}

static void regime_from(dpas_regime *g, const dpas_curve *cv, size_t first, size_t count,
                        double steps, double factor)
{
    sums s = {0};
    for (size_t i = first; i < first + count; i++)
        sums_add(&s, (double)cv->bytes[i], cv->seconds[i]);
    double a, c;
    fit_line(&s, &a, &c);
    g->first = first, g->count = count;
    g->from_bytes = cv->bytes[first], g->to_bytes = cv->bytes[first + count - 1];
    g->alpha = a / steps;
    g->beta = c > 0 ? factor / c : INFINITY;
    g->max_rel_residual = 0;
    for (size_t i = first; i < first + count; i++)
        g->max_rel_residual =
            fmax(g->max_rel_residual,
                 fabs(line_at(g, steps, factor, (double)cv->bytes[i]) - cv->seconds[i]) /
                     cv->seconds[i]);
}

/* The regime for a size: the one whose sizes contain it; between two, the nearer in log size;
 * outside, the outermost. */
static const dpas_regime *regime_for(const dpas_fit *f, double x)
{
    const dpas_regime *g = f->regimes;
    size_t n = f->nregimes;
    for (size_t k = 0; k < n; k++) {
        if (x <= (double)g[k].to_bytes) {
            if (k == 0 || x >= (double)g[k].from_bytes)
                return &g[k];
            double mid = sqrt((double)g[k - 1].to_bytes * (double)g[k].from_bytes);
            return x < mid ? &g[k - 1] : &g[k];
        }
    }
    return &g[n - 1];
}

static int fit_alpha_beta(dpas_curve *cv, double steps, double factor)
{
    dpas_fit *f = &cv->fits[DPAS_NETMODEL_ALPHA_BETA - 1];
    f->kind = DPAS_NETMODEL_ALPHA_BETA;
    if (!(f->regimes = calloc(1, sizeof *f->regimes)))
        return DPAS_ENOMEM;
    f->nregimes = 1;
    regime_from(f->regimes, cv, 0, cv->n, steps, factor);
    f->alpha = f->regimes[0].alpha, f->beta = f->regimes[0].beta;
    double mean = 0, ss_tot = 0, ss_res = 0;
    for (size_t i = 0; i < cv->n; i++)
        mean += cv->seconds[i] / (double)cv->n;
    for (size_t i = 0; i < cv->n; i++) {
        f->predicted[i] = line_at(f->regimes, steps, factor, (double)cv->bytes[i]);
        ss_res += (cv->seconds[i] - f->predicted[i]) * (cv->seconds[i] - f->predicted[i]);
        ss_tot += (cv->seconds[i] - mean) * (cv->seconds[i] - mean);
    }
    f->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
    f->defined = 1;
    return residuals(cv, f);
}

/* Dynamic programming over the splits: best[j] is the least cost of the first j sizes cut into
 * regimes of at least `least` sizes; a regime costs its squared relative residuals plus the
 * penalty. Quadratic in the sizes, with each regime's line from prefix sums in O(1). */
static int fit_piecewise(dpas_curve *cv, double steps, double factor)
{
    dpas_fit *f = &cv->fits[DPAS_NETMODEL_PIECEWISE - 1];
    f->kind = DPAS_NETMODEL_PIECEWISE;
    size_t n = cv->n, least = n < DPAS_PIECEWISE_MIN_SIZES ? n : DPAS_PIECEWISE_MIN_SIZES;
    sums *pre = calloc(n + 1, sizeof *pre);
    double *best = malloc((n + 1) * sizeof *best);
    size_t *from = malloc((n + 1) * sizeof *from);
    if (!pre || !best || !from) {
        free(pre), free(best), free(from);
        return DPAS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        pre[i + 1] = pre[i];
        sums_add(&pre[i + 1], (double)cv->bytes[i], cv->seconds[i]);
    }
    best[0] = 0;
    for (size_t j = 1; j <= n; j++) {
        best[j] = INFINITY;
        from[j] = 0;
        for (size_t i = 0; i + least <= j; i++) {
            if (!isfinite(best[i]))
                continue;
            sums s = sums_sub(pre[j], pre[i]);
            double a, c, cost = best[i] + fit_line(&s, &a, &c) + DPAS_PIECEWISE_PENALTY;
            if (cost < best[j])
                best[j] = cost, from[j] = i;
        }
    }
    size_t k = 0;
    for (size_t j = n; j > 0; j = from[j])
        k++;
    f->regimes = calloc(k, sizeof *f->regimes);
    if (!f->regimes) {
        free(pre), free(best), free(from);
        return DPAS_ENOMEM;
    }
    f->nregimes = k;
    for (size_t j = n; j > 0; j = from[j]) {
        k--;
        regime_from(&f->regimes[k], cv, from[j], j - from[j], steps, factor);
    }
    free(pre), free(best), free(from);
    const dpas_regime *last = &f->regimes[f->nregimes - 1];
    f->alpha = last->alpha, f->beta = last->beta, f->r2 = NAN;
    for (size_t i = 0; i < n; i++)
        f->predicted[i] =
            line_at(regime_for(f, (double)cv->bytes[i]), steps, factor, (double)cv->bytes[i]);
    f->defined = 1;
    return residuals(cv, f);
}

/* The empirical curve at x from the sizes lo..hi of the curve (a subset when one is left out),
 * with the piecewise regimes for extrapolation (NULL: none). NaN when it cannot answer. */
static double empirical_at(const dpas_curve *cv, const size_t *idx, size_t m, double x,
                           double steps, double factor, int *extrapolated)
{
    const dpas_fit *pw = &cv->fits[DPAS_NETMODEL_PIECEWISE - 1];
    *extrapolated = 0;
    if (m == 0)
        return NAN;
    double x0 = (double)cv->bytes[idx[0]], x1 = (double)cv->bytes[idx[m - 1]];
    if (x >= x0 && x <= x1) {
        size_t lo = 0, hi = m - 1; /* the last size <= x, by bisection */
        while (lo < hi) {
            size_t mid = (lo + hi + 1) / 2;
            if ((double)cv->bytes[idx[mid]] <= x)
                lo = mid;
            else
                hi = mid - 1;
        }
        double xa = (double)cv->bytes[idx[lo]], ta = cv->seconds[idx[lo]];
        if (x == xa || lo == m - 1)
            return ta;
        double xb = (double)cv->bytes[idx[lo + 1]], tb = cv->seconds[idx[lo + 1]];
        return ta + (tb - ta) * ((x - xa) / (xb - xa));
    }
    *extrapolated = 1;
    if (!pw->defined || !pw->nregimes)
        return NAN;
    const dpas_regime *g = x < x0 ? &pw->regimes[0] : &pw->regimes[pw->nregimes - 1];
    double slope = isinf(g->beta) ? 0 : factor / g->beta;
    if (x > x1)
        return cv->seconds[idx[m - 1]] + slope * (x - x1);
    /* below: the line from the first measurement, not below the regime's own intercept */
    double t = cv->seconds[idx[0]] - slope * (x0 - x);
    double floor_t = steps * g->alpha;
    if (t < floor_t)
        t = floor_t;
    if (!(t > 0))
        t = cv->seconds[idx[0]] * x / x0;
    return t;
}

static int fit_empirical(dpas_curve *cv, double steps, double factor)
{
    dpas_fit *f = &cv->fits[DPAS_NETMODEL_EMPIRICAL - 1];
    f->kind = DPAS_NETMODEL_EMPIRICAL;
    f->alpha = f->beta = f->r2 = NAN;
    f->defined = 1;
    size_t n = cv->n;
    if (n == 1) {
        f->predicted[0] = NAN;
        f->rel_residual[0] = NAN;
        f->max_rel_residual = f->median_rel_residual = NAN;
        return 0;
    }
    size_t *idx = malloc(n * sizeof *idx);
    if (!idx)
        return DPAS_ENOMEM;
    for (size_t i = 0; i < n; i++) { /* each size from all the others */
        size_t m = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i)
                idx[m++] = j;
        int ex;
        f->predicted[i] = empirical_at(cv, idx, m, (double)cv->bytes[i], steps, factor, &ex);
    }
    free(idx);
    return residuals(cv, f);
}

static void curve_release(dpas_curve *cv)
{
    free(cv->bytes), free(cv->seconds);
    for (int k = 0; k < DPAS_NETMODEL_KINDS; k++) {
        free(cv->fits[k].regimes), free(cv->fits[k].predicted), free(cv->fits[k].rel_residual);
    }
    memset(cv, 0, sizeof *cv);
}

/* Sort, merge repeated sizes (geometric mean of their times), fit the three models. */
static int build_curve(dpas_curve *cv, int coll, int64_t ranks, const pt *in, size_t n,
                       const char *where, dpas_error *err)
{
    memset(cv, 0, sizeof *cv);
    cv->collective = coll, cv->ranks = ranks;
    cv->peak_busbw = NAN;
    pt *p = malloc((n ? n : 1) * sizeof *p);
    if (!p)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    memcpy(p, in, n * sizeof *p);
    qsort(p, n, sizeof *p, cmp_pt);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double logsum = 0;
        for (; j < n && p[j].bytes == p[i].bytes; j++)
            logsum += log(p[j].seconds);
        p[m].bytes = p[i].bytes;
        p[m++].seconds = exp(logsum / (double)(j - i));
        i = j;
    }
    if (m > DPAS_CALIBRATE_MAX_SIZES) {
        free(p);
        return dpas__fail(err, DPAS_ERANGE, "sizes",
                          "%s%s on %lld ranks has %zu distinct sizes; dpas fits at most %d", where,
                          dpas_collective_name(coll), (long long)ranks, m,
                          DPAS_CALIBRATE_MAX_SIZES);
    }
    cv->n = m;
    cv->bytes = malloc(m * sizeof *cv->bytes);
    cv->seconds = malloc(m * sizeof *cv->seconds);
    bool ok = cv->bytes && cv->seconds;
    for (int k = 0; k < DPAS_NETMODEL_KINDS && ok; k++) {
        cv->fits[k].kind = k + 1;
        cv->fits[k].predicted = malloc(m * sizeof(double));
        cv->fits[k].rel_residual = malloc(m * sizeof(double));
        ok = cv->fits[k].predicted && cv->fits[k].rel_residual;
        for (size_t i = 0; ok && i < m; i++)
            cv->fits[k].predicted[i] = cv->fits[k].rel_residual[i] = NAN;
    }
    if (!ok) {
        free(p);
        curve_release(cv);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < m; i++)
        cv->bytes[i] = p[i].bytes, cv->seconds[i] = p[i].seconds;
    free(p);
    double steps, factor;
    dpas_collective_ring(coll, ranks, &steps, &factor, NULL);
    const char *cn = dpas_collective_name(coll);
    int rc = 0;
    if (ranks < 2) {
        for (int k = 0; k < 2; k++)
            set_fail(&cv->fits[k],
                     "%s on %lld rank: nothing crosses a link, so there is no "
                     "alpha or beta to fit",
                     cn, (long long)ranks);
    } else if (m < 2) {
        for (int k = 0; k < 2; k++)
            set_fail(&cv->fits[k],
                     "%s on %lld ranks has 1 distinct size (%llu B); a fit needs "
                     "at least 2",
                     cn, (long long)ranks, (unsigned long long)cv->bytes[0]);
    } else {
        rc = fit_alpha_beta(cv, steps, factor);
        if (!rc)
            rc = fit_piecewise(cv, steps, factor);
    }
    if (!rc)
        rc = fit_empirical(cv, steps, factor);
    if (rc) {
        curve_release(cv);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    return 0;
}

/* ---- the model ------------------------------------------------------------------------------ */

void dpas_netmodel_free(dpas_netmodel *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->ncurves; i++)
        curve_release(&m->curves[i]);
    free(m->curves);
    dpas_nccl_log_free(m->log);
    free(m);
}

static int from_log(dpas_nccl_log *log, dpas_netmodel **out, dpas_error *err)
{
    dpas_netmodel *m = calloc(1, sizeof *m);
    if (!m || !(m->curves = calloc(log->ntests, sizeof *m->curves))) {
        free(m);
        dpas_nccl_log_free(log);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    m->log = log;
    for (size_t i = 0; i < log->ntests; i++) {
        const dpas_nccl_test *t = &log->tests[i];
        pt *p = malloc(t->npoints * sizeof *p);
        if (!p) {
            dpas_netmodel_free(m);
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        }
        for (size_t j = 0; j < t->npoints; j++)
            p[j] = (pt){t->points[j].bytes, t->points[j].seconds};
        size_t wl = strlen(log->origin) + 24;
        char *where = malloc(wl);
        if (!where) {
            free(p);
            dpas_netmodel_free(m);
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        }
        snprintf(where, wl, "%s:%d: ", log->origin, t->header_line);
        int rc = build_curve(&m->curves[i], t->collective, t->ranks, p, t->npoints, where, err);
        free(where);
        free(p);
        if (rc) {
            dpas_netmodel_free(m);
            return rc;
        }
        m->ncurves++;
        dpas_curve *cv = &m->curves[i];
        cv->test = t;
        for (size_t j = 0; j < t->npoints; j++)
            if (isfinite(t->points[j].busbw) &&
                (!isfinite(cv->peak_busbw) || t->points[j].busbw > cv->peak_busbw)) {
                cv->peak_busbw = t->points[j].busbw;
                cv->peak_busbw_bytes = t->points[j].bytes;
            }
    }
    *out = m;
    return 0;
}

int dpas_netmodel_from_text(const char *text, size_t len, const char *origin,
                            const char *collective, int64_t ranks, dpas_netmodel **out,
                            dpas_error *err)
{
    dpas_nccl_log *log;
    *out = NULL;
    int rc = dpas_nccl_read(text, len, origin, collective, ranks, &log, err);
    return rc ? rc : from_log(log, out, err);
}

int dpas_netmodel_load(const char *path, const char *collective, int64_t ranks, dpas_netmodel **out,
                       dpas_error *err)
{
    dpas_nccl_log *log;
    *out = NULL;
    int rc = dpas_nccl_read_file(path, collective, ranks, &log, err);
    return rc ? rc : from_log(log, out, err);
}

int dpas_netmodel_from_points(int collective, int64_t ranks, const uint64_t *bytes,
                              const double *seconds, size_t n, dpas_netmodel **out, dpas_error *err)
{
    *out = NULL;
    if (!dpas_collective_name(collective))
        return dpas__fail(err, DPAS_EINVAL, "collective", "unknown collective %d", collective);
    if (ranks < 1)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 1, got %lld",
                          (long long)ranks);
    if (n == 0)
        return dpas__fail(err, DPAS_EINVAL, "points", "a curve needs at least one point");
    for (size_t i = 0; i < n; i++)
        if (bytes[i] == 0 || bytes[i] > (uint64_t)INT64_MAX || !(seconds[i] > 0) ||
            !isfinite(seconds[i]))
            return dpas__fail(err, DPAS_EINVAL, "points",
                              "point %zu: bytes must be in [1, 2^63 - 1] and seconds finite and "
                              "> 0, got %llu B and %g s",
                              i, (unsigned long long)bytes[i], seconds[i]);
    pt *p = malloc(n * sizeof *p);
    dpas_netmodel *m = calloc(1, sizeof *m);
    if (!p || !m || !(m->curves = calloc(1, sizeof *m->curves))) {
        free(p), free(m);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (pt){bytes[i], seconds[i]};
    int rc = build_curve(m->curves, collective, ranks, p, n, "", err);
    free(p);
    if (rc) {
        free(m->curves), free(m);
        return rc;
    }
    m->ncurves = 1;
    *out = m;
    return 0;
}

/* ---- queries -------------------------------------------------------------------------------- */

static const char *const kind_names[] = {"default", "alpha_beta", "piecewise", "empirical"};

const char *dpas_netmodel_kind_name(int kind)
{
    return kind >= 0 && kind <= DPAS_NETMODEL_KINDS ? kind_names[kind] : NULL;
}

int dpas_netmodel_kind_parse(const char *text, int *kind, dpas_error *err)
{
    char q[96];
    for (int k = 0; text && k <= DPAS_NETMODEL_KINDS; k++)
        if (!strcmp(text, kind_names[k])) {
            *kind = k;
            return 0;
        }
    return dpas__fail(err, DPAS_EINVAL, "network-model",
                      "network model must be alpha_beta, piecewise, empirical or default, got %s",
                      dpas__quote(text ? text : "", q, sizeof q));
}

/* One model of one curve at x bytes on n ranks; NaN with a reason when it cannot answer. */
static double model_at(const dpas_curve *cv, int kind, double x, int64_t n, int *extrapolated,
                       char *why, size_t whycap)
{
    const dpas_fit *f = &cv->fits[kind - 1];
    const char *cn = dpas_collective_name(cv->collective);
    *extrapolated = x < (double)cv->bytes[0] || x > (double)cv->bytes[cv->n - 1];
    if (!f->defined) {
        snprintf(why, whycap, "the %s model is undefined: %s", kind_names[kind], f->reason);
        return NAN;
    }
    double steps, factor, s0, f0;
    dpas_collective_ring(cv->collective, n, &steps, &factor, NULL);
    dpas_collective_ring(cv->collective, cv->ranks, &s0, &f0, NULL);
    if (kind != DPAS_NETMODEL_EMPIRICAL)
        return line_at(regime_for(f, x), steps, factor, x);
    size_t *idx = malloc(cv->n * sizeof *idx);
    if (!idx) {
        snprintf(why, whycap, "out of memory");
        return NAN;
    }
    for (size_t i = 0; i < cv->n; i++)
        idx[i] = i;
    int ex;
    double t = empirical_at(cv, idx, cv->n, x, s0, f0, &ex);
    free(idx);
    if (isnan(t)) {
        snprintf(why, whycap,
                 "the empirical model of %s on %lld ranks has one size (%llu B) and "
                 "no regime to extrapolate to %.17g B with",
                 cn, (long long)cv->ranks, (unsigned long long)cv->bytes[0], x);
        return NAN;
    }
    if (n != cv->ranks) { /* rescaled by the piecewise model's ratio */
        const dpas_fit *pw = &cv->fits[DPAS_NETMODEL_PIECEWISE - 1];
        if (!pw->defined) {
            snprintf(why, whycap,
                     "the empirical model of %s measured on %lld ranks cannot be "
                     "rescaled to %lld without a piecewise fit: %s",
                     cn, (long long)cv->ranks, (long long)n, pw->reason);
            return NAN;
        }
        const dpas_regime *g = regime_for(pw, x);
        double here = line_at(g, s0, f0, x), there = line_at(g, steps, factor, x);
        t = here > 0 ? t * there / here : there;
    }
    return t;
}

static const dpas_curve *curve_for(const dpas_netmodel *m, int coll, int64_t ranks)
{
    const dpas_curve *any = NULL;
    for (size_t i = 0; i < m->ncurves; i++) {
        const dpas_curve *cv = &m->curves[i];
        if (cv->collective != coll)
            continue;
        if (!ranks || cv->ranks == ranks)
            return cv;
        if (!any)
            any = cv;
    }
    return any;
}

int dpas_curve_time(const dpas_curve *cv, int kind, double bytes, int64_t ranks, dpas_net_time *out,
                    dpas_error *err)
{
    memset(out, 0, sizeof *out);
    out->seconds = NAN;
    if (!cv || !cv->n)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "no curve");
    if (kind < 0 || kind > DPAS_NETMODEL_KINDS)
        return dpas__fail(err, DPAS_EINVAL, "network-model", "unknown network model %d", kind);
    if (!(bytes > 0) || !isfinite(bytes))
        return dpas__fail(err, DPAS_EINVAL, "bytes", "bytes must be finite and > 0, got %g", bytes);
    if (ranks < 0)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 0, got %lld",
                          (long long)ranks);
    int64_t n = ranks ? ranks : cv->ranks;
    out->curve = cv;
    out->rescaled = n != cv->ranks;
    bool inside = bytes >= (double)cv->bytes[0] && bytes <= (double)cv->bytes[cv->n - 1];
    out->extrapolated = !inside;
    out->kind = kind ? kind : inside ? DPAS_NETMODEL_EMPIRICAL : DPAS_NETMODEL_PIECEWISE;
    if (n == 1) {
        out->seconds = 0;
        return 0;
    }
    char why[400];
    int ex;
    double t = model_at(cv, out->kind, bytes, n, &ex, why, sizeof why);
    if (isnan(t))
        return dpas__fail(err, DPAS_EUNDEF, "calibration", "%s", why);
    out->seconds = t;
    return 0;
}

int dpas_netmodel_time(const dpas_netmodel *m, int collective, int kind, double bytes,
                       int64_t ranks, dpas_net_time *out, dpas_error *err)
{
    memset(out, 0, sizeof *out);
    out->seconds = NAN;
    if (!m)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "no network model");
    const char *cn = dpas_collective_name(collective);
    if (!cn)
        return dpas__fail(err, DPAS_EINVAL, "collective", "unknown collective %d", collective);
    if (ranks < 0)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 0, got %lld",
                          (long long)ranks);
    const dpas_curve *cv = curve_for(m, collective, ranks);
    if (!cv)
        return dpas__fail(err, DPAS_ENOENT, "collective",
                          "the calibration has no %s test (it has %zu test%s of other "
                          "collectives)",
                          cn, m->ncurves, m->ncurves == 1 ? "" : "s");
    return dpas_curve_time(cv, kind, bytes, ranks, out, err);
}

int dpas_netmodel_predict(const dpas_netmodel *m, const uint64_t *sizes, size_t nsizes,
                          dpas_net_prediction **rows, size_t *nrows, dpas_error *err)
{
    *rows = NULL, *nrows = 0;
    if (!m->ncurves || !nsizes)
        return 0;
    if (nsizes > SIZE_MAX / sizeof **rows / m->ncurves)
        return dpas__fail(err, DPAS_ERANGE, "predict", "too many predictions");
    dpas_net_prediction *p = calloc(m->ncurves * nsizes, sizeof *p);
    if (!p)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    size_t k = 0;
    for (size_t c = 0; c < m->ncurves; c++) {
        const dpas_curve *cv = &m->curves[c];
        for (size_t i = 0; i < nsizes; i++, k++) {
            dpas_net_prediction *r = &p[k];
            r->collective = cv->collective, r->ranks = cv->ranks, r->bytes = sizes[i];
            r->curve = c;
            double x = (double)sizes[i];
            for (int kind = 1; kind <= DPAS_NETMODEL_KINDS; kind++) {
                dpas_net_time t;
                dpas_curve_time(cv, kind, x, 0, &t, NULL);
                r->seconds[kind - 1] = t.seconds;
                r->extrapolated = t.extrapolated;
            }
            dpas_net_time t;
            r->default_kind =
                dpas_curve_time(cv, DPAS_NETMODEL_DEFAULT, x, 0, &t, NULL) ? 0 : t.kind;
        }
    }
    *rows = p, *nrows = k;
    return 0;
}
