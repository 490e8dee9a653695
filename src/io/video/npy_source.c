/* Frames from a uint8 .npy array, read whole at open. Accepted shapes:
 * (N, H, W, C) with C 1 or 3; (H, W, C) with C 1 or 3 as one frame (the
 * rule sleap-io's TiffVideo applies to rank-3 arrays); (N, H, W) as N
 * grayscale frames; (H, W) as one grayscale frame. Channels are taken as
 * stored: these are already-decoded frames, so no grayscale rule. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/tensor.h"
#include "io/npy/npy.h"
#include "io/video/frame_source.h"

typedef struct npy_frames {
    sleapc_tensor t;
} npy_frames;

static sleapc_status npy_frames_read(sleapc_frame_source *src, int64_t idx, uint8_t *dst)
{
    const npy_frames *nf = src->impl;
    size_t n = sleapc__frame_source_frame_bytes(src);
    memcpy(dst, (const uint8_t *)nf->t.data + (size_t)idx * n, n);
    return SLEAPC_OK;
}

static void npy_frames_close(sleapc_frame_source *src)
{
    npy_frames *nf = src->impl;
    if (!nf)
        return;
    sleapc__free(nf->t.data);
    sleapc__free(nf);
    src->impl = NULL;
}

static const struct sleapc_frame_source_ops npy_ops = {
    .kind = "npy",
    .read = npy_frames_read,
    .close = npy_frames_close,
};

sleapc_status sleapc__npy_source_open(sleapc_frame_source *src)
{
    npy_frames *nf = sleapc__calloc(1, sizeof *nf);
    if (!nf)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", src->path);
    src->ops = &npy_ops;
    src->impl = nf;
    sleapc_status st = sleapc__npy_read(src->path, &nf->t);
    if (st)
        return sleapc__wrap(st, "open video");
    const sleapc_tensor *t = &nf->t;
    if (t->dtype != SLEAPC_DTYPE_U8)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: frames must be uint8, not %s",
                            src->path, sleapc__dtype_name(t->dtype));
    const int64_t *s = t->shape;
    int64_t n = 1, h = 0, w = 0, c = 1;
    if (t->ndim == 4) {
        n = s[0], h = s[1], w = s[2], c = s[3];
    } else if (t->ndim == 3 && (s[2] == 1 || s[2] == 3)) {
        h = s[0], w = s[1], c = s[2];
    } else if (t->ndim == 3) {
        n = s[0], h = s[1], w = s[2];
    } else if (t->ndim == 2) {
        h = s[0], w = s[1];
    } else {
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "open video: %s: expected (N,H,W,C), (H,W,C), (N,H,W) or (H,W) "
                            "frames, got %d dimensions",
                            src->path, t->ndim);
    }
    if (n < 1 || h < 1 || w < 1 || (c != 1 && c != 3))
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "open video: %s: no frames of 1 or 3 channels in shape "
                            "(%lld, %lld, %lld, %lld)",
                            src->path, (long long)n, (long long)h, (long long)w, (long long)c);
    src->n_frames = n;
    src->height = h;
    src->width = w;
    src->channels = c;
    return SLEAPC_OK;
}
