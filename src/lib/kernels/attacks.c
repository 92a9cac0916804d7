/* SPDX-License-Identifier: Apache-2.0 */
/* Attacks: what f Byzantine gradients send, made from the honest ones, for the property tests,
 * for dpas-measure and for users (float32 and float64). Means and deviations per coordinate in
 * double; every Byzantine row is the same vector. */
#include "kernels_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH "evals", "start", "delta", "ratio"
static const dpas_attack attacks[] = {
    {DPAS_ATTACK_SIGN_FLIP,
     "sign_flip",
     "scale",
     "ByzFL's SignFlipping (after Allen-Zhu et al., ICLR 2021)",
     "every Byzantine row is -scale x the honest mean (scale 1); with scale = epsilon it is IPM",
     {"scale", NULL}},
    {DPAS_ATTACK_IPM,
     "ipm",
     "epsilon",
     "Xie, Koyejo and Gupta, Fall of Empires: inner product manipulation, UAI 2019; default "
     "epsilon 2 as ByzFL's tau",
     "every Byzantine row is -epsilon x the honest mean",
     {"epsilon", NULL}},
    {DPAS_ATTACK_ALIE,
     "alie",
     "z",
     "Baruch, Baruch and Goldberg, A Little Is Enough, NeurIPS 2019",
     "every Byzantine row is mu + z sigma per coordinate (sigma with h - 1); z defaults to "
     "Phi^-1((n - s) / n), s = floor(n / 2 + 1) - f, n = h + f",
     {"z", NULL}},
    {DPAS_ATTACK_LARGE_VALUE,
     "large_value",
     "value",
     "dpas (a plain extreme value)",
     "every coordinate is value (the largest finite value of the type)",
     {"value", NULL}},
    {DPAS_ATTACK_NAN,
     "nan",
     NULL,
     "dpas (a non-finite gradient)",
     "every coordinate is NaN",
     {NULL}},
    {DPAS_ATTACK_INF,
     "inf",
     "sign",
     "dpas (a non-finite gradient)",
     "every coordinate is +Inf, or -Inf when sign < 0",
     {"sign", NULL}},
    {DPAS_ATTACK_OPTIMAL_IPM,
     "optimal_ipm",
     "evals",
     "ByzFL's Optimal_InnerProductManipulation (Allouah et al., AISTATS 2023)",
     "ipm with the factor a line search finds most damaging to the rule: the largest distance "
     "of its aggregate from the honest mean in `evals` evaluations (20), from `start` (0) by "
     "steps `delta` (10) doubled, then shrunk by `ratio` (0.8)",
     {SEARCH, NULL}},
    {DPAS_ATTACK_OPTIMAL_ALIE,
     "optimal_alie",
     "evals",
     "ByzFL's Optimal_ALittleIsEnough (Allouah et al., AISTATS 2023)",
     "alie with the factor the same line search finds most damaging to the rule",
     {SEARCH, NULL}},
    {DPAS_ATTACK_MIMIC,
     "mimic",
     "epsilon",
     "Karimireddy, He and Jaggi, ICLR 2022 (bucketing); ByzFL's Mimic",
     "every Byzantine row is a copy of honest row epsilon (0)",
     {"epsilon", NULL}},
    {DPAS_ATTACK_GAUSSIAN,
     "gaussian",
     "mu",
     "ByzFL's Gaussian",
     "one vector drawn from N(mu, sigma^2) per coordinate (0, 1), from the options' seed",
     {"mu", "sigma", NULL}},
};
#define NATTACKS (sizeof attacks / sizeof attacks[0])

size_t dpas_attack_count(void) { return NATTACKS; }
const dpas_attack *dpas_attack_at(size_t i) { return i < NATTACKS ? &attacks[i] : NULL; }

int dpas_attack_find(const char *name, const dpas_attack **out, dpas_error *err)
{
    char q[96], list[240] = "";
    for (size_t i = 0; i < NATTACKS; i++) {
        if (name && !dpas__strcasecmp(name, attacks[i].name)) {
            *out = &attacks[i];
            return 0;
        }
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", attacks[i].name);
    }
    return dpas__fail(err, DPAS_ENOENT, "attack", "unknown attack %s; expected one of %s",
                      dpas__quote(name ? name : "", q, sizeof q), list);
}

