/* SPDX-License-Identifier: Apache-2.0 */
/* Pre-aggregations: each turns the rows into other rows for the rule that follows (ByzFL's
 * pre_agg_list): nearest neighbour mixing (NNM), bucketing, static clipping and adaptive robust
 * clipping (ARC); and their chain, opts.nnm then opts.pre in order.
 *
 * The non-finite policy holds through the chain: NNM, clipping and ARC drop the non-finite rows
 * (at most f, counted against it: the next step gets f - k); bucketing averages them into their
 * buckets, which are then non-finite, and the step after it drops those (a non-finite row
 * spoils one bucket; more than f non-finite rows is the usual error). */
#include "kernels_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- NNM ---- */

/* The finite rows, each replaced by the mean of its n' - f' nearest (f' = f - k). */
static int pre_nnm(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                   dpas__rowset *out, dpas_error *err)
{
    size_t n = s->n, k = 0;
    double *D = dpas__ws_zalloc(env->ws, n * n, sizeof *D);
    unsigned char *bad = dpas__ws_alloc(env->ws, n, 1);
    if (!D || !bad)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: distances of %zu gradients", n);
    int rc = dpas__distances(env, rule, s, d, D, bad, &k, err);
    size_t *targets = dpas__ws_alloc(env->ws, n, sizeof *targets);
    void **mixed = NULL;
    if (!rc && !targets)
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    for (size_t i = 0, t = 0; !rc && i < n; i++)
        if (!bad[i]) { /* a merged row (a bucket) goes to the output row of its position */
            targets[t] = s->idx[i] == SIZE_MAX ? t : s->idx[i];
            t++;
        }
    if (!rc)
        rc = dpas__rowset_new_rows(env, n - k, d, targets, out, &mixed, err);
    if (rc)
        return rc;
    for (size_t i = 0, t = 0; i < n; i++)
        if (!bad[i])
            out->idx[t++] = s->idx[i];
    out->f = s->f - k;
    for (size_t i = 0; i < n; i++)
        bad[i] = !bad[i];
    return dpas__nnm_mix(env, s->rows, n, d, D, bad, out->f, mixed, err);
}

/* ---- clipping and ARC ---- */

/* A norm with its own scale: the value m 2^e (m in [0.5, 1), or m = 0). Norms of float64 rows
 * reach sqrt(d) DBL_MAX and go below the smallest double; in this form every norm of a finite
 * row is held and compared exactly as computed, whatever the other rows hold. */
typedef struct scaled {
    double m;
    long e;
} scaled;

static scaled scaled_of(double v, int scale_exp) /* v 2^-scale_exp, v finite and >= 0 */
{
    int e = 0;
    double m = frexp(v, &e);
    return (scaled){m, m == 0.0 ? 0 : (long)e - scale_exp};
}

static int scaled_cmp(scaled a, scaled b)
{
    if (a.m == 0.0 || b.m == 0.0)
        return (a.m > 0.0) - (b.m > 0.0);
    if (a.e != b.e)
        return a.e < b.e ? -1 : 1;
    return (a.m > b.m) - (a.m < b.m);
}

/* The rows' norms, each row with its own scale, and the non-finite rows (bad, *k, checked
 * against f). One pass of squared norms at scale 1 (the fast path); a float64 row whose sum
 * overflowed, or may have lost its small squares to underflow (below 2^-900), is scanned for
 * its largest value and its norm taken again on the row scaled by the power of two rexp[i] that
 * brings that value into [1, 2): nrm[i] = ||2^rexp[i] x_i||, exactly scaled. */
static int norms(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                 double *nrm, int *rexp, unsigned char *bad, size_t *k, dpas_error *err)
{
    size_t n = s->n;
    int rc = dpas__sqnorms(env, s->rows, n, d, 1.0, nrm, err);
    memset(bad, 0, n);
    *k = 0;
    const int f64 = env->isa->dtype == DPAS_FLOAT64;
    for (size_t i = 0; i < n && !rc; i++) {
        rexp[i] = 0;
        if (f64 ? isfinite(nrm[i]) && nrm[i] >= 0x1p-900 : isfinite(nrm[i]))
            continue;
        if (!f64) {
            bad[i] = 1;
            continue;
        }
        /* 0 from the fast pass may be a sum of squares that all underflowed: scanned too */
        const void *row = s->rows[i];
        double m = dpas__maxabs(env, &row, 1, d, NULL, bad + i);
        if (bad[i] || m == 0.0)
            continue;
        double sc = dpas__scale_for(m);
        rexp[i] = ilogb(sc);
        rc = dpas__sqnorms(env, &row, 1, d, sc, nrm + i, err);
    }
    for (size_t i = 0; i < n; i++)
        *k += bad[i];
    if (!rc)
        rc = dpas__too_many_nonfinite(bad, n, *k, s->f, rule, err);
    for (size_t i = 0; i < n; i++)
        nrm[i] = bad[i] ? 0.0 : sqrt(nrm[i]);
    return rc;
}

