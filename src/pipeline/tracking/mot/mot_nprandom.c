/* numpy's SeedSequence, PCG64 and choice without replacement (see
 * mot_nprandom.h). */
#include "pipeline/tracking/mot/mot_nprandom.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

/* SeedSequence's hashing constants. */
#define INIT_A 0x43b0d7e5u
#define MULT_A 0x931e8875u
#define INIT_B 0x8b51f9ddu
#define MULT_B 0x58f38dedu
#define MIX_MULT_L 0xca01f9ddu
#define MIX_MULT_R 0x4973f715u
#define POOL_SIZE 4

static uint32_t hashmix(uint32_t value, uint32_t *hash_const)
{
    value ^= *hash_const;
    *hash_const *= MULT_A;
    value *= *hash_const;
    return value ^ (value >> 16);
}

static uint32_t mix(uint32_t x, uint32_t y)
{
    uint32_t r = MIX_MULT_L * x - MIX_MULT_R * y;
    return r ^ (r >> 16);
}

/* 64 x 64 -> 128-bit product. */
static void mul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* PCG's default 128-bit multiplier. */
#define PCG_MULT_HI 2549297995355413924ULL
#define PCG_MULT_LO 4865540595714422341ULL

static void pcg_step(mot_pcg64 *g)
{
    uint64_t hi, lo;
    mul64(g->state_lo, PCG_MULT_LO, &hi, &lo);
    hi += g->state_lo * PCG_MULT_HI + g->state_hi * PCG_MULT_LO;
    const uint64_t lo2 = lo + g->inc_lo;
    g->state_hi = hi + g->inc_hi + (lo2 < lo);
    g->state_lo = lo2;
}

void sleapc__mot_pcg64_seed(mot_pcg64 *g, const uint32_t *words, int n_words)
{
    /* SeedSequence.mix_entropy over a pool of 4 words */
    uint32_t pool[POOL_SIZE], hc = INIT_A;
    for (int i = 0; i < POOL_SIZE; i++)
        pool[i] = hashmix(i < n_words ? words[i] : 0u, &hc);
    for (int s = 0; s < POOL_SIZE; s++)
        for (int d = 0; d < POOL_SIZE; d++)
            if (s != d)
                pool[d] = mix(pool[d], hashmix(pool[s], &hc));
    for (int s = POOL_SIZE; s < n_words; s++)
        for (int d = 0; d < POOL_SIZE; d++)
            pool[d] = mix(pool[d], hashmix(words[s], &hc));
    /* generate_state(4, uint64): 8 words, paired little-endian */
    uint32_t st[8];
    uint32_t hb = INIT_B;
    for (int i = 0; i < 8; i++) {
        uint32_t x = pool[i % POOL_SIZE] ^ hb;
        hb *= MULT_B;
        x *= hb;
        st[i] = x ^ (x >> 16);
    }
    uint64_t v[4];
    for (int i = 0; i < 4; i++)
        v[i] = (uint64_t)st[2 * i] | ((uint64_t)st[2 * i + 1] << 32);
    /* pcg64_set_seed: state v[0]:v[1], sequence v[2]:v[3] */
    memset(g, 0, sizeof *g);
    g->inc_hi = (v[2] << 1) | (v[3] >> 63);
    g->inc_lo = (v[3] << 1) | 1u;
    pcg_step(g);
    const uint64_t lo = g->state_lo + v[1];
    g->state_hi += v[0] + (lo < g->state_lo);
    g->state_lo = lo;
    pcg_step(g);
}

