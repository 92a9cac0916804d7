/* SPDX-License-Identifier: Apache-2.0 */
/* The clipping guarantee as a property (issue 33): for every finite input, in float32 and
 * float64, Clipping(c) and ARC leave each row of norm <= its bound as it is, and scale each row
 * above it to norm = the bound (up to the rounding of the element type), whatever the other
 * rows hold: rows at DBL_MAX (FLT_MAX), 1e300, 1e-300, subnormals, zeros and rows mixing them.
 * Centered clipping's step is checked the same way: one step from a given start with a given
 * tau moves by at most tau (the mean of clipped differences, each of norm <= tau), and by that
 * mean to the rounding of the element type where every weight tau / ||x_i - v|| is a normal
 * double (a row 1e300 away from v with tau 1e-20: the weight underflows, that row's part of
 * the step is lost or rounded coarsely; the bound still holds).
 *
 * The reference is written here: norms and sums in long double (x86's 80-bit format, whose
 * exponent range holds the square of every double, so no scaling is needed there), ARC's bound
 * as its definition (ByzFL's ARC: the k = floor(2 f (n - f) / n) largest rows by norm clipped
 * to the norm of the largest of the others). */
#include "check.h"

#include <float.h>
#include <stdlib.h>

static uint64_t rs = 0x1234567u;
static double u01(void)
{
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}
static size_t below(size_t k) { return (size_t)(u01() * (double)k) % k; }

static const dpas_rule *rule(const char *name)
{
    const dpas_rule *r;
    assert_int_equal(dpas_rule_find(name, NULL, &r, NULL), 0);
    return r;
}

/* Magnitudes of a row: the extremes of each width. */
static const double mag64[] = {DBL_MAX, 1e300, 1e200, 1e154, 1e77, 1e20, 1.0, 1e-77, 1e-160,
                               1e-200, 1e-300, 1e-310, 4.9406564584124654e-324 * 8, 0.0};
static const double mag32[] = {FLT_MAX, 1e38, 1e20, 1.0, 1e-20, 1e-38, 1e-42, 0.0};

typedef struct set {
    int dtype;
    size_t n, d;
    double v[12][8]; /* the values (float32 ones exactly representable) */
    void *rows[12];
    float x32[12][8];
    double x64[12][8];
    float o32[12][8];
    double o64[12][8];
    void *out[12];
} set;

static double cut(int dtype, double v) { return dtype == DPAS_FLOAT32 ? (double)(float)v : v; }

/* One value of magnitude m, random sign and mantissa; at DBL_MAX (FLT_MAX) often the value
 * itself. */
static double draw(int dtype, double m)
{
    double top = dtype == DPAS_FLOAT32 ? FLT_MAX : DBL_MAX;
    double v = m == top && u01() < 0.5 ? m : m * (0.25 + 0.75 * u01());
    return cut(dtype, u01() < 0.5 ? -v : v);
}

static void make(set *s, int dtype, size_t n, size_t d)
{
    const double *mag = dtype == DPAS_FLOAT32 ? mag32 : mag64;
    size_t nm = dtype == DPAS_FLOAT32 ? sizeof mag32 / sizeof *mag32 : sizeof mag64 / sizeof *mag64;
    s->dtype = dtype, s->n = n, s->d = d;
    for (size_t i = 0; i < n; i++) {
        int mixed = u01() < 0.25;
        double m = mag[below(nm)];
        for (size_t t = 0; t < d; t++) {
            s->v[i][t] = draw(dtype, mixed ? mag[below(nm)] : m);
            s->x32[i][t] = (float)s->v[i][t];
            s->x64[i][t] = s->v[i][t];
        }
        s->rows[i] = dtype == DPAS_FLOAT32 ? (void *)s->x32[i] : (void *)s->x64[i];
        s->out[i] = dtype == DPAS_FLOAT32 ? (void *)s->o32[i] : (void *)s->o64[i];
    }
}

static long double lnorm(const double *v, size_t d)
{
    long double s = 0;
    for (size_t t = 0; t < d; t++)
        s += (long double)v[t] * v[t];
    return sqrtl(s);
}

static double outv(const set *s, size_t i, size_t t)
{
    return s->dtype == DPAS_FLOAT32 ? (double)s->o32[i][t] : s->o64[i][t];
}