typedef struct clip_job {
    const dpas__kenv *env;
    const void *const *src;
    void *const *dst;
    const double *factor; /* 1.0 (with rexp 0): copied */
    const int *rexp;
    size_t count, d;
} clip_job;

/* y = x factor (rexp 0), or when thr / ||x|| is below the normal doubles y = (2^rexp x) factor
 * with ||2^rexp x|| in [0.5, 1): the scaling by a power of two is exact (no value overflows; one
 * that underflows is below 2^-1074 ||x||, its output below 2^-1074 thr), and factor is thr over
 * that norm. */
/* y = x a over [0, d): the SIMD store kernel for float64 (x is a row of doubles), for float32
 * a loop the compiler vectorises, through a block on the stack so that y may be x (in place)
 * without the compiler falling back to its scalar loop for overlapping pointers. */
__attribute__((optimize("tree-vectorize"))) static void scale_f32(const float *x, float *y,
                                                                  size_t d, double a)
{
    float tmp[256];
    for (size_t t = 0; t < d; t += 256) {
        size_t len = d - t < 256 ? d - t : 256;
        for (size_t k = 0; k < len; k++)
            tmp[k] = (float)((double)x[t + k] * a);
        memcpy(y + t, tmp, len * sizeof *tmp);
    }
}

static void clip_part(void *ctx, size_t p)
{
    clip_job *j = ctx;
    double a = j->factor[p], sc = ldexp(1.0, j->rexp[p]);
    if (a == 1.0 && sc == 1.0) { /* a row not clipped, copied to the caller's output */
        if (j->dst[p] != j->src[p])
            memcpy(j->dst[p], j->src[p], j->d * j->env->isa->esize);
        return;
    }
    if (j->env->isa->dtype == DPAS_FLOAT64) {
        const double *x = j->src[p];
        double *y = j->dst[p];
        if (sc == 1.0) {
            const dpas__isa *isa = j->env->isa, *gen = dpas__generic_of(DPAS_FLOAT64);
            size_t body = j->d / isa->width * isa->width;
            if (body)
                isa->store(x, a, 0, body, y);
            if (body < j->d)
                gen->store(x, a, body, j->d, y);
        } else {
            for (size_t t = 0; t < j->d; t++)
                y[t] = x[t] * sc * a;
        }
    } else {
        scale_f32(j->src[p], j->dst[p], j->d, a);
    }
}

/* The factor of a row of norm nrm 2^-rexp over thr: thr / ||x|| as one double (*fexp = 0), or
 * when that is below the normal doubles the factor for the row first scaled (exactly) by
 * 2^*fexp to norm < 1, so that no bits are lost to a subnormal factor. */
static double clip_factor(double nrm, int rexp, scaled thr, int *fexp)
{
    scaled v = scaled_of(nrm, 0);
    long e = thr.e - v.e, all = e + rexp;
    *fexp = 0;
    if (all >= -1020 || thr.m == 0.0) /* thr / ||x|| a normal double (<= 1): one factor */
        return ldexp(thr.m / v.m, (int)all);
    *fexp = (int)(rexp - v.e);
    return ldexp(thr.m / v.m, thr.e < -2000 ? -2000 : (int)thr.e);
}

/* The alive rows, each whose norm is above thr scaled down to norm thr (thr / norm in double,
 * the product rounded once to the element type); the others are not copied. With env->dest
 * every alive row goes to the caller's output row (its own index; a merged row, a bucket, to
 * the row of its position), and may be the input row itself (in place). With env->plan (the
 * clipping fused into the mean after it) nothing is written: the factors are recorded. */
