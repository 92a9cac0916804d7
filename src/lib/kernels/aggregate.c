/* The aggregation entry points: options, the instruction set, the thread helper, and the
 * non-finite policy (a gradient with a NaN or an Inf is Byzantine: excluded and counted against
 * f) around the kernels of kernels_coord.c, kernels_dist.c and kernels_iter.c. */
#include "kernels_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256

/* ---- instruction sets ---- */

#ifdef DPAS__X86
static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
static int have_avx512(void) { return have_avx2() && __builtin_cpu_supports("avx512f"); }
#endif

int dpas_kernel_isa_available(int isa)
{
    switch (isa) {
    case DPAS_ISA_AUTO:
    case DPAS_ISA_GENERIC: return 1;
#ifdef DPAS__X86
    case DPAS_ISA_AVX2: return have_avx2();
    case DPAS_ISA_AVX512: return have_avx512();
#endif
    default: return 0;
    }
}

static const dpas__isa *isa_table(int isa)
{
#ifdef DPAS__X86
    if (isa == DPAS_ISA_AVX512)
        return &dpas__isa_avx512;
    if (isa == DPAS_ISA_AVX2)
        return &dpas__isa_avx2;
#endif
    (void)isa;
    return &dpas__isa_generic;
}

static int best_isa(void)
{
    if (dpas_kernel_isa_available(DPAS_ISA_AVX512))
        return DPAS_ISA_AVX512;
    if (dpas_kernel_isa_available(DPAS_ISA_AVX2))
        return DPAS_ISA_AVX2;
    return DPAS_ISA_GENERIC;
}

const char *dpas_kernel_isa(void) { return isa_table(best_isa())->name; }

int dpas__isa_for(const dpas_agg_opts *o, const dpas__isa **isa, dpas_error *err)
{
    int want = o ? o->isa : DPAS_ISA_AUTO;
    static const char *names[] = {"auto", "generic", "avx2", "avx512"};
    if (want < DPAS_ISA_AUTO || want > DPAS_ISA_AVX512)
        return dpas__fail(err, DPAS_EINVAL, "isa",
                          "isa must be 0 (auto), 1 (generic), 2 (avx2) or 3 (avx512), got %d",
                          want);
    if (o && o->generic) {
        if (want != DPAS_ISA_AUTO && want != DPAS_ISA_GENERIC)
            return dpas__fail(err, DPAS_EINVAL, "isa",
                              "generic = 1 asks for the portable kernels "
                              "but isa names %s",
                              names[want]);
        want = DPAS_ISA_GENERIC;
    }
    if (want == DPAS_ISA_AUTO)
        want = best_isa();
    if (!dpas_kernel_isa_available(want))
        return dpas__fail(err, DPAS_EINVAL, "isa",
                          "isa %s is not available on this CPU (it has %s)", names[want],
                          dpas_kernel_isa());
    *isa = isa_table(want);
    return 0;
}

/* ---- threads ---- */

typedef struct par_thread {
    void (*fn)(void *, size_t);
    void *ctx;
    size_t p0, p1;
    pthread_t tid;
    int started;
} par_thread;

static void *par_main(void *arg)
{
    par_thread *t = arg;
    for (size_t p = t->p0; p < t->p1; p++)
        t->fn(t->ctx, p);
    return NULL;
}

/* Thread t runs the contiguous parts [t P / T, (t + 1) P / T). */
void dpas__parallel(int threads, size_t parts, void (*fn)(void *ctx, size_t part), void *ctx)
{
    size_t nt = threads > 1 ? (size_t)threads : 1;
    if (nt > parts)
        nt = parts;
    if (nt <= 1) {
        for (size_t p = 0; p < parts; p++)
            fn(ctx, p);
        return;
    }
    par_thread t[MAX_THREADS];
    for (size_t i = 0; i < nt; i++)
        t[i] = (par_thread){fn, ctx, parts * i / nt, parts * (i + 1) / nt, (pthread_t){0}, 0};
    for (size_t i = 1; i < nt; i++)
        t[i].started = pthread_create(&t[i].tid, NULL, par_main, &t[i]) == 0;
    par_main(&t[0]);
    for (size_t i = 1; i < nt; i++) {
        if (t[i].started)
            pthread_join(t[i].tid, NULL);
        else
            par_main(&t[i]); /* could not start: its parts run here */
    }
}

