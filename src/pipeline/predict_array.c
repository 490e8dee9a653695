/* Prediction over frames the caller holds in memory: the overlapped loop with
 * a reader that copies each frame from the array into the network's layout. */
#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/frame_view.h"
#include "pipeline/predict_stream.h"

static sleapc_status array_read(void *ctx, int64_t idx, uint8_t *dst)
{
    const sleapc_frame *f = ctx;
    if (idx < 0 || idx >= f->n_frames)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "frame %lld is beyond the last frame (%lld frames)", (long long)idx,
                            (long long)f->n_frames);
    sleapc__frame_to_planes(f, idx, dst);
    return SLEAPC_OK;
}

/* 0..n-1 when the caller gives no list. */
static sleapc_status all_indices(int64_t n, int64_t **out)
{
    *out = sleapc__malloc((size_t)(n > 0 ? n : 1) * sizeof **out);
    if (!*out)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory");
    for (int64_t i = 0; i < n; i++)
        (*out)[i] = i;
    return SLEAPC_OK;
}

sleapc_status sleapc__predict_array(sleapc_predictor *p, const sleapc_frame *frames,
                                    const int64_t *frame_indices, int64_t n_indices,
                                    sleapc_writer *w, const sleapc_run_opts *opts)
{
    int64_t n = frames->n_frames;
    sleapc_frame_reader r = {.ctx = (void *)frames,
                             .height = frames->height,
                             .width = frames->width,
                             .channels = sleapc__frame_channels(frames)};
    r.read = array_read;
    int64_t *all = NULL;
    if (!frame_indices) {
        sleapc_status st = all_indices(n, &all);
        if (st)
            return st;
        frame_indices = all;
        n_indices = n;
    }
    sleapc_status st = sleapc__predict_stream(p, &r, frame_indices, n_indices, w, opts);
    sleapc__free(all);
    return st;
}
