/* Aggregation kernels over n float32 gradients of d coordinates.
 *
 * Coordinate-wise rules sort each coordinate's n values with a fixed Batcher odd-even merge
 * network, eight coordinates at a time in AVX2 registers (lane = coordinate, so the rows are read
 * as they lie in memory, with no transpose). The portable path runs the same network on one
 * coordinate at a time with the same min/max, so both paths give bit-identical results. The
 * distance rules compute all pairwise squared distances block by block (the block of every row
 * stays in cache), in float within a block and in double across blocks. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define DPAS_X86 1
#define AVX2 __attribute__((target("avx2,fma")))
#endif

/* ---- the sorting network ---- */

typedef struct network {
    size_t count;
    uint32_t (*pair)[2];
} network;

/* Batcher's odd-even merge sort for any n (Knuth, TAOCP 5.3.4, exercise 32 form). */
static int network_build(size_t n, network *net)
{
    size_t cap = 16, count = 0;
    uint32_t(*p)[2] = malloc(cap * sizeof *p);
    if (!p)
        return -1;
    for (size_t t = 1; t < n; t <<= 1) {
        for (size_t k = t; k >= 1; k >>= 1) {
            for (size_t j = k % t; j + k < n; j += 2 * k) {
                size_t lim = k < n - j - k ? k : n - j - k;
                for (size_t i = 0; i < lim; i++) {
                    if ((i + j) / (2 * t) != (i + j + k) / (2 * t))
                        continue;
                    if (count == cap) {
                        cap *= 2;
                        void *q = realloc(p, cap * sizeof *p);
                        if (!q) {
                            free(p);
                            return -1;
                        }
                        p = q;
                    }
                    p[count][0] = (uint32_t)(i + j);
                    p[count][1] = (uint32_t)(i + j + k);
                    count++;
                }
            }
        }
    }
    net->count = count;
    net->pair = p;
    return 0;
}

enum { COL_MEDIAN, COL_TRIM, COL_WINDOW };

typedef struct colspec {
    int mode;
    size_t a; /* COL_TRIM: values dropped at each end; COL_WINDOW: the window's length */
} colspec;

static inline float fmin_net(float a, float b) { return a < b ? a : b; }
static inline float fmax_net(float a, float b) { return a > b ? a : b; }

/* The portable path: one coordinate at a time, the same network and the same arithmetic order
 * as the vector path. */
static void columns_generic(const float *const *x, size_t n, size_t j0, size_t j1,
                            const network *net, colspec cs, float *out, float *v)
{
    for (size_t j = j0; j < j1; j++) {
        for (size_t k = 0; k < n; k++)
            v[k] = x[k][j];
        for (size_t c = 0; c < net->count; c++) {
            float a = v[net->pair[c][0]], b = v[net->pair[c][1]];
            v[net->pair[c][0]] = fmin_net(a, b);
            v[net->pair[c][1]] = fmax_net(a, b);
        }
        float med = n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) * 0.5f;
        if (cs.mode == COL_MEDIAN) {
            out[j] = med;
        } else if (cs.mode == COL_TRIM) {
            float s = 0.0f;
            for (size_t k = cs.a; k < n - cs.a; k++)
                s += v[k];
            out[j] = s / (float)(n - 2 * cs.a);
        } else {
            size_t w = cs.a, best_s = 0;
            float best = INFINITY;
            for (size_t s = 0; s + w <= n; s++) {
                float cost = fmax_net(med - v[s], v[s + w - 1] - med);
                if (cost < best) {
                    best = cost;
                    best_s = s;
                }
            }
            float sum = 0.0f;
            for (size_t k = 0; k < n; k++)
                sum += (k >= best_s && k < best_s + w) ? v[k] : 0.0f;
            out[j] = sum / (float)w;
        }
    }
}

#ifdef DPAS_X86
/* The result of one group of eight coordinates from its sorted values v[0..n). Inlined into
 * each kernel, so with a constant n the loops unroll and v stays in registers. */
