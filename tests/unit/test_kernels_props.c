/* SPDX-License-Identifier: Apache-2.0 */
/* Property tests of the aggregation kernels against Byzantine inputs: randomised over many
 * seeds, every rule (and pre-aggregations before rules), float32 and float64 rows, every
 * instruction set this CPU has, one and two threads. f of the n gradients are Byzantine: NaN,
 * +-Inf, +-the largest finite value, huge (up to 1e30 for float32, 1e300 for float64, and where
 * squares overflow: around 1e19 for float32, 1e160 for float64), a mix of those, or crafted from
 * the honest ones (ALIE, IPM, sign flip, Mimic, Gaussian, through dpas_attack_rows_typed). The
 * honest rows are near a base at a scale of 1e-3, 1 or 1e3 (float64 also 1e-200 and 1e200, where
 * squared distances leave the double range). The output must be finite, and:
 *   median, trimmed mean: within [min, max] of the honest values, per coordinate;
 *   meamed, bulyan: within that range widened by its width on each side;
 *   krum, multi_krum, brute, smea, monna (from an honest row): with non-finite or huge
 *   Byzantine rows, only honest rows selected;
 *   caf, smea, monna: with non-finite or huge Byzantine rows, within the honest range;
 *   geometric median: ||out - mean_H|| <= 2 (n - f) / (n - 2f) max_H ||x_i - mean_H||;
 *   centered clipping: ||out - mean_H|| <= R0 + L (r + R0), R0 the honest range's bound on the
 *   start (the coordinate-wise median) and r the honest radius (each of L steps moves by at
 *   most tau, which is at most the distance of an honest row from the start);
 *   sign majority: -1, 0 or +1;
 *   with a pre-aggregation (nnm, arc, clipping, bucketing) before median or trimmed mean and
 *   non-finite or huge Byzantine rows: within the honest range (clipped rows are scaled towards
 *   0: the range widened to include 0).
 * The bounds are computed here from the honest rows alone, in units of the honest scale.
 * Consistency checks (two paths of our own code): every rule gives bit-identical results on
 * every instruction set and on one and on two threads. */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double u01(rng *r) { return (double)(next(r) >> 11) / 9007199254740992.0; }
static size_t below(rng *r, size_t k) { return (size_t)(next(r) % k); }

enum {
    A_NAN,
    A_INF,
    A_NINF,
    A_FMAX,
    A_NFMAX,
    A_HUGE,
    A_SQ, /* where squares overflow */
    A_MIXED,
    A_LARGE, /* dpas_attack_rows_typed("large_value") */
    A_ALIE,
    A_IPM,
    A_SIGNFLIP,
    A_MIMIC,
    A_GAUSSIAN,
    A_COUNT
};
static const char *attack_names[] = {"nan",         "inf",  "-inf", "max",       "-max",
                                     "huge",        "sq",   "mixed", "large_value", "alie",
                                     "ipm",         "sign_flip", "mimic", "gaussian"};
static int extreme(int a) { return a <= A_LARGE; }

typedef struct instance {
    int dtype;
    size_t es, n, d, f, h;
    double scale;        /* the honest rows' scale */
    unsigned char *data; /* n rows of d elements */
    const void **rows;
    unsigned char *byz; /* byz[i]: row i is Byzantine */
    const void **honest;
    size_t first_honest;
} instance;

static double val(const instance *g, const void *row, size_t j)
{
    return g->dtype == DPAS_FLOAT64 ? ((const double *)row)[j] : (double)((const float *)row)[j];
}
static void set(const instance *g, void *row, size_t j, double v)
{
    if (g->dtype == DPAS_FLOAT64)
        ((double *)row)[j] = v;
    else
        ((float *)row)[j] = (float)v;
}

