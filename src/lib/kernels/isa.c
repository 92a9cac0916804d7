/* SPDX-License-Identifier: Apache-2.0 */
/* The instruction set and element type a call runs on: what the CPU has, what the options ask
 * for, and the table of kernels for the pair (kernels_generic*.c, kernels_avx2*.c,
 * kernels_avx512*.c). The bottom of the kernels: the kernels call it, it calls none of them. */
#include "kernels_internal.h"

#ifdef DPAS__X86
static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
static int have_avx512(void) { return have_avx2() && __builtin_cpu_supports("avx512f"); }
#endif

int dpas_kernel_isa_available(dpas_kernel_isa_id isa)
{
    switch (isa) {
    case DPAS_ISA_AUTO:
    case DPAS_ISA_GENERIC: return 1;
#ifdef DPAS__X86
    case DPAS_ISA_AVX2: return have_avx2();
    case DPAS_ISA_AVX512: return have_avx512();
#endif
    default: return 0;
    }
}

const dpas__isa *dpas__generic_of(int dtype)
{
    return dtype == DPAS_FLOAT64 ? &dpas__isa_generic64 : &dpas__isa_generic;
}

static const dpas__isa *isa_table(int isa, int dtype)
{
#ifdef DPAS__X86
    if (isa == DPAS_ISA_AVX512)
        return dtype == DPAS_FLOAT64 ? &dpas__isa_avx512_64 : &dpas__isa_avx512;
    if (isa == DPAS_ISA_AVX2)
        return dtype == DPAS_FLOAT64 ? &dpas__isa_avx2_64 : &dpas__isa_avx2;
#endif
    (void)isa;
    return dpas__generic_of(dtype);
}

static int best_isa(void)
{
    if (dpas_kernel_isa_available(DPAS_ISA_AVX512))
        return DPAS_ISA_AVX512;
    if (dpas_kernel_isa_available(DPAS_ISA_AVX2))
        return DPAS_ISA_AVX2;
    return DPAS_ISA_GENERIC;
}

const char *dpas_kernel_isa(void) { return isa_table(best_isa(), DPAS_FLOAT32)->name; }

int dpas__isa_for(const dpas_agg_opts *o, int dtype, const dpas__isa **isa, dpas_error *err)
{
    int want = o ? o->isa : DPAS_ISA_AUTO;
    static const char *names[] = {"auto", "generic", "avx2", "avx512"};
    if (want < DPAS_ISA_AUTO || want > DPAS_ISA_AVX512)
        return dpas__fail(err, DPAS_EINVAL, "isa",
                          "isa must be 0 (auto), 1 (generic), 2 (avx2) or 3 (avx512), got %d",
                          want);
    if (dtype != DPAS_FLOAT32 && dtype != DPAS_FLOAT64)
        return dpas__fail(err, DPAS_EINVAL, "dtype",
                          "dtype must be %d (float32) or %d (float64), got %d", DPAS_FLOAT32,
                          DPAS_FLOAT64, dtype);
    if (o && o->generic) {
        if (want != DPAS_ISA_AUTO && want != DPAS_ISA_GENERIC)
            return dpas__fail(err, DPAS_EINVAL, "isa",
                              "generic = 1 asks for the portable kernels "
                              "but isa names %s",
                              names[want]);
        want = DPAS_ISA_GENERIC;
    }
    if (want == DPAS_ISA_AUTO)
        want = best_isa();
    if (!dpas_kernel_isa_available(want))
        return dpas__fail(err, DPAS_EINVAL, "isa",
                          "isa %s is not available on this CPU (it has %s)", names[want],
                          dpas_kernel_isa());
    *isa = isa_table(want, dtype);
    return 0;
}
