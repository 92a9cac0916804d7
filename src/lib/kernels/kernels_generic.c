/* SPDX-License-Identifier: Apache-2.0 */
/* The portable float32 kernels: kernels_isa.inc with one float per "vector". They run the same
 * network and the same arithmetic as the SIMD sets, coordinate by coordinate, so the results
 * agree bit for bit; any range of coordinates (the SIMD sets leave their tails here). */
#include "kernels_internal.h"

#include <math.h>

#define ISA(name) name##_generic
#define ISA_NAME "generic"
#define TARGET
#define ELEM float
#define DTYPE DPAS_FLOAT32
#define VW 1
#define ESC(v, s) ((void)(s), (v))

typedef float vf;
typedef double vd;
typedef int32_t vi;
typedef int vm;

static inline vf vload(const float *p) { return *p; }
static inline void vstore(float *p, vf v) { *p = v; }
static inline vf vmin(vf a, vf b) { return a < b ? a : b; }
static inline vf vmax(vf a, vf b) { return a > b ? a : b; }
static inline vf vzero(void) { return 0.0f; }
/* 0 * v is NaN for v = +-Inf or NaN: the sum turns NaN and stays so */
static inline vf vchk(vf acc, vf v) { return acc + v * 0.0f; }
static inline unsigned vbad(vf acc) { return acc != acc; }
/* used by the SIMD sets only (their unrolled networks) */
__attribute__((unused)) static inline vf vadd(vf a, vf b) { return a + b; }

static inline vd vd_zero(void) { return 0.0; }
static inline vd vd_from(vf v) { return (double)v; }
static inline vd vd_load(const double *p) { return *p; }
static inline void vd_store(double *p, vd v) { *p = v; }
static inline vd vd_sub(vd a, vd b) { return a - b; }
static inline vd vd_add(vd a, vd b) { return a + b; }
static inline vd vd_hsum2(vf a, vf b) { return (double)a * 0.5 + (double)b * 0.5; }
static inline vd vd_scale(vd a, double s) { return a * s; }
static inline vd vd_escale(vd a, double s) { return (void)s, a; }
static inline vd vd_fma(vd acc, vd v, double w) { return fma(v, w, acc); }
static inline vd vd_div(vd a, double s) { return a / s; }
/* rounded to nearest, beyond the float range +-Inf (IEEE 754, as the SIMD conversions) */
static inline vf vd_to(vd a) { return (float)a; }
static inline vm vd_lt(vd a, vd b) { return a < b; }
static inline vm vm_true(void) { return 1; }
static inline vm vm_and(vm a, vm b) { return a && b; }
static inline vm vm_andnot(vm a, vm b) { return !a && b; }
static inline vd vd_add_if(vd acc, vm m, vf v) { return m ? acc + (double)v : acc; }

static inline vi vi_zero(void) { return 0; }
static inline vi vsign_step(vi acc, vf v) { return acc + (v > 0.0f) - (v < 0.0f); }
static inline vf vsign_out(vi acc) { return (float)((acc > 0) - (acc < 0)); }

#include "kernels_isa.inc"
