#include "core/hash.h"

#include <string.h>

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t mix(uint64_t h, uint64_t w)
{
    return rotl(h ^ (w * P2), 31) * P1;
}

/* Four independent lanes over 32-byte blocks keep the multipliers busy (a
 * model's weights, tens of MB, hash in milliseconds), then the tail. */
uint64_t sleapc__hash64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t lane[4] = {h ^ P1, h ^ P2, h + P1, h - P2};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, b + i + 8 * k, 8);
            lane[k] = mix(lane[k], w);
        }
    uint64_t out = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18);
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        out = mix(out, w);
    }
    uint64_t tail = 0;
    memcpy(&tail, b + i, n - i);
    out = mix(out, tail ^ ((uint64_t)(n - i) << 56));
    out ^= (uint64_t)n * P2;
    out ^= out >> 33;
    out *= P1;
    out ^= out >> 29;
    return out;
}
