/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/kernels.h — the aggregation kernels (float32) and the attacks they are tested against
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_KERNELS_H
#define DPAS_KERNELS_H

#include "dpas/rules.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- aggregation kernels (float32 and float64) ---------------------------------------------- */

/* The element types of the kernels. */
typedef enum dpas_dtype {
    DPAS_FLOAT32 = 0,
    DPAS_FLOAT64 = 1,
} dpas_dtype;

/* Scratch memory for the kernels, kept by the caller across calls: the kernels that need
 * buffers (distances, iterates, mixed gradients) take them from it, and a second call of the
 * same size touches no fresh page. Not thread-safe: one workspace per thread. Without one
 * (opts.workspace NULL) each call allocates and frees its own. */
typedef struct dpas_workspace dpas_workspace;
DPAS_API dpas_workspace *dpas_workspace_new(void); /* NULL when out of memory */
DPAS_API void dpas_workspace_free(dpas_workspace *ws);
DPAS_API size_t dpas_workspace_size(const dpas_workspace *ws); /* bytes it holds */

/* A pre-aggregation step: a rule of the catalogue with DPAS_RULE_CAP_PREAGGREGATION (nnm,
 * bucketing, clipping, arc) and its parameters; zero means the default. With own_f = 1 the step
 * runs with its own f (ByzFL's NNM(f=2) before Average, whose f is 0); with own_f = 0 with the
 * aggregation's (opts.f). A non-finite gradient that a step drops counts against the f of every
 * step after it that has its own, and against opts.f: more of them than either is DPAS_EINVAL. */
typedef struct dpas_preagg {
    const dpas_rule *rule;
    double c;      /* clipping: the threshold (0: 2, ByzFL's default) */
    int64_t s;     /* bucketing: gradients per bucket (0: 1, ByzFL's default) */
    uint64_t seed; /* bucketing: the seed of its permutation */
    int64_t f;     /* own_f = 1: this step's f (>= 0); else must be 0 */
    int own_f;     /* 0 or 1 */
} dpas_preagg;

/* The instruction sets of the kernels. */
typedef enum dpas_kernel_isa_id {
    DPAS_ISA_AUTO = 0,
    DPAS_ISA_GENERIC,
    DPAS_ISA_AVX2,   /* AVX2 + FMA, 8 floats per vector */
    DPAS_ISA_AVX512, /* AVX-512F, 16 floats per vector */
} dpas_kernel_isa_id;

