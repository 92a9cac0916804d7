/* SPDX-License-Identifier: Apache-2.0 */
/* Internals shared by the aggregation kernels: the per-instruction-set kernel tables (one per
 * element type: float32 and float64), the sorting network, the workspace, the thread helper and
 * the drivers. Not installed. */
#ifndef DPAS_KERNELS_INTERNAL_H
#define DPAS_KERNELS_INTERNAL_H

#include "../internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DPAS__X86 1
#endif

/* A comparator network: pair[c] = {i, j}, i < j, applied in order (min to i, max to j). */
typedef struct dpas__net {
    size_t count;
    uint32_t (*pair)[2];
} dpas__net;

/* The SIMD kernels have the networks for n <= 32 unrolled (networks.inc, DPAS_NET_MAX). */
#define DPAS__NET_UNROLLED 32

/* Batcher's odd-even merge sort for n values: the comparators scripts/gen_networks.py writes. */
int dpas__net_build(size_t n, dpas__net *net);
void dpas__net_free(dpas__net *net);

/* What a column kernel computes from each coordinate's sorted values. */
enum {
    DPAS__COL_MEDIAN = 0, /* the median */
    DPAS__COL_TRIM,       /* drop a at each end, average the rest */
    DPAS__COL_WINDOW,     /* the mean of the a values closest to the median */
};

/* Squared distances and norms are summed in double in 8 lanes: lane L of a range that starts at
 * a multiple of 8 takes the coordinates L, L + 8, L + 16, ... in increasing order, each step a
 * fused multiply-add, and the lanes are added in one fixed order (dpas__lanes_sum). Every
 * instruction set follows that order, so distances are bit-identical across them. */
#define DPAS__LANES 8
double dpas__lanes_sum(const double *acc);

/* The kernels of one instruction set for one element type. Rows are `const void *` pointing at
 * elements of that type (esize bytes each). Each column kernel returns nonzero when it met a
 * non-finite input value or produced a non-finite result (float64 sums can overflow): its
 * output is then to be thrown away. Coordinates [j0, j1) with j1 - j0 a multiple of width; the
 * generic sets (width 1) do any range. */
typedef struct dpas__isa {
    const char *name;
    int dtype;    /* DPAS_FLOAT32 or DPAS_FLOAT64 */
    size_t esize; /* bytes per element */
    size_t width; /* elements per vector */
    /* sort each coordinate's n values with net, then mode/a as above; scratch: n * 16 elements */
    unsigned (*columns)(const void *const *x, size_t n, size_t j0, size_t j1, const dpas__net *net,
                        int mode, size_t a, void *out, void *scratch);
    /* the mean of rows[0..m) (indices into x; NULL: 0..m-1), summed in double in that order */
    unsigned (*mean)(const void *const *x, const size_t *rows, size_t m, size_t j0, size_t j1,
                     void *out);
    /* the sign of the sum of signs */
    unsigned (*sign)(const void *const *x, size_t n, size_t j0, size_t j1, void *out);
    /* acc[q * 8 + lane] += the squared differences of the pair q (the upper triangle in row
     * order: (0,1), (0,2), ..., (1,2), ...) over [j0, j0 + len), the values multiplied by scale
     * first; len a multiple of 8 (the generic sets: any len, j0 - the range's start a multiple
     * of 8 is the caller's business) */
    void (*sqdist)(const void *const *x, size_t n, size_t j0, size_t len, double scale,
                   double *acc);
    /* acc[i * 8 + (t & 7)] += (scale x_i[t] - z[t])^2 over t in [j0, j1) for the rows
     * x[0..m) (z NULL: (scale x_i[t])^2); j0 a multiple of 8, and for the SIMD sets j1 - j0 too */
    void (*dist2n)(const void *const *x, size_t m, const double *z, double scale, size_t j0,
                   size_t j1, double *acc);
    /* acc[t & 7] += (a[t] - b[t])^2 over [j0, j1), doubles, the same alignment rules */
    void (*ddist2)(const double *a, const double *b, size_t j0, size_t j1, double *acc);
    /* out[t - j0] = base[t] (base NULL: 0) plus the sum over the rows i, in order, of
     * w[i] (scale x_i[t] - z[t]) (z NULL: w[i] scale x_i[t]), each step a fused multiply-add,
     * t in [j0, j1); out may be base + j0 */
    void (*wsum)(const void *const *x, const double *w, size_t n, const double *z, double scale,
                 size_t j0, size_t j1, const double *base, double *out);
    /* out[t] = (elem)(v[t] * scale) for t in [j0, j1) (float32: rounded, beyond the range +-Inf) */
    void (*store)(const double *v, double scale, size_t j0, size_t j1, void *out);
} dpas__isa;

