#include "io/slp/slp_images.h"

#include "core/error.h"

sleapc_status sleapc__slp_embedded_shape(sleapc_slp *r, int video, sleapc_image_decoder *dec,
                                         const char *who, int64_t *height, int64_t *width,
                                         int64_t *channels, int64_t *n_frames)
{
    const sleapc_slp_video *v = &r->videos[video];
    if (v->n_embedded < 1)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s%s: video %d has no embedded images", who,
                            r->path, video);
    const uint8_t *bytes;
    size_t n;
    sleapc_decoded_image img;
    sleapc_status st = sleapc__slp_embedded_frame(r, video, v->frame_numbers[0], &bytes, &n, NULL);
    if (!st)
        st = sleapc__image_decoder_decode(dec, bytes, n, r->path, &img);
    if (st)
        return st;
    *height = img.height;
    *width = img.width;
    *channels = img.gray_format ? 1 : 3;
    int64_t last = 0;
    for (int64_t k = 0; k < v->n_embedded; k++)
        last = v->frame_numbers[k] > last ? v->frame_numbers[k] : last;
    *n_frames = v->n_frames > last ? v->n_frames : last + 1;
    return SLEAPC_OK;
}

sleapc_status sleapc__slp_embedded_decode(sleapc_slp *r, int video, int64_t idx,
                                          sleapc_image_decoder *dec, const char *who,
                                          int64_t height, int64_t width, sleapc_decoded_image *img)
{
    const uint8_t *bytes;
    size_t n;
    sleapc_status st = sleapc__slp_embedded_frame(r, video, idx, &bytes, &n, NULL);
    if (!st)
        st = sleapc__image_decoder_decode(dec, bytes, n, r->path, img);
    if (st)
        return st;
    if (img->height != height || img->width != width)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s%s: embedded frame %lld is %lldx%lld, not %lldx%lld",
                            who, r->path, (long long)idx, (long long)img->height,
                            (long long)img->width, (long long)height, (long long)width);
    return SLEAPC_OK;
}