/* ---- options ---- */

static int check_opts(const dpas_agg_opts *o, dpas__kenv *env, dpas_error *err)
{
    int rc = dpas__isa_for(o, &env->isa, err);
    if (rc)
        return rc;
    env->threads = 1;
    if (!o)
        return 0;
    if (o->threads < 0 || o->threads > MAX_THREADS)
        return dpas__fail(err, DPAS_EINVAL, "threads", "threads must be 0 to %d, got %d",
                          MAX_THREADS, o->threads);
    env->threads = o->threads > 1 ? o->threads : 1;
    if (o->f < 0)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)o->f);
    if (o->m < 0)
        return dpas__fail(err, DPAS_EINVAL, "m", "m must be >= 0 (0: n - f), got %lld",
                          (long long)o->m);
    if (o->iterations < 0)
        return dpas__fail(err, DPAS_EINVAL, "iterations",
                          "iterations must be >= 0 (0: the "
                          "default), got %lld",
                          (long long)o->iterations);
    if (!(o->tau >= 0) || isinf(o->tau))
        return dpas__fail(err, DPAS_EINVAL, "tau",
                          "tau must be finite and >= 0 (0: adaptive), got %g", o->tau);
    if (!(o->tolerance >= 0) || isinf(o->tolerance))
        return dpas__fail(err, DPAS_EINVAL, "tolerance",
                          "tolerance must be finite and >= 0 (0: 1e-6), got %g", o->tolerance);
    if (!(o->smoothing >= 0) || isinf(o->smoothing))
        return dpas__fail(err, DPAS_EINVAL, "smoothing",
                          "smoothing must be finite and >= 0 (0: 1e-5), got %g", o->smoothing);
    if (o->generic != 0 && o->generic != 1)
        return dpas__fail(err, DPAS_EINVAL, "generic", "generic must be 0 or 1, got %d",
                          o->generic);
    if (o->nnm != 0 && o->nnm != 1)
        return dpas__fail(err, DPAS_EINVAL, "nnm", "nnm must be 0 or 1, got %d", o->nnm);
    return 0;
}

static int check_rule(const dpas_rule *rule, size_t n, int64_t f, dpas_error *err)
{
    if (n < 1)
        return dpas__fail(err, DPAS_EINVAL, "n", "aggregation needs n >= 1 gradients, got %zu", n);
    if (f < 0)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)f);
    if (!dpas_rule_tolerates(rule, (int64_t)n, f))
        return dpas__fail(err, DPAS_EINVAL, "f", "%s (%s) needs %s, got n = %zu and f = %lld",
                          rule->name, rule->convention, rule->condition, n, (long long)f);
    return 0;
}

static int check_rows(const float *const *x, size_t n, size_t d, dpas_error *err)
{
    if (!x)
        return dpas__fail(err, DPAS_EINVAL, "x", "the gradients are NULL");
    for (size_t i = 0; d && i < n; i++)
        if (!x[i])
            return dpas__fail(err, DPAS_EINVAL, "x", "gradient %zu is NULL", i);
    return 0;
}

/* ---- the non-finite policy ---- */

/* k rows are non-finite: fine when k <= f, else the error naming them. */
static int too_many_nonfinite(const unsigned char *bad, size_t n, size_t k, size_t f,
                              const dpas_rule *rule, dpas_error *err)
{
    if (k <= f)
        return 0;
    char list[160] = "";
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 8; i++)
        if (bad[i]) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%zu", shown ? ", " : "", i);
            shown++;
        }
    return dpas__fail(err, DPAS_EINVAL, "x",
                      "%zu gradient%s a NaN or Inf coordinate (row%s %s%s): each counts as "
                      "Byzantine, more than the f = %zu given to %s",
                      k, k == 1 ? " has" : "s have", k == 1 ? "" : "s", list,
                      k > shown ? ", ..." : "", f, rule->name);
}

