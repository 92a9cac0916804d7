/* SPDX-License-Identifier: Apache-2.0 */
/* The AVX2 float64 kernels: kernels_isa.inc with four doubles per vector. Compiled for AVX2 +
 * FMA through function attributes and used only where the CPU has them (dpas__isa_for). */
#include "kernels_internal.h"

#ifdef DPAS__X86
#include <immintrin.h>

#include "networks.inc"

#define ISA(name) name##_avx2_64
#define ISA_NAME "avx2"
#define TARGET __attribute__((target("avx2,fma")))
#define ELEM double
#define DTYPE DPAS_FLOAT64
#define VW 4
#define HL 4
#define DPAS__TI 2
#define DPAS__TJ 2

typedef __m256d vf;
typedef __m256d vd;
typedef __m128i vi; /* four 32-bit counts */
typedef __m256d vm;
typedef __m256d vh;

TARGET static inline vf vload(const double *p) { return _mm256_loadu_pd(p); }
TARGET static inline void vstore(double *p, vf v) { _mm256_storeu_pd(p, v); }
TARGET static inline vf vmin(vf a, vf b) { return _mm256_min_pd(a, b); }
TARGET static inline vf vmax(vf a, vf b) { return _mm256_max_pd(a, b); }
TARGET static inline vf vzero(void) { return _mm256_setzero_pd(); }
TARGET static inline vf vchk(vf acc, vf v) { return _mm256_fmadd_pd(v, _mm256_setzero_pd(), acc); }
TARGET static inline unsigned vbad(vf acc)
{
    return _mm256_movemask_pd(_mm256_cmp_pd(acc, acc, _CMP_UNORD_Q)) != 0;
}
TARGET static inline vf vadd(vf a, vf b) { return _mm256_add_pd(a, b); }

TARGET static inline vd vd_zero(void) { return _mm256_setzero_pd(); }
TARGET static inline vd vd_from(vf v) { return v; }
TARGET static inline vd vd_add(vd a, vd b) { return _mm256_add_pd(a, b); }
TARGET static inline vd vd_sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
TARGET static inline vd vd_scale(vd a, double s) { return _mm256_mul_pd(a, _mm256_set1_pd(s)); }
TARGET static inline vd vd_escale(vd a, double s) { return vd_scale(a, s); }
TARGET static inline vd vd_hsum2(vf a, vf b)
{
    const __m256d h = _mm256_set1_pd(0.5);
    return _mm256_add_pd(_mm256_mul_pd(a, h), _mm256_mul_pd(b, h));
}
TARGET static inline vd vd_fma(vd acc, vd v, double w)
{
    return _mm256_fmadd_pd(v, _mm256_set1_pd(w), acc);
}
TARGET static inline vd vd_load(const double *p) { return _mm256_loadu_pd(p); }
TARGET static inline void vd_store(double *p, vd v) { _mm256_storeu_pd(p, v); }
TARGET static inline vd vd_div(vd a, double s) { return _mm256_div_pd(a, _mm256_set1_pd(s)); }
TARGET static inline vf vd_to(vd a) { return a; }
TARGET static inline vm vd_lt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
TARGET static inline vm vm_true(void) { return _mm256_castsi256_pd(_mm256_set1_epi32(-1)); }
TARGET static inline vm vm_and(vm a, vm b) { return _mm256_and_pd(a, b); }
TARGET static inline vm vm_andnot(vm a, vm b) { return _mm256_andnot_pd(a, b); }
TARGET static inline vd vd_add_if(vd acc, vm m, vf v)
{
    return _mm256_add_pd(acc, _mm256_and_pd(m, v));
}

/* the four 64-bit compare masks packed to 32 bits (-1 or 0) */
TARGET static inline __m128i mask32(__m256d m)
{
    __m256i p = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(m),
                                            _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    return _mm256_castsi256_si128(p);
}
TARGET static inline vi vi_zero(void) { return _mm_setzero_si128(); }
TARGET static inline vi vsign_step(vi acc, vf v)
{
    const vf z = _mm256_setzero_pd();
    acc = _mm_sub_epi32(acc, mask32(_mm256_cmp_pd(v, z, _CMP_GT_OQ)));
    return _mm_add_epi32(acc, mask32(_mm256_cmp_pd(v, z, _CMP_LT_OQ)));
}
TARGET static inline vf vsign_out(vi acc)
{
    __m128i pos = _mm_cmpgt_epi32(acc, _mm_setzero_si128());
    __m128i neg = _mm_cmpgt_epi32(_mm_setzero_si128(), acc);
    return _mm256_cvtepi32_pd(_mm_sub_epi32(neg, pos));
}

TARGET static inline vh vh_load(const double *p, double scale)
{
    return _mm256_mul_pd(_mm256_loadu_pd(p), _mm256_set1_pd(scale));
}
TARGET static inline vh vh_ld(const double *p) { return _mm256_loadu_pd(p); }
TARGET static inline void vh_st(double *p, vh v) { _mm256_storeu_pd(p, v); }
TARGET static inline vh vh_zero(void) { return _mm256_setzero_pd(); }
TARGET static inline vh vh_sub(vh a, vh b) { return _mm256_sub_pd(a, b); }
TARGET static inline vh vh_sq(vh e, vh acc) { return _mm256_fmadd_pd(e, e, acc); }

#include "kernels_isa.inc"

#else
typedef int dpas__no_avx2_64; /* ISO C wants a translation unit to declare something */
#endif
