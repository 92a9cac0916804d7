/* SPDX-License-Identifier: Apache-2.0 */
/* The selections and spectral arithmetic of the rules of ByzFL that issue 24 adds: MoNNA (the
 * mean of the nearest neighbours of one trusted gradient), SMEA (the subset of least top
 * covariance eigenvalue) and CAF (a filter along the top eigenvector of a weighted covariance).
 * Arithmetic on n x n matrices only: no pass over the gradients (spectral_rules.c makes those).
 *
 * SMEA and CAF need the top eigenvalue (CAF: and eigenvector) of covariances of up to n
 * gradients in d dimensions. Such a covariance has rank below n, and its nonzero eigenvalues
 * are those of the n x n centred Gram matrix, which the squared distances give without another
 * pass over the data: for weights p (summing to 1), K_ij = (x_i - mu).(x_j - mu) with
 * mu = sum p_k x_k is -1/2 (D_ij - r_i - r_j + r), r_i = sum_k p_k D_ik, r = sum_k p_k r_k, and
 * the weighted covariance has the eigenvalues of P^1/2 K P^1/2 (P = diag p). Its top
 * eigenvector v projects x_i - mu to (K P^1/2 u)_i / sqrt(lambda), u the top eigenvector of
 * P^1/2 K P^1/2. So one pass over the gradients gives D, the spectral work is on n x n
 * matrices (cyclic Jacobi, exact to rounding), and one more pass averages. ByzFL estimates the
 * top eigenvalue by one power iteration from a random vector instead (see docs/kernels.md). */
#include "kernels_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the top eigenpair of a small symmetric matrix ---- */

/* Cyclic Jacobi (Golub and Van Loan, Matrix Computations, 4th ed., 8.5): rotations zero the
 * off-diagonal entries sweep after sweep until they are negligible; the diagonal is then the
 * eigenvalues and the product of the rotations their eigenvectors. work: m * m doubles (the
 * eigenvectors) when u is wanted. */
double dpas__top_eigen(double *A, size_t m, double *u, double *work)
{
    double *V = u ? work : NULL;
    if (!m)
        return 0.0;
    if (V)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++)
                V[i * m + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0.0, diag = 0.0;
        for (size_t p = 0; p < m; p++) {
            diag += A[p * m + p] * A[p * m + p];
            for (size_t q = p + 1; q < m; q++)
                off += A[p * m + q] * A[p * m + q];
        }
        if (!(off > 1e-30 * diag) || off == 0.0)
            break;
        for (size_t p = 0; p < m; p++)
            for (size_t q = p + 1; q < m; q++) {
                double apq = A[p * m + q];
                if (apq == 0.0)
                    continue;
                double theta = (A[q * m + q] - A[p * m + p]) / (2.0 * apq);
                double t = fabs(theta) > 1e150 ? 0.5 / theta
                                               : (theta >= 0 ? 1.0 : -1.0) /
                                                     (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (size_t k = 0; k < m; k++) { /* columns p and q */
                    double akp = A[k * m + p], akq = A[k * m + q];
                    A[k * m + p] = c * akp - s * akq;
                    A[k * m + q] = s * akp + c * akq;
                }
                for (size_t k = 0; k < m; k++) { /* rows p and q */
                    double apk = A[p * m + k], aqk = A[q * m + k];
                    A[p * m + k] = c * apk - s * aqk;
                    A[q * m + k] = s * apk + c * aqk;
                }
                A[p * m + q] = A[q * m + p] = 0.0;
                if (V)
                    for (size_t k = 0; k < m; k++) {
                        double vkp = V[k * m + p], vkq = V[k * m + q];
                        V[k * m + p] = c * vkp - s * vkq;
                        V[k * m + q] = s * vkp + c * vkq;
                    }
            }
    }
    size_t top = 0;
    for (size_t i = 1; i < m; i++)
        if (A[i * m + i] > A[top * m + top])
            top = i;
    if (u)
        for (size_t k = 0; k < m; k++)
            u[k] = V[k * m + top];
    return A[top * m + top];
}

