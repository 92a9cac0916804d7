/* SPDX-License-Identifier: Apache-2.0 */
/* The iterative rules: the geometric median (smoothed Weiszfeld, after RFA) and centered
 * clipping. The iterate lives in double, in units of the rows times `scale` (1 for float32; 1/2
 * for float64, so that no difference of two values overflows). A float64 row whose squared
 * distance to the iterate leaves the double range (beyond about 1e154, or below 1e-154) has its
 * distance taken again with a scale of its own; the updates are convex combinations (the
 * weights are normalised), which cannot overflow.
 *
 * One pass over the rows per iteration: the coordinates are cut into pieces small enough that
 * every row's piece stays in cache; in a piece the weighted sum of the rows gives the next
 * iterate, and the rows' distances to that new iterate are summed from the same, cached,
 * values. Three geometric-median iterations thus read the gradients five times (the median
 * that starts them, the distances to it, three updates), not nine.
 *
 * The pieces depend only on d: per-row sums of a piece are kept apart (in 8 lanes, DPAS__LANES)
 * and added in piece order, so the results do not depend on the thread count or on the
 * instruction set. */
#include "kernels_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PIECE 2048

typedef struct iter_job {
    const dpas__isa *isa;
    const void *const *x;
    size_t n, d, pieces, parts;
    double scale;    /* the rows times scale: the iterate's units */
    double *z;       /* the iterate, d */
    double *znew;    /* the next iterate, d (geomed) */
    double *part;    /* pieces x (n + 1) partial sums: the rows' squared distances, the move */
    double *lanes;   /* parts x n x 8 lanes of distance sums */
    const double *w; /* per-row weights for the update */
    int cc;          /* 1: centered clipping's update, 0: Weiszfeld's */
    int dist;        /* the update pass also sums the distances to the new iterate */
    double *big;     /* n: a distance beyond the double range is big[i] root[i] (else big 0) */
    double *root;
} iter_job;

static void piece_range(const iter_job *j, size_t q, size_t *j0, size_t *j1)
{
    *j0 = q * PIECE;
    *j1 = *j0 + PIECE < j->d ? *j0 + PIECE : j->d;
}

/* part[q][i] = the squared distance of row i to z over piece q; acc: n x 8 lanes of scratch */
static void piece_dist(const iter_job *j, size_t q, const double *z, double *acc)
{
    const dpas__isa *gen = dpas__generic_of(j->isa->dtype);
    size_t j0, j1;
    piece_range(j, q, &j0, &j1);
    size_t body = j0 + (j1 - j0) / DPAS__LANES * DPAS__LANES;
    memset(acc, 0, j->n * DPAS__LANES * sizeof *acc);
    if (body > j0)
        (j->isa->width > 1 ? j->isa : gen)->dist2n(j->x, j->n, z, j->scale, j0, body, acc);
    if (body < j1)
        gen->dist2n(j->x, j->n, z, j->scale, body, j1, acc);
    double *out = j->part + q * (j->n + 1);
    for (size_t i = 0; i < j->n; i++)
        out[i] = dpas__lanes_sum(acc + i * DPAS__LANES);
}

static void dist_part(void *ctx, size_t p)
{
    iter_job *j = ctx;
    size_t q0 = j->pieces * p / j->parts, q1 = j->pieces * (p + 1) / j->parts;
    for (size_t q = q0; q < q1; q++)
        piece_dist(j, q, j->z, j->lanes + p * j->n * DPAS__LANES);
}

/* Weiszfeld: znew = sum_i w_i x_i (the weights sum to 1), and part[q][n] = ||znew - z||^2 over
 * the piece. Centered clipping: z += sum_i w_i (x_i - z) (the weights hold the 1/n), in place.
 * Then, when asked, the distances to the new iterate from the rows' piece, which is in cache. */
