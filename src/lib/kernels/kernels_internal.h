/* Internals shared by the aggregation kernels: the per-instruction-set kernel tables, the
 * sorting network, the thread helper and the drivers. Not installed. */
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

/* The kernels of one instruction set. Each returns nonzero when it met a non-finite input value
 * (then its output is to be thrown away). Coordinates [j0, j1) with j1 - j0 a multiple of
 * width; the generic set (width 1) does any range. */
typedef struct dpas__isa {
    const char *name;
    size_t width;
    /* sort each coordinate's n values with net, then mode/a as above; scratch: n * width floats */
    unsigned (*columns)(const float *const *x, size_t n, size_t j0, size_t j1, const dpas__net *net,
                        int mode, size_t a, float *out, float *scratch);
    /* the mean of rows[0..m) (indices into x; NULL: 0..m-1), summed in double in that order */
    unsigned (*mean)(const float *const *x, const size_t *rows, size_t m, size_t j0, size_t j1,
                     float *out);
    /* the sign of the sum of signs */
    unsigned (*sign)(const float *const *x, size_t n, size_t j0, size_t j1, float *out);
    /* P[i * n + j] (i < j) = the float sum over [j0, j0 + len) of (x_i - x_j)^2, len a multiple
     * of width; with prefetch, the next len coordinates of every row are prefetched */
    void (*sqdist)(const float *const *x, size_t n, size_t j0, size_t len, int prefetch, float *P);
    /* the iterative rules' passes, in double: the sum of (x - z)^2 over [0, len), len a
     * multiple of width; out[t - j0] = sum_i w_i (x_i[t] - z[t]), or w_i x_i[t] when z is NULL,
     * for t in [j0, j1) */
    double (*dist2)(const float *x, const double *z, size_t len);
    void (*wsum)(const float *const *x, const double *w, size_t n, const double *z, size_t j0,
                 size_t j1, double *out);
} dpas__isa;

extern const dpas__isa dpas__isa_generic;
#ifdef DPAS__X86
extern const dpas__isa dpas__isa_avx2;
extern const dpas__isa dpas__isa_avx512;
#endif

/* The kernels to use for these options (opts->isa, opts->generic). */
int dpas__isa_for(const dpas_agg_opts *o, const dpas__isa **isa, dpas_error *err);

/* Run fn(ctx, t) for t = 0..parts-1 on up to `threads` threads (the calling thread included).
 * Which thread runs a part never changes what the part computes. If a thread cannot be started
 * its parts run on the calling thread. */
void dpas__parallel(int threads, size_t parts, void (*fn)(void *ctx, size_t part), void *ctx);

/* The kernel environment of one call. */
typedef struct dpas__kenv {
    const dpas__isa *isa;
    int threads;
} dpas__kenv;

/* Column rule over all coordinates; *nonfinite set when a non-finite value was met. */
int dpas__columns(const dpas__kenv *env, const float *const *x, size_t n, size_t d, int mode,
                  size_t a, float *out, int *nonfinite, dpas_error *err);
/* Mean of rows (NULL: all n), in double. */
void dpas__mean(const dpas__kenv *env, const float *const *x, const size_t *rows, size_t m,
                size_t d, float *out, int *nonfinite);
void dpas__sign(const dpas__kenv *env, const float *const *x, size_t n, size_t d, float *out,
                int *nonfinite);

/* Squared distances of all pairs added into D (n x n, both triangles); entries non-finite
 * exactly for the pairs with a non-finite row. */
int dpas__sqdist(const dpas__kenv *env, const float *const *x, size_t n, size_t d, double *D,
                 dpas_error *err);

/* bad[i] = 1 when row i has a non-finite coordinate; returns how many. */
size_t dpas__nonfinite_rows(const dpas__kenv *env, const float *const *x, size_t n, size_t d,
                            unsigned char *bad);

/* Iterative rules on rows known to be finite. */
int dpas__geomed(const dpas__kenv *env, const float *const *x, size_t n, size_t d,
                 const dpas_agg_opts *o, float *out, dpas_error *err);
int dpas__centered_clipping(const dpas__kenv *env, const float *const *x, size_t n, size_t d,
                            const dpas_agg_opts *o, float *out, dpas_error *err);

/* Selection among the rows alive[] (NULL: all) of the n x n matrix D, with f Byzantine. */
int dpas__select(const dpas_rule *rule, const double *D, size_t n, const unsigned char *alive,
                 size_t f, int64_t m, int64_t *selected, size_t *nselected, dpas_error *err);

/* NNM: out[i] = the mean of the n - f rows nearest to row i by D (among rows alive[]). */
int dpas__nnm_mix(const dpas__kenv *env, const float *const *x, size_t n, size_t d, const double *D,
                  const unsigned char *alive, size_t f, float *const *out, dpas_error *err);

#endif