/* K = P^1/2 (centred Gram for weights p) P^1/2 over the rows rows[0..m) of D (n x n); with
 * gram (may be NULL) the centred Gram itself. r: m doubles of scratch. */
void dpas__weighted_gram(const double *D, size_t n, const size_t *rows, const double *p, size_t m,
                         double *K, double *gram, double *r)
{
    double rbar = 0.0;
    for (size_t a = 0; a < m; a++) {
        r[a] = 0.0;
        for (size_t b = 0; b < m; b++)
            r[a] += p[b] * D[rows[a] * n + rows[b]];
        rbar += p[a] * r[a];
    }
    for (size_t a = 0; a < m; a++)
        for (size_t b = 0; b < m; b++) {
            double g = a == b ? 0.0 : D[rows[a] * n + rows[b]];
            g = -0.5 * (g - r[a] - r[b] + rbar);
            if (gram)
                gram[a * m + b] = g;
            K[a * m + b] = sqrt(p[a]) * g * sqrt(p[b]);
        }
}

/* ---- SMEA ---- */

/* The most subsets SMEA examines. */
#define SMEA_MAX_SUBSETS 200000

static size_t choose_capped(size_t n, size_t k, size_t cap)
{
    if (k > n - k)
        k = n - k;
    dpas__u128 c = 1;
    for (size_t i = 1; i <= k; i++) {
        c = c * (n - k + i) / i; /* exact: a product of i consecutive integers over i! */
        if (c > cap)
            return SIZE_MAX;
    }
    return (size_t)c;
}

/* Every subset of m of the na alive rows, in lexicographic order of indices; the first of least
 * top eigenvalue of its covariance (uniform weights) is kept (ByzFL's order and tie rule). A
 * subset whose lower bound trace / (m - 1) (the covariance has rank m - 1 at most) is not below
 * the best is skipped without its eigenvalues. */
/* D times the power of two that brings its largest finite entry into [1, 2) (exact, but for
 * entries below 2^-1074 of that one): every quantity of CAF and SMEA (the centred Gram matrix,
 * its eigenvalues, the projections tau_i and their ratios, the subsets' order) is homogeneous in
 * D, so the results are those of the rows' own magnitude, without the squares of entries near
 * 1e154 (rows near 1e77) overflowing nor those near 1e-154 underflowing in the spectral work. */
void dpas__normalise_D(const double *D, size_t n, double *out)
{
    double most = 0.0;
    for (size_t q = 0; q < n * n; q++)
        if (isfinite(D[q]) && D[q] > most)
            most = D[q];
    double sc = most > 0.0 ? ldexp(1.0, -ilogb(most)) : 1.0;
    for (size_t q = 0; q < n * n; q++)
        out[q] = D[q] * sc;
}