/* Row i of the output against the definition with bound thr (long double): unchanged when its
 * norm is <= thr, else x thr / ||x||, each coordinate to the rounding of the element type (the
 * norm's sum and the factor add a few ulps of double; the smallest subnormal, half of it, is the
 * absolute error of a rounded tiny value). A norm within 1e-12 of thr may go either way. */
static void check_row(const set *s, size_t i, long double thr, const char *what)
{
    size_t d = s->d;
    long double nx = lnorm(s->v[i], d);
    double ulp = s->dtype == DPAS_FLOAT32 ? 0x1p-23 : 0x1p-50;
    double tiny = s->dtype == DPAS_FLOAT32 ? 0x1p-149 : 0x1p-1074;
    int clipped = nx > thr * (1 + 1e-12L), kept = nx <= thr * (1 - 1e-12L);
    double y[8];
    for (size_t t = 0; t < d; t++) {
        y[t] = outv(s, i, t);
        if (!isfinite(y[t]))
            fail_msg("%s: row %zu coordinate %zu is %g (n %zu d %zu)", what, i, t, y[t], s->n, d);
    }
    long double ny = lnorm(y, d);
    /* the guarantee: norm <= the bound (with the rounding allowance) */
    if (ny > thr * (1 + 4 * (long double)ulp) + 2 * sqrtl((long double)d) * tiny)
        fail_msg("%s: row %zu has norm %Lg above its bound %Lg (input norm %Lg, n %zu d %zu)",
                 what, i, ny, thr, nx, s->n, d);
    for (size_t t = 0; t < d && (clipped || kept); t++) {
        long double want = clipped ? (long double)s->v[i][t] * (thr / nx) : s->v[i][t];
        long double tol = clipped ? 4 * ulp * fabsl(want) + tiny : 0;
        if (fabsl((long double)y[t] - want) > tol)
            fail_msg("%s: row %zu coordinate %zu is %.17g, expected %.17Lg (%s; input norm %Lg, "
                     "bound %Lg, n %zu d %zu)",
                     what, i, t, y[t], want, clipped ? "clipped" : "kept", nx, thr, s->n, d);
    }
}

static void run_clip(set *s, double c)
{
    dpas_preagg p = {rule("clipping"), c, 0, 0, 0, 0};
    dpas_agg_opts o = {.f = 0, .pre = &p, .npre = 1};
    size_t nout = 0;
    dpas_error e = {0};
    int rc = dpas_preaggregate_typed((const void *const *)s->rows, s->dtype, s->n, s->d, &o,
                                     s->out, &nout, &e);
    if (rc)
        fail_msg("clipping(%g): %s", c, e.message);
    assert_int_equal(nout, s->n);
    for (size_t i = 0; i < s->n; i++)
        check_row(s, i, c, s->dtype == DPAS_FLOAT32 ? "clipping float32" : "clipping float64");
}

static int cmp_ld(const void *a, const void *b)
{
    long double x = *(const long double *)a, y = *(const long double *)b;
    return (x > y) - (x < y);
}

static void run_arc(set *s, size_t f)
{
    dpas_preagg p = {rule("arc"), 0, 0, 0, 0, 0};
    dpas_agg_opts o = {.f = (int64_t)f, .pre = &p, .npre = 1};
    size_t nout = 0, n = s->n;
    dpas_error e = {0};
    int rc = dpas_preaggregate_typed((const void *const *)s->rows, s->dtype, n, s->d, &o, s->out,
                                     &nout, &e);
    if (rc)
        fail_msg("arc f %zu: %s", f, e.message);
    long double nrm[12];
    for (size_t i = 0; i < n; i++)
        nrm[i] = lnorm(s->v[i], s->d);
    qsort(nrm, n, sizeof *nrm, cmp_ld);
    size_t k = 2 * f * (n - f) / n;
    long double thr = k ? nrm[n - k - 1] : INFINITY;
    for (size_t i = 0; i < n; i++)
        check_row(s, i, thr, s->dtype == DPAS_FLOAT32 ? "arc float32" : "arc float64");
}

