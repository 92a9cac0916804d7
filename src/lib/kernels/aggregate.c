/* SPDX-License-Identifier: Apache-2.0 */
/* The aggregation entry points: options, the workspace, the pre-aggregation chain and each
 * rule's way through the kernels of kernels_coord.c, kernels_dist.c and kernels_iter.c, with
 * the non-finite policy of rowset.c (a gradient with a NaN or an Inf is Byzantine: excluded and
 * counted against f) and the instruction set of isa.c. The top of the kernels: nothing below
 * calls back into it. */
#include "kernels_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256

/* ---- options ---- */

/* Which rules take which option (the others refuse it when it is set). */
static const struct {
    const char *name;
    dpas_rule_id rules[3];
    int nrules; /* 0: every rule that is not itself a pre-aggregation */
} options[] = {
    {"m", {DPAS_RULE_MULTI_KRUM}, 1},
    {"iterations", {DPAS_RULE_GEOMETRIC_MEDIAN, DPAS_RULE_CENTERED_CLIPPING}, 2},
    {"tau", {DPAS_RULE_CENTERED_CLIPPING}, 1},
    {"tolerance", {DPAS_RULE_GEOMETRIC_MEDIAN}, 1},
    {"smoothing", {DPAS_RULE_GEOMETRIC_MEDIAN}, 1},
    {"start", {DPAS_RULE_GEOMETRIC_MEDIAN, DPAS_RULE_CENTERED_CLIPPING}, 2},
    {"idx", {DPAS_RULE_MONNA}, 1},
    {"nnm", {0}, 0},
    {"pre", {0}, 0},
    {"weights", {DPAS_RULE_MEAN, DPAS_RULE_MEDIAN, DPAS_RULE_GEOMETRIC_MEDIAN}, 3},
};
#define NOPTIONS (sizeof options / sizeof options[0])

int dpas_agg_option_applies(const dpas_rule *rule, const char *option)
{
    if (!rule || !option)
        return 0;
    static const char *everywhere[] = {"f", "threads", "isa", "generic", "workspace"};
    for (size_t i = 0; i < sizeof everywhere / sizeof everywhere[0]; i++)
        if (!strcmp(option, everywhere[i]))
            return 1;
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (strcmp(option, options[i].name))
            continue;
        if (!options[i].nrules)
            return !(rule->caps & DPAS_RULE_CAP_PREAGGREGATION);
        for (int k = 0; k < options[i].nrules; k++)
            if (options[i].rules[k] == rule->id)
                return 1;
        return 0;
    }
    return 0;
}

/* "multi_krum", "geometric_median and centered_clipping": the rules that take option i. */
static void option_takers(size_t i, char *buf, size_t cap)
{
    buf[0] = 0;
    for (int k = 0; k < options[i].nrules; k++) {
        const dpas_rule *r = NULL;
        for (size_t t = 0; t < dpas_rule_count() && !r; t++)
            if (dpas_rule_at(t)->id == options[i].rules[k])
                r = dpas_rule_at(t);
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%s%s",
                 k == 0                       ? ""
                 : k + 1 == options[i].nrules ? " and "
                                              : ", ",
                 r ? r->name : "?");
    }
}

/* An option that is set (nonzero) where the rule does not take it. */
static int check_applies(const dpas_rule *rule, const dpas_agg_opts *o, dpas_error *err)
{
    const int set[NOPTIONS] = {
        o->m != 0,        o->iterations != 0, o->tau != 0, o->tolerance != 0, o->smoothing != 0,
        o->start != NULL, o->idx != 0,        o->nnm != 0, o->npre != 0,      o->weights != NULL};
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (!set[i] || dpas_agg_option_applies(rule, options[i].name))
            continue;
        if (!options[i].nrules)
            return dpas__fail(err, DPAS_EINVAL, options[i].name,
                              "%s is a pre-aggregation itself: %s does not apply to it", rule->name,
                              options[i].name);
        char who[120];
        option_takers(i, who, sizeof who);
        return dpas__fail(err, DPAS_EINVAL, options[i].name,
                          "%s does not take the option %s (only %s take%s it)", rule->name,
                          options[i].name, who, options[i].nrules == 1 ? "s" : "");
    }
    return 0;
}

