/* Local peaks of a bottom-up confidence map in model-input pixels, shared by
 * BottomUpLayer and BottomUpMultiClassLayer. */
#ifndef SLEAPC_LAYERS_BOTTOMUP_COMMON_H
#define SLEAPC_LAYERS_BOTTOMUP_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_peak_list {
    int64_t n;               /* peaks found */
    int64_t cap;
    float *peaks;            /* (cap, 2) x, y in input pixels (grid peak x stride) */
    float *vals;             /* (cap) */
    int32_t *sample_inds;    /* (cap) */
    int32_t *channel_inds;   /* (cap) */
} sleapc_peak_list;

/* Local peaks (refined when refine_k > 0) of cms (b, c, h, w), multiplied by
 * stride. sleap1: SLEAP 1.x's refinement (peaks_sleap1.h; refine_k 0 is its
 * "local" refinement). The arrays grow as needed and are reused. */
sleapc_status sleapc__peak_list_find(sleapc_peak_list *pl, const float *cms, int64_t b, int64_t c,
                                     int64_t h, int64_t w, double threshold, int refine_k,
                                     int stride, bool sleap1);
void sleapc__peak_list_free(sleapc_peak_list *pl);

#endif
