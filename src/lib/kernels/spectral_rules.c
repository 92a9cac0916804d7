/* SPDX-License-Identifier: Apache-2.0 */
/* The aggregators MoNNA and CAF: the passes over the gradients around the selections and the
 * spectral arithmetic of spectral.c (see its comment for the method). */
#include "kernels_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* O(n d): the distances of every row to row idx only. A non-finite distance means a
 * non-finite row (then the rows are scanned) or, float64, one beyond the double range (then
 * the distances are taken again on scaled rows, as are distances all too small to have been
 * summed without loss). */
int dpas__monna(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                int64_t idx, void *out, int64_t *selected, size_t *nselected, dpas_error *err)
{
    size_t n = s->n, k = 0;
    int rc = dpas__idx_check(n, idx, NULL, err);
    if (rc)
        return rc;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    double *dist = dpas__ws_alloc(env->ws, n, sizeof *dist);
    unsigned char *alive = dpas__ws_alloc(env->ws, n, 1);
    dpas__near *tmp = dpas__ws_alloc(env->ws, n, sizeof *tmp);
    int64_t *sel = dpas__ws_alloc(env->ws, n, sizeof *sel);
    size_t *pick = dpas__ws_alloc(env->ws, n, sizeof *pick), nsel = 0;
    if (!dist || !alive || !tmp || !sel || !pick) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    rc = dpas__sqdist_to(env, s->rows, n, d, (size_t)idx, 1.0, dist, err);
    memset(alive, 1, n);
    int any = n < 2;
    for (size_t i = 0; i < n && !rc; i++)
        any |= !isfinite(dist[i]);
    if (!rc && any) {
        k = dpas__nonfinite_rows(env, s->rows, n, d, alive); /* bad, for now */
        rc = dpas__too_many_nonfinite(alive, n, k, s->f, rule, err);
        for (size_t i = 0; i < n; i++)
            alive[i] = !alive[i];
    }
    if (!rc)
        rc = dpas__idx_check(n, idx, alive, err);
    if (!rc && env->isa->dtype == DPAS_FLOAT64) {
        double most = 0.0;
        int overflow = 0;
        for (size_t i = 0; i < n; i++)
            if (alive[i]) {
                overflow |= !isfinite(dist[i]);
                most = isfinite(dist[i]) && dist[i] > most ? dist[i] : most;
            }
        int lost = 0; /* a distance that may have lost bits to underflow */
        for (size_t i = 0; i < n && !lost; i++)
            if (alive[i] && i != (size_t)idx && dist[i] <= 0x1p-900)
                lost = dist[i] > 0 || memcmp(s->rows[i], s->rows[idx], d * sizeof(double));
        double m = overflow || most <= 0x1p-900 || lost
                       ? dpas__maxabs(env, s->rows, n, d, alive, NULL)
                       : 0.0;
        if (overflow || ((most <= 0x1p-900 || lost) && dpas__dist_scale(m) != 1.0))
            rc = dpas__sqdist_to(env, s->rows, n, d, (size_t)idx, dpas__dist_scale(m), dist, err);
    }
    if (rc)
        goto done;
    dpas__nearest(dist, n, alive, s->f - k, (size_t)idx, tmp, sel, &nsel);
    for (size_t t = 0; t < nsel; t++)
        pick[t] = (size_t)sel[t];
    for (size_t a = 1; a < nsel; a++) /* averaged in index order */
        for (size_t b = a; b > 0 && pick[b] < pick[b - 1]; b--) {
            size_t v = pick[b];
            pick[b] = pick[b - 1], pick[b - 1] = v;
        }
    rc = dpas__mean_of(env, s->rows, pick, nsel, d, out, err);
    if (!rc && selected) {
        memcpy(selected, sel, nsel * sizeof *sel);
        *nselected = nsel;
    }
done:
    dpas__ws_release(env->ws, mk);
    return rc;
}

/* ---- CAF ---- */

