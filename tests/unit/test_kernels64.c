/* SPDX-License-Identifier: Apache-2.0 */
/* The kernels of issue 24: float64 rows (against references written here, in double and long
 * double, and by hand near DBL_MAX), distances summed in double (tiny and huge float32 rows
 * ordered as long double orders them, and, a consistency check, bit-identical across
 * instruction sets), the non-finite policy for every rule at every n (one NaN row with f = 0 is
 * refused, never returned), options a rule does not take, unaligned rows, the workspace kept
 * across calls, and a start for the iterative rules (ByzFL's documented examples). */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "../../src/lib/kernels/kernels_internal.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) /* xorshift64: uniform in [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static const dpas_rule *rule_c(const char *name, const char *conv)
{
    const dpas_rule *r;
    assert_int_equal(dpas_rule_find(name, conv, &r, NULL), 0);
    return r;
}
static const dpas_rule *rule(const char *name) { return rule_c(name, NULL); }

static int isas[4], nisas;
static void find_isas(void)
{
    nisas = 0;
    for (int k = DPAS_ISA_GENERIC; k <= DPAS_ISA_AVX512; k++)
        if (dpas_kernel_isa_available(k))
            isas[nisas++] = k;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- float64 against references ---- */

/* The median, trimmed mean and mean of each column, as documented: sorted, the middle value or
 * the two middle ones halved and added, the kept values summed in ascending order, the mean
 * summed in row order; all in double. */
static void ref64(const char *rule_name, const double *const *x, size_t n, size_t d, size_t f,
                  double *out)
{
    double *v = malloc(n * sizeof *v);
    for (size_t j = 0; j < d; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            v[i] = x[i][j], s += x[i][j];
        if (!strcmp(rule_name, "mean")) {
            out[j] = s / (double)n;
            continue;
        }
        qsort(v, n, sizeof *v, cmpd);
        if (!strcmp(rule_name, "median")) {
            out[j] = n % 2 ? v[n / 2] : v[n / 2 - 1] * 0.5 + v[n / 2] * 0.5;
        } else {
            s = 0;
            for (size_t k = f; k < n - f; k++)
                s += v[k];
            out[j] = s / (double)(n - 2 * f);
        }
    }
    free(v);
}

static void test_f64_columns(void **state)
{
    (void)state;
    find_isas();
    static const size_t ns[] = {1, 2, 3, 5, 8, 16, 17, 33}, ds[] = {1, 7, 64, 1037};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof ds / sizeof *ds; b++) {
            size_t n = ns[a], d = ds[b], f = (n - 1) / 2;
            double *data = malloc(n * d * sizeof *data), *want = malloc(d * sizeof *want);
            double *got = malloc(d * sizeof *got);
            const double **rows = malloc(n * sizeof *rows);
            for (size_t i = 0; i < n * d; i++)
                data[i] = urand() * 1e3;
            for (size_t i = 0; i < n; i++)
                rows[i] = data + i * d;
            static const char *names[] = {"mean", "median", "trimmed_mean"};
            for (size_t r = 0; r < 3; r++) {
                size_t fr = r == 0 ? 0 : f;
                ref64(names[r], rows, n, d, fr, want);
                for (int k = 0; k < nisas; k++) {
                    dpas_agg_opts o = {.f = (int64_t)fr, .isa = isas[k]};
                    dpas_error e = {0};
                    if (dpas_aggregate_f64(rule(names[r]), rows, n, d, &o, got, NULL, NULL, &e))
                        fail_msg("%s n=%zu: %s", names[r], n, e.message);
                    for (size_t j = 0; j < d; j++)
                        if (got[j] != want[j])
                            fail_msg("%s n=%zu d=%zu isa=%d coordinate %zu: %.17g, reference %.17g",
                                     names[r], n, d, isas[k], j, got[j], want[j]);
                }
            }
            free(data), free(want), free(got), free(rows);
        }
}

/* Near DBL_MAX: sums that overflow double are computed on scaled values (by hand: the mean of
 * 2^1023 and 2^1022 is 3 x 2^1021; of three DBL_MAX, DBL_MAX). */
static void test_f64_overflow(void **state)
{
    (void)state;
    find_isas();
    const double big = ldexp(1.0, 1023), half = ldexp(1.0, 1022);
    double r0[3] = {big, DBL_MAX, -big}, r1[3] = {half, DBL_MAX, -big}, r2[3] = {big, DBL_MAX, -half};
    double r3[3] = {big, DBL_MAX, -big};
    const double *rows[4] = {r0, r1, r2, r3};
    double out[3];
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.isa = isas[k]};
        dpas_error e = {0};
        assert_int_equal(dpas_aggregate_f64(rule("mean"), rows, 2, 3, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == 3 * ldexp(1.0, 1021));
        assert_true(out[1] == DBL_MAX);
        assert_true(out[2] == -big);
        /* median of four: the two middle values halved and added */
        assert_int_equal(dpas_aggregate_f64(rule("median"), rows, 4, 3, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == big && out[1] == DBL_MAX && out[2] == -big);
        o.f = 1;
        assert_int_equal(
            dpas_aggregate_f64(rule("trimmed_mean"), rows, 4, 3, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == big && out[1] == DBL_MAX && out[2] == -big);
        assert_int_equal(dpas_aggregate_f64(rule("meamed"), rows, 4, 3, &o, out, NULL, NULL, &e), 0);
        for (int j = 0; j < 3; j++)
            assert_true(isfinite(out[j]));
        o.f = 0;
        /* the geometric median and centered clipping of rows near DBL_MAX stay finite */
        assert_int_equal(
            dpas_aggregate_f64(rule("geometric_median"), rows, 4, 3, &o, out, NULL, NULL, &e), 0);
        for (int j = 0; j < 3; j++)
            assert_true(isfinite(out[j]));
        o.f = 1;
        assert_int_equal(
            dpas_aggregate_f64(rule("centered_clipping"), rows, 4, 3, &o, out, NULL, NULL, &e), 0);
        for (int j = 0; j < 3; j++)
            assert_true(isfinite(out[j]));
    }
}

/* Krum's scores with honest float64 rows spread about 1e300 (their squared distances overflow
 * double) or about 1e-300 (theirs underflow), one Byzantine row far off: the honest row that
 * long double scores best (computed here with a scale, as dpas does not) is selected. */
static void krum_f64_case(double level, double byz)
{
    enum { N = 7, D = 5, F = 2 };
    double data[N][D];
    const double *rows[N];
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < D; j++)
            data[i][j] = level * (1.0 + 0.3 * urand());
        rows[i] = data[i];
    }
    for (size_t j = 0; j < D; j++)
        data[3][j] = byz, data[5][j] = -byz;
    /* reference: long double distances of the values divided by level (exact powers aside) */
    long double dist[N][N];
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < N; k++) {
            long double s = 0;
            for (size_t j = 0; j < D; j++) {
                long double e = (long double)data[i][j] / level - (long double)data[k][j] / level;
                s += e * e;
            }
            dist[i][k] = s;
        }
    size_t best = N;
    long double best_score = 0;
    for (size_t i = 0; i < N; i++) {
        long double v[N];
        size_t m = 0;
        for (size_t k = 0; k < N; k++)
            if (k != i)
                v[m++] = dist[i][k];
        for (size_t a = 1; a < m; a++)
            for (size_t b = a; b > 0 && v[b] < v[b - 1]; b--) {
                long double t = v[b];
                v[b] = v[b - 1], v[b - 1] = t;
            }
        long double s = 0;
        for (size_t t = 0; t < N - F - 2; t++)
            s += v[t];
        if (best == N || s < best_score)
            best = i, best_score = s;
    }
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.f = F, .isa = isas[k]};
        double out[D];
        int64_t sel[N];
        size_t nsel = 0;
        dpas_error e = {0};
        assert_int_equal(dpas_aggregate_f64(rule("krum"), rows, N, D, &o, out, sel, &nsel, &e), 0);
        assert_int_equal(nsel, 1);
        if ((size_t)sel[0] != best)
            fail_msg("level %g isa %d: krum selected %lld, long double says %zu", level, isas[k],
                     (long long)sel[0], best);
    }
}