static int clip_rows(const dpas__kenv *env, const dpas__rowset *s, size_t d, const double *nrm,
                     const int *rexp, const unsigned char *bad, size_t k, scaled thr, int inf,
                     dpas__rowset *out, dpas_error *err)
{
    size_t n = s->n, nclip = 0;
    int rc = dpas__rowset_alive(env->ws, s, bad, k, out, err);
    if (rc)
        return rc;
#define OVER(i) (!inf && scaled_cmp(scaled_of(nrm[i], rexp[i]), thr) > 0)
    if (env->plan) { /* fused: the factors only, unless one needs the two-step scaling */
        double *factor = dpas__ws_alloc(env->ws, out->n ? out->n : 1, sizeof *factor);
        if (!factor)
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        int twostep = 0;
        for (size_t i = 0, t = 0; i < n; i++) {
            if (bad[i])
                continue;
            int fexp = 0;
            factor[t] = 1.0;
            if (OVER(i))
                factor[t] = clip_factor(nrm[i], rexp[i], thr, &fexp);
            twostep |= fexp != 0;
            t++;
        }
        if (!twostep) {
            env->plan->set = 1;
            env->plan->factor = factor;
            return 0;
        }
    }
    for (size_t i = 0; i < n; i++) /* writing into the caller's rows, every row is "clipped" */
        nclip += !bad[i] && (OVER(i) || env->dest);
    if (!nclip)
        return 0;
    dpas__rowset tmp;
    void **mem = NULL;
    const void **src = dpas__ws_alloc(env->ws, nclip, sizeof *src);
    double *factor = dpas__ws_alloc(env->ws, nclip, sizeof *factor);
    int *fexp = dpas__ws_alloc(env->ws, nclip, sizeof *fexp);
    size_t *targets = dpas__ws_alloc(env->ws, nclip, sizeof *targets);
    if (!src || !factor || !fexp || !targets)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    for (size_t i = 0, c = 0, t = 0; i < n; i++) {
        if (bad[i])
            continue;
        if (OVER(i) || env->dest)
            targets[c++] = s->idx[i] == SIZE_MAX ? t : s->idx[i];
        t++;
    }
    if ((rc = dpas__rowset_new_rows(env, nclip, d, targets, &tmp, &mem, err)))
        return rc;
    for (size_t i = 0, t = 0, c = 0; i < n; i++) {
        if (bad[i])
            continue;
        if (OVER(i) || env->dest) {
            src[c] = s->rows[i];
            factor[c] = 1.0, fexp[c] = 0;
            if (OVER(i)) /* thr / ||2^rexp x||, from the mantissas and exponents */
                factor[c] = clip_factor(nrm[i], rexp[i], thr, &fexp[c]);
            out->rows[t] = mem[c++];
        }
        t++;
    }
#undef OVER
    clip_job j = {env, src, mem, factor, fexp, nclip, d};
    dpas__parallel(env->threads, nclip, clip_part, &j);
    return 0;
}

static int pre_clip(const dpas__kenv *env, const dpas_preagg *p, const dpas__rowset *s, size_t d,
                    dpas__rowset *out, dpas_error *err)
{
    size_t n = s->n, k = 0;
    double *nrm = dpas__ws_alloc(env->ws, n, sizeof *nrm);
    int *rexp = dpas__ws_alloc(env->ws, n, sizeof *rexp);
    unsigned char *bad = dpas__ws_alloc(env->ws, n, 1);
    if (!nrm || !rexp || !bad)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    int rc = norms(env, p->rule, s, d, nrm, rexp, bad, &k, err);
    if (rc)
        return rc;
    double c = p->c > 0 ? p->c : 2.0;
    return clip_rows(env, s, d, nrm, rexp, bad, k, scaled_of(c, 0), 0, out, err);
}

static int cmp_scaled(const void *a, const void *b)
{
    return scaled_cmp(*(const scaled *)a, *(const scaled *)b);
}

/* ARC: k = floor(2 f' (n' - f') / n') of the alive rows, the largest by norm, clipped to the
 * norm of the largest of the others (ByzFL computes k in floating point; here in integers). */
