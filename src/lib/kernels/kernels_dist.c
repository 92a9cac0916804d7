/* SPDX-License-Identifier: Apache-2.0 */
/* Distance rules: the pairwise squared distances, Krum's scores and selections (Krum, Multi-Krum,
 * Bulyan), the minimum-diameter subset (brute, MDA) and nearest neighbour mixing (NNM).
 *
 * Distances. The coordinates are cut into chunks whose size depends only on n and d; the chunks
 * are shared among the threads, and each chunk's distances go to a partial matrix of its own,
 * the partials added in chunk order: the result does not depend on the thread count. In a
 * chunk, blocks of 512 coordinates of every row stay in cache while register tiles of rows go
 * through them. Every pair's squared differences are summed in double, in 8 lanes with fused
 * multiply-adds (DPAS__LANES), the lanes added in a fixed order at the end of the chunk: the
 * same operations in the same order on every instruction set, so the distances are
 * bit-identical across them, and float32 values from 1e-19 (whose squares vanish in float) to
 * FLT_MAX order correctly. */
#include "kernels_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 512
#define MIN_CHUNK 16384
#define PARTIALS (1u << 22) /* at most this many doubles of partial matrices */

double dpas__lanes_sum(const double *a)
{
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

typedef struct dist_job {
    const dpas__kenv *env;
    const void *const *x;
    size_t n, d, chunk, nchunks, npairs, parts;
    double scale;
    double *partial; /* nchunks x npairs, upper triangle in row order */
    double *acc;     /* npairs x 8 lanes per part */
} dist_job;

static void dist_chunk(dist_job *j, size_t c, double *acc)
{
    const dpas__isa *isa = j->env->isa, *gen = dpas__generic_of(isa->dtype);
    const size_t n = j->n;
    size_t c0 = c * j->chunk, c1 = c0 + j->chunk < j->d ? c0 + j->chunk : j->d;
    memset(acc, 0, j->npairs * DPAS__LANES * sizeof *acc);
    for (size_t b = c0; b < c1; b += BLOCK) {
        size_t len = c1 - b < BLOCK ? c1 - b : BLOCK;
        size_t body = isa->width > 1 ? len / DPAS__LANES * DPAS__LANES : len;
        if (body)
            isa->sqdist(j->x, n, b, body, j->scale, acc);
        if (body < len) /* the last coordinates, in the same lanes */
            gen->sqdist(j->x, n, b + body, len - body, j->scale, acc);
    }
    double *out = j->partial + c * j->npairs;
    for (size_t q = 0; q < j->npairs; q++)
        out[q] = dpas__lanes_sum(acc + q * DPAS__LANES);
}

static void dist_part(void *ctx, size_t p)
{
    dist_job *j = ctx;
    size_t c0 = j->nchunks * p / j->parts, c1 = j->nchunks * (p + 1) / j->parts;
    for (size_t c = c0; c < c1; c++)
        dist_chunk(j, c, j->acc + p * j->npairs * DPAS__LANES);
}

int dpas__sqdist(const dpas__kenv *env, const void *const *x, size_t n, size_t d, double scale,
                 double *D, dpas_error *err)
{
    if (n < 2 || !d)
        return 0;
    if (n > (1u << 24))
        return dpas__fail(err, DPAS_EINVAL, "n",
                          "pairwise distances of %zu gradients: more than 2^24 is not supported",
                          n);
    dist_job j = {env, x, n, d, 0, 0, n * (n - 1) / 2, 0, scale, NULL, NULL};
    size_t most = PARTIALS / j.npairs ? PARTIALS / j.npairs : 1;
    j.chunk = MIN_CHUNK;
    if ((d + j.chunk - 1) / j.chunk > most)
        j.chunk = ((d + most - 1) / most + BLOCK - 1) / BLOCK * BLOCK;
    j.nchunks = (d + j.chunk - 1) / j.chunk;
    j.parts = env->threads > 1 ? (size_t)env->threads : 1;
    if (j.parts > j.nchunks)
        j.parts = j.nchunks;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    j.partial = dpas__ws_alloc(env->ws, j.nchunks * j.npairs, sizeof *j.partial);
    j.acc = dpas__ws_alloc(env->ws, j.parts * j.npairs * DPAS__LANES, sizeof *j.acc);
    if (!j.partial || !j.acc) {
        dpas__ws_release(env->ws, mk);
        return dpas__fail(err, DPAS_ENOMEM, "",
                          "out of memory: the distances of %zu gradients of %zu coordinates", n, d);
    }
    dpas__parallel(env->threads, j.parts, dist_part, &j);
    size_t q = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = i + 1; k < n; k++, q++) {
            double s = 0.0;
            for (size_t c = 0; c < j.nchunks; c++)
                s += j.partial[c * j.npairs + q];
            if (isnan(s))
                s = NAN;
            D[i * n + k] += s;
            D[k * n + i] += s;
        }
    dpas__ws_release(env->ws, mk);
    return 0;
}