extern const dpas__isa dpas__isa_generic, dpas__isa_generic64;
#ifdef DPAS__X86
extern const dpas__isa dpas__isa_avx2, dpas__isa_avx2_64;
extern const dpas__isa dpas__isa_avx512, dpas__isa_avx512_64;
#endif

/* The kernels to use for these options (opts->isa, opts->generic) and this element type. */
int dpas__isa_for(const dpas_agg_opts *o, int dtype, const dpas__isa **isa, dpas_error *err);
/* The portable kernels of an element type (tails of SIMD ranges, rare paths). */
const dpas__isa *dpas__generic_of(int dtype);

/* Run fn(ctx, t) for t = 0..parts-1 on up to `threads` threads (the calling thread included).
 * Which thread runs a part never changes what the part computes. If a thread cannot be started
 * its parts run on the calling thread. */
void dpas__parallel(int threads, size_t parts, void (*fn)(void *ctx, size_t part), void *ctx);

/* ---- the workspace ---- */

/* Scratch memory of a call, from the caller's dpas_workspace (kept across calls, so its pages
 * are not faulted in again) or a temporary one. Allocations are 64-byte aligned; a mark and a
 * release free what was taken after the mark. Used from the calling thread only. */
typedef struct dpas__ws dpas__ws;
void *dpas__ws_alloc(dpas__ws *ws, size_t count, size_t size);
void *dpas__ws_zalloc(dpas__ws *ws, size_t count, size_t size);
typedef struct dpas__ws_mark {
    size_t used, nextras;
} dpas__ws_mark;
dpas__ws_mark dpas__ws_mark_get(const dpas__ws *ws);
void dpas__ws_release(dpas__ws *ws, dpas__ws_mark mark);
/* The call's workspace: the caller's, or a new one (*own = 1: free it with dpas__ws_end). */
int dpas__ws_begin(dpas_workspace *given, dpas__ws **ws, int *own, dpas_error *err);
void dpas__ws_end(dpas__ws *ws, int own);

/* The kernel environment of one call. */
typedef struct dpas__kenv {
    const dpas__isa *isa;
    int threads;
    dpas__ws *ws;
    void *const *dest;   /* the caller's output rows, for the last pre-aggregation step (or NULL) */
    const double *alpha; /* the weighted geometric median: a weight per row (or NULL) */
    int inplace;         /* dest[i] may be the input row i: a last step that cannot write over
                          * its input (NNM) writes to the workspace instead */
    struct dpas__clip_plan *plan; /* fusing: a last clipping step records its factors here */
} dpas__kenv;

/* A clipping (Clipping or ARC) as the last step before the mean, fused: instead of writing the
 * clipped rows, the step leaves the alive rows as they are and records factor[t] (1.0: not
 * clipped) for each; set = 1 when it did (a row needing the two-step scaling of a tiny factor
 * is written as usual, and set stays 0). */
typedef struct dpas__clip_plan {
    int set;
    double *factor;
} dpas__clip_plan;
/* out = the mean over t of elem(x_t factor[t]) (float32: the product in double, rounded to
 * float; float64: rounded to double), summed in double in row order: what the mean kernel gives
 * on the clipped rows, bit for bit, without writing them. *nonfinite as for dpas__mean. */
int dpas__clipped_mean(const dpas__kenv *env, const void *const *x, const double *factor, size_t n,
                       size_t d, void *out, int *nonfinite, dpas_error *err);

/* Row i's element at offset off (a pointer). */
static inline const void *dpas__at(const dpas__kenv *env, const void *row, size_t off)
{
    return (const char *)row + off * env->isa->esize;
}

/* Column rule over all coordinates; *nonfinite set when a non-finite value was met (input, or
 * a float64 result that overflowed). */
int dpas__columns(const dpas__kenv *env, const void *const *x, size_t n, size_t d, int mode,
                  size_t a, void *out, int *nonfinite, dpas_error *err);