int dpas_nonfinite_check(const dpas_rule *rule, const unsigned char *bad, size_t n, int64_t f,
                         size_t *k, dpas_error *err)
{
    if (!rule || (n && !bad))
        return dpas__fail(err, DPAS_EINVAL, "x", "the rule or the marks are NULL");
    if (f < 0)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)f);
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += bad[i] != 0;
    if (k)
        *k = count;
    return too_many_nonfinite(bad, n, count, (size_t)f, rule, err);
}

/* The finite rows: rows[0..n') (indices into x) and their pointers. */
typedef struct subset {
    size_t n;
    size_t *idx;
    const float **rows;
} subset;

static int subset_make(const float *const *x, size_t n, const unsigned char *bad, subset *s,
                       dpas_error *err)
{
    s->idx = malloc(n * sizeof *s->idx);
    s->rows = malloc(n * sizeof *s->rows);
    s->n = 0;
    if (!s->idx || !s->rows) {
        free(s->idx), free(s->rows);
        s->idx = NULL, s->rows = NULL;
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (!bad || !bad[i]) {
            s->idx[s->n] = i;
            s->rows[s->n++] = x[i];
        }
    return 0;
}

static void subset_free(subset *s)
{
    free(s->idx), free(s->rows);
    s->idx = NULL, s->rows = NULL;
}

/* ---- coordinate-wise rules ---- */

static int coord_once(const dpas__kenv *env, const dpas_rule *rule, const float *const *x, size_t n,
                      size_t d, size_t f, float *out, int *nonfinite, dpas_error *err)
{
    switch (rule->id) {
    case DPAS_RULE_MEAN: dpas__mean(env, x, NULL, n, d, out, nonfinite); return 0;
    case DPAS_RULE_SIGN_MAJORITY: dpas__sign(env, x, n, d, out, nonfinite); return 0;
    case DPAS_RULE_MEDIAN:
        return dpas__columns(env, x, n, d, DPAS__COL_MEDIAN, 0, out, nonfinite, err);
    case DPAS_RULE_TRIMMED_MEAN:
        return dpas__columns(env, x, n, d, DPAS__COL_TRIM, f, out, nonfinite, err);
    default: /* meamed */
        return dpas__columns(env, x, n, d, DPAS__COL_WINDOW, n - f, out, nonfinite, err);
    }
}

/* Optimistic: the kernel notices a non-finite value on its way; only then are the rows scanned
 * and the rule run again on the finite ones. */
static int coord_rule(const dpas__kenv *env, const dpas_rule *rule, const float *const *x, size_t n,
                      size_t d, size_t f, float *out, dpas_error *err)
{
    int nonfinite = 0;
    int rc = coord_once(env, rule, x, n, d, f, out, &nonfinite, err);
    if (rc || !nonfinite)
        return rc;
    unsigned char *bad = malloc(n);
    if (!bad)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    size_t k = dpas__nonfinite_rows(env, x, n, d, bad);
    subset s = {0, NULL, NULL};
    rc = too_many_nonfinite(bad, n, k, f, rule, err);
    if (!rc && k) /* (with no such row the first result stands) */
        rc = subset_make(x, n, bad, &s, err);
    if (!rc && k)
        rc = coord_once(env, rule, s.rows, s.n, d, f - k, out, &nonfinite, err);
    subset_free(&s);
    free(bad);
    return rc;
}

/* ---- selecting rules ---- */

/* Which rows are non-finite, from D: when a distance is not finite, the rows themselves. */
static int bad_rows_from_D(const dpas__kenv *env, const float *const *x, const double *D, size_t n,
                           size_t d, unsigned char *bad, size_t *k)
{
    for (size_t i = 0; i < n * n; i++)
        if (!isfinite(D[i])) {
            *k = dpas__nonfinite_rows(env, x, n, d, bad);
            return 1;
        }
    memset(bad, 0, n);
    *k = 0;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The aggregate of the selected rows sel[0..nsel) (indices into x): one row as it is, several
 * averaged, bulyan's coordinate phase with a window of w values. */
static int aggregate_rows(const dpas__kenv *env, const dpas_rule *rule, const float *const *x,
                          size_t d, const int64_t *sel, size_t nsel, size_t w, float *out,
                          dpas_error *err)
{
    int64_t *idx = malloc(nsel * sizeof *idx);
    size_t *ri = malloc(nsel * sizeof *ri);
    const float **rows = malloc(nsel * sizeof *rows);
    int rc = 0, nonfinite = 0;
    if (!idx || !ri || !rows) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    memcpy(idx, sel, nsel * sizeof *idx);
    qsort(idx, nsel, sizeof *idx, cmp_i64); /* sums in index order, whatever the selection order */
    for (size_t t = 0; t < nsel; t++) {
        ri[t] = (size_t)idx[t];
        rows[t] = x[idx[t]];
    }
    if (rule->id == DPAS_RULE_BULYAN)
        rc = dpas__columns(env, rows, nsel, d, DPAS__COL_WINDOW, w, out, &nonfinite, err);
    else if (nsel == 1)
        memcpy(out, rows[0], d * sizeof *out);
    else
        dpas__mean(env, x, ri, nsel, d, out, &nonfinite);
    if (!rc && nonfinite)
        rc = dpas__fail(err, DPAS_EINVAL, "selected",
                        "a selected gradient has a NaN or Inf "
                        "coordinate: select from the distances of "
                        "these gradients");
done:
    free(idx), free(ri), free(rows);
    return rc;
}

/* D of the n rows, the rows to exclude, the selection with f' = f - k, its aggregate. */
static int select_rule(const dpas__kenv *env, const dpas_rule *rule, const float *const *x,
                       size_t n, size_t d, size_t f, int64_t m, float *out, int64_t *selected,
                       size_t *nselected, dpas_error *err)
{
    double *D = calloc(n * n, sizeof *D);
    unsigned char *bad = malloc(n);
    int64_t *sel = selected ? selected : malloc(n * sizeof *sel);
    size_t nsel = 0, k = 0;
    int rc = 0;
    if (!D || !bad || !sel) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    rc = dpas__sqdist(env, x, n, d, D, err);
    if (rc)
        goto done;
    bad_rows_from_D(env, x, D, n, d, bad, &k);
    rc = too_many_nonfinite(bad, n, k, f, rule, err);
    if (rc)
        goto done;
    for (size_t i = 0; i < n; i++)
        bad[i] = !bad[i]; /* now: alive */
    rc = dpas__select(rule, D, n, bad, f - k, m, sel, &nsel, err);
    /* bulyan's window: the n' - 4f' of its n' - 2f' selected values closest to their median */
    if (!rc)
        rc = aggregate_rows(env, rule, x, d, sel, nsel,
                            rule->id == DPAS_RULE_BULYAN ? nsel - 2 * (f - k) : 0, out, err);
    if (!rc && nselected)
        *nselected = nsel;
done:
    free(D), free(bad);
    if (!selected)
        free(sel);
    return rc;
}

/* ---- iterative rules ---- */

static int iter_rule(const dpas__kenv *env, const dpas_rule *rule, const float *const *x, size_t n,
                     size_t d, size_t f, const dpas_agg_opts *o, float *out, dpas_error *err)
{
    unsigned char *bad = malloc(n);
    if (!bad)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    size_t k = dpas__nonfinite_rows(env, x, n, d, bad);
    subset s = {0, NULL, NULL};
    int rc = too_many_nonfinite(bad, n, k, f, rule, err);
    if (!rc)
        rc = subset_make(x, n, bad, &s, err);
    if (!rc)
        rc = rule->id == DPAS_RULE_GEOMETRIC_MEDIAN
                 ? dpas__geomed(env, s.rows, s.n, d, o, out, err)
                 : dpas__centered_clipping(env, s.rows, s.n, d, o, out, err);
    subset_free(&s);
    free(bad);
    return rc;
}

/* ---- the entry points ---- */

static int aggregate_plain(const dpas__kenv *env, const dpas_rule *rule, const float *const *x,
                           size_t n, size_t d, size_t f, const dpas_agg_opts *o, float *out,
                           int64_t *selected, size_t *nselected, dpas_error *err)
{
    switch (rule->id) {
    case DPAS_RULE_MEAN:
    case DPAS_RULE_MEDIAN:
    case DPAS_RULE_TRIMMED_MEAN:
    case DPAS_RULE_MEAMED:
    case DPAS_RULE_SIGN_MAJORITY: return coord_rule(env, rule, x, n, d, f, out, err);
    case DPAS_RULE_KRUM:
    case DPAS_RULE_MULTI_KRUM:
    case DPAS_RULE_BULYAN:
    case DPAS_RULE_BRUTE:
        return select_rule(env, rule, x, n, d, f, o ? o->m : 0, out, selected, nselected, err);
    case DPAS_RULE_GEOMETRIC_MEDIAN:
    case DPAS_RULE_CENTERED_CLIPPING: return iter_rule(env, rule, x, n, d, f, o, out, err);
    case DPAS_RULE_NNM:
        return dpas__fail(err, DPAS_EINVAL, "rule",
                          "nnm is a pre-aggregation, not a rule: set opts.nnm = 1 with the rule "
                          "to run on the mixed gradients, or call dpas_nnm");
    case DPAS_RULE_COUNT: break;
    }
    return dpas__fail(err, DPAS_EINVAL, "rule", "no float32 kernel for %s", rule->name);
}

/* The finite rows mixed by NNM (f' = f - k), as rows of their own. */
static int nnm_rows(const dpas__kenv *env, const dpas_rule *rule, const float *const *x, size_t n,
                    size_t d, size_t f, subset *alive, float **mixed, const float ***mrows,
                    size_t *fk, dpas_error *err)
{
    double *D = calloc(n * n, sizeof *D);
    unsigned char *bad = malloc(n);
    size_t k = 0;
    int rc = 0;
    *mixed = NULL, *mrows = NULL;
    if (!D || !bad) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        goto done;
    }
    rc = dpas__sqdist(env, x, n, d, D, err);
    if (rc)
        goto done;
    bad_rows_from_D(env, x, D, n, d, bad, &k);
    rc = too_many_nonfinite(bad, n, k, f, rule, err);
    if (!rc)
        rc = subset_make(x, n, bad, alive, err);
    if (rc)
        goto done;
    size_t bytes;
    if (__builtin_mul_overflow(alive->n, d, &bytes) ||
        __builtin_mul_overflow(bytes, sizeof(float), &bytes)) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory: %zu mixed gradients of %zu floats",
                        alive->n, d);
        goto done;
    }
    *mixed = malloc(bytes ? bytes : 1);
    float **rows = malloc(alive->n * sizeof *rows);
    *mrows = (const float **)rows;
    if (!*mixed || !rows) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory: %zu mixed gradients of %zu floats",
                        alive->n, d);
        goto done;
    }
    for (size_t i = 0; i < alive->n; i++)
        rows[i] = *mixed + i * d;
    for (size_t i = 0; i < n; i++)
        bad[i] = !bad[i];
    rc = dpas__nnm_mix(env, x, n, d, D, bad, f - k, rows, err);
    *fk = f - k;