static int check_opts(const dpas_agg_opts *o, int dtype, dpas__kenv *env, dpas_error *err)
{
    int rc = dpas__isa_for(o, dtype, &env->isa, err);
    if (rc)
        return rc;
    env->threads = 1;
    env->ws = NULL;
    env->dest = NULL;
    env->alpha = NULL;
    env->inplace = 0;
    env->plan = NULL;
    if (!o)
        return 0;
    if (o->threads < 0 || o->threads > MAX_THREADS)
        return dpas__fail(err, DPAS_EINVAL, "threads", "threads must be 0 to %d, got %d",
                          MAX_THREADS, o->threads);
    env->threads = o->threads > 1 ? o->threads : 1;
    if (o->f < 0)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)o->f);
    if (o->m < 0)
        return dpas__fail(err, DPAS_EINVAL, "m", "m must be >= 0 (0: n - f), got %lld",
                          (long long)o->m);
    if (o->iterations < 0)
        return dpas__fail(err, DPAS_EINVAL, "iterations",
                          "iterations must be >= 0 (0: the "
                          "default), got %lld",
                          (long long)o->iterations);
    if (!(o->tau >= 0) || isinf(o->tau))
        return dpas__fail(err, DPAS_EINVAL, "tau",
                          "tau must be finite and >= 0 (0: adaptive), got %g", o->tau);
    if (!(o->tolerance >= 0) || isinf(o->tolerance))
        return dpas__fail(err, DPAS_EINVAL, "tolerance",
                          "tolerance must be finite and >= 0 (0: 1e-6), got %g", o->tolerance);
    if (!(o->smoothing >= 0) || isinf(o->smoothing))
        return dpas__fail(err, DPAS_EINVAL, "smoothing",
                          "smoothing must be finite and >= 0 (0: 1e-5), got %g", o->smoothing);
    if (o->generic != 0 && o->generic != 1)
        return dpas__fail(err, DPAS_EINVAL, "generic", "generic must be 0 or 1, got %d",
                          o->generic);
    if (o->nnm != 0 && o->nnm != 1)
        return dpas__fail(err, DPAS_EINVAL, "nnm", "nnm must be 0 or 1, got %d", o->nnm);
    if (o->idx < 0)
        return dpas__fail(err, DPAS_EINVAL, "idx", "idx must be >= 0, got %lld", (long long)o->idx);
    if (o->npre && !o->pre)
        return dpas__fail(err, DPAS_EINVAL, "pre", "npre = %zu but pre is NULL", o->npre);
    for (size_t i = 0; i < o->npre; i++) {
        const dpas_preagg *p = &o->pre[i];
        if (!p->rule || !(p->rule->caps & DPAS_RULE_CAP_PREAGGREGATION))
            return dpas__fail(err, DPAS_EINVAL, "pre",
                              "pre[%zu] is %s, which is not a pre-aggregation (nnm, bucketing, "
                              "clipping, arc)",
                              i, p->rule ? p->rule->name : "NULL");
        if (!(p->c >= 0) || isinf(p->c))
            return dpas__fail(err, DPAS_EINVAL, "c",
                              "pre[%zu] (%s): c must be finite and > 0 (0: 2), got %g", i,
                              p->rule->name, p->c);
        if (p->s < 0)
            return dpas__fail(err, DPAS_EINVAL, "s",
                              "pre[%zu] (%s): s must be >= 1 (0: 1), got %lld", i, p->rule->name,
                              (long long)p->s);
        if (p->own_f != 0 && p->own_f != 1)
            return dpas__fail(err, DPAS_EINVAL, "own_f",
                              "pre[%zu] (%s): own_f must be 0 or 1, got %d", i, p->rule->name,
                              p->own_f);
        if (p->f < 0 || (!p->own_f && p->f != 0))
            return dpas__fail(err, DPAS_EINVAL, "f",
                              "pre[%zu] (%s): f must be >= 0, and 0 unless own_f = 1 (its own f); "
                              "got %lld with own_f = %d",
                              i, p->rule->name, (long long)p->f, p->own_f);
        if ((p->c != 0 && strcmp(p->rule->name, "clipping")) ||
            ((p->s != 0 || p->seed != 0) && strcmp(p->rule->name, "bucketing")))
            return dpas__fail(err, DPAS_EINVAL,
                              p->c != 0   ? "c"
                              : p->s != 0 ? "s"
                                          : "seed",
                              "pre[%zu] (%s) does not take %s (c is clipping's, s and seed "
                              "bucketing's)",
                              i, p->rule->name,
                              p->c != 0   ? "c"
                              : p->s != 0 ? "s"
                                          : "seed");
    }
    return 0;
}

static int check_rows(const void *const *x, size_t n, size_t d, size_t esize, dpas_error *err)
{
    if (!x)
        return dpas__fail(err, DPAS_EINVAL, "x", "the gradients are NULL");
    for (size_t i = 0; d && i < n; i++) {
        if (!x[i])
            return dpas__fail(err, DPAS_EINVAL, "x", "gradient %zu is NULL", i);
        if ((uintptr_t)x[i] % esize)
            return dpas__fail(err, DPAS_EINVAL, "x",
                              "gradient %zu is not aligned to its %zu-byte elements (address "
                              "%% %zu = %zu): copy it to an aligned buffer",
                              i, esize, esize, (size_t)((uintptr_t)x[i] % esize));
    }
    return 0;
}

/* ---- coordinate-wise rules ---- */

static int coord_once(const dpas__kenv *env, const dpas_rule *rule, const void *const *x, size_t n,
                      size_t d, size_t f, void *out, int *nonfinite, dpas_error *err)
{
    switch (rule->id) {
    case DPAS_RULE_MEAN: return dpas__mean(env, x, NULL, n, d, out, nonfinite, err);
    case DPAS_RULE_SIGN_MAJORITY: return dpas__sign(env, x, n, d, out, nonfinite, err);
    case DPAS_RULE_MEDIAN:
        return dpas__columns(env, x, n, d, DPAS__COL_MEDIAN, 0, out, nonfinite, err);
    case DPAS_RULE_TRIMMED_MEAN:
        return dpas__columns(env, x, n, d, DPAS__COL_TRIM, f, out, nonfinite, err);
    default: /* meamed */
        return dpas__columns(env, x, n, d, DPAS__COL_WINDOW, n - f, out, nonfinite, err);
    }
}

/* Optimistic: the kernel notices a non-finite value on its way (an input, or a float64 sum that
 * overflowed); only then are the rows scanned, and the rule run again on the finite ones, or
 * (no row is non-finite: an overflow) on scaled values. */
static int coord_rule(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                      void *out, dpas_error *err)
{
    int nonfinite = 0;
    int rc = coord_once(env, rule, s->rows, s->n, d, s->f, out, &nonfinite, err);
    if (rc || !nonfinite)
        return rc;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    unsigned char *bad = dpas__ws_alloc(env->ws, s->n, 1);
    dpas__rowset a;
    if (!bad) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    size_t k = dpas__nonfinite_rows(env, s->rows, s->n, d, bad);
    rc = dpas__too_many_nonfinite(bad, s->n, k, s->f, rule, err);
    if (!rc)
        rc = dpas__rowset_alive(env->ws, s, bad, k, &a, err);
    if (!rc && k)
        rc = coord_once(env, rule, a.rows, a.n, d, a.f, out, &nonfinite, err);
    if (!rc && nonfinite) { /* every row finite, a float64 sum overflowed */
        if (rule->id == DPAS_RULE_SIGN_MAJORITY)
            rc = dpas__fail(err, DPAS_EINVAL, "x", "sign_majority met a non-finite value");
        else
            rc = dpas__coord_scaled(env, a.rows, a.n, d,
                                    rule->id == DPAS_RULE_MEDIAN         ? DPAS__COL_MEDIAN
                                    : rule->id == DPAS_RULE_TRIMMED_MEAN ? DPAS__COL_TRIM
                                                                         : DPAS__COL_WINDOW,
                                    rule->id == DPAS_RULE_TRIMMED_MEAN ? a.f : a.n - a.f,
                                    rule->id == DPAS_RULE_MEAN, out, err);
    }
done:
    dpas__ws_release(env->ws, mk);
    return rc;
}

