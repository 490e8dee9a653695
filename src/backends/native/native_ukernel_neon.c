/* AArch64 NEON (Advanced SIMD) microkernels: 4-wide vectors and 32
 * registers, so a step holds 12 output channels x 2 vectors of columns: 24
 * accumulators, the 2 input vectors and the weights of one tap as 3 vectors
 * of 4 (29 registers). Weights are loaded 4 at a time and used with FMLA by
 * element (fmla vd.4s, vn.4s, vm.s[lane]): per tap 5 loads for 24 FMAs,
 * where one broadcast per weight would take 14 and, at 12 channels, more
 * registers than there are. NEON is part of the AArch64 baseline, so the set
 * is always usable there; elsewhere it is not built. */
#include <string.h>

#include "backends/native/native_ukernel.h"

#if defined(__aarch64__) && defined(__GNUC__) && !defined(__clang__)

#include <arm_neon.h>

/* FMA contraction and optimization even in Debug builds: see the generic set. */
#pragma GCC optimize("O3", "fp-contract=fast")

/* n (1..4) weights from p as one vector, reading no further than p[n - 1]
 * (the last block's last tap ends its packed weights); lanes from n on are
 * never used. n is a constant after inlining. */
static inline __attribute__((always_inline)) float32x4_t neon_weights(const float *p, int n)
{
    if (n >= 4)
        return vld1q_f32(p);
    if (n == 3)
        return vcombine_f32(vld1_f32(p), vld1_dup_f32(p + 2));
    if (n == 2)
        return vcombine_f32(vld1_f32(p), vld1_f32(p));
    return vld1q_dup_f32(p);
}

/* One tap of the register block: acc[c][v] += wp[c] * in[v], acc and in
 * the template's nuk_vec (the same 4 x float vector as float32x4_t, so a
 * macro: the arrays' pointer types differ). cb and nv are constants after
 * inlining, so every loop unrolls and w[j] is a constant lane, which GCC
 * turns into FMLA by element. (vfmaq_laneq_f32 here made GCC 12 store all 24
 * accumulators to the stack in every loop pass.) */
#define NEON_LANE(acc, in, w, g, j, cb, nv)                                     \
    if ((g) + (j) < (cb))                                                       \
        for (int v_ = 0; v_ < (nv); v_++)                                       \
            acc[(g) + (j)][v_] += in[v_] * w[(j)];

#define NEON_TAP(acc, in, wp, cb, nv)                                           \
    for (int g_ = 0; g_ < (cb); g_ += 4) {                                      \
        float32x4_t w_ = neon_weights((wp) + g_, (cb) - g_);                    \
        NEON_LANE(acc, in, w_, g_, 0, cb, nv)                                   \
        NEON_LANE(acc, in, w_, g_, 1, cb, nv)                                   \
        NEON_LANE(acc, in, w_, g_, 2, cb, nv)                                   \
        NEON_LANE(acc, in, w_, g_, 3, cb, nv)                                   \
    }

#define NUK_VW 4
#define NUK_CB 12
#define NUK_ISA NATIVE_ISA_NEON
#define NUK_NAME "neon"
#define NUK_GETTER sleapc__native_ukernels_neon
#define NUK_TAP NEON_TAP
#include "backends/native/native_ukernel_tmpl.h"

#else

const native_ukernels *sleapc__native_ukernels_neon(void)
{
    return NULL;
}

#endif