static void update_part(void *ctx, size_t p)
{
    iter_job *j = ctx;
    const dpas__isa *isa = j->isa, *gen = dpas__generic_of(isa->dtype);
    double *lanes = j->lanes + p * j->n * DPAS__LANES;
    size_t q0 = j->pieces * p / j->parts, q1 = j->pieces * (p + 1) / j->parts;
    for (size_t q = q0; q < q1; q++) {
        size_t j0, j1;
        piece_range(j, q, &j0, &j1);
        size_t body = j0 + (j1 - j0) / isa->width * isa->width;
        const double *z = j->cc ? j->z : NULL, *base = j->cc ? j->z : NULL;
        double *out = j->cc ? j->z : j->znew;
        if (body > j0)
            isa->wsum(j->x, j->w, j->n, z, j->scale, j0, body, base, out + j0);
        if (body < j1)
            gen->wsum(j->x, j->w, j->n, z, j->scale, body, j1, base, out + body);
        double move[DPAS__LANES] = {0};
        if (!j->cc) {
            size_t b8 = j0 + (j1 - j0) / DPAS__LANES * DPAS__LANES;
            if (b8 > j0)
                (isa->width > 1 ? isa : gen)->ddist2(j->znew, j->z, j0, b8, move);
            if (b8 < j1)
                gen->ddist2(j->znew, j->z, b8, j1, move);
        }
        j->part[q * (j->n + 1) + j->n] = dpas__lanes_sum(move);
        if (j->dist)
            piece_dist(j, q, out, lanes);
    }
}

/* sum of the pieces, in piece order */
static double piece_sum(const iter_job *j, size_t i)
{
    double s = 0.0;
    for (size_t q = 0; q < j->pieces; q++)
        s += j->part[q * (j->n + 1) + i];
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const double *v, size_t n, double *tmp)
{
    memcpy(tmp, v, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, cmp_double);
    return n & 1 ? tmp[n / 2] : 0.5 * tmp[n / 2 - 1] + 0.5 * tmp[n / 2];
}

static double elem_at(int dtype, const void *v, size_t t)
{
    return dtype == DPAS_FLOAT64 ? ((const double *)v)[t] : (double)((const float *)v)[t];
}

/* The iterate as the output, in the rows' units. The iterate is a convex combination of the
 * rows (and the start): rounding may carry it an ulp past the largest float64 value, which is
 * then that value, not an overflow. */
static void store_out(const dpas__kenv *env, const double *z, double scale, size_t d, void *out)
{
    size_t body = d / env->isa->width * env->isa->width;
    env->isa->store(z, 1.0 / scale, 0, body, out);
    dpas__generic_of(env->isa->dtype)->store(z, 1.0 / scale, body, d, out);
    if (env->isa->dtype == DPAS_FLOAT64)
        for (size_t t = 0; t < d; t++) {
            double *o = (double *)out + t;
            if (isinf(*o))
                *o = *o > 0 ? DBL_MAX : -DBL_MAX;
        }
}

/* z[t] = v[t] scale in double (two plain loops the compiler vectorises) */
static void to_double(int dtype, const void *v, size_t d, double scale, double *z)
{
    if (dtype == DPAS_FLOAT64) {
        const double *s = v;
        for (size_t t = 0; t < d; t++)
            z[t] = s[t] * scale;
    } else {
        const float *s = v;
        for (size_t t = 0; t < d; t++)
            z[t] = (double)s[t] * scale;
    }
}

/* Row i's distance to z with a scale of its own (the largest |scale x_i - z|), for a float64
 * squared distance outside the double range; *nonfinite when the row holds a NaN or an Inf. */
static double dist_rescaled(const iter_job *j, size_t i, const double *z, int *nonfinite)
{
    j->big[i] = 0.0;
    const double *x = j->x[i];
    double m = 0.0, s = 0.0;
    for (size_t t = 0; t < j->d; t++) {
        double e = fabs(x[t] * j->scale - z[t]);
        if (!(e <= DBL_MAX)) {
            *nonfinite = 1;
            return NAN;
        }
        m = e > m ? e : m;
    }
    for (size_t t = 0; m > 0 && t < j->d; t++) {
        double e = (x[t] * j->scale - z[t]) / m;
        s += e * e;
    }
    if (m * sqrt(s) > DBL_MAX) /* kept in two factors, for centered clipping's tau / r */
        j->big[i] = m, j->root[i] = sqrt(s);
    return m * sqrt(s);
}

/* r[i] = the distance of row i to z from the pieces' sums; for float64 the squared distances
 * that overflowed or may have underflowed are taken again. *nonfinite: a row is not finite. */