/* Mean of rows (NULL: all n), in double. */
int dpas__mean(const dpas__kenv *env, const void *const *x, const size_t *rows, size_t m, size_t d,
               void *out, int *nonfinite, dpas_error *err);
int dpas__sign(const dpas__kenv *env, const void *const *x, size_t n, size_t d, void *out,
               int *nonfinite, dpas_error *err);
/* Float64 only: the column rule or mean again on rows scaled by 2^-k (k: n fits), piece by
 * piece, for when a sum overflowed although every row is finite. */
int dpas__coord_scaled(const dpas__kenv *env, const void *const *x, size_t n, size_t d, int mode,
                       size_t a, int is_mean, void *out, dpas_error *err);

/* Squared distances of all pairs added into D (n x n, both triangles), the values multiplied by
 * scale; entries non-finite exactly for the pairs with a non-finite row, or (float64) +Inf for a
 * pair whose squared distance overflows. */
int dpas__sqdist(const dpas__kenv *env, const void *const *x, size_t n, size_t d, double scale,
                 double *D, dpas_error *err);

/* bad[i] = 1 when row i has a non-finite coordinate; returns how many. */
size_t dpas__nonfinite_rows(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                            unsigned char *bad);
/* The largest |value| of the finite rows alive[] (NULL: all); bad (may be NULL) gets 1 for
 * the rows with a non-finite value (their values are left out of the largest). */
double dpas__maxabs(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                    const unsigned char *alive, unsigned char *bad);
/* A power of two s such that s * maxabs lies in [1, 2) (1 for 0). */
double dpas__scale_for(double maxabs);
/* The power of two that brings maxabs to [2^450, 2^451), for squared distances (capped at
 * 2^1023). */
double dpas__dist_scale(double maxabs);

/* Iterative rules, in units of the rows times scale (a power of two). *nonfinite: a row turned
 * out to hold a non-finite value (the output is then not valid; the caller excludes the rows
 * and runs the rule again). */
int dpas__geomed(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                 const dpas_agg_opts *o, double scale, void *out, int *nonfinite, dpas_error *err);
int dpas__centered_clipping(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, double scale, void *out, int *nonfinite,
                            dpas_error *err);

/* Selection among the rows alive[] (NULL: all) of the n x n matrix D, with f Byzantine (m:
 * multi_krum's count; idx: monna's row). */
int dpas__select(const dpas__kenv *env, const dpas_rule *rule, const double *D, size_t n,
                 const unsigned char *alive, size_t f, int64_t m, int64_t idx, int64_t *selected,
                 size_t *nselected, dpas_error *err);
/* MoNNA's and SMEA's selections from D (spectral.c), and their parts that MoNNA and CAF share. */
typedef struct dpas__near {
    double dist;
    size_t i;
} dpas__near;
/* The n' - f' alive rows nearest to row idx by dist (itself included, at distance 0), nearest
 * first; ties: the lower index. tmp: n entries of scratch. */
void dpas__nearest(const double *dist, size_t n, const unsigned char *alive, size_t f, size_t idx,
                   dpas__near *tmp, int64_t *selected, size_t *nselected);
/* monna's idx: below n, and a finite row (alive may be NULL). */
int dpas__idx_check(size_t n, int64_t idx, const unsigned char *alive, dpas_error *err);
/* K = P^1/2 (centred Gram for weights p) P^1/2 over the rows rows[0..m) of D (n x n); with
 * gram (may be NULL) the centred Gram itself. r: m doubles of scratch. */
void dpas__weighted_gram(const double *D, size_t n, const size_t *rows, const double *p, size_t m,
                         double *K, double *gram, double *r);
int dpas__monna_select(const double *D, size_t n, const unsigned char *alive, size_t f, int64_t idx,
                       int64_t *selected, size_t *nselected, dpas_error *err);
/* out (n x n, may be D) = D times a power of two that brings its largest finite entry into
 * [1, 2): for the spectral work, homogeneous in D. */
void dpas__normalise_D(const double *D, size_t n, double *out);
int dpas__smea_select(const dpas__kenv *env, const double *D, size_t n, const unsigned char *alive,
                      size_t f, int64_t *selected, size_t *nselected, dpas_error *err);

/* NNM: out[i] = the mean of the n - f rows nearest to row i by D (among rows alive[]). */
int dpas__nnm_mix(const dpas__kenv *env, const void *const *x, size_t n, size_t d, const double *D,
                  const unsigned char *alive, size_t f, void *const *out, dpas_error *err);