/* On the alive rows (f' = f minus the non-finite ones), from weights 1: while they sum to more
 * than n' - 2f', the weighted mean and covariance; the top eigenpair; the squared projections
 * tau_i of x_i - mu on the top eigenvector; the weights times 1 - tau_i / max tau (the max over
 * the rows still weighted, so the row that has it drops to 0 and the loop ends within n'
 * rounds; ByzFL takes it over every row). The result is the weighted mean of the round with
 * the least top eigenvalue. With f' = 0 no round runs: the mean. A round where every weighted
 * row coincides (top eigenvalue 0) ends the loop. */
int dpas__caf(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
              void *out, dpas_error *err)
{
    size_t n = s->n, k = 0;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    double *D = dpas__ws_zalloc(env->ws, n * n, sizeof *D);
    unsigned char *bad = dpas__ws_alloc(env->ws, n, 1);
    int rc = !D || !bad ? dpas__fail(err, DPAS_ENOMEM, "", "out of memory") : 0;
    if (!rc)
        rc = dpas__distances(env, rule, s, d, D, bad, &k, err);
    size_t m = n - k, f = s->f - k;
    size_t *rows = rc ? NULL : dpas__ws_alloc(env->ws, m, sizeof *rows);
    double *c = rc ? NULL : dpas__ws_alloc(env->ws, m, sizeof *c);
    double *best = rc ? NULL : dpas__ws_alloc(env->ws, m, sizeof *best);
    double *p = rc ? NULL : dpas__ws_alloc(env->ws, m, sizeof *p);
    double *K = rc ? NULL : dpas__ws_alloc(env->ws, m * m, sizeof *K);
    double *G = rc ? NULL : dpas__ws_alloc(env->ws, m * m, sizeof *G);
    double *V = rc ? NULL : dpas__ws_alloc(env->ws, m * m, sizeof *V);
    double *u = rc ? NULL : dpas__ws_alloc(env->ws, m, sizeof *u);
    double *r = rc ? NULL : dpas__ws_alloc(env->ws, m, sizeof *r);
    const void **x = rc ? NULL : dpas__ws_alloc(env->ws, m, sizeof *x);
    if (!rc && (!rows || !c || !best || !p || !K || !G || !V || !u || !r || !x))
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    if (rc)
        goto done;
    dpas__normalise_D(D, n, D); /* in place: CAF's own D */
    for (size_t i = 0, t = 0; i < n; i++)
        if (!bad[i]) {
            rows[t] = i;
            x[t++] = s->rows[i];
        }
    double sum = (double)m, best_l = INFINITY;
    for (size_t a = 0; a < m; a++)
        c[a] = best[a] = 1.0;
    while (sum > (double)m - 2.0 * (double)f) {
        for (size_t a = 0; a < m; a++)
            p[a] = c[a] / sum;
        dpas__weighted_gram(D, n, rows, p, m, K, G, r);
        double l = dpas__top_eigen(K, m, u, V);
        if (l < best_l) {
            best_l = l;
            memcpy(best, c, m * sizeof *c);
        }
        if (!(l > 0.0))
            break;
        double tmax = 0.0;
        for (size_t a = 0; a < m; a++) { /* tau_a = ((G P^1/2 u)_a)^2 / l */
            double g = 0.0;
            for (size_t b = 0; b < m; b++)
                g += G[a * m + b] * sqrt(p[b]) * u[b];
            r[a] = g * g / l;
            if (c[a] > 0 && r[a] > tmax)
                tmax = r[a];
        }
        if (!(tmax > 0.0))
            break;
        sum = 0.0;
        for (size_t a = 0; a < m; a++) {
            double cut = r[a] >= tmax ? 0.0 : c[a] * (1.0 - r[a] / tmax);
            c[a] = c[a] > 0 ? cut : 0.0;
            sum += c[a];
        }
    }
    rc = dpas__weighted_mean(env, x, m, d, best, out, err);
done:
    dpas__ws_release(env->ws, mk);
    return rc;
}