static void distances_to(const iter_job *j, const double *z, double *r, int *nonfinite)
{
    for (size_t i = 0; i < j->n; i++) {
        double sq = piece_sum(j, i);
        r[i] = sqrt(sq);
        j->big[i] = 0.0;
        if (j->isa->dtype != DPAS_FLOAT64) {
            *nonfinite |= !isfinite(sq);
            continue;
        }
        if (isnan(sq))
            *nonfinite = 1;
        else if (isinf(sq) || sq < 0x1p-900)
            r[i] = dist_rescaled(j, i, z, nonfinite);
    }
}

/* The set-up both rules share: the buffers; z = opts.start or the coordinate-wise median (in
 * out, then in z); the rows' distances to z. *nonfinite: the median or the distances met a
 * non-finite value (then nothing else is valid). */
static int iter_setup(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                      const dpas_agg_opts *o, double scale, int need_znew, iter_job *j, double **r,
                      double **tmp, void *out, int *nonfinite, dpas_error *err)
{
    memset(j, 0, sizeof *j);
    j->isa = env->isa, j->x = x, j->n = n, j->d = d, j->scale = scale;
    j->pieces = (d + PIECE - 1) / PIECE;
    j->parts = env->threads > 1 ? (size_t)env->threads : 1;
    if (j->parts > j->pieces)
        j->parts = j->pieces ? j->pieces : 1;
    j->z = dpas__ws_alloc(env->ws, d, sizeof *j->z);
    j->znew = need_znew ? dpas__ws_alloc(env->ws, d, sizeof *j->znew) : NULL;
    j->part = dpas__ws_alloc(env->ws, j->pieces * (n + 1), sizeof *j->part);
    j->lanes = dpas__ws_alloc(env->ws, j->parts * n * DPAS__LANES, sizeof *j->lanes);
    *r = dpas__ws_alloc(env->ws, n, sizeof **r);
    *tmp = dpas__ws_alloc(env->ws, n, sizeof **tmp);
    double *w = dpas__ws_alloc(env->ws, n, sizeof *w);
    j->w = w;
    j->big = dpas__ws_alloc(env->ws, n, sizeof *j->big);
    j->root = dpas__ws_alloc(env->ws, n, sizeof *j->root);
    if (!j->big || !j->root || !j->z || (need_znew && !j->znew) || !j->part || !j->lanes || !*r ||
        !*tmp || !w)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: the iterates of %zu coordinates",
                          d);
    *nonfinite = 0;
    const int dtype = env->isa->dtype;
    if (o && o->start) {
        to_double(dtype, o->start, d, scale, j->z);
        for (size_t t = 0; t < d; t++)
            if (!isfinite(j->z[t]))
                return dpas__fail(err, DPAS_EINVAL, "start",
                                  "start must be finite: coordinate %zu is %g", t,
                                  elem_at(dtype, o->start, t));
    } else {
        int rc = dpas__columns(env, x, n, d, DPAS__COL_MEDIAN, 0, out, nonfinite, err);
        if (rc || *nonfinite)
            return rc;
        to_double(dtype, out, d, scale, j->z);
    }
    dpas__parallel(env->threads, j->parts, dist_part, j);
    distances_to(j, j->z, *r, nonfinite);
    return 0;
}

/* ||a - b|| with a scale of its own (the largest |a_t - b_t|): for a step whose squares
 * underflow (float64 rows near 1e-300), which would otherwise look like no move at all. */
static double diff_norm(const double *a, const double *b, size_t d)
{
    double m = 0.0, s = 0.0;
    for (size_t t = 0; t < d; t++)
        m = fmax(m, fabs(a[t] - b[t]));
    for (size_t t = 0; m > 0 && t < d; t++) {
        double e = (a[t] - b[t]) / m;
        s += e * e;
    }
    return m * sqrt(s);
}