/* The rules run on n gradients of d coordinates, given as n row pointers (row i is
 * x[i][0..d)), float32 (dpas_aggregate) or float64 (dpas_aggregate_f64, the same rules with the
 * same guarantees); the output, d values of the same type, must not overlap a row. Rows must be
 * aligned to their element's size.
 *
 * Non-finite gradients. A gradient with a NaN or a +-Inf coordinate is Byzantine by definition:
 * it is excluded before the rule runs and counted against f, so the rule runs on the n' = n - k
 * finite gradients with f' = f - k (the rule's condition n >= a f + b still holds then). More
 * non-finite gradients than f is DPAS_EINVAL, naming how many there are. This holds for every
 * rule, every n and every instruction set; it costs no extra pass over the data (the kernels
 * notice a non-finite value on the way and only then look for the rows that hold one).
 *
 * Finite inputs never give a non-finite output: sums, means, norms and distances are taken in
 * double (the mean of FLT_MAX values is FLT_MAX, the median of four FLT_MAX is FLT_MAX). For
 * float64 inputs a sum or a squared distance that overflows double (values near DBL_MAX, or
 * distances beyond 1e154) is computed again on the values scaled by a power of two, so the
 * mean of DBL_MAX values is DBL_MAX too. Squared distances of float64 rows are taken again on
 * the rows scaled by a power of two (their largest value to 2^450) when one overflowed, all are
 * below 2^-900, or one is below 2^-900 (or 0 between rows that differ): rows at 1e-300 beside
 * rows at 1e-120, or at 1e125 beside 1e305, keep their distances' order; a distance below about
 * 1e-290 times the largest value still loses precision. The geometric median's stopping test
 * measures its step the same way.
 *
 * Semantics, per rule (after the exclusion above; n and f are then n' and f'):
 *   mean               the sum / n per coordinate, summed in double in row order.
 *   median             per coordinate; for even n the mean of the two middle values (in double).
 *   trimmed_mean       per coordinate, drop the f largest and the f smallest values, average the
 *                      n - 2f left (Yin et al. 2018), summed in double in ascending order.
 *   meamed             per coordinate, the mean of the n - f values closest to the median (Xie et
 *                      al. 2018, "Phocas"). Tie rule: of two values equally far from the median,
 *                      the one below it is taken first (on 1 1 2 2 3 with f = 2: {1, 2, 2}, 5/3).
 *   sign_majority      per coordinate, the sign (+1, -1, or 0 on a tie) of the sum of signs.
 *   krum               the gradient with the smallest score: the sum of squared distances to its
 *                      k nearest others, k = n - f - 2 (blanchard) or n - f - 1 (byzfl); ties of
 *                      score: the lowest index.
 *   multi_krum         the mean of the m best-scored gradients (m = n - f unless given).
 *   bulyan             n - 2f Krum selections, each over the gradients not yet selected (with
 *                      k = max(1, r - f - 2) neighbours among the r remaining), then per
 *                      coordinate the mean of the n - 4f selected values closest to their median
 *                      with meamed's tie rule (El Mhamdi et al. 2018).
 *   brute              (MDA) the mean of the n - f gradients of smallest diameter (the largest
 *                      squared distance between two of them); ties: the first subset in
 *                      lexicographic order of indices. It examines up to C(n, f) subsets: more
 *                      than DPAS_BRUTE_MAX_SUBSETS is DPAS_EINVAL.
 *   geometric_median   smoothed Weiszfeld (RFA, Pillutla et al. 2022): weights 1 / max(nu, ||z -
 *                      x_i||), z = the weighted mean, repeated; it starts from opts.start, or
 *                      else the coordinate-wise median (RFA starts from the mean, which one far
 *                      gradient drags away) and stops after `iterations` steps (0: 100) or when
 *                      a step moves z by less than `tolerance` (0: 1e-6) times the median of the
 *                      distances ||z - x_i|| (RFA's own test, a relative change of the objective,
 *                      is met early when a far gradient inflates the objective). nu = `smoothing`
 *                      (0: 1e-5, RFA's eps).
 *   centered_clipping  starts from opts.start, or else the coordinate-wise median v, and repeats
 *                      `iterations` times (0: 10) v += mean_i((x_i - v) min(1, tau / ||x_i -
 *                      v||)); tau defaults to the median of the n distances ||x_i - v0||
 *                      (Karimireddy et al. 2021).
 *   monna              the mean of the n - f gradients nearest to gradient opts.idx, itself
 *                      included (ties: the lower index); n distances only (Farhadkhani et al.
 *                      2023). Row idx non-finite is DPAS_EINVAL.
 *   caf                from weights c_i = 1, while they sum to more than n - 2f: the weighted
 *                      mean mu and covariance, its top eigenvector v, c_i *= 1 - tau_i / max tau
 *                      with tau_i = ((x_i - mu).v)^2, the max over the rows with c_i > 0; the
 *                      weighted mean of the round of least top eigenvalue (Allouah, Guerraoui
 *                      and Stephan 2025). f = 0: the mean.
 *   smea               the mean of the n - f gradients whose covariance has the least top
 *                      eigenvalue, every subset in lexicographic order, the first on ties, at
 *                      most 200000 subsets (Allouah et al. 2023).
 *                      CAF's and SMEA's eigenpairs come from the n x n centred Gram matrix that
 *                      the pairwise distances give, by Jacobi rotations.
 * Pre-aggregations (rules with DPAS_RULE_CAP_PREAGGREGATION, in opts.pre; opts.nnm = 1 puts nnm
 * first), each on the rows the one before made, the rule on the rows of the last:
 *   nnm                each gradient the mean of its n - f nearest, itself included (ties: the
 *                      lower index) (Allouah et al. 2023). dpas_nnm returns them.
 *   bucketing          ceil(n / s) buckets of s gradients in a random order from seed
 *                      (Fisher-Yates, splitmix64), each averaged; the rule after it runs on the
 *                      buckets with f of them Byzantine at most (Karimireddy et al. 2022).
 *   clipping           each gradient with a norm above c scaled to norm c (ByzFL's Clipping).
 *   arc                the floor(2 f (n - f) / n) gradients of largest norm clipped to the norm of
 *                      the next largest (Allouah et al. 2024).
 * The clipping guarantee, for every finite input (float32 and float64, rows at DBL_MAX beside rows
 * at 1e-300 or subnormal): each row's norm is computed with a power-of-two scale of its own
 * (float64: when its sum of squares at scale 1 overflows or falls below 2^-900), never from the
 * other rows, so no row switches clipping off for another; a row of norm <= its bound (clipping:
 * c; arc: the norm above) comes out unchanged, a row above it as x bound / ||x||, each value
 * rounded once (a factor below the normal doubles is applied to the row pre-scaled to norm < 1):
 * its norm is the bound to the rounding of the element type, and never above it by more than
 * that. centered_clipping: each clipped difference (x_i - v) min(1, tau / ||x_i - v||) has norm
 * <= tau (a distance beyond the double range kept in two factors), so a step moves by at most
 * tau; a weight tau / ||x_i - v|| below the normal doubles (a row 1e300 away, tau 1e-20) loses
 * that row's part of the step, not the bound.
 * Coordinate-wise rules sort each coordinate's values with a fixed Batcher odd-even merge network
 * (min(a, b) = a < b ? a : b); every instruction set runs the same network and the same
 * arithmetic. Squared distances and norms are summed in double, in 8 lanes with fused
 * multiply-adds in one fixed order, so tiny (1e-19) and huge (1e19) float32 gradients order
 * correctly. Every rule gives bit-identical results on every instruction set and for every
 * thread count.
 * Weights (opts.weights, one per row; integer weights are the rows repeated that many times,
 * equal weights the unweighted rule, weight 0 the row left out), for the rules that have a
 * weighted form:
 *   mean               sum_i w_i x_i / sum_i w_i (FedAvg's weighted mean, McMahan et al. 2017),
 *                      the weights normalised first (a convex combination: no overflow).
 *   median             per coordinate, the weighted median (Edgeworth 1888): the values in
 *                      ascending order, the first at which the running weight passes half the
 *                      total; where it reaches exactly half, the half sum of that value and the
 *                      next of positive weight (equal weights: the median above). Weights are
 *                      summed in double.
 *   geometric_median   the weighted geometric median argmin_z sum_i w_i ||z - x_i|| (RFA's
 *                      alpha_i, Pillutla et al. 2022): Weiszfeld's weights w_i / max(nu, ||z -
 *                      x_i||), from the weighted coordinate-wise median unless opts.start.
 * Every other rule, and any pre-aggregation (opts.nnm, opts.pre), is DPAS_EINVAL with weights:
 * a rule defined by counts of rows (f of them Byzantine, the n - f nearest, ...) has no
 * weighted form that keeps its guarantee, and a weight a client declares is not checked (one
 * Byzantine row with a large weight moves the weighted mean anywhere). The non-finite policy
 * holds (a non-finite row is excluded and counted against f, its weight dropped); with
 * weights the rows are scanned for non-finite values first (one more read of the data).
 * The condition of the rule (dpas_rule_tolerates with n and f) must hold: DPAS_EINVAL otherwise.
 * An option the rule does not take (m for krum, tau for median: dpas_agg_option_applies) is
 * DPAS_EINVAL when set.
 * Fields added later keep their zero meaning "the default", so a zeroed dpas_agg_opts works. */
