/* The AVX2 kernels: kernels_isa.inc with eight floats per vector (lane = coordinate, so rows
 * are read as they lie in memory). Compiled for AVX2 + FMA through function attributes and used
 * only where the CPU has them (dpas__isa_for). */
#include "kernels_internal.h"

#ifdef DPAS__X86
#include <immintrin.h>

#include "networks.inc"

#define ISA(name) name##_avx2
#define ISA_NAME "avx2"
#define TARGET __attribute__((target("avx2,fma")))
#define VW 8
/* 2 x 4 tiles: 8 sums and 6 loaded vectors in the 16 registers */
#define DPAS__TI 2
#define DPAS__TJ 4

typedef __m256 vf;
typedef struct vd {
    __m256d lo, hi;
} vd;
typedef __m256i vi;
typedef vd vm; /* all-ones lanes where true */

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
TARGET static inline vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
TARGET static inline vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
TARGET static inline vf vfma(vf e, vf acc) { return _mm256_fmadd_ps(e, e, acc); }
TARGET static inline float vhsum(vf s)
{
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}
TARGET static inline void vprefetch(const float *p) { _mm_prefetch((const char *)p, _MM_HINT_T1); }

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
TARGET static inline vd vd_sum2(vf a, vf b) { return vd_add(vd_from(a), vd_from(b)); }
TARGET static inline vd vd_load(const double *p)
{
    return (vd){_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)};
}
TARGET static inline void vd_store(double *p, vd v)
{
    _mm256_storeu_pd(p, v.lo);
    _mm256_storeu_pd(p + 4, v.hi);
}
TARGET static inline vd vd_sub(vd a, vd b)
{
    return (vd){_mm256_sub_pd(a.lo, b.lo), _mm256_sub_pd(a.hi, b.hi)};
}
TARGET static inline vd vd_mulv(vd a, vd b)
{
    return (vd){_mm256_mul_pd(a.lo, b.lo), _mm256_mul_pd(a.hi, b.hi)};
}
TARGET static inline double vd_hsum(vd a)
{
    __m256d s = _mm256_add_pd(a.lo, a.hi);
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
TARGET static inline vd vd_mul(vd a, double s)
{
    __m256d k = _mm256_set1_pd(s);
    return (vd){_mm256_mul_pd(a.lo, k), _mm256_mul_pd(a.hi, k)};
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

#include "kernels_isa.inc"

#else
typedef int dpas__no_avx2; /* ISO C wants a translation unit to declare something */
#endif
