/* SPDX-License-Identifier: Apache-2.0 */
/* Gradients and attacks. Every gradient is a pure function of (seed, rank, coordinate), so any
 * rank, and rank 0's single-process check, can regenerate any rank's gradient. */
#include "measure.h"

#include <math.h>

static inline uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline float unit(uint64_t h)
{
    return (float)((double)(h >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* Honest gradient of rank r at coordinate j: a shared base plus 10% noise of its own. */
static inline float honest(uint64_t seed, int r, size_t j)
{
    float base = unit(mix(seed ^ mix((uint64_t)j)));
    float noise = unit(mix(seed ^ mix((uint64_t)j ^ ((uint64_t)(r + 1) << 40))));
    return base + 0.1f * noise;
}

/* Inverse of the standard normal CDF by bisection on erfc (for ALIE's z). */
static double inv_phi(double p)
{
    double lo = -40, hi = 40;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / sqrt(2.0)) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* ALIE (Baruch et al., NeurIPS 2019): mu - z sigma over the honest gradients, with
 * s = floor(n/2 + 1) - f supporters and z = Phi^-1((n - s) / n). */
static void alie(const opts *o, int n, size_t j0, size_t j1, float *out)
{
    int hon = n - (int)o->byzantine;
    double s = floor(n / 2.0 + 1) - (double)o->byzantine;
    double z = inv_phi((n - s) / n);
    for (size_t j = j0; j < j1; j++) {
        double m = 0, m2 = 0;
        for (int h = 0; h < hon; h++) {
            double v = honest(o->seed, h, j);
            m += v;
            m2 += v * v;
        }
        m /= hon;
        double var = m2 / hon - m * m;
        out[j - j0] = (float)(m - z * sqrt(var > 0 ? var : 0));
    }
}

/* The gradient rank r sends, coordinates [j0, j1): the last --byzantine ranks attack. */
void gradient_of(const opts *o, int nranks, int r, size_t j0, size_t j1, float *out)
{
    int byz = r >= nranks - (int)o->byzantine;
    if (byz && o->attack == ATTACK_ALIE) {
        alie(o, nranks, j0, j1, out);
    } else if (byz && (o->attack == ATTACK_INF || o->attack == ATTACK_NAN)) {
        /* non-finite gradients: all of one (every shard sees it), or one coordinate of the other
         * (the last: on the sharded schedules only the last rank holds it) */
        for (size_t j = j0; j < j1; j++) {
            float h = honest(o->seed, r, j);
            out[j - j0] = o->attack == ATTACK_INF      ? copysignf(INFINITY, h)
                          : j + 1 == (size_t)o->params ? NAN
                                                       : h;
        }
    } else {
        float s = !byz ? 1.0f : o->attack == ATTACK_SIGNFLIP ? -1.0f : (float)o->attack_scale;
        for (size_t j = j0; j < j1; j++)
            out[j - j0] = s * honest(o->seed, r, j);
    }
}