/* ---- the rules that select from the distances ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The aggregate of the selected rows sel[0..nsel) (indices into x): one row as it is, several
 * averaged, bulyan's coordinate phase with a window of w values. A selected row that is not
 * finite is an error (the selection was not made from these rows' distances). */
static int aggregate_rows(const dpas__kenv *env, const dpas_rule *rule, const void *const *x,
                          size_t d, const int64_t *sel, size_t nsel, size_t w, void *out,
                          dpas_error *err)
{
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    int64_t *idx = dpas__ws_alloc(env->ws, nsel, sizeof *idx);
    size_t *ri = dpas__ws_alloc(env->ws, nsel, sizeof *ri);
    const void **rows = dpas__ws_alloc(env->ws, nsel, sizeof *rows);
    int rc = 0, nonfinite = 0;
    if (!idx || !ri || !rows) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    memcpy(idx, sel, nsel * sizeof *idx);
    qsort(idx, nsel, sizeof *idx, cmp_i64); /* sums in index order, whatever the selection order */
    for (size_t t = 0; t < nsel; t++) {
        ri[t] = (size_t)idx[t];
        rows[t] = x[idx[t]];
    }
    if (rule->id == DPAS_RULE_BULYAN)
        rc = dpas__columns(env, rows, nsel, d, DPAS__COL_WINDOW, w, out, &nonfinite, err);
    else /* the mean of one row is the row, and its check */
        rc = dpas__mean(env, x, ri, nsel, d, out, &nonfinite, err);
    if (!rc && nonfinite) {
        unsigned char *bad = dpas__ws_alloc(env->ws, nsel, 1);
        if (!bad)
            rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        else if (dpas__nonfinite_rows(env, rows, nsel, d, bad))
            rc = dpas__fail(err, DPAS_EINVAL, "selected",
                            "a selected gradient has a NaN or Inf coordinate: select from the "
                            "distances of these gradients");
        else /* float64: the sum overflowed */
            rc = dpas__coord_scaled(env, rows, nsel, d, DPAS__COL_WINDOW, w,
                                    rule->id != DPAS_RULE_BULYAN, out, err);
    }
done:
    dpas__ws_release(env->ws, mk);
    return rc;
}

/* D of the rows, the rows to exclude, the selection with f' = f - k, its aggregate. selected
 * (may be NULL) gets the indices into s's rows. */
static int select_rule(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s,
                       size_t d, int64_t m, void *out, int64_t *selected, size_t *nselected,
                       dpas_error *err)
{
    size_t n = s->n, nsel = 0, k = 0;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    double *D = dpas__ws_zalloc(env->ws, n * n, sizeof *D);
    unsigned char *bad = dpas__ws_alloc(env->ws, n, 1);
    int64_t *sel = selected ? selected : dpas__ws_alloc(env->ws, n, sizeof *sel);
    int rc = 0;
    if (!D || !bad || !sel) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory: distances of %zu gradients", n);
        goto done;
    }
    rc = dpas__distances(env, rule, s, d, D, bad, &k, err);
    if (rc)
        goto done;
    for (size_t i = 0; i < n; i++)
        bad[i] = !bad[i]; /* now: alive */
    rc = dpas__select(env, rule, D, n, bad, s->f - k, m, 0, sel, &nsel, err);
    /* bulyan's window: the n' - 4f' of its n' - 2f' selected values closest to their median */
    if (!rc)
        rc = aggregate_rows(env, rule, s->rows, d, sel, nsel,
                            rule->id == DPAS_RULE_BULYAN ? nsel - 2 * (s->f - k) : 0, out, err);
    if (!rc && nselected)
        *nselected = nsel;
done:
    dpas__ws_release(env->ws, mk);
    return rc;
}

/* ---- iterative rules ---- */

/* Optimistic: the median pass or the first distances notice a non-finite row; only then are
 * the rows scanned and the rule run on the finite ones. Float64 rows are taken at half their
 * value (no difference of two of them overflows). */
static int iter_rule(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                     const dpas_agg_opts *o, void *out, dpas_error *err)
{
    int (*run)(const dpas__kenv *, const void *const *, size_t, size_t, const dpas_agg_opts *,
               double, void *, int *, dpas_error *) =
        rule->id == DPAS_RULE_GEOMETRIC_MEDIAN ? dpas__geomed : dpas__centered_clipping;
    const double scale = env->isa->dtype == DPAS_FLOAT64 ? 0.5 : 1.0;
    int nonfinite = 0;
    int rc = run(env, s->rows, s->n, d, o, scale, out, &nonfinite, err);
    if (rc || !nonfinite)
        return rc;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    unsigned char *bad = dpas__ws_alloc(env->ws, s->n, 1);
    dpas__rowset a;
    if (!bad) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    size_t k = dpas__nonfinite_rows(env, s->rows, s->n, d, bad);
    rc = dpas__too_many_nonfinite(bad, s->n, k, s->f, rule, err);
    if (!rc)
        rc = dpas__rowset_alive(env->ws, s, bad, k, &a, err);
    if (!rc)
        rc = run(env, a.rows, a.n, d, o, scale, out, &nonfinite, err);
    if (!rc && nonfinite)
        rc = dpas__fail(err, DPAS_EINVAL, "x", "%s met a non-finite value among finite rows",
                        rule->name);
done:
    dpas__ws_release(env->ws, mk);
    return rc;
}