/* Random rows of every magnitude class, mixed rows among them; c of every class too. */
static void test_clip_property(void **state)
{
    (void)state;
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++) {
        const double *mag = dtype == DPAS_FLOAT32 ? mag32 : mag64;
        size_t nm = dtype == DPAS_FLOAT32 ? sizeof mag32 / sizeof *mag32
                                          : sizeof mag64 / sizeof *mag64;
        for (int trial = 0; trial < 3000; trial++) {
            set s;
            size_t n = 3 + below(10), d = 1 + below(8);
            make(&s, dtype, n, d);
            double c = mag[below(nm - 1)] * (0.5 + u01()); /* not 0: 0 means the default */
            if (!isfinite(cut(dtype, c)))
                c = mag[0];
            run_clip(&s, cut(dtype, c));
            run_arc(&s, below((n - 1) / 2 + 1));
        }
    }
}

/* The cases: one row of DBL_MAX values next to a second Byzantine row at 1e20 and honest
 * rows near 1; two Byzantine rows at 1e200 and above; honest rows at 1e-200. */
static void test_clip_extremes(void **state)
{
    (void)state;
    set s;
    make(&s, DPAS_FLOAT64, 6, 4);
    for (size_t i = 0; i < 6; i++)
        for (size_t t = 0; t < 4; t++)
            s.v[i][t] = s.x64[i][t] = i == 0 ? DBL_MAX : i == 1 ? 1e20 : 1.0 + 0.1 * (double)i;
    run_clip(&s, 2.0);
    /* by hand: the 1e20 row (norm 2e20) comes out as 1e20 * 2 / 2e20 = 1 per coordinate */
    for (size_t t = 0; t < 4; t++)
        assert_double_near(s.o64[1][t], 1.0, 1e-15);
    run_arc(&s, 2);
    /* ARC with f = 2 of 6: k = floor(2 2 4 / 6) = 2, the two Byzantine rows clipped to the
     * norm of the largest honest row (row 5: 2 * 1.5 = 3), 1.5 per coordinate */
    for (size_t t = 0; t < 4; t++) {
        assert_double_near(s.o64[0][t], 1.5, 1e-15);
        assert_double_near(s.o64[1][t], 1.5, 1e-15);
    }
    for (size_t i = 0; i < 6; i++)
        for (size_t t = 0; t < 4; t++)
            s.v[i][t] = s.x64[i][t] = i == 0 ? 1e250 : i == 1 ? 1e200 : 1e-200 * (double)(i + 1);
    run_arc(&s, 2); /* honest norms 2e-200 * (i + 1): the bound is row 5's, 1.2e-199 */
    for (size_t t = 0; t < 4; t++) {
        assert_double_near(s.o64[0][t], 6e-200, 1e-14);
        assert_double_near(s.o64[5][t], 6e-200, 1e-14);
    }
    run_clip(&s, 1e-199); /* rows 2..5 (norms 6e-200 .. 1.2e-199): rows 5 and 4 (1e-199) */
    for (size_t t = 0; t < 4; t++) {
        assert_double_near(s.o64[5][t], 5e-200, 1e-14);
        assert_double_near(s.o64[4][t], 5e-200, 1e-15); /* norm 1e-199: either way */
        assert_double_exact(s.o64[2][t], 3e-200);
    }
}

/* Centered clipping, one step from a given start v with a given tau: v + mean_i (x_i - v)
 * min(1, tau / ||x_i - v||), each clipped difference of norm <= tau, so the step moves by at
 * most tau; rows at the extremes of each width. */
