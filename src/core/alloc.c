#include "core/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_llong fail_countdown;
static atomic_llong n_allocs;
static atomic_llong largest;

void sleapc__alloc_fail_after(int64_t n)
{
    atomic_store(&fail_countdown, (long long)n);
}

int64_t sleapc__alloc_count(void)
{
    return (int64_t)atomic_load(&n_allocs);
}

int64_t sleapc__alloc_largest(void)
{
    return (int64_t)atomic_load(&largest);
}

void sleapc__alloc_largest_reset(void)
{
    atomic_store(&largest, 0);
}

/* True when this allocation should fail (fault injection for tests). */
static int should_fail(size_t bytes)
{
    atomic_fetch_add(&n_allocs, 1);
    long long seen = atomic_load(&largest);
    while ((long long)bytes > seen &&
           !atomic_compare_exchange_weak(&largest, &seen, (long long)bytes))
        ;
    if (atomic_load(&fail_countdown) <= 0)
        return 0;
    return atomic_fetch_sub(&fail_countdown, 1) == 1;
}

void *sleapc__malloc(size_t n)
{
    if (should_fail(n))
        return NULL;
    return malloc(n ? n : 1);
}

void *sleapc__calloc(size_t count, size_t size)
{
    if (should_fail(size && count > SIZE_MAX / size ? SIZE_MAX / 2 : count * size))
        return NULL;
    if (!count || !size)
        return calloc(1, 1);
    return calloc(count, size);
}

void *sleapc__realloc(void *p, size_t n)
{
    if (should_fail(n))
        return NULL;
    return realloc(p, n ? n : 1);
}

void sleapc__free(void *p)
{
    free(p);
}

char *sleapc__strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = sleapc__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void *sleapc__aligned_alloc(size_t n)
{
    if (should_fail(n))
        return NULL;
    size_t rounded = (n + 63) / 64 * 64;
    return aligned_alloc(64, rounded ? rounded : 64);
}

void sleapc__aligned_free(void *p)
{
    free(p);
}