AVX2 static inline __attribute__((always_inline)) void finish_avx2(const __m256 *v, size_t n,
                                                                   colspec cs, float *out)
{
    const __m256 half = _mm256_set1_ps(0.5f);
    __m256 med = n & 1 ? v[n / 2] : _mm256_mul_ps(_mm256_add_ps(v[n / 2 - 1], v[n / 2]), half);
    if (cs.mode == COL_MEDIAN) {
        _mm256_storeu_ps(out, med);
    } else if (cs.mode == COL_TRIM) {
        __m256 s = _mm256_setzero_ps();
        for (size_t k = cs.a; k < n - cs.a; k++)
            s = _mm256_add_ps(s, v[k]);
        _mm256_storeu_ps(out, _mm256_div_ps(s, _mm256_set1_ps((float)(n - 2 * cs.a))));
    } else {
        size_t w = cs.a;
        __m256 best = _mm256_set1_ps(INFINITY);
        __m256i best_s = _mm256_setzero_si256();
        for (size_t s = 0; s + w <= n; s++) {
            __m256 cost = _mm256_max_ps(_mm256_sub_ps(med, v[s]), _mm256_sub_ps(v[s + w - 1], med));
            __m256 lt = _mm256_cmp_ps(cost, best, _CMP_LT_OQ);
            best = _mm256_blendv_ps(best, cost, lt);
            best_s = _mm256_blendv_epi8(best_s, _mm256_set1_epi32((int)s), _mm256_castps_si256(lt));
        }
        __m256i end = _mm256_add_epi32(best_s, _mm256_set1_epi32((int)w));
        __m256 sum = _mm256_setzero_ps();
        for (size_t k = 0; k < n; k++) {
            __m256i kk = _mm256_set1_epi32((int)k);
            /* s <= k < s + w */
            __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi32(best_s, kk), _mm256_cmpgt_epi32(end, kk));
            sum = _mm256_add_ps(sum, _mm256_and_ps(_mm256_castsi256_ps(in), v[k]));
        }
        _mm256_storeu_ps(out, _mm256_div_ps(sum, _mm256_set1_ps((float)w)));
    }
}

/* Any n: the network read from a table; v lives in memory. */
AVX2 static void columns_avx2(const float *const *x, size_t n, size_t j0, size_t j1,
                              const network *net, colspec cs, float *out, __m256 *v)
{
    for (size_t j = j0; j + 8 <= j1; j += 8) {
        for (size_t k = 0; k < n; k++)
            v[k] = _mm256_loadu_ps(x[k] + j);
        for (size_t c = 0; c < net->count; c++) {
            __m256 a = v[net->pair[c][0]], b = v[net->pair[c][1]];
            v[net->pair[c][0]] = _mm256_min_ps(a, b); /* a < b ? a : b */
            v[net->pair[c][1]] = _mm256_max_ps(a, b); /* a > b ? a : b */
        }
        finish_avx2(v, n, cs, out + j);
    }
}

/* n = 2..32: the network unrolled from networks.inc (the same comparators in the same order). */
#include "networks.inc"
#define CMP_AVX2(i, j)                                                                          \
    {                                                                                           \
        __m256 a_ = v[i], b_ = v[j];                                                            \
        v[i] = _mm256_min_ps(a_, b_);                                                           \
        v[j] = _mm256_max_ps(a_, b_);                                                           \
    }
#define COLUMNS_N(N)                                                                            \
    AVX2 static void columns_avx2_##N(const float *const *x, size_t j0, size_t j1, colspec cs,  \
                                      float *out)                                               \
    {                                                                                           \
        for (size_t j = j0; j + 8 <= j1; j += 8) {                                              \
            __m256 v[N];                                                                        \
            for (size_t k = 0; k < N; k++)                                                      \
                v[k] = _mm256_loadu_ps(x[k] + j);                                               \
            DPAS_NET_##N(CMP_AVX2) finish_avx2(v, N, cs, out + j);                              \
        }                                                                                       \
    }
