/* SPDX-License-Identifier: Apache-2.0 */
/* What every rule shares: the rows of a stage (a rowset), the rule's condition at n and f, the
 * non-finite policy (a gradient with a NaN or an Inf is Byzantine: excluded and counted against
 * f), the distances of a rowset with that policy, and a mean that handles float64 overflow.
 * Below the rules (aggregate.c, preagg.c, spectral_rules.c), above the kernels of
 * kernels_coord.c and kernels_dist.c. */
#include "kernels_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int dpas__check_rule(const dpas_rule *rule, size_t n, int64_t f, dpas_error *err)
{
    if (n < 1)
        return dpas__fail(err, DPAS_EINVAL, "n", "aggregation needs n >= 1 gradients, got %zu", n);
    if (f < 0)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)f);
    if (!dpas_rule_tolerates(rule, (int64_t)n, f))
        return dpas__fail(err, DPAS_EINVAL, "f", "%s (%s) needs %s, got n = %zu and f = %lld",
                          rule->name, rule->convention, rule->condition, n, (long long)f);
    return 0;
}

/* ---- the non-finite policy ---- */

int dpas__too_many_nonfinite(const unsigned char *bad, size_t n, size_t k, size_t f,
                             const dpas_rule *rule, dpas_error *err)
{
    if (k <= f)
        return 0;
    char list[160] = "";
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 8; i++)
        if (bad[i]) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%zu", shown ? ", " : "", i);
            shown++;
        }
    return dpas__fail(err, DPAS_EINVAL, "x",
                      "%zu gradient%s a NaN or Inf coordinate (row%s %s%s): each counts as "
                      "Byzantine, more than the f = %zu given to %s",
                      k, k == 1 ? " has" : "s have", k == 1 ? "" : "s", list,
                      k > shown ? ", ..." : "", f, rule->name);
}

int dpas_nonfinite_check(const dpas_rule *rule, const unsigned char *bad, size_t n, int64_t f,
                         size_t *k, dpas_error *err)
{
    if (!rule || (n && !bad))
        return dpas__fail(err, DPAS_EINVAL, "x", "the rule or the marks are NULL");
    if (f < 0)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)f);
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += bad[i] != 0;
    if (k)
        *k = count;
    return dpas__too_many_nonfinite(bad, n, count, (size_t)f, rule, err);
}

int dpas__rowset_alloc(dpas__ws *ws, size_t n, dpas__rowset *s, dpas_error *err)
{
    s->rows = dpas__ws_alloc(ws, n ? n : 1, sizeof *s->rows);
    s->idx = dpas__ws_alloc(ws, n ? n : 1, sizeof *s->idx);
    s->n = 0;
    if (!s->rows || !s->idx)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    return 0;
}

int dpas__rowset_alive(dpas__ws *ws, const dpas__rowset *s, const unsigned char *bad, size_t k,
                       dpas__rowset *out, dpas_error *err)
{
    int rc = dpas__rowset_alloc(ws, s->n, out, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < s->n; i++)
        if (!bad || !bad[i]) {
            out->rows[out->n] = s->rows[i];
            out->idx[out->n++] = s->idx[i];
        }
    out->f = s->f - k;
    return 0;
}

int dpas__rowset_new_rows(const dpas__kenv *env, size_t n, size_t d, const size_t *targets,
                          dpas__rowset *out, void ***rows, dpas_error *err)
{
    int rc = dpas__rowset_alloc(env->ws, n, out, err);
    if (rc)
        return rc;
    *rows = (void **)out->rows;
    out->n = n;
    if (env->dest && targets) {
        for (size_t i = 0; i < n; i++)
            out->rows[i] = env->dest[targets[i]];
        return 0;
    }
    size_t stride = (d * env->isa->esize + 63) / 64 * 64;
    unsigned char *mem = dpas__ws_alloc(env->ws, n ? n : 1, stride ? stride : 64);
    if (!mem)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: %zu rows of %zu coordinates", n, d);
    for (size_t i = 0; i < n; i++)
        out->rows[i] = mem + i * stride;
    return 0;
}

