/* Checks and reads of the public frame descriptor (frame_view.h). */
#include "pipeline/frame_view.h"

#include <string.h>

#include "core/error.h"
#include "pipeline/frame_layout.h"
#include "pipeline/stream_impl.h"

sleapc_status sleapc__frame_resolve(const sleapc_frame *in, const char *what, sleapc_frame *out)
{
    if (!in || !in->data)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: frames and their data are required", what);
    int64_t bpp = sleapc__pixel_format_bytes(in->format);
    if (!bpp)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: unknown pixel format %d", what,
                            (int)in->format);
    if (in->height < 1 || in->width < 1 || in->height > 65536 || in->width > 65536)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: frame size %lldx%lld", what,
                            (long long)in->height, (long long)in->width);
    if (in->n_frames < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: %lld frames", what,
                            (long long)in->n_frames);
    *out = *in;
    if (!out->n_frames)
        out->n_frames = 1;
    if (!out->row_stride_bytes)
        out->row_stride_bytes = in->width * bpp;
    if (out->row_stride_bytes < in->width * bpp || out->row_stride_bytes > ((int64_t)1 << 24))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "%s: row stride %lld bytes does not fit a row of %lld bytes", what,
                            (long long)out->row_stride_bytes, (long long)(in->width * bpp));
    /* Byte offsets into the frames must fit in 62 bits. */
    if (out->n_frames > ((int64_t)1 << 62) / (out->height * out->row_stride_bytes))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: %lld frames of %lldx%lld are too many",
                            what, (long long)out->n_frames, (long long)out->height,
                            (long long)out->width);
    return SLEAPC_OK;
}

int64_t sleapc__frame_channels(const sleapc_frame *f)
{
    return sleapc__pixel_format_bytes(f->format);
}

bool sleapc__frame_is_packed(const sleapc_frame *f)
{
    return f->format != SLEAPC_PIXEL_FORMAT_BGR24 &&
           f->row_stride_bytes == f->width * sleapc__pixel_format_bytes(f->format);
}

static const uint8_t *frame_start(const sleapc_frame *f, int64_t i)
{
    return f->data + (size_t)(i * f->height) * (size_t)f->row_stride_bytes;
}

void sleapc__frame_pack(const sleapc_frame *f, int64_t i, uint8_t *dst)
{
    const uint8_t *src = frame_start(f, i);
    int64_t row = f->width * sleapc__pixel_format_bytes(f->format);
    for (int64_t y = 0; y < f->height; y++, src += f->row_stride_bytes, dst += row) {
        if (f->format != SLEAPC_PIXEL_FORMAT_BGR24) {
            memcpy(dst, src, (size_t)row);
            continue;
        }
        for (int64_t x = 0; x < f->width; x++) {
            dst[3 * x] = src[3 * x + 2];
            dst[3 * x + 1] = src[3 * x + 1];
            dst[3 * x + 2] = src[3 * x];
        }
    }
}

void sleapc__frame_to_planes(const sleapc_frame *f, int64_t i, uint8_t *chw)
{
    int64_t c = sleapc__pixel_format_bytes(f->format), h = f->height, w = f->width;
    const uint8_t *src = frame_start(f, i);
    if (sleapc__frame_is_packed(f)) {
        sleapc__frame_to_chw(src, h, w, c, chw);
        return;
    }
    for (int64_t ch = 0; ch < c; ch++) {
        int64_t from = f->format == SLEAPC_PIXEL_FORMAT_BGR24 ? c - 1 - ch : ch;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++)
                chw[(ch * h + y) * w + x] = src[y * f->row_stride_bytes + x * c + from];
    }
}