COLUMNS_N(2) COLUMNS_N(3) COLUMNS_N(4) COLUMNS_N(5) COLUMNS_N(6) COLUMNS_N(7) COLUMNS_N(8)
COLUMNS_N(9) COLUMNS_N(10) COLUMNS_N(11) COLUMNS_N(12) COLUMNS_N(13) COLUMNS_N(14) COLUMNS_N(15)
COLUMNS_N(16) COLUMNS_N(17) COLUMNS_N(18) COLUMNS_N(19) COLUMNS_N(20) COLUMNS_N(21) COLUMNS_N(22)
COLUMNS_N(23) COLUMNS_N(24) COLUMNS_N(25) COLUMNS_N(26) COLUMNS_N(27) COLUMNS_N(28) COLUMNS_N(29)
COLUMNS_N(30) COLUMNS_N(31) COLUMNS_N(32)

typedef void (*columns_fn)(const float *const *, size_t, size_t, colspec, float *);
static const columns_fn columns_unrolled[DPAS_NET_MAX + 1] = {
    NULL,             NULL,             columns_avx2_2,  columns_avx2_3,  columns_avx2_4,
    columns_avx2_5,   columns_avx2_6,   columns_avx2_7,  columns_avx2_8,  columns_avx2_9,
    columns_avx2_10,  columns_avx2_11,  columns_avx2_12, columns_avx2_13, columns_avx2_14,
    columns_avx2_15,  columns_avx2_16,  columns_avx2_17, columns_avx2_18, columns_avx2_19,
    columns_avx2_20,  columns_avx2_21,  columns_avx2_22, columns_avx2_23, columns_avx2_24,
    columns_avx2_25,  columns_avx2_26,  columns_avx2_27, columns_avx2_28, columns_avx2_29,
    columns_avx2_30,  columns_avx2_31,  columns_avx2_32};

static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

const char *dpas_kernel_isa(void)
{
#ifdef DPAS_X86
    if (have_avx2())
        return "avx2";
#endif
    return "generic";
}

static int use_avx2(const dpas_agg_opts *o)
{
#ifdef DPAS_X86
    return !(o && o->generic) && have_avx2();
#else
    (void)o;
    return 0;
#endif
}

/* Apply a column rule to every coordinate. */
static int columns(const float *const *x, size_t n, size_t d, colspec cs, const dpas_agg_opts *o,
                   float *out, dpas_error *err)
{
    network net;
    if (network_build(n, &net))
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    size_t done = 0;
#ifdef DPAS_X86
    if (use_avx2(o) && d >= 8) {
        done = d / 8 * 8;
        if (n >= 2 && n <= DPAS_NET_MAX) {
            columns_unrolled[n](x, 0, done, cs, out);
        } else { /* the values of eight coordinates live in memory here */
            __m256 *v = aligned_alloc(32, n * sizeof(__m256));
            if (!v) {
                free(net.pair);
                return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
            }
            columns_avx2(x, n, 0, done, &net, cs, out, v);
            free(v);
        }
    }
#else
    (void)o;
#endif
    if (done < d) {
        float *v = malloc(n * sizeof *v);
        if (!v) {
            free(net.pair);
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        }
        columns_generic(x, n, done, d, &net, cs, out, v);
        free(v);
    }
    free(net.pair);
    return 0;
}

/* ---- mean and sign vote ---- */

/* Blocks of coordinates, rows streamed one after another: the partial sums stay in L1 and every
 * row is read sequentially. The sum is taken in row order for every coordinate. */
#define BLOCK 2048

static void mean_generic(const float *const *x, const size_t *rows, size_t n, size_t d, float *out)
{
    float acc[BLOCK];
    const float nf = (float)n;
    for (size_t b = 0; b < d; b += BLOCK) {
        size_t len = d - b < BLOCK ? d - b : BLOCK;
        memcpy(acc, x[rows ? rows[0] : 0] + b, len * sizeof *acc);
        for (size_t k = 1; k < n; k++) {
            const float *r = x[rows ? rows[k] : k] + b;
            for (size_t t = 0; t < len; t++)
                acc[t] += r[t];
        }
        for (size_t t = 0; t < len; t++)
            out[b + t] = acc[t] / nf;
    }
}