/* The non-finite rows from D: a non-finite entry only comes from a pair with a non-finite row
 * (or, float64, a squared distance beyond the double range), so the rows are scanned only then;
 * with one row there is no pair: it is scanned. Returns 1 when an entry between two finite
 * rows is not finite (float64 overflow: the caller computes D again, scaled). */
static int bad_rows_from_D(const dpas__kenv *env, const void *const *x, const double *D, size_t n,
                           size_t d, unsigned char *bad, size_t *k)
{
    int any = n < 2;
    for (size_t i = 0; i < n * n && !any; i++)
        any = !isfinite(D[i]);
    memset(bad, 0, n);
    *k = 0;
    if (!any)
        return 0;
    *k = dpas__nonfinite_rows(env, x, n, d, bad);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (!bad[i] && !bad[j] && !isfinite(D[i * n + j]))
                return 1;
    return 0;
}

int dpas__distances(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                    double *D, unsigned char *bad, size_t *k, dpas_error *err)
{
    size_t n = s->n;
    int rc = dpas__sqdist(env, s->rows, n, d, 1.0, D, err);
    if (rc)
        return rc;
    int overflow = bad_rows_from_D(env, s->rows, D, n, d, bad, k);
    rc = dpas__too_many_nonfinite(bad, n, *k, s->f, rule, err);
    if (rc || env->isa->dtype != DPAS_FLOAT64)
        return rc;
    double most = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (!bad[i] && !bad[j] && isfinite(D[i * n + j]) && D[i * n + j] > most)
                most = D[i * n + j];
    /* kept as they are unless one overflowed, all are tiny, or one may have lost bits to
     * underflow (below 2^-900, or 0 between rows that differ: rows near 1e-150 beside rows
     * far larger) */
    int lost = 0;
    for (size_t i = 0; i < n && !lost; i++)
        for (size_t j = i + 1; j < n && !lost; j++)
            if (!bad[i] && !bad[j] && D[i * n + j] <= 0x1p-900)
                lost = D[i * n + j] > 0 || memcmp(s->rows[i], s->rows[j], d * sizeof(double));
    if (!overflow && most > 0x1p-900 && !lost)
        return 0;
    for (size_t i = 0; i < n; i++)
        bad[i] = !bad[i]; /* alive, for the largest value */
    double m = dpas__maxabs(env, s->rows, n, d, bad, NULL);
    for (size_t i = 0; i < n; i++)
        bad[i] = !bad[i];
    double sc = dpas__dist_scale(m);
    if (!overflow && sc == 1.0)
        return 0;
    memset(D, 0, n * n * sizeof *D);
    return dpas__sqdist(env, s->rows, n, d, sc, D, err);
}

int dpas__mean_of(const dpas__kenv *env, const void *const *x, const size_t *rows, size_t m,
                  size_t d, void *out, dpas_error *err)
{
    int nonfinite = 0;
    int rc = dpas__mean(env, x, rows, m, d, out, &nonfinite, err);
    if (rc || !nonfinite)
        return rc;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    const void **sub = dpas__ws_alloc(env->ws, m, sizeof *sub);
    unsigned char *bad = dpas__ws_alloc(env->ws, m, 1);
    if (!sub || !bad) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    } else {
        for (size_t t = 0; t < m; t++)
            sub[t] = x[rows ? rows[t] : t];
        if (dpas__nonfinite_rows(env, sub, m, d, bad))
            rc = dpas__fail(err, DPAS_EINVAL, "x", "a gradient to average has a NaN or Inf");
        else /* float64: the sum overflowed */
            rc = dpas__coord_scaled(env, sub, m, d, 0, 0, 1, out, err);
    }
    dpas__ws_release(env->ws, mk);
    return rc;
}