done:
    free(D), free(bad);
    return rc;
}

int dpas_aggregate(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                   const dpas_agg_opts *o, float *out, int64_t *selected, size_t *nselected,
                   dpas_error *err)
{
    if (nselected)
        *nselected = 0;
    if (!rule || !out)
        return dpas__fail(err, DPAS_EINVAL, "rule", "aggregate needs a rule, rows and an output");
    dpas__kenv env;
    int rc = check_rows(x, n, d, err);
    if (!rc)
        rc = check_opts(o, &env, err);
    if (!rc)
        rc = check_rule(rule, n, o ? o->f : 0, err);
    if (rc)
        return rc;
    const size_t f = (size_t)(o ? o->f : 0);
    if (!(o && o->nnm))
        return aggregate_plain(&env, rule, x, n, d, f, o, out, selected, nselected, err);
    if (rule->id == DPAS_RULE_NNM)
        return dpas__fail(err, DPAS_EINVAL, "rule",
                          "nnm with opts.nnm = 1: name the rule to run "
                          "on the mixed gradients");
    subset alive = {0, NULL, NULL};
    float *mixed = NULL;
    const float **mrows = NULL;
    size_t fk = 0;
    rc = nnm_rows(&env, rule, x, n, d, f, &alive, &mixed, &mrows, &fk, err);
    if (!rc) {
        int64_t *sel = selected ? malloc(alive.n * sizeof *sel) : NULL;
        size_t nsel = 0;
        if (selected && !sel)
            rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        else
            rc = aggregate_plain(&env, rule, mrows, alive.n, d, fk, o, out, sel, &nsel, err);
        if (!rc && selected) { /* back to the caller's indices */
            for (size_t t = 0; t < nsel; t++)
                selected[t] = (int64_t)alive.idx[sel[t]];
            if (nselected)
                *nselected = nsel;
        }
        free(sel);
    }
    subset_free(&alive);
    free(mixed);
    free((void *)mrows);
    return rc;
}