static void extreme_rows(instance *g, rng *r, void **out, int attack)
{
    const int f64 = g->dtype == DPAS_FLOAT64;
    /* sq: squares overflow, and far from the honest rows (float64 rows may sit at 1e200) */
    const double big = f64 ? DBL_MAX : FLT_MAX, huge = f64 ? 1e300 : 1e30;
    const double sq = f64 ? fmax(1e160, 1e30 * g->scale) : 1e19;
    for (size_t t = 0; t < g->f; t++)
        for (size_t j = 0; j < g->d; j++) {
            double v = 0;
            int kind = attack == A_MIXED ? (int)below(r, A_MIXED) : attack;
            switch (kind) {
            case A_NAN: v = NAN; break;
            case A_INF: v = INFINITY; break;
            case A_NINF: v = -INFINITY; break;
            case A_FMAX: v = big; break;
            case A_NFMAX: v = -big; break;
            case A_HUGE: v = (2 * u01(r) - 1) * huge; break;
            default: v = (u01(r) + 0.5) * sq; break; /* A_SQ */
            }
            set(g, out[t], j, v);
        }
}

static void make(instance *g, rng *r, int dtype, size_t n, size_t d, size_t f, int attack)
{
    g->dtype = dtype, g->es = dtype == DPAS_FLOAT64 ? 8 : 4;
    g->n = n, g->d = d, g->f = f, g->h = n - f;
    g->data = malloc(n * d * g->es + 1);
    g->rows = malloc(n * sizeof *g->rows);
    g->byz = calloc(n, 1);
    g->honest = malloc(n * sizeof *g->honest);
    for (size_t t = 0; t < f;) { /* the Byzantine rows at random places */
        size_t i = below(r, n);
        if (!g->byz[i])
            g->byz[i] = 1, t++;
    }
    static const double scales[] = {1e-3, 1.0, 1e3, 1e-200, 1e200};
    g->scale = scales[below(r, dtype == DPAS_FLOAT64 ? 5 : 3)];
    double noise = g->scale * (0.01 + u01(r));
    double *base = malloc(d * sizeof *base + 1);
    for (size_t j = 0; j < d; j++)
        base[j] = (2 * u01(r) - 1) * g->scale;
    size_t hh = 0;
    g->first_honest = n;
    for (size_t i = 0; i < n; i++) {
        g->rows[i] = g->data + i * d * g->es;
        if (g->byz[i])
            continue;
        if (g->first_honest == n)
            g->first_honest = i;
        for (size_t j = 0; j < d; j++)
            set(g, (void *)g->rows[i], j, base[j] + (2 * u01(r) - 1) * noise);
        g->honest[hh++] = g->rows[i];
    }
    free(base);
    void **out = malloc((f ? f : 1) * sizeof *out);
    for (size_t i = 0, b = 0; i < n; i++)
        if (g->byz[i])
            out[b++] = (void *)g->rows[i];
    static const char *crafted[] = {"large_value", "alie", "ipm", "sign_flip", "mimic",
                                    "gaussian"};
    if (attack >= A_LARGE) {
        const dpas_attack *a;
        dpas_error e = {0};
        assert_int_equal(dpas_attack_find(crafted[attack - A_LARGE], &a, &e), 0);
        dpas_attack_opts o = {.seed = next(r)};
        if (attack == A_GAUSSIAN) /* at the honest scale: a plausible vector */
            o.value[1] = g->scale, o.given = 2;
        if (dpas_attack_rows_typed(a, (const void *const *)g->honest, dtype, g->h, d, f, &o, out,
                                   NULL, &e))
            fail_msg("attack %s: %s", a->name, e.message);
    } else {
        extreme_rows(g, r, out, attack);
    }
    free(out);
}

static void drop(instance *g)
{
    free(g->data), free(g->rows), free(g->byz), free(g->honest);
}

static const dpas_rule *rule_of(const char *name, const char *conv)
{
    const dpas_rule *r;
    assert_int_equal(dpas_rule_find(name, conv, &r, NULL), 0);
    return r;
}