typedef struct dpas_agg_opts {
    int64_t f;              /* Byzantine gradients the rule guards against */
    int64_t m;              /* multi_krum: how many to average; 0 = n - f */
    int64_t iterations;     /* centered_clipping (0 = 10), geometric_median (0 = at most 100) */
    double tau;             /* centered_clipping radius; 0 = adaptive */
    int generic;            /* 1: the portable kernels even where SIMD ones are there (for tests) */
    int threads;            /* worker threads; 0 or 1: the calling thread only (at most 256) */
    int nnm;                /* 1: nearest neighbour mixing before the rule */
    dpas_kernel_isa_id isa; /* 0 = the best this CPU has (generic = 1: generic) */
    double tolerance;       /* geometric_median's stopping tolerance; 0 = 1e-6 */
    double smoothing;       /* geometric_median's nu; 0 = 1e-5 */
    dpas_workspace *workspace; /* scratch kept across calls; NULL: the call allocates its own */
    const void *start;      /* geometric_median, centered_clipping: the first iterate, d values of
                        * the rows' type (finite); NULL: the coordinate-wise median */
    int64_t idx;            /* monna: the row whose neighbours are averaged (0: row 0) */
    const dpas_preagg *pre; /* pre-aggregations applied in order before the rule (after
                             * opts.nnm's NNM, if set) */
    size_t npre;
    const double *weights; /* n weights, one per row (finite, >= 0; those of the rows used not
                            * all 0), for the rules with a weighted form; NULL: unweighted.
                            * See "Weights" above. */
} dpas_agg_opts;

