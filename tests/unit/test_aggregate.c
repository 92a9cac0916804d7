/* Aggregation kernels against plain reference implementations written here (qsort per
 * coordinate, distances in double), on random and adversarial inputs, through both the AVX2 and
 * the portable paths. */
#include "check.h"

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

/* The references, one coordinate at a time on a sorted copy. */
static void ref_columns(const grads *g, const char *rule, size_t f, float *out)
{
    float *v = malloc(g->n * sizeof(float));
    size_t n = g->n;
    for (size_t j = 0; j < g->d; j++) {
        for (size_t i = 0; i < n; i++)
            v[i] = g->rows[i][j];
        qsort(v, n, sizeof(float), cmpf);
        float med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) * 0.5f;
        if (!strcmp(rule, "median")) {
            out[j] = med;
        } else if (!strcmp(rule, "trimmed_mean")) {
            float s = 0;
            for (size_t k = f; k < n - f; k++)
                s += v[k];
            out[j] = s / (float)(n - 2 * f);
        } else { /* meamed: the n - f values closest to the median, a run of the sorted values */
            size_t w = n - f, best_s = 0;
            float best = INFINITY;
            for (size_t s = 0; s + w <= n; s++) {
                float a = med - v[s], b = v[s + w - 1] - med, c = a > b ? a : b;
                if (c < best)
                    best = c, best_s = s;
            }
            float s = 0;
            for (size_t k = best_s; k < best_s + w; k++)
                s += v[k];
            out[j] = s / (float)w;
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

static void agg(const char *name, const grads *g, size_t f, int generic, float *out, int64_t *sel,
                size_t *nsel)
{
    dpas_agg_opts o = {.f = (int64_t)f, .generic = generic};
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

static void test_coordinatewise(void **state)
{
    (void)state;
    static const size_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 64, 65};
    static const char *rules[] = {"median", "trimmed_mean", "meamed"};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        size_t n = ns[a], d = 1000 + a; /* not a multiple of 8: the tail runs the portable path */
        size_t f = (n - 1) / 2;
        grads g = make(n, d, f, 5.0f);
        float *ref = malloc(d * sizeof(float)), *v1 = malloc(d * sizeof(float)),
              *v2 = malloc(d * sizeof(float));
        for (size_t r = 0; r < 3; r++) {
            for (size_t ff = 0; ff <= f; ff += f ? f : 1) {
                ref_columns(&g, rules[r], ff, ref);
                agg(rules[r], &g, ff, 0, v1, NULL, NULL);
                agg(rules[r], &g, ff, 1, v2, NULL, NULL);
                assert_same(v1, ref, d, rules[r]);
                assert_same(v2, ref, d, rules[r]);
            }
        }
        free(ref), free(v1), free(v2);
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
    grads g = make(5, 3001, 0, 0);
    float *out = malloc(3001 * sizeof(float));
    agg("mean", &g, 0, 0, out, NULL, NULL);
    for (size_t j = 0; j < 3001; j++) {
        float s = 0;
        for (size_t i = 0; i < 5; i++)
            s += g.rows[i][j];
        assert_true(out[j] == s / 5.0f);
    }
    /* sign vote: rows +1, +1, -1 -> +1; a tie of one + and one - with zeros -> 0 */
    float r0[3] = {1, 2, -1}, r1[3] = {3, -2, 0}, r2[3] = {-1, 5, 0};
    const float *rows[3] = {r0, r1, r2};
    dpas_agg_opts o = {0};
    assert_int_equal(dpas_aggregate(rule("sign_majority"), rows, 3, 3, &o, out, NULL, NULL, NULL), 0);
    assert_true(out[0] == 1.0f && out[1] == 1.0f && out[2] == -1.0f);
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
        for (size_t a = 1; a < m; a++) /* insertion sort */
            for (size_t b = a; b > 0 && dist[b] < dist[b - 1]; b--) {
                double t = dist[b];
                dist[b] = dist[b - 1];
                dist[b - 1] = t;
            }
        scores[i] = 0;
        for (size_t t = 0; t < k; t++)
            scores[i] += dist[t];
        if (scores[i] < scores[best])
            best = i;
    }
    free(dist);
    return best;
}

static void test_krum(void **state)
{
    (void)state;
    size_t n = 11, f = 4, d = 777;
    grads g = make(n, d, f, 3.0f);
    double scores[11];
    size_t best = ref_krum_scores(&g, f, 2, scores);
    assert_true(best >= f); /* an honest row */
    float *out = malloc(d * sizeof(float));
    int64_t sel[11];
    size_t nsel;
    for (int generic = 0; generic < 2; generic++) {
        agg("krum", &g, f, generic, out, sel, &nsel);
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
    for (size_t j = 0; j < d; j++) {
        float s = 0;
        int first = 1;
        for (size_t i = 0; i < n; i++)
            if (chosen[i]) {
                s = first ? g.rows[i][j] : s + g.rows[i][j];
                first = 0;
            }
        ref[j] = s / (float)(n - f);
    }
    agg("multi_krum", &g, f, 0, out, sel, &nsel);
    assert_int_equal(nsel, n - f);
    assert_same(out, ref, d, "multi_krum");
    free(out), free(ref);
    drop(&g);
}

static void test_bulyan(void **state)
{
    (void)state;
    size_t n = 15, f = 3, d = 403; /* n >= 4f + 3 */
    grads g = make(n, d, f, 4.0f);
    float *out = malloc(d * sizeof(float));
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
    float *out2 = malloc(d * sizeof(float));
    agg("bulyan", &g, f, 1, out2, NULL, NULL);
    assert_same(out2, out, d, "bulyan generic");
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
    const char *names[] = {"krum", "multi_krum", "bulyan"};
    float *whole = malloc(d * sizeof(float)), *parts = malloc(d * sizeof(float));
    for (int r = 0; r < 3; r++) {
        if (!strcmp(names[r], "bulyan"))
            o.f = 1; /* 9 >= 4 x 1 + 3 */
        assert_int_equal(dpas_select(rule(names[r]), D, n, &o, sel, &nsel, NULL), 0);
        assert_int_equal(dpas_aggregate_selected(rule(names[r]), left, n, half, &o, sel, nsel, parts, NULL), 0);
        assert_int_equal(dpas_aggregate_selected(rule(names[r]), right, n, d - half, &o, sel, nsel,
                                                 parts + half, NULL), 0);
        dpas_aggregate(rule(names[r]), g.rows, n, d, &o, whole, NULL, NULL, NULL);
        assert_same(parts, whole, d, names[r]);
    }
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
            for (size_t a = 1; a < n; a++)
                for (size_t b = a; b > 0 && t[b] < t[b - 1]; b--) {
                    double x = t[b];
                    t[b] = t[b - 1];
                    t[b - 1] = x;
                }
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
        if (fabs(out[j] - v[j]) > 1e-4)
            fail_msg("cc coordinate %zu: %.7g vs %.7g", j, (double)out[j], v[j]);
    free(out), free(v), free(med);
    drop(&g);
}

static void test_nan_inf(void **state)
{
    (void)state;
    size_t n = 9, d = 64;
    grads g = make(n, d, 0, 0);
    float *clean = malloc(d * sizeof(float)), *dirty = malloc(d * sizeof(float));
    static const char *rules[] = {"median", "trimmed_mean", "meamed"};
    for (int r = 0; r < 3; r++) {
        agg(rules[r], &g, 2, 0, clean, NULL, NULL);
        float keep = g.data[3 * d + 10], keep2 = g.data[5 * d + 20];
        g.data[3 * d + 10] = NAN;      /* a NaN in coordinate 10 */
        g.data[5 * d + 20] = INFINITY; /* an Inf in coordinate 20 */
        for (int generic = 0; generic < 2; generic++) {
            agg(rules[r], &g, 2, generic, dirty, NULL, NULL);
            for (size_t j = 0; j < d; j++)
                if (j != 10 && j != 20)
                    assert_true(dirty[j] == clean[j]); /* every other coordinate unchanged */
        }
        /* an Inf is one extreme value: the median of coordinate 20 is still finite */
        if (!strcmp(rules[r], "median"))
            assert_true(isfinite(dirty[20]));
        g.data[3 * d + 10] = keep, g.data[5 * d + 20] = keep2;
    }
    /* Krum never prefers the row with a NaN */
    g.data[0] = NAN;
    int64_t sel[9];
    size_t nsel;
    agg("krum", &g, 2, 0, dirty, sel, &nsel);
    assert_true(sel[0] != 0);
    agg("bulyan", &g, 1, 0, dirty, sel, &nsel);
    agg("centered_clipping", &g, 2, 0, dirty, NULL, NULL);
    free(clean), free(dirty);
    drop(&g);
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
    assert_int_equal(dpas_aggregate(rule("nnm"), g.rows, 4, 8, NULL, out, NULL, NULL, &e), DPAS_EINVAL);
    assert_msg_contains(e, "no float32 kernel for nnm");
    assert_non_null(dpas_kernel_isa());
    drop(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coordinatewise), cmocka_unit_test(test_median_robust),
        cmocka_unit_test(test_mean_and_sign),  cmocka_unit_test(test_krum),
        cmocka_unit_test(test_bulyan),         cmocka_unit_test(test_distributed_pieces),
        cmocka_unit_test(test_centered_clipping), cmocka_unit_test(test_nan_inf),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