static int pre_arc(const dpas__kenv *env, const dpas_preagg *p, const dpas__rowset *s, size_t d,
                   dpas__rowset *out, dpas_error *err)
{
    size_t n = s->n, k = 0;
    double *nrm = dpas__ws_alloc(env->ws, n, sizeof *nrm);
    int *rexp = dpas__ws_alloc(env->ws, n, sizeof *rexp);
    scaled *sorted = dpas__ws_alloc(env->ws, n, sizeof *sorted);
    unsigned char *bad = dpas__ws_alloc(env->ws, n, 1);
    if (!nrm || !rexp || !sorted || !bad)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    int rc = norms(env, p->rule, s, d, nrm, rexp, bad, &k, err);
    if (rc)
        return rc;
    size_t na = 0, f = s->f - k;
    for (size_t i = 0; i < n; i++)
        if (!bad[i])
            sorted[na++] = scaled_of(nrm[i], rexp[i]);
    size_t clip = (size_t)((dpas__u128)2 * f * (na - f) / na);
    if (!clip)
        return clip_rows(env, s, d, nrm, rexp, bad, k, (scaled){0, 0}, 1, out, err);
    qsort(sorted, na, sizeof *sorted, cmp_scaled);
    return clip_rows(env, s, d, nrm, rexp, bad, k, sorted[na - clip - 1], 0, out, err);
}

/* ---- bucketing ---- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound), without the bias of a plain modulus (rejection). */
static uint64_t below(uint64_t *s, uint64_t bound)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t r;
    do
        r = splitmix64(s);
    while (r >= limit);
    return r % bound;
}

/* The buckets' means, a block of coordinates at a time on each thread: every bucket's mean of
 * the block is computed into scratch before any is written, so the output rows may be input
 * rows (in place). A block whose mean is not finite: the rows of its bucket with a non-finite
 * value there are found (bad[]), and when there is none (float64: the sum overflowed) the
 * block's mean is taken again on values scaled by 2^-k (2^k >= 2m; what dpas__coord_scaled
 * does, on this block). The mean is coordinate-wise, so the blocks change no value. */
typedef struct bucket_job {
    const dpas__kenv *env;
    const void *const *x;
    const size_t *perm;
    size_t n, size, nb, d, block, parts;
    void *const *out;
    unsigned char *bad;  /* parts x n */
    unsigned char *fail; /* parts: a float32 block not finite without a non-finite value */
    unsigned char *tmp;  /* parts x nb x block elements */
    double *sbuf;        /* parts x size x block doubles */
    const void **sub;    /* parts x size pointers */
} bucket_job;

static void bucket_part(void *ctx, size_t p)
{
    bucket_job *j = ctx;
    const dpas__isa *isa = j->env->isa, *gen = dpas__generic_of(isa->dtype);
    size_t es = isa->esize, nblocks = (j->d + j->block - 1) / j->block;
    size_t b0 = nblocks * p / j->parts, b1 = nblocks * (p + 1) / j->parts;
    unsigned char *tmp = j->tmp + p * j->nb * j->block * es, *bad = j->bad + p * j->n;
    const void **sub = j->sub + p * j->size;
    double *sbuf = j->sbuf + p * j->size * j->block;
    for (size_t blk = b0; blk < b1; blk++) {
        size_t j0 = blk * j->block, len = j->d - j0 < j->block ? j->d - j0 : j->block;
        size_t body = len / isa->width * isa->width;
        for (size_t b = 0; b < j->nb; b++) {
            const size_t *rows = j->perm + b * j->size;
            size_t m = b + 1 < j->nb || j->n % j->size == 0 ? j->size : j->n % j->size;
            for (size_t c = 0; c < m; c++)
                sub[c] = (const char *)j->x[rows[c]] + j0 * es;
            void *o = tmp + b * j->block * es;
            unsigned nf = 0;
            if (body)
                nf |= isa->mean(sub, NULL, m, 0, body, o);
            if (body < len)
                nf |= gen->mean(sub, NULL, m, body, len, o);
            if (!nf)
                continue;
            int any = 0;
            for (size_t c = 0; c < m; c++) {
                int nonfinite = 0;
                if (isa->dtype == DPAS_FLOAT64)
                    for (size_t t = 0; t < len && !nonfinite; t++)
                        nonfinite = !isfinite(((const double *)sub[c])[t]);
                else
                    for (size_t t = 0; t < len && !nonfinite; t++)
                        nonfinite = !isfinite(((const float *)sub[c])[t]);
                if (nonfinite)
                    bad[rows[c]] = 1, any = 1;
            }
            if (any)
                continue;
            if (isa->dtype != DPAS_FLOAT64) {
                j->fail[p] = 1;
                continue;
            }
            int k = 1;
            while (k < 62 && ((size_t)1 << k) < 2 * m)
                k++;
            const double down = ldexp(1.0, -k), up = ldexp(1.0, k);
            double *ob = o;
            /* scaled rows side by side in sbuf, averaged by the portable kernel in order */
            const void **all = sub; /* reused: the scaled rows' pointers */
            for (size_t c = 0; c < m; c++) {
                const double *r = sub[c];
                double *dst = sbuf + c * j->block;
                for (size_t t = 0; t < len; t++)
                    dst[t] = r[t] * down;
            }
            for (size_t c = 0; c < m; c++)
                all[c] = sbuf + c * j->block;
            gen->mean(all, NULL, m, 0, len, ob);
            for (size_t t = 0; t < len; t++)
                ob[t] *= up;
        }
        for (size_t b = 0; b < j->nb; b++)
            memcpy((char *)j->out[b] + j0 * es, tmp + b * j->block * es, len * es);
    }
}

