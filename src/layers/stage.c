#include "layers/stage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/bf16_policy.h"
#include "layers/bf16_fragility.h"
#include "core/alloc.h"
#include "core/error.h"

static sleapc_status grow(void **p, size_t *cap, size_t need)
{
    if (need <= *cap && *p)
        return SLEAPC_OK;
    sleapc__aligned_free(*p);
    *p = sleapc__aligned_alloc(need ? need : 64);
    *cap = *p ? need : 0;
    return *p ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
}

sleapc_status sleapc__stage_init(sleapc_stage *s, const sleapc_model *m,
                                 const sleapc_predictor_opts *o, const sleapc_preprocess_opts *pp)
{
    memset(s, 0, sizeof *s);
    s->model = m;
    s->pp = *pp;
    s->legacy = m->cfg.legacy;
    s->precision = o->precision;
    s->bf16_error = -1;
    s->bf16_moved = -1;
    s->peak_threshold = (float)o->peak_threshold;
    sleapc_backend_opts bo = {.n_threads = o->n_threads, .precision = o->precision};
    sleapc_status st = sleapc__backend_create(o->backend, &m->graph, &bo, &s->be);
    if (st)
        return st;
    /* A forward on the smallest valid input checks the output names; legacy
     * stages warm up on the float32 input they will get. */
    int64_t side = m->graph.max_stride > 1 ? m->graph.max_stride : 2;
    int64_t n = (int64_t)m->graph.in_channels * side * side;
    size_t elem = s->legacy ? sizeof(float) : 1;
    st = grow(&s->input, &s->input_cap, (size_t)n * elem);
    if (st)
        return st;
    memset(s->input, 0, (size_t)n * elem);
    sleapc_tensor x = {.dtype = s->legacy ? SLEAPC_DTYPE_F32 : SLEAPC_DTYPE_U8, .ndim = 4,
                       .shape = {1, m->graph.in_channels, side, side}, .data = s->input};
    st = sleapc__backend_warmup(s->be, x.shape);
    if (!st)
        st = sleapc__backend_forward(s->be, &x, &s->out);
    if (st)
        return sleapc__wrap(st, "warm up %s backend", sleapc__backend_name(s->be));
    for (int h = 0; h < m->n_heads; h++)
        if (!sleapc__tensor_map_get(&s->out, m->heads[h].name))
            return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s returns no \"%s\" output for %s",
                                sleapc__backend_name(s->be), m->heads[h].name, m->dir);
    return SLEAPC_OK;
}

void sleapc__stage_free(sleapc_stage *s)
{
    if (!s)
        return;
    sleapc__backend_destroy(s->be);
    sleapc__aligned_free(s->input);
    sleapc__aligned_free(s->scratch);
    memset(s, 0, sizeof *s);
}

/* The plan for a (c, h, w) frame, remade only when the size changes. */
static sleapc_status plan_for(sleapc_stage *s, int64_t c, int64_t h, int64_t w)
{
    if (s->have_plan && s->plan.src_c == c && s->plan.src_h == h && s->plan.src_w == w)
        return SLEAPC_OK;
    s->have_plan = false;
    sleapc_status st;
    if (s->legacy) {
        st = sleapc__preprocess_tf_plan_make(&s->pp, c, h, w, &s->tf_plan);
        if (!st)
            s->plan = s->tf_plan.base;
    } else {
        st = sleapc__preprocess_plan_make(&s->pp, c, h, w, &s->plan);
    }
    s->have_plan = !st;
    return st;
}