/* ---- the entry points ---- */

static int rule_on(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                   const dpas_agg_opts *o, void *out, int64_t *selected, size_t *nselected,
                   dpas_error *err)
{
    if (rule->caps & DPAS_RULE_CAP_PREAGGREGATION)
        return dpas__fail(err, DPAS_EINVAL, "rule",
                          "%s is a pre-aggregation, not a rule: set opts.nnm = 1 or name it in "
                          "opts.pre with the rule to run on its output, or call "
                          "dpas_preaggregate",
                          rule->name);
    int rc = dpas__check_rule(rule, s->n, (int64_t)s->f, err);
    if (rc)
        return rc;
    switch (rule->id) {
    case DPAS_RULE_MEAN:
    case DPAS_RULE_MEDIAN:
    case DPAS_RULE_TRIMMED_MEAN:
    case DPAS_RULE_MEAMED:
    case DPAS_RULE_SIGN_MAJORITY: return coord_rule(env, rule, s, d, out, err);
    case DPAS_RULE_KRUM:
    case DPAS_RULE_MULTI_KRUM:
    case DPAS_RULE_BULYAN:
    case DPAS_RULE_BRUTE:
    case DPAS_RULE_SMEA:
        return select_rule(env, rule, s, d, o ? o->m : 0, out, selected, nselected, err);
    case DPAS_RULE_GEOMETRIC_MEDIAN:
    case DPAS_RULE_CENTERED_CLIPPING: return iter_rule(env, rule, s, d, o, out, err);
    case DPAS_RULE_MONNA:
        return dpas__monna(env, rule, s, d, o ? o->idx : 0, out, selected, nselected, err);
    case DPAS_RULE_CAF: return dpas__caf(env, rule, s, d, out, err);
    default: break;
    }
    return dpas__fail(err, DPAS_EINVAL, "rule", "no kernel for %s", rule->name);
}

/* ---- weights ---- */

typedef struct wpair {
    double v, w;
} wpair;

static int cmp_wpair(const void *a, const void *b)
{
    double x = ((const wpair *)a)->v, y = ((const wpair *)b)->v;
    return (x > y) - (x < y);
}

/* The weighted median of p[0..m) (weights > 0, total W), sorted here: the first value at which
 * the running weight passes W / 2; where it reaches W / 2 exactly, the half sum of that value
 * and the next (a/2 + b/2: no overflow). */
static double weighted_median_of(wpair *p, size_t m, double W)
{
    if (m <= 32) {
        for (size_t a = 1; a < m; a++)
            for (size_t c = a; c > 0 && p[c].v < p[c - 1].v; c--) {
                wpair t = p[c];
                p[c] = p[c - 1], p[c - 1] = t;
            }
    } else {
        qsort(p, m, sizeof *p, cmp_wpair);
    }
    double cum = 0.0, half = W / 2;
    for (size_t k = 0; k < m; k++) {
        cum += p[k].w;
        if (cum > half)
            return p[k].v;
        if (cum == half && k + 1 < m)
            return p[k].v / 2 + p[k + 1].v / 2;
    }
    return p[m - 1].v;
}

/* out[t] = the weighted median of the m rows' coordinate t (weights w > 0). */
static int weighted_median(const dpas__kenv *env, const void *const *x, const double *w, size_t m,
                           size_t d, void *out, dpas_error *err)
{
    wpair *p = dpas__ws_alloc(env->ws, m ? m : 1, sizeof *p);
    if (!p)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    double W = 0.0;
    for (size_t i = 0; i < m; i++)
        W += w[i];
    const int f64 = env->isa->dtype == DPAS_FLOAT64;
    for (size_t t = 0; t < d; t++) {
        for (size_t i = 0; i < m; i++)
            p[i] = (wpair){f64 ? ((const double *)x[i])[t] : ((const float *)x[i])[t], w[i]};
        double v = weighted_median_of(p, m, W);
        if (f64)
            ((double *)out)[t] = v;
        else
            ((float *)out)[t] = (float)v;
    }
    return 0;
}

/* A rule in its weighted form (opts.weights): mean, median or geometric_median, on the finite
 * rows of positive weight, their weights scaled by the power of two that brings the largest
 * into [1, 2) (exact; their sum then fits a double for any n). */