static void sign_generic(const float *const *x, size_t n, size_t j0, size_t d, float *out)
{
    for (size_t j = j0; j < d; j++) {
        int32_t acc = 0;
        for (size_t k = 0; k < n; k++)
            acc += (x[k][j] > 0.0f) - (x[k][j] < 0.0f);
        out[j] = (float)((acc > 0) - (acc < 0));
    }
}

#ifdef DPAS_X86
/* The same sums in the same order as mean_generic, eight lanes at a time. */
AVX2 static void mean_avx2(const float *const *x, const size_t *rows, size_t n, size_t d, float *out)
{
    __m256 acc[BLOCK / 8];
    const __m256 nf = _mm256_set1_ps((float)n);
    size_t whole = d / 8 * 8;
    for (size_t b = 0; b < whole; b += BLOCK) {
        size_t len = whole - b < BLOCK ? whole - b : BLOCK, nv = len / 8;
        const float *r0 = x[rows ? rows[0] : 0] + b;
        for (size_t t = 0; t < nv; t++)
            acc[t] = _mm256_loadu_ps(r0 + 8 * t);
        for (size_t k = 1; k < n; k++) {
            const float *r = x[rows ? rows[k] : k] + b;
            for (size_t t = 0; t < nv; t++)
                acc[t] = _mm256_add_ps(acc[t], _mm256_loadu_ps(r + 8 * t));
        }
        for (size_t t = 0; t < nv; t++)
            _mm256_storeu_ps(out + b + 8 * t, _mm256_div_ps(acc[t], nf));
    }
    for (size_t j = whole; j < d; j++) {
        float a = x[rows ? rows[0] : 0][j];
        for (size_t k = 1; k < n; k++)
            a += x[rows ? rows[k] : k][j];
        out[j] = a / (float)n;
    }
}

AVX2 static void sign_avx2(const float *const *x, size_t n, size_t d, float *out)
{
    const __m256 zero = _mm256_setzero_ps();
    size_t whole = d / 8 * 8;
    for (size_t j = 0; j < whole; j += 8) {
        __m256i acc = _mm256_setzero_si256();
        for (size_t k = 0; k < n; k++) {
            __m256 v = _mm256_loadu_ps(x[k] + j);
            /* +1 where v > 0, -1 where v < 0: compare masks are -1 */
            acc = _mm256_sub_epi32(acc, _mm256_castps_si256(_mm256_cmp_ps(v, zero, _CMP_GT_OQ)));
            acc = _mm256_add_epi32(acc, _mm256_castps_si256(_mm256_cmp_ps(v, zero, _CMP_LT_OQ)));
        }
        __m256i pos = _mm256_cmpgt_epi32(acc, _mm256_setzero_si256());
        __m256i neg = _mm256_cmpgt_epi32(_mm256_setzero_si256(), acc);
        _mm256_storeu_ps(out + j, _mm256_cvtepi32_ps(_mm256_sub_epi32(neg, pos)));
    }
    sign_generic(x, n, whole, d, out);
}
#endif

static void mean_rows(const float *const *x, const size_t *rows, size_t n, size_t d, float *out,
                      const dpas_agg_opts *o)
{
#ifdef DPAS_X86
    if (use_avx2(o)) {
        mean_avx2(x, rows, n, d, out);
        return;
    }
#endif
    mean_generic(x, rows, n, d, out);
}

static void sign_vote(const float *const *x, size_t n, size_t d, float *out, const dpas_agg_opts *o)
{
#ifdef DPAS_X86
    if (use_avx2(o)) {
        sign_avx2(x, n, d, out);
        return;
    }
#endif
    sign_generic(x, n, 0, d, out);
}

/* ---- distances ---- */

#define DBLOCK 1024

static float sqdist_generic(const float *a, const float *b, size_t len)
{
    float s = 0.0f;
    for (size_t t = 0; t < len; t++) {
        float e = a[t] - b[t];
        s += e * e;
    }
    return s;
}

