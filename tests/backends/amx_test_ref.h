/* References for the AMX tests: TDPBF16PS's step (one fp32 FMA with DAZ,
 * FTZ after rounding, nearest even) in exact integer arithmetic, apart from
 * the model's floating-point route, and the staging of random operands. */
#ifndef SLEAPC_TESTS_AMX_TEST_REF_H
#define SLEAPC_TESTS_AMX_TEST_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

__extension__ typedef __int128 amx_i128;
__extension__ typedef unsigned __int128 amx_u128;

/* A finite value as sign * m * 2^e (m 0 for a zero; denormals read as
 * zero). bits: the value's width (16 for bf16, 32 for fp32). */
typedef struct amx_term {
    int neg;
    uint64_t m;
    int e;
} amx_term;

static inline amx_term amx_decode(uint32_t u, int bits)
{
    int man_bits = bits == 16 ? 7 : 23;
    uint32_t sign = u >> (bits - 1), ex = (u >> man_bits) & 0xffu;
    uint32_t man = u & ((1u << man_bits) - 1);
    amx_term t = {(int)sign, 0, 0};
    if (ex == 0)
        return t; /* DAZ */
    t.m = man | (1u << man_bits);
    t.e = (int)ex - 127 - man_bits;
    return t;
}

static inline int amx_bitlen(uint64_t m)
{
    int n = 0;
    while (m >> n)
        n++;
    return n;
}

static inline float amx_ref_fma(float acc, uint16_t a, uint16_t b)
{
    uint32_t cu;
    memcpy(&cu, &acc, 4);
    amx_term c = amx_decode(cu, 32), x = amx_decode(a, 16), y = amx_decode(b, 16);
    amx_term p = {x.neg ^ y.neg, x.m * y.m, x.e + y.e};
    if (p.m == 0 && c.m == 0)
        return c.neg && p.neg ? -0.0f : 0.0f;
    /* Both at the scale 2^(top - 101), doubled, so that bits shifted out
     * leave a half: a value strictly between two integers. */
    int top_c = c.m ? c.e + amx_bitlen(c.m) : -100000,
        top_p = p.m ? p.e + amx_bitlen(p.m) : -100000;
    int top = top_c > top_p ? top_c : top_p;
    amx_i128 sum = 0;
    const amx_term *terms[2] = {&c, &p};
    for (int k = 0; k < 2; k++) {
        const amx_term *t = terms[k];
        if (!t->m)
            continue;
        int sh = t->e - (top - 101);
        amx_i128 v;
        if (sh >= 0) {
            v = ((amx_i128)t->m << sh) * 2;
        } else if (-sh >= 64) {
            v = 1; /* every bit below the scale: a half */
        } else {
            uint64_t q = t->m >> -sh;
            v = (amx_i128)q * 2 + ((q << -sh) != t->m ? 1 : 0);
        }
        sum += t->neg ? -v : v;
    }
    if (sum == 0)
        return 0.0f; /* exact cancellation: +0 */
    int neg = sum < 0;
    amx_u128 u = (amx_u128)(neg ? -sum : sum);
    int len = 0;
    while ((u >> len) != 0)
        len++;
    int e = top - 102; /* value = u * 2^e */
    if (len > 24) {
        int s = len - 24;
        amx_u128 q = u >> s, rem = u & (((amx_u128)1 << s) - 1);
        amx_u128 half = (amx_u128)1 << (s - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        u = q;
        e += s;
    }
    double v = ldexp((double)(uint64_t)u, e);
    if (v < 0x1p-126)
        return neg ? -0.0f : 0.0f; /* FTZ, tiny after rounding */
    if (v >= 0x1p128)
        return neg ? -INFINITY : INFINITY;
    return (float)(neg ? -v : v);
}

/* A deterministic stream (xorshift64*). */
static uint64_t amx_rng = 0x9e3779b97f4a7c15u;
static inline uint32_t amx_rand(void)
{
    amx_rng ^= amx_rng >> 12;
    amx_rng ^= amx_rng << 25;
    amx_rng ^= amx_rng >> 27;
    return (uint32_t)((amx_rng * 2685821657736338717u) >> 32);
}

/* A finite bf16: mostly values near 1, some denormals, zeros and extremes. */
static inline uint16_t amx_rand_bf16(void)
{
    uint32_t r = amx_rand();
    uint16_t sign = (uint16_t)((r & 1) << 15), man = (uint16_t)((r >> 1) & 0x7f);
    switch ((r >> 8) % 16) {
    case 0:
        return sign | man; /* denormal (or zero) */
    case 1:
        return (uint16_t)(sign | ((1 + (r >> 12) % 254) << 7) | man); /* any exponent */
    case 2:
        return (uint16_t)(sign | ((1 + (r >> 12) % 8) << 7) | man); /* smallest normals */
    default:
        return (uint16_t)(sign | ((120 + (r >> 12) % 10) << 7) | man); /* ~2^-7 .. 2^2 */
    }
}

#endif