int dpas_nnm(const float *const *x, size_t n, size_t d, const dpas_agg_opts *o, float *const *out,
             dpas_error *err)
{
    const dpas_rule *nnm;
    dpas__kenv env;
    int rc = dpas_rule_find("nnm", NULL, &nnm, err);
    if (!rc)
        rc = check_rows(x, n, d, err);
    if (!rc && !out)
        rc = dpas__fail(err, DPAS_EINVAL, "out", "dpas_nnm needs n output rows");
    if (!rc)
        rc = check_opts(o, &env, err);
    if (!rc)
        rc = check_rule(nnm, n, o ? o->f : 0, err);
    if (rc)
        return rc;
    subset alive = {0, NULL, NULL};
    float *mixed = NULL;
    const float **mrows = NULL;
    size_t fk = 0;
    rc = nnm_rows(&env, nnm, x, n, d, (size_t)(o ? o->f : 0), &alive, &mixed, &mrows, &fk, err);
    if (!rc) {
        size_t t = 0;
        for (size_t i = 0; i < n; i++) {
            if (t < alive.n && alive.idx[t] == i)
                memcpy(out[i], mrows[t++], d * sizeof(float));
            else
                for (size_t j = 0; j < d; j++)
                    out[i][j] = NAN;
        }
    }
    subset_free(&alive);
    free(mixed);
    free((void *)mrows);
    return rc;
}