/* Does the rule take this option ("m", "iterations", "tau", "tolerance", "smoothing", "start",
 * "idx", "nnm", "pre"; "f", "threads", "isa", "generic", "workspace" apply to every rule)? 1 or
 * 0; an unknown option name is 0. */
DPAS_API int dpas_agg_option_applies(const dpas_rule *rule, const char *option);

/* The most subsets brute (MDA) examines: C(n, f) above it is an error. */
#define DPAS_BRUTE_MAX_SUBSETS 10000000

/* Aggregate into out[0..d). `selected` (n entries, may be NULL) receives the indices (into x)
 * the selecting rules chose, *nselected their count (0 for the other rules): krum its one row,
 * multi_krum the m rows best first, bulyan in the order of selection, brute and smea the subset
 * in ascending order, monna the n - f rows nearest first; none after bucketing (the rule selects
 * buckets). */
DPAS_API int dpas_aggregate(const dpas_rule *rule, const float *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, float *out, int64_t *selected,
                            size_t *nselected, dpas_error *err);
DPAS_API int dpas_aggregate_f64(const dpas_rule *rule, const double *const *x, size_t n, size_t d,
                                const dpas_agg_opts *o, double *out, int64_t *selected,
                                size_t *nselected, dpas_error *err);
/* Either type, for bindings: x holds n row pointers to elements of dtype, out d of them. */
DPAS_API int dpas_aggregate_typed(const dpas_rule *rule, const void *const *x, dpas_dtype dtype,
                                  size_t n, size_t d, const dpas_agg_opts *o, void *out,
                                  int64_t *selected, size_t *nselected, dpas_error *err);

/* Nearest neighbour mixing alone: out[i][0..d) = the mean of the n - f rows nearest to x[i]
 * (x[i] included), for each finite row i; the rows of non-finite gradients are excluded as by
 * dpas_aggregate and come out as NaN rows. o->f is f (2f < n); o->threads and o->isa are used. */
DPAS_API int dpas_nnm(const float *const *x, size_t n, size_t d, const dpas_agg_opts *o,
                      float *const *out, dpas_error *err);

/* The rows the pre-aggregations of opts (opts.nnm, then opts.pre in order) make of the n rows
 * x (elements of dtype): out holds n row pointers of d elements each; *nout gets how many rows
 * were made. Without bucketing in the chain they are the n rows in order, those of non-finite
 * gradients (at most f; excluded and counted against f as by dpas_aggregate) NaN; with it,
 * its buckets. opts takes f, threads, isa, workspace, nnm and pre here. In place: out[i] may
 * be x[i] itself (every i, or some); clipping and ARC then rewrite only the rows they clip,
 * bucketing writes its buckets over out[0..nout), NNM works in the workspace and is copied back;
 * the result is bit for bit the one into separate rows. An output row that is another row's
 * input, or overlaps an input row without being it, is refused (EINVAL, field "out"). */
DPAS_API int dpas_preaggregate_typed(const void *const *x, dpas_dtype dtype, size_t n, size_t d,
                                     const dpas_agg_opts *o, void *const *out, size_t *nout,
                                     dpas_error *err);

/* Many aggregations of the same shape in one call, for bindings: from Python the fixed cost of
 * a call (about 8 us) is what a small aggregation (n = 16, d = 1000) costs, and a batch pays it
 * once. Set b (0 <= b < batch) is the n rows base + b set_step + i row_step (bytes, i < n), of d
 * elements of dtype each; dpas_aggregate_batch writes its aggregate, d elements, at out +
 * b out_step, and dpas_preaggregate_batch its *nout rows at out + b out_set_step + i
 * out_row_step (every set gives the same count: n, or the buckets). Each set runs as
 * dpas_aggregate_typed / dpas_preaggregate_typed with opts (the same rule, f, pre-aggregations
 * and seeds for every set). The first set that fails stops the call with its error, the
 * message prefixed "set b of the batch of B: "; the outputs of the sets before it are written,
 * the others are not (a binding throws the whole output away). */
