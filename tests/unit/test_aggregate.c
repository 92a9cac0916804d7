/* SPDX-License-Identifier: Apache-2.0 */
/* Aggregation kernels against plain reference implementations written here (qsort per
 * coordinate, sums and distances in double), on random and adversarial inputs, through every
 * instruction set; the examples of issue 11 (NaN, ties, overflow) by hand; geometric median,
 * brute (MDA), NNM and the attacks against references, hand calculations and published values.
 * The references sum in double, as the kernels now do: the old ones summed in float, which the
 * kernels no longer do (a float sum of finite values can overflow). */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

static uint64_t rng = 88172645463325252ull;
static float urand(void) /* xorshift64: uniform in [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

typedef struct grads {
    size_t n, d;
    float *data;
    const float **rows;
} grads;

/* Honest gradients near a common base, as in SGD, with the first `byz` rows adversarial. */
static grads make(size_t n, size_t d, size_t byz, float scale)
{
    grads g = {n, d, malloc(n * d * sizeof(float)), malloc(n * sizeof(float *))};
    float *base = malloc(d * sizeof(float));
    for (size_t j = 0; j < d; j++)
        base[j] = urand();
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d; j++)
            g.data[i * d + j] = i < byz ? -scale * base[j] : base[j] + 0.1f * urand();
        g.rows[i] = g.data + i * d;
    }
    free(base);
    return g;
}

static void drop(grads *g)
{
    free(g->data);
    free(g->rows);
}

static int cmpf(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* meamed by its definition: the w values closest to the median, of two equally close the lower
 * one first; summed in ascending order in double. v is sorted. */
static double ref_closest_mean(const float *v, size_t n, size_t w)
{
    double med = n % 2 ? v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
    double (*key)[2] = malloc(n * sizeof *key), *pick = malloc(w * sizeof *pick);
    for (size_t i = 0; i < n; i++)
        key[i][0] = fabs((double)v[i] - med), key[i][1] = v[i];
    for (size_t a = 1; a < n; a++) /* by distance, then by value */
        for (size_t b = a; b > 0 && (key[b][0] < key[b - 1][0] ||
                                     (key[b][0] == key[b - 1][0] && key[b][1] < key[b - 1][1])); b--) {
            double t0 = key[b][0], t1 = key[b][1];
            key[b][0] = key[b - 1][0], key[b][1] = key[b - 1][1];
            key[b - 1][0] = t0, key[b - 1][1] = t1;
        }
    for (size_t i = 0; i < w; i++)
        pick[i] = key[i][1];
    qsort(pick, w, sizeof *pick, cmpd);
    double s = 0;
    for (size_t i = 0; i < w; i++)
        s += pick[i];
    free(key), free(pick);
    return s / (double)w;
}

/* The references, one coordinate at a time on a sorted copy, sums in double. */
static void ref_columns(const grads *g, const char *rule, size_t f, float *out)
{
    float *v = malloc(g->n * sizeof(float));
    size_t n = g->n;
    for (size_t j = 0; j < g->d; j++) {
        for (size_t i = 0; i < n; i++)
            v[i] = g->rows[i][j];
        qsort(v, n, sizeof(float), cmpf);
        if (!strcmp(rule, "median")) {
            out[j] = n % 2 ? v[n / 2] : (float)(((double)v[n / 2 - 1] + (double)v[n / 2]) / 2);
        } else if (!strcmp(rule, "trimmed_mean")) {
            double s = 0;
            for (size_t k = f; k < n - f; k++)
                s += v[k];
            out[j] = (float)(s / (double)(n - 2 * f));
        } else { /* meamed: the n - f values closest to the median */
            out[j] = (float)ref_closest_mean(v, n, n - f);
        }
    }
    free(v);
}

static const dpas_rule *rule(const char *name)
{
    const dpas_rule *r;
    assert_int_equal(dpas_rule_find(name, NULL, &r, NULL), 0);
    return r;
}

static int isas[4], nisas;

static void find_isas(void)
{
    nisas = 0;
    for (int k = DPAS_ISA_GENERIC; k <= DPAS_ISA_AVX512; k++)
        if (dpas_kernel_isa_available(k))
            isas[nisas++] = k;
}

static void agg(const char *name, const grads *g, size_t f, int isa, float *out, int64_t *sel,
                size_t *nsel)
{
    dpas_agg_opts o = {.f = (int64_t)f, .isa = isa};
    dpas_error e = {0};
    if (dpas_aggregate(rule(name), g->rows, g->n, g->d, &o, out, sel, nsel, &e))
        fail_msg("%s: %s", name, e.message);
}

static void assert_same(const float *a, const float *b, size_t d, const char *what)
{
    for (size_t j = 0; j < d; j++)
        if (memcmp(&a[j], &b[j], sizeof(float)))
            fail_msg("%s: coordinate %zu: %.9g vs %.9g", what, j, (double)a[j], (double)b[j]);
}

/* Every instruction set against the references, bit for bit (the kernels sum the same sorted
 * values in the same order in double). */
static void test_coordinatewise(void **state)
{
    (void)state;
    find_isas();
    static const size_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64, 65};
    static const char *rules[] = {"median", "trimmed_mean", "meamed"};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        size_t n = ns[a], d = 1000 + a; /* not a multiple of 16: the tail runs the portable path */
        size_t f = (n - 1) / 2;
        grads g = make(n, d, f, 5.0f);
        float *ref = malloc(d * sizeof(float)), *v = malloc(d * sizeof(float));
        for (size_t r = 0; r < 3; r++) {
            for (size_t ff = 0; ff <= f; ff += f ? (f + 1) / 2 : 1) {
                ref_columns(&g, rules[r], ff, ref);
                for (int k = 0; k < nisas; k++) {
                    agg(rules[r], &g, ff, isas[k], v, NULL, NULL);
                    assert_same(v, ref, d, rules[r]);
                }
            }
        }
        free(ref), free(v);
        drop(&g);
    }
}

