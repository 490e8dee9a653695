/* AVX-512F microkernels: 16-wide vectors, 32 registers, hence twice the
 * output channels per block of the AVX2 set. Used only when the CPU (and OS)
 * has AVX-512F. */
#include <string.h>

#include "backends/native/native_ukernel.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)

#pragma GCC target("avx512f")
/* FMA contraction and optimization even in Debug builds: see the generic set. */
#pragma GCC optimize("O3", "fp-contract=fast")

#define NUK_VW 16
#define NUK_CB 12
#define NUK_ISA NATIVE_ISA_AVX512
#define NUK_NAME "avx512"
#define NUK_GETTER sleapc__native_ukernels_avx512
#include "backends/native/native_ukernel_tmpl.h"

#else

const native_ukernels *sleapc__native_ukernels_avx512(void)
{
    return NULL;
}

#endif