/* Shuffled by Fisher-Yates from the seed (splitmix64), cut into buckets of s rows (the last one
 * shorter), each averaged in index order. A non-finite bucket holds a non-finite row (then it
 * stays, for the next step to drop) or, float64, a sum that overflowed (then those coordinates
 * are averaged again on scaled values). The output rows may be the input rows (in place). */
static int pre_bucketing(const dpas__kenv *env, const dpas_preagg *p, const dpas__rowset *s,
                         size_t d, dpas__rowset *out, dpas_error *err)
{
    size_t n = s->n, size = p->s > 0 ? (size_t)p->s : 1;
    if (size > n)
        size = n;
    size_t nb = n / size + (n % size != 0);
    size_t *perm = dpas__ws_alloc(env->ws, n, sizeof *perm);
    unsigned char *bad = dpas__ws_zalloc(env->ws, n, 1);
    size_t *targets = dpas__ws_alloc(env->ws, nb, sizeof *targets);
    void **mem = NULL;
    if (!perm || !bad || !targets)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    for (size_t b = 0; b < nb; b++)
        targets[b] = b;
    int rc = dpas__rowset_new_rows(env, nb, d, targets, out, &mem, err);
    if (rc)
        return rc;
    uint64_t state = p->seed;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)below(&state, i), t = perm[i - 1];
        perm[i - 1] = perm[j], perm[j] = t;
    }
    for (size_t b = 0; b < nb; b++) {
        size_t *rows = perm + b * size, m = b + 1 < nb || n % size == 0 ? size : n % size;
        for (size_t a = 1; a < m; a++) /* in index order */
            for (size_t c = a; c > 0 && rows[c] < rows[c - 1]; c--) {
                size_t t = rows[c];
                rows[c] = rows[c - 1], rows[c - 1] = t;
            }
        out->idx[b] = SIZE_MAX;
    }
    size_t es = env->isa->esize, block = ((size_t)256 << 10) / (nb * es) / 16 * 16;
    block = block < 16 ? 16 : block > 4096 ? 4096 : block;
    size_t nblocks = (d + block - 1) / block;
    bucket_job j = {env, s->rows, perm, n,    size, nb,   d,   block,
                    1,   mem,     NULL, NULL, NULL, NULL, NULL};
    j.parts = env->threads > 1 ? (size_t)env->threads : 1;
    if (j.parts > nblocks)
        j.parts = nblocks ? nblocks : 1;
    j.bad = dpas__ws_zalloc(env->ws, j.parts * n, 1);
    j.fail = dpas__ws_zalloc(env->ws, j.parts, 1);
    j.tmp = dpas__ws_alloc(env->ws, j.parts * nb * block, es);
    j.sbuf = dpas__ws_alloc(env->ws, j.parts * size * block, sizeof(double));
    j.sub = dpas__ws_alloc(env->ws, j.parts * size, sizeof *j.sub);
    if (!j.bad || !j.fail || !j.tmp || !j.sbuf || !j.sub)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: buckets of %zu coordinates", block);
    if (d)
        dpas__parallel(env->threads, j.parts, bucket_part, &j);
    size_t k = 0;
    for (size_t pt = 0; pt < j.parts; pt++) {
        if (j.fail[pt])
            return dpas__fail(err, DPAS_EINVAL, "x", "a sum of finite float32 values overflowed");
        for (size_t i = 0; i < n; i++)
            bad[i] |= j.bad[pt * n + i];
    }
    for (size_t i = 0; i < n; i++)
        k += bad[i];
    rc = dpas__too_many_nonfinite(bad, n, k, s->f, p->rule, err);
    out->f = s->f;
    return rc;
}