void dpas_pairwise_sqdist_add(const float *const *x, size_t n, size_t d, double *D)
{
    dpas__kenv env = {isa_table(best_isa()), 1};
    dpas__sqdist(&env, x, n, d, D, NULL);
}

/* Rows of D whose distances to every other row are non-finite are the non-finite rows; any
 * other non-finite entry means D did not come from dpas_pairwise_sqdist_add. */
int dpas_select(const dpas_rule *rule, const double *D, size_t n, const dpas_agg_opts *o,
                int64_t *selected, size_t *nselected, dpas_error *err)
{
    if (nselected)
        *nselected = 0;
    if (!rule || !D || !selected || !nselected)
        return dpas__fail(err, DPAS_EINVAL, "rule", "select needs a rule, D and outputs");
    dpas__kenv env;
    int rc = check_opts(o, &env, err);
    if (!rc)
        rc = check_rule(rule, n, o ? o->f : 0, err);
    if (rc)
        return rc;
    if (o && o->nnm)
        return dpas__fail(err, DPAS_EINVAL, "nnm",
                          "nnm mixes the gradients themselves: "
                          "dpas_select cannot apply it to D; use "
                          "dpas_aggregate");
    const size_t f = (size_t)(o ? o->f : 0);
    unsigned char *bad = calloc(n, 1);
    if (!bad)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n && n > 1; i++) {
        size_t nf = 0;
        for (size_t j = 0; j < n; j++)
            nf += j != i && !isfinite(D[i * n + j]);
        bad[i] = nf == n - 1;
        k += bad[i];
    }
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t j = 0; j < n && !rc; j++)
            if (!bad[i] && !bad[j] && !isfinite(D[i * n + j]))
                rc = dpas__fail(err, DPAS_EINVAL, "D",
                                "D[%zu][%zu] is not finite but rows %zu and %zu have finite "
                                "distances to others: not a matrix of squared distances",
                                i, j, i, j);
    if (!rc)
        rc = too_many_nonfinite(bad, n, k, f, rule, err);
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            bad[i] = !bad[i];
        rc = dpas__select(rule, D, n, bad, f - k, o ? o->m : 0, selected, nselected, err);
    }
    free(bad);
    return rc;
}