/* Many ties: values from {-2, -1, 0, 1, 2} (and halves), so equal distances to the median are
 * everywhere; meamed and bulyan's phase against the definition written above. */
static void test_ties(void **state)
{
    (void)state;
    find_isas();
    /* the issue's example: meamed with f = 2 on 1 1 2 2 3: the 3 values closest to the median 2
     * are 2, 2 and one of 1, 1, 3; the lower one by the tie rule: (1 + 2 + 2) / 3 */
    float c0[5] = {1, 1, 2, 2, 3};
    const float *rows5[5] = {&c0[0], &c0[1], &c0[2], &c0[3], &c0[4]};
    float out[64];
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.f = 2, .isa = isas[k]};
        assert_int_equal(dpas_aggregate(rule("meamed"), rows5, 5, 1, &o, out, NULL, NULL, NULL), 0);
        assert_true(out[0] == (float)(5.0 / 3.0));
    }
    for (uint64_t seed = 1; seed <= 200; seed++) {
        rng = seed * 0x9e3779b97f4a7c15ull;
        size_t n = 3 + (size_t)((urand() + 1) * 10), d = 1 + (size_t)((urand() + 1) * 30);
        size_t f = (size_t)((urand() + 1) / 2 * (double)((n - 1) / 2 + 1));
        if (2 * f >= n)
            f = (n - 1) / 2;
        grads g = make(n, d, 0, 0);
        for (size_t i = 0; i < n * d; i++)
            g.data[i] = (float)(int)(urand() * 2.5f) * (seed % 3 ? 1.0f : 0.5f);
        float *ref = malloc(d * sizeof(float)), *v = malloc(d * sizeof(float));
        ref_columns(&g, "meamed", f, ref);
        for (int k = 0; k < nisas; k++) {
            agg("meamed", &g, f, isas[k], v, NULL, NULL);
            assert_same(v, ref, d, "meamed with ties");
        }
        /* bulyan's coordinate phase: the theta - 2f values closest to the median of theta */
        if (n >= 4 * f + 3 && f > 0) {
            size_t theta = n - 2 * f;
            int64_t sel[64];
            for (size_t t = 0; t < theta; t++)
                sel[t] = (int64_t)(n - 1 - t);
            grads s = {theta, d, NULL, malloc(theta * sizeof(float *))};
            for (size_t t = 0; t < theta; t++)
                s.rows[t] = g.rows[n - theta + t];
            ref_columns(&s, "meamed", 2 * f, ref); /* window theta - 2f */
            dpas_agg_opts o = {.f = (int64_t)f};
            for (int k = 0; k < nisas; k++) {
                o.isa = isas[k];
                assert_int_equal(dpas_aggregate_selected(rule("bulyan"), g.rows, n, d, &o, sel,
                                                         theta, v, NULL), 0);
                assert_same(v, ref, d, "bulyan's phase with ties");
            }
            free(s.rows);
        }
        free(ref), free(v);
        drop(&g);
    }
}

static void test_median_robust(void **state)
{
    (void)state;
    /* 7 of 16 replicas send -100 x the base: the median stays within the honest noise (0.1)
     * while the mean is dragged far away */
    grads g = make(16, 512, 7, 100.0f);
    float *med = malloc(512 * sizeof(float)), *mean = malloc(512 * sizeof(float));
    agg("median", &g, 7, 0, med, NULL, NULL);
    agg("mean", &g, 0, 0, mean, NULL, NULL);
    double em = 0, ea = 0;
    for (size_t j = 0; j < 512; j++) {
        double base = g.rows[15][j]; /* an honest row: base + noise */
        em = fmax(em, fabs(med[j] - base));
        ea = fmax(ea, fabs(mean[j] - base));
    }
    assert_true(em < 0.25);
    assert_true(ea > 10);
    free(med), free(mean);
    drop(&g);
}

static void test_mean_and_sign(void **state)
{
    (void)state;
    find_isas();
    grads g = make(5, 3001, 0, 0);
    float *out = malloc(3001 * sizeof(float));
    for (int k = 0; k < nisas; k++) {
        agg("mean", &g, 0, isas[k], out, NULL, NULL);
        for (size_t j = 0; j < 3001; j++) {
            double s = 0;
            for (size_t i = 0; i < 5; i++)
                s += g.rows[i][j];
            assert_true(out[j] == (float)(s / 5.0));
        }
    }
    /* sign vote: rows +1, +1, -1 -> +1; a tie of one + and one - with zeros -> 0 */
    float r0[3] = {1, 2, -1}, r1[3] = {3, -2, 0}, r2[3] = {-1, 5, 0};
    const float *rows[3] = {r0, r1, r2};
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.isa = isas[k]};
        assert_int_equal(dpas_aggregate(rule("sign_majority"), rows, 3, 3, &o, out, NULL, NULL, NULL), 0);
        assert_true(out[0] == 1.0f && out[1] == 1.0f && out[2] == -1.0f);
    }
    free(out);
    drop(&g);
}

