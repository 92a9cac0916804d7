/* Attacks: what f Byzantine gradients send, made from the honest ones, for the property tests,
 * for dpas-measure and for users. Means and deviations per coordinate in double. */
#include "kernels_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const dpas_attack attacks[] = {
    {DPAS_ATTACK_SIGN_FLIP, "sign_flip", "scale",
     "ByzFL's SignFlipping (after Allen-Zhu et al., ICLR 2021)",
     "every Byzantine row is -scale x the honest mean (scale 1); with scale = epsilon it is IPM"},
    {DPAS_ATTACK_IPM, "ipm", "epsilon",
     "Xie, Koyejo and Gupta, Fall of Empires: inner product manipulation, UAI 2019; default "
     "epsilon 2 as ByzFL's tau",
     "every Byzantine row is -epsilon x the honest mean"},
    {DPAS_ATTACK_ALIE, "alie", "z", "Baruch, Baruch and Goldberg, A Little Is Enough, NeurIPS 2019",
     "every Byzantine row is mu + z sigma per coordinate (sigma with h - 1); z defaults to "
     "Phi^-1((n - s) / n), s = floor(n / 2 + 1) - f, n = h + f"},
    {DPAS_ATTACK_LARGE_VALUE, "large_value", "value", "dpas (a plain extreme value)",
     "every coordinate is value (FLT_MAX)"},
    {DPAS_ATTACK_NAN, "nan", NULL, "dpas (a non-finite gradient)", "every coordinate is NaN"},
    {DPAS_ATTACK_INF, "inf", "sign", "dpas (a non-finite gradient)",
     "every coordinate is +Inf, or -Inf when sign < 0"},
};
#define NATTACKS (sizeof attacks / sizeof attacks[0])

size_t dpas_attack_count(void) { return NATTACKS; }
const dpas_attack *dpas_attack_at(size_t i) { return i < NATTACKS ? &attacks[i] : NULL; }

int dpas_attack_find(const char *name, const dpas_attack **out, dpas_error *err)
{
    char q[96], list[160] = "";
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

int dpas_attack_default(const dpas_attack *a, size_t h, size_t f, double *value, dpas_error *err)
{
    if (!a || !value)
        return dpas__fail(err, DPAS_EINVAL, "attack",
                          "attack_default needs an attack and an output");
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
    case DPAS_ATTACK_LARGE_VALUE: *value = FLT_MAX; return 0;
    case DPAS_ATTACK_NAN: *value = 0.0; return 0;
    case DPAS_ATTACK_INF: *value = 1.0; return 0;
    case DPAS_ATTACK_COUNT: break;
    }
    return dpas__fail(err, DPAS_EINVAL, "attack", "unknown attack id %d", (int)a->id);
}

/* x as the float a replica would send: beyond the float range it is +-Inf. */
static float to_float(double x)
{
    if (x > FLT_MAX)
        return INFINITY;
    if (x < -FLT_MAX)
        return -INFINITY;
    return (float)x;
}

int dpas_attack_rows(const dpas_attack *a, const float *const *honest, size_t h, size_t d, size_t f,
                     const dpas_attack_opts *o, float *const *out, dpas_error *err)
{
    if (!a)
        return dpas__fail(err, DPAS_EINVAL, "attack", "attack_rows needs an attack");
    if (f && !out)
        return dpas__fail(err, DPAS_EINVAL, "out", "attack_rows needs f = %zu output rows", f);
    for (size_t i = 0; d && i < f; i++)
        if (!out[i])
            return dpas__fail(err, DPAS_EINVAL, "out", "output row %zu is NULL", i);
    int needs_honest =
        a->id == DPAS_ATTACK_SIGN_FLIP || a->id == DPAS_ATTACK_IPM || a->id == DPAS_ATTACK_ALIE;
    if (needs_honest) {
        if (h < 1 + (a->id == DPAS_ATTACK_ALIE))
            return dpas__fail(err, DPAS_EINVAL, "honest",
                              "%s needs at least %d honest gradients, "
                              "got %zu",
                              a->name, 1 + (a->id == DPAS_ATTACK_ALIE), h);
        if (!honest)
            return dpas__fail(err, DPAS_EINVAL, "honest", "%s needs the honest gradients", a->name);
        for (size_t i = 0; d && i < h; i++)
            if (!honest[i])
                return dpas__fail(err, DPAS_EINVAL, "honest", "honest gradient %zu is NULL", i);
    }
    double p;
    if (o && o->has_parameter) {
        p = o->parameter;
        if (!isfinite(p) && a->id != DPAS_ATTACK_LARGE_VALUE)
            return dpas__fail(err, DPAS_EINVAL, "parameter", "%s's %s must be finite, got %g",
                              a->name, a->parameter ? a->parameter : "parameter", p);
        if (a->id == DPAS_ATTACK_NAN)
            return dpas__fail(err, DPAS_EINVAL, "parameter", "nan takes no parameter");
    } else {
        int rc = dpas_attack_default(a, h, f, &p, err);
        if (rc)
            return rc;
    }
    if (!f || !d)
        return 0;
    float fill = 0.0f;
    switch (a->id) {
    case DPAS_ATTACK_LARGE_VALUE: fill = to_float(p); break;
    case DPAS_ATTACK_NAN: fill = NAN; break;
    case DPAS_ATTACK_INF: fill = p < 0 ? -INFINITY : INFINITY; break;
    default: break;
    }
    if (!needs_honest) {
        for (size_t i = 0; i < f; i++)
            for (size_t j = 0; j < d; j++)
                out[i][j] = fill;
        return 0;
    }
    for (size_t j = 0; j < d; j++) {
        double mu = 0.0;
        for (size_t i = 0; i < h; i++)
            mu += (double)honest[i][j];
        mu /= (double)h;
        double v;
        if (a->id == DPAS_ATTACK_ALIE) {
            double ss = 0.0;
            for (size_t i = 0; i < h; i++) {
                double e = (double)honest[i][j] - mu;
                ss += e * e;
            }
            v = mu + p * sqrt(ss / (double)(h - 1));
        } else {
            v = -p * mu;
        }
        float fv = to_float(v);
        for (size_t i = 0; i < f; i++)
            out[i][j] = fv;
    }
    return 0;
}