int dpas_aggregate_selected(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, const int64_t *selected, size_t nsel,
                            float *out, dpas_error *err)
{
    if (!rule || !out || !selected)
        return dpas__fail(err, DPAS_EINVAL, "rule",
                          "aggregate_selected needs a rule, a selection "
                          "and an output");
    if (!nsel || nsel > n)
        return dpas__fail(err, DPAS_EINVAL, "selected", "a selection needs 1 to n indices, got %zu",
                          nsel);
    dpas__kenv env;
    int rc = check_rows(x, n, d, err);
    if (!rc)
        rc = check_opts(o, &env, err);
    if (rc)
        return rc;
    int64_t *idx = malloc(nsel * sizeof *idx);
    if (!idx)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    memcpy(idx, selected, nsel * sizeof *idx);
    qsort(idx, nsel, sizeof *idx, cmp_i64);
    for (size_t t = 0; t < nsel && !rc; t++)
        if (idx[t] < 0 || (size_t)idx[t] >= n || (t && idx[t] == idx[t - 1]))
            rc = dpas__fail(err, DPAS_EINVAL, "selected",
                            "selection index %lld is out of range or repeated", (long long)idx[t]);
    free(idx);
    if (rc)
        return rc;
    size_t w = 0;
    if (rule->id == DPAS_RULE_BULYAN) {
        /* dpas_select took n - 2f' rows with f' = f - k: the k rows it excluded are
         * nsel - (n - 2f), and the window is nsel - 2f' */
        int64_t f = o ? o->f : 0, k = (int64_t)nsel - ((int64_t)n - 2 * f);
        if (k < 0 || k > f)
            return dpas__fail(err, DPAS_EINVAL, "selected",
                              "bulyan selects n - 2f = %lld of n = %zu gradients (more when "
                              "non-finite ones were excluded), got %zu",
                              (long long)((int64_t)n - 2 * f), n, nsel);
        w = nsel - 2 * (size_t)(f - k);
    } else if (rule->id != DPAS_RULE_KRUM && rule->id != DPAS_RULE_MULTI_KRUM &&
               rule->id != DPAS_RULE_BRUTE) {
        return dpas__fail(err, DPAS_EINVAL, "rule",
                          "%s selects nothing: only krum, multi_krum, "
                          "bulyan and brute select",
                          rule->name);
    }
    return aggregate_rows(&env, rule, x, d, selected, nsel, w, out, err);
}

size_t dpas_kernels_sizeof(const char *t)
{
    if (t && !strcmp(t, "dpas_agg_opts"))
        return sizeof(dpas_agg_opts);
    if (t && !strcmp(t, "dpas_attack_opts"))
        return sizeof(dpas_attack_opts);
    if (t && !strcmp(t, "dpas_attack"))
        return sizeof(dpas_attack);
    return 0;
}