/* Krum by the book, distances in double. */
static size_t ref_krum_scores(const grads *g, size_t f, size_t drop_, double *scores)
{
    size_t n = g->n, k = n - f - drop_, best = 0;
    double *dist = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        size_t m = 0;
        for (size_t j = 0; j < n; j++) {
            if (j == i)
                continue;
            double s = 0;
            for (size_t t = 0; t < g->d; t++) {
                double e = (double)g->rows[i][t] - g->rows[j][t];
                s += e * e;
            }
            dist[m++] = s;
        }
        qsort(dist, m, sizeof(double), cmpd);
        scores[i] = 0;
        for (size_t t = 0; t < k; t++)
            scores[i] += dist[t];
        if (scores[i] < scores[best])
            best = i;
    }
    free(dist);
    return best;
}

/* The mean in double of the rows with chosen[i], in index order. */
static void ref_mean_of(const grads *g, const int *chosen, float *out)
{
    for (size_t j = 0; j < g->d; j++) {
        double s = 0;
        size_t m = 0;
        for (size_t i = 0; i < g->n; i++)
            if (chosen[i])
                s += g->rows[i][j], m++;
        out[j] = (float)(s / (double)m);
    }
}

static void test_krum(void **state)
{
    (void)state;
    find_isas();
    size_t n = 11, f = 4, d = 777;
    grads g = make(n, d, f, 3.0f);
    double scores[11];
    size_t best = ref_krum_scores(&g, f, 2, scores);
    assert_true(best >= f); /* an honest row */
    float *out = malloc(d * sizeof(float));
    int64_t sel[11];
    size_t nsel;
    for (int k = 0; k < nisas; k++) {
        agg("krum", &g, f, isas[k], out, sel, &nsel);
        assert_int_equal(nsel, 1);
        assert_int_equal(sel[0], best);
        assert_same(out, g.rows[best], d, "krum");
    }
    /* Multi-Krum: the mean of the n - f best-scored, in index order */
    size_t order[11];
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && scores[order[b]] < scores[order[b - 1]]; b--) {
            size_t t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    int chosen[11] = {0};
    for (size_t t = 0; t < n - f; t++)
        chosen[order[t]] = 1;
    for (size_t i = 0; i < f; i++)
        assert_false(chosen[i]); /* no adversarial row among them */
    float *ref = malloc(d * sizeof(float));
    ref_mean_of(&g, chosen, ref);
    for (int k = 0; k < nisas; k++) {
        agg("multi_krum", &g, f, isas[k], out, sel, &nsel);
        assert_int_equal(nsel, n - f);
        for (size_t t = 0; t < nsel; t++)
            assert_int_equal(sel[t], order[t]); /* best first */
        assert_same(out, ref, d, "multi_krum");
    }
    free(out), free(ref);
    drop(&g);
}

