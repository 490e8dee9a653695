/* Real-time prediction of one frame at a time: strided gray / RGB / BGR
 * frames are packed into the predictor's HWC layout (in a buffer kept
 * between calls), predicted as a batch of one, and timed. */
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/error.h"
#include "sleapc/stream.h"

struct sleapc_stream {
    sleapc_predictor *p;
    uint8_t *packed;     /* height * width * channels, reused while the size fits */
    size_t packed_cap;
    sleapc_stream_timing last;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

sleapc_status sleapc_stream_create(sleapc_predictor *p, sleapc_stream **out)
{
    if (!p || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create stream: predictor and out are required");
    *out = sleapc__calloc(1, sizeof **out);
    if (!*out)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create stream: out of memory");
    (*out)->p = p;
    return SLEAPC_OK;
}

void sleapc_stream_destroy(sleapc_stream *s)
{
    if (!s)
        return;
    sleapc__free(s->packed);
    sleapc__free(s);
}

static int64_t bytes_per_pixel(sleapc_pixel_format f)
{
    switch (f) {
    case SLEAPC_PIXEL_FORMAT_GRAY8: return 1;
    case SLEAPC_PIXEL_FORMAT_RGB24:
    case SLEAPC_PIXEL_FORMAT_BGR24: return 3;
    }
    return 0;
}

static sleapc_status check_frame(const sleapc_frame *f)
{
    if (!f || !f->data)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: frame and its data are required");
    int64_t bpp = bytes_per_pixel(f->format);
    if (!bpp)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: unknown pixel format %d",
                            (int)f->format);
    if (f->height < 1 || f->width < 1 || f->height > 65536 || f->width > 65536)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: frame size %lldx%lld",
                            (long long)f->height, (long long)f->width);
    if (f->row_stride_bytes < f->width * bpp)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "stream predict: row stride %lld bytes is shorter than a row (%lld)",
                            (long long)f->row_stride_bytes, (long long)(f->width * bpp));
    return SLEAPC_OK;
}

sleapc_status sleapc_stream_predict(sleapc_stream *s, const sleapc_frame *f, int *n_instances)
{
    if (n_instances)
        *n_instances = 0;
    if (!s)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream predict: stream is required");
    sleapc_status st = check_frame(f);
    if (st)
        return st;
    double t0 = now_ms();
    int64_t c = bytes_per_pixel(f->format), row = f->width * c;
    const uint8_t *pixels = f->data;
    /* Packed gray or RGB is used in place; anything else is packed first. */
    if (f->row_stride_bytes != row || f->format == SLEAPC_PIXEL_FORMAT_BGR24) {
        size_t need = (size_t)(f->height * row);
        if (need > s->packed_cap) {
            sleapc__free(s->packed);
            s->packed = sleapc__malloc(need);
            s->packed_cap = s->packed ? need : 0;
            if (!s->packed)
                return sleapc__fail(SLEAPC_ERR_NOMEM, "stream predict: out of memory");
        }
        for (int64_t y = 0; y < f->height; y++) {
            const uint8_t *src = f->data + y * f->row_stride_bytes;
            uint8_t *dst = s->packed + y * row;
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
        pixels = s->packed;
    }
    double t1 = now_ms();
    sleapc_tensor t = {SLEAPC_DTYPE_U8, 3, {f->height, f->width, c}, (void *)pixels};
    st = sleapc_predictor_run(s->p, &t);
    if (st)
        return st;
    s->last.convert_ms = t1 - t0;
    s->last.total_ms = now_ms() - t0;
    if (n_instances)
        *n_instances = sleapc_predictor_n_instances(s->p, 0);
    return SLEAPC_OK;
}

sleapc_status sleapc_stream_results(const sleapc_stream *s, int max_instances, float *points,
                                    float *point_scores, float *scores, int *tracks, int *n_out)
{
    if (!s)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "stream results: stream is required");
    return sleapc_predictor_frame_results(s->p, 0, max_instances, points, point_scores, scores,
                                          tracks, n_out);
}

sleapc_stream_timing sleapc_stream_last_timing(const sleapc_stream *s)
{
    sleapc_stream_timing none = {0};
    return s ? s->last : none;
}
