/* dpas/kernels.h — the aggregation kernels (float32)
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_KERNELS_H
#define DPAS_KERNELS_H

#include "dpas/rules.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- aggregation kernels (float32) ------------------------------------------------------------ */

/* The rules run on n gradients of d float32 coordinates, given as n row pointers (row i is
 * x[i][0..d)). Semantics, for every rule:
 *   mean               sum / n per coordinate.
 *   median             per coordinate; for even n the mean of the two middle values.
 *   trimmed_mean       per coordinate, drop the f largest and f smallest, average the n - 2f left.
 *   meamed             per coordinate, the mean of the n - f values closest to the median (the
 *                      closest contiguous run of the sorted values; ties: the lower run).
 *   sign_majority      per coordinate, the sign (+1, -1, or 0 on a tie) of the sum of signs.
 *   krum               the gradient with the smallest score: the sum of squared distances to its
 *                      k nearest others, k = n - f - 2 (blanchard) or n - f - 1 (byzfl); ties: the
 *                      lowest index.
 *   multi_krum         the mean of the m best-scored gradients (m = n - f unless given).
 *   bulyan             n - 2f Krum selections, each over the gradients not yet selected (with
 *                      k = max(1, r - f - 2) neighbours among the r remaining), then per
 *                      coordinate the mean of the n - 4f selected values closest to their median.
 *   centered_clipping  starts from the coordinate-wise median v and repeats `iterations` times
 *                      v += mean_i((x_i - v) min(1, tau / ||x_i - v||)); tau defaults to the
 *                      median of the n distances ||x_i - v0||.
 * Sorting uses a fixed comparator network with min(a, b) = a < b ? a : b: +-Inf sort as the
 * extremes they are; a NaN makes the result of its coordinate unspecified (it may be NaN or one of
 * the inputs) and leaves every other coordinate as it would be; the distance rules see a NaN
 * distance as not smaller than any other, so a gradient with a NaN is never preferred to one
 * without. Nothing crashes. The condition of the rule (dpas_rule_tolerates with f) must hold:
 * DPAS_EINVAL otherwise. */
typedef struct dpas_agg_opts {
    int64_t f;          /* Byzantine gradients the rule guards against */
    int64_t m;          /* multi_krum: how many to average; 0 = n - f */
    int64_t iterations; /* centered_clipping; 0 = 10 */
    double tau;         /* centered_clipping radius; 0 = adaptive */
    int generic;        /* 1: the portable kernels even where AVX2 is there (for tests) */
} dpas_agg_opts;

/* Aggregate into out[0..d). `selected` (n entries, may be NULL) receives the indices the
 * distance rules selected, *nselected their count (0 for the other rules). */
DPAS_API int dpas_aggregate(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, float *out, int64_t *selected,
                            size_t *nselected, dpas_error *err);

/* Squared distances ||x_i - x_j||^2 of the rows, added into D (n x n, row-major, symmetric,
 * zero diagonal): call once per shard with the same D to sum over shards. */
DPAS_API void dpas_pairwise_sqdist_add(const float *const *x, size_t n, size_t d, double *D);

/* The selection of krum, multi_krum or bulyan from the full distance matrix D. */
DPAS_API int dpas_select(const dpas_rule *rule, const double *D, size_t n, const dpas_agg_opts *o,
                         int64_t *selected, size_t *nselected, dpas_error *err);

/* The aggregate of a selection (krum, multi_krum: the mean of the selected rows; bulyan: its
 * coordinate-wise phase over the selected rows). */
DPAS_API int dpas_aggregate_selected(const dpas_rule *rule, const float *const *x, size_t n,
                                     size_t d, const dpas_agg_opts *o, const int64_t *selected,
                                     size_t nselected, float *out, dpas_error *err);

/* Which instruction set the kernels use here: "avx2" or "generic". */
DPAS_API const char *dpas_kernel_isa(void);

#ifdef __cplusplus
}
#endif
#endif