/* ---- distances to one row ---- */

/* Row t's block in double (times the scale) is the z of dist2n, four other rows at a time: the
 * same differences, squares and lanes as dpas__sqdist's (the sign of a difference does not change
 * its square), so the distances are the same bits as D's row t. */
typedef struct to_job {
    const dpas__kenv *env;
    const void *const *others; /* the n - 1 other rows */
    const void *row;           /* row t */
    size_t m, d, chunk, nchunks, parts;
    double scale;
    double *z;       /* d doubles: row t, filled block by block */
    double *partial; /* nchunks x m */
    double *acc;     /* m x 8 lanes per part */
} to_job;

static void to_part(void *ctx, size_t p)
{
    to_job *j = ctx;
    const dpas__isa *isa = j->env->isa, *gen = dpas__generic_of(isa->dtype);
    double *acc = j->acc + p * j->m * DPAS__LANES;
    const int f64 = isa->dtype == DPAS_FLOAT64;
    size_t c0 = j->nchunks * p / j->parts, c1 = j->nchunks * (p + 1) / j->parts;
    for (size_t c = c0; c < c1; c++) {
        size_t b0 = c * j->chunk, b1 = b0 + j->chunk < j->d ? b0 + j->chunk : j->d;
        memset(acc, 0, j->m * DPAS__LANES * sizeof *acc);
        for (size_t b = b0; b < b1; b += BLOCK) {
            size_t len = b1 - b < BLOCK ? b1 - b : BLOCK;
            size_t body = isa->width > 1 ? len / DPAS__LANES * DPAS__LANES : len;
            for (size_t t = b; t < b + len; t++) /* float32: exact, as the kernels convert it */
                j->z[t] = f64 ? ((const double *)j->row)[t] * j->scale
                              : (double)((const float *)j->row)[t];
            if (body)
                isa->dist2n(j->others, j->m, j->z, j->scale, b, b + body, acc);
            if (body < len)
                gen->dist2n(j->others, j->m, j->z, j->scale, b + body, b + len, acc);
        }
        for (size_t i = 0; i < j->m; i++)
            j->partial[c * j->m + i] = dpas__lanes_sum(acc + i * DPAS__LANES);
    }
}

int dpas__sqdist_to(const dpas__kenv *env, const void *const *x, size_t n, size_t d, size_t t,
                    double scale, double *out, dpas_error *err)
{
    for (size_t i = 0; i < n; i++)
        out[i] = 0.0;
    if (n < 2 || !d)
        return 0;
    to_job j = {env, NULL, x[t], n - 1, d, MIN_CHUNK, 0, 0, scale, NULL, NULL, NULL};
    j.nchunks = (d + j.chunk - 1) / j.chunk;
    j.parts = env->threads > 1 ? (size_t)env->threads : 1;
    if (j.parts > j.nchunks)
        j.parts = j.nchunks;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    const void **others = dpas__ws_alloc(env->ws, n - 1, sizeof *others);
    j.z = dpas__ws_alloc(env->ws, d, sizeof *j.z);
    j.partial = dpas__ws_alloc(env->ws, j.nchunks * j.m, sizeof *j.partial);
    j.acc = dpas__ws_alloc(env->ws, j.parts * j.m * DPAS__LANES, sizeof *j.acc);
    if (!others || !j.z || !j.partial || !j.acc) {
        dpas__ws_release(env->ws, mk);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory: distances to gradient %zu", t);
    }
    for (size_t i = 0, k = 0; i < n; i++)
        if (i != t)
            others[k++] = x[i];
    j.others = others;
    dpas__parallel(env->threads, j.parts, to_part, &j);
    for (size_t c = 0; c < j.nchunks; c++) /* in chunk order */
        for (size_t i = 0, k = 0; i < n; i++)
            if (i != t)
                out[i] += j.partial[c * j.m + k++];
    for (size_t i = 0; i < n; i++)
        if (isnan(out[i]))
            out[i] = NAN;
    dpas__ws_release(env->ws, mk);
    return 0;
}