static int weighted_rule(dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                         const dpas_agg_opts *o, void *out, dpas_error *err)
{
    const double *w = o->weights;
    if (o->nnm || o->npre)
        return dpas__fail(err, DPAS_EINVAL, "weights",
                          "weights with pre-aggregations: the rows they make are not the "
                          "caller's rows, whose weights these are (give weights or pre, not both)");
    for (size_t i = 0; i < s->n; i++)
        if (!isfinite(w[i]) || w[i] < 0)
            return dpas__fail(err, DPAS_EINVAL, "weights",
                              "weights must be finite and >= 0: weight %zu is %g", i, w[i]);
    int rc = dpas__check_rule(rule, s->n, (int64_t)s->f, err);
    if (rc)
        return rc;
    unsigned char *bad = dpas__ws_alloc(env->ws, s->n ? s->n : 1, 1);
    double *wa = dpas__ws_alloc(env->ws, s->n ? s->n : 1, sizeof *wa);
    const void **rows = dpas__ws_alloc(env->ws, s->n ? s->n : 1, sizeof *rows);
    if (!bad || !wa || !rows)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    size_t k = dpas__nonfinite_rows(env, s->rows, s->n, d, bad);
    if ((rc = dpas__too_many_nonfinite(bad, s->n, k, s->f, rule, err)))
        return rc;
    size_t m = 0;
    double top = 0.0;
    for (size_t i = 0; i < s->n; i++)
        if (!bad[i] && w[s->idx[i]] > 0)
            top = fmax(top, w[s->idx[i]]);
    if (!(top > 0))
        return dpas__fail(err, DPAS_EINVAL, "weights",
                          "the weights of the %zu finite rows are all 0: %s has nothing to "
                          "weigh",
                          s->n - k, rule->name);
    int e = ilogb(top); /* scaled by a power of two, exactly: integer weights stay integers in
                         * ratio, and a running sum reaches half the total where it should */
    for (size_t i = 0; i < s->n; i++)
        if (!bad[i] && w[s->idx[i]] > 0) {
            rows[m] = s->rows[i];
            wa[m++] = ldexp(w[s->idx[i]], -e);
        }
    if (!d)
        return 0;
    if (rule->id == DPAS_RULE_MEAN)
        return dpas__weighted_mean(env, rows, m, d, wa, out, err);
    if (rule->id == DPAS_RULE_MEDIAN)
        return weighted_median(env, rows, wa, m, d, out, err);
    /* geometric_median: from the weighted coordinate-wise median unless a start is given */
    dpas_agg_opts go = *o;
    go.weights = NULL;
    if (!go.start) {
        void *start = dpas__ws_alloc(env->ws, d, env->isa->esize);
        if (!start)
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        if ((rc = weighted_median(env, rows, wa, m, d, start, err)))
            return rc;
        go.start = start;
    }
    env->alpha = wa;
    int nonfinite = 0;
    const double scale = env->isa->dtype == DPAS_FLOAT64 ? 0.5 : 1.0;
    rc = dpas__geomed(env, rows, m, d, &go, scale, out, &nonfinite, err);
    env->alpha = NULL;
    if (!rc && nonfinite)
        rc = dpas__fail(err, DPAS_EINVAL, "x", "%s met a non-finite value among finite rows",
                        rule->name);
    return rc;
}

/* The caller's rows as the first rowset. */
static int rowset_of(dpas__ws *ws, const void *const *x, size_t n, const dpas_agg_opts *o,
                     dpas__rowset *s, dpas_error *err)
{
    int rc = dpas__rowset_alloc(ws, n, s, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        s->rows[i] = x[i];
        s->idx[i] = i;
    }
    s->n = n;
    s->f = (size_t)(o ? o->f : 0);
    return 0;
}

int dpas_aggregate_typed(const dpas_rule *rule, const void *const *x, dpas_dtype dtype, size_t n,
                         size_t d, const dpas_agg_opts *o, void *out, int64_t *selected,
                         size_t *nselected, dpas_error *err)
{
    if (nselected)
        *nselected = 0;
    if (!rule || !out)
        return dpas__fail(err, DPAS_EINVAL, "rule", "aggregate needs a rule, rows and an output");
    dpas__kenv env;
    int rc = check_opts(o, dtype, &env, err);
    if (!rc)
        rc = check_rows(x, n, d, env.isa->esize, err);
    if (!rc && o)
        rc = check_applies(rule, o, err);
    if (!rc && n < 1)
        rc = dpas__check_rule(rule, n, o ? o->f : 0, err);
    if (rc)
        return rc;
    int own = 0;
    if ((rc = dpas__ws_begin(o ? o->workspace : NULL, &env.ws, &own, err)))
        return rc;
    dpas__rowset s;
    rc = rowset_of(env.ws, x, n, o, &s, err);
    if (!rc && o && o->weights) { /* the weighted forms (no selection, no pre-aggregation) */
        if (!(rc = weighted_rule(&env, rule, &s, d, o, out, err)) && nselected)
            *nselected = 0;
        dpas__ws_end(env.ws, own);
        return rc;
    }
    /* clipping or ARC last before the mean: fused, the rows read once more and nothing written
     * (the same arithmetic as the two steps: bit-identical) */
    dpas__clip_plan plan = {0, NULL};
    if (!rc && o && (o->nnm || o->npre)) {
        if (rule->id == DPAS_RULE_MEAN && o->npre)
            env.plan = &plan;
        rc = dpas__run_chain(&env, o, &s, d, err);
        env.plan = NULL;
    }
    int64_t *sel = NULL;
    size_t nsel = 0;
    if (!rc && selected && !(sel = dpas__ws_alloc(env.ws, s.n ? s.n : 1, sizeof *sel)))
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    int fused = 0;
    if (!rc && plan.set && !(rc = dpas__check_rule(rule, s.n, (int64_t)s.f, err))) {
        int nonfinite = 0;
        rc = dpas__clipped_mean(&env, s.rows, plan.factor, s.n, d, out, &nonfinite, err);
        fused = !nonfinite;
        if (!rc && nonfinite) /* a float64 sum overflowed: the two steps, as without fusing */
            rc = dpas__clip_apply(&env, &s, d, plan.factor, err);
    }
    if (!rc && !fused)
        rc = rule_on(&env, rule, &s, d, o, out, sel, &nsel, err);
    if (!rc && selected) { /* back to the caller's indices; none for merged rows (buckets) */
        int merged = 0;
        for (size_t t = 0; t < nsel; t++)
            merged |= s.idx[sel[t]] == SIZE_MAX;
        for (size_t t = 0; t < nsel && !merged; t++)
            selected[t] = (int64_t)s.idx[sel[t]];
        if (nselected)
            *nselected = merged ? 0 : nsel;
    }
    dpas__ws_end(env.ws, own);
    return rc;
}

int dpas_aggregate(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                   const dpas_agg_opts *o, float *out, int64_t *selected, size_t *nselected,
                   dpas_error *err)
{
    return dpas_aggregate_typed(rule, (const void *const *)x, DPAS_FLOAT32, n, d, o, out, selected,
                                nselected, err);
}

