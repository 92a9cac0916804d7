/* The AVX-512 kernels: kernels_isa.inc with sixteen floats per vector and 32 registers (AVX-512F
 * only). Compiled through function attributes, used only where the CPU and the OS have AVX-512F
 * (dpas__isa_for). */
#include "kernels_internal.h"

#ifdef DPAS__X86
#include <immintrin.h>

#include "networks.inc"

#define ISA(name) name##_avx512
#define ISA_NAME "avx512"
#define TARGET __attribute__((target("avx512f,avx2,fma")))
#define VW 16
/* 4 x 4 tiles: 16 sums and 8 loaded vectors in the 32 registers */
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
TARGET static inline vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
TARGET static inline vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
TARGET static inline vf vfma(vf e, vf acc) { return _mm512_fmadd_ps(e, e, acc); }
TARGET static inline float vhsum(vf s)
{
    /* halves in a fixed order */
    __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(s),
                              _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}
TARGET static inline void vprefetch(const float *p) { _mm_prefetch((const char *)p, _MM_HINT_T1); }

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
TARGET static inline vd vd_sum2(vf a, vf b) { return vd_add(vd_from(a), vd_from(b)); }
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
TARGET static inline vd vd_mulv(vd a, vd b)
{
    return (vd){_mm512_mul_pd(a.lo, b.lo), _mm512_mul_pd(a.hi, b.hi)};
}
TARGET static inline double vd_hsum(vd a)
{
    /* halves in a fixed order */
    __m512d s = _mm512_add_pd(a.lo, a.hi);
    __m256d q = _mm256_add_pd(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(q), _mm256_extractf128_pd(q, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
TARGET static inline vd vd_mul(vd a, double s)
{
    __m512d k = _mm512_set1_pd(s);
    return (vd){_mm512_mul_pd(a.lo, k), _mm512_mul_pd(a.hi, k)};
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

#include "kernels_isa.inc"

#else
typedef int dpas__no_avx512; /* ISO C wants a translation unit to declare something */
#endif