#ifdef DPAS_X86
AVX2 static double sqdist_avx2(const float *a, const float *b, size_t len)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    size_t t = 0;
    for (; t + 32 <= len; t += 32) {
        __m256 e0 = _mm256_sub_ps(_mm256_loadu_ps(a + t), _mm256_loadu_ps(b + t));
        __m256 e1 = _mm256_sub_ps(_mm256_loadu_ps(a + t + 8), _mm256_loadu_ps(b + t + 8));
        __m256 e2 = _mm256_sub_ps(_mm256_loadu_ps(a + t + 16), _mm256_loadu_ps(b + t + 16));
        __m256 e3 = _mm256_sub_ps(_mm256_loadu_ps(a + t + 24), _mm256_loadu_ps(b + t + 24));
        s0 = _mm256_fmadd_ps(e0, e0, s0);
        s1 = _mm256_fmadd_ps(e1, e1, s1);
        s2 = _mm256_fmadd_ps(e2, e2, s2);
        s3 = _mm256_fmadd_ps(e3, e3, s3);
    }
    for (; t + 8 <= len; t += 8) {
        __m256 e = _mm256_sub_ps(_mm256_loadu_ps(a + t), _mm256_loadu_ps(b + t));
        s0 = _mm256_fmadd_ps(e, e, s0);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    double r = (double)_mm_cvtss_f32(h);
    for (; t < len; t++) {
        float e = a[t] - b[t];
        r += (double)(e * e);
    }
    return r;
}
#endif

static void sqdist_add(const float *const *x, size_t n, size_t d, double *D, int avx2)
{
    (void)avx2;
    for (size_t b = 0; b < d; b += DBLOCK) {
        size_t len = d - b < DBLOCK ? d - b : DBLOCK;
        for (size_t i = 0; i < n; i++) {
            for (size_t j = i + 1; j < n; j++) {
                double v;
#ifdef DPAS_X86
                if (avx2)
                    v = sqdist_avx2(x[i] + b, x[j] + b, len);
                else
#endif
                    v = (double)sqdist_generic(x[i] + b, x[j] + b, len);
                D[i * n + j] += v;
                D[j * n + i] += v;
            }
        }
    }
}

void dpas_pairwise_sqdist_add(const float *const *x, size_t n, size_t d, double *D)
{
    sqdist_add(x, n, d, D, use_avx2(NULL));
}

/* ---- selection (Krum family) ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Krum's score of i among the rows alive[]: the sum of its k smallest distances (NaN as +inf). */
static double score(const double *D, size_t n, size_t i, const unsigned char *alive, size_t k,
                    double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        if (j == i || (alive && !alive[j]))
            continue;
        double v = D[i * n + j];
        tmp[m++] = isnan(v) ? INFINITY : v;
    }
    qsort(tmp, m, sizeof *tmp, cmp_double);
    double s = 0.0;
    for (size_t t = 0; t < k && t < m; t++)
        s += tmp[t];
    return s;
}

static bool is(const dpas_rule *r, dpas_rule_id id) { return r->id == id; }

static int check_rule(const dpas_rule *rule, size_t n, const dpas_agg_opts *o, dpas_error *err)
{
    int64_t f = o ? o->f : 0;
    if (n < 1)
        return dpas__fail(err, DPAS_EINVAL, "n", "aggregation needs n >= 1 gradients, got %zu", n);
    if (f < 0)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)f);
    if (!dpas_rule_tolerates(rule, (int64_t)n, f))
        return dpas__fail(err, DPAS_EINVAL, "f",
                          "%s (%s) needs %s, got n = %zu and f = %lld", rule->name,
                          rule->convention, rule->condition, n, (long long)f);
    return 0;
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