/* ---- clipping fused into the mean ---- */

typedef struct cmean_job {
    const dpas__kenv *env;
    const void *const *x;
    const double *factor;
    size_t n, d, parts;
    void *out;
    unsigned char bad[256];
} cmean_job;

enum { CMEAN_BLOCK = 512 };

/* Coordinates in blocks: acc[t] over the rows in order, acc[t] + elem(x_i[t] factor_i) (one
 * rounding for the product, one for the sum: no fused multiply-add), then acc / n rounded to the
 * element type: the mean kernel's arithmetic on the clipped rows. */
__attribute__((optimize("tree-vectorize", "fp-contract=off"))) static void cmean_part(void *ctx,
                                                                                      size_t p)
{
    cmean_job *j = ctx;
    size_t j0 = j->d * p / j->parts, j1 = j->d * (p + 1) / j->parts;
    double acc[CMEAN_BLOCK];
    unsigned char bad = 0;
    const int f64 = j->env->isa->dtype == DPAS_FLOAT64;
    for (size_t b = j0; b < j1; b += CMEAN_BLOCK) {
        size_t len = j1 - b < CMEAN_BLOCK ? j1 - b : CMEAN_BLOCK;
        for (size_t t = 0; t < len; t++)
            acc[t] = 0.0;
        for (size_t i = 0; i < j->n; i++) {
            double a = j->factor[i];
            if (f64) {
                const double *x = (const double *)j->x[i] + b;
                for (size_t t = 0; t < len; t++)
                    acc[t] += x[t] * a;
            } else {
                const float *x = (const float *)j->x[i] + b;
                for (size_t t = 0; t < len; t++)
                    acc[t] += (double)(float)((double)x[t] * a);
            }
        }
        double chk = 0.0;
        if (f64) {
            double *o = (double *)j->out + b;
            for (size_t t = 0; t < len; t++) {
                o[t] = acc[t] / (double)j->n;
                chk += o[t] * 0.0;
            }
        } else {
            float *o = (float *)j->out + b;
            for (size_t t = 0; t < len; t++) {
                o[t] = (float)(acc[t] / (double)j->n);
                chk += (double)o[t] * 0.0;
            }
        }
        bad |= chk != chk;
    }
    j->bad[p] = bad;
}

int dpas__clipped_mean(const dpas__kenv *env, const void *const *x, const double *factor, size_t n,
                       size_t d, void *out, int *nonfinite, dpas_error *err)
{
    (void)err;
    *nonfinite = 0;
    cmean_job j = {env, x, factor, n, d, 1, out, {0}};
    size_t parts = env->threads > 1 ? (size_t)env->threads : 1;
    j.parts = parts > 256 ? 256 : parts;
    if (d < j.parts * CMEAN_BLOCK)
        j.parts = 1;
    if (d)
        dpas__parallel(env->threads, j.parts, cmean_part, &j);
    for (size_t p = 0; p < j.parts; p++)
        *nonfinite |= j.bad[p] != 0;
    return 0;
}

/* The fused path's way back (its mean was not finite: a float64 sum overflowed): the rows with
 * a factor other than 1 clipped into the workspace, for the mean's own handling. */
int dpas__clip_apply(const dpas__kenv *env, dpas__rowset *s, size_t d, const double *factor,
                     dpas_error *err)
{
    size_t nclip = 0;
    for (size_t t = 0; t < s->n; t++)
        nclip += factor[t] != 1.0;
    if (!nclip)
        return 0;
    dpas__kenv plain = *env;
    plain.dest = NULL;
    dpas__rowset tmp;
    void **mem = NULL;
    const void **src = dpas__ws_alloc(env->ws, nclip, sizeof *src);
    double *fc = dpas__ws_alloc(env->ws, nclip, sizeof *fc);
    int *fexp = dpas__ws_zalloc(env->ws, nclip, sizeof *fexp);
    if (!src || !fc || !fexp)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    int rc = dpas__rowset_new_rows(&plain, nclip, d, NULL, &tmp, &mem, err);
    if (rc)
        return rc;
    for (size_t t = 0, c = 0; t < s->n; t++)
        if (factor[t] != 1.0) {
            src[c] = s->rows[t], fc[c] = factor[t];
            s->rows[t] = mem[c++];
        }
    clip_job j = {&plain, src, mem, fc, fexp, nclip, d};
    dpas__parallel(env->threads, nclip, clip_part, &j);
    return 0;
}