/* ---- selection ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Krum's score of i among the rows alive[] and not taken[]: the sum of its k smallest distances. */
static double score(const double *D, size_t n, size_t i, const unsigned char *alive,
                    const unsigned char *taken, size_t k, double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        if (j == i || (alive && !alive[j]) || (taken && taken[j]))
            continue;
        tmp[m++] = D[i * n + j];
    }
    if (m > 64) {
        qsort(tmp, m, sizeof *tmp, cmp_double);
    } else { /* insertion sort: no calls for the usual few dozen */
        for (size_t a = 1; a < m; a++) {
            double v = tmp[a];
            size_t b = a;
            for (; b > 0 && tmp[b - 1] > v; b--)
                tmp[b] = tmp[b - 1];
            tmp[b] = v;
        }
    }
    double s = 0.0;
    for (size_t t = 0; t < k && t < m; t++)
        s += tmp[t];
    return s;
}

typedef struct scored {
    double s;
    size_t i;
} scored;

static int cmp_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* C(n, k), or SIZE_MAX past `cap`. */
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

typedef struct mda {
    const double *D;
    size_t stride, n, m; /* the alive rows idx[0..n) of D (stride x stride), subsets of m */
    const size_t *idx;
    size_t *cur, *best;
    double best_diam;
} mda;

/* Depth-first over subsets in lexicographic order of indices, with the diameter so far: a
 * branch that cannot beat the best (strictly) is cut, so the first subset of least diameter in
 * lexicographic order is the one kept. */
static void mda_search(mda *s, size_t depth, size_t from, double diam)
{
    if (depth == s->m) {
        if (diam < s->best_diam) {
            s->best_diam = diam;
            memcpy(s->best, s->cur, s->m * sizeof *s->cur);
        }
        return;
    }
    for (size_t t = from; t + (s->m - depth) <= s->n; t++) {
        double dd = diam;
        size_t r = s->idx[t];
        for (size_t u = 0; u < depth; u++) {
            double v = s->D[r * s->stride + s->cur[u]];
            if (v > dd)
                dd = v;
        }
        if (!(dd < s->best_diam))
            continue;
        s->cur[depth] = r;
        mda_search(s, depth + 1, t + 1, dd);
    }
}

