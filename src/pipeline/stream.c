/* Real-time prediction of one frame at a time: strided gray / RGB / BGR
 * frames are packed into the predictor's HWC layout (in a buffer kept
 * between calls), predicted as a batch of one, and timed. */
#include <time.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/frame_view.h"
#include "pipeline/predictor_impl.h"
#include "pipeline/stream_impl.h"

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

int64_t sleapc__pixel_format_bytes(sleapc_pixel_format f)
{
    switch (f) {
    case SLEAPC_PIXEL_FORMAT_GRAY8: return 1;
    case SLEAPC_PIXEL_FORMAT_RGB24:
    case SLEAPC_PIXEL_FORMAT_BGR24: return 3;
    }
    return 0;
}

sleapc_status sleapc__stream_create(sleapc_predictor *p, sleapc_stream **out)
{
    *out = sleapc__calloc(1, sizeof **out);
    if (!*out)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create stream: out of memory");
    (*out)->p = p;
    return SLEAPC_OK;
}

void sleapc__stream_destroy(sleapc_stream *s)
{
    if (!s)
        return;
    sleapc__free(s->packed);
    sleapc__free(s);
}

/* Packed gray or RGB rows are used in place; anything else is packed first. */
static sleapc_status pack(sleapc_stream *s, const sleapc_frame *f, const uint8_t **pixels)
{
    *pixels = f->data;
    if (sleapc__frame_is_packed(f))
        return SLEAPC_OK;
    size_t need = (size_t)(f->height * f->width * sleapc__frame_channels(f));
    if (need > s->packed_cap) {
        sleapc__free(s->packed);
        s->packed = sleapc__malloc(need);
        s->packed_cap = s->packed ? need : 0;
        if (!s->packed)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "stream predict: out of memory");
    }
    sleapc__frame_pack(f, 0, s->packed);
    *pixels = s->packed;
    return SLEAPC_OK;
}

sleapc_status sleapc__stream_predict(sleapc_stream *s, const sleapc_frame *f, int *n_instances)
{
    double t0 = now_ms();
    const uint8_t *pixels = NULL;
    sleapc_status st = pack(s, f, &pixels);
    if (st)
        return st;
    double t1 = now_ms();
    st = sleapc__predictor_run(s->p, pixels, false, 1, f->height, f->width,
                               sleapc__pixel_format_bytes(f->format));
    if (st)
        return st;
    s->last.convert_ms = t1 - t0;
    s->last.total_ms = now_ms() - t0;
    if (n_instances)
        *n_instances = sleapc__predictor_n_instances(s->p, 0);
    return SLEAPC_OK;
}

sleapc_stream_timing sleapc__stream_last_timing(const sleapc_stream *s)
{
    return s->last;
}