static void test_f64_distances(void **state)
{
    (void)state;
    find_isas();
    for (int t = 0; t < 20; t++) {
        krum_f64_case(1e300, -DBL_MAX);
        krum_f64_case(1e-300, 1e-290);
        krum_f64_case(1e200, 1e250);
    }
}

/* ---- float32 distances in double ---- */

/* Rows of float32 values about 1e-20 (whose squares vanish in float) and about 1e19 (whose
 * squares overflow float): multi_krum's order of scores is long double's, on every instruction
 * set, and the same on each. */
static void order_case(double level)
{
    enum { N = 9, D = 300, F = 2 };
    static float data[N][D];
    const float *rows[N];
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < D; j++)
            data[i][j] = (float)(level * (1.0 + (0.05 + 0.1 * (double)i) * urand()));
        rows[i] = data[i];
    }
    long double score[N];
    for (size_t i = 0; i < N; i++) {
        long double v[N];
        size_t m = 0;
        for (size_t k = 0; k < N; k++) {
            if (k == i)
                continue;
            long double s = 0;
            for (size_t j = 0; j < D; j++) {
                long double e = ((long double)data[i][j] - (long double)data[k][j]) / level;
                s += e * e;
            }
            v[m++] = s;
        }
        for (size_t a = 1; a < m; a++)
            for (size_t b = a; b > 0 && v[b] < v[b - 1]; b--) {
                long double t = v[b];
                v[b] = v[b - 1], v[b - 1] = t;
            }
        score[i] = 0;
        for (size_t t = 0; t < N - F - 2; t++)
            score[i] += v[t];
    }
    size_t order[N];
    for (size_t i = 0; i < N; i++)
        order[i] = i;
    for (size_t a = 1; a < N; a++)
        for (size_t b = a; b > 0 && score[order[b]] < score[order[b - 1]]; b--) {
            size_t t = order[b];
            order[b] = order[b - 1], order[b - 1] = t;
        }
    int64_t first[N];
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.f = F, .m = N, .isa = isas[k]};
        float out[D];
        int64_t sel[N];
        size_t nsel = 0;
        dpas_error e = {0};
        assert_int_equal(dpas_aggregate(rule("multi_krum"), rows, N, D, &o, out, sel, &nsel, &e), 0);
        assert_int_equal(nsel, N);
        for (size_t t = 0; t < N; t++)
            if ((size_t)sel[t] != order[t])
                fail_msg("level %g isa %d: place %zu is row %lld, long double says %zu", level,
                         isas[k], t, (long long)sel[t], order[t]);
        if (k == 0)
            memcpy(first, sel, sizeof first);
        else
            assert_memory_equal(first, sel, sizeof first);
    }
}

static void test_f32_distance_order(void **state)
{
    (void)state;
    find_isas();
    for (int t = 0; t < 10; t++) {
        order_case(1e-20);
        order_case(1e-42); /* subnormal floats */
        order_case(1e19);
        order_case(1.0);
    }
}

/* Consistency (two paths of our own code): the distance matrix of every instruction set is the
 * same to the last bit, for float32 and float64 rows, odd n and d. */
static void test_distances_identical(void **state)
{
    (void)state;
    find_isas();
    static const size_t ns[] = {2, 5, 7, 16, 33}, ds[] = {1, 9, 517, 20000};
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++)
        for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
            for (size_t b = 0; b < sizeof ds / sizeof *ds; b++) {
                size_t n = ns[a], d = ds[b], es = dtype == DPAS_FLOAT64 ? 8 : 4;
                unsigned char *data = malloc(n * d * es);
                const void **rows = malloc(n * sizeof *rows);
                for (size_t i = 0; i < n * d; i++) {
                    double v = urand() * (i % 3 ? 1.0 : 1e-3);
                    if (dtype == DPAS_FLOAT64)
                        ((double *)(void *)data)[i] = v;
                    else
                        ((float *)(void *)data)[i] = (float)v;
                }
                for (size_t i = 0; i < n; i++)
                    rows[i] = data + i * d * es;
                double *first = calloc(n * n, sizeof *first), *D = calloc(n * n, sizeof *D);
                for (int k = 0; k < nisas; k++) {
                    dpas_agg_opts o = {.isa = isas[k]};
                    dpas__kenv env = {NULL, 1, NULL, NULL, NULL, 0, NULL};
                    int own = 0;
                    assert_int_equal(dpas__isa_for(&o, dtype, &env.isa, NULL), 0);
                    assert_int_equal(dpas__ws_begin(NULL, &env.ws, &own, NULL), 0);
                    memset(D, 0, n * n * sizeof *D);
                    assert_int_equal(dpas__sqdist(&env, rows, n, d, 1.0, D, NULL), 0);
                    dpas__ws_end(env.ws, own);
                    if (k == 0)
                        memcpy(first, D, n * n * sizeof *D);
                    else if (memcmp(first, D, n * n * sizeof *D))
                        fail_msg("dtype %d n %zu d %zu: isa %d's distances differ from isa %d's",
                                 dtype, n, d, isas[k], isas[0]);
                    /* the distances to one row (MoNNA's) are that row of D */
                    double to[33];
                    assert_int_equal(dpas__ws_begin(NULL, &env.ws, &own, NULL), 0);
                    assert_int_equal(dpas__sqdist_to(&env, rows, n, d, n / 2, 1.0, to, NULL), 0);
                    dpas__ws_end(env.ws, own);
                    if (memcmp(to, D + (n / 2) * n, n * sizeof *to))
                        fail_msg("dtype %d n %zu d %zu isa %d: distances to row %zu differ from D",
                                 dtype, n, d, isas[k], n / 2);
                }
                free(data), free(rows), free(first), free(D);
            }
}

/* ---- the non-finite policy for every rule at every n ---- */

/* One NaN (or Inf) row among n, f = 0: refused by every rule that runs at that n, for both
 * element types, whichever row it is (issue 21: brute and ByzFL's Krum returned NaN at n = 1).
 * With f = the largest the rule allows (>= 1) the output is finite. */