typedef struct rcase {
    const char *name, *conv;
    size_t min_n;
    const char *pre; /* a pre-aggregation first, or NULL */
} rcase;

static const rcase rules[] = {
    {"median", NULL, 3, NULL},         {"trimmed_mean", NULL, 3, NULL},
    {"meamed", NULL, 3, NULL},         {"sign_majority", NULL, 3, NULL},
    {"krum", NULL, 5, NULL},           {"krum", "byzfl", 3, NULL},
    {"multi_krum", NULL, 5, NULL},     {"multi_krum", "byzfl", 3, NULL},
    {"bulyan", NULL, 7, NULL},         {"brute", NULL, 3, NULL},
    {"geometric_median", NULL, 3, NULL}, {"centered_clipping", NULL, 3, NULL},
    {"monna", NULL, 3, NULL},          {"caf", NULL, 3, NULL},
    {"smea", NULL, 3, NULL},           {"median", NULL, 3, "nnm"},
    {"trimmed_mean", NULL, 3, "nnm"},  {"krum", NULL, 5, "nnm"},
    {"geometric_median", NULL, 3, "nnm"}, {"median", NULL, 3, "arc"},
    {"trimmed_mean", NULL, 3, "clipping"}, {"median", NULL, 9, "bucketing"},
};
#define NRULES (sizeof rules / sizeof rules[0])

/* The checks of the header, in units of the honest scale (so that squares stay in range). */
static void check(const rcase *rc, const dpas_rule *rule, const instance *g, int attack,
                  const void *out, const int64_t *sel, size_t nsel, int64_t iterations,
                  const char *what)
{
    size_t d = g->d, h = g->h, n = g->n, f = g->f;
    const double sc = g->scale;
    for (size_t j = 0; j < d; j++)
        if (!isfinite(val(g, out, j)))
            fail_msg("%s: coordinate %zu is %g", what, j, val(g, out, j));
    if (rc->pre && !extreme(attack))
        return; /* mixing crafted rows into honest ones moves them: only finiteness is promised */
    double *mu = calloc(d + 1, sizeof *mu);
    for (size_t j = 0; j < d; j++) {
        for (size_t i = 0; i < h; i++)
            mu[j] += val(g, g->honest[i], j) / sc;
        mu[j] /= (double)h;
    }
    double rmax = 0, r0sq = 0;
    for (size_t i = 0; i < h; i++) {
        double s = 0;
        for (size_t j = 0; j < d; j++) {
            double e = val(g, g->honest[i], j) / sc - mu[j];
            s += e * e;
        }
        rmax = fmax(rmax, sqrt(s));
    }
    int in_range = rule->id == DPAS_RULE_MEDIAN || rule->id == DPAS_RULE_TRIMMED_MEAN ||
                   (extreme(attack) && (rule->id == DPAS_RULE_CAF || rule->id == DPAS_RULE_SMEA ||
                                        rule->id == DPAS_RULE_MONNA));
    int clipped = rc->pre && (!strcmp(rc->pre, "arc") || !strcmp(rc->pre, "clipping"));
    double dist = 0;
    for (size_t j = 0; j < d; j++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < h; i++) {
            lo = fmin(lo, val(g, g->honest[i], j) / sc);
            hi = fmax(hi, val(g, g->honest[i], j) / sc);
        }
        if (clipped) /* clipping scales rows towards 0 */
            lo = fmin(lo, 0.0), hi = fmax(hi, 0.0);
        double w = hi - lo, v = val(g, out, j) / sc;
        r0sq += fmax(mu[j] - lo, hi - mu[j]) * fmax(mu[j] - lo, hi - mu[j]);
        dist += (v - mu[j]) * (v - mu[j]);
        /* a relative slack for the rounding of a sum in double to float */
        double slack = (g->dtype == DPAS_FLOAT64 ? 1e-12 : 1e-6) * fmax(fabs(lo), fabs(hi));
        if (in_range && (v < lo - slack || v > hi + slack))
            fail_msg("%s: coordinate %zu = %.9g outside the honest [%.9g, %.9g]", what, j, v, lo,
                     hi);
        if ((rule->id == DPAS_RULE_MEAMED || rule->id == DPAS_RULE_BULYAN) &&
            (v < lo - w - slack || v > hi + w + slack))
            fail_msg("%s: coordinate %zu = %.9g outside the honest [%.9g, %.9g] widened by %.3g",
                     what, j, v, lo, hi, w);
        if (rule->id == DPAS_RULE_SIGN_MAJORITY && v * sc != -1.0 && v * sc != 0.0 &&
            v * sc != 1.0)
            fail_msg("%s: coordinate %zu = %g is not a sign", what, j, v * sc);
    }
    dist = sqrt(dist);
    if (rule->id == DPAS_RULE_GEOMETRIC_MEDIAN && (!rc->pre || extreme(attack))) {
        double bound = 2.0 * (double)(n - f) / (double)(n - 2 * f) * rmax;
        if (dist > bound * (1 + 1e-3) + 1e-6 * sqrt((double)d) * (fabs(mu[0]) + rmax))
            fail_msg("%s: ||out - mean_H|| = %.6g > 2(n-f)/(n-2f) max ||x_i - mean_H|| = %.6g",
                     what, dist, bound);
    }
    if (rule->id == DPAS_RULE_CENTERED_CLIPPING) {
        double r0 = sqrt(r0sq), L = (double)(iterations ? iterations : 10);
        double bound = r0 + L * (rmax + r0);
        if (dist > bound * (1 + 1e-6) + 1e-6)
            fail_msg("%s: ||out - mean_H|| = %.6g > R0 + L (r + R0) = %.6g", what, dist, bound);
    }
    if (extreme(attack) && (rule->caps & DPAS_RULE_CAP_SELECTS) && rule->id != DPAS_RULE_BULYAN &&
        !rc->pre) {
        for (size_t t = 0; t < nsel; t++)
            if (sel[t] < 0 || (size_t)sel[t] >= n || g->byz[sel[t]])
                fail_msg("%s: selected row %lld is Byzantine", what, (long long)sel[t]);
        if (!nsel)
            fail_msg("%s: nothing selected", what);
    }
    free(mu);
}

