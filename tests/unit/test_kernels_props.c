/* Property tests of the aggregation kernels against Byzantine inputs: randomised over many
 * seeds, every rule (and NNM before a rule), every instruction set this CPU has, one and two
 * threads. f of the n gradients are Byzantine: NaN, +-Inf, +-FLT_MAX, huge (up to 1e30, and
 * around 1e19 where float squares overflow), a mix of those, or crafted from the honest ones
 * (ALIE, IPM, sign flip, through dpas_attack_rows). The output must be finite, and:
 *   median, trimmed mean: within [min, max] of the honest values, per coordinate;
 *   meamed, bulyan: within that range widened by its width on each side;
 *   krum, multi_krum, brute: with non-finite or huge Byzantine rows, only honest rows selected;
 *   geometric median: ||out - mean_H|| <= 2 (n - f) / (n - 2f) max_H ||x_i - mean_H||;
 *   centered clipping: ||out - mean_H|| <= R0 + L (r + R0), R0 the honest range's bound on the
 *   start (the coordinate-wise median) and r the honest radius (each of L steps moves by at
 *   most tau, which is at most the distance of an honest row from the start);
 *   sign majority: -1, 0 or +1.
 * The bounds are computed here from the honest rows alone. Consistency checks (two paths of our
 * own code): the coordinate-wise rules give bit-identical results on every instruction set, and
 * every rule gives bit-identical results on one and on two threads. */
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
    A_E19,
    A_MIXED,
    A_LARGE, /* dpas_attack_rows("large_value") */
    A_ALIE,
    A_IPM,
    A_SIGNFLIP,
    A_COUNT
};
static const char *attack_names[] = {"nan", "inf", "-inf", "flt_max", "-flt_max", "huge", "1e19",
                                     "mixed", "large_value", "alie", "ipm", "sign_flip"};
static int extreme(int a) { return a <= A_LARGE; }

typedef struct instance {
    size_t n, d, f, h;
    float *data;
    const float **rows;
    unsigned char *byz; /* byz[i]: row i is Byzantine */
    const float **honest;
} instance;

