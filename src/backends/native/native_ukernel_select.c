/* Picks the microkernel set the CPU can run. */
#include "backends/native/native_ukernel.h"

#include <stddef.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)
#define NATIVE_X86_DISPATCH 1
#endif

const native_ukernels *sleapc__native_ukernels_get(native_isa isa)
{
    switch (isa) {
    case NATIVE_ISA_GENERIC:
        return sleapc__native_ukernels_generic();
#ifdef NATIVE_X86_DISPATCH
    /* __builtin_cpu_supports also checks that the OS saves the registers. */
    case NATIVE_ISA_AVX2:
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            return sleapc__native_ukernels_avx2();
        return NULL;
    case NATIVE_ISA_AVX512:
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f"))
            return sleapc__native_ukernels_avx512();
        return NULL;
#endif
    case NATIVE_ISA_NEON:
        /* Baseline on AArch64: NULL from the stub everywhere else. */
        return sleapc__native_ukernels_neon();
    default:
        return NULL;
    }
}

const native_ukernels *sleapc__native_ukernels_best(void)
{
    for (int isa = NATIVE_ISA_COUNT - 1; isa > NATIVE_ISA_GENERIC; isa--) {
        const native_ukernels *uk = sleapc__native_ukernels_get((native_isa)isa);
        if (uk)
            return uk;
    }
    return sleapc__native_ukernels_generic();
}

const native_ukernels *sleapc__native_ukernels_bf16(void)
{
#ifdef NATIVE_X86_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"))
        return sleapc__native_ukernels_avx512bf16();
#endif
    return NULL;
}