DPAS_API int dpas_aggregate_batch(const dpas_rule *rule, const void *base, dpas_dtype dtype,
                                  size_t batch, size_t n, size_t d, ptrdiff_t set_step,
                                  ptrdiff_t row_step, const dpas_agg_opts *o, void *out,
                                  ptrdiff_t out_step, dpas_error *err);
DPAS_API int dpas_preaggregate_batch(const void *base, dpas_dtype dtype, size_t batch, size_t n,
                                     size_t d, ptrdiff_t set_step, ptrdiff_t row_step,
                                     const dpas_agg_opts *o, void *out, ptrdiff_t out_set_step,
                                     ptrdiff_t out_row_step, size_t *nout, dpas_error *err);

/* Squared distances ||x_i - x_j||^2 of the rows, added into D (n x n, row-major, symmetric,
 * zero diagonal): call once per shard with the same D to sum over shards. In double, finite for
 * finite rows; an entry is NaN or +Inf exactly when one of its two rows has a non-finite
 * coordinate, which dpas_select recognises. */
DPAS_API void dpas_pairwise_sqdist_add(const float *const *x, size_t n, size_t d, double *D);

/* The selection of krum, multi_krum, bulyan, brute, monna (opts->idx) or smea from the full
 * distance matrix D, with the non-finite policy above: a row whose distances to every other row
 * are non-finite is excluded and counted against f (with n = 1 nothing can be told from D:
 * dpas_aggregate_selected checks the row). */
DPAS_API int dpas_select(const dpas_rule *rule, const double *D, size_t n, const dpas_agg_opts *o,
                         int64_t *selected, size_t *nselected, dpas_error *err);

/* The aggregate of a selection (krum, multi_krum, brute, monna, smea: the mean of the selected
 * rows, refused when one is not finite; bulyan:
 * its coordinate-wise phase over the selected rows, with f' = f minus the rows dpas_select
 * excluded, which the size of the selection tells). */
DPAS_API int dpas_aggregate_selected(const dpas_rule *rule, const float *const *x, size_t n,
                                     size_t d, const dpas_agg_opts *o, const int64_t *selected,
                                     size_t nselected, float *out, dpas_error *err);

/* The non-finite policy above on its own, for a schedule that holds each gradient in parts (a
 * shard per rank) and must decide as dpas_aggregate would on the whole gradients: bad[i] != 0
 * marks gradient i as holding a NaN or an Inf in some part. 0 when their number, *k (may be
 * NULL), is at most f: the rule then runs on the n - k others with f - k; else DPAS_EINVAL with
 * dpas_aggregate's own message for the same gradients. */
DPAS_API int dpas_nonfinite_check(const dpas_rule *rule, const unsigned char *bad, size_t n,
                                  int64_t f, size_t *k, dpas_error *err);

/* Which instruction set the kernels use here by default: "avx512", "avx2" or "generic". */
DPAS_API const char *dpas_kernel_isa(void);
/* Is this instruction set available here (DPAS_ISA_GENERIC always is)? */
DPAS_API int dpas_kernel_isa_available(dpas_kernel_isa_id isa);

/* sizeof of the kernel API's structs by name ("dpas_agg_opts", "dpas_attack_opts",
 * "dpas_attack"), 0 when unknown: for bindings, as dpas_sizeof. */
DPAS_API size_t dpas_kernels_sizeof(const char *type_name);

/* ---- attacks --------------------------------------------------------------------------------- */