int dpas__geomed(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                 const dpas_agg_opts *o, double scale, void *out, int *nonfinite, dpas_error *err)
{
    iter_job j;
    double *r = NULL, *tmp = NULL;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    int rc = iter_setup(env, x, n, d, o, scale, 1, &j, &r, &tmp, out, nonfinite, err);
    if (rc || *nonfinite || !d) {
        dpas__ws_release(env->ws, mk);
        return rc;
    }
    int64_t iters = o && o->iterations > 0 ? o->iterations : 100;
    double tol = o && o->tolerance > 0 ? o->tolerance : 1e-6;
    double nu = (o && o->smoothing > 0 ? o->smoothing : 1e-5) * scale;
    double *w = (double *)j.w;
    for (int64_t it = 0; it < iters; it++) {
        /* weights 1 / max(nu, r_i), times the smallest max(nu, r_i) so that none overflows,
         * then normalised: the update is a convex combination of the rows. With nu 0 (a
         * smoothing below the double range) and a row at the iterate, the rows there. */
        double least = INFINITY, wsum = 0.0;
        for (size_t i = 0; i < n; i++)
            least = fmin(least, r[i] > nu ? r[i] : nu);
        for (size_t i = 0; i < n; i++) {
            double q = r[i] > nu ? r[i] : nu;
            w[i] = least > 0 ? least / q : q <= 0;
            if (env->alpha) /* the weighted form: alpha_i / max(nu, r_i), in [0, 1] times */
                w[i] *= env->alpha[i];
            wsum += w[i];
        }
        if (!(wsum > 0)) /* every row of positive weight is at the iterate: it is the answer */
            break;
        for (size_t i = 0; i < n; i++)
            w[i] /= wsum;
        double spread = median_of(r, n, tmp);
        j.cc = 0;
        j.dist = it + 1 < iters; /* the last pass needs no distances */
        dpas__parallel(env->threads, j.parts, update_part, &j);
        double move2 = piece_sum(&j, n), move = sqrt(move2);
        double *t = j.z;
        j.z = j.znew;
        j.znew = t;
        if (env->isa->dtype == DPAS_FLOAT64 && !(move2 >= 0x1p-900 && move2 <= DBL_MAX))
            move = diff_norm(j.z, j.znew, d); /* its squares under- or overflowed */
        if (move <= tol * spread)
            break;
        int bad = 0;
        if (j.dist)
            distances_to(&j, j.z, r, &bad);
    }
    store_out(env, j.z, scale, d, out);
    dpas__ws_release(env->ws, mk);
    return 0;
}

int dpas__centered_clipping(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, double scale, void *out, int *nonfinite,
                            dpas_error *err)
{
    iter_job j;
    double *r = NULL, *tmp = NULL;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    int rc = iter_setup(env, x, n, d, o, scale, 0, &j, &r, &tmp, out, nonfinite, err);
    if (rc || *nonfinite || !d) {
        dpas__ws_release(env->ws, mk);
        return rc;
    }
    int64_t iters = o && o->iterations > 0 ? o->iterations : 10;
    double tau = (o ? o->tau : 0.0) * scale;
    if (!(tau > 0)) /* adaptive radius: the median distance to v0 */
        tau = median_of(r, n, tmp);
    double *w = (double *)j.w;
    for (int64_t it = 0; it < iters; it++) {
        for (size_t i = 0; i < n; i++) /* the mean's 1/n in the weights: no sum overflows */
            w[i] = (r[i] > tau ? j.big[i] > 0 ? tau / j.big[i] / j.root[i] : tau / r[i] : 1.0) /
                   (double)n;
        j.cc = 1;
        j.dist = it + 1 < iters;
        dpas__parallel(env->threads, j.parts, update_part, &j);
        int bad = 0;
        if (j.dist)
            distances_to(&j, j.z, r, &bad);
    }
    store_out(env, j.z, scale, d, out);
    dpas__ws_release(env->ws, mk);
    return 0;
}

/* ---- one-pass helpers: squared norms and a weighted mean ---- */

typedef struct pass_job {
    const dpas__isa *isa;
    const void *const *x;
    size_t n, d, pieces, parts;
    double scale;
    const double *w; /* weighted mean: normalised weights */
    double *part;    /* norms: pieces x n */
    double *acc;     /* norms: parts x n x 8 lanes */
    double *z;       /* weighted mean: the result in double, d */
} pass_job;

