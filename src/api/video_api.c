/* Public video and image functions: check arguments, call inward. */
#include <string.h>

#include "core/alloc.h"
#include "core/compat.h"
#include "core/error.h"
#include "io/video/frame_source.h"
#include "sleapc/video.h"

struct sleapc_video {
    sleapc_frame_source *src;
};

sleapc_status sleapc_video_open(const char *path, sleapc_video **out)
{
    return sleapc_video_open_compat(path, SLEAPC_COMPAT_DEFAULT, out);
}

sleapc_status sleapc_video_open_compat(const char *path, sleapc_compat compat, sleapc_video **out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open video: path and out are required");
    *out = NULL;
    sleapc_video *v = sleapc__calloc(1, sizeof *v);
    if (!v)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    if (!sleapc__compat_valid(compat)) {
        sleapc__free(v);
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open video: %s: unknown compat value %d",
                            path, (int)compat);
    }
    sleapc_status st = sleapc__frame_source_open_rule(path, sleapc__decode_rule_of(compat), &v->src);
    if (st) {
        sleapc__free(v);
        return st;
    }
    *out = v;
    return SLEAPC_OK;
}

int64_t sleapc_video_n_frames(const sleapc_video *v)
{
    return v ? v->src->n_frames : 0;
}

void sleapc_video_shape(const sleapc_video *v, int64_t *height, int64_t *width,
                        int64_t *channels)
{
    if (height)
        *height = v ? v->src->height : 0;
    if (width)
        *width = v ? v->src->width : 0;
    if (channels)
        *channels = v ? v->src->channels : 0;
}

sleapc_status sleapc_video_read(sleapc_video *v, int64_t idx, uint8_t *dst)
{
    if (!v || !dst)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read frame: video and dst are required");
    return sleapc__frame_source_read(v->src, idx, dst);
}

void sleapc_video_close(sleapc_video *v)
{
    if (!v)
        return;
    sleapc__frame_source_close(v->src);
    sleapc__free(v);
}

sleapc_status sleapc_image_decode(const uint8_t *bytes, size_t n, int64_t *h, int64_t *w,
                                  int64_t *c, uint8_t **pixels)
{
    if (!bytes || !n || !h || !w || !c || !pixels)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "decode image: bytes, h, w, c and pixels are required");
    *pixels = NULL;
    *h = *w = *c = 0;
    sleapc_image_decoder *d = NULL;
    sleapc_status st = sleapc__image_decoder_create(&d);
    if (st)
        return st;
    sleapc_decoded_image img;
    st = sleapc__image_decoder_decode(d, bytes, n, "image in memory", &img);
    if (!st) {
        int64_t channels = img.gray_format ? 1 : 3;
        size_t n_px = (size_t)img.height * (size_t)img.width;
        uint8_t *px = sleapc__malloc(n_px * (size_t)channels);
        if (!px) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "decode image: out of memory");
        } else {
            sleapc__frame_rgb_to_channels(img.rgb, n_px, channels, px);
            *pixels = px;
            *h = img.height;
            *w = img.width;
            *c = channels;
        }
    }
    sleapc__image_decoder_destroy(d);
    return st;
}

void sleapc_free(void *p)
{
    sleapc__free(p);
}
