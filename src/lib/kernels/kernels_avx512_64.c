/* SPDX-License-Identifier: Apache-2.0 */
/* The AVX-512 float64 kernels: kernels_isa.inc with eight doubles per vector and 32 registers
 * (AVX-512F only). Compiled through function attributes, used only where the CPU and the OS have
 * AVX-512F (dpas__isa_for). */
#include "kernels_internal.h"

#ifdef DPAS__X86
#include <immintrin.h>

#include "networks.inc"

#define ISA(name) name##_avx512_64
#define ISA_NAME "avx512"
#define TARGET __attribute__((target("avx512f,avx2,fma")))
#define ELEM double
#define DTYPE DPAS_FLOAT64
#define VW 8
#define HL 8
#define DPAS__TI 4
#define DPAS__TJ 4

typedef __m512d vf;
typedef __m512d vd;
typedef __m512i vi; /* eight 64-bit counts */
typedef __mmask8 vm;
typedef __m512d vh;

TARGET static inline vf vload(const double *p) { return _mm512_loadu_pd(p); }
TARGET static inline void vstore(double *p, vf v) { _mm512_storeu_pd(p, v); }
TARGET static inline vf vmin(vf a, vf b) { return _mm512_min_pd(a, b); }
TARGET static inline vf vmax(vf a, vf b) { return _mm512_max_pd(a, b); }
TARGET static inline vf vzero(void) { return _mm512_setzero_pd(); }
TARGET static inline vf vchk(vf acc, vf v) { return _mm512_fmadd_pd(v, _mm512_setzero_pd(), acc); }
TARGET static inline unsigned vbad(vf acc)
{
    return _mm512_cmp_pd_mask(acc, acc, _CMP_UNORD_Q) != 0;
}
TARGET static inline vf vadd(vf a, vf b) { return _mm512_add_pd(a, b); }

TARGET static inline vd vd_zero(void) { return _mm512_setzero_pd(); }
TARGET static inline vd vd_from(vf v) { return v; }
TARGET static inline vd vd_add(vd a, vd b) { return _mm512_add_pd(a, b); }
TARGET static inline vd vd_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
TARGET static inline vd vd_scale(vd a, double s) { return _mm512_mul_pd(a, _mm512_set1_pd(s)); }
TARGET static inline vd vd_escale(vd a, double s) { return vd_scale(a, s); }
TARGET static inline vd vd_hsum2(vf a, vf b)
{
    const __m512d h = _mm512_set1_pd(0.5);
    return _mm512_add_pd(_mm512_mul_pd(a, h), _mm512_mul_pd(b, h));
}
TARGET static inline vd vd_fma(vd acc, vd v, double w)
{
    return _mm512_fmadd_pd(v, _mm512_set1_pd(w), acc);
}
TARGET static inline vd vd_load(const double *p) { return _mm512_loadu_pd(p); }
TARGET static inline void vd_store(double *p, vd v) { _mm512_storeu_pd(p, v); }
TARGET static inline vd vd_div(vd a, double s) { return _mm512_div_pd(a, _mm512_set1_pd(s)); }
TARGET static inline vf vd_to(vd a) { return a; }
TARGET static inline vm vd_lt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
TARGET static inline vm vm_true(void) { return 0xff; }
TARGET static inline vm vm_and(vm a, vm b) { return (vm)(a & b); }
TARGET static inline vm vm_andnot(vm a, vm b) { return (vm)(~a & b); }
TARGET static inline vd vd_add_if(vd acc, vm m, vf v) { return _mm512_mask_add_pd(acc, m, acc, v); }

TARGET static inline vi vi_zero(void) { return _mm512_setzero_si512(); }
TARGET static inline vi vsign_step(vi acc, vf v)
{
    const vf z = _mm512_setzero_pd();
    const vi one = _mm512_set1_epi64(1);
    acc = _mm512_mask_add_epi64(acc, _mm512_cmp_pd_mask(v, z, _CMP_GT_OQ), acc, one);
    return _mm512_mask_sub_epi64(acc, _mm512_cmp_pd_mask(v, z, _CMP_LT_OQ), acc, one);
}
TARGET static inline vf vsign_out(vi acc)
{
    const vi z = _mm512_setzero_si512();
    vf r = _mm512_setzero_pd();
    r = _mm512_mask_mov_pd(r, _mm512_cmpgt_epi64_mask(acc, z), _mm512_set1_pd(1.0));
    return _mm512_mask_mov_pd(r, _mm512_cmplt_epi64_mask(acc, z), _mm512_set1_pd(-1.0));
}

TARGET static inline vh vh_load(const double *p, double scale)
{
    return _mm512_mul_pd(_mm512_loadu_pd(p), _mm512_set1_pd(scale));
}
TARGET static inline vh vh_ld(const double *p) { return _mm512_loadu_pd(p); }
TARGET static inline void vh_st(double *p, vh v) { _mm512_storeu_pd(p, v); }
TARGET static inline vh vh_zero(void) { return _mm512_setzero_pd(); }
TARGET static inline vh vh_sub(vh a, vh b) { return _mm512_sub_pd(a, b); }
TARGET static inline vh vh_sq(vh e, vh acc) { return _mm512_fmadd_pd(e, e, acc); }

#include "kernels_isa.inc"

#else
typedef int dpas__no_avx512_64; /* ISO C wants a translation unit to declare something */
#endif
