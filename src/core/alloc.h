/* All heap traffic goes through these, so tests can fail the Nth allocation
 * and check that every error path frees what it took. */
#ifndef SLEAPC_CORE_ALLOC_H
#define SLEAPC_CORE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

void *sleapc__malloc(size_t n);
void *sleapc__calloc(size_t count, size_t size);
void *sleapc__realloc(void *p, size_t n);
void sleapc__free(void *p);
char *sleapc__strdup(const char *s);
/* 64-byte aligned block, freed with sleapc__aligned_free. */
void *sleapc__aligned_alloc(size_t n);
void sleapc__aligned_free(void *p);

/* Test hooks: make the Nth allocation from now fail (0 = never), and count
 * allocations made so far (for "no allocation in the per-frame loop"). */
void sleapc__alloc_fail_after(int64_t n);
int64_t sleapc__alloc_count(void);

/* The largest single block asked for since the last reset: a memory bound
 * that does not depend on the allocator or the sanitizers. */
int64_t sleapc__alloc_largest(void);
void sleapc__alloc_largest_reset(void);

#endif