int dpas__select(const dpas__kenv *env, const dpas_rule *rule, const double *D, size_t n,
                 const unsigned char *alive, size_t f, int64_t m_opt, int64_t idx_opt,
                 int64_t *selected, size_t *nselected, dpas_error *err)
{
    if (rule->id == DPAS_RULE_MONNA)
        return dpas__monna_select(D, n, alive, f, idx_opt, selected, nselected, err);
    if (rule->id == DPAS_RULE_SMEA)
        return dpas__smea_select(env, D, n, alive, f, selected, nselected, err);
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        na += !alive || alive[i];
    const size_t drop = (size_t)rule->neighbour_drop; /* k = n - f - drop */
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    double *tmp = dpas__ws_alloc(env->ws, n, sizeof *tmp);
    scored *sc = dpas__ws_alloc(env->ws, n, sizeof *sc);
    unsigned char *taken = dpas__ws_zalloc(env->ws, n, 1);
    size_t *idx = dpas__ws_alloc(env->ws, n, sizeof *idx);
    int rc = 0;
    *nselected = 0;
    if (!tmp || !sc || !taken || !idx) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    na = 0;
    for (size_t i = 0; i < n; i++)
        if (!alive || alive[i])
            idx[na++] = i;
    if (rule->id == DPAS_RULE_KRUM || rule->id == DPAS_RULE_MULTI_KRUM) {
        size_t k = na - f - drop;
        for (size_t t = 0; t < na; t++)
            sc[t] = (scored){score(D, n, idx[t], alive, NULL, k, tmp), idx[t]};
        qsort(sc, na, sizeof *sc, cmp_scored);
        size_t m = 1;
        if (rule->id == DPAS_RULE_MULTI_KRUM)
            m = m_opt > 0 ? (size_t)m_opt : na - f;
        if (m > na) {
            rc = dpas__fail(err, DPAS_EINVAL, "m",
                            "multi_krum's m must be <= the %zu finite gradients, got %zu", na, m);
            goto done;
        }
        for (size_t t = 0; t < m; t++)
            selected[t] = (int64_t)sc[t].i;
        *nselected = m;
    } else if (rule->id == DPAS_RULE_BULYAN) {
        size_t theta = na - 2 * f;
        for (size_t t = 0; t < theta; t++) {
            size_t r = na - t, k = r > f + 3 ? r - f - 2 : 1;
            double best = INFINITY;
            size_t arg = n;
            for (size_t u = 0; u < na; u++) {
                size_t i = idx[u];
                if (taken[i])
                    continue;
                double s = score(D, n, i, alive, taken, k, tmp);
                if (arg == n || s < best) {
                    best = s;
                    arg = i;
                }
            }
            taken[arg] = 1;
            selected[t] = (int64_t)arg;
        }
        *nselected = theta;
    } else if (rule->id == DPAS_RULE_BRUTE) {
        size_t m = na - f, count = choose_capped(na, f, DPAS_BRUTE_MAX_SUBSETS);
        if (count == SIZE_MAX) {
            rc = dpas__fail(err, DPAS_EINVAL, "f",
                            "brute (MDA) would examine C(%zu, %zu) subsets, more than its cap of "
                            "%d (DPAS_BRUTE_MAX_SUBSETS): use a smaller f or another rule",
                            na, f, DPAS_BRUTE_MAX_SUBSETS);
            goto done;
        }
        size_t *cur = dpas__ws_alloc(env->ws, m, sizeof *cur);
        size_t *best = dpas__ws_alloc(env->ws, m, sizeof *best);
        if (!cur || !best) {
            rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
            goto done;
        }
        /* the first subset is the best so far: a search where every diameter is +Inf (float64
         * distances beyond the double range) still ends with one */
        mda s = {D, n, na, m, idx, cur, best, INFINITY};
        for (size_t t = 0; t < m; t++)
            best[t] = idx[t];
        mda_search(&s, 0, 0, 0.0);
        for (size_t t = 0; t < m; t++)
            selected[t] = (int64_t)best[t];
        *nselected = m;
    } else {
        rc = dpas__fail(err, DPAS_EINVAL, "rule",
                        "%s selects nothing: only krum, multi_krum, bulyan and brute select",
                        rule->name);
    }
done:
    dpas__ws_release(env->ws, mk);
    return rc;
}

/* ---- nearest neighbour mixing ---- */

typedef struct nnm_job {
    const dpas__kenv *env;
    const void *const *x;
    size_t n, d, k, parts, piece, stride;
    const size_t *rows; /* the mixed rows, in the order of out (indices into x) */
    const size_t *nbrs; /* k neighbours per mixed row, ascending, as slots of rows[] */
    void *const *out;
    unsigned char *bad; /* parts x n: a mixed row's sum overflowed (float64) */
    char *pack;         /* parts x n x stride bytes: each part's copy of the rows' piece */
    const void **prow;  /* parts x n: pointers into pack */
} nnm_job;

/* Elements per piece: the n rows' pieces (copied side by side) take about 256 KiB, well inside
 * the L2 cache; a multiple of 64 elements (every vector width), at least 256. */
static size_t nnm_piece(size_t n, size_t esize)
{
    size_t p = ((size_t)256 << 10) / (n * esize) / 64 * 64;
    return p < 256 ? 256 : p;
}

/* A range of coordinates for every mixed row. Each piece of the rows is first copied, one row
 * after the other, into a buffer where the rows' pieces lie a piece and 64 bytes apart: a
 * numpy matrix of d = 2^22 float64 puts its rows 2^25 bytes apart, so the same coordinate of
 * 16 rows fell in one cache set, and the k rows of every mixed row were read again from memory
 * (NNM took 11 passes of the mean, issue 33). Each row is now read once per call, in order. */
