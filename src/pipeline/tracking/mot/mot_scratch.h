/* A MOT tracker's working memory for one frame: association matrices and
 * index lists are carved from one block that is reset at every frame and
 * sized to the largest frame seen, so a steady stream of frames stops
 * allocating once it has seen its largest frame. What does not fit in the
 * block comes from the heap for that frame alone. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_SCRATCH_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_SCRATCH_H

#include <stddef.h>

typedef struct mot_scratch {
    unsigned char *base;
    size_t cap, used;
    size_t asked; /* bytes asked since the last reset */
    void *extra;  /* this frame's heap blocks, chained by their first word */
} mot_scratch;

/* n bytes (aligned for any scalar) until the next reset; NULL when out of
 * memory. */
void *sleapc__mot_tmp(mot_scratch *s, size_t n);

/* The same, zeroed. */
void *sleapc__mot_tmp_zero(mot_scratch *s, size_t n);

/* Forgets every block handed out; the block grows to what the last frame
 * asked for when that did not fit. */
void sleapc__mot_scratch_reset(mot_scratch *s);

void sleapc__mot_scratch_free(mot_scratch *s);

#endif