static void test_bulyan(void **state)
{
    (void)state;
    find_isas();
    size_t n = 15, f = 3, d = 403; /* n >= 4f + 3 */
    grads g = make(n, d, f, 4.0f);
    float *out = malloc(d * sizeof(float)), *out2 = malloc(d * sizeof(float));
    int64_t sel[15];
    size_t nsel;
    agg("bulyan", &g, f, 0, out, sel, &nsel);
    assert_int_equal(nsel, n - 2 * f);
    /* The first selections are honest; the last, among 2f + 1 remaining rows with k = f - 1
     * neighbours, may take a colluding adversarial row: phase 2 trims it. */
    for (size_t t = 0; t < nsel - f; t++)
        assert_true(sel[t] >= (int64_t)f);
    /* phase 2 by hand: per coordinate the n - 4f selected values closest to their median */
    grads s = {nsel, d, NULL, malloc(nsel * sizeof(float *))};
    int64_t idx[15];
    memcpy(idx, sel, nsel * sizeof(int64_t));
    for (size_t a = 1; a < nsel; a++)
        for (size_t b = a; b > 0 && idx[b] < idx[b - 1]; b--) {
            int64_t t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    for (size_t t = 0; t < nsel; t++)
        s.rows[t] = g.rows[idx[t]];
    float *ref = malloc(d * sizeof(float));
    ref_columns(&s, "meamed", 2 * f, ref); /* window of nsel - 2f values */
    assert_same(out, ref, d, "bulyan");
    for (size_t j = 0; j < d; j++) /* within the honest noise (0.1) of an honest row */
        assert_true(fabsf(out[j] - g.rows[n - 1][j]) < 0.25f);
    for (int k = 0; k < nisas; k++) {
        agg("bulyan", &g, f, isas[k], out2, NULL, NULL);
        assert_same(out2, out, d, "bulyan on another instruction set");
    }
    free(s.rows), free(out), free(out2), free(ref);
    drop(&g);
}

static void test_distributed_pieces(void **state)
{
    (void)state;
    /* Distances summed over two shards, then selection and aggregation of each shard, give the
     * single-process result: what dpas-measure's sharded_distance schedule does. */
    size_t n = 9, f = 2, d = 1000, half = 500;
    grads g = make(n, d, f, 2.0f);
    const float *left[9], *right[9];
    for (size_t i = 0; i < n; i++)
        left[i] = g.rows[i], right[i] = g.rows[i] + half;
    double D[81] = {0};
    dpas_pairwise_sqdist_add(left, n, half, D);
    dpas_pairwise_sqdist_add(right, n, d - half, D);
    dpas_agg_opts o = {.f = (int64_t)f};
    int64_t sel[9];
    size_t nsel;
    const char *names[] = {"krum", "multi_krum", "bulyan", "brute"};
    float *whole = malloc(d * sizeof(float)), *parts = malloc(d * sizeof(float));
    for (int r = 0; r < 4; r++) {
        o.f = !strcmp(names[r], "bulyan") ? 1 : (int64_t)f; /* 9 >= 4 x 1 + 3 */
        assert_int_equal(dpas_select(rule(names[r]), D, n, &o, sel, &nsel, NULL), 0);
        assert_int_equal(dpas_aggregate_selected(rule(names[r]), left, n, half, &o, sel, nsel, parts, NULL), 0);
        assert_int_equal(dpas_aggregate_selected(rule(names[r]), right, n, d - half, &o, sel, nsel,
                                                 parts + half, NULL), 0);
        assert_int_equal(dpas_aggregate(rule(names[r]), g.rows, n, d, &o, whole, NULL, NULL, NULL), 0);
        assert_same(parts, whole, d, names[r]);
    }
    /* a NaN row: its distances are NaN in every shard, dpas_select excludes it and counts it
     * against f, and the pieces still agree with the whole */
    g.data[4 * d + 700] = NAN;
    memset(D, 0, sizeof D);
    dpas_pairwise_sqdist_add(left, n, half, D);
    dpas_pairwise_sqdist_add(right, n, d - half, D);
    for (size_t j = 0; j < n; j++)
        if (j != 4)
            assert_true(isnan(D[4 * n + j]) && isnan(D[j * n + 4]));
    for (int r = 0; r < 4; r++) {
        o.f = !strcmp(names[r], "bulyan") ? 1 : (int64_t)f;
        assert_int_equal(dpas_select(rule(names[r]), D, n, &o, sel, &nsel, NULL), 0);
        for (size_t t = 0; t < nsel; t++)
            assert_true(sel[t] != 4);
        assert_int_equal(dpas_aggregate_selected(rule(names[r]), left, n, half, &o, sel, nsel, parts, NULL), 0);
        assert_int_equal(dpas_aggregate_selected(rule(names[r]), right, n, d - half, &o, sel, nsel,
                                                 parts + half, NULL), 0);
        assert_int_equal(dpas_aggregate(rule(names[r]), g.rows, n, d, &o, whole, NULL, NULL, NULL), 0);
        assert_same(parts, whole, d, names[r]);
    }
    /* a D that did not come from distances: a single NaN between two good rows */
    memset(D, 0, sizeof D);
    dpas_pairwise_sqdist_add(g.rows, n, 10, D);
    D[1 * n + 2] = D[2 * n + 1] = NAN;
    dpas_error e = {0};
    o.f = 2;
    assert_int_equal(dpas_select(rule("krum"), D, n, &o, sel, &nsel, &e), DPAS_EINVAL);
    assert_msg_contains(e, "not a matrix of squared distances");
    free(whole), free(parts);
    drop(&g);
}

static void test_centered_clipping(void **state)
{
    (void)state;
    size_t n = 10, f = 3, d = 256;
    grads g = make(n, d, f, 50.0f);
    float *out = malloc(d * sizeof(float));
    dpas_agg_opts o = {.f = (int64_t)f, .iterations = 5};
    assert_int_equal(dpas_aggregate(rule("centered_clipping"), g.rows, n, d, &o, out, NULL, NULL, NULL), 0);
    /* the reference: v0 = median, tau = median distance, 5 clipped steps, in double */
    double *v = malloc(d * sizeof(double)), r[10], tau = 0;
    float *med = malloc(d * sizeof(float));
    ref_columns(&g, "median", 0, med);
    for (size_t j = 0; j < d; j++)
        v[j] = med[j];
    for (int it = 0; it < 5; it++) {
        for (size_t i = 0; i < n; i++) {
            double s = 0;
            for (size_t j = 0; j < d; j++)
                s += (g.rows[i][j] - v[j]) * (g.rows[i][j] - v[j]);
            r[i] = sqrt(s);
        }
        if (it == 0) {
            double t[10];
            memcpy(t, r, sizeof t);
            qsort(t, n, sizeof(double), cmpd);
            tau = 0.5 * (t[4] + t[5]);
        }
        double *step = calloc(d, sizeof(double));
        for (size_t i = 0; i < n; i++) {
            double c = r[i] > tau ? tau / r[i] : 1.0;
            for (size_t j = 0; j < d; j++)
                step[j] += c * (g.rows[i][j] - v[j]);
        }
        for (size_t j = 0; j < d; j++)
            v[j] += step[j] / (double)n;
        free(step);
    }
    for (size_t j = 0; j < d; j++)
        if (fabs(out[j] - v[j]) > 1e-5 * fmax(1.0, fabs(v[j])))
            fail_msg("cc coordinate %zu: %.7g vs %.7g", j, (double)out[j], v[j]);
    free(out), free(v), free(med);
    drop(&g);
}

/* The examples of issue 11, by hand. */
static void test_issue_examples(void **state)
{
    (void)state;
    find_isas();
    float out[64];
    dpas_error e = {0};
    /* n = 5, f = 2, one coordinate 1 2 3 NaN 1e6: the NaN row is Byzantine (f' = 1 of the n' = 4
     * left). median and trimmed mean (2 + 3) / 2; meamed: the 3 values of 1 2 3 1e6 closest to
     * 2.5 are 2, 3 (0.5 away) and 1 (1.5 away): 2. Once the old kernels returned 1e6 for all. */
    float c0[5] = {1, 2, 3, NAN, 1e6f}, c1[5] = {0, 0, 0, 0, 0};
    float r[5][2];
    const float *rows[5];
    for (int i = 0; i < 5; i++)
        r[i][0] = c0[i], r[i][1] = c1[i], rows[i] = r[i];
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.f = 2, .isa = isas[k]};
        assert_int_equal(dpas_aggregate(rule("median"), rows, 5, 2, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == 2.5f && out[1] == 0.0f);
        assert_int_equal(dpas_aggregate(rule("trimmed_mean"), rows, 5, 2, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == 2.5f && out[1] == 0.0f);
        assert_int_equal(dpas_aggregate(rule("meamed"), rows, 5, 2, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == 2.0f && out[1] == 0.0f);
        /* more NaN rows than f: an error that says how many */
        r[1][1] = NAN, r[2][0] = INFINITY;
        assert_int_equal(dpas_aggregate(rule("median"), rows, 5, 2, &o, out, NULL, NULL, &e), DPAS_EINVAL);
        assert_msg_contains(e, "3 gradients have a NaN or Inf coordinate (rows 1, 2, 3): each "
                               "counts as Byzantine, more than the f = 2 given to median");
        r[1][1] = 0, r[2][0] = 3;
    }
    /* overflow: the median of four FLT_MAX, the mean and trimmed mean of FLT_MAX values */
    float m4[4] = {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX};
    const float *rm[4] = {&m4[0], &m4[1], &m4[2], &m4[3]};
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.isa = isas[k]};
        assert_int_equal(dpas_aggregate(rule("median"), rm, 4, 1, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == FLT_MAX);
        assert_int_equal(dpas_aggregate(rule("mean"), rm, 4, 1, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == FLT_MAX);
        o.f = 1;
        assert_int_equal(dpas_aggregate(rule("trimmed_mean"), rm, 4, 1, &o, out, NULL, NULL, &e), 0);
        assert_true(out[0] == FLT_MAX);
    }
    /* Krum near 1e19: honest values within +-1e19, so their squared differences (up to 4e38)
     * overflow a float, and row 0 at 1e21: with float distances every score was +Inf and the
     * lowest index, the outlier, won; in double the honest rows' scores are finite */
    size_t n = 7, d = 64;
    grads g = make(n, d, 0, 0);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++)
            g.data[i * d + j] = i == 0 ? 1e21f : (float)((double)urand() * 1e19);
    int64_t sel[7];
    size_t nsel;
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.f = 2, .isa = isas[k]};
        assert_int_equal(dpas_aggregate(rule("krum"), g.rows, n, d, &o, out, sel, &nsel, &e), 0);
        assert_int_equal(nsel, 1);
        assert_true(sel[0] != 0);
    }
    drop(&g);
    /* centered clipping: a row [NaN, 1e30] is excluded (counted against f), so the result is
     * that of the other rows with f - 1, finite */
    n = 7, d = 2;
    g = make(n, d, 0, 0);
    g.data[0] = NAN, g.data[1] = 1e30f;
    float with[2], without[2];
    dpas_agg_opts o = {.f = 2};
    assert_int_equal(dpas_aggregate(rule("centered_clipping"), g.rows, n, d, &o, with, NULL, NULL, &e), 0);
    o.f = 1;
    assert_int_equal(dpas_aggregate(rule("centered_clipping"), g.rows + 1, n - 1, d, &o, without,
                                    NULL, NULL, &e), 0);
    assert_same(with, without, d, "centered clipping without the NaN row");
    assert_true(fabsf(with[1]) < 2.0f);
    drop(&g);
}