static void test_centered_clipping_step(void **state)
{
    (void)state;
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++) {
        const double *mag = dtype == DPAS_FLOAT32 ? mag32 : mag64;
        size_t nm = dtype == DPAS_FLOAT32 ? sizeof mag32 / sizeof *mag32
                                          : sizeof mag64 / sizeof *mag64;
        for (int trial = 0; trial < 2000; trial++) {
            set s;
            size_t n = 3 + below(8), d = 1 + below(8);
            make(&s, dtype, n, d);
            double sm = mag[2 + below(nm - 3)]; /* a start and tau below the top magnitudes */
            double v[8], tau = cut(dtype, sm * (0.5 + u01()));
            float v32[8], o32[8];
            double o64[8];
            for (size_t t = 0; t < d; t++)
                v[t] = draw(dtype, sm), v32[t] = (float)v[t];
            if (!(tau > 0))
                continue;
            dpas_agg_opts o = {.iterations = 1, .tau = tau};
            o.start = dtype == DPAS_FLOAT32 ? (const void *)v32 : (const void *)v;
            dpas_error e = {0};
            void *out = dtype == DPAS_FLOAT32 ? (void *)o32 : (void *)o64;
            int rc = dpas_aggregate_typed(rule("centered_clipping"), (const void *const *)s.rows,
                                          dtype, n, d, &o, out, NULL, NULL, &e);
            if (rc)
                fail_msg("centered_clipping: %s", e.message);
            long double want[8] = {0}, moved[8], msq = 0;
            int exact = 1; /* every weight tau / ||x_i - v|| a normal double (see below) */
            for (size_t i = 0; i < n; i++) {
                long double ls = 0;
                for (size_t t = 0; t < d; t++)
                    ls += ((long double)s.v[i][t] - v[t]) * ((long double)s.v[i][t] - v[t]);
                long double nd = sqrtl(ls), a = nd > tau ? tau / nd : 1;
                exact &= a >= 0x1p-900L && fabsl((long double)v[0]) < 0x1p1000L;
                for (size_t t = 0; t < d; t++)
                    want[t] += ((long double)s.v[i][t] - v[t]) * a / (long double)n;
            }
            double ulp = dtype == DPAS_FLOAT32 ? 0x1p-23 : 0x1p-50;
            double tiny = dtype == DPAS_FLOAT32 ? 0x1p-149 : 0x1p-1074;
            for (size_t t = 0; t < d; t++) {
                double y = dtype == DPAS_FLOAT32 ? (double)o32[t] : o64[t];
                if (!isfinite(y))
                    fail_msg("centered_clipping: coordinate %zu is %g", t, y);
                moved[t] = (long double)y - v[t];
                msq += moved[t] * moved[t];
                /* each of the n + 2 roundings of a subnormal (in the iterate's units of half
                 * the rows) is off by up to one step of 2^-1074 */
                long double tol = 8 * ulp * (tau + fabsl((long double)v[t])) +
                                  2 * (long double)(n + 2) * tiny;
                if (exact && fabsl(moved[t] - want[t]) > tol)
                    fail_msg("centered_clipping %s: coordinate %zu moved by %.17Lg, expected "
                             "%.17Lg (tau %g, n %zu d %zu)",
                             dtype == DPAS_FLOAT32 ? "float32" : "float64", t, moved[t],
                             want[t], tau, n, d);
            }
            /* the guarantee, always: the step, a mean of differences of norm <= tau, moves by
             * at most tau (plus the rounding of v + step to the element type) */
            long double slack = 4 * ulp * (long double)tau + 2 * sqrtl((long double)d) * tiny;
            for (size_t t = 0; t < d; t++)
                slack += 2 * ulp * fabsl((long double)v[t]);
            if (sqrtl(msq) > tau + slack)
                fail_msg("centered_clipping %s: the step moved by %Lg, above tau %g (n %zu d %zu)",
                         dtype == DPAS_FLOAT32 ? "float32" : "float64", sqrtl(msq), tau, n, d);
        }
    }
}

/* Scale invariance of the float64 rules whose arithmetic squares distances (issue 33: CAF and
 * SMEA were not invariant for rows of magnitude 1e77 to 1e153): rule(2^k X) = 2^k rule(X) for k
 * taking X from 1e-300 to 1e300, to 1e-12 of the rows' scale (every step of these rules is
 * homogeneous in X; the reference is rule(X) at scale 1, so this is a consistency check of the
 * rule with itself across magnitudes), and SMEA's and Krum's selections the same rows. */