uint64_t sleapc__mot_pcg64_next64(mot_pcg64 *g)
{
    pcg_step(g);
    const unsigned rot = (unsigned)(g->state_hi >> 58);
    const uint64_t x = g->state_hi ^ g->state_lo;
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

static uint32_t next32(mot_pcg64 *g)
{
    if (g->has_uint32) {
        g->has_uint32 = false;
        return g->uinteger;
    }
    const uint64_t x = sleapc__mot_pcg64_next64(g);
    g->has_uint32 = true;
    g->uinteger = (uint32_t)(x >> 32);
    return (uint32_t)x;
}

/* random_bounded_uint64(0, rng) unmasked: Lemire's method, 32-bit when the
 * range fits. */
static uint64_t bounded(mot_pcg64 *g, uint64_t rng)
{
    if (rng == 0)
        return 0;
    if (rng <= 0xffffffffu) {
        if (rng == 0xffffffffu)
            return next32(g);
        const uint32_t excl = (uint32_t)rng + 1u;
        uint64_t m = (uint64_t)next32(g) * excl;
        uint32_t left = (uint32_t)m;
        if (left < excl) {
            const uint32_t threshold = (UINT32_MAX - (uint32_t)rng) % excl;
            while (left < threshold) {
                m = (uint64_t)next32(g) * excl;
                left = (uint32_t)m;
            }
        }
        return m >> 32;
    }
    if (rng == UINT64_MAX)
        return sleapc__mot_pcg64_next64(g);
    const uint64_t excl = rng + 1;
    uint64_t hi, lo;
    mul64(sleapc__mot_pcg64_next64(g), excl, &hi, &lo);
    if (lo < excl) {
        const uint64_t threshold = (UINT64_MAX - rng) % excl;
        while (lo < threshold)
            mul64(sleapc__mot_pcg64_next64(g), excl, &hi, &lo);
    }
    return hi;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

sleapc_status sleapc__mot_choice_sorted(mot_pcg64 *g, int64_t pop, int64_t size, int64_t *out)
{
    if (size < 0 || size > pop)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "tracking: cannot choose %lld of %lld without replacement",
                            (long long)size, (long long)pop);
    if (size == 0)
        return SLEAPC_OK;
    if (pop > 10000 && size > pop / 50) {
        /* tail shuffle of 0 .. pop - 1; the last size entries */
        int64_t *idx = sleapc__malloc((size_t)pop * sizeof *idx);
        if (!idx)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        for (int64_t i = 0; i < pop; i++)
            idx[i] = i;
        const int64_t first = pop - size > 1 ? pop - size : 1;
        for (int64_t i = pop - 1; i >= first; i--) {
            const int64_t j = (int64_t)bounded(g, (uint64_t)i);
            const int64_t t = idx[j];
            idx[j] = idx[i];
            idx[i] = t;
        }
        memcpy(out, idx + (pop - size), (size_t)size * sizeof *out);
        sleapc__free(idx);
    } else {
        /* Floyd's algorithm over an open-addressing set of 2^k slots, the
         * smallest power of two above 1.2 size (as numpy sizes it) */
        uint64_t set_size = (uint64_t)(1.2 * (double)size), mask = 0;
        while (mask < set_size)
            mask = (mask << 1) | 1u;
        uint64_t *set = sleapc__malloc((size_t)(mask + 1) * sizeof *set);
        if (!set)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        memset(set, 0xff, (size_t)(mask + 1) * sizeof *set);
        for (int64_t j = pop - size; j < pop; j++) {
            const uint64_t val = bounded(g, (uint64_t)j);
            uint64_t loc = val & mask;
            while (set[loc] != UINT64_MAX && set[loc] != val)
                loc = (loc + 1) & mask;
            uint64_t put = val;
            if (set[loc] != UINT64_MAX) { /* drawn before: take j */
                put = (uint64_t)j;
                loc = put & mask;
                while (set[loc] != UINT64_MAX)
                    loc = (loc + 1) & mask;
            }
            set[loc] = put;
            out[j - (pop - size)] = (int64_t)put;
        }
        sleapc__free(set);
    }
    /* numpy shuffles the draw next; the caller sorts it, so the order
     * (and the shuffle's draws) never matter */
    qsort(out, (size_t)size, sizeof *out, cmp_i64);
    return SLEAPC_OK;
}
