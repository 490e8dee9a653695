/* A fast 64-bit content hash (not cryptographic): what keys a cache entry
 * to the bytes it was measured for. */
#ifndef SLEAPC_CORE_HASH_H
#define SLEAPC_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Continue hash h over n bytes of p (h = 0 to start). */
uint64_t sleapc__hash64(uint64_t h, const void *p, size_t n);

#endif