/* Smoothed Weiszfeld against cases whose geometric median is known: in one dimension the
 * median; the centre of a square's corners; the centroid of an equilateral triangle (each by
 * symmetry); and against a far Byzantine row. */
static void test_geometric_median(void **state)
{
    (void)state;
    find_isas();
    dpas_error e = {0};
    float out[3];
    float v1[5] = {0, 1, 10, 2, 1000};
    const float *r1[5] = {&v1[0], &v1[1], &v1[2], &v1[3], &v1[4]};
    float sq[4][2] = {{0, 0}, {2, 0}, {0, 2}, {2, 2}};
    const float *r2[4] = {sq[0], sq[1], sq[2], sq[3]};
    float tri[3][2] = {{0, 0}, {2, 0}, {1, 1.7320508f}};
    const float *r3[3] = {tri[0], tri[1], tri[2]};
    for (int k = 0; k < nisas; k++) {
        dpas_agg_opts o = {.f = 2, .isa = isas[k]};
        assert_int_equal(dpas_aggregate(rule("geometric_median"), r1, 5, 1, &o, out, NULL, NULL, &e), 0);
        assert_true(fabs(out[0] - 2.0) < 1e-4); /* the median of 0 1 2 10 1000 */
        o.f = 1;
        assert_int_equal(dpas_aggregate(rule("geometric_median"), r2, 4, 2, &o, out, NULL, NULL, &e), 0);
        assert_true(fabs(out[0] - 1.0) < 1e-5 && fabs(out[1] - 1.0) < 1e-5);
        assert_int_equal(dpas_aggregate(rule("geometric_median"), r3, 3, 2, &o, out, NULL, NULL, &e), 0);
        assert_true(fabs(out[0] - 1.0) < 1e-4 && fabs(out[1] - 1.7320508 / 3) < 1e-4);
    }
    /* the bound with a Byzantine row at 1e30: ||out - mean_H|| <= 2(n-f)/(n-2f) max ||x_i - mean_H|| */
    size_t n = 9, f = 4, d = 50;
    grads g = make(n, d, f, 0);
    for (size_t i = 0; i < f; i++)
        for (size_t j = 0; j < d; j++)
            g.data[i * d + j] = 1e30f;
    float *o50 = malloc(d * sizeof(float));
    dpas_agg_opts o = {.f = (int64_t)f};
    assert_int_equal(dpas_aggregate(rule("geometric_median"), g.rows, n, d, &o, o50, NULL, NULL, &e), 0);
    double dist = 0, rmax = 0;
    for (size_t j = 0; j < d; j++) {
        double mu = 0;
        for (size_t i = f; i < n; i++)
            mu += g.rows[i][j];
        mu /= (double)(n - f);
        dist += (o50[j] - mu) * (o50[j] - mu);
    }
    for (size_t i = f; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < d; j++) {
            double mu = 0;
            for (size_t t = f; t < n; t++)
                mu += g.rows[t][j];
            mu /= (double)(n - f);
            s += (g.rows[i][j] - mu) * (g.rows[i][j] - mu);
        }
        rmax = fmax(rmax, sqrt(s));
    }
    assert_true(sqrt(dist) <= 2.0 * (double)(n - f) / (double)(n - 2 * f) * rmax);
    free(o50);
    drop(&g);
}