static void test_nonfinite_every_rule(void **state)
{
    (void)state;
    enum { D = 5 };
    for (size_t r = 0; r < dpas_rule_count(); r++) {
        const dpas_rule *ru = dpas_rule_at(r);
        if (ru->caps & DPAS_RULE_CAP_PREAGGREGATION)
            continue;
        for (size_t n = 1; n <= 9; n++)
            for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++)
                for (size_t p = 0; p < n; p++) {
                    double data64[9][D];
                    float data32[9][D];
                    const void *rows[9];
                    for (size_t i = 0; i < n; i++) {
                        for (size_t j = 0; j < D; j++) {
                            double v = i == p ? (j == 2 ? (p % 2 ? INFINITY : NAN) : 1.0)
                                              : 1.0 + 0.01 * urand();
                            data64[i][j] = v, data32[i][j] = (float)v;
                        }
                        rows[i] = dtype == DPAS_FLOAT64 ? (void *)data64[i] : (void *)data32[i];
                    }
                    double out[D];
                    dpas_error e = {0};
                    dpas_agg_opts o = {0};
                    int64_t maxf = -1;
                    dpas_rule_max_f(ru, (int64_t)n, &maxf, NULL);
                    if (maxf < 0)
                        continue;
                    int rc = dpas_aggregate_typed(ru, rows, dtype, n, D, &o, out, NULL, NULL, &e);
                    if (rc != DPAS_EINVAL || !strstr(e.message, "NaN or Inf"))
                        fail_msg("%s (%s) n=%zu dtype=%d bad row %zu, f = 0: rc %d \"%s\"",
                                 ru->name, ru->convention, n, dtype, p, rc, e.message);
                    if (maxf < 1 || (ru->id == DPAS_RULE_BRUTE && n > 7))
                        continue;
                    o.f = maxf;
                    rc = dpas_aggregate_typed(ru, rows, dtype, n, D, &o, out, NULL, NULL, &e);
                    if (ru->id == DPAS_RULE_MONNA && p == 0) { /* the row taken as honest */
                        if (rc != DPAS_EINVAL || !strstr(e.message, "row idx = 0 has a NaN or Inf"))
                            fail_msg("monna n=%zu: rc %d \"%s\"", n, rc, e.message);
                        continue;
                    }
                    if (rc)
                        fail_msg("%s n=%zu f=%lld: %s", ru->name, n, (long long)maxf, e.message);
                    for (size_t j = 0; j < D; j++) {
                        double v = dtype == DPAS_FLOAT64 ? out[j] : ((float *)(void *)out)[j];
                        if (!isfinite(v))
                            fail_msg("%s n=%zu dtype=%d: coordinate %zu is %g", ru->name, n,
                                     dtype, j, v);
                    }
                }
    }
}

/* ---- options a rule does not take, rows, workspace ---- */