static void make(instance *g, rng *r, size_t n, size_t d, size_t f, int attack)
{
    g->n = n, g->d = d, g->f = f, g->h = n - f;
    g->data = malloc(n * d * sizeof(float) + 1);
    g->rows = malloc(n * sizeof *g->rows);
    g->byz = calloc(n, 1);
    g->honest = malloc(n * sizeof *g->honest);
    /* the Byzantine rows at random places */
    for (size_t t = 0; t < f;) {
        size_t i = below(r, n);
        if (!g->byz[i])
            g->byz[i] = 1, t++;
    }
    static const double scales[] = {1e-3, 1.0, 1e3};
    double scale = scales[below(r, 3)], noise = scale * (0.01 + u01(r));
    size_t hh = 0;
    float *base = malloc(d * sizeof(float) + 1);
    for (size_t j = 0; j < d; j++)
        base[j] = (float)((2 * u01(r) - 1) * scale);
    for (size_t i = 0; i < n; i++) {
        g->rows[i] = g->data + i * d;
        if (g->byz[i])
            continue;
        float *row = g->data + i * d;
        for (size_t j = 0; j < d; j++)
            row[j] = base[j] + (float)((2 * u01(r) - 1) * noise);
        g->honest[hh++] = row;
    }
    free(base);
    /* the crafted attacks from the honest rows */
    float **out = malloc((f ? f : 1) * sizeof *out);
    size_t b = 0;
    for (size_t i = 0; i < n; i++)
        if (g->byz[i])
            out[b++] = g->data + i * d;
    const char *aname = attack == A_LARGE ? "large_value" : attack == A_ALIE ? "alie"
                        : attack == A_IPM ? "ipm" : attack == A_SIGNFLIP ? "sign_flip" : NULL;
    if (aname) {
        const dpas_attack *a;
        dpas_error e = {0};
        assert_int_equal(dpas_attack_find(aname, &a, &e), 0);
        if (dpas_attack_rows(a, g->honest, g->h, d, f, NULL, out, &e))
            fail_msg("attack %s: %s", aname, e.message);
    } else {
        for (size_t t = 0; t < f; t++)
            for (size_t j = 0; j < d; j++) {
                double v = 0;
                int kind = attack == A_MIXED ? (int)below(r, A_MIXED) : attack;
                switch (kind) {
                case A_NAN: v = NAN; break;
                case A_INF: v = INFINITY; break;
                case A_NINF: v = -INFINITY; break;
                case A_FMAX: v = FLT_MAX; break;
                case A_NFMAX: v = -FLT_MAX; break;
                case A_HUGE: v = (2 * u01(r) - 1) * 1e30; break;
                default: v = (u01(r) + 0.5) * 1e19; break; /* A_E19 */
                }
                out[t][j] = (float)v;
            }
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
    int nnm;
} rcase;

static const rcase rules[] = {
    {"median", NULL, 3, 0},          {"trimmed_mean", NULL, 3, 0}, {"meamed", NULL, 3, 0},
    {"sign_majority", NULL, 3, 0},   {"krum", NULL, 5, 0},         {"krum", "byzfl", 3, 0},
    {"multi_krum", NULL, 5, 0},      {"multi_krum", "byzfl", 3, 0}, {"bulyan", NULL, 7, 0},
    {"brute", NULL, 3, 0},           {"geometric_median", NULL, 3, 0},
    {"centered_clipping", NULL, 3, 0}, {"median", NULL, 3, 1},     {"trimmed_mean", NULL, 3, 1},
    {"krum", NULL, 5, 1},            {"geometric_median", NULL, 3, 1},
};
#define NRULES (sizeof rules / sizeof rules[0])

/* Check the properties of out for the instance; sel/nsel the selection. */
static void check(const rcase *rc, const dpas_rule *rule, const instance *g, int attack,
                  const float *out, const int64_t *sel, size_t nsel, int64_t iterations,
                  const char *what)
{
    size_t d = g->d, h = g->h, n = g->n, f = g->f;
    for (size_t j = 0; j < d; j++)
        if (!isfinite(out[j]))
            fail_msg("%s: coordinate %zu is %g", what, j, (double)out[j]);
    if (rc->nnm && !extreme(attack))
        return; /* mixing crafted rows into honest ones moves them: only finiteness is promised */
    double *mu = calloc(d + 1, sizeof *mu);
    for (size_t j = 0; j < d; j++) {
        for (size_t i = 0; i < h; i++)
            mu[j] += g->honest[i][j];
        mu[j] /= (double)h;
    }
    double rmax = 0, r0sq = 0;
    for (size_t i = 0; i < h; i++) {
        double s = 0;
        for (size_t j = 0; j < d; j++)
            s += ((double)g->honest[i][j] - mu[j]) * ((double)g->honest[i][j] - mu[j]);
        rmax = fmax(rmax, sqrt(s));
    }
    double dist = 0;
    for (size_t j = 0; j < d; j++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < h; i++) {
            lo = fmin(lo, g->honest[i][j]);
            hi = fmax(hi, g->honest[i][j]);
        }
        double w = hi - lo, v = out[j];
        r0sq += fmax(mu[j] - lo, hi - mu[j]) * fmax(mu[j] - lo, hi - mu[j]);
        dist += (v - mu[j]) * (v - mu[j]);
        /* a relative slack for the rounding of a sum in double to float */
        double slack = 1e-6 * fmax(fabs(lo), fabs(hi));
        switch (rule->id) {
        case DPAS_RULE_MEDIAN:
        case DPAS_RULE_TRIMMED_MEAN:
            if (v < lo - slack || v > hi + slack)
                fail_msg("%s: coordinate %zu = %.9g outside the honest [%.9g, %.9g]", what, j, v, lo, hi);
            break;
        case DPAS_RULE_MEAMED:
        case DPAS_RULE_BULYAN:
            if (v < lo - w - slack || v > hi + w + slack)
                fail_msg("%s: coordinate %zu = %.9g outside the honest [%.9g, %.9g] widened by %.3g",
                         what, j, v, lo, hi, w);
            break;
        case DPAS_RULE_SIGN_MAJORITY:
            if (v != -1.0 && v != 0.0 && v != 1.0)
                fail_msg("%s: coordinate %zu = %g is not a sign", what, j, v);
            break;
        default:
            break;
        }
    }
    dist = sqrt(dist);
    if (rule->id == DPAS_RULE_GEOMETRIC_MEDIAN && (!rc->nnm || extreme(attack))) {
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
    if (extreme(attack) && (rule->id == DPAS_RULE_KRUM || rule->id == DPAS_RULE_MULTI_KRUM ||
                            rule->id == DPAS_RULE_BRUTE)) {
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

/* One case on every instruction set (and threads): properties, and the consistency checks. */
static void run_case(const rcase *rc, rng *r, size_t n, size_t d, int attack, int threads,
                     int all_isas, int seed)
{
    const dpas_rule *rule = rule_of(rc->name, rc->conv);
    int64_t maxf = 0;
    dpas_rule_max_f(rule, (int64_t)n, &maxf, NULL);
    if (maxf < 1)
        return;
    size_t f = 1 + below(r, (size_t)maxf);
    if (rule->id == DPAS_RULE_BRUTE && f > 4)
        f = 4; /* C(n, f) stays small */
    instance g;
    make(&g, r, n, d, f, attack);
    float *out = malloc(d * sizeof(float) + 1), *first = malloc(d * sizeof(float) + 1);
    int64_t sel[64], sel1[64];
    size_t nsel = 0, nsel1 = 0;
    int64_t iterations = rule->id == DPAS_RULE_GEOMETRIC_MEDIAN ? 200 : 0;
    char what[200];
    for (int ia = 0; ia < (all_isas ? nisas : 1); ia++) {
        int isa = all_isas ? isas[ia] : 0;
        for (int t = 1; t <= threads; t++) {
            dpas_agg_opts o = {.f = (int64_t)f, .threads = t, .isa = isa, .nnm = rc->nnm,
                               .iterations = iterations};
            dpas_error e = {0};
            snprintf(what, sizeof what, "%s%s%s n=%zu f=%zu d=%zu attack=%s isa=%d threads=%d seed=%d",
                     rc->nnm ? "nnm+" : "", rc->name, rc->conv ? "(byzfl)" : "", n, f, d,
                     attack_names[attack], isa, t, seed);
            if (dpas_aggregate(rule, g.rows, n, d, &o, out, sel, &nsel, &e))
                fail_msg("%s: %s", what, e.message);
            check(rc, rule, &g, attack, out, sel, nsel, o.iterations, what);
            int coordinatewise = (rule->caps & DPAS_RULE_CAP_COORDINATEWISE) && !rc->nnm;
            if (ia == 0 && t == 1) {
                memcpy(first, out, d * sizeof(float));
                memcpy(sel1, sel, nsel * sizeof *sel);
                nsel1 = nsel;
            } else if (t > 1 || coordinatewise) {
                /* consistency: the same bits on another thread count, or another instruction
                 * set for the coordinate-wise rules */
                if (memcmp(first, out, d * sizeof(float)))
                    fail_msg("%s: differs from the first run", what);
                if (t > 1 && (nsel != nsel1 || memcmp(sel, sel1, nsel * sizeof *sel)))
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
        for (size_t k = 0; k < NRULES; k++) {
            size_t n = rules[k].min_n + below(&r, 9);
            size_t d = 1 + below(&r, 70);
            run_case(&rules[k], &r, n, d, seed % A_COUNT, 1, 1, seed);
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
            run_case(&rules[k], &r, n, d, attack, 2, 0, seed);
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