static int isas[4], nisas;

static void find_isas(void)
{
    nisas = 0;
    for (int k = DPAS_ISA_GENERIC; k <= DPAS_ISA_AVX512; k++)
        if (dpas_kernel_isa_available(k))
            isas[nisas++] = k;
}

/* f for the case: 1 to the most the rule (on the buckets, after bucketing) allows, capped where
 * the rule examines subsets. */
static size_t pick_f(const rcase *rc, const dpas_rule *rule, rng *r, size_t n)
{
    int64_t maxf = 0;
    size_t m = rc->pre && !strcmp(rc->pre, "bucketing") ? (n + 1) / 2 : n;
    dpas_rule_max_f(rule, (int64_t)m, &maxf, NULL);
    if (maxf < 1)
        return 0;
    size_t f = 1 + below(r, (size_t)maxf);
    if ((rule->id == DPAS_RULE_BRUTE || rule->id == DPAS_RULE_SMEA) && f > 4)
        f = 4; /* C(n, f) stays small */
    return f;
}

/* One case on every instruction set (and threads): properties, and the consistency checks. */
static void run_case(const rcase *rc, rng *r, int dtype, size_t n, size_t d, int attack,
                     int threads, int all_isas, int seed)
{
    const dpas_rule *rule = rule_of(rc->name, rc->conv);
    size_t f = pick_f(rc, rule, r, n);
    if (!f)
        return;
    instance g;
    make(&g, r, dtype, n, d, f, attack);
    size_t bytes = d * g.es + 8;
    unsigned char *out = malloc(bytes), *first = malloc(bytes);
    int64_t sel[64], sel1[64];
    size_t nsel = 0, nsel1 = 0;
    int64_t iterations = rule->id == DPAS_RULE_GEOMETRIC_MEDIAN ? 200 : 0;
    int bucketing = rc->pre && !strcmp(rc->pre, "bucketing");
    dpas_preagg pre = {rc->pre ? rule_of(rc->pre, NULL) : NULL, 0, bucketing ? 2 : 0,
                       bucketing ? (uint64_t)seed : 0, 0, 0};
    char what[240];
    for (int ia = 0; ia < (all_isas ? nisas : 1); ia++) {
        int isa = all_isas ? isas[ia] : 0;
        for (int t = 1; t <= threads; t++) {
            dpas_agg_opts o = {.f = (int64_t)f, .threads = t, .isa = isa,
                               .iterations = iterations, .pre = rc->pre ? &pre : NULL,
                               .npre = rc->pre != NULL};
            if (rule->id == DPAS_RULE_MONNA)
                o.idx = (int64_t)g.first_honest;
            if (rule->id == DPAS_RULE_GEOMETRIC_MEDIAN) /* nu is absolute: at the rows' scale */
                o.smoothing = 1e-5 * g.scale;
            dpas_error e = {0};
            snprintf(what, sizeof what,
                     "%s%s%s%s dtype=%d n=%zu f=%zu d=%zu attack=%s scale=%g isa=%d threads=%d "
                     "seed=%d",
                     rc->pre ? rc->pre : "", rc->pre ? "+" : "", rc->name,
                     rc->conv ? "(byzfl)" : "", dtype, n, f, d, attack_names[attack], g.scale, isa,
                     t, seed);
            if (dpas_aggregate_typed(rule, g.rows, dtype, n, d, &o, out, sel, &nsel, &e))
                fail_msg("%s: %s", what, e.message);
            check(rc, rule, &g, attack, out, sel, nsel, o.iterations, what);
            if (ia == 0 && t == 1) {
                memcpy(first, out, d * g.es);
                memcpy(sel1, sel, nsel * sizeof *sel);
                nsel1 = nsel;
            } else {
                /* consistency: the same bits on another thread count or another instruction
                 * set, for every rule (distances and iterative passes are summed in the same
                 * lanes everywhere) */
                if (memcmp(first, out, d * g.es))
                    fail_msg("%s: differs from the first run", what);
                if (nsel != nsel1 || memcmp(sel, sel1, nsel * sizeof *sel))
                    fail_msg("%s: selection differs from the first run", what);
            }
        }
    }
    free(out), free(first);
    drop(&g);
}

static void test_properties_small(void **state)
{
    (void)state;
    find_isas();
    rng r = {20240611};
    for (int seed = 0; seed < 36; seed++)
        for (size_t k = 0; k < NRULES; k++)
            for (int dtype = DPAS_FLOAT32; dtype <= DPAS_FLOAT64; dtype++) {
                size_t n = rules[k].min_n + below(&r, 9);
                size_t d = 1 + below(&r, 70);
                run_case(&rules[k], &r, dtype, n, d, (seed + dtype * 5) % A_COUNT, 1, 1, seed);
            }
}

/* Wide enough that two threads share the coordinates (and the distance chunks). */
static void test_properties_threads(void **state)
{
    (void)state;
    find_isas();
    rng r = {777};
    for (int seed = 0; seed < 4; seed++)
        for (size_t k = 0; k < NRULES; k++) {
            size_t n = rules[k].min_n + below(&r, 5);
            size_t d = 2 * 16384 + 37;
            int attack = (seed * 5 + (int)k) % A_COUNT;
            run_case(&rules[k], &r, seed % 2 ? DPAS_FLOAT64 : DPAS_FLOAT32, n, d, attack, 2, 0,
                     seed);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_properties_small),
        cmocka_unit_test(test_properties_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
