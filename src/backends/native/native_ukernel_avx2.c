/* AVX2 + FMA microkernels: 8-wide vectors, 16 registers. Compiled for that
 * target whatever the build flags; used only when the CPU has it. */
#include <string.h>

#include "backends/native/native_ukernel.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)

#pragma GCC target("avx2,fma")
/* FMA contraction and optimization even in Debug builds: see the generic set. */
#pragma GCC optimize("O3", "fp-contract=fast")

#define NUK_VW 8
#define NUK_CB 6
#define NUK_ISA NATIVE_ISA_AVX2
#define NUK_NAME "avx2"
#define NUK_GETTER sleapc__native_ukernels_avx2
#include "backends/native/native_ukernel_tmpl.h"

#else

const native_ukernels *sleapc__native_ukernels_avx2(void)
{
    return NULL;
}

#endif