/* ---- the rows of a stage, and the policy shared by the rules ---- */

/* The rows a stage works on: pointers, the caller's index of each (SIZE_MAX: a row made by a
 * pre-aggregation that merges rows, a bucket), their count and the Byzantine count f. */
typedef struct dpas__rowset {
    const void **rows;
    size_t *idx;
    size_t n, f;
} dpas__rowset;

int dpas__rowset_alloc(dpas__ws *ws, size_t n, dpas__rowset *s, dpas_error *err);
/* The rows of s that are not bad[], with f - k. */
int dpas__rowset_alive(dpas__ws *ws, const dpas__rowset *s, const unsigned char *bad, size_t k,
                       dpas__rowset *out, dpas_error *err);
/* n new rows of d elements (idx left to the caller); *rows their pointers: in the workspace, or
 * with env->dest and targets, the caller's output rows dest[targets[i]]. */
int dpas__rowset_new_rows(const dpas__kenv *env, size_t n, size_t d, const size_t *targets,
                          dpas__rowset *out, void ***rows, dpas_error *err);

/* The rule's condition at n and f, as an error naming them. */
int dpas__check_rule(const dpas_rule *rule, size_t n, int64_t f, dpas_error *err);
/* k rows are non-finite: fine when k <= f, else the error naming them (bad[0..n)). */
int dpas__too_many_nonfinite(const unsigned char *bad, size_t n, size_t k, size_t f,
                             const dpas_rule *rule, dpas_error *err);
/* D (n x n, zeroed by the caller) of the rows of s, the non-finite rows (bad, *k, checked
 * against s->f for rule), and for float64 the distances again on scaled rows when one between
 * finite rows overflowed or all are too small to have been summed without loss. */
int dpas__distances(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                    double *D, unsigned char *bad, size_t *k, dpas_error *err);
/* The mean of the rows rows[0..m) of x (indices), with the float64 overflow handled; a
 * non-finite row among them is an error naming `what`. */
int dpas__mean_of(const dpas__kenv *env, const void *const *x, const size_t *rows, size_t m,
                  size_t d, void *out, dpas_error *err);
/* out = sum_i w_i x_i / sum_i w_i over the rows (finite; w >= 0, not all 0), one pass. */
int dpas__weighted_mean(const dpas__kenv *env, const void *const *x, size_t n, size_t d,
                        const double *w, void *out, dpas_error *err);
/* The squared norms of the rows (finite), scaled: sq[i] = ||scale x_i||^2. */
int dpas__sqnorms(const dpas__kenv *env, const void *const *x, size_t n, size_t d, double scale,
                  double *sq, dpas_error *err);
/* Squared distances of every row to row t (out[t] = 0), the values times scale. */
int dpas__sqdist_to(const dpas__kenv *env, const void *const *x, size_t n, size_t d, size_t t,
                    double scale, double *out, dpas_error *err);

/* The pre-aggregation chain (opts.nnm, then opts.pre) on s, in place. */
int dpas__run_chain(const dpas__kenv *env, const dpas_agg_opts *o, dpas__rowset *s, size_t d,
                    dpas_error *err);
/* The fused clipping's factors applied after all (its mean overflowed): the clipped rows into
 * the workspace, s->rows pointing at them. */
int dpas__clip_apply(const dpas__kenv *env, dpas__rowset *s, size_t d, const double *factor,
                     dpas_error *err);
/* One pre-aggregation step. */
int dpas__pre_step(const dpas__kenv *env, const dpas_preagg *p, const dpas__rowset *s, size_t d,
                   dpas__rowset *out, dpas_error *err);

/* The aggregators of spectral_rules.c: MoNNA and CAF (selected: indices into s, may be NULL). */
int dpas__monna(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
                int64_t idx, void *out, int64_t *selected, size_t *nselected, dpas_error *err);
int dpas__caf(const dpas__kenv *env, const dpas_rule *rule, const dpas__rowset *s, size_t d,
              void *out, dpas_error *err);
/* The largest eigenvalue of the symmetric m x m matrix A (destroyed), and when u is not NULL
 * its unit eigenvector; by cyclic Jacobi rotations. */
double dpas__top_eigen(double *A, size_t m, double *u, double *work);

#endif