static void test_options_apply(void **state)
{
    (void)state;
    float r0[2] = {1, 2}, r1[2] = {2, 3}, r2[2] = {3, 4}, r3[2] = {4, 5}, r4[2] = {5, 6};
    const float *rows[5] = {r0, r1, r2, r3, r4};
    float out[2];
    dpas_error e = {0};
    dpas_agg_opts o = {.f = 1, .m = 2};
    assert_int_equal(dpas_aggregate(rule("krum"), rows, 5, 2, &o, out, NULL, NULL, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "krum does not take the option m (only multi_krum takes it)");
    assert_string_equal(e.field, "m");
    o = (dpas_agg_opts){.f = 1, .tau = 2};
    assert_int_equal(dpas_aggregate(rule("median"), rows, 5, 2, &o, out, NULL, NULL, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "median does not take the option tau (only centered_clipping takes it)");
    o = (dpas_agg_opts){.f = 1, .iterations = 3};
    assert_int_equal(dpas_aggregate(rule("trimmed_mean"), rows, 5, 2, &o, out, NULL, NULL, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "only geometric_median and centered_clipping take it");
    o = (dpas_agg_opts){.f = 1, .tolerance = 1e-3};
    assert_int_equal(
        dpas_aggregate(rule("centered_clipping"), rows, 5, 2, &o, out, NULL, NULL, &e),
        DPAS_EINVAL);
    float start[2] = {0, 0};
    o = (dpas_agg_opts){.f = 1, .start = start};
    assert_int_equal(dpas_aggregate(rule("krum"), rows, 5, 2, &o, out, NULL, NULL, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "krum does not take the option start");
    o = (dpas_agg_opts){.f = 1, .iterations = 3, .tau = 1, .start = start};
    assert_int_equal(
        dpas_aggregate(rule("centered_clipping"), rows, 5, 2, &o, out, NULL, NULL, &e), 0);
    assert_true(dpas_agg_option_applies(rule("multi_krum"), "m"));
    assert_false(dpas_agg_option_applies(rule("krum"), "m"));
    assert_true(dpas_agg_option_applies(rule("krum"), "threads"));
    assert_false(dpas_agg_option_applies(rule("krum"), "gamma"));
    assert_false(dpas_agg_option_applies(rule("nnm"), "nnm"));
}

static void test_unaligned(void **state)
{
    (void)state;
    _Alignas(16) unsigned char buf[64] = {0};
    const void *rows[2] = {buf + 1, buf + 32};
    float out[4];
    dpas_error e = {0};
    assert_int_equal(dpas_aggregate_typed(rule("mean"), rows, DPAS_FLOAT32, 2, 4, NULL, out, NULL,
                                          NULL, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "gradient 0 is not aligned to its 4-byte elements");
    rows[0] = buf + 4; /* aligned for float, not for double */
    assert_int_equal(dpas_aggregate_typed(rule("mean"), rows, DPAS_FLOAT32, 2, 4, NULL, out, NULL,
                                          NULL, &e),
                     0);
    assert_int_equal(dpas_aggregate_typed(rule("mean"), rows, DPAS_FLOAT64, 2, 2, NULL, out, NULL,
                                          NULL, &e),
                     DPAS_EINVAL);
    assert_int_equal(dpas_aggregate_typed(rule("mean"), rows, 7, 2, 2, NULL, out, NULL, NULL, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "dtype must be 0 (float32) or 1 (float64), got 7");
}

/* A kept workspace gives the same bits as none, holds what the largest call needed, and does
 * not grow on a call of the same size. */
static void test_workspace(void **state)
{
    (void)state;
    enum { N = 9, D = 40000 };
    float *data = malloc(N * D * sizeof *data), *a = malloc(D * sizeof *a), *b = malloc(D * sizeof *b);
    const float *rows[N];
    for (size_t i = 0; i < N * D; i++)
        data[i] = (float)urand();
    for (size_t i = 0; i < N; i++)
        rows[i] = data + i * D;
    dpas_workspace *ws = dpas_workspace_new();
    assert_non_null(ws);
    assert_int_equal(dpas_workspace_size(ws), 0);
    static const char *names[] = {"geometric_median", "krum", "median", "centered_clipping"};
    for (size_t r = 0; r < 4; r++) {
        dpas_agg_opts o = {.f = 2, .threads = 2};
        dpas_error e = {0};
        assert_int_equal(dpas_aggregate(rule(names[r]), rows, N, D, &o, a, NULL, NULL, &e), 0);
        o.workspace = ws;
        assert_int_equal(dpas_aggregate(rule(names[r]), rows, N, D, &o, b, NULL, NULL, &e), 0);
        assert_memory_equal(a, b, D * sizeof *a);
        size_t held = dpas_workspace_size(ws);
        assert_true(held > 0);
        assert_int_equal(dpas_aggregate(rule(names[r]), rows, N, D, &o, b, NULL, NULL, &e), 0);
        assert_memory_equal(a, b, D * sizeof *a);
        assert_int_equal(dpas_workspace_size(ws), held);
    }
    /* the geometric median's iterates (2 x d doubles) are in it */
    assert_true(dpas_workspace_size(ws) >= 2 * D * sizeof(double));
    dpas_workspace_free(ws);
    dpas_workspace_free(NULL);
    free(data), free(a), free(b);
}

/* ---- a start for the iterative rules ---- */

/* ByzFL's documented examples (byzfl/aggregators/aggregators.py): on the rows (1, 2, 3),
 * (4, 5, 6), (7, 8, 9), GeometricMedian(nu = 0.1, T = 3) from 0 gives 3.78788764, 4.78788764,
 * 5.78788764; CenteredClipping() (m = 0, L = 1, tau = 100) gives (4, 5, 6), the mean, as every
 * row is within 100 of 0. By hand, with tau = 5: the distances from 0 are sqrt 14, sqrt 77 and
 * sqrt 194; the second and third are clipped: v = (x1 + 5 x2 / sqrt 77 + 5 x3 / sqrt 194) / 3. */
static void test_start(void **state)
{
    (void)state;
    find_isas();
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++)
        for (int k = 0; k < nisas; k++) {
            double x64[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, z64[3] = {0, 0, 0}, out64[3];
            float x32[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, z32[3] = {0, 0, 0}, out32[3];
            const void *rows[3];
            for (int i = 0; i < 3; i++)
                rows[i] = dtype == DPAS_FLOAT64 ? (void *)x64[i] : (void *)x32[i];
            void *out = dtype == DPAS_FLOAT64 ? (void *)out64 : (void *)out32;
            dpas_agg_opts o = {.isa = isas[k], .iterations = 3, .smoothing = 0.1,
                               .tolerance = 1e-12,
                               .start = dtype == DPAS_FLOAT64 ? (void *)z64 : (void *)z32};
            dpas_error e = {0};
            assert_int_equal(dpas_aggregate_typed(rule("geometric_median"), rows, dtype, 3, 3, &o,
                                                  out, NULL, NULL, &e),
                             0);
            for (int j = 0; j < 3; j++) {
                double v = dtype == DPAS_FLOAT64 ? out64[j] : out32[j];
                assert_double_near(v, 3.787887641179713 + j, dtype == DPAS_FLOAT64 ? 1e-14 : 1e-6);
            }
            o = (dpas_agg_opts){.isa = isas[k], .iterations = 1, .tau = 100,
                                .start = dtype == DPAS_FLOAT64 ? (void *)z64 : (void *)z32};
            assert_int_equal(dpas_aggregate_typed(rule("centered_clipping"), rows, dtype, 3, 3, &o,
                                                  out, NULL, NULL, &e),
                             0);
            for (int j = 0; j < 3; j++)
                assert_double_near(dtype == DPAS_FLOAT64 ? out64[j] : out32[j], 4.0 + j, 1e-7);
            o.tau = 5;
            assert_int_equal(dpas_aggregate_typed(rule("centered_clipping"), rows, dtype, 3, 3, &o,
                                                  out, NULL, NULL, &e),
                             0);
            for (int j = 0; j < 3; j++) {
                double want = (1.0 + j + 5 * (4.0 + j) / sqrt(77) + 5 * (7.0 + j) / sqrt(194)) / 3;
                assert_double_near(dtype == DPAS_FLOAT64 ? out64[j] : out32[j], want,
                                    dtype == DPAS_FLOAT64 ? 1e-14 : 1e-6);
            }
            /* a start that is not finite is refused */
            z64[1] = NAN, z32[1] = NAN;
            assert_int_equal(dpas_aggregate_typed(rule("centered_clipping"), rows, dtype, 3, 3, &o,
                                                  out, NULL, NULL, &e),
                             DPAS_EINVAL);
            assert_msg_contains(e, "start must be finite: coordinate 1 is nan");
        }
}

/* ---- ByzFL's rules, pre-aggregations and attacks on its documented examples ---- */

/* The rows ByzFL's documentation uses throughout: (1, 2, 3), (4, 5, 6), (7, 8, 9). */
typedef struct byzfl_x {
    double x64[3][3];
    float x32[3][3];
    const void *rows[3];
} byzfl_x;

static void byzfl_rows(byzfl_x *b, int dtype)
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            b->x64[i][j] = b->x32[i][j] = (float)(3 * i + j + 1);
        b->rows[i] = dtype == DPAS_FLOAT64 ? (void *)b->x64[i] : (void *)b->x32[i];
    }
}

static double at(int dtype, const void *v, size_t j)
{
    return dtype == DPAS_FLOAT64 ? ((const double *)v)[j] : ((const float *)v)[j];
}

static void expect3(int dtype, const void *got, double a, double b, double c, const char *what)
{
    double want[3] = {a, b, c};
    for (int j = 0; j < 3; j++)
        if (!(fabs(at(dtype, got, (size_t)j) - want[j]) <= 5e-8 * fmax(1.0, fabs(want[j]))))
            fail_msg("%s dtype %d coordinate %d: %.10g, expected %.10g", what, dtype, j,
                     at(dtype, got, (size_t)j), want[j]);
}

/* MoNNA(f=1, idx=0): (2.5, 3.5, 4.5); CAF(f=1): (4, 5, 6); SMEA(1): (2.5, 3.5, 4.5) (ByzFL's
 * docstrings). By hand: MoNNA with idx = 2 averages rows 2 and 1. */
static void test_byzfl_rules(void **state)
{
    (void)state;
    find_isas();
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++)
        for (int k = 0; k < nisas; k++) {
            byzfl_x b;
            byzfl_rows(&b, dtype);
            double out[3];
            int64_t sel[3];
            size_t nsel = 0;
            dpas_error e = {0};
            dpas_agg_opts o = {.f = 1, .isa = isas[k]};
            assert_int_equal(dpas_aggregate_typed(rule("monna"), b.rows, dtype, 3, 3, &o, out, sel,
                                                  &nsel, &e), 0);
            expect3(dtype, out, 2.5, 3.5, 4.5, "monna");
            assert_int_equal(nsel, 2);
            assert_true(sel[0] == 0 && sel[1] == 1);
            o.idx = 2;
            assert_int_equal(dpas_aggregate_typed(rule("monna"), b.rows, dtype, 3, 3, &o, out, sel,
                                                  &nsel, &e), 0);
            expect3(dtype, out, 5.5, 6.5, 7.5, "monna idx 2");
            assert_true(nsel == 2 && sel[0] == 2 && sel[1] == 1);
            o.idx = 3;
            assert_int_equal(dpas_aggregate_typed(rule("monna"), b.rows, dtype, 3, 3, &o, out, sel,
                                                  &nsel, &e), DPAS_EINVAL);
            assert_msg_contains(e, "monna's idx must be below n = 3, got 3");
            o.idx = 0;
            assert_int_equal(dpas_aggregate_typed(rule("caf"), b.rows, dtype, 3, 3, &o, out, NULL,
                                                  NULL, &e), 0);
            expect3(dtype, out, 4, 5, 6, "caf");
            assert_int_equal(dpas_aggregate_typed(rule("smea"), b.rows, dtype, 3, 3, &o, out, sel,
                                                  &nsel, &e), 0);
            expect3(dtype, out, 2.5, 3.5, 4.5, "smea");
            assert_true(nsel == 2 && sel[0] == 0 && sel[1] == 1);
        }
}

/* One dimension, by hand. Values 0, 1, 2, 3, 100 with f = 1: SMEA keeps {0, 1, 2, 3} (mean
 * 1.5); with f = 2 the subsets of three of least variance are {0, 1, 2} and {1, 2, 3} (2/3
 * each): the first, mean 1. CAF, f = 1: round 1 has weights 1, mean 21.2 and variance 1560.56;
 * tau_i = (x_i - 21.2)^2 is largest for 100 (6209.44), whose weight drops to 0, and the others
 * become 1 - tau_i / 6209.44 (0.92762..., 0.94666..., 0.96249..., 0.97511...), which sum to
 * 3.81189 > n - 2f = 3: round 2 has mean 1.5332... and a variance far below round 1's, and
 * its weights then sum below 3: the result is round 2's weighted mean, below 3. MoNNA(f = 1,
 * idx = 1): the four nearest to 1 are 0, 1, 2, 3: 1.5. */
static void test_one_dimension(void **state)
{
    (void)state;
    double v[5] = {0, 1, 2, 3, 100};
    const double *rows[5] = {v, v + 1, v + 2, v + 3, v + 4};
    double out;
    dpas_error e = {0};
    dpas_agg_opts o = {.f = 1};
    assert_int_equal(dpas_aggregate_f64(rule("smea"), rows, 5, 1, &o, &out, NULL, NULL, &e), 0);
    assert_double_exact(out, 1.5);
    o.f = 2;
    assert_int_equal(dpas_aggregate_f64(rule("smea"), rows, 5, 1, &o, &out, NULL, NULL, &e), 0);
    assert_double_exact(out, 1.0);
    o = (dpas_agg_opts){.f = 1, .idx = 1};
    assert_int_equal(dpas_aggregate_f64(rule("monna"), rows, 5, 1, &o, &out, NULL, NULL, &e), 0);
    assert_double_exact(out, 1.5);
    o = (dpas_agg_opts){.f = 1};
    assert_int_equal(dpas_aggregate_f64(rule("caf"), rows, 5, 1, &o, &out, NULL, NULL, &e), 0);
    /* the reference: round 2's weights, by the formula above */
    double c[4], sum = 0, mean = 21.2, tmax = (100 - mean) * (100 - mean), num = 0;
    for (int i = 0; i < 4; i++) {
        c[i] = 1 - (v[i] - mean) * (v[i] - mean) / tmax;
        sum += c[i], num += c[i] * v[i];
    }
    assert_true(sum > 3);
    assert_double_near(out, num / sum, 1e-12);
    /* f = 0: no round, the mean */
    o.f = 0;
    assert_int_equal(dpas_aggregate_f64(rule("caf"), rows, 5, 1, &o, &out, NULL, NULL, &e), 0);
    assert_double_near(out, 21.2, 1e-15);
}

static const dpas_rule *pre_rule(const char *name) { return rule(name); }

/* A pre-aggregation with its own f (ByzFL's NNM(f=1) before Average, which has none): by hand
 * on ByzFL's rows, NNM(1) gives (2.5, 3.5, 4.5) twice and (5.5, 6.5, 7.5), their mean
 * (3.5, 4.5, 5.5); with the aggregation's f = 0 NNM would mix all three rows, (4, 5, 6). A NaN
 * row dropped by NNM counts against its f and against the aggregation's. */
static void test_preagg_own_f(void **state)
{
    (void)state;
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++) {
        byzfl_x b;
        byzfl_rows(&b, dtype);
        double o64[3];
        dpas_error e = {0};
        dpas_preagg p = {pre_rule("nnm"), 0, 0, 0, 1, 1};
        dpas_agg_opts o = {.f = 0, .pre = &p, .npre = 1};
        assert_int_equal(dpas_aggregate_typed(rule("mean"), b.rows, dtype, 3, 3, &o, o64, NULL,
                                              NULL, &e),
                         0);
        expect3(dtype, o64, 3.5, 4.5, 5.5, "nnm own f 1, mean");
        p.own_f = 0, p.f = 0;
        assert_int_equal(dpas_aggregate_typed(rule("mean"), b.rows, dtype, 3, 3, &o, o64, NULL,
                                              NULL, &e),
                         0);
        expect3(dtype, o64, 4, 5, 6, "nnm with the mean's f 0");
        /* a fourth row of NaN: NNM (own f 1) drops it, the mean's f 0 cannot take it */
        double nan64[3] = {NAN, NAN, NAN};
        float nan32[3] = {NAN, NAN, NAN};
        const void *rows4[4] = {b.rows[0], b.rows[1], b.rows[2],
                                dtype == DPAS_FLOAT64 ? (const void *)nan64 : (const void *)nan32};
        p.own_f = 1, p.f = 1;
        assert_int_equal(
            dpas_aggregate_typed(rule("mean"), rows4, dtype, 4, 3, &o, o64, NULL, NULL, &e),
            DPAS_EINVAL);
        assert_non_null(strstr(e.message, "more than the aggregation's f = 0"));
        o.f = 1; /* both take it: NNM then has f 0 on the 3 finite rows, each their mean */
        assert_int_equal(
            dpas_aggregate_typed(rule("mean"), rows4, dtype, 4, 3, &o, o64, NULL, NULL, &e), 0);
        expect3(dtype, o64, 4, 5, 6, "nan row dropped");
        p.f = 0; /* NNM's own f 0 cannot take it */
        assert_int_equal(
            dpas_aggregate_typed(rule("mean"), rows4, dtype, 4, 3, &o, o64, NULL, NULL, &e),
            DPAS_EINVAL);
        p.own_f = 2;
        assert_int_equal(
            dpas_aggregate_typed(rule("mean"), b.rows, dtype, 3, 3, &o, o64, NULL, NULL, &e),
            DPAS_EINVAL);
        assert_string_equal(e.field, "own_f");
        p.own_f = 0, p.f = 1; /* f without own_f */
        assert_int_equal(
            dpas_aggregate_typed(rule("mean"), b.rows, dtype, 3, 3, &o, o64, NULL, NULL, &e),
            DPAS_EINVAL);
        assert_string_equal(e.field, "f");
    }
}

/* NNM(1), Clipping(2.0), ARC(1) on ByzFL's rows, as its docstrings show them. */
static void test_byzfl_preaggregations(void **state)
{
    (void)state;
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++) {
        byzfl_x b;
        byzfl_rows(&b, dtype);
        double o64[3][3];
        void *out[3] = {o64[0], o64[1], o64[2]};
        size_t nout = 0;
        dpas_error e = {0};
        dpas_preagg p = {pre_rule("nnm"), 0, 0, 0, 0, 0};
        dpas_agg_opts o = {.f = 1, .pre = &p, .npre = 1};
        assert_int_equal(dpas_preaggregate_typed(b.rows, dtype, 3, 3, &o, out, &nout, &e), 0);
        assert_int_equal(nout, 3);
        expect3(dtype, out[0], 2.5, 3.5, 4.5, "nnm 0");
        expect3(dtype, out[1], 2.5, 3.5, 4.5, "nnm 1");
        expect3(dtype, out[2], 5.5, 6.5, 7.5, "nnm 2");
        p = (dpas_preagg){pre_rule("clipping"), 2.0, 0, 0, 0, 0};
        o.f = 0;
        assert_int_equal(dpas_preaggregate_typed(b.rows, dtype, 3, 3, &o, out, &nout, &e), 0);
        expect3(dtype, out[0], 0.53452248, 1.06904497, 1.60356745, "clipping 0");
        expect3(dtype, out[1], 0.91168461, 1.13960576, 1.36752692, "clipping 1");
        expect3(dtype, out[2], 1.00514142, 1.14873305, 1.29232469, "clipping 2");
        p = (dpas_preagg){pre_rule("arc"), 0, 0, 0, 0, 0};
        o.f = 1;
        assert_int_equal(dpas_preaggregate_typed(b.rows, dtype, 3, 3, &o, out, &nout, &e), 0);
        expect3(dtype, out[0], 1, 2, 3, "arc 0");
        expect3(dtype, out[1], 4, 5, 6, "arc 1");
        expect3(dtype, out[2], 4.41004009, 5.04004582, 5.67005155, "arc 2");
        /* a non-finite row is dropped (counted against f) and comes out as NaN */
        if (dtype == DPAS_FLOAT64)
            b.x64[1][2] = NAN;
        else
            b.x32[1][2] = NAN;
        assert_int_equal(dpas_preaggregate_typed(b.rows, dtype, 3, 3, &o, out, &nout, &e), 0);
        assert_true(isnan(at(dtype, out[1], 0)));
        expect3(dtype, out[0], 1, 2, 3, "arc with a NaN row");
        o.f = 0;
        assert_int_equal(dpas_preaggregate_typed(b.rows, dtype, 3, 3, &o, out, &nout, &e),
                         DPAS_EINVAL);
        assert_msg_contains(e, "more than the f = 0 given to arc");
    }
}

/* Bucketing(s = 2) of three rows: two buckets, the mean of two rows and the third row, in a
 * seeded random order: the same seed, the same buckets; over seeds, every row is alone
 * sometimes. */
static void test_bucketing(void **state)
{
    (void)state;
    byzfl_x b;
    byzfl_rows(&b, DPAS_FLOAT64);
    double o64[3][3], first[2][3];
    void *out[3] = {o64[0], o64[1], o64[2]};
    size_t nout = 0, alone[3] = {0};
    dpas_error e = {0};
    for (uint64_t seed = 0; seed < 60; seed++) {
        dpas_preagg p = {pre_rule("bucketing"), 0, 2, seed, 0, 0};
        dpas_agg_opts o = {.pre = &p, .npre = 1};
        assert_int_equal(dpas_preaggregate_typed(b.rows, DPAS_FLOAT64, 3, 3, &o, out, &nout, &e), 0);
        assert_int_equal(nout, 2);
        int lone = (int)((o64[1][0] - 1) / 3); /* the last bucket holds one row */
        assert_true(o64[1][0] == 1 + 3 * lone);
        alone[lone]++;
        /* the first bucket: the mean of the two others */
        double want = 0;
        for (int i = 0; i < 3; i++)
            want += i == lone ? 0 : b.x64[i][0] / 2;
        assert_double_exact(o64[0][0], want);
        if (seed == 7)
            memcpy(first, o64, sizeof first);
    }
    for (int i = 0; i < 3; i++)
        assert_true(alone[i] > 5);
    dpas_preagg p = {pre_rule("bucketing"), 0, 2, 7, 0, 0};
    dpas_agg_opts o = {.pre = &p, .npre = 1};
    assert_int_equal(dpas_preaggregate_typed(b.rows, DPAS_FLOAT64, 3, 3, &o, out, &nout, &e), 0);
    assert_memory_equal(first, o64, sizeof first);
    /* a rule after it runs on the buckets, and selects none of the caller's rows */
    double agg[3];
    int64_t sel[3];
    size_t nsel = 9;
    assert_int_equal(dpas_aggregate_f64(rule("multi_krum"), (const double *const *)b.rows, 3, 3,
                                        &(dpas_agg_opts){.pre = &p, .npre = 1, .m = 1}, agg, sel,
                                        &nsel, &e),
                     DPAS_EINVAL); /* multi_krum (blanchard) needs n >= 3 */
    assert_int_equal(dpas_aggregate_f64(rule("mean"), (const double *const *)b.rows, 3, 3,
                                        &(dpas_agg_opts){.pre = &p, .npre = 1}, agg, sel, &nsel,
                                        &e),
                     0);
    assert_int_equal(nsel, 0);
    /* the mean of the two buckets is not the mean of the rows: (mean(2) + one) / 2 */
    assert_double_exact(agg[0], (first[0][0] + first[1][0]) / 2);
}

/* SignFlipping: (-4, -5, -6); InnerProductManipulation(2): (-8, -10, -12); ALIE(1.5): (8.5,
 * 9.5, 10.5); Mimic(0): (1, 2, 3); Optimal_InnerProductManipulation(TrMean(f=1), [NNM(f=1),
 * Clipping()], f=1): (-2.74877907, -3.43597384, -4.1231686); Optimal_ALittleIsEnough, the same:
 * (12.91985116, 13.91985116, 14.91985116) (ByzFL's docstrings). */
static void test_byzfl_attacks(void **state)
{
    (void)state;
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++) {
        byzfl_x b;
        byzfl_rows(&b, dtype);
        double o64[2][3];
        void *out[2] = {o64[0], o64[1]};
        const dpas_attack *a;
        dpas_error e = {0};
        double used = 0;
        struct {
            const char *name;
            double value, want[3];
        } cases[] = {{"sign_flip", NAN, {-4, -5, -6}},
                     {"ipm", 2.0, {-8, -10, -12}},
                     {"alie", 1.5, {8.5, 9.5, 10.5}},
                     {"mimic", 0, {1, 2, 3}}};
        for (size_t c = 0; c < 4; c++) {
            assert_int_equal(dpas_attack_find(cases[c].name, &a, &e), 0);
            dpas_attack_opts ao = {.value = {cases[c].value}, .given = !isnan(cases[c].value)};
            assert_int_equal(
                dpas_attack_rows_typed(a, b.rows, dtype, 3, 3, 2, &ao, out, &used, &e), 0);
            expect3(dtype, out[0], cases[c].want[0], cases[c].want[1], cases[c].want[2],
                    cases[c].name);
            expect3(dtype, out[1], cases[c].want[0], cases[c].want[1], cases[c].want[2],
                    cases[c].name);
        }
        dpas_preagg pre[2] = {{pre_rule("nnm"), 0, 0, 0, 0, 0}, {pre_rule("clipping"), 0, 0, 0, 0, 0}};
        dpas_agg_opts agg = {.f = 1, .pre = pre, .npre = 2};
        dpas_attack_opts ao = {.rule = rule("trimmed_mean"), .agg = &agg};
        assert_int_equal(dpas_attack_find("optimal_ipm", &a, &e), 0);
        assert_int_equal(dpas_attack_rows_typed(a, b.rows, dtype, 3, 3, 1, &ao, out, &used, &e), 0);
        expect3(dtype, out[0], -2.74877907, -3.43597384, -4.1231686, "optimal_ipm");
        assert_double_near(used, 10 * pow(0.8, 12), 1e-12);
        assert_int_equal(dpas_attack_find("optimal_alie", &a, &e), 0);
        assert_int_equal(dpas_attack_rows_typed(a, b.rows, dtype, 3, 3, 1, &ao, out, &used, &e), 0);
        expect3(dtype, out[0], 12.91985116, 13.91985116, 14.91985116, "optimal_alie");
        /* refusals */
        ao.given = 1u << 3;
        ao.value[3] = 0.5;
        assert_int_equal(dpas_attack_rows_typed(a, b.rows, dtype, 3, 3, 1, &ao, out, &used, &e),
                         DPAS_EINVAL);
        assert_msg_contains(e, "ratio must lie strictly between 0.5 and 1, got 0.5");
        ao = (dpas_attack_opts){.rule = rule("krum"), .agg = &agg};
        assert_int_equal(dpas_attack_rows_typed(a, b.rows, dtype, 3, 3, 1, &ao, out, &used, &e),
                         DPAS_EINVAL);
        assert_msg_contains(e, "optimal_alie against krum (blanchard): 3 honest and 1 Byzantine");
        assert_int_equal(dpas_attack_find("mimic", &a, &e), 0);
        ao = (dpas_attack_opts){.value = {3}, .given = 1};
        assert_int_equal(dpas_attack_rows_typed(a, b.rows, dtype, 3, 3, 1, &ao, out, &used, &e),
                         DPAS_EINVAL);
        assert_msg_contains(e, "mimic's epsilon must be a whole number below the 3 honest");
    }
}

/* Gaussian: one vector from the seed (the same seed, the same vector), its numbers with the
 * mean and deviation asked for (20000 of them: within 4 standard errors). */
static void test_gaussian(void **state)
{
    (void)state;
    enum { D = 20000 };
    double *a = malloc(D * sizeof *a), *b = malloc(D * sizeof *b);
    void *out[1] = {a};
    const dpas_attack *g;
    dpas_error e = {0};
    assert_int_equal(dpas_attack_find("gaussian", &g, &e), 0);
    dpas_attack_opts o = {.value = {3.0, 2.0}, .given = 3, .seed = 42};
    assert_int_equal(dpas_attack_rows_typed(g, NULL, DPAS_FLOAT64, 0, D, 1, &o, out, NULL, &e), 0);
    double m = 0, v = 0;
    for (size_t j = 0; j < D; j++)
        m += a[j];
    m /= D;
    for (size_t j = 0; j < D; j++)
        v += (a[j] - m) * (a[j] - m);
    v /= D - 1;
    assert_true(fabs(m - 3.0) < 4 * 2.0 / sqrt(D));
    assert_true(fabs(sqrt(v) - 2.0) < 4 * 2.0 / sqrt(2.0 * D));
    out[0] = b;
    assert_int_equal(dpas_attack_rows_typed(g, NULL, DPAS_FLOAT64, 0, D, 1, &o, out, NULL, &e), 0);
    assert_memory_equal(a, b, D * sizeof *a);
    o.seed = 43;
    assert_int_equal(dpas_attack_rows_typed(g, NULL, DPAS_FLOAT64, 0, D, 1, &o, out, NULL, &e), 0);
    assert_true(memcmp(a, b, D * sizeof *a) != 0);
    o.value[1] = -1;
    assert_int_equal(dpas_attack_rows_typed(g, NULL, DPAS_FLOAT64, 0, D, 1, &o, out, NULL, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "gaussian's sigma must be >= 0, got -1");
    free(a), free(b);
}

/* dpas_aggregate_batch and dpas_preaggregate_batch: a consistency test, each set against
 * dpas_aggregate_typed / dpas_preaggregate_typed on its own rows; the error of a failing set
 * names it. */
static void test_batch(void **state)
{
    (void)state;
    enum { B = 3, N = 7, D = 5 };
    double x[B][N][D], out[B][D], one[D], pre[B][N][D], pre1[N][D];
    uint64_t s = 12345;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < D; j++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                x[b][i][j] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
            }
    dpas_error e = {0};
    const char *names[] = {"mean", "median", "trimmed_mean", "krum", "geometric_median"};
    for (size_t r = 0; r < sizeof names / sizeof *names; r++) {
        dpas_agg_opts o = {.f = r ? 2 : 0}; /* the mean takes no f */
        assert_int_equal(dpas_aggregate_batch(rule(names[r]), x, DPAS_FLOAT64, B, N, D,
                                              sizeof x[0], sizeof x[0][0], &o, out,
                                              sizeof out[0], &e),
                         0);
        for (int b = 0; b < B; b++) {
            const void *rows[N];
            for (int i = 0; i < N; i++)
                rows[i] = x[b][i];
            assert_int_equal(dpas_aggregate_typed(rule(names[r]), rows, DPAS_FLOAT64, N, D, &o,
                                                  one, NULL, NULL, &e),
                             0);
            assert_memory_equal(one, out[b], sizeof one);
        }
    }
    dpas_preagg p = {pre_rule("bucketing"), 0, 2, 9, 0, 0};
    dpas_agg_opts o = {.pre = &p, .npre = 1, .f = 1};
    size_t nout = 0, n1 = 0;
    assert_int_equal(dpas_preaggregate_batch(x, DPAS_FLOAT64, B, N, D, sizeof x[0], sizeof x[0][0],
                                             &o, pre, sizeof pre[0], sizeof pre[0][0], &nout, &e),
                     0);
    assert_int_equal(nout, 4);
    for (int b = 0; b < B; b++) {
        const void *rows[N];
        void *orows[N];
        for (int i = 0; i < N; i++)
            rows[i] = x[b][i], orows[i] = pre1[i];
        assert_int_equal(dpas_preaggregate_typed(rows, DPAS_FLOAT64, N, D, &o, orows, &n1, &e), 0);
        assert_memory_equal(pre1, pre[b], 4 * sizeof pre1[0]);
    }
    x[1][0][0] = NAN, x[1][3][2] = INFINITY, x[1][5][4] = NAN;
    dpas_agg_opts o2 = {.f = 2};
    assert_int_equal(dpas_aggregate_batch(rule("median"), x, DPAS_FLOAT64, B, N, D, sizeof x[0],
                                          sizeof x[0][0], &o2, out, sizeof out[0], &e),
                     DPAS_EINVAL);
    assert_non_null(strstr(e.message, "set 1 of the batch of 3: 3 gradients have a NaN or Inf"));
}

/* Weights per row, as properties over random sets in both widths, with adversarial rows (values
 * near the largest float, 1e300 in float64, NaN and Inf rows counted against f): equal weights
 * give the unweighted rule (median bit for bit; mean and geometric median to 1e-12 and 1e-6 of
 * the spread), integer weights give the rows repeated (median bit for bit; the others to the
 * same tolerance), the weighted median lies in [min, max] of the finite rows per coordinate and
 * every output is finite. Hand calculations: the weighted median of 1 (w 3), 2, 3, 100 is
 * (1 + 2) / 2 (the running weight reaches half the total, 3 of 6, at 1); of 1 (w 4), 2, 3, 100
 * it is 1. The refusals name the option or the weight. */
static double wrand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static void weighted_case(int dtype, uint64_t seed)
{
    enum { NMAX = 9, D = 6, REP = 40 };
    uint64_t s = seed;
    size_t n = 3 + (size_t)(wrand(&s) * 6), es = dtype == DPAS_FLOAT64 ? 8 : 4;
    double big = dtype == DPAS_FLOAT64 ? (wrand(&s) < 0.3 ? 1e300 : 1.0) : 1.0;
    double xv[NMAX][D];
    unsigned char mem[REP][D * 8], rowsm[NMAX][D * 8];
    const void *rows[NMAX], *rep[REP];
    double w[NMAX], we[NMAX], wi[NMAX];
    size_t nrep = 0;
    for (size_t i = 0; i < n; i++) {
        int kind = (int)(wrand(&s) * 5);
        for (size_t t = 0; t < D; t++) {
            double v = (wrand(&s) - 0.5) * big;
            if (kind == 0)
                v = (wrand(&s) < 0.5 ? -1 : 1) * (dtype == DPAS_FLOAT64 ? DBL_MAX : FLT_MAX);
            xv[i][t] = v;
            if (dtype == DPAS_FLOAT64)
                memcpy(rowsm[i] + t * 8, &v, 8);
            else {
                float fv = (float)v;
                memcpy(rowsm[i] + t * 4, &fv, 4);
            }
        }
        rows[i] = rowsm[i];
        we[i] = 3.0;
        wi[i] = (double)(size_t)(wrand(&s) * 4); /* 0 to 3 */
        w[i] = wrand(&s) * 10;
        for (size_t r = 0; r < (size_t)wi[i]; r++) {
            memcpy(mem[nrep], rowsm[i], D * es);
            rep[nrep] = mem[nrep];
            nrep++;
        }
    }
    if (nrep == 0) { /* at least one row of positive weight */
        wi[0] = 1;
        memcpy(mem[nrep], rowsm[0], D * es);
        rep[nrep] = mem[nrep];
        nrep++;
    }
    dpas_error e = {0};
    const char *names[] = {"mean", "median", "geometric_median"};
    for (int r = 0; r < 3; r++) {
        double a[D], b[D];
        unsigned char ao[D * 8], bo[D * 8];
        dpas_agg_opts ow = {.weights = we, .iterations = 1000, .tolerance = 1e-12};
        dpas_agg_opts ou = {.iterations = 1000, .tolerance = 1e-12};
        if (r != 2)
            ow.iterations = ou.iterations = 0, ow.tolerance = ou.tolerance = 0;
        assert_int_equal(dpas_aggregate_typed(rule(names[r]), rows, dtype, n, D, &ow, ao, NULL,
                                              NULL, &e),
                         0);
        assert_int_equal(dpas_aggregate_typed(rule(names[r]), rows, dtype, n, D, &ou, bo, NULL,
                                              NULL, &e),
                         0);
        for (size_t t = 0; t < D; t++) {
            a[t] = dtype == DPAS_FLOAT64 ? ((double *)ao)[t] : ((float *)ao)[t];
            b[t] = dtype == DPAS_FLOAT64 ? ((double *)bo)[t] : ((float *)bo)[t];
            assert_true(isfinite(a[t]));
            double lo = INFINITY, hi = -INFINITY;
            for (size_t i = 0; i < n; i++)
                lo = fmin(lo, xv[i][t]), hi = fmax(hi, xv[i][t]);
            double tol = r == 0 ? 1e-12 * fmax(fabs(lo), fabs(hi)) : 1e-6 * (hi - lo);
            if (dtype == DPAS_FLOAT32)
                tol = fmax(tol, 1e-6 * fmax(fabs(lo), fabs(hi)));
            if (r == 1)
                assert_memory_equal(ao + t * es, bo + t * es, es); /* equal weights: bit for bit */
            else if (!(fabs(a[t] - b[t]) <= tol))
                fail_msg("%s equal weights: %g vs %g (tol %g)", names[r], a[t], b[t], tol);
        }
        /* integer weights: the rows repeated */
        dpas_agg_opts oi = ow, orr = ou;
        oi.weights = wi;
        assert_int_equal(dpas_aggregate_typed(rule(names[r]), rows, dtype, n, D, &oi, ao, NULL,
                                              NULL, &e),
                         0);
        assert_int_equal(dpas_aggregate_typed(rule(names[r]), rep, dtype, nrep, D, &orr, bo, NULL,
                                              NULL, &e),
                         0);
        for (size_t t = 0; t < D; t++) {
            a[t] = dtype == DPAS_FLOAT64 ? ((double *)ao)[t] : ((float *)ao)[t];
            b[t] = dtype == DPAS_FLOAT64 ? ((double *)bo)[t] : ((float *)bo)[t];
            double lo = INFINITY, hi = -INFINITY;
            for (size_t i = 0; i < n; i++)
                lo = fmin(lo, xv[i][t]), hi = fmax(hi, xv[i][t]);
            double tol = r == 0 ? 1e-12 * fmax(fabs(lo), fabs(hi)) : 1e-6 * (hi - lo);
            if (dtype == DPAS_FLOAT32)
                tol = fmax(tol, 1e-6 * fmax(fabs(lo), fabs(hi)));
            if (r == 1)
                assert_memory_equal(ao + t * es, bo + t * es, es);
            else if (!(fabs(a[t] - b[t]) <= tol))
                fail_msg("%s integer weights: %g vs %g (tol %g)", names[r], a[t], b[t], tol);
        }
        /* any weights: the weighted median within the rows' range, every output finite */
        oi.weights = w;
        assert_int_equal(dpas_aggregate_typed(rule(names[r]), rows, dtype, n, D, &oi, ao, NULL,
                                              NULL, &e),
                         0);
        for (size_t t = 0; t < D; t++) {
            a[t] = dtype == DPAS_FLOAT64 ? ((double *)ao)[t] : ((float *)ao)[t];
            assert_true(isfinite(a[t]));
            double lo = INFINITY, hi = -INFINITY;
            for (size_t i = 0; i < n; i++)
                lo = fmin(lo, xv[i][t]), hi = fmax(hi, xv[i][t]);
            if (dtype == DPAS_FLOAT32) /* the rows hold the values rounded (monotone) */
                lo = (float)lo, hi = (float)hi;
            if (r == 1)
                assert_true(a[t] >= lo && a[t] <= hi);
        }
    }
    /* a NaN and an Inf row: excluded and counted against f, their weights dropped */
    if (n >= 5) {
        unsigned char nan_row[D * 8], inf_row[D * 8];
        for (size_t t = 0; t < D; t++) {
            if (dtype == DPAS_FLOAT64) {
                ((double *)nan_row)[t] = NAN, ((double *)inf_row)[t] = -INFINITY;
            } else {
                ((float *)nan_row)[t] = NAN, ((float *)inf_row)[t] = -INFINITY;
            }
        }
        const void *withbad[NMAX + 2];
        double wb[NMAX + 2];
        for (size_t i = 0; i < n; i++)
            withbad[i] = rows[i], wb[i] = we[i];
        withbad[n] = nan_row, withbad[n + 1] = inf_row, wb[n] = 1e300, wb[n + 1] = 5;
        unsigned char ao[D * 8], bo[D * 8];
        dpas_agg_opts ob = {.f = 2, .weights = wb}, oc = {.weights = we};
        assert_int_equal(dpas_aggregate_typed(rule("median"), withbad, dtype, n + 2, D, &ob, ao,
                                              NULL, NULL, &e),
                         0);
        assert_int_equal(dpas_aggregate_typed(rule("median"), rows, dtype, n, D, &oc, bo, NULL,
                                              NULL, &e),
                         0);
        assert_memory_equal(ao, bo, D * es);
        ob.f = 1;
        assert_int_equal(dpas_aggregate_typed(rule("median"), withbad, dtype, n + 2, D, &ob, ao,
                                              NULL, NULL, &e),
                         DPAS_EINVAL);
    }
}

static void test_weights(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        weighted_case(DPAS_FLOAT64, seed);
        weighted_case(DPAS_FLOAT32, seed * 7919);
    }
    double x[4][1] = {{1}, {2}, {3}, {100}}, out;
    const void *rows[4] = {x[0], x[1], x[2], x[3]};
    dpas_error e = {0};
    dpas_agg_opts o = {.weights = (double[]){3, 1, 1, 1}};
    assert_int_equal(dpas_aggregate_typed(rule("median"), rows, DPAS_FLOAT64, 4, 1, &o, &out, NULL,
                                          NULL, &e),
                     0);
    assert_double_exact(out, 1.5);
    o.weights = (double[]){4, 1, 1, 1};
    assert_int_equal(dpas_aggregate_typed(rule("median"), rows, DPAS_FLOAT64, 4, 1, &o, &out, NULL,
                                          NULL, &e),
                     0);
    assert_double_exact(out, 1.0);
    o.weights = (double[]){1, 1, 2, 0}; /* (1 + 2 + 6) / 4 */
    assert_int_equal(dpas_aggregate_typed(rule("mean"), rows, DPAS_FLOAT64, 4, 1, &o, &out, NULL,
                                          NULL, &e),
                     0);
    assert_double_exact(out, 2.25);
    o.f = 1;
    assert_int_equal(dpas_aggregate_typed(rule("krum"), rows, DPAS_FLOAT64, 4, 1, &o, &out, NULL,
                                          NULL, &e),
                     DPAS_EINVAL);
    assert_non_null(strstr(e.message, "krum does not take the option weights"));
    o.f = 0;
    o.weights = (double[]){1, -1, 1, 1};
    assert_int_equal(dpas_aggregate_typed(rule("mean"), rows, DPAS_FLOAT64, 4, 1, &o, &out, NULL,
                                          NULL, &e),
                     DPAS_EINVAL);
    assert_non_null(strstr(e.message, "weight 1 is -1"));
    o.weights = (double[]){0, 0, 0, 0};
    assert_int_equal(dpas_aggregate_typed(rule("median"), rows, DPAS_FLOAT64, 4, 1, &o, &out, NULL,
                                          NULL, &e),
                     DPAS_EINVAL);
    assert_non_null(strstr(e.message, "are all 0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f64_columns),          cmocka_unit_test(test_f64_overflow),
        cmocka_unit_test(test_f64_distances),        cmocka_unit_test(test_f32_distance_order),
        cmocka_unit_test(test_distances_identical),  cmocka_unit_test(test_nonfinite_every_rule),
        cmocka_unit_test(test_options_apply),        cmocka_unit_test(test_unaligned),
        cmocka_unit_test(test_workspace),            cmocka_unit_test(test_start),
        cmocka_unit_test(test_byzfl_rules),          cmocka_unit_test(test_one_dimension),
        cmocka_unit_test(test_byzfl_preaggregations), cmocka_unit_test(test_bucketing),
        cmocka_unit_test(test_preagg_own_f),
        cmocka_unit_test(test_byzfl_attacks),        cmocka_unit_test(test_gaussian),
        cmocka_unit_test(test_batch),                cmocka_unit_test(test_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
