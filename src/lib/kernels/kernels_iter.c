/* The iterative rules: the geometric median (smoothed Weiszfeld, after RFA) and centered
 * clipping, on rows known to be finite. The iterate lives in double. Each pass splits the
 * coordinates into pieces whose size depends only on d: per-row sums of a piece are kept apart
 * and added in piece order, so the results do not depend on the thread count. */
#include "kernels_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PIECE 8192

typedef struct iter_job {
    const dpas__isa *isa;
    const float *const *x;
    size_t n, d, pieces, parts;
    double *z;       /* the iterate, d */
    double *znew;    /* the next iterate, d (geomed) */
    double *part;    /* pieces x (n + 1) partial sums */
    const double *w; /* per-row weights for the update */
    double wsum;     /* geomed: sum of weights; cc: n */
    int cc;          /* 1: centered clipping's update, 0: Weiszfeld's */
} iter_job;

/* part[q][i] = sum over piece q of (x_i - z)^2 */
static void dist_piece(void *ctx, size_t p)
{
    iter_job *j = ctx;
    size_t q0 = j->pieces * p / j->parts, q1 = j->pieces * (p + 1) / j->parts;
    for (size_t q = q0; q < q1; q++) {
        size_t j0 = q * PIECE, j1 = j0 + PIECE < j->d ? j0 + PIECE : j->d;
        double *out = j->part + q * (j->n + 1);
        size_t len = j1 - j0, body = len / j->isa->width * j->isa->width;
        for (size_t i = 0; i < j->n; i++) {
            const float *r = j->x[i] + j0;
            const double *z = j->z + j0;
            out[i] =
                j->isa->dist2(r, z, body) + dpas__isa_generic.dist2(r + body, z + body, len - body);
        }
    }
}

/* Weiszfeld: znew = sum_i w_i x_i / sum w, and part[q][n] = ||znew - z||^2 over the piece.
 * Centered clipping: z += sum_i w_i (x_i - z) / n. */
static void update_piece(void *ctx, size_t p)
{
    iter_job *j = ctx;
    double acc[PIECE];
    size_t q0 = j->pieces * p / j->parts, q1 = j->pieces * (p + 1) / j->parts;
    for (size_t q = q0; q < q1; q++) {
        size_t j0 = q * PIECE, j1 = j0 + PIECE < j->d ? j0 + PIECE : j->d, len = j1 - j0;
        size_t body = j0 + len / j->isa->width * j->isa->width;
        const double *z = j->cc ? j->z : NULL; /* acc[t - j0] for coordinate t */
        if (body > j0)
            j->isa->wsum(j->x, j->w, j->n, z, j0, body, acc);
        if (body < j1)
            dpas__isa_generic.wsum(j->x, j->w, j->n, z, body, j1, acc + (body - j0));
        double move = 0.0;
        for (size_t t = 0; t < len; t++) {
            if (j->cc) {
                j->z[j0 + t] += acc[t] / j->wsum;
            } else {
                double v = acc[t] / j->wsum, e = v - j->z[j0 + t];
                j->znew[j0 + t] = v;
                move += e * e;
            }
        }
        j->part[q * (j->n + 1) + j->n] = move;
    }
}