/* Brute (MDA) against an exhaustive search written here (every subset of n - f by bitmask). */
static void test_brute(void **state)
{
    (void)state;
    size_t n = 10, f = 3, d = 33;
    grads g = make(n, d, f, 2.0f);
    double D[100];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t t = 0; t < d; t++)
                s += ((double)g.rows[i][t] - g.rows[j][t]) * ((double)g.rows[i][t] - g.rows[j][t]);
            D[i * n + j] = s;
        }
    double best = INFINITY;
    unsigned bestmask = 0;
    /* lexicographic order of the index sets: the first of least diameter; compared by index
     * list, since bitmask order is not lexicographic */
    for (unsigned mask = 0; mask < (1u << n); mask++) {
        if ((size_t)__builtin_popcount(mask) != n - f)
            continue;
        double diam = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if ((mask >> i & 1) && (mask >> j & 1))
                    diam = fmax(diam, D[i * n + j]);
        int earlier = 0;
        if (diam == best) { /* the lexicographically smaller set wins the tie */
            for (size_t i = 0; i < n; i++)
                if ((mask >> i & 1) != (bestmask >> i & 1)) {
                    earlier = mask >> i & 1;
                    break;
                }
        }
        if (diam < best || earlier)
            best = diam, bestmask = mask;
    }
    int chosen[10] = {0};
    for (size_t i = 0; i < n; i++)
        chosen[i] = bestmask >> i & 1;
    float *ref = malloc(d * sizeof(float)), *out = malloc(d * sizeof(float));
    ref_mean_of(&g, chosen, ref);
    int64_t sel[10];
    size_t nsel;
    agg("brute", &g, f, 0, out, sel, &nsel);
    assert_int_equal(nsel, n - f);
    for (size_t t = 0; t < nsel; t++) {
        assert_true(chosen[sel[t]]);
        if (t)
            assert_true(sel[t] > sel[t - 1]); /* ascending */
    }
    assert_same(out, ref, d, "brute");
    /* ties: four equal rows and one far: every subset of 3 of the equal ones has diameter 0,
     * the first in lexicographic order is {0, 1, 2} */
    float e4[5] = {1, 1, 1, 1, 9};
    const float *r4[5] = {&e4[0], &e4[1], &e4[2], &e4[3], &e4[4]};
    dpas_agg_opts o = {.f = 2};
    assert_int_equal(dpas_aggregate(rule("brute"), r4, 5, 1, &o, out, sel, &nsel, NULL), 0);
    assert_int_equal(nsel, 3);
    assert_true(sel[0] == 0 && sel[1] == 1 && sel[2] == 2);
    /* the cap: C(40, 19) is about 1.3e11 subsets */
    grads big = make(40, 4, 0, 0);
    dpas_error e = {0};
    o.f = 19;
    assert_int_equal(dpas_aggregate(rule("brute"), big.rows, 40, 4, &o, out, NULL, NULL, &e), DPAS_EINVAL);
    assert_msg_contains(e, "brute (MDA) would examine C(40, 19) subsets, more than its cap of 10000000");
    drop(&big);
    free(ref), free(out);
    drop(&g);
}

