/* Per-frame scratch memory of the MOT trackers (see mot_scratch.h). */
#include "pipeline/tracking/mot/mot_scratch.h"

#include <string.h>

#include "core/alloc.h"

#define ALIGN 16

static size_t round_up(size_t n)
{
    return (n + ALIGN - 1) / ALIGN * ALIGN + (n == 0 ? ALIGN : 0);
}

void *sleapc__mot_tmp(mot_scratch *s, size_t n)
{
    n = round_up(n);
    s->asked += n;
    if (s->base && s->cap - s->used >= n) {
        void *p = s->base + s->used;
        s->used += n;
        return p;
    }
    /* over the block: a heap block for this frame, its first ALIGN bytes
     * chaining it to the others */
    unsigned char *b = sleapc__malloc(n + ALIGN);
    if (!b)
        return NULL;
    memcpy(b, &s->extra, sizeof s->extra);
    s->extra = b;
    return b + ALIGN;
}

void *sleapc__mot_tmp_zero(mot_scratch *s, size_t n)
{
    void *p = sleapc__mot_tmp(s, n);
    if (p)
        memset(p, 0, n);
    return p;
}

void sleapc__mot_scratch_reset(mot_scratch *s)
{
    const int spilled = s->extra != NULL;
    while (s->extra) {
        void *next;
        memcpy(&next, s->extra, sizeof next);
        sleapc__free(s->extra);
        s->extra = next;
    }
    if (spilled && s->asked > s->cap) {
        /* room for that frame and some growth */
        const size_t cap = s->asked + s->asked / 2;
        sleapc__free(s->base);
        s->base = sleapc__malloc(cap);
        s->cap = s->base ? cap : 0;
    }
    s->used = 0;
    s->asked = 0;
}

void sleapc__mot_scratch_free(mot_scratch *s)
{
    s->asked = 0; /* no block to grow */
    sleapc__mot_scratch_reset(s);
    sleapc__free(s->base);
    memset(s, 0, sizeof *s);
}