static double rel_l2(const sleapc_tensor *a, const sleapc_tensor *b)
{
    double num = 0, den = 0;
    int64_t n = sleapc_tensor_numel(b);
    const float *x = a->data, *y = b->data;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)y[i];
        num += d * d;
        den += (double)y[i] * (double)y[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The first bf16 batch runs once more in float32 (native backend). A model
 * runs in float32 from then on, and the user is told why, when bf16 would
 * not keep its keypoints: when its heads move beyond SLEAPC_BF16_HEAD_BUDGET
 * (it amplifies bf16 rounding), or when bf16 would move or drop more than
 * SLEAPC_BF16_PEAK_BUDGET of its confidence-map peaks (bf16_fragility.h:
 * peaks too flat for bf16's rounding). */
static sleapc_status bf16_check(sleapc_stage *s, const sleapc_tensor *x)
{
    sleapc_backend_opts bo = {.n_threads = 0, .precision = SLEAPC_PRECISION_FP32};
    sleapc_backend *ref = NULL;
    sleapc_tensor_map out = {0};
    sleapc_status st = sleapc__backend_create("native", &s->model->graph, &bo, &ref);
    if (!st)
        st = sleapc__backend_forward(ref, x, &out);
    double worst = 0;
    const char *worst_head = "";
    const sleapc_tensor *maps16[SLEAPC_MAX_HEADS], *maps32[SLEAPC_MAX_HEADS];
    bool global[SLEAPC_MAX_HEADS];
    int n_maps = 0;
    for (int h = 0; !st && h < s->model->n_heads; h++) {
        const char *name = s->model->heads[h].name;
        const sleapc_tensor *a = sleapc__tensor_map_get(&s->out, name);
        const sleapc_tensor *b = sleapc__tensor_map_get(&out, name);
        if (!a || !b || sleapc_tensor_numel(a) != sleapc_tensor_numel(b))
            continue;
        double e = rel_l2(a, b);
        if (e > worst) {
            worst = e;
            worst_head = name;
        }
        if (a->ndim == 4 && b->ndim == 4 && strstr(name, "ConfmapsHead")) {
            maps16[n_maps] = a;
            maps32[n_maps] = b;
            global[n_maps++] = strcmp(name, "SingleInstanceConfmapsHead") == 0 ||
                               strcmp(name, "CenteredInstanceConfmapsHead") == 0;
        }
    }
    if (st) {
        sleapc__tensor_map_clear(&out);
        sleapc__backend_destroy(ref);
        return sleapc__wrap(st, "bf16: float32 check of %s", s->model->dir);
    }
    sleapc_bf16_fragility fr = sleapc__bf16_fragility(maps16, maps32, global, n_maps,
                                                     s->peak_threshold);
    s->bf16_error = worst;
    s->bf16_moved = fr.moved + fr.crossed;
    sleapc__log(SLEAPC_LOG_INFO,
                "bf16: %s: heads %.2f%% from float32 (relative L2), %lld peaks: %.2f%% expected "
                "to move a grid cell, %.2f%% to cross the threshold",
                s->model->dir, 100 * worst, (long long)fr.peaks, 100 * fr.moved,
                100 * fr.crossed);
    /* SLEAPC_BF16_FORCE=1 keeps bf16 whatever the check says: for measuring
     * what bf16 does to a model (bench_bf16_agreement), never for results. */
    const char *force = getenv("SLEAPC_BF16_FORCE");
    bool keep = worst <= SLEAPC_BF16_HEAD_BUDGET && s->bf16_moved <= SLEAPC_BF16_PEAK_BUDGET;
    if (keep || (force && strcmp(force, "1") == 0)) {
        sleapc__tensor_map_clear(&out);
        sleapc__backend_destroy(ref);
        return SLEAPC_OK;
    }
    /* Beyond a budget the model runs in float32 from this batch on: the
     * float32 backend and its outputs replace the bf16 ones. */
    if (worst > SLEAPC_BF16_HEAD_BUDGET)
        sleapc__log(SLEAPC_LOG_WARN,
                    "bf16: %s: %s differs from float32 by %.1f%% (relative L2; bf16 models stay "
                    "within %.0f%%): this model amplifies bf16 rounding, so it runs in float32",
                    s->model->dir, worst_head, 100 * worst, 100 * SLEAPC_BF16_HEAD_BUDGET);
    else
        sleapc__log(SLEAPC_LOG_WARN,
                    "bf16: %s: bf16 rounding would move or drop an expected %.2f%% of its "
                    "keypoints (its confidence-map peaks are too flat; the budget is %.1f%%), "
                    "so it runs in float32",
                    s->model->dir, 100 * s->bf16_moved, 100 * SLEAPC_BF16_PEAK_BUDGET);
    sleapc__tensor_map_clear(&s->out);
    sleapc__backend_destroy(s->be);
    s->be = ref;
    s->out = out;
    s->precision = SLEAPC_PRECISION_FP32;
    return SLEAPC_OK;
}

sleapc_status sleapc__stage_run(sleapc_stage *s, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w)
{
    sleapc_status st = plan_for(s, c, h, w);
    if (st)
        return st;
    const sleapc_preprocess_plan *pl = &s->plan;
    size_t frame_in = (size_t)(c * h * w);
    size_t frame_out = (size_t)(pl->c * pl->out_h * pl->out_w);
    size_t elem = s->legacy ? sizeof(float) : 1;
    if (b < 1 || frame_out > SIZE_MAX / elem / (size_t)b)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "preprocess: batch of %lld frames: bad size",
                            (long long)b);
    st = grow(&s->input, &s->input_cap, frame_out * elem * (size_t)b);
    if (!st)
        st = grow(&s->scratch, &s->scratch_cap, pl->scratch_bytes);
    if (st)
        return st;
    for (int64_t k = 0; k < b && !st; k++) {
        const uint8_t *src = frames + (size_t)k * frame_in;
        if (s->legacy)
            st = sleapc__preprocess_tf_run(&s->tf_plan, src,
                                           (float *)s->input + (size_t)k * frame_out, s->scratch);
        else
            st = sleapc__preprocess_run_u8(pl, src, (uint8_t *)s->input + (size_t)k * frame_out,
                                           s->scratch);
    }
    if (st)
        return st;
    sleapc_tensor x = {.dtype = s->legacy ? SLEAPC_DTYPE_F32 : SLEAPC_DTYPE_U8, .ndim = 4,
                       .shape = {b, pl->c, pl->out_h, pl->out_w}, .data = s->input};
    st = sleapc__backend_forward(s->be, &x, &s->out);
    if (!st && s->bf16_error < 0 &&
        (s->precision == SLEAPC_PRECISION_BF16 || s->precision == SLEAPC_PRECISION_BF16_EMULATED))
        st = bf16_check(s, &x);
    return st;
}

static bool input_bytes(int64_t b, int64_t c, int64_t h, int64_t w, size_t *out)
{
    int64_t n;
    if (b < 1 || c < 1 || h < 1 || w < 1 || __builtin_mul_overflow(b, c, &n) ||
        __builtin_mul_overflow(n, h, &n) || __builtin_mul_overflow(n, w, &n))
        return false;
    *out = (size_t)n;
    return true;
}

sleapc_status sleapc__stage_input_u8(sleapc_stage *s, int64_t b, int64_t c, int64_t h, int64_t w,
                                     uint8_t **out)
{
    size_t n;
    if (s->legacy || !input_bytes(b, c, h, w, &n))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "model input of %lldx%lldx%lldx%lld: bad size",
                            (long long)b, (long long)c, (long long)h, (long long)w);
    sleapc_status st = grow(&s->input, &s->input_cap, n);
    *out = st ? NULL : s->input;
    return st;
}