int dpas_aggregate_f64(const dpas_rule *rule, const double *const *x, size_t n, size_t d,
                       const dpas_agg_opts *o, double *out, int64_t *selected, size_t *nselected,
                       dpas_error *err)
{
    return dpas_aggregate_typed(rule, (const void *const *)x, DPAS_FLOAT64, n, d, o, out, selected,
                                nselected, err);
}

int dpas_nnm(const float *const *x, size_t n, size_t d, const dpas_agg_opts *o, float *const *out,
             dpas_error *err)
{
    const dpas_rule *nnm;
    dpas__kenv env;
    int rc = dpas_rule_find("nnm", NULL, &nnm, err);
    if (!rc)
        rc = check_opts(o, DPAS_FLOAT32, &env, err);
    if (!rc)
        rc = check_rows((const void *const *)x, n, d, sizeof(float), err);
    if (!rc && !out)
        rc = dpas__fail(err, DPAS_EINVAL, "out", "dpas_nnm needs n output rows");
    if (!rc && o &&
        (o->m || o->iterations || o->tau != 0 || o->tolerance != 0 || o->smoothing != 0 ||
         o->start || o->idx || o->nnm || o->npre))
        rc = dpas__fail(err, DPAS_EINVAL, "opts",
                        "dpas_nnm takes f, threads, isa and workspace only");
    if (!rc)
        rc = dpas__check_rule(nnm, n, o ? o->f : 0, err);
    if (rc)
        return rc;
    int own = 0;
    if ((rc = dpas__ws_begin(o ? o->workspace : NULL, &env.ws, &own, err)))
        return rc;
    dpas__rowset s, mixed;
    rc = rowset_of(env.ws, (const void *const *)x, n, o, &s, err);
    if (!rc) {
        dpas_preagg p = {nnm, 0, 0, 0, 0, 0};
        rc = dpas__pre_step(&env, &p, &s, d, &mixed, err);
    }
    if (!rc) {
        size_t t = 0;
        for (size_t i = 0; i < n; i++) {
            if (t < mixed.n && mixed.idx[t] == i)
                memcpy(out[i], mixed.rows[t++], d * sizeof(float));
            else
                for (size_t j = 0; j < d; j++)
                    out[i][j] = NAN;
        }
    }
    dpas__ws_end(env.ws, own);
    return rc;
}

typedef struct addr_row {
    uintptr_t at;
    size_t i;
} addr_row;

static int cmp_addr(const void *a, const void *b)
{
    const addr_row *p = a, *q = b;
    return p->at < q->at ? -1 : p->at > q->at ? 1 : (p->i > q->i) - (p->i < q->i);
}

/* The output rows against the input rows: each either apart from every input row or the input
 * row of its own index (in place: *inplace = 1); anything else (an output row that is another
 * row's input, or overlaps one) is refused, as the steps would read what they wrote. */
static int check_inplace(const void *const *x, void *const *out, size_t n, size_t len, int *inplace,
                         dpas_error *err)
{
    *inplace = 0;
    addr_row *in = malloc(n * sizeof *in);
    if (!in)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: %zu row addresses", n);
    for (size_t i = 0; i < n; i++)
        in[i] = (addr_row){(uintptr_t)x[i], i};
    qsort(in, n, sizeof *in, cmp_addr);
    int rc = 0;
    for (size_t o = 0; o < n && !rc; o++) {
        uintptr_t a = (uintptr_t)out[o];
        /* the input rows starting in (a - len, a + len) overlap it */
        size_t lo = 0, hi = n;
        uintptr_t from = a > len ? a - len + 1 : 0;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (in[mid].at < from)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t t = lo; t < n && in[t].at < a + len && !rc; t++) {
            if (in[t].at == a && in[t].i == o) {
                *inplace = 1;
                continue;
            }
            rc = dpas__fail(err, DPAS_EINVAL, "out",
                            "output row %zu %s input row %zu: in place, output row i must be "
                            "input row i itself and the rows distinct",
                            o, in[t].at == a ? "is" : "overlaps", in[t].i);
        }
    }
    free(in);
    return rc;
}

/* Output: with bucketing in the chain, its rows (nout of them); otherwise n rows, those of
 * the non-finite gradients NaN (so that a rule after them counts them against f again). */
int dpas_preaggregate_typed(const void *const *x, dpas_dtype dtype, size_t n, size_t d,
                            const dpas_agg_opts *o, void *const *out, size_t *nout, dpas_error *err)
{
    if (nout)
        *nout = 0;
    dpas__kenv env;
    int rc = check_opts(o, dtype, &env, err);
    if (!rc)
        rc = check_rows(x, n, d, env.isa->esize, err);
    if (!rc && (!out || !nout))
        rc = dpas__fail(err, DPAS_EINVAL, "out", "preaggregate needs n output rows and nout");
    if (!rc && !(o && (o->nnm || o->npre)))
        rc = dpas__fail(err, DPAS_EINVAL, "pre",
                        "preaggregate needs a pre-aggregation (opts.pre or opts.nnm)");
    if (!rc && (o->m || o->iterations || o->tau != 0 || o->tolerance != 0 || o->smoothing != 0 ||
                o->start || o->idx))
        rc = dpas__fail(err, DPAS_EINVAL, "opts",
                        "preaggregate takes f, threads, isa, workspace, nnm and pre only");
    if (!rc && n < 1)
        rc =
            dpas__fail(err, DPAS_EINVAL, "n", "pre-aggregation needs n >= 1 gradients, got %zu", n);
    for (size_t i = 0; !rc && d && i < n; i++)
        if (!out[i])
            rc = dpas__fail(err, DPAS_EINVAL, "out", "output row %zu is NULL", i);
    if (!rc && d)
        rc = check_inplace(x, out, n, d * env.isa->esize, &env.inplace, err);
    if (rc)
        return rc;
    int own = 0, merged = 0;
    if ((rc = dpas__ws_begin(o->workspace, &env.ws, &own, err)))
        return rc;
    dpas__rowset s;
    rc = rowset_of(env.ws, x, n, o, &s, err);
    env.dest = out; /* the last step writes into the caller's rows */
    if (!rc)
        rc = dpas__run_chain(&env, o, &s, d, err);
    for (size_t t = 0; !rc && t < s.n; t++)
        merged |= s.idx[t] == SIZE_MAX;
    const size_t es = env.isa->esize;
    if (!rc && merged) {
        for (size_t t = 0; t < s.n; t++)
            if (s.rows[t] != out[t])
                memcpy(out[t], s.rows[t], d * es);
        *nout = s.n;
    } else if (!rc) {
        for (size_t i = 0, t = 0; i < n; i++) {
            if (t < s.n && s.idx[t] == i) {
                if (s.rows[t] != out[i])
                    memcpy(out[i], s.rows[t], d * es);
                t++;
                continue;
            }
            for (size_t j = 0; j < d; j++)
                if (dtype == DPAS_FLOAT64)
                    ((double *)out[i])[j] = NAN;
                else
                    ((float *)out[i])[j] = NAN;
        }
        *nout = n;
    }
    dpas__ws_end(env.ws, own);
    return rc;
}

