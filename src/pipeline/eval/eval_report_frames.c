/* Frames for the report's pictures: the video a labels file names, or its
 * images embedded in a package (this file or the package it names), as
 * `render` finds them. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/html/png_mem.h"
#include "io/slp/slp_images.h"
#include "io/slp/slp_read.h"
#include "io/video/frame_source.h"
#include "pipeline/eval/eval_report.h"

struct sleapc_report_frames {
    sleapc_slp *labels;
    sleapc_slp *images; /* labels, or the package it names; NULL for a video file */
    int image_video;
    sleapc_image_decoder *dec;
    sleapc_frame_source *src;
    int64_t height, width, channels, n_frames;
};

void sleapc__report_frames_close(sleapc_report_frames *f)
{
    if (!f)
        return;
    sleapc__frame_source_close(f->src);
    sleapc__image_decoder_destroy(f->dec);
    if (f->images != f->labels)
        sleapc__slp_close(f->images);
    sleapc__slp_close(f->labels);
    sleapc__free(f);
}

sleapc_report_frames *sleapc__report_frames_open(const char *labels_path, int video,
                                                 const char **why)
{
    *why = "out of memory";
    sleapc_report_frames *f = sleapc__calloc(1, sizeof *f);
    if (!f)
        return NULL;
    sleapc_status st = sleapc__slp_open(labels_path, &f->labels);
    if (!st && (video < 0 || video >= f->labels->n_videos))
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "no such video");
    if (!st) {
        const sleapc_slp_video *v = &f->labels->videos[video];
        if (v->embedded) {
            f->images = f->labels;
            f->image_video = video;
        } else if (sleapc__slp_video_in_package(f->labels, video)) {
            st = sleapc__slp_open_package_video(f->labels, video, &f->images, &f->image_video);
        }
    }
    if (!st && f->images) {
        st = sleapc__image_decoder_create(&f->dec);
        if (!st)
            st = sleapc__slp_embedded_shape(f->images, f->image_video, f->dec,
                                            "report: ", &f->height, &f->width, &f->channels,
                                            &f->n_frames);
    } else if (!st) {
        char *file = NULL;
        st = sleapc__slp_video_path(f->labels, video, &file);
        if (!st)
            st = sleapc__frame_source_open(file, &f->src);
        sleapc__free(file);
        if (!st) {
            f->height = f->src->height;
            f->width = f->src->width;
            f->channels = f->src->channels;
            f->n_frames = f->src->n_frames;
        }
    }
    if (st) {
        *why = sleapc__last_error();
        sleapc__report_frames_close(f);
        return NULL;
    }
    return f;
}

sleapc_status sleapc__report_frame_rgb(sleapc_report_frames *f, int64_t idx, uint8_t **rgb,
                                       int64_t *height, int64_t *width)
{
    *rgb = NULL;
    const size_t n_px = (size_t)(f->height * f->width);
    uint8_t *px = sleapc__malloc(n_px * (size_t)f->channels + 1);
    uint8_t *out = sleapc__malloc(n_px * 3 + 1);
    sleapc_status st = px && out ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!st && f->src) {
        st = sleapc__frame_source_read(f->src, idx, px);
    } else if (!st) {
        sleapc_decoded_image img;
        st = sleapc__slp_embedded_decode(f->images, f->image_video, idx, f->dec,
                                         "report: ", f->height, f->width, &img);
        if (!st)
            sleapc__frame_rgb_to_channels(img.rgb, n_px, f->channels, px);
    }
    if (!st) {
        for (size_t k = 0; k < n_px; k++)
            for (int c = 0; c < 3; c++)
                out[3 * k + c] = f->channels == 3 ? px[3 * k + c] : px[k];
        *rgb = out;
        *height = f->height;
        *width = f->width;
        out = NULL;
    }
    sleapc__free(px);
    sleapc__free(out);
    return st;
}

void sleapc__report_image(sleapc_rtext *t, const uint8_t *rgb, int64_t height, int64_t width,
                          int64_t x0, int64_t y0, int64_t x1, int64_t y1, int max_side,
                          const char *caption)
{
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > width ? width : x1;
    y1 = y1 > height ? height : y1;
    if (x1 <= x0 || y1 <= y0)
        return;
    const int64_t cw = x1 - x0, ch = y1 - y0;
    const int64_t side = cw > ch ? cw : ch;
    const int64_t f = (side + max_side - 1) / max_side; /* box filter, integer factor */
    const int64_t ow = cw / f > 0 ? cw / f : 1, oh = ch / f > 0 ? ch / f : 1;
    uint8_t *small = sleapc__malloc((size_t)(ow * oh * 3));
    if (!small) {
        t->failed = true;
        return;
    }
    for (int64_t y = 0; y < oh; y++)
        for (int64_t x = 0; x < ow; x++)
            for (int c = 0; c < 3; c++) {
                int64_t s = 0, n = 0;
                for (int64_t dy = 0; dy < f && y0 + y * f + dy < y1; dy++)
                    for (int64_t dx = 0; dx < f && x0 + x * f + dx < x1; dx++, n++)
                        s += rgb[((y0 + y * f + dy) * width + x0 + x * f + dx) * 3 + c];
                small[(y * ow + x) * 3 + c] = (uint8_t)(n ? (s + n / 2) / n : 0);
            }
    uint8_t *png = NULL;
    size_t n_png = 0;
    char *b64 = NULL;
    if (!sleapc__png_encode_rgb(small, oh, ow, &png, &n_png) &&
        (b64 = sleapc__base64(png, n_png))) {
        /* shown at max_side on its longer side, whatever the integer factor left */
        const double show = (double)max_side / (double)(ow > oh ? ow : oh);
        sleapc__rtext_put(t,
                          "<figure><img width=\"%.0f\" height=\"%.0f\" alt=\"frame\" "
                          "src=\"data:image/png;base64,%s\"><figcaption>",
                          (double)ow * show, (double)oh * show, b64);
        sleapc__rtext_escaped(t, caption);
        sleapc__rtext_put(t, "</figcaption></figure>\n");
    } else {
        t->failed = true;
    }
    sleapc__free(b64);
    sleapc__free(png);
    sleapc__free(small);
}
