/* AVX512-BF16 microkernels: 3x3 convolutions on pairs of bfloat16 input
 * channels with VDPBF16PS, float32 sums; the register block of the AVX-512
 * set. Used for --precision bf16 on CPUs with AVX512-BF16. */
#include <stdint.h>
#include <string.h>

#include "backends/native/native_ukernel.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)

#include <immintrin.h>

#pragma GCC target("avx512f,avx512bf16")
/* FMA contraction and optimization even in Debug builds: see the generic set. */
#pragma GCC optimize("O3", "fp-contract=fast")

#define NUK_VW 16
#define NUK_CB 12
#define NUK_ISA NATIVE_ISA_AVX512
#define NUK_NAME "avx512bf16"
#define NUK_GETTER sleapc__native_ukernels_avx512bf16
#define NUK_BF16 1
#include "backends/native/native_ukernel_tmpl.h"

#else

const native_ukernels *sleapc__native_ukernels_avx512bf16(void)
{
    return NULL;
}

#endif
