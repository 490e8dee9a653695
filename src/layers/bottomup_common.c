#include "layers/bottomup_common.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/coords.h"
#include "layers/ops/peaks.h"
#include "layers/ops/peaks_sleap1.h"

void sleapc__peak_list_free(sleapc_peak_list *pl)
{
    if (!pl)
        return;
    sleapc__free(pl->peaks);
    sleapc__free(pl->vals);
    sleapc__free(pl->sample_inds);
    sleapc__free(pl->channel_inds);
    memset(pl, 0, sizeof *pl);
}

sleapc_status sleapc__peak_list_find(sleapc_peak_list *pl, const float *cms, int64_t b, int64_t c,
                                     int64_t h, int64_t w, double threshold, int refine_k,
                                     int stride, bool sleap1)
{
    int64_t bound = sleapc__peaks_local_max_count(b, c, h, w);
    if (bound < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "peaks: confidence maps too large");
    if (bound < 1)
        bound = 1;
    if (bound > pl->cap) {
        sleapc__peak_list_free(pl);
        size_t n = (size_t)bound;
        pl->peaks = sleapc__malloc(n * 2 * sizeof(float));
        pl->vals = sleapc__malloc(n * sizeof(float));
        pl->sample_inds = sleapc__malloc(n * sizeof(int32_t));
        pl->channel_inds = sleapc__malloc(n * sizeof(int32_t));
        if (!pl->peaks || !pl->vals || !pl->sample_inds || !pl->channel_inds) {
            sleapc__peak_list_free(pl);
            return sleapc__fail(SLEAPC_ERR_NOMEM, "peaks: out of memory");
        }
        pl->cap = bound;
    }
    sleapc_status st =
        sleap1 ? sleapc__peaks_sleap1_find_local(cms, b, c, h, w, threshold, refine_k, pl->cap,
                                                 pl->peaks, pl->vals, pl->sample_inds,
                                                 pl->channel_inds, &pl->n)
               : sleapc__peaks_find_local(cms, b, c, h, w, threshold, refine_k, pl->cap,
                                          pl->peaks, pl->vals, pl->sample_inds,
                                          pl->channel_inds, &pl->n);
    if (st)
        return st;
    sleapc__coords_undo_stride(pl->peaks, pl->n, stride);
    return SLEAPC_OK;
}