int dpas__smea_select(const dpas__kenv *env, const double *D, size_t n, const unsigned char *alive,
                      size_t f, int64_t *selected, size_t *nselected, dpas_error *err)
{
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        na += !alive || alive[i];
    size_t m = na - f;
    *nselected = 0;
    if (choose_capped(na, f, SMEA_MAX_SUBSETS) == SIZE_MAX)
        return dpas__fail(err, DPAS_EINVAL, "f",
                          "smea would examine C(%zu, %zu) subsets, more than its cap of %d: use a "
                          "smaller f or another rule",
                          na, f, SMEA_MAX_SUBSETS);
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    size_t *idx = dpas__ws_alloc(env->ws, na ? na : 1, sizeof *idx);
    size_t *cur = dpas__ws_alloc(env->ws, m ? m : 1, sizeof *cur);
    size_t *rows = dpas__ws_alloc(env->ws, m ? m : 1, sizeof *rows);
    double *p = dpas__ws_alloc(env->ws, m ? m : 1, sizeof *p);
    double *K = dpas__ws_alloc(env->ws, m > 0 ? m * m : 1, sizeof *K);
    double *r = dpas__ws_alloc(env->ws, m ? m : 1, sizeof *r);
    size_t *best = dpas__ws_alloc(env->ws, m ? m : 1, sizeof *best);
    double *Dn = dpas__ws_alloc(env->ws, n ? n * n : 1, sizeof *Dn);
    if (!idx || !cur || !rows || !p || !K || !r || !best || !Dn) {
        dpas__ws_release(env->ws, mk);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    dpas__normalise_D(D, n, Dn);
    D = Dn;
    na = 0;
    for (size_t i = 0; i < n; i++)
        if (!alive || alive[i])
            idx[na++] = i;
    for (size_t t = 0; t < m; t++)
        cur[t] = t, p[t] = 1.0 / (double)m, best[t] = t;
    double best_l = INFINITY;
    for (;;) {
        for (size_t t = 0; t < m; t++)
            rows[t] = idx[cur[t]];
        double trace = 0.0;
        for (size_t a = 0; a < m; a++)
            for (size_t b = a + 1; b < m; b++)
                trace += D[rows[a] * n + rows[b]];
        trace /= (double)m * (double)m; /* the covariance's trace: sum_{a<b} D_ab / m^2 */
        if (m < 2 ? best_l == INFINITY : trace / (double)(m - 1) < best_l) {
            dpas__weighted_gram(D, n, rows, p, m, K, NULL, r);
            double l = m < 2 ? 0.0 : dpas__top_eigen(K, m, NULL, NULL);
            if (l < best_l || best_l == INFINITY) {
                best_l = l;
                memcpy(best, cur, m * sizeof *cur);
            }
        }
        /* the next subset in lexicographic order */
        size_t t = m;
        while (t > 0 && cur[t - 1] == na - m + t - 1)
            t--;
        if (t == 0)
            break;
        cur[t - 1]++;
        for (size_t u = t; u < m; u++)
            cur[u] = cur[u - 1] + 1;
    }
    for (size_t t = 0; t < m; t++)
        selected[t] = (int64_t)idx[best[t]];
    *nselected = m;
    dpas__ws_release(env->ws, mk);
    return 0;
}

/* ---- MoNNA ---- */

static int cmp_near(const void *a, const void *b)
{
    const dpas__near *x = a, *y = b;
    if (x->dist != y->dist)
        return x->dist < y->dist ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The n' - f' alive rows nearest to row idx by dist (itself included, at distance 0), nearest
 * first; ties: the lower index. */
void dpas__nearest(const double *dist, size_t n, const unsigned char *alive, size_t f, size_t idx,
                   dpas__near *tmp, int64_t *selected, size_t *nselected)
{
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        if (!alive || alive[i])
            tmp[na++] = (dpas__near){i == idx ? 0.0 : dist[i], i};
    qsort(tmp, na, sizeof *tmp, cmp_near);
    for (size_t t = 0; t < na - f; t++)
        selected[t] = (int64_t)tmp[t].i;
    *nselected = na - f;
}

int dpas__idx_check(size_t n, int64_t idx, const unsigned char *alive, dpas_error *err)
{
    if (idx < 0 || (size_t)idx >= n)
        return dpas__fail(err, DPAS_EINVAL, "idx", "monna's idx must be below n = %zu, got %lld", n,
                          (long long)idx);
    if (alive && !alive[idx])
        return dpas__fail(err, DPAS_EINVAL, "idx",
                          "monna's row idx = %lld has a NaN or Inf coordinate: it is the row "
                          "taken as honest",
                          (long long)idx);
    return 0;
}

int dpas__monna_select(const double *D, size_t n, const unsigned char *alive, size_t f, int64_t idx,
                       int64_t *selected, size_t *nselected, dpas_error *err)
{
    *nselected = 0;
    int rc = dpas__idx_check(n, idx, alive, err);
    if (rc)
        return rc;
    dpas__near *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    dpas__nearest(D + (size_t)idx * n, n, alive, f, (size_t)idx, tmp, selected, nselected);
    free(tmp);
    return 0;
}
