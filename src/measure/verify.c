/* SPDX-License-Identifier: Apache-2.0 */
/* Rank 0's check: the single-process kernel over all N gradients (as they travelled: rounded to
 * bf16 on a bf16 wire) against the distributed aggregate, and how far the aggregate and the
 * plain mean land from the honest mean. */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Relative distances of the aggregate and of the plain mean from the honest mean. */
static void distances(const opts *o, const float *const *rows, int N, size_t d, const float *agg,
                      summary *s)
{
    int hon = N - (int)o->byzantine;
    double nh = 0, dm = 0, dr = 0;
    for (size_t j = 0; j < d; j++) {
        double hm = 0, am = 0;
        for (int i = 0; i < N; i++) {
            am += rows[i][j];
            if (i < hon)
                hm += rows[i][j];
        }
        hm /= hon;
        am /= N;
        nh += hm * hm;
        dm += (am - hm) * (am - hm);
        dr += ((double)agg[j] - hm) * ((double)agg[j] - hm);
    }
    s->dist_mean = nh > 0 ? sqrt(dm / nh) : NAN;
    s->dist_rule = nh > 0 ? sqrt(dr / nh) : NAN;
}

static void compare(const opts *o, const float *const *rows, int N, size_t d, const float *agg,
                    float *ref, summary *s)
{
    dpas_agg_opts ao = {.f = o->f, .iterations = o->cc_iterations};
    /* a sign vote sums small integers: exact on any schedule */
    int exact = (o->schedule != DPAS_SCHED_ALLREDUCE || o->rule->id == DPAS_RULE_SIGN_MAJORITY) &&
                o->width == 4 && o->rule->id != DPAS_RULE_CENTERED_CLIPPING;
    double diff = 0, scale = 0;
    dpas_error e;
    /* the kernel refusing what the distributed run answered is a mismatch, as is a NaN or an Inf
     * on either side (fmax would drop a NaN: it is tested for, not compared) */
    int ok = dpas_aggregate(o->rule, rows, (size_t)N, d, &ao, ref, NULL, NULL, &e) == 0;
    for (size_t j = 0; ok && j < d; j++) {
        if (!isfinite(ref[j]) || !isfinite(agg[j])) {
            ok = 0;
            break;
        }
        diff = fmax(diff, fabs((double)ref[j] - (double)agg[j]));
        scale = fmax(scale, fabs((double)ref[j]));
    }
    /* bit-identical where the arithmetic is the same; else within float rounding of sums taken
     * in another order (and, for bf16, of the wire's rounding) */
    s->verified = ok && (exact ? memcmp(ref, agg, d * sizeof(float)) == 0
                               : diff <= (o->width == 2 ? 2e-2 : 1e-4) * fmax(1.0, scale));
    s->max_abs_diff = ok ? diff : NAN; /* null in JSON: no difference could be measured */
}

void verify_aggregate(const opts *o, int N, const float *agg, summary *s)
{
    const size_t d = (size_t)o->params;
    const wire w = {.width = o->width};
    int wanted = o->verify == 1 || (o->verify < 0 && (double)d * N * 4 <= (double)(1u << 30));
    float *X = wanted ? malloc(d * (size_t)N * sizeof(float)) : NULL;
    float *ref = wanted ? malloc(d * sizeof(float)) : NULL;
    const float **rows = wanted ? malloc((size_t)N * sizeof(float *)) : NULL;
    s->verified = -1;
    s->max_abs_diff = s->dist_mean = s->dist_rule = NAN;
    if (X && ref && rows) {
        for (int i = 0; i < N; i++) {
            float *x = X + (size_t)i * d;
            gradient_of(o, N, i, 0, d, x);
            for (size_t j = 0; j < d && o->width != 4; j++)
                x[j] = wire_round(&w, x[j]);
            rows[i] = x;
        }
        compare(o, rows, N, d, agg, ref, s);
        distances(o, rows, N, d, agg, s);
        s->have_dist = 1;
    } else if (wanted) {
        fprintf(
            stderr,
            "dpas-measure: warning: out of memory for the single-process check: not verified\n");
    }
    free(X), free(ref), free(rows);
}
