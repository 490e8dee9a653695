/* Public image and video writing: check the tensor, call the encoders. */
#include "core/error.h"
#include "io/video/video_encode.h"
#include "sleapc/render.h"

sleapc_status sleapc_video_write(const char *path, const sleapc_tensor *frames, double fps,
                                 bool lossless)
{
    if (!path || !frames || !frames->data || frames->dtype != SLEAPC_DTYPE_U8 ||
        (frames->ndim != 3 && frames->ndim != 4))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write video: path and uint8 frames (N,H,W) or (N,H,W,C) are required");
    const int64_t *s = frames->shape;
    int64_t n = s[0], c = frames->ndim == 4 ? s[3] : 1;
    if (n < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write video: %s: no frames", path);
    sleapc_video_writer *w = NULL;
    /* The writer checks the frame shape before anything is sized from it. */
    sleapc_status st = sleapc__video_writer_open(path, s[1], s[2], c, fps, lossless, &w);
    if (st)
        return st;
    size_t frame_bytes = (size_t)s[1] * (size_t)s[2] * (size_t)c;
    const uint8_t *px = frames->data;
    for (int64_t k = 0; k < n; k++) {
        st = sleapc__video_writer_write(w, px + (size_t)k * frame_bytes);
        if (st) {
            sleapc__video_writer_discard(w);
            return st;
        }
    }
    return sleapc__video_writer_close(w);
}

sleapc_status sleapc_image_write_png(const char *path, const sleapc_tensor *image)
{
    if (!path || !image || !image->data || image->dtype != SLEAPC_DTYPE_U8 ||
        (image->ndim != 2 && image->ndim != 3))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write image: path and a uint8 image (H,W) or (H,W,C) are required");
    int64_t c = image->ndim == 3 ? image->shape[2] : 1;
    return sleapc__png_write(path, image->data, image->shape[0], image->shape[1], c);
}