static void test_scale_invariance(void **state)
{
    (void)state;
    static const char *names[] = {"caf", "smea", "krum", "multi_krum", "bulyan", "brute", "meamed",
                                  "median", "trimmed_mean", "monna", "mean", "centered_clipping"};
    enum { N = 11, D = 5 }; /* bulyan: n >= 4f + 3 */
    double x[N][D], y[N][D], ref[D], got[D];
    const double *rx[N], *ry[N];
    for (int trial = 0; trial < 20; trial++) {
        for (size_t i = 0; i < N; i++) {
            for (size_t t = 0; t < D; t++) /* honest rows near 1, two far ones */
                x[i][t] = (i < 2 ? 30.0 * (double)(i + 1) : 1.0) + (u01() - 0.5);
            rx[i] = x[i], ry[i] = y[i];
        }
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
            const dpas_rule *r = rule(names[k]);
            dpas_agg_opts o = {.f = strcmp(names[k], "mean") ? 2 : 0};
            int64_t sel0[N], sel[N];
            size_t ns0 = 0, ns = 0;
            dpas_error e = {0};
            if (dpas_aggregate_f64(r, rx, N, D, &o, ref, sel0, &ns0, &e))
                fail_msg("%s: %s", names[k], e.message);
            for (int p2 = -996; p2 <= 996; p2 += 12) { /* 2^-996 = 1.5e-300 .. 2^996 */
                for (size_t i = 0; i < N; i++)
                    for (size_t t = 0; t < D; t++)
                        y[i][t] = ldexp(x[i][t], p2);
                if (dpas_aggregate_f64(r, ry, N, D, &o, got, sel, &ns, &e))
                    fail_msg("%s at 2^%d: %s", names[k], p2, e.message);
                for (size_t t = 0; t < D; t++)
                    if (!(fabs(ldexp(got[t], -p2) - ref[t]) <= 1e-12 * 30.0))
                        fail_msg("%s at 2^%d: coordinate %zu is %.17g 2^%d, at scale 1 %.17g",
                                 names[k], p2, t, ldexp(got[t], -p2), p2, ref[t]);
                if (ns != ns0 || memcmp(sel, sel0, ns * sizeof *sel))
                    fail_msg("%s at 2^%d: another selection than at scale 1", names[k], p2);
            }
        }
    }
}

/* The magnitude property in both widths, every rule and every pre-aggregation (issue 33's
 * Done-when): rule(2^k X) = 2^k rule(X), the selection the same rows, with X mixing magnitudes
 * (honest rows near 1, two Byzantine rows 2^m larger) and k taking the rows across the whole
 * range of the type: float32 from subnormal honest rows (2^-145) to Byzantine rows near FLT_MAX,
 * float64 from 1e-300 to 1e300 and up to DBL_MAX / 2^7 (mixed: honest rows at 1e-300 beside
 * Byzantine ones at 1e-120, up to honest rows at 1e125 beside Byzantine ones at 1e305). The values are multiples of 1/16, so
 * every scaled row is exact in its type (subnormals included): any difference comes from the
 * kernels, not from the input. Every step of these rules is homogeneous in X once the absolute
 * constants scale with it (geometric_median's nu, clipping's c); sign_majority's output is a
 * sign, the same at every scale. The tolerance: the rounding of the output type, plus one unit
 * of the smallest subnormal where the output is subnormal. A consistency check of each rule
 * with itself across magnitudes (the reference is the rule at scale 1). */
typedef struct magcase {
    const char *rule, *pre;
    int64_t f, pre_f; /* pre_f > 0: the step's own f (the mean has f = 0) */
} magcase;