sleapc_status sleapc__stage_forward_input(sleapc_stage *s, int64_t b, int64_t c, int64_t h,
                                          int64_t w)
{
    size_t n;
    if (s->legacy || !input_bytes(b, c, h, w, &n) || n > s->input_cap)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "model input of %lldx%lldx%lldx%lld: bad size",
                            (long long)b, (long long)c, (long long)h, (long long)w);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {b, c, h, w},
                       .data = s->input};
    sleapc_status st = sleapc__backend_forward(s->be, &x, &s->out);
    if (!st && s->bf16_error < 0 &&
        (s->precision == SLEAPC_PRECISION_BF16 || s->precision == SLEAPC_PRECISION_BF16_EMULATED))
        st = bf16_check(s, &x);
    return st;
}

sleapc_status sleapc__stage_head(const sleapc_stage *s, const char *name, bool vector,
                                 const sleapc_tensor **out)
{
    const sleapc_tensor *t = sleapc__tensor_map_get(&s->out, name);
    if (!t || t->dtype != SLEAPC_DTYPE_F32 || t->ndim != (vector ? 2 : 4))
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s: no usable \"%s\" output",
                            sleapc__backend_name(s->be), name);
    *out = t;
    return SLEAPC_OK;
}

sleapc_stage_info sleapc__stage_info(const sleapc_stage *s)
{
    return (sleapc_stage_info){.model = s->model->dir,
                               .backend = sleapc__backend_name(s->be),
                               .precision = s->precision,
                               .bf16_error = s->bf16_error,
                               .bf16_moved = s->bf16_moved};
}

int sleapc__stage_head_stride(const sleapc_stage *s, const char *name)
{
    for (int h = 0; h < s->model->n_heads; h++)
        if (strcmp(s->model->heads[h].name, name) == 0)
            return s->model->heads[h].stride;
    return 0;
}