static void norms_part(void *ctx, size_t p)
{
    pass_job *j = ctx;
    const dpas__isa *gen = dpas__generic_of(j->isa->dtype);
    double *lanes = j->acc + p * j->n * DPAS__LANES;
    size_t q0 = j->pieces * p / j->parts, q1 = j->pieces * (p + 1) / j->parts;
    for (size_t q = q0; q < q1; q++) {
        size_t j0 = q * PIECE, j1 = j0 + PIECE < j->d ? j0 + PIECE : j->d;
        size_t body = j0 + (j1 - j0) / DPAS__LANES * DPAS__LANES;
        memset(lanes, 0, j->n * DPAS__LANES * sizeof *lanes);
        if (body > j0)
            (j->isa->width > 1 ? j->isa : gen)->dist2n(j->x, j->n, NULL, j->scale, j0, body, lanes);
        if (body < j1)
            gen->dist2n(j->x, j->n, NULL, j->scale, body, j1, lanes);
        for (size_t i = 0; i < j->n; i++)
            j->part[q * j->n + i] = dpas__lanes_sum(lanes + i * DPAS__LANES);
    }
}

static void pass_setup(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                       double scale, pass_job *j)
{
    memset(j, 0, sizeof *j);
    j->isa = env->isa, j->x = x, j->n = n, j->d = d, j->scale = scale;
    j->pieces = (d + PIECE - 1) / PIECE;
    j->parts = env->threads > 1 ? (size_t)env->threads : 1;
    if (j->parts > j->pieces)
        j->parts = j->pieces ? j->pieces : 1;
}

int dpas__sqnorms(const dpas__kenv *env, const void *const *x, size_t n, size_t d, double scale,
                  double *sq, dpas_error *err)
{
    pass_job j;
    pass_setup(env, x, n, d, scale, &j);
    for (size_t i = 0; i < n; i++)
        sq[i] = 0.0;
    if (!d || !n)
        return 0;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    j.part = dpas__ws_alloc(env->ws, j.pieces * n, sizeof *j.part);
    j.acc = dpas__ws_alloc(env->ws, j.parts * n * DPAS__LANES, sizeof *j.acc);
    if (!j.part || !j.acc)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: the norms of %zu gradients", n);
    dpas__parallel(env->threads, j.parts, norms_part, &j);
    for (size_t q = 0; q < j.pieces; q++) /* in piece order */
        for (size_t i = 0; i < n; i++)
            sq[i] += j.part[q * n + i];
    dpas__ws_release(env->ws, mk);
    return 0;
}

static void wmean_part(void *ctx, size_t p)
{
    pass_job *j = ctx;
    const dpas__isa *gen = dpas__generic_of(j->isa->dtype);
    size_t q0 = j->pieces * p / j->parts, q1 = j->pieces * (p + 1) / j->parts;
    for (size_t q = q0; q < q1; q++) {
        size_t j0 = q * PIECE, j1 = j0 + PIECE < j->d ? j0 + PIECE : j->d;
        size_t body = j0 + (j1 - j0) / j->isa->width * j->isa->width;
        if (body > j0)
            j->isa->wsum(j->x, j->w, j->n, NULL, 1.0, j0, body, NULL, j->z + j0);
        if (body < j1)
            gen->wsum(j->x, j->w, j->n, NULL, 1.0, body, j1, NULL, j->z + body);
    }
}

/* The weights normalised first (they sum to 1): the sum is then a convex combination of the
 * rows, which no float64 value can make overflow (but for the last ulp, clamped in store_out). */
int dpas__weighted_mean(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                        const double *w, void *out, dpas_error *err)
{
    pass_job j;
    pass_setup(env, x, n, d, 1.0, &j);
    if (!d)
        return 0;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    double *wn = dpas__ws_alloc(env->ws, n ? n : 1, sizeof *wn), sum = 0.0;
    j.z = dpas__ws_alloc(env->ws, d, sizeof *j.z);
    if (!wn || !j.z) {
        dpas__ws_release(env->ws, mk);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: a mean of %zu coordinates", d);
    }
    for (size_t i = 0; i < n; i++)
        sum += w[i];
    if (!(sum > 0) || !isfinite(sum)) {
        dpas__ws_release(env->ws, mk);
        return dpas__fail(err, DPAS_EINVAL, "w", "the weights must sum to a positive number");
    }
    for (size_t i = 0; i < n; i++)
        wn[i] = w[i] / sum;
    j.w = wn;
    dpas__parallel(env->threads, j.parts, wmean_part, &j);
    store_out(env, j.z, 1.0, d, out);
    dpas__ws_release(env->ws, mk);
    return 0;
}