static void nnm_part(void *ctx, size_t p)
{
    nnm_job *j = ctx;
    const dpas__isa *isa = j->env->isa, *gen = dpas__generic_of(isa->dtype);
    size_t es = isa->esize, pieces = (j->d + j->piece - 1) / j->piece;
    size_t q0 = pieces * p / j->parts, q1 = pieces * (p + 1) / j->parts;
    char *pack = j->pack + p * j->n * j->stride;
    const void **prow = j->prow + p * j->n;
    for (size_t r = 0; r < j->n; r++)
        prow[r] = pack + r * j->stride;
    for (size_t q = q0; q < q1; q++) {
        size_t j0 = q * j->piece, len = j0 + j->piece < j->d ? j->piece : j->d - j0;
        size_t body = len / isa->width * isa->width;
        for (size_t r = 0; r < j->n; r++)
            memcpy(pack + r * j->stride, (const char *)j->x[j->rows[r]] + j0 * es, len * es);
        for (size_t r = 0; r < j->n; r++) {
            const size_t *nb = j->nbrs + r * j->k;
            char *o = (char *)j->out[r] + j0 * es;
            unsigned bad = 0;
            if (body)
                bad |= isa->mean(prow, nb, j->k, 0, body, o);
            if (body < len) /* the generic kernel indexes from the rows' start, as out */
                bad |= gen->mean(prow, nb, j->k, body, len, o);
            j->bad[p * j->n + r] |= bad != 0;
        }
    }
}

int dpas__nnm_mix(const dpas__kenv *env, const void *const *x, size_t n, size_t d, const double *D,
                  const unsigned char *alive, size_t f, void *const *out, dpas_error *err)
{
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        na += !alive || alive[i];
    size_t k = na - f;
    dpas__ws_mark mk = dpas__ws_mark_get(env->ws);
    size_t *rows = dpas__ws_alloc(env->ws, na, sizeof *rows);
    size_t *nbrs = dpas__ws_alloc(env->ws, na * k, sizeof *nbrs);
    scored *sc = dpas__ws_alloc(env->ws, na, sizeof *sc);
    if (!rows || !nbrs || !sc) {
        dpas__ws_release(env->ws, mk);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    na = 0;
    for (size_t i = 0; i < n; i++)
        if (!alive || alive[i])
            rows[na++] = i;
    for (size_t r = 0; r < na; r++) {
        /* the k nearest, itself (distance 0) included; ties: the lower index */
        for (size_t t = 0; t < na; t++)
            sc[t] = (scored){rows[t] == rows[r] ? 0.0 : D[rows[r] * n + rows[t]], rows[t]};
        qsort(sc, na, sizeof *sc, cmp_scored);
        size_t *nb = nbrs + r * k;
        for (size_t t = 0; t < k; t++)
            nb[t] = sc[t].i;
        /* summed in ascending row order (of x, the same as of the slots) */
        for (size_t a = 1; a < k; a++)
            for (size_t b = a; b > 0 && nb[b] < nb[b - 1]; b--) {
                size_t tmp = nb[b];
                nb[b] = nb[b - 1];
                nb[b - 1] = tmp;
            }
    }
    size_t *slots = dpas__ws_alloc(env->ws, na * k, sizeof *slots), *slot_of = NULL;
    size_t es = env->isa->esize, piece = nnm_piece(na, es);
    nnm_job j = {env, x, na, d, k, 1, piece, piece * es + 64, rows, slots, out, NULL, NULL, NULL};
    size_t pieces = (d + piece - 1) / piece;
    j.parts = env->threads > 1 ? (size_t)env->threads : 1;
    if (j.parts > pieces)
        j.parts = pieces ? pieces : 1;
    j.bad = dpas__ws_zalloc(env->ws, j.parts * na, 1);
    j.pack = dpas__ws_alloc(env->ws, j.parts * na, j.stride);
    j.prow = dpas__ws_alloc(env->ws, j.parts * na, sizeof *j.prow);
    slot_of = dpas__ws_alloc(env->ws, n, sizeof *slot_of);
    const void **nrows = dpas__ws_alloc(env->ws, k, sizeof *nrows);
    int rc = j.bad && nrows && slots && j.pack && j.prow && slot_of
                 ? 0
                 : dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    for (size_t t = 0; !rc && t < na; t++)
        slot_of[rows[t]] = t;
    for (size_t t = 0; !rc && t < na * k; t++)
        slots[t] = slot_of[nbrs[t]];
    if (!rc && d)
        dpas__parallel(env->threads, j.parts, nnm_part, &j);
    /* the rows whose mean of finite float64 values overflowed, again on scaled values */
    for (size_t r = 0; !rc && r < na; r++) {
        unsigned char bad = 0;
        for (size_t p = 0; p < j.parts; p++)
            bad |= j.bad[p * na + r];
        if (!bad)
            continue;
        for (size_t t = 0; t < k; t++)
            nrows[t] = x[nbrs[r * k + t]];
        rc = dpas__coord_scaled(env, nrows, k, d, 0, 0, 1, out[r], err);
    }
    dpas__ws_release(env->ws, mk);
    return rc;
}
