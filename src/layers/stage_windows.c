/* A stage's inputs cut, resized and padded on its backend's device
 * (stage.h; backend.h's upload_frames and forward_windows): a frame goes up
 * at its own size and channels as uint8 and is converted, size-matched,
 * scaled and padded there, and top-down crops are cut
 * from the batch's frames, uploaded once, instead of being cut, resized and
 * padded on the host. The device repeats preprocess.h's uint8 steps, so the
 * convention says whether they are its own (sleap-nn's; SLEAP 1.x prepares
 * float32 inputs with TensorFlow's resize on the host). */
#include "layers/stage.h"

#include "core/alloc.h"
#include "core/error.h"

bool sleapc__plan_int_resize(const sleapc_preprocess_plan *p)
{
    return p->opts.u8_int_resize && (p->match_h != p->src_h || p->match_w != p->src_w ||
                                     p->scaled_h != p->sized_h || p->scaled_w != p->sized_w);
}

bool sleapc__stage_windows(const sleapc_stage *s)
{
    /* The first batch of a reduced precision is checked against float32 on
     * the host's input (stage.c: bf16_check). The device resizes as the
     * float path does, so a plan resized by the uint8 kernel stays on the
     * host. */
    return s->convention->device_windows && sleapc__backend_has_windows(s->be) &&
           (s->precision == SLEAPC_PRECISION_FP32 || s->bf16_error >= 0) &&
           !sleapc__plan_int_resize(&s->plan);
}

static sleapc_status grow(void **p, size_t *cap, size_t need)
{
    if (need <= *cap && *p)
        return SLEAPC_OK;
    sleapc__aligned_free(*p);
    *p = sleapc__aligned_alloc(need ? need : 64);
    *cap = *p ? need : 0;
    return *p ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
}

/* Whether plan p uses no size matcher (its channel conversion the windows
 * do as they read a pixel). */
static bool no_size_match(const sleapc_preprocess_plan *p)
{
    return p->match_h == p->src_h && p->match_w == p->src_w && p->sized_h == p->src_h &&
           p->sized_w == p->src_w;
}

bool sleapc__stage_windows_due(const sleapc_stage *s)
{
    const sleapc_preprocess_plan *p = &s->plan;
    bool work = p->c != p->src_c || !no_size_match(p) || p->scaled_h != p->sized_h ||
                p->scaled_w != p->sized_w || p->out_h != p->scaled_h || p->out_w != p->scaled_w;
    return work && sleapc__stage_windows(s);
}

sleapc_status sleapc__stage_run_windows_frames(sleapc_stage *s, const uint8_t *frames, int64_t b,
                                               int64_t c, int64_t h, int64_t w, bool *done)
{
    *done = false;
    const sleapc_preprocess_plan *p = &s->plan;
    if (!sleapc__stage_windows_due(s) || b < 1 || b > INT32_MAX)
        return SLEAPC_OK;
    /* The windows' frame indices and origins (all 0) in the scratch the host
     * path would have used. */
    sleapc_status st = grow(&s->scratch, &s->scratch_cap,
                            (size_t)b * (2 * sizeof(int64_t) + sizeof(int32_t)));
    if (st)
        return st;
    int64_t *origin = s->scratch;
    int32_t *frame = (int32_t *)(origin + 2 * b);
    for (int64_t k = 0; k < b; k++) {
        origin[2 * k] = origin[2 * k + 1] = 0;
        frame[k] = (int32_t)k;
    }
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {b, c, h, w},
                       .data = (void *)frames};
    st = sleapc__backend_upload_frames(s->be, &x);
    /* The whole size-matched frame is the window: past the frame it reads
     * 0, the size matcher's pad. */
    sleapc_backend_windows win = {.n = b, .frame = frame, .origin = origin, .win_h = p->sized_h,
                                  .win_w = p->sized_w, .rs_h = p->scaled_h, .rs_w = p->scaled_w,
                                  .out_h = p->out_h, .out_w = p->out_w, .c = p->c,
                                  .match_h = p->match_h, .match_w = p->match_w,
                                  .sized_h = p->sized_h, .sized_w = p->sized_w};
    if (!st)
        st = sleapc__backend_forward_windows(s->be, &win, &s->out);
    if (st == SLEAPC_ERR_UNSUPPORTED)
        return SLEAPC_OK; /* the host's path then */
    *done = st == SLEAPC_OK;
    return st;
}

sleapc_status sleapc__stage_upload_frames(sleapc_stage *s, const uint8_t *frames, int64_t b,
                                          int64_t c, int64_t h, int64_t w)
{
    if (!sleapc__stage_windows(s))
        return SLEAPC_ERR_UNSUPPORTED;
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {b, c, h, w},
                       .data = (void *)frames};
    return sleapc__backend_upload_frames(s->be, &x);
}

sleapc_status sleapc__stage_run_crops(sleapc_stage *s, int64_t m, const int32_t *frame,
                                      const int64_t *origins, int64_t c, int64_t crop_h,
                                      int64_t crop_w, const sleapc_preprocess_plan *source)
{
    if (!sleapc__stage_windows(s))
        return SLEAPC_ERR_UNSUPPORTED;
    sleapc_status st = sleapc__stage_plan(s, c, crop_h, crop_w);
    if (st)
        return st;
    const sleapc_preprocess_plan *p = &s->plan;
    /* A size matcher on crops would resize each window twice. The device
     * converts channels before the source's size matcher, the host after:
     * the same only where that does not resize (0 stays 0). */
    bool resizes = source && (source->match_h != source->src_h || source->match_w != source->src_w);
    if (!no_size_match(p) || (source && source->c != source->src_c) || (resizes && p->c != c))
        return SLEAPC_ERR_UNSUPPORTED;
    sleapc_backend_windows win = {.n = m, .frame = frame, .origin = origins, .win_h = crop_h,
                                  .win_w = crop_w, .rs_h = p->scaled_h, .rs_w = p->scaled_w,
                                  .out_h = p->out_h, .out_w = p->out_w, .c = p->c};
    if (source) {
        win.match_h = source->match_h;
        win.match_w = source->match_w;
        win.sized_h = source->sized_h;
        win.sized_w = source->sized_w;
    }
    return sleapc__backend_forward_windows(s->be, &win, &s->out);
}