/* ---- batches ---- */

/* The error of set b, its message prefixed with the set's index (the field stays the same). */
static int batch_fail(int rc, size_t b, size_t batch, dpas_error *err)
{
    if (err && batch > 1) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "set %zu of the batch of %zu: %s", b, batch, err->message);
        memcpy(err->message, msg, sizeof msg);
    }
    return rc;
}

/* Set b's n row pointers base + b set_step + i row_step into rows. */
static void batch_rows(const void *base, size_t b, size_t n, ptrdiff_t set_step, ptrdiff_t row_step,
                       const void **rows)
{
    const char *p = (const char *)base + (ptrdiff_t)b * set_step;
    for (size_t i = 0; i < n; i++)
        rows[i] = p + (ptrdiff_t)i * row_step;
}

int dpas_aggregate_batch(const dpas_rule *rule, const void *base, dpas_dtype dtype, size_t batch,
                         size_t n, size_t d, ptrdiff_t set_step, ptrdiff_t row_step,
                         const dpas_agg_opts *o, void *out, ptrdiff_t out_step, dpas_error *err)
{
    if (!base || !out)
        return dpas__fail(err, DPAS_EINVAL, "x", "aggregate_batch needs rows and an output");
    const void **rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: %zu row pointers", n);
    int rc = 0;
    for (size_t b = 0; !rc && b < batch; b++) {
        batch_rows(base, b, n, set_step, row_step, rows);
        rc = dpas_aggregate_typed(rule, rows, dtype, n, d, o, (char *)out + (ptrdiff_t)b * out_step,
                                  NULL, NULL, err);
        if (rc)
            batch_fail(rc, b, batch, err);
    }
    free(rows);
    return rc;
}

int dpas_preaggregate_batch(const void *base, dpas_dtype dtype, size_t batch, size_t n, size_t d,
                            ptrdiff_t set_step, ptrdiff_t row_step, const dpas_agg_opts *o,
                            void *out, ptrdiff_t out_set_step, ptrdiff_t out_row_step, size_t *nout,
                            dpas_error *err)
{
    if (nout)
        *nout = 0;
    if (!base || !out || !nout)
        return dpas__fail(err, DPAS_EINVAL, "x",
                          "preaggregate_batch needs rows, an output and nout");
    const void **rows = malloc(2 * (n ? n : 1) * sizeof *rows);
    if (!rows)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: %zu row pointers", n);
    void **orows = (void **)(rows + (n ? n : 1));
    int rc = 0;
    size_t got = 0;
    for (size_t b = 0; !rc && b < batch; b++) {
        batch_rows(base, b, n, set_step, row_step, rows);
        batch_rows(out, b, n, out_set_step, out_row_step, (const void **)orows);
        rc = dpas_preaggregate_typed(rows, dtype, n, d, o, orows, &got, err);
        if (rc)
            batch_fail(rc, b, batch, err);
    }
    free(rows);
    if (!rc)
        *nout = got;
    return rc;
}

void dpas_pairwise_sqdist_add(const float *const *x, size_t n, size_t d, double *D)
{
    const dpas__isa *best = dpas__generic_of(DPAS_FLOAT32);
    dpas__isa_for(NULL, DPAS_FLOAT32, &best, NULL); /* the best this CPU has: cannot fail */
    dpas__kenv env = {best, 1, NULL, NULL, NULL, 0, NULL};
    int own = 0;
    if (!dpas__ws_begin(NULL, &env.ws, &own, NULL) &&
        !dpas__sqdist(&env, (const void *const *)x, n, d, 1.0, D, NULL)) {
        dpas__ws_end(env.ws, own);
        return;
    }
    dpas__ws_end(env.ws, own);
    /* no memory for the chunk buffers: pair by pair, in the same lanes (the sum over the
     * coordinates in one chunk instead of several: equal to rounding) */
    const dpas__isa *gen = dpas__generic_of(DPAS_FLOAT32);
    for (size_t i = 0; i < n; i++)
        for (size_t k = i + 1; k < n; k++) {
            const void *pair[2] = {x[i], x[k]};
            double acc[DPAS__LANES] = {0};
            gen->sqdist(pair, 2, 0, d, 1.0, acc);
            double v = dpas__lanes_sum(acc);
            D[i * n + k] += v;
            D[k * n + i] += v;
        }
}

/* Rows of D whose distances to every other row are non-finite are the non-finite rows; any
 * other non-finite entry means D did not come from dpas_pairwise_sqdist_add. With one row
 * nothing can be told from D: dpas_aggregate_selected checks the row it averages. */
