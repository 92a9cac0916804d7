/* SPDX-License-Identifier: Apache-2.0 */
/* The AVX2 float32 kernels: kernels_isa.inc with eight floats per vector (lane = coordinate, so
 * rows are read as they lie in memory). Compiled for AVX2 + FMA through function attributes and
 * used only where the CPU has them (dpas__isa_for). */
#include "kernels_internal.h"

#ifdef DPAS__X86
#include <immintrin.h>

#include "networks.inc"

#define ISA(name) name##_avx2
#define ISA_NAME "avx2"
#define TARGET __attribute__((target("avx2,fma")))
#define ELEM float
#define DTYPE DPAS_FLOAT32
#define VW 8
/* distances: 2 x 2 tiles of 8 coordinates in two half steps of 4 lanes: 8 sums and 4 loaded
 * vectors in the 16 registers */
#define HL 4
#define DPAS__TI 2
#define DPAS__TJ 2

typedef __m256 vf;
typedef struct vd {
    __m256d lo, hi;
} vd;
typedef __m256i vi;
typedef vd vm; /* all-ones lanes where true */
typedef __m256d vh;

TARGET static inline vf vload(const float *p) { return _mm256_loadu_ps(p); }
TARGET static inline void vstore(float *p, vf v) { _mm256_storeu_ps(p, v); }
TARGET static inline vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
TARGET static inline vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
TARGET static inline vf vzero(void) { return _mm256_setzero_ps(); }
TARGET static inline vf vchk(vf acc, vf v) { return _mm256_fmadd_ps(v, _mm256_setzero_ps(), acc); }
TARGET static inline unsigned vbad(vf acc)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(acc, acc, _CMP_UNORD_Q)) != 0;
}
TARGET static inline vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }

TARGET static inline vd vd_zero(void) { return (vd){_mm256_setzero_pd(), _mm256_setzero_pd()}; }
TARGET static inline vd vd_from(vf v)
{
    return (vd){_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))};
}
TARGET static inline vd vd_add(vd a, vd b)
{
    return (vd){_mm256_add_pd(a.lo, b.lo), _mm256_add_pd(a.hi, b.hi)};
}
TARGET static inline vd vd_sub(vd a, vd b)
{
    return (vd){_mm256_sub_pd(a.lo, b.lo), _mm256_sub_pd(a.hi, b.hi)};
}
TARGET static inline vd vd_scale(vd a, double s)
{
    __m256d k = _mm256_set1_pd(s);
    return (vd){_mm256_mul_pd(a.lo, k), _mm256_mul_pd(a.hi, k)};
}
TARGET static inline vd vd_escale(vd a, double s) { return (void)s, a; }
TARGET static inline vd vd_hsum2(vf a, vf b)
{
    return vd_add(vd_scale(vd_from(a), 0.5), vd_scale(vd_from(b), 0.5));
}
TARGET static inline vd vd_fma(vd acc, vd v, double w)
{
    __m256d k = _mm256_set1_pd(w);
    return (vd){_mm256_fmadd_pd(v.lo, k, acc.lo), _mm256_fmadd_pd(v.hi, k, acc.hi)};
}
TARGET static inline vd vd_load(const double *p)
{
    return (vd){_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)};
}
TARGET static inline void vd_store(double *p, vd v)
{
    _mm256_storeu_pd(p, v.lo);
    _mm256_storeu_pd(p + 4, v.hi);
}
TARGET static inline vd vd_div(vd a, double s)
{
    __m256d k = _mm256_set1_pd(s);
    return (vd){_mm256_div_pd(a.lo, k), _mm256_div_pd(a.hi, k)};
}
TARGET static inline vf vd_to(vd a)
{
    return _mm256_set_m128(_mm256_cvtpd_ps(a.hi), _mm256_cvtpd_ps(a.lo));
}
TARGET static inline vm vd_lt(vd a, vd b)
{
    return (vm){_mm256_cmp_pd(a.lo, b.lo, _CMP_LT_OQ), _mm256_cmp_pd(a.hi, b.hi, _CMP_LT_OQ)};
}
TARGET static inline vm vm_true(void)
{
    __m256d t = _mm256_castsi256_pd(_mm256_set1_epi32(-1));
    return (vm){t, t};
}
TARGET static inline vm vm_and(vm a, vm b)
{
    return (vm){_mm256_and_pd(a.lo, b.lo), _mm256_and_pd(a.hi, b.hi)};
}
TARGET static inline vm vm_andnot(vm a, vm b)
{
    return (vm){_mm256_andnot_pd(a.lo, b.lo), _mm256_andnot_pd(a.hi, b.hi)};
}
/* acc + (m ? v : +0): the sum starts at +0 and never becomes -0, so adding +0 changes nothing */
TARGET static inline vd vd_add_if(vd acc, vm m, vf v)
{
    vd x = vd_from(v);
    return (vd){_mm256_add_pd(acc.lo, _mm256_and_pd(m.lo, x.lo)),
                _mm256_add_pd(acc.hi, _mm256_and_pd(m.hi, x.hi))};
}

TARGET static inline vi vi_zero(void) { return _mm256_setzero_si256(); }
TARGET static inline vi vsign_step(vi acc, vf v)
{
    const vf z = _mm256_setzero_ps(); /* compare masks are -1: minus for v > 0, plus for v < 0 */
    acc = _mm256_sub_epi32(acc, _mm256_castps_si256(_mm256_cmp_ps(v, z, _CMP_GT_OQ)));
    return _mm256_add_epi32(acc, _mm256_castps_si256(_mm256_cmp_ps(v, z, _CMP_LT_OQ)));
}
TARGET static inline vf vsign_out(vi acc)
{
    __m256i pos = _mm256_cmpgt_epi32(acc, _mm256_setzero_si256());
    __m256i neg = _mm256_cmpgt_epi32(_mm256_setzero_si256(), acc);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(neg, pos));
}

TARGET static inline vh vh_load(const float *p, double scale)
{
    return (void)scale, _mm256_cvtps_pd(_mm_loadu_ps(p));
}
TARGET static inline vh vh_ld(const double *p) { return _mm256_loadu_pd(p); }
TARGET static inline void vh_st(double *p, vh v) { _mm256_storeu_pd(p, v); }
TARGET static inline vh vh_zero(void) { return _mm256_setzero_pd(); }
TARGET static inline vh vh_sub(vh a, vh b) { return _mm256_sub_pd(a, b); }
TARGET static inline vh vh_sq(vh e, vh acc) { return _mm256_fmadd_pd(e, e, acc); }

#include "kernels_isa.inc"

#else
typedef int dpas__no_avx2; /* ISO C wants a translation unit to declare something */
#endif