/* What f Byzantine gradients send, made from the h honest ones (mu and sigma: the honest mean
 * and standard deviation per coordinate, sigma with h - 1 in the denominator), float32 or
 * float64 like the honest rows. Every Byzantine row is the same vector (as ByzFL's
 * ByzantineClient sends its attack's vector f times):
 *   sign_flip      -s mu; s = `scale`, default 1 (ByzFL's SignFlipping, after Allen-Zhu et al.
 *                  2021). With s = epsilon it is the IPM attack.
 *   ipm            -epsilon mu (inner product manipulation, Xie et al. 2020); default epsilon 2
 *                  (ByzFL's default tau).
 *   alie           mu + z sigma per coordinate ("a little is enough", Baruch et al. 2019); z
 *                  defaults to the paper's z_max = Phi^-1((n - s) / n) with n = h + f and
 *                  s = floor(n / 2 + 1) - f. A negative z perturbs the other way (mu - |z| sigma).
 *   large_value    every coordinate = `value`, default the largest finite value of the type.
 *   nan            every coordinate NaN.
 *   inf            every coordinate +Inf, or -Inf when `sign` < 0.
 *   optimal_ipm    ipm with the factor tau that hurts opts->rule most: the largest
 *                  ||rule(honest and f copies) - mu|| found by ByzFL's line search (an expansion
 *                  from `start` by steps `delta` doubled while the damage grows, then steps
 *                  shrunk by `ratio`), `evals` evaluations in all (defaults 20, 0, 10, 0.8;
 *                  ByzFL's Optimal_InnerProductManipulation). The rule runs with opts->agg (its
 *                  f, pre-aggregations); without a rule, the mean.
 *   optimal_alie   the same search for alie's factor (ByzFL's Optimal_ALittleIsEnough).
 *   mimic          a copy of honest row `epsilon` (default 0) (Karimireddy et al. 2022).
 *   gaussian       one vector of d numbers drawn from N(mu, sigma^2) (defaults 0, 1), from
 *                  opts->seed (splitmix64 and Box-Muller): the same seed gives the same rows.
 * Sums are taken in double; a float32 result beyond the float range is +-Inf (what would be
 * sent). */
typedef enum dpas_attack_id {
    DPAS_ATTACK_SIGN_FLIP = 0,
    DPAS_ATTACK_IPM,
    DPAS_ATTACK_ALIE,
    DPAS_ATTACK_LARGE_VALUE,
    DPAS_ATTACK_NAN,
    DPAS_ATTACK_INF,
    DPAS_ATTACK_OPTIMAL_IPM,
    DPAS_ATTACK_OPTIMAL_ALIE,
    DPAS_ATTACK_MIMIC,
    DPAS_ATTACK_GAUSSIAN,
    DPAS_ATTACK_COUNT
} dpas_attack_id;

#define DPAS_ATTACK_MAX_PARAMETERS 4

typedef struct dpas_attack {
    dpas_attack_id id;
    const char *name;      /* "sign_flip", "alie", ... */
    const char *parameter; /* the name of its first parameter ("scale", "epsilon", "z", ...),
                            * NULL when it has none */
    const char *source;
    const char *notes;
    /* every parameter's name in order (the first is `parameter`), NULL after the last */
    const char *parameters[DPAS_ATTACK_MAX_PARAMETERS + 1];
} dpas_attack;

/* The attack's parameters by position (dpas_attack.parameters); bit k of `given` set: value[k]
 * was given, else it takes its default (so a zeroed struct, or a NULL pointer, means the
 * defaults). */
typedef struct dpas_attack_opts {
    double value[DPAS_ATTACK_MAX_PARAMETERS];
    unsigned given;
    uint64_t seed;            /* gaussian */
    const dpas_rule *rule;    /* optimal_*: the rule attacked; NULL: mean */
    const dpas_agg_opts *agg; /* optimal_*: the rule's options (its f, pre-aggregations); NULL:
                               * f = 0 */
} dpas_attack_opts;

DPAS_API size_t dpas_attack_count(void);
DPAS_API const dpas_attack *dpas_attack_at(size_t i);
/* By name; DPAS_ENOENT with the known names. */
DPAS_API int dpas_attack_find(const char *name, const dpas_attack **out, dpas_error *err);
/* The first parameter's default for h honest and f Byzantine gradients (ALIE's z depends on
 * them); dpas_attack_parameter_default: parameter k's. */
DPAS_API int dpas_attack_default(const dpas_attack *a, size_t h, size_t f, double *value,
                                 dpas_error *err);
DPAS_API int dpas_attack_parameter_default(const dpas_attack *a, size_t k, size_t h, size_t f,
                                           dpas_dtype dtype, double *value, dpas_error *err);
/* The f Byzantine rows out[0..f)[0..d) made from the h honest rows honest[0..h)[0..d). */
DPAS_API int dpas_attack_rows(const dpas_attack *a, const float *const *honest, size_t h, size_t d,
                              size_t f, const dpas_attack_opts *o, float *const *out,
                              dpas_error *err);
/* Either type; *used (may be NULL) gets the value of the first parameter the rows were made
 * with: the given one, its default, or the factor an optimal_* search found. */
DPAS_API int dpas_attack_rows_typed(const dpas_attack *a, const void *const *honest,
                                    dpas_dtype dtype, size_t h, size_t d, size_t f,
                                    const dpas_attack_opts *o, void *const *out, double *used,
                                    dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
