/* SPDX-License-Identifier: Apache-2.0 */
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
#include "ncclmodel.h"

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
    double seconds, inplace;
} pt;

static int cmp_pt(const void *a, const void *b)
{
    const pt *p = a, *q = b;
    return p->bytes < q->bytes ? -1 : p->bytes > q->bytes;
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
    f->median_rel_residual = dpas__median_sort(abs_r, m);
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

/* A line whose time does not grow with the size has no bandwidth: the fit is undefined, with the
 * reason, rather than defined with an infinite beta that every later time would use. */
static int no_bandwidth(dpas_curve *cv, dpas_fit *f)
{
    for (size_t i = 0; i < cv->n; i++)
        f->predicted[i] = f->rel_residual[i] = NAN;
    return set_fail(f,
                    "the times do not grow with the size (from %llu B to %llu B): no bandwidth "
                    "can be read from them",
                    (unsigned long long)cv->bytes[0], (unsigned long long)cv->bytes[cv->n - 1]);
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
    if (isinf(f->beta)) /* no growth with size: no bandwidth, and an infinite one would be used */
        return no_bandwidth(cv, f);
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
    if (isinf(f->beta)) /* the largest sizes' regime does not grow: no bandwidth to go on with */
        return no_bandwidth(cv, f);
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
    free(cv->bytes), free(cv->seconds), free(cv->seconds_inplace), free(cv->run_spread);
    for (int k = 0; k < DPAS_NETMODEL_KINDS; k++) {
        free(cv->fits[k].regimes), free(cv->fits[k].predicted), free(cv->fits[k].rel_residual);
    }
    memset(cv, 0, sizeof *cv);
}

/* Sort, merge repeated sizes (geometric mean of their times, and of their in-place times), fit
 * the per-curve models (the nccl model comes later, over every curve of the collective). */
static int build_curve(dpas_curve *cv, int coll, int64_t ranks, int64_t per_node, const pt *in,
                       size_t n, const char *where, dpas_error *err)
{
    memset(cv, 0, sizeof *cv);
    cv->collective = coll, cv->ranks = ranks, cv->per_node = per_node;
    cv->peak_busbw = cv->end_elasticity = cv->extrapolation_per_octave = NAN;
    pt *p = malloc((n ? n : 1) * sizeof *p);
    if (!p)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    memcpy(p, in, n * sizeof *p);
    qsort(p, n, sizeof *p, cmp_pt);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i, nin = 0;
        double logsum = 0, insum = 0;
        for (; j < n && p[j].bytes == p[i].bytes; j++) {
            logsum += log(p[j].seconds);
            if (p[j].inplace > 0)
                insum += log(p[j].inplace), nin++;
        }
        p[m].bytes = p[i].bytes;
        p[m].inplace = nin ? exp(insum / (double)nin) : NAN;
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
    cv->seconds_inplace = malloc(m * sizeof *cv->seconds_inplace);
    bool ok = cv->bytes && cv->seconds && cv->seconds_inplace;
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
        cv->bytes[i] = p[i].bytes, cv->seconds[i] = p[i].seconds,
        cv->seconds_inplace[i] = p[i].inplace;
    free(p);
    if (m >= 2) {
        double e = log(cv->seconds[m - 1] / cv->seconds[m - 2]) /
                   log((double)cv->bytes[m - 1] / (double)cv->bytes[m - 2]);
        cv->end_elasticity = e;
        cv->bandwidth_reached = e >= 0.8;
    }
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

/* ---- per-curve answers for the queries (query.c) ---------------------------------------- */

double dpas__curve_empirical_ext(const dpas_curve *cv, double x, int *extrapolated)
{
    double steps, factor;
    dpas_collective_ring(cv->collective, cv->ranks, &steps, &factor, NULL);
    size_t *idx = malloc((cv->n ? cv->n : 1) * sizeof *idx);
    if (!idx)
        return NAN;
    for (size_t i = 0; i < cv->n; i++)
        idx[i] = i;
    double t = empirical_at(cv, idx, cv->n, x, steps, factor, extrapolated);
    free(idx);
    return t;
}

double dpas__curve_line(const dpas_curve *cv, int kind, double x, int64_t ranks)
{
    const dpas_fit *f = &cv->fits[kind - 1];
    if (!f->defined || !f->nregimes)
        return NAN;
    double steps, factor;
    dpas_collective_ring(cv->collective, ranks, &steps, &factor, NULL);
    return line_at(regime_for(f, x), steps, factor, x);
}

/* ---- the nccl model over the curves of each collective -------------------------------------- */

/* How far the default model errs beyond a curve's sizes: its two smallest and two largest sizes
 * predicted from the curve without them (the model's shape times the departure at the new
 * edge), |ln error| per octave, the worst of the four. */
static void extrapolation_error(dpas_curve *cv, const dpas_scale_fit *sf)
{
    if (cv->n < 6 || !sf->defined)
        return;
    double worst = 0;
    for (int side = 0; side < 2; side++)
        for (size_t k = 1; k <= 2; k++) {
            size_t i = side ? cv->n - k : k - 1, e = side ? cv->n - 3 : 2; /* the new edge */
            double x = (double)cv->bytes[i], xe = (double)cv->bytes[e];
            double mx = dpas__ncclm_time(&sf->p, cv->collective, x, (double)cv->ranks,
                                         (double)cv->per_node);
            double me = dpas__ncclm_time(&sf->p, cv->collective, xe, (double)cv->ranks,
                                         (double)cv->per_node);
            double t = mx * cv->seconds[e] / me;
            double oct = fabs(log2(x / xe));
            if (t > 0 && oct > 0)
                worst = fmax(worst, fabs(log(t / cv->seconds[i])) / oct);
        }
    cv->extrapolation_per_octave = worst;
}

/* The nccl fit of one collective: its parameters, each curve's in-sample residuals, the
 * leave-one-scale-out errors. */
static int fit_collective(dpas_netmodel *m, int coll, dpas_scale_fit *sf)
{
    const dpas_curve **cvs = malloc(m->ncurves * sizeof *cvs);
    if (!cvs)
        return DPAS_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < m->ncurves; i++) {
        dpas_curve *cv = &m->curves[i];
        if (cv->collective != coll)
            continue;
        if (cv->ranks >= 2)
            cvs[n++] = cv;
        else { /* not fitted: its nccl fit says why (an undefined fit always has a reason) */
            cv->fits[DPAS_NETMODEL_NCCL - 1].kind = DPAS_NETMODEL_NCCL;
            set_fail(
                &cv->fits[DPAS_NETMODEL_NCCL - 1],
                "%s on %lld rank: nothing crosses a link, so the nccl model has nothing to fit",
                dpas_collective_name(coll), (long long)cv->ranks);
        }
    }
    memset(sf, 0, sizeof *sf);
    sf->collective = coll;
    sf->ncurves = n;
    for (size_t j = 0; j < n; j++) {
        sf->npoints += cvs[j]->n;
        bool seen = false;
        for (size_t k = 0; k < j; k++)
            seen |= cvs[k]->ranks == cvs[j]->ranks && cvs[k]->per_node == cvs[j]->per_node;
        sf->nscales += !seen;
    }
    int rc = n ? dpas__ncclm_fit(cvs, n, coll, sf) : 0;
    if (!n)
        snprintf(sf->reason, sizeof sf->reason, "no curve of %s on 2 ranks or more",
                 dpas_collective_name(coll));
    if (!rc && sf->defined && sf->nscales >= 2)
        rc = dpas__ncclm_loro(cvs, n, coll, sf);
    sf->insample_median = sf->insample_max = NAN;
    double *all = malloc((sf->npoints ? sf->npoints : 1) * sizeof *all);
    size_t na = 0;
    if (!all)
        rc = DPAS_ENOMEM;
    for (size_t j = 0; !rc && j < n; j++) {
        dpas_curve *cv = (dpas_curve *)cvs[j];
        dpas_fit *f = &cv->fits[DPAS_NETMODEL_NCCL - 1];
        f->kind = DPAS_NETMODEL_NCCL;
        f->alpha = f->beta = f->r2 = NAN;
        if (!sf->defined) {
            set_fail(f, "%s", sf->reason);
            continue;
        }
        f->defined = 1;
        for (size_t i = 0; i < cv->n; i++)
            f->predicted[i] = dpas__ncclm_time(&sf->p, coll, (double)cv->bytes[i],
                                               (double)cv->ranks, (double)cv->per_node);
        rc = residuals(cv, f);
        for (size_t i = 0; i < cv->n; i++)
            if (isfinite(f->rel_residual[i]))
                all[na++] = fabs(f->rel_residual[i]);
        extrapolation_error(cv, sf);
    }
    if (!rc && na) {
        sf->insample_median = dpas__median_sort(all, na);
        sf->insample_max = all[na - 1];
    }
    free(all);
    free(cvs);
    return rc;
}

static int fit_collectives(dpas_netmodel *m, dpas_error *err)
{
    int seen[DPAS_COLL_COUNT] = {0};
    size_t k = 0;
    for (size_t i = 0; i < m->ncurves; i++)
        k += !seen[m->curves[i].collective]++;
    if (!(m->scalefits = calloc(k ? k : 1, sizeof *m->scalefits)))
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < m->ncurves; i++) {
        int c = m->curves[i].collective;
        if (seen[c]++)
            continue;
        if (fit_collective(m, c, &m->scalefits[m->nscalefits++]))
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
    free(m->scalefits);
    for (size_t i = 0; i < m->nlogs; i++)
        dpas_nccl_log_free(m->logs[i]);
    free(m->logs);
    free(m);
}

/* A test's ranks per node: its Rank lines' hosts, else the caller's, else assumed. */
/* A test's ranks per node: as given (gpus_per_node), else from the hosts of its Rank lines, else
 * assumed (8, the common node, when it divides the ranks). A given value wins over the Rank lines
 * (issue 27: the user's word on their own run; dpas_netmodel_notes says when the Rank lines
 * disagree); one that does not divide the ranks into whole nodes is refused. */
static int per_node_of(const dpas_nccl_test *t, int64_t given, const char *where, int64_t *per,
                       int *from, dpas_error *err)
{
    if (given <= 0 && t->nodes > 0 && t->ranks_per_node > 0 &&
        t->nodes * t->ranks_per_node == t->ranks) {
        *from = DPAS_TOPO_FROM_RANK_LINES;
        *per = t->ranks_per_node;
        return 0;
    }
    if (given > 0) {
        if (given < t->ranks && t->ranks % given != 0)
            return dpas__fail(err, DPAS_EINVAL, "gpus_per_node",
                              "%s%s on %lld ranks: gpus_per_node %lld does not divide them into "
                              "whole nodes",
                              where, dpas_collective_name(t->collective), (long long)t->ranks,
                              (long long)given);
        *from = DPAS_TOPO_FROM_GIVEN;
        *per = given < t->ranks ? given : t->ranks; /* fewer ranks than a node: one node */
        return 0;
    }
    *from = DPAS_TOPO_FROM_ASSUMED;
    *per = t->ranks > 8 && t->ranks % 8 == 0 ? 8 : t->ranks;
    return 0;
}

static bool chosen(const dpas_calib_options *opt, size_t number)
{
    if (!opt || !opt->tests)
        return true;
    for (size_t i = 0; i < opt->ntests; i++)
        if (opt->tests[i] == number)
            return true;
    return false;
}

/* Several runs of one curve: per size, each run's time (the geometric mean of its repeats), then
 * the median over the runs that measured that size (the mean of the middle two for an even
 * count), and the spread max / min of those run times (1 when one run measured it). The same for
 * the in-place times. *out sorted by size, *spread beside it. */
static int merge_runs(const pt *in, const size_t *run_of, size_t n, size_t runs, pt **out,
                      double **spread, size_t *nout, dpas_error *err)
{
    typedef struct rp {
        uint64_t bytes;
        size_t run;
        double seconds, inplace;
    } rp;
    rp *a = malloc((n ? n : 1) * sizeof *a);
    double *v = malloc((runs ? runs : 1) * sizeof *v), *w = malloc((runs ? runs : 1) * sizeof *w);
    *out = malloc((n ? n : 1) * sizeof **out);
    *spread = malloc((n ? n : 1) * sizeof **spread);
    if (!a || !v || !w || !*out || !*spread) {
        free(a), free(v), free(w), free(*out), free(*spread);
        *out = NULL, *spread = NULL;
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        a[i] = (rp){in[i].bytes, run_of[i], in[i].seconds, in[i].inplace};
    /* by size, then run (insertion sort keeps it simple and stable; n is bounded by the tests'
     * rows) */
    for (size_t i = 1; i < n; i++) {
        rp x = a[i];
        size_t j = i;
        for (; j > 0 &&
               (a[j - 1].bytes > x.bytes || (a[j - 1].bytes == x.bytes && a[j - 1].run > x.run));
             j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t nv = 0, nw = 0;
        size_t j = i;
        while (j < n && a[j].bytes == a[i].bytes) {
            size_t k = j;
            double ls = 0, li = 0;
            size_t ni = 0;
            for (; k < n && a[k].bytes == a[i].bytes && a[k].run == a[j].run; k++) {
                ls += log(a[k].seconds);
                if (a[k].inplace > 0)
                    li += log(a[k].inplace), ni++;
            }
            v[nv++] = exp(ls / (double)(k - j));
            if (ni)
                w[nw++] = exp(li / (double)ni);
            j = k;
        }
        (*out)[m].bytes = a[i].bytes;
        (*out)[m].seconds = dpas__median_sort(v, nv); /* sorts v: its spread below */
        (*out)[m].inplace = dpas__median_sort(w, nw);
        (*spread)[m++] = v[nv - 1] / v[0];
        i = j;
    }
    free(a), free(v), free(w);
    *nout = m;
    return 0;
}

static void peak_of(dpas_curve *cv, const dpas_nccl_test *t)
{
    for (size_t j = 0; j < t->npoints; j++)
        if (isfinite(t->points[j].busbw) &&
            (!isfinite(cv->peak_busbw) || t->points[j].busbw > cv->peak_busbw)) {
            cv->peak_busbw = t->points[j].busbw;
            cv->peak_busbw_bytes = t->points[j].bytes;
        }
}

/* Takes the logs (freed on failure too). */
static int from_logs(dpas_nccl_log **logs, size_t nlogs, const dpas_calib_options *opt,
                     dpas_netmodel **out, dpas_error *err)
{
    dpas_netmodel *m = calloc(1, sizeof *m);
    size_t total = 0;
    for (size_t f = 0; f < nlogs; f++)
        total += logs[f]->ntests;
    if (!m || !(m->curves = calloc(total ? total : 1, sizeof *m->curves))) {
        free(m);
        for (size_t f = 0; f < nlogs; f++)
            dpas_nccl_log_free(logs[f]);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    m->logs = logs, m->nlogs = nlogs;
    int rc = 0;
    for (size_t i = 0; opt && opt->tests && i < opt->ntests && !rc; i++)
        if (opt->tests[i] < 1 || opt->tests[i] > total)
            rc = dpas__fail(err, DPAS_EINVAL, "tests",
                            "test %zu: the file%s hold%s %zu test%s (numbered from 1)",
                            opt->tests[i], nlogs == 1 ? "" : "s", nlogs == 1 ? "s" : "", total,
                            total == 1 ? "" : "s");
    if (!rc && total > DPAS_CALIBRATE_MAX_CURVES)
        rc = dpas__fail(err, DPAS_ERANGE, "tests",
                        "the files hold %zu tests; a calibration fits at most %d: choose the "
                        "tests to fit",
                        total, DPAS_CALIBRATE_MAX_CURVES);
    /* the chosen tests, their ranks per node */
    typedef struct pick {
        const dpas_nccl_test *t;
        size_t log;
        int64_t per_node;
        int from, used;
    } pick;
    pick *pk = calloc(total ? total : 1, sizeof *pk);
    size_t npk = 0, k = 0;
    if (!pk && !rc)
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    for (size_t f = 0; f < nlogs && !rc; f++) {
        const dpas_nccl_log *log = logs[f];
        for (size_t i = 0; i < log->ntests && !rc; i++) {
            if (!chosen(opt, ++k))
                continue;
            const dpas_nccl_test *t = &log->tests[i];
            size_t wl = strlen(log->origin) + 24;
            char *where = malloc(wl);
            if (!where) {
                rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
                break;
            }
            snprintf(where, wl, "%s:%d: ", log->origin, t->header_line);
            pick *q = &pk[npk];
            q->t = t, q->log = f, q->from = DPAS_TOPO_FROM_ASSUMED;
            rc = per_node_of(t, opt ? opt->per_node : 0, where, &q->per_node, &q->from, err);
            free(where);
            npk += !rc;
        }
    }
    /* Contradictory metadata is an error naming both sources (issue 29): a test whose ranks
     * per node were assumed (no Rank lines name its hosts) beside a test of the same collective
     * and rank count whose Rank lines put another number of ranks on each host. Two tests whose
     * Rank lines both say are two layouts that were run (16 ranks as 2x8 and as 4x4), kept. The
     * pair named is the first in the inputs' order (by name), so the message depends on the set. */
    for (size_t i = 0; i < npk && !rc; i++)
        for (size_t j = i + 1; j < npk && !rc; j++) {
            const pick *a = &pk[i], *b = &pk[j];
            if (a->t->collective != b->t->collective || a->t->ranks != b->t->ranks ||
                a->per_node == b->per_node ||
                (a->from != DPAS_TOPO_FROM_ASSUMED && b->from != DPAS_TOPO_FROM_ASSUMED))
                continue;
            const pick *seen = a->from == DPAS_TOPO_FROM_ASSUMED ? b : a,
                       *guess = a->from == DPAS_TOPO_FROM_ASSUMED ? a : b;
            rc = dpas__fail(err, DPAS_EINVAL, "gpus_per_node",
                            "%s:%d: %s on %lld ranks: its Rank lines put %lld ranks on each "
                            "host, but %s:%d: %s on %lld ranks names no hosts and would be read "
                            "as %lld per node: the files contradict each other; give "
                            "gpus_per_node G",
                            logs[seen->log]->origin, seen->t->header_line,
                            dpas_collective_name(seen->t->collective), (long long)seen->t->ranks,
                            (long long)seen->per_node, logs[guess->log]->origin,
                            guess->t->header_line, dpas_collective_name(guess->t->collective),
                            (long long)guess->t->ranks, (long long)guess->per_node);
        }
    /* one curve per collective and scale: several runs of one scale (tests of one collective
     * at one rank count and ranks per node, in one file or several) are merged, each size's
     * time the median over the runs that measured it, their spread kept (run_spread) */
    for (size_t i = 0; i < npk && !rc; i++) {
        if (pk[i].used)
            continue;
        const dpas_nccl_test *t = pk[i].t;
        size_t runs = 0, npts = 0;
        for (size_t j = i; j < npk; j++)
            if (!pk[j].used && pk[j].t->collective == t->collective && pk[j].t->ranks == t->ranks &&
                pk[j].per_node == pk[i].per_node)
                runs++, npts += pk[j].t->npoints;
        pt *all = malloc((npts ? npts : 1) * sizeof *all);
        size_t *run_of = malloc((npts ? npts : 1) * sizeof *run_of);
        if (!all || !run_of) {
            free(all), free(run_of);
            rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
            break;
        }
        size_t na = 0, r = 0;
        dpas_curve *cv = &m->curves[m->ncurves];
        for (size_t j = i; j < npk; j++) {
            const dpas_nccl_test *u = pk[j].t;
            if (pk[j].used || u->collective != t->collective || u->ranks != t->ranks ||
                pk[j].per_node != pk[i].per_node)
                continue;
            pk[j].used = 1;
            for (size_t q = 0; q < u->npoints; q++) {
                all[na] =
                    (pt){u->points[q].bytes, u->points[q].seconds, u->points[q].seconds_inplace};
                run_of[na++] = r;
            }
            r++;
        }
        const dpas_nccl_log *log = logs[pk[i].log];
        size_t wl = strlen(log->origin) + 24;
        char *where = malloc(wl);
        pt *merged = NULL;
        double *spread = NULL;
        size_t nm = 0;
        if (!where)
            rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        else
            snprintf(where, wl, "%s:%d: ", log->origin, t->header_line);
        if (!rc && runs > 1)
            rc = merge_runs(all, run_of, na, runs, &merged, &spread, &nm, err);
        if (!rc)
            rc = build_curve(cv, t->collective, t->ranks, pk[i].per_node, runs > 1 ? merged : all,
                             runs > 1 ? nm : na, where, err);
        free(where), free(all), free(run_of), free(merged);
        if (rc) {
            free(spread);
            break;
        }
        cv->test = t, cv->log = pk[i].log, cv->per_node_from = pk[i].from;
        cv->runs = runs;
        cv->run_spread = spread; /* sizes ascending, as the curve's (merge_runs sorts them) */
        for (size_t j = i; j < npk; j++)
            if (pk[j].t->collective == t->collective && pk[j].t->ranks == t->ranks &&
                pk[j].per_node == pk[i].per_node)
                peak_of(cv, pk[j].t);
        m->ncurves++;
    }
    free(pk);
    if (!rc && !m->ncurves)
        rc = dpas__fail(err, DPAS_EINVAL, "tests", "no test chosen");
    if (!rc)
        rc = fit_collectives(m, err);
    if (rc) {
        dpas_netmodel_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* Reads input i (its name in *name), and a hash of its bytes. */
typedef int (*read_fn)(const void *src, size_t i, const dpas_calib_options *opt,
                       dpas_nccl_log **out, uint64_t *hash, dpas_error *err);
/* The order of two inputs: by name, then (texts of one name) by content. */
typedef int (*order_fn)(const void *src, size_t i, size_t j);
/* Whether two inputs hold the same bytes (called when their hashes agree): 1 yes, 0 no, < 0 an
 * error reading them. */
typedef int (*same_fn)(const void *src, size_t i, size_t j, dpas_error *err);
typedef const char *(*name_fn)(const void *src, size_t i);

typedef struct input_kind {
    read_fn read;
    order_fn order;
    same_fn same;
    name_fn name;
} input_kind;

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* One input given twice is refused, whether by its name (the same path twice) or by its bytes
 * (a copy of a file under another name): one run counted twice would weigh its times twice in
 * the median of the runs of its scale (issue 27/29: `calibrate X X` merged X as two runs where
 * `cost --calibration X,X` refused it; the rule is the library's, for every front end). */
static int repeated(const input_kind *k, const void *src, const size_t *idx, const uint64_t *hash,
                    size_t n, dpas_error *err)
{
    char q[96], r[96];
    for (size_t i = 1; i < n; i++)
        if (!k->order(src, idx[i - 1], idx[i]) && hash[i - 1] == hash[i])
            return dpas__fail(err, DPAS_EINVAL, "calibration",
                              "calibration: %s is given twice; give each file once",
                              dpas__quote(k->name(src, idx[i]), q, sizeof q));
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (hash[i] != hash[j])
                continue;
            int same = k->same(src, idx[i], idx[j], err);
            if (same < 0)
                return same;
            if (same)
                return dpas__fail(err, DPAS_EINVAL, "calibration",
                                  "calibration: %s holds the same bytes as %s (one run given "
                                  "twice); give it once",
                                  dpas__quote(k->name(src, idx[j]), q, sizeof q),
                                  dpas__quote(k->name(src, idx[i]), r, sizeof r));
        }
    return 0;
}

static int read_all(const input_kind *k, const void *src, size_t n, const dpas_calib_options *opt,
                    dpas_netmodel **out, dpas_error *err)
{
    *out = NULL;
    if (n == 0)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "no file of nccl-tests output given");
    if (n > DPAS_CALIBRATE_MAX_FILES)
        return dpas__fail(err, DPAS_ERANGE, "calibration",
                          "%zu files given; a calibration reads at most %d", n,
                          DPAS_CALIBRATE_MAX_FILES);
    dpas_nccl_log **logs = calloc(n, sizeof *logs);
    size_t *idx = malloc(n * sizeof *idx);
    uint64_t *hash = malloc(n * sizeof *hash);
    if (!logs || !idx || !hash) {
        free(logs), free(idx), free(hash);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    /* The result depends on the set of inputs, never their order: they are read in one order
     * (by name, then content), so the tests' numbers, the curves and every fit are the same
     * for A,B and B,A. Equal inputs are refused (repeated), so no tie is left to order. */
    for (size_t i = 0; i < n; i++) { /* insertion sort: at most DPAS_CALIBRATE_MAX_FILES */
        size_t j = i;
        for (; j > 0 && k->order(src, idx[j - 1], i) > 0; j--)
            idx[j] = idx[j - 1];
        idx[j] = i;
    }
    int rc = 0;
    size_t done = 0;
    for (; done < n && !rc; done++)
        if ((rc = k->read(src, idx[done], opt, &logs[done], &hash[done], err)))
            break;
    if (!rc)
        rc = repeated(k, src, idx, hash, n, err);
    free(idx), free(hash);
    if (rc) {
        for (size_t j = 0; j < done && j < n; j++)
            dpas_nccl_log_free(logs[j]);
        free(logs);
        return rc;
    }
    return from_logs(logs, n, opt, out, err);
}

static int read_path(const void *src, size_t i, const dpas_calib_options *opt, dpas_nccl_log **out,
                     uint64_t *hash, dpas_error *err)
{
    const char *const *paths = src;
    char *text;
    size_t len;
    *out = NULL;
    int rc = dpas__read_file(paths[i], "", 16u << 20, &text, &len, err);
    if (rc)
        return rc;
    *hash = fnv1a(text, len);
    rc = dpas_nccl_read(text, len, paths[i], opt ? opt->collective : NULL, opt ? opt->ranks : 0,
                        out, err);
    free(text);
    return rc;
}

static int same_path(const void *src, size_t i, size_t j, dpas_error *err)
{
    const char *const *paths = src;
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    int rc = dpas__read_file(paths[i], "", 16u << 20, &a, &la, err);
    if (!rc)
        rc = dpas__read_file(paths[j], "", 16u << 20, &b, &lb, err);
    int same = !rc && la == lb && (!la || !memcmp(a, b, la));
    free(a), free(b);
    return rc ? rc : same;
}

static const char *name_path(const void *src, size_t i) { return ((const char *const *)src)[i]; }

typedef struct texts {
    const char *const *texts;
    const size_t *lens;
    const char *const *origins;
} texts;

static int read_text(const void *src, size_t i, const dpas_calib_options *opt, dpas_nccl_log **out,
                     uint64_t *hash, dpas_error *err)
{
    const texts *t = src;
    *hash = fnv1a(t->texts[i] ? t->texts[i] : "", t->texts[i] ? t->lens[i] : 0);
    return dpas_nccl_read(t->texts[i], t->lens[i], t->origins ? t->origins[i] : "text",
                          opt ? opt->collective : NULL, opt ? opt->ranks : 0, out, err);
}

static int same_text(const void *src, size_t i, size_t j, dpas_error *err)
{
    const texts *t = src;
    (void)err;
    size_t li = t->texts[i] ? t->lens[i] : 0, lj = t->texts[j] ? t->lens[j] : 0;
    return li == lj && (!li || !memcmp(t->texts[i], t->texts[j], li));
}

static const char *name_text(const void *src, size_t i)
{
    const texts *t = src;
    return t->origins ? t->origins[i] : "text";
}

static int order_path(const void *src, size_t i, size_t j)
{
    const char *const *paths = src;
    return strcmp(paths[i], paths[j]);
}

static int order_text(const void *src, size_t i, size_t j)
{
    const texts *t = src;
    int c = strcmp(t->origins ? t->origins[i] : "text", t->origins ? t->origins[j] : "text");
    if (c)
        return c;
    size_t li = t->lens[i], lj = t->lens[j];
    c = memcmp(t->texts[i] ? t->texts[i] : "", t->texts[j] ? t->texts[j] : "", li < lj ? li : lj);
    return c ? c : (li > lj) - (li < lj);
}

int dpas_netmodel_load_files(const char *const *paths, size_t npaths, const dpas_calib_options *opt,
                             dpas_netmodel **out, dpas_error *err)
{
    static const input_kind k = {read_path, order_path, same_path, name_path};
    return read_all(&k, paths, npaths, opt, out, err);
}

int dpas_netmodel_from_texts(const char *const *textv, const size_t *lens,
                             const char *const *origins, size_t n, const dpas_calib_options *opt,
                             dpas_netmodel **out, dpas_error *err)
{
    static const input_kind k = {read_text, order_text, same_text, name_text};
    texts t = {textv, lens, origins};
    return read_all(&k, &t, n, opt, out, err);
}

int dpas_netmodel_from_text(const char *text, size_t len, const char *origin,
                            const char *collective, int64_t ranks, dpas_netmodel **out,
                            dpas_error *err)
{
    dpas_calib_options opt = {.collective = collective, .ranks = ranks};
    return dpas_netmodel_from_texts(&text, &len, &origin, 1, &opt, out, err);
}

int dpas_netmodel_load(const char *path, const char *collective, int64_t ranks, dpas_netmodel **out,
                       dpas_error *err)
{
    dpas_calib_options opt = {.collective = collective, .ranks = ranks};
    return dpas_netmodel_load_files(&path, 1, &opt, out, err);
}

int dpas_netmodel_from_points_at(dpas_collective collective, dpas_scale at, const uint64_t *bytes,
                                 const double *seconds, size_t n, dpas_netmodel **out,
                                 dpas_error *err)
{
    *out = NULL;
    if (!dpas_collective_name(collective))
        return dpas__fail(err, DPAS_EINVAL, "collective", "unknown collective %d", collective);
    if (at.ranks < 1)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 1, got %lld",
                          (long long)at.ranks);
    if (at.per_node < 0 || at.per_node > at.ranks || (at.per_node && at.ranks % at.per_node))
        return dpas__fail(err, DPAS_EINVAL, "per_node",
                          "ranks per node must divide the ranks (%lld), got %lld",
                          (long long)at.ranks, (long long)at.per_node);
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
        p[i] = (pt){bytes[i], seconds[i], NAN};
    int rc = build_curve(m->curves, collective, at.ranks, at.per_node ? at.per_node : at.ranks, p,
                         n, "", err);
    free(p);
    if (rc) {
        free(m->curves), free(m);
        return rc;
    }
    m->ncurves = 1;
    m->curves[0].per_node_from = DPAS_TOPO_FROM_GIVEN;
    m->curves[0].runs = 1;
    if ((rc = fit_collectives(m, err))) {
        dpas_netmodel_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int dpas_netmodel_from_points(dpas_collective collective, int64_t ranks, const uint64_t *bytes,
                              const double *seconds, size_t n, dpas_netmodel **out, dpas_error *err)
{
    return dpas_netmodel_from_points_at(collective, (dpas_scale){ranks, 0}, bytes, seconds, n, out,
                                        err);
}