static void magnitude_run(int dtype, int mixed)
{
    static const magcase cases[] = {
        {"mean", NULL, 0, 0},         {"median", NULL, 2, 0},         {"trimmed_mean", NULL, 2, 0},
        {"meamed", NULL, 2, 0},       {"sign_majority", NULL, 2, 0},  {"krum", NULL, 2, 0},
        {"multi_krum", NULL, 2, 0},   {"bulyan", NULL, 2, 0},         {"brute", NULL, 2, 0},
        {"geometric_median", NULL, 2, 0}, {"centered_clipping", NULL, 2, 0}, {"monna", NULL, 2, 0},
        {"caf", NULL, 2, 0},          {"smea", NULL, 2, 0},           {"mean", "nnm", 0, 2},
        {"median", "nnm", 2, 0},      {"mean", "clipping", 0, 0},     {"trimmed_mean", "arc", 2, 0},
        {"mean", "arc", 0, 2},        {"median", "bucketing", 2, 0},  {"krum", "clipping", 2, 0},
    };
    enum { N = 11, D = 5 };
    const int f32 = dtype == DPAS_FLOAT32;
    const int m = mixed ? (f32 ? 60 : 600) : 5; /* the Byzantine rows 2^m above the honest */
    const int klo = f32 ? -145 : -996, khi = f32 ? 120 - m : 1016 - m;
    const int kstep = f32 ? 5 : 23;
    double x[N][D], y[N][D], ref[D], got[D];
    float x32[N][D], y32[N][D], ref32[D], got32[D];
    const void *rx[N], *ry[N];
    for (int trial = 0; trial < 4; trial++) {
        for (size_t i = 0; i < N; i++)
            for (size_t t = 0; t < D; t++) { /* 0.5 .. 1.5 (or 2^m times), in 1/16 */
                double v = ldexp(floor((0.5 + u01()) * 16.0), -4);
                x[i][t] = (u01() < 0.3 ? -v : v) * (i < 2 ? ldexp(1.0, m) : 1.0);
                x32[i][t] = (float)x[i][t];
            }
        double top = ldexp(1.0, m + 1);
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            const magcase *mc = &cases[c];
            const dpas_rule *r = rule(mc->rule);
            dpas_preagg pre = {mc->pre ? rule(mc->pre) : NULL, 0, 0, 0, mc->pre_f, mc->pre_f > 0};
            int bucketing = mc->pre && !strcmp(mc->pre, "bucketing");
            int clipping = mc->pre && !strcmp(mc->pre, "clipping");
            int gm = !strcmp(mc->rule, "geometric_median");
            int sign = !strcmp(mc->rule, "sign_majority");
            if (bucketing)
                pre.s = 2, pre.seed = 7;
            dpas_agg_opts o = {.f = mc->f, .pre = mc->pre ? &pre : NULL, .npre = mc->pre ? 1 : 0};
            int64_t sel0[N], sel[N];
            size_t ns0 = 0, ns = 0;
            dpas_error e = {0};
            char what[160];
            snprintf(what, sizeof what, "%s%s%s %s%s", mc->pre ? mc->pre : "", mc->pre ? "+" : "",
                     mc->rule, f32 ? "float32" : "float64", mixed ? " mixed" : "");
            for (size_t i = 0; i < N; i++)
                rx[i] = f32 ? (const void *)x32[i] : (const void *)x[i];
            if (clipping)
                pre.c = 2.0;
            if (gm)
                o.smoothing = 1e-5;
            if (dpas_aggregate_typed(r, rx, dtype, N, D, &o, f32 ? (void *)ref32 : (void *)ref,
                                     sel0, &ns0, &e))
                fail_msg("%s: %s", what, e.message);
            for (int k = klo; k <= khi; k += kstep) {
                for (size_t i = 0; i < N; i++) {
                    for (size_t t = 0; t < D; t++)
                        if (f32)
                            y32[i][t] = ldexpf(x32[i][t], k);
                        else
                            y[i][t] = ldexp(x[i][t], k);
                    ry[i] = f32 ? (const void *)y32[i] : (const void *)y[i];
                }
                if (clipping)
                    pre.c = ldexp(2.0, k);
                if (gm)
                    o.smoothing = ldexp(1e-5, k);
                if (dpas_aggregate_typed(r, ry, dtype, N, D, &o, f32 ? (void *)got32 : (void *)got,
                                         sel, &ns, &e))
                    fail_msg("%s at 2^%d: %s", what, k, e.message);
                for (size_t t = 0; t < D; t++) {
                    double g = f32 ? (double)got32[t] : got[t], w = f32 ? (double)ref32[t] : ref[t];
                    double back = sign ? g : ldexp(g, -k);
                    /* the output's rounding: 2^-22 (float32) or 2^-50 (float64) of the rows'
                     * scale, and one subnormal unit of the output at 2^k */
                    double tol = (f32 ? 0x1p-22 : 0x1p-50) * top * (gm ? 64.0 : 1.0) +
                                 (sign ? 0.0 : ldexp(f32 ? 0x1p-149 : 0x1p-1074, -k));
                    if (!(fabs(back - w) <= tol))
                        fail_msg("%s at 2^%d: coordinate %zu is %.9g 2^%d, at scale 1 %.9g", what,
                                 k, t, back, k, w);
                }
                if (ns != ns0 || memcmp(sel, sel0, ns * sizeof *sel))
                    fail_msg("%s at 2^%d: another selection than at scale 1", what, k);
            }
        }
    }
}

static void test_magnitudes_both_widths(void **state)
{
    (void)state;
    for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++)
        for (int mixed = 0; mixed <= 1; mixed++)
            magnitude_run(dtype, mixed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clip_extremes),
        cmocka_unit_test(test_clip_property),
        cmocka_unit_test(test_centered_clipping_step),
        cmocka_unit_test(test_scale_invariance),
        cmocka_unit_test(test_magnitudes_both_widths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