static void run_pass(iter_job *j, int threads, void (*fn)(void *, size_t))
{
    dpas__parallel(threads, j->parts, fn, j);
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
    return n & 1 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

/* Shared set-up: z = the coordinate-wise median, the buffers. */
static int iter_setup(const dpas__kenv *env, const float *const *x, size_t n, size_t d, iter_job *j,
                      double **r, double **tmp, float *out, dpas_error *err)
{
    memset(j, 0, sizeof *j);
    j->isa = env->isa, j->x = x, j->n = n, j->d = d;
    j->pieces = d ? (d + PIECE - 1) / PIECE : 0;
    j->parts = env->threads > 1 ? (size_t)env->threads : 1;
    if (j->parts > j->pieces)
        j->parts = j->pieces ? j->pieces : 1;
    j->z = malloc((d ? d : 1) * sizeof *j->z);
    j->part = malloc((j->pieces ? j->pieces : 1) * (n + 1) * sizeof *j->part);
    *r = malloc(n * sizeof **r);
    *tmp = malloc(n * sizeof **tmp);
    double *w = malloc(n * sizeof *w);
    j->w = w;
    if (!j->z || !j->part || !*r || !*tmp || !w)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    int nonfinite = 0;
    int rc = dpas__columns(env, x, n, d, DPAS__COL_MEDIAN, 0, out, &nonfinite, err);
    if (rc)
        return rc;
    for (size_t t = 0; t < d; t++)
        j->z[t] = out[t];
    return 0;
}

static void iter_free(iter_job *j, double *r, double *tmp)
{
    free(j->z), free(j->znew), free(j->part), free((void *)j->w), free(r), free(tmp);
}

int dpas__geomed(const dpas__kenv *env, const float *const *x, size_t n, size_t d,
                 const dpas_agg_opts *o, float *out, dpas_error *err)
{
    iter_job j;
    double *r = NULL, *tmp = NULL;
    int rc = iter_setup(env, x, n, d, &j, &r, &tmp, out, err);
    if (!rc && !(j.znew = malloc((d ? d : 1) * sizeof *j.znew)))
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    if (rc || !d) {
        iter_free(&j, r, tmp);
        return rc;
    }
    int64_t iters = o && o->iterations > 0 ? o->iterations : 100;
    double tol = o && o->tolerance > 0 ? o->tolerance : 1e-6;
    double nu = o && o->smoothing > 0 ? o->smoothing : 1e-5;
    double *w = (double *)j.w;
    for (int64_t it = 0; it < iters; it++) {
        run_pass(&j, env->threads, dist_piece);
        double wsum = 0.0;
        for (size_t i = 0; i < n; i++) {
            r[i] = sqrt(piece_sum(&j, i));
            w[i] = 1.0 / (r[i] > nu ? r[i] : nu);
            wsum += w[i];
        }
        double scale = median_of(r, n, tmp);
        j.wsum = wsum;
        j.cc = 0;
        run_pass(&j, env->threads, update_piece);
        double move = sqrt(piece_sum(&j, n));
        double *t = j.z;
        j.z = j.znew;
        j.znew = t;
        if (move <= tol * scale)
            break;
    }
    for (size_t t = 0; t < d; t++)
        out[t] = (float)j.z[t];
    iter_free(&j, r, tmp);
    return 0;
}

int dpas__centered_clipping(const dpas__kenv *env, const float *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, float *out, dpas_error *err)
{
    iter_job j;
    double *r = NULL, *tmp = NULL;
    int rc = iter_setup(env, x, n, d, &j, &r, &tmp, out, err);
    if (rc || !d) {
        iter_free(&j, r, tmp);
        return rc;
    }
    int64_t iters = o && o->iterations > 0 ? o->iterations : 10;
    double tau = o ? o->tau : 0.0;
    double *w = (double *)j.w;
    for (int64_t it = 0; it < iters; it++) {
        run_pass(&j, env->threads, dist_piece);
        for (size_t i = 0; i < n; i++)
            r[i] = sqrt(piece_sum(&j, i));
        if (it == 0 && !(tau > 0)) /* adaptive radius: the median distance to v0 */
            tau = median_of(r, n, tmp);
        for (size_t i = 0; i < n; i++)
            w[i] = r[i] > tau ? tau / r[i] : 1.0;
        j.wsum = (double)n;
        j.cc = 1;
        run_pass(&j, env->threads, update_piece);
    }
    for (size_t t = 0; t < d; t++)
        out[t] = (float)j.z[t];
    iter_free(&j, r, tmp);
    return 0;
}