int dpas_select(const dpas_rule *rule, const double *D, size_t n, const dpas_agg_opts *o,
                int64_t *selected, size_t *nselected, dpas_error *err)
{
    if (nselected)
        *nselected = 0;
    if (!rule || !D || !selected || !nselected)
        return dpas__fail(err, DPAS_EINVAL, "rule", "select needs a rule, D and outputs");
    dpas__kenv env;
    int rc = check_opts(o, DPAS_FLOAT32, &env, err);
    if (!rc && o)
        rc = check_applies(rule, o, err);
    if (!rc)
        rc = dpas__check_rule(rule, n, o ? o->f : 0, err);
    if (rc)
        return rc;
    if (o && (o->nnm || o->npre))
        return dpas__fail(err, DPAS_EINVAL, "nnm",
                          "pre-aggregations change the gradients themselves: "
                          "dpas_select cannot apply them to D; use "
                          "dpas_aggregate");
    if (!(rule->caps & DPAS_RULE_CAP_SELECTS))
        return dpas__fail(err, DPAS_EINVAL, "rule",
                          "%s selects nothing: only krum, multi_krum, bulyan, brute, monna and "
                          "smea select",
                          rule->name);
    const size_t f = (size_t)(o ? o->f : 0);
    int own = 0;
    if ((rc = dpas__ws_begin(o ? o->workspace : NULL, &env.ws, &own, err)))
        return rc;
    unsigned char *bad = dpas__ws_zalloc(env.ws, n, 1);
    if (!bad) {
        dpas__ws_end(env.ws, own);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n && n > 1; i++) {
        size_t nf = 0;
        for (size_t j = 0; j < n; j++)
            nf += j != i && !isfinite(D[i * n + j]);
        bad[i] = nf == n - 1;
        k += bad[i];
    }
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t j = 0; j < n && !rc; j++)
            if (!bad[i] && !bad[j] && !isfinite(D[i * n + j]))
                rc = dpas__fail(err, DPAS_EINVAL, "D",
                                "D[%zu][%zu] is not finite but rows %zu and %zu have finite "
                                "distances to others: not a matrix of squared distances",
                                i, j, i, j);
    if (!rc)
        rc = dpas__too_many_nonfinite(bad, n, k, f, rule, err);
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            bad[i] = !bad[i];
        rc = dpas__select(&env, rule, D, n, bad, f - k, o ? o->m : 0, o ? o->idx : 0, selected,
                          nselected, err);
    }
    dpas__ws_end(env.ws, own);
    return rc;
}

int dpas_aggregate_selected(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, const int64_t *selected, size_t nsel,
                            float *out, dpas_error *err)
{
    if (!rule || !out || !selected)
        return dpas__fail(err, DPAS_EINVAL, "rule",
                          "aggregate_selected needs a rule, a selection "
                          "and an output");
    if (!nsel || nsel > n)
        return dpas__fail(err, DPAS_EINVAL, "selected", "a selection needs 1 to n indices, got %zu",
                          nsel);
    dpas__kenv env;
    int rc = check_opts(o, DPAS_FLOAT32, &env, err);
    if (!rc)
        rc = check_rows((const void *const *)x, n, d, sizeof(float), err);
    if (!rc && o)
        rc = check_applies(rule, o, err);
    if (rc)
        return rc;
    int own = 0;
    if ((rc = dpas__ws_begin(o ? o->workspace : NULL, &env.ws, &own, err)))
        return rc;
    int64_t *idx = dpas__ws_alloc(env.ws, nsel, sizeof *idx);
    if (!idx)
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    if (!rc) {
        memcpy(idx, selected, nsel * sizeof *idx);
        qsort(idx, nsel, sizeof *idx, cmp_i64);
    }
    for (size_t t = 0; t < nsel && !rc; t++)
        if (idx[t] < 0 || (size_t)idx[t] >= n || (t && idx[t] == idx[t - 1]))
            rc = dpas__fail(err, DPAS_EINVAL, "selected",
                            "selection index %lld is out of range or repeated", (long long)idx[t]);
    size_t w = 0;
    if (!rc && rule->id == DPAS_RULE_BULYAN) {
        /* dpas_select took n - 2f' rows with f' = f - k: the k rows it excluded are
         * nsel - (n - 2f), and the window is nsel - 2f' */
        int64_t f = o ? o->f : 0, k = (int64_t)nsel - ((int64_t)n - 2 * f);
        if (k < 0 || k > f)
            rc = dpas__fail(err, DPAS_EINVAL, "selected",
                            "bulyan selects n - 2f = %lld of n = %zu gradients (more when "
                            "non-finite ones were excluded), got %zu",
                            (long long)((int64_t)n - 2 * f), n, nsel);
        else
            w = nsel - 2 * (size_t)(f - k);
    } else if (!rc && !(rule->caps & DPAS_RULE_CAP_SELECTS)) {
        rc = dpas__fail(err, DPAS_EINVAL, "rule",
                        "%s selects nothing: only krum, multi_krum, bulyan, brute, monna and "
                        "smea select",
                        rule->name);
    }
    if (!rc)
        rc = aggregate_rows(&env, rule, (const void *const *)x, d, selected, nsel, w, out, err);
    dpas__ws_end(env.ws, own);
    return rc;
}

size_t dpas_kernels_sizeof(const char *t)
{
    if (t && !strcmp(t, "dpas_agg_opts"))
        return sizeof(dpas_agg_opts);
    if (t && !strcmp(t, "dpas_attack_opts"))
        return sizeof(dpas_attack_opts);
    if (t && !strcmp(t, "dpas_attack"))
        return sizeof(dpas_attack);
    if (t && !strcmp(t, "dpas_preagg"))
        return sizeof(dpas_preagg);
    return 0;
}