/* ---- the chain ---- */

int dpas__pre_step(const dpas__kenv *env, const dpas_preagg *p, const dpas__rowset *s, size_t d,
                   dpas__rowset *out, dpas_error *err)
{
    int rc = dpas__check_rule(p->rule, s->n, (int64_t)s->f, err);
    if (rc)
        return rc;
    switch (p->rule->id) {
    case DPAS_RULE_NNM: return pre_nnm(env, p->rule, s, d, out, err);
    case DPAS_RULE_CLIPPING: return pre_clip(env, p, s, d, out, err);
    case DPAS_RULE_ARC: return pre_arc(env, p, s, d, out, err);
    case DPAS_RULE_BUCKETING: return pre_bucketing(env, p, s, d, out, err);
    default: break;
    }
    return dpas__fail(err, DPAS_EINVAL, "pre", "%s is not a pre-aggregation", p->rule->name);
}

/* One step of the chain on *s (whose f is the aggregation's budget: opts.f less the non-finite
 * rows dropped so far, *dropped of them): a step with its own f runs with that f less *dropped;
 * the rows it drops count against both. */
static int chain_step(const dpas__kenv *env, const dpas_preagg *p, dpas__rowset *s, size_t d,
                      size_t *dropped, dpas_error *err)
{
    dpas__rowset in = *s, next;
    if (p->own_f) {
        if ((size_t)p->f < *dropped)
            return dpas__fail(err, DPAS_EINVAL, "f",
                              "%s with its own f = %lld: %zu non-finite gradients were left out "
                              "before it, more than its f",
                              p->rule->name, (long long)p->f, *dropped);
        in.f = (size_t)p->f - *dropped;
    }
    int rc = dpas__pre_step(env, p, &in, d, &next, err);
    if (rc)
        return rc;
    size_t k = in.f - next.f; /* the non-finite rows this step dropped (bucketing: none) */
    if (k > s->f)
        return dpas__fail(err, DPAS_EINVAL, "f",
                          "%zu non-finite gradients left out by %s (its own f = %lld), more than "
                          "the aggregation's f = %zu allows",
                          *dropped + k, p->rule->name, (long long)p->f, s->f + *dropped);
    next.f = s->f - k;
    *dropped += k;
    *s = next;
    return 0;
}

/* env->dest (the caller's output rows) is for the last step only. */
int dpas__run_chain(const dpas__kenv *env, const dpas_agg_opts *o, dpas__rowset *s, size_t d,
                    dpas_error *err)
{
    int rc = 0;
    size_t dropped = 0;
    dpas__kenv inner = *env, last = *env;
    inner.dest = NULL;
    inner.plan = NULL;
    const dpas_preagg *lastp = o->npre ? &o->pre[o->npre - 1] : NULL;
    if (env->inplace && (!lastp || lastp->rule->id == DPAS_RULE_NNM))
        last.dest = NULL; /* NNM reads every row for every row: the workspace, then copied */
    if (env->plan &&
        !(lastp && (lastp->rule->id == DPAS_RULE_CLIPPING || lastp->rule->id == DPAS_RULE_ARC)))
        last.plan = NULL;
    if (o->nnm) {
        const dpas_rule *nnm = NULL;
        rc = dpas_rule_find("nnm", NULL, &nnm, err);
        dpas_preagg p = {nnm, 0, 0, 0, 0, 0};
        if (!rc)
            rc = chain_step(o->npre ? &inner : &last, &p, s, d, &dropped, err);
    }
    for (size_t i = 0; !rc && i < o->npre; i++)
        rc = chain_step(i + 1 < o->npre ? &inner : &last, &o->pre[i], s, d, &dropped, err);
    return rc;
}
