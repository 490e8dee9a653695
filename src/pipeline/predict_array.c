/* Prediction over frames the caller holds in memory: the overlapped loop with
 * a reader that copies from the array. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/predict_stream.h"

typedef struct array_ctx {
    const uint8_t *data;
    int64_t n;
    size_t frame_bytes;
} array_ctx;

static sleapc_status array_read(void *ctx, int64_t idx, uint8_t *dst)
{
    const array_ctx *a = ctx;
    if (idx < 0 || idx >= a->n)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "frame %lld is beyond the last frame (%lld frames)",
                            (long long)idx, (long long)a->n);
    memcpy(dst, a->data + (size_t)idx * a->frame_bytes, a->frame_bytes);
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

sleapc_status sleapc__predict_array(sleapc_predictor *p, const sleapc_tensor *frames,
                                    const int64_t *frame_indices, int64_t n_indices,
                                    sleapc_writer *w, const sleapc_run_opts *opts)
{
    const int64_t *s = frames->shape;
    int64_t n = frames->ndim == 4 ? s[0] : 1;
    int64_t off = frames->ndim == 4 ? 1 : 0;
    sleapc_frame_reader r = {.height = s[off], .width = s[off + 1],
                             .channels = frames->ndim == 2 ? 1 : s[off + 2]};
    if (n < 1 || r.height < 1 || r.width < 1 || r.channels < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: empty frames");
    array_ctx ctx = {.data = frames->data, .n = n,
                     .frame_bytes = (size_t)(r.height * r.width * r.channels)};
    r.ctx = &ctx;
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