/* NNM: ByzFL's documented example (byzfl.NNM(1) on [[1,2,3],[4,5,6],[7,8,9]] gives
 * [[2.5,3.5,4.5],[2.5,3.5,4.5],[5.5,6.5,7.5]]); then composed with the median. */
static void test_nnm(void **state)
{
    (void)state;
    float x[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, y[3][3];
    const float *rows[3] = {x[0], x[1], x[2]};
    float *outs[3] = {y[0], y[1], y[2]};
    dpas_agg_opts o = {.f = 1};
    dpas_error e = {0};
    assert_int_equal(dpas_nnm(rows, 3, 3, &o, outs, &e), 0);
    static const float want[3][3] = {{2.5f, 3.5f, 4.5f}, {2.5f, 3.5f, 4.5f}, {5.5f, 6.5f, 7.5f}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_true(y[i][j] == want[i][j]);
    /* the median of the mixed rows: 2.5 3.5 4.5 */
    float out[3];
    o.nnm = 1;
    assert_int_equal(dpas_aggregate(rule("median"), rows, 3, 3, &o, out, NULL, NULL, &e), 0);
    assert_true(out[0] == 2.5f && out[1] == 3.5f && out[2] == 4.5f);
    /* a NaN row is excluded before mixing (f' = 0: every row mixes both finite rows), and comes
     * out of dpas_nnm as NaN */
    x[2][1] = NAN;
    o.nnm = 0;
    assert_int_equal(dpas_nnm(rows, 3, 3, &o, outs, &e), 0);
    assert_true(y[0][0] == 2.5f && y[1][2] == 4.5f && isnan(y[2][0]));
    /* nnm is not a rule of its own */
    assert_int_equal(dpas_aggregate(rule("nnm"), rows, 3, 3, &o, out, NULL, NULL, &e), DPAS_EINVAL);
    assert_msg_contains(e, "nnm is a pre-aggregation, not a rule");
}

/* Attacks by hand on two honest rows (1, 2) and (3, 4): mu = (2, 3), sigma = sqrt 2 (h - 1 = 1);
 * ALIE's z for n = 3, f = 1: s = floor(3/2 + 1) - 1 = 1, z = Phi^-1(2/3) = 0.43072729929545733
 * and for the paper's n = 50, f = 24: s = 2, z = Phi^-1(0.96) = 1.7506860712521695 (both from
 * Python's statistics.NormalDist().inv_cdf). */
static void test_attacks(void **state)
{
    (void)state;
    float h0[2] = {1, 2}, h1[2] = {3, 4}, b0[2], b1[2];
    const float *honest[2] = {h0, h1};
    float *out[2] = {b0, b1};
    const dpas_attack *a;
    dpas_error e = {0};
    double z;
    assert_int_equal(dpas_attack_find("sign_flip", &a, &e), 0);
    assert_int_equal(dpas_attack_rows(a, honest, 2, 2, 2, NULL, out, &e), 0);
    assert_true(b0[0] == -2 && b0[1] == -3 && b1[0] == -2 && b1[1] == -3);
    dpas_attack_opts p = {.value = {4}, .given = 1};
    assert_int_equal(dpas_attack_rows(a, honest, 2, 2, 1, &p, out, &e), 0);
    assert_true(b0[0] == -8 && b0[1] == -12);
    assert_int_equal(dpas_attack_find("ipm", &a, &e), 0);
    assert_int_equal(dpas_attack_rows(a, honest, 2, 2, 1, NULL, out, &e), 0);
    assert_true(b0[0] == -4 && b0[1] == -6); /* epsilon 2 */
    p.value[0] = 0.5;
    assert_int_equal(dpas_attack_rows(a, honest, 2, 2, 1, &p, out, &e), 0);
    assert_true(b0[0] == -1 && b0[1] == -1.5);
    assert_int_equal(dpas_attack_find("alie", &a, &e), 0);
    assert_int_equal(dpas_attack_default(a, 2, 1, &z, &e), 0);
    assert_true(fabs(z - 0.43072729929545733) < 1e-12);
    assert_int_equal(dpas_attack_default(a, 26, 24, &z, &e), 0);
    assert_true(fabs(z - 1.7506860712521695) < 1e-12);
    assert_int_equal(dpas_attack_rows(a, honest, 2, 2, 1, NULL, out, &e), 0);
    assert_true(b0[0] == (float)(2 + 0.43072729929545733 * sqrt(2.0)));
    assert_true(b0[1] == (float)(3 + 0.43072729929545733 * sqrt(2.0)));
    p.value[0] = -1;
    assert_int_equal(dpas_attack_rows(a, honest, 2, 2, 1, &p, out, &e), 0);
    assert_true(b0[0] == (float)(2 - sqrt(2.0)));
    assert_int_equal(dpas_attack_rows(a, honest, 1, 2, 1, NULL, out, &e), DPAS_EINVAL);
    assert_msg_contains(e, "alie needs at least 2 honest gradients, got 1");
    assert_int_equal(dpas_attack_find("large_value", &a, &e), 0);
    assert_int_equal(dpas_attack_rows(a, honest, 2, 2, 2, NULL, out, &e), 0);
    assert_true(b0[0] == FLT_MAX && b1[1] == FLT_MAX);
    assert_int_equal(dpas_attack_find("nan", &a, &e), 0);
    assert_int_equal(dpas_attack_rows(a, NULL, 0, 2, 2, NULL, out, &e), 0);
    assert_true(isnan(b0[0]) && isnan(b1[1]));
    assert_int_equal(dpas_attack_find("inf", &a, &e), 0);
    p.value[0] = -1;
    assert_int_equal(dpas_attack_rows(a, NULL, 0, 2, 1, &p, out, &e), 0);
    assert_true(b0[0] == -INFINITY && b0[1] == -INFINITY);
    /* a huge sign flip is what would be sent: +-Inf, not undefined behaviour */
    assert_int_equal(dpas_attack_find("sign_flip", &a, &e), 0);
    p.value[0] = 1e300;
    assert_int_equal(dpas_attack_rows(a, honest, 2, 2, 1, &p, out, &e), 0);
    assert_true(b0[0] == -INFINITY);
    assert_int_equal(dpas_attack_find("gauss", &a, &e), DPAS_ENOENT);
    assert_msg_contains(e, "unknown attack \"gauss\"; expected one of sign_flip, ipm, alie, "
                           "large_value, nan, inf, optimal_ipm, optimal_alie, mimic, gaussian");
    assert_int_equal(dpas_attack_count(), DPAS_ATTACK_COUNT);
}

static void test_errors(void **state)
{
    (void)state;
    grads g = make(4, 8, 0, 0);
    float out[8];
    dpas_agg_opts o = {.f = 1};
    dpas_error e = {0};
    /* Krum needs n >= 2f + 3: 4 < 5 */
    assert_int_equal(dpas_aggregate(rule("krum"), g.rows, 4, 8, &o, out, NULL, NULL, &e), DPAS_EINVAL);
    assert_msg_contains(e, "krum (blanchard) needs n >= 2f + 3, got n = 4 and f = 1");
    o.f = 2; /* median needs n > 2f */
    assert_int_equal(dpas_aggregate(rule("median"), g.rows, 4, 8, &o, out, NULL, NULL, &e), DPAS_EINVAL);
    /* nnm now has a kernel, as a pre-aggregation: alone it is an error that says how to use it
     * (this expectation was "no float32 kernel for nnm" before issue 11) */
    assert_int_equal(dpas_aggregate(rule("nnm"), g.rows, 4, 8, NULL, out, NULL, NULL, &e), DPAS_EINVAL);
    assert_msg_contains(e, "nnm is a pre-aggregation, not a rule: set opts.nnm = 1");
    o = (dpas_agg_opts){.threads = 300};
    assert_int_equal(dpas_aggregate(rule("mean"), g.rows, 4, 8, &o, out, NULL, NULL, &e), DPAS_EINVAL);
    assert_msg_contains(e, "threads must be 0 to 256, got 300");
    o = (dpas_agg_opts){.isa = 9};
    assert_int_equal(dpas_aggregate(rule("mean"), g.rows, 4, 8, &o, out, NULL, NULL, &e), DPAS_EINVAL);
    assert_msg_contains(e, "isa must be 0 (auto), 1 (generic), 2 (avx2) or 3 (avx512), got 9");
    o = (dpas_agg_opts){.generic = 1, .isa = DPAS_ISA_AVX2};
    assert_int_equal(dpas_aggregate(rule("mean"), g.rows, 4, 8, &o, out, NULL, NULL, &e), DPAS_EINVAL);
    o = (dpas_agg_opts){.tolerance = -1};
    assert_int_equal(dpas_aggregate(rule("geometric_median"), g.rows, 4, 8, &o, out, NULL, NULL, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "tolerance must be finite and >= 0");
    /* a zeroed dpas_agg_opts and a NULL one mean the defaults */
    o = (dpas_agg_opts){0};
    assert_int_equal(dpas_aggregate(rule("mean"), g.rows, 4, 8, &o, out, NULL, NULL, &e), 0);
    assert_int_equal(dpas_aggregate(rule("mean"), g.rows, 4, 8, NULL, out, NULL, NULL, &e), 0);
    assert_non_null(dpas_kernel_isa());
    assert_true(dpas_kernel_isa_available(DPAS_ISA_GENERIC));
    assert_int_equal(dpas_kernels_sizeof("dpas_agg_opts"), sizeof(dpas_agg_opts));
    drop(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coordinatewise), cmocka_unit_test(test_ties),
        cmocka_unit_test(test_median_robust),  cmocka_unit_test(test_mean_and_sign),
        cmocka_unit_test(test_krum),           cmocka_unit_test(test_bulyan),
        cmocka_unit_test(test_distributed_pieces), cmocka_unit_test(test_centered_clipping),
        cmocka_unit_test(test_issue_examples), cmocka_unit_test(test_geometric_median),
        cmocka_unit_test(test_brute),          cmocka_unit_test(test_nnm),
        cmocka_unit_test(test_attacks),        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
