/* SPDX-License-Identifier: Apache-2.0 */
/* The AVX-512 float32 kernels: kernels_isa.inc with sixteen floats per vector and 32 registers
 * (AVX-512F only). Compiled through function attributes, used only where the CPU and the OS have AVX-512F
 * (dpas__isa_for). */
#include "kernels_internal.h"

#ifdef DPAS__X86
#include <immintrin.h>

#include "networks.inc"

#define ISA(name) name##_avx512
#define ISA_NAME "avx512"
#define TARGET __attribute__((target("avx512f,avx2,fma")))
#define ELEM float
#define DTYPE DPAS_FLOAT32
#define VW 16
/* distances: 4 x 4 tiles of 8 coordinates (8 lanes of double): 16 sums and 8 loaded vectors in
 * the 32 registers */
#define HL 8
#define DPAS__TI 4
#define DPAS__TJ 4

typedef __m512 vf;
typedef struct vd {
    __m512d lo, hi;
} vd;
typedef __m512i vi;
typedef struct vm {
    __mmask8 lo, hi;
} vm;
typedef __m512d vh;

TARGET static inline vf vload(const float *p) { return _mm512_loadu_ps(p); }
TARGET static inline void vstore(float *p, vf v) { _mm512_storeu_ps(p, v); }
TARGET static inline vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
TARGET static inline vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
TARGET static inline vf vzero(void) { return _mm512_setzero_ps(); }
TARGET static inline vf vchk(vf acc, vf v) { return _mm512_fmadd_ps(v, _mm512_setzero_ps(), acc); }
TARGET static inline unsigned vbad(vf acc)
{
    return _mm512_cmp_ps_mask(acc, acc, _CMP_UNORD_Q) != 0;
}
TARGET static inline vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }

TARGET static inline __m256 upper8(vf v)
{
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}
TARGET static inline vd vd_zero(void) { return (vd){_mm512_setzero_pd(), _mm512_setzero_pd()}; }
TARGET static inline vd vd_from(vf v)
{
    return (vd){_mm512_cvtps_pd(_mm512_castps512_ps256(v)), _mm512_cvtps_pd(upper8(v))};
}
TARGET static inline vd vd_add(vd a, vd b)
{
    return (vd){_mm512_add_pd(a.lo, b.lo), _mm512_add_pd(a.hi, b.hi)};
}
TARGET static inline vd vd_scale(vd a, double s)
{
    __m512d k = _mm512_set1_pd(s);
    return (vd){_mm512_mul_pd(a.lo, k), _mm512_mul_pd(a.hi, k)};
}
TARGET static inline vd vd_escale(vd a, double s) { return (void)s, a; }
TARGET static inline vd vd_hsum2(vf a, vf b)
{
    return vd_add(vd_scale(vd_from(a), 0.5), vd_scale(vd_from(b), 0.5));
}
TARGET static inline vd vd_fma(vd acc, vd v, double w)
{
    __m512d k = _mm512_set1_pd(w);
    return (vd){_mm512_fmadd_pd(v.lo, k, acc.lo), _mm512_fmadd_pd(v.hi, k, acc.hi)};
}
TARGET static inline vd vd_load(const double *p)
{
    return (vd){_mm512_loadu_pd(p), _mm512_loadu_pd(p + 8)};
}
TARGET static inline void vd_store(double *p, vd v)
{
    _mm512_storeu_pd(p, v.lo);
    _mm512_storeu_pd(p + 8, v.hi);
}
TARGET static inline vd vd_sub(vd a, vd b)
{
    return (vd){_mm512_sub_pd(a.lo, b.lo), _mm512_sub_pd(a.hi, b.hi)};
}
TARGET static inline vd vd_div(vd a, double s)
{
    __m512d k = _mm512_set1_pd(s);
    return (vd){_mm512_div_pd(a.lo, k), _mm512_div_pd(a.hi, k)};
}
TARGET static inline vf vd_to(vd a)
{
    __m512d lo = _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(a.lo)));
    return _mm512_castpd_ps(_mm512_insertf64x4(lo, _mm256_castps_pd(_mm512_cvtpd_ps(a.hi)), 1));
}
TARGET static inline vm vd_lt(vd a, vd b)
{
    return (vm){_mm512_cmp_pd_mask(a.lo, b.lo, _CMP_LT_OQ),
                _mm512_cmp_pd_mask(a.hi, b.hi, _CMP_LT_OQ)};
}
TARGET static inline vm vm_true(void) { return (vm){0xff, 0xff}; }
TARGET static inline vm vm_and(vm a, vm b)
{
    return (vm){(__mmask8)(a.lo & b.lo), (__mmask8)(a.hi & b.hi)};
}
TARGET static inline vm vm_andnot(vm a, vm b)
{
    return (vm){(__mmask8)(~a.lo & b.lo), (__mmask8)(~a.hi & b.hi)};
}
TARGET static inline vd vd_add_if(vd acc, vm m, vf v)
{
    vd x = vd_from(v);
    return (vd){_mm512_mask_add_pd(acc.lo, m.lo, acc.lo, x.lo),
                _mm512_mask_add_pd(acc.hi, m.hi, acc.hi, x.hi)};
}

TARGET static inline vi vi_zero(void) { return _mm512_setzero_si512(); }
TARGET static inline vi vsign_step(vi acc, vf v)
{
    const vf z = _mm512_setzero_ps();
    const vi one = _mm512_set1_epi32(1);
    acc = _mm512_mask_add_epi32(acc, _mm512_cmp_ps_mask(v, z, _CMP_GT_OQ), acc, one);
    return _mm512_mask_sub_epi32(acc, _mm512_cmp_ps_mask(v, z, _CMP_LT_OQ), acc, one);
}
TARGET static inline vf vsign_out(vi acc)
{
    const vi z = _mm512_setzero_si512();
    vf r = _mm512_setzero_ps();
    r = _mm512_mask_mov_ps(r, _mm512_cmpgt_epi32_mask(acc, z), _mm512_set1_ps(1.0f));
    return _mm512_mask_mov_ps(r, _mm512_cmplt_epi32_mask(acc, z), _mm512_set1_ps(-1.0f));
}

TARGET static inline vh vh_load(const float *p, double scale)
{
    return (void)scale, _mm512_cvtps_pd(_mm256_loadu_ps(p));
}
TARGET static inline vh vh_ld(const double *p) { return _mm512_loadu_pd(p); }
TARGET static inline void vh_st(double *p, vh v) { _mm512_storeu_pd(p, v); }
TARGET static inline vh vh_zero(void) { return _mm512_setzero_pd(); }
TARGET static inline vh vh_sub(vh a, vh b) { return _mm512_sub_pd(a, b); }
TARGET static inline vh vh_sq(vh e, vh acc) { return _mm512_fmadd_pd(e, e, acc); }

#include "kernels_isa.inc"

#else
typedef int dpas__no_avx512; /* ISO C wants a translation unit to declare something */
#endif