/* Phi(z) = erfc(-z / sqrt 2) / 2 is increasing: bisection to the last bit of a double. */
static double normal_quantile(double p)
{
    double lo = -40.0, hi = 40.0;
    for (int i = 0; i < 200 && lo < hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid == lo || mid == hi)
            break;
        if (0.5 * erfc(-mid / sqrt(2.0)) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static size_t nparams(const dpas_attack *a)
{
    size_t k = 0;
    while (k < DPAS_ATTACK_MAX_PARAMETERS && a->parameters[k])
        k++;
    return k;
}

int dpas_attack_parameter_default(const dpas_attack *a, size_t k, size_t h, size_t f,
                                  dpas_dtype dtype, double *value, dpas_error *err)
{
    if (!a || !value)
        return dpas__fail(err, DPAS_EINVAL, "attack",
                          "attack_default needs an attack and an output");
    if (k >= nparams(a))
        return dpas__fail(err, DPAS_EINVAL, "parameter", "%s has %zu parameter%s, not %zu", a->name,
                          nparams(a), nparams(a) == 1 ? "" : "s", k + 1);
    switch (a->id) {
    case DPAS_ATTACK_SIGN_FLIP: *value = 1.0; return 0;
    case DPAS_ATTACK_IPM: *value = 2.0; return 0;
    case DPAS_ATTACK_ALIE: {
        size_t n = h + f;
        /* s: the honest gradients the attackers need on their side for a majority */
        double s = floor((double)n / 2.0 + 1.0) - (double)f, p = ((double)n - s) / (double)n;
        if (!(p > 0.0 && p < 1.0))
            return dpas__fail(err, DPAS_EINVAL, "f",
                              "alie's z = Phi^-1((n - s) / n) needs 0 < n - s < n, got n = %zu, "
                              "f = %zu, s = %.0f",
                              n, f, s);
        *value = normal_quantile(p);
        return 0;
    }
    case DPAS_ATTACK_LARGE_VALUE: *value = dtype == DPAS_FLOAT64 ? DBL_MAX : FLT_MAX; return 0;
    case DPAS_ATTACK_NAN: *value = 0.0; return 0;
    case DPAS_ATTACK_INF: *value = 1.0; return 0;
    case DPAS_ATTACK_OPTIMAL_IPM:
    case DPAS_ATTACK_OPTIMAL_ALIE: {
        static const double search[] = {20.0, 0.0, 10.0, 0.8};
        *value = search[k];
        return 0;
    }
    case DPAS_ATTACK_MIMIC: *value = 0.0; return 0;
    case DPAS_ATTACK_GAUSSIAN: *value = k == 0 ? 0.0 : 1.0; return 0;
    case DPAS_ATTACK_COUNT: break;
    }
    return dpas__fail(err, DPAS_EINVAL, "attack", "unknown attack id %d", (int)a->id);
}

int dpas_attack_default(const dpas_attack *a, size_t h, size_t f, double *value, dpas_error *err)
{
    if (a && !a->parameter && value) {
        *value = 0.0;
        return 0;
    }
    return dpas_attack_parameter_default(a, 0, h, f, DPAS_FLOAT32, value, err);
}

/* ---- the parameters ---- */

typedef struct params {
    double v[DPAS_ATTACK_MAX_PARAMETERS];
} params;

/* The given values or the defaults, each checked. */
static int get_params(const dpas_attack *a, size_t h, size_t f, int dtype,
                      const dpas_attack_opts *o, params *p, dpas_error *err)
{
    size_t np = nparams(a);
    if (o && (o->given >> np))
        return dpas__fail(err, DPAS_EINVAL, "parameter", "%s takes %zu parameter%s, given bits %#x",
                          a->name, np, np == 1 ? "" : "s", o->given);
    for (size_t k = 0; k < np; k++) {
        int rc = 0;
        if (o && (o->given >> k & 1u))
            p->v[k] = o->value[k];
        else if ((rc = dpas_attack_parameter_default(a, k, h, f, dtype, &p->v[k], err)))
            return rc;
        double v = p->v[k];
        const char *name = a->parameters[k];
        if (!isfinite(v) && a->id != DPAS_ATTACK_LARGE_VALUE)
            return dpas__fail(err, DPAS_EINVAL, name, "%s's %s must be finite, got %g", a->name,
                              name, v);
        int whole = v == floor(v);
        if (!strcmp(name, "evals") && (!whole || v < 1 || v > 1e6))
            return dpas__fail(err, DPAS_EINVAL, name,
                              "%s's evals must be a whole number from 1 to 1000000, got %g",
                              a->name, v);
        if (!strcmp(name, "delta") && v == 0)
            return dpas__fail(err, DPAS_EINVAL, name, "%s's delta must not be 0", a->name);
        if (!strcmp(name, "ratio") && !(v > 0.5 && v < 1))
            return dpas__fail(err, DPAS_EINVAL, name,
                              "%s's ratio must lie strictly between 0.5 and 1, got %g", a->name, v);
        if (a->id == DPAS_ATTACK_MIMIC && (!whole || v < 0 || v >= (double)h))
            return dpas__fail(err, DPAS_EINVAL, name,
                              "mimic's epsilon must be a whole number below the %zu honest "
                              "gradients, got %g",
                              h, v);
        if (!strcmp(name, "sigma") && v < 0)
            return dpas__fail(err, DPAS_EINVAL, name, "gaussian's sigma must be >= 0, got %g", v);
    }
    return 0;
}

/* ---- the vectors ---- */

/* x as the element a replica would send: beyond the float range +-Inf (IEEE rounding). */
static void put(int dtype, void *row, size_t j, double x)
{
    if (dtype == DPAS_FLOAT64)
        ((double *)row)[j] = x;
    else
        ((float *)row)[j] = (float)x;
}

static double get(int dtype, const void *row, size_t j)
{
    return dtype == DPAS_FLOAT64 ? ((const double *)row)[j] : (double)((const float *)row)[j];
}

/* mu (and, with sd, sigma with h - 1) of the honest rows, per coordinate, in double */
static void moments(const void *const *honest, int dtype, size_t h, size_t d, double *mu,
                    double *sd)
{
    for (size_t j = 0; j < d; j++) {
        double m = 0.0;
        for (size_t i = 0; i < h; i++)
            m += get(dtype, honest[i], j);
        mu[j] = m / (double)h;
        if (!sd)
            continue;
        double ss = 0.0;
        for (size_t i = 0; i < h; i++) {
            double e = get(dtype, honest[i], j) - mu[j];
            ss += e * e;
        }
        sd[j] = sqrt(ss / (double)(h - 1));
    }
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Box-Muller: two standard normal numbers from two uniform ones, u1 in (0, 1]. */
static void gaussian_row(int dtype, void *row, size_t d, double mu, double sigma, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t j = 0; j < d; j += 2) {
        double u1 = ((double)(splitmix64(&s) >> 11) + 1.0) / 9007199254740992.0;
        double u2 = (double)(splitmix64(&s) >> 11) / 9007199254740992.0;
        double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586 * u2; /* 2 pi */
        put(dtype, row, j, mu + sigma * r * cos(t));
        if (j + 1 < d)
            put(dtype, row, j + 1, mu + sigma * r * sin(t));
    }
}

/* ---- the optimal attacks: ByzFL's line search ---- */

typedef struct search {
    const dpas_attack *a;
    int dtype;
    size_t h, d, f;
    const double *mu, *sd;
    const dpas_rule *rule;
    dpas_agg_opts agg;
    const void **rows; /* the honest rows, then f times the Byzantine one */
    void *byz, *out;
} search;

/* ||rule(honest, f x the row for tau) - mu||, scaled so that no square overflows; -Inf when
 * the row is not finite and the rule, or a pre-aggregation with its own f, could not take f of
 * them (it would refuse the input). */
static int evaluate(search *s, double tau, double *y, dpas_error *err)
{
    int finite = 1;
    for (size_t j = 0; j < s->d; j++) {
        double v =
            s->a->id == DPAS_ATTACK_OPTIMAL_IPM ? -tau * s->mu[j] : s->mu[j] + tau * s->sd[j];
        put(s->dtype, s->byz, j, v);
        finite &= isfinite(get(s->dtype, s->byz, j));
    }
    if (!finite && (int64_t)s->f > s->agg.f) {
        *y = -INFINITY;
        return 0;
    }
    int rc = dpas_aggregate_typed(s->rule, s->rows, s->dtype, s->h + s->f, s->d, &s->agg, s->out,
                                  NULL, NULL, err);
    if (rc == DPAS_EINVAL && !finite) { /* a pre-aggregation's own f could not take them */
        *y = -INFINITY;
        return 0;
    }
    if (rc)
        return rc;
    double big = 0.0, sum = 0.0;
    for (size_t j = 0; j < s->d; j++)
        big = fmax(big, fabs(get(s->dtype, s->out, j) - s->mu[j]));
    for (size_t j = 0; big > 0 && j < s->d; j++) {
        double e = (get(s->dtype, s->out, j) - s->mu[j]) / big;
        sum += e * e;
    }
    *y = big * sqrt(sum);
    return 0;
}

/* An expansion from start by steps delta doubled while the damage grows, then steps shrunk by
 * ratio around the best, evals evaluations in all (ByzFL's documentation of its optimal
 * attacks). */
static int line_search(search *s, const params *p, double *best_x, dpas_error *err)
{
    int64_t remaining = (int64_t)p->v[0] - 1;
    double x = p->v[1], y, delta = p->v[2], ratio = p->v[3], best_y;
    int rc = evaluate(s, x, &best_y, err);
    *best_x = x;
    while (!rc && remaining > 0) {
        double prop = *best_x + delta;
        rc = evaluate(s, prop, &y, err);
        remaining--;
        if (!rc && y > best_y) {
            *best_x = prop, best_y = y;
            delta *= 2;
        } else {
            delta *= ratio;
            break;
        }
    }
    while (!rc && remaining > 0) {
        double prop = *best_x + delta;
        rc = evaluate(s, prop, &y, err);
        remaining--;
        if (!rc && y > best_y)
            *best_x = prop, best_y = y;
        delta *= ratio;
    }
    return rc;
}

static int optimal(const dpas_attack *a, const void *const *honest, int dtype, size_t h, size_t d,
                   size_t f, const dpas_attack_opts *o, const params *p, double *mu, double *sd,
                   double *tau, dpas_error *err)
{
    search s = {a, dtype, h, d, f, mu, sd, o ? o->rule : NULL, {0}, NULL, NULL, NULL};
    int rc = 0;
    if (!s.rule && (rc = dpas_rule_find("mean", NULL, &s.rule, err)))
        return rc;
    if (o && o->agg)
        s.agg = *o->agg;
    if (!dpas_rule_tolerates(s.rule, (int64_t)(h + f), s.agg.f))
        return dpas__fail(err, DPAS_EINVAL, "rule",
                          "%s against %s (%s): %zu honest and %zu Byzantine gradients with "
                          "f = %lld, but it needs %s",
                          a->name, s.rule->name, s.rule->convention, h, f, (long long)s.agg.f,
                          s.rule->condition);
    dpas_workspace *own = NULL;
    if (!s.agg.workspace && !(s.agg.workspace = own = dpas_workspace_new()))
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    size_t es = dtype == DPAS_FLOAT64 ? 8 : 4;
    s.rows = malloc((h + f) * sizeof *s.rows);
    s.byz = malloc(d * es + 1);
    s.out = malloc(d * es + 1);
    if (!s.rows || !s.byz || !s.out) {
        rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    } else {
        for (size_t i = 0; i < h + f; i++)
            s.rows[i] = i < h ? honest[i] : s.byz;
        rc = line_search(&s, p, tau, err);
    }
    free(s.rows), free(s.byz), free(s.out);
    dpas_workspace_free(own);
    return rc;
}

/* ---- the rows ---- */

static int check_args(const dpas_attack *a, const void *const *honest, int dtype, size_t h,
                      size_t d, size_t f, void *const *out, dpas_error *err)
{
    if (!a)
        return dpas__fail(err, DPAS_EINVAL, "attack", "attack_rows needs an attack");
    if (dtype != DPAS_FLOAT32 && dtype != DPAS_FLOAT64)
        return dpas__fail(err, DPAS_EINVAL, "dtype",
                          "dtype must be %d (float32) or %d (float64), got %d", DPAS_FLOAT32,
                          DPAS_FLOAT64, dtype);
    if (f && !out)
        return dpas__fail(err, DPAS_EINVAL, "out", "attack_rows needs f = %zu output rows", f);
    for (size_t i = 0; d && i < f; i++)
        if (!out[i])
            return dpas__fail(err, DPAS_EINVAL, "out", "output row %zu is NULL", i);
    int needs = a->id != DPAS_ATTACK_LARGE_VALUE && a->id != DPAS_ATTACK_NAN &&
                a->id != DPAS_ATTACK_INF && a->id != DPAS_ATTACK_GAUSSIAN;
    size_t least = a->id == DPAS_ATTACK_ALIE || a->id == DPAS_ATTACK_OPTIMAL_ALIE ? 2 : 1;
    if (needs && h < least)
        return dpas__fail(err, DPAS_EINVAL, "honest",
                          "%s needs at least %zu honest gradients, got %zu", a->name, least, h);
    if (needs && !honest)
        return dpas__fail(err, DPAS_EINVAL, "honest", "%s needs the honest gradients", a->name);
    size_t es = dtype == DPAS_FLOAT64 ? 8 : 4;
    for (size_t i = 0; needs && d && i < h; i++) {
        if (!honest[i])
            return dpas__fail(err, DPAS_EINVAL, "honest", "honest gradient %zu is NULL", i);
        if ((uintptr_t)honest[i] % es)
            return dpas__fail(err, DPAS_EINVAL, "honest",
                              "honest gradient %zu is not aligned to its %zu-byte elements", i, es);
    }
    return 0;
}

int dpas_attack_rows_typed(const dpas_attack *a, const void *const *honest, dpas_dtype dtype,
                           size_t h, size_t d, size_t f, const dpas_attack_opts *o,
                           void *const *out, double *used, dpas_error *err)
{
    params p = {{0}};
    int rc = check_args(a, honest, dtype, h, d, f, out, err);
    if (!rc)
        rc = get_params(a, h, f, dtype, o, &p, err);
    if (rc)
        return rc;
    if (used)
        *used = p.v[0];
    if (!f || !d)
        return 0;
    double *mu = NULL, *sd = NULL, tau = 0.0;
    switch (a->id) {
    case DPAS_ATTACK_LARGE_VALUE:
    case DPAS_ATTACK_NAN:
    case DPAS_ATTACK_INF: {
        double v = a->id == DPAS_ATTACK_NAN   ? NAN
                   : a->id == DPAS_ATTACK_INF ? (p.v[0] < 0 ? -INFINITY : INFINITY)
                                              : p.v[0];
        for (size_t j = 0; j < d; j++)
            put(dtype, out[0], j, v);
        break;
    }
    case DPAS_ATTACK_MIMIC:
        memcpy(out[0], honest[(size_t)p.v[0]], d * (dtype == DPAS_FLOAT64 ? 8 : 4));
        break;
    case DPAS_ATTACK_GAUSSIAN:
        gaussian_row(dtype, out[0], d, p.v[0], p.v[1], o ? o->seed : 0);
        break;
    default: {
        int spread = a->id == DPAS_ATTACK_ALIE || a->id == DPAS_ATTACK_OPTIMAL_ALIE;
        mu = malloc(d * sizeof *mu);
        sd = spread ? malloc(d * sizeof *sd) : NULL;
        if (!mu || (spread && !sd)) {
            rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
            break;
        }
        moments(honest, dtype, h, d, mu, sd);
        if (a->id == DPAS_ATTACK_OPTIMAL_IPM || a->id == DPAS_ATTACK_OPTIMAL_ALIE) {
            rc = optimal(a, honest, dtype, h, d, f, o, &p, mu, sd, &tau, err);
            if (used && !rc)
                *used = tau;
        } else {
            tau = p.v[0];
        }
        for (size_t j = 0; !rc && j < d; j++)
            put(dtype, out[0], j, spread ? mu[j] + tau * sd[j] : -tau * mu[j]);
    }
    }
    free(mu), free(sd);
    for (size_t i = 1; !rc && i < f; i++)
        memcpy(out[i], out[0], d * (dtype == DPAS_FLOAT64 ? 8 : 4));
    return rc;
}

int dpas_attack_rows(const dpas_attack *a, const float *const *honest, size_t h, size_t d, size_t f,
                     const dpas_attack_opts *o, float *const *out, dpas_error *err)
{
    return dpas_attack_rows_typed(a, (const void *const *)honest, DPAS_FLOAT32, h, d, f, o,
                                  (void *const *)out, NULL, err);
}
