/* Microkernels for the compiler's baseline target (SSE2 on x86-64, NEON on
 * AArch64): 4-wide vectors, 16 registers. Always available. */
#include <string.h>

#include "backends/native/native_ukernel.h"

/* ISO C mode turns off a*b+c contraction; the kernels rely on FMA where the
 * target has it. They are optimized in Debug builds too: unoptimized, the
 * register blocks live in memory and whole-model tests under the sanitizers
 * take several times longer. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "fp-contract=fast")
#endif

#define NUK_VW 4
#define NUK_CB 6
#define NUK_ISA NATIVE_ISA_GENERIC
#define NUK_NAME "generic"
#define NUK_GETTER sleapc__native_ukernels_generic
#include "backends/native/native_ukernel_tmpl.h"