int dpas_select(const dpas_rule *rule, const double *D, size_t n, const dpas_agg_opts *o,
                int64_t *selected, size_t *nselected, dpas_error *err)
{
    int rc = check_rule(rule, n, o, err);
    if (rc)
        return rc;
    const size_t f = (size_t)(o ? o->f : 0);
    const size_t drop = (size_t)rule->neighbour_drop; /* k = n - f - drop */
    double *tmp = malloc(n * sizeof *tmp);
    scored *sc = malloc(n * sizeof *sc);
    unsigned char *alive = malloc(n);
    if (!tmp || !sc || !alive) {
        free(tmp), free(sc), free(alive);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    *nselected = 0;
    if (is(rule, DPAS_RULE_KRUM) || is(rule, DPAS_RULE_MULTI_KRUM)) {
        size_t k = n - f - drop;
        for (size_t i = 0; i < n; i++)
            sc[i] = (scored){score(D, n, i, NULL, k, tmp), i};
        qsort(sc, n, sizeof *sc, cmp_scored);
        size_t m = 1;
        if (is(rule, DPAS_RULE_MULTI_KRUM))
            m = o && o->m > 0 ? (size_t)o->m : n - f;
        if (m > n) {
            rc = dpas__fail(err, DPAS_EINVAL, "m", "multi_krum's m must be <= n (%zu), got %zu", n, m);
        } else {
            for (size_t t = 0; t < m; t++)
                selected[t] = (int64_t)sc[t].i;
            *nselected = m;
        }
    } else if (is(rule, DPAS_RULE_BULYAN)) {
        size_t theta = n - 2 * f;
        memset(alive, 1, n);
        for (size_t t = 0; t < theta; t++) {
            size_t r = n - t, k = r > f + 3 ? r - f - 2 : 1;
            double best = INFINITY;
            size_t arg = n;
            for (size_t i = 0; i < n; i++) {
                if (!alive[i])
                    continue;
                double s = score(D, n, i, alive, k, tmp);
                if (arg == n || s < best) {
                    best = s;
                    arg = i;
                }
            }
            alive[arg] = 0;
            selected[t] = (int64_t)arg;
        }
        *nselected = theta;
    } else {
        rc = dpas__fail(err, DPAS_EINVAL, "rule", "%s selects nothing: only krum, multi_krum and "
                                                  "bulyan select", rule->name);
    }
    free(tmp), free(sc), free(alive);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int dpas_aggregate_selected(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, const int64_t *selected, size_t nsel,
                            float *out, dpas_error *err)
{
    if (!nsel || nsel > n)
        return dpas__fail(err, DPAS_EINVAL, "selected", "a selection needs 1 to n indices, got %zu", nsel);
    int64_t *idx = malloc(nsel * sizeof *idx);
    const float **rows = malloc(nsel * sizeof *rows);
    size_t *ri = malloc(nsel * sizeof *ri);
    int rc = 0;
    if (!idx || !rows || !ri) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    memcpy(idx, selected, nsel * sizeof *idx);
    qsort(idx, nsel, sizeof *idx, cmp_i64); /* sums in index order, whatever the selection order */
    for (size_t t = 0; t < nsel; t++) {
        if (idx[t] < 0 || (size_t)idx[t] >= n || (t && idx[t] == idx[t - 1])) {
            rc = dpas__fail(err, DPAS_EINVAL, "selected", "selection index %lld is out of range or "
                                                          "repeated", (long long)idx[t]);
            goto done;
        }
        rows[t] = x[idx[t]];
        ri[t] = (size_t)idx[t];
    }
    if (is(rule, DPAS_RULE_BULYAN)) {
        size_t f = (size_t)(o ? o->f : 0);
        if (nsel <= 2 * f) {
            rc = dpas__fail(err, DPAS_EINVAL, "f", "bulyan's selection of %zu leaves nothing after "
                                                   "trimming 2f = %zu", nsel, 2 * f);
            goto done;
        }
        rc = columns(rows, nsel, d, (colspec){COL_WINDOW, nsel - 2 * f}, o, out, err);
    } else if (nsel == 1) {
        memcpy(out, rows[0], d * sizeof *out);
    } else {
        mean_rows(x, ri, nsel, d, out, o);
    }
done:
    free(idx), free(rows), free(ri);
    return rc;
}

/* ---- centered clipping ---- */

static int centered_clipping(const float *const *x, size_t n, size_t d, const dpas_agg_opts *o,
                             float *out, dpas_error *err)
{
    int rc = columns(x, n, d, (colspec){COL_MEDIAN, 0}, o, out, err); /* v0: the median */
    if (rc)
        return rc;
    double *r = malloc(n * sizeof *r), *sorted = malloc(n * sizeof *sorted);
    float *c = malloc(n * sizeof *c);
    if (!r || !sorted || !c) {
        free(r), free(sorted), free(c);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    int64_t iters = o && o->iterations > 0 ? o->iterations : 10;
    double tau = o ? o->tau : 0.0;
    for (int64_t it = 0; it < iters; it++) {
        for (size_t i = 0; i < n; i++) {
            double s = 0.0;
            for (size_t j = 0; j < d; j++) {
                double e = (double)x[i][j] - (double)out[j];
                s += e * e;
            }
            r[i] = sqrt(s);
        }
        if (it == 0 && !(tau > 0)) { /* adaptive radius: the median distance to v0 */
            memcpy(sorted, r, n * sizeof *sorted);
            for (size_t i = 0; i < n; i++)
                if (isnan(sorted[i]))
                    sorted[i] = INFINITY;
            qsort(sorted, n, sizeof *sorted, cmp_double);
            tau = n & 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
        }
        for (size_t i = 0; i < n; i++)
            c[i] = r[i] > tau ? (float)(tau / r[i]) : 1.0f; /* NaN distance: weight 1 */
        for (size_t j = 0; j < d; j++) {
            float s = 0.0f;
            for (size_t i = 0; i < n; i++)
                s += c[i] * (x[i][j] - out[j]);
            out[j] += s / (float)n;
        }
    }
    free(r), free(sorted), free(c);
    return 0;
}

/* ---- the entry point ---- */

int dpas_aggregate(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                   const dpas_agg_opts *o, float *out, int64_t *selected, size_t *nselected,
                   dpas_error *err)
{
    if (nselected)
        *nselected = 0;
    if (!rule || !x || !out)
        return dpas__fail(err, DPAS_EINVAL, "rule", "aggregate needs a rule, rows and an output");
    int rc = check_rule(rule, n, o, err);
    if (rc)
        return rc;
    const size_t f = (size_t)(o ? o->f : 0);
    if (is(rule, DPAS_RULE_MEAN)) {
        mean_rows(x, NULL, n, d, out, o);
        return 0;
    }
    if (is(rule, DPAS_RULE_MEDIAN))
        return columns(x, n, d, (colspec){COL_MEDIAN, 0}, o, out, err);
    if (is(rule, DPAS_RULE_TRIMMED_MEAN))
        return columns(x, n, d, (colspec){COL_TRIM, f}, o, out, err);
    if (is(rule, DPAS_RULE_MEAMED))
        return columns(x, n, d, (colspec){COL_WINDOW, n - f}, o, out, err);
    if (is(rule, DPAS_RULE_SIGN_MAJORITY)) {
        sign_vote(x, n, d, out, o);
        return 0;
    }
    if (is(rule, DPAS_RULE_CENTERED_CLIPPING))
        return centered_clipping(x, n, d, o, out, err);
    if (is(rule, DPAS_RULE_KRUM) || is(rule, DPAS_RULE_MULTI_KRUM) || is(rule, DPAS_RULE_BULYAN)) {
        double *D = calloc(n * n, sizeof *D);
        int64_t *sel = selected ? selected : malloc(n * sizeof *sel);
        size_t nsel = 0;
        if (!D || !sel) {
            free(D);
            if (!selected)
                free(sel);
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        }
        sqdist_add(x, n, d, D, use_avx2(o));
        rc = dpas_select(rule, D, n, o, sel, &nsel, err);
        if (!rc)
            rc = dpas_aggregate_selected(rule, x, n, d, o, sel, nsel, out, err);
        if (!rc && nselected)
            *nselected = nsel;
        free(D);
        if (!selected)
            free(sel);
        return rc;
    }
    return dpas__fail(err, DPAS_EINVAL, "rule", "no float32 kernel for %s (yet); kernels: mean, "
                                                "median, trimmed_mean, meamed, sign_majority, "
                                                "krum, multi_krum, bulyan, centered_clipping",
                      rule->name);
}
