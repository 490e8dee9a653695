#include "layers/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/bf16_policy.h"
#include "backends/precision_check.h"
#include "layers/bf16_fragility.h"
#include "core/alloc.h"
#include "core/compat.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/settings.h"

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
    s->convention = sleapc__convention_of(m);
    s->precision = o->precision;
    s->conv = o->conv;
    s->bf16_error = -1;
    s->bf16_moved = -1;
    s->peak_threshold = (float)o->peak_threshold;
    s->n_threads = o->n_threads;
    s->flat_tops = !sleapc__compat_is_0_3_3(o->compat);
    sleapc_backend_opts bo = {.n_threads = o->n_threads, .precision = o->precision,
                              .device = o->device, .conv = o->conv};
    sleapc_status st = sleapc__backend_create(o->backend, &m->graph, &bo, &s->be);
    if (st)
        return st;
    /* A forward on the smallest valid input checks the output names, on the
     * input type the convention gives the model. */
    int64_t side = m->graph.max_stride > 1 ? m->graph.max_stride : 2;
    int64_t n = (int64_t)m->graph.in_channels * side * side;
    size_t elem = sleapc__dtype_size(s->convention->input_dtype);
    st = grow(&s->input, &s->input_cap, (size_t)n * elem);
    if (st)
        return st;
    memset(s->input, 0, (size_t)n * elem);
    sleapc_tensor x = {.dtype = s->convention->input_dtype, .ndim = 4,
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

/* Whether the stage runs at a reduced precision that the first batch checks
 * against float32: bf16 (CPU) or fp16 (Vulkan: storage, and arithmetic
 * where the device has it). */
static bool reduced(sleapc_precision p)
{
    return p == SLEAPC_PRECISION_BF16 || p == SLEAPC_PRECISION_BF16_EMULATED ||
           p == SLEAPC_PRECISION_FP16;
}

bool sleapc__stage_device_global_peaks(sleapc_stage *s, const char *head, double threshold,
                                       int refine_k)
{
    /* A reduced precision's first-batch check compares the heads' maps with
     * float32's: they must come back until it has run (the host finds that
     * batch's peaks); the layers ask again after it. */
    if (reduced(s->precision) && s->bf16_error < 0)
        return false;
    if (!s->convention->device_global_peaks ||
        sleapc__backend_device_global_peaks(s->be, head, threshold, refine_k) != SLEAPC_OK)
        return false;
    sleapc__tensor_map_clear(&s->out); /* views of buffers a new plan replaced */
    sleapc__log(SLEAPC_LOG_INFO, "%s: global peaks of %s found on the device (%s)", s->model->dir,
                head, sleapc__backend_name(s->be));
    return true;
}

sleapc_status sleapc__stage_device_peaks(const sleapc_stage *s, int64_t b, int64_t n,
                                         const float **peaks, const float **vals)
{
    const sleapc_tensor *pk = sleapc__tensor_map_get(&s->out, "peaks");
    const sleapc_tensor *v = sleapc__tensor_map_get(&s->out, "peak_vals");
    if (!pk || !v || pk->ndim != 3 || pk->shape[0] != b || pk->shape[1] != n ||
        pk->shape[2] != 2 || v->ndim != 2 || v->shape[0] != b || v->shape[1] != n)
        return sleapc__fail(SLEAPC_ERR_BACKEND,
                            "backend %s returned no (%lld, %lld, 2) peaks for %s",
                            sleapc__backend_name(s->be), (long long)b, (long long)n,
                            s->model->dir);
    *peaks = pk->data;
    *vals = v->data;
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

sleapc_status sleapc__stage_plan(sleapc_stage *s, int64_t c, int64_t h, int64_t w)
{
    if (s->have_plan && s->plan.src_c == c && s->plan.src_h == h && s->plan.src_w == w)
        return SLEAPC_OK;
    s->have_plan = false;
    sleapc_status st = s->convention->plan_make(&s->pp, c, h, w, &s->plan);
    s->have_plan = !st;
    return st;
}

static double rel_l2(const sleapc_tensor *a, const sleapc_tensor *b)
{
    double num = 0, den = 0;
    int64_t n = sleapc__tensor_numel(b);
    const float *x = a->data, *y = b->data;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)y[i];
        num += d * d;
        den += (double)y[i] * (double)y[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* How far bf16 outputs b16 are from the float32 ones f32 of one batch. */
typedef struct bf16_verdict {
    double worst;             /* worst head's relative L2 */
    const char *worst_head;
    sleapc_bf16_fragility fr; /* peaks expected to move or cross the threshold */
    bool ok;                  /* within both budgets */
} bf16_verdict;

static double head_budget(const sleapc_stage *s)
{
    return s->precision == SLEAPC_PRECISION_FP16 ? SLEAPC_FP16_HEAD_BUDGET
                                                 : SLEAPC_BF16_HEAD_BUDGET;
}

static bf16_verdict bf16_judge(const sleapc_stage *s, const sleapc_tensor_map *b16,
                               const sleapc_tensor_map *f32)
{
    bf16_verdict v = {.worst = 0, .worst_head = ""};
    const sleapc_tensor *maps16[SLEAPC_MAX_HEADS] = {0}, *maps32[SLEAPC_MAX_HEADS] = {0};
    bool global[SLEAPC_MAX_HEADS] = {0};
    int n_maps = 0;
    for (int h = 0; h < s->model->n_heads; h++) {
        const char *name = s->model->heads[h].name;
        const sleapc_tensor *a = sleapc__tensor_map_get(b16, name);
        const sleapc_tensor *b = sleapc__tensor_map_get(f32, name);
        if (!a || !b || sleapc__tensor_numel(a) != sleapc__tensor_numel(b))
            continue;
        double e = rel_l2(a, b);
        if (e > v.worst) {
            v.worst = e;
            v.worst_head = name;
        }
        if (a->ndim == 4 && b->ndim == 4 && strstr(name, "ConfmapsHead")) {
            maps16[n_maps] = a;
            maps32[n_maps] = b;
            global[n_maps++] = strcmp(name, "SingleInstanceConfmapsHead") == 0 ||
                               strcmp(name, "CenteredInstanceConfmapsHead") == 0;
        }
    }
    v.fr = sleapc__bf16_fragility(maps16, maps32, global, n_maps, s->peak_threshold);
    v.ok = v.worst <= head_budget(s) &&
           v.fr.moved + v.fr.crossed <= SLEAPC_BF16_PEAK_BUDGET;
    return v;
}

/* What fp16 computes: on a device with shaderFloat16 (Vulkan) the
 * convolutions' products are binary16 too, else storage only. */
static const char *fp16_kind(const sleapc_stage *s)
{
    return sleapc__backend_fp16_math(s->be) ? "storage and arithmetic" : "storage";
}

/* The check's name: "bf16" for bf16 and its emulation (the log callers and
 * tests read this prefix), "fp16" for fp16 (then the split names what fp16
 * computes). */
static void bf16_log(const sleapc_stage *s, const char *split, const bf16_verdict *v)
{
    sleapc__log(SLEAPC_LOG_INFO,
                "%s: %s, %s: heads %.2f%% from float32 (relative L2), %lld peaks: %.2f%% "
                "expected to move a grid cell, %.2f%% to cross the threshold",
                s->precision == SLEAPC_PRECISION_FP16 ? "fp16" : "bf16", s->model->dir,
                s->precision == SLEAPC_PRECISION_FP16 ? fp16_kind(s) : split,
                100 * v->worst,
                (long long)v->fr.peaks, 100 * v->fr.moved,
                100 * v->fr.crossed);
}

static void bf16_keep_verdict(sleapc_stage *s, const bf16_verdict *v)
{
    s->bf16_error = v->worst;
    s->bf16_moved = v->fr.moved + v->fr.crossed;
}

/* The layer's side of the first-batch check (backends/precision_check.h):
 * the verdicts on the heads and keypoints, what is said, and the force. */
typedef struct bf16_check_state {
    sleapc_stage *s;
    bf16_verdict v, v2; /* the first split's; with the decoder in float32 (worst -1: not run) */
} bf16_check_state;

static bool bf16_judge_cb(void *user, int attempt, const sleapc_tensor_map *got,
                          const sleapc_tensor_map *want)
{
    bf16_check_state *c = user;
    sleapc_stage *s = c->s;
    if (attempt == 0) {
        c->v = bf16_judge(s, got, want);
        bf16_log(s, "first split", &c->v);
        bf16_keep_verdict(s, &c->v);
        /* SLEAPC_BF16_FORCE=1 keeps bf16 whatever the check says: for measuring
         * what bf16 does to a model (bench_bf16_agreement), never for results. */
        return c->v.ok || sleapc__settings_bf16_force();
    }
    c->v2 = bf16_judge(s, got, want);
    bf16_log(s, "decoder in float32", &c->v2);
    if (c->v2.ok) {
        sleapc__log(SLEAPC_LOG_INFO, "bf16: %s: runs in bf16 with its decoder in float32",
                    s->model->dir);
        bf16_keep_verdict(s, &c->v2);
    }
    return c->v2.ok;
}

/* Why the model runs in float32 from this batch on. */
static void bf16_falls_back_cb(void *user)
{
    const bf16_check_state *c = user;
    const sleapc_stage *s = c->s;
    const bf16_verdict *v = &c->v, *v2 = &c->v2;
    if (s->precision == SLEAPC_PRECISION_FP16) {
        sleapc__log(SLEAPC_LOG_WARN,
                    "fp16: %s: fp16 (%s) would not keep its keypoints: %s %.2f%% from float32 "
                    "(relative L2; budget %.1f%%), an expected %.2f%% of keypoints moved by a "
                    "grid cell or dropped (budget %.1f%%); it runs in float32",
                    s->model->dir, fp16_kind(s), v->worst_head, 100 * v->worst,
                    100 * SLEAPC_FP16_HEAD_BUDGET, 100 * s->bf16_moved,
                    100 * SLEAPC_BF16_PEAK_BUDGET);
        return;
    }
    char also[160] = "";
    if (v2->worst >= 0)
        snprintf(also, sizeof also, "; with its decoder in float32 too: %.1f%% and %.2f%%",
                 100 * v2->worst, 100 * (v2->fr.moved + v2->fr.crossed));
    sleapc__log(SLEAPC_LOG_WARN,
                "bf16: %s: bf16 would not keep its keypoints: %s %.1f%% from float32 (relative "
                "L2; budget %.0f%%), an expected %.2f%% of keypoints moved by a grid cell or "
                "dropped (budget %.1f%%: %s)%s; it runs in float32",
                s->model->dir, v->worst_head, 100 * v->worst, 100 * SLEAPC_BF16_HEAD_BUDGET,
                100 * s->bf16_moved, 100 * SLEAPC_BF16_PEAK_BUDGET,
                v->worst > SLEAPC_BF16_HEAD_BUDGET ? "the model amplifies bf16 rounding"
                                                   : "its confidence-map peaks are too flat",
                also);
}

/* The first bf16 batch runs once more in float32 (precision_check.h). bf16 is
 * kept when it keeps the keypoints: heads within SLEAPC_BF16_HEAD_BUDGET and
 * no more than SLEAPC_BF16_PEAK_BUDGET of the confidence-map peaks expected
 * to move or drop (bf16_fragility.h). When the default split misses, the
 * split with the whole decoder in float32 is judged too (on the SLEAP 1.x
 * multi-class model it took the heads from 29% to 1.9% off): the first that
 * passes runs from then on, else the model runs in float32 and the user is
 * told why. */
static sleapc_status bf16_check(sleapc_stage *s, const sleapc_tensor *x)
{
    bf16_check_state c = {.s = s, .v2 = {.worst = -1}};
    const sleapc_precision_judge j = {.judge = bf16_judge_cb, .falls_back = bf16_falls_back_cb,
                                      .user = &c};
    const sleapc_precision_run r = {.be = &s->be, .out = &s->out, .precision = &s->precision,
                                    .g = &s->model->graph, .n_threads = s->n_threads,
                                    .conv = s->conv};
    sleapc_status st = sleapc__precision_check(&r, x, &j);
    return st ? sleapc__wrap(st, "%s: %s", s->precision == SLEAPC_PRECISION_FP16 ? "fp16" : "bf16",
                             s->model->dir)
              : SLEAPC_OK;
}

/* Preprocess b frames (b, c, h, w) on the host into s->input: *x is the
 * model input (the plan for that size is s->plan). */
static sleapc_status host_input(sleapc_stage *s, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w, sleapc_tensor *x)
{
    const sleapc_preprocess_plan *pl = &s->plan;
    size_t frame_in = (size_t)(c * h * w);
    size_t frame_out = (size_t)(pl->c * pl->out_h * pl->out_w);
    size_t elem = sleapc__dtype_size(s->convention->input_dtype);
    if (b < 1 || frame_out > SIZE_MAX / elem / (size_t)b)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "preprocess: batch of %lld frames: bad size",
                            (long long)b);
    sleapc_status st = grow(&s->input, &s->input_cap, frame_out * elem * (size_t)b);
    if (!st)
        st = grow(&s->scratch, &s->scratch_cap, pl->scratch_bytes);
    for (int64_t k = 0; k < b && !st; k++) {
        const uint8_t *src = frames + (size_t)k * frame_in;
        st = s->convention->preprocess(pl, src, (uint8_t *)s->input + (size_t)k * frame_out * elem,
                                       s->scratch);
    }
    *x = (sleapc_tensor){.dtype = s->convention->input_dtype, .ndim = 4,
                         .shape = {b, pl->c, pl->out_h, pl->out_w}, .data = s->input};
    return st;
}

sleapc_status sleapc__stage_run(sleapc_stage *s, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w)
{
    sleapc_status st = sleapc__stage_plan(s, c, h, w);
    bool on_device = false;
    if (!st)
        st = sleapc__stage_run_windows_frames(s, frames, b, c, h, w, &on_device);
    if (st || on_device)
        return st;
    sleapc_tensor x;
    st = host_input(s, frames, b, c, h, w, &x);
    if (!st)
        st = sleapc__backend_forward(s->be, &x, &s->out);
    if (!st && s->bf16_error < 0 && reduced(s->precision))
        st = bf16_check(s, &x);
    return st;
}

bool sleapc__stage_overlap_on(const sleapc_stage *s)
{
    if (!sleapc__backend_can_submit(s->be))
        return false;
    int on = sleapc__settings_overlap();
    if (on >= 0)
        return on != 0;
    /* A software device (lavapipe) shares the host's cores: off unless asked. */
    return strcmp(sleapc__backend_device(s->be), "cpu") != 0;
}

bool sleapc__stage_async(sleapc_stage *s, int64_t c, int64_t h, int64_t w)
{
    return sleapc__stage_overlap_on(s) && !(reduced(s->precision) && s->bf16_error < 0) &&
           sleapc__stage_plan(s, c, h, w) == SLEAPC_OK && !sleapc__stage_windows_due(s);
}

sleapc_status sleapc__stage_begin(sleapc_stage *s, const uint8_t *frames, int64_t b, int64_t c,
                                  int64_t h, int64_t w)
{
    sleapc_tensor x;
    sleapc_status st = sleapc__stage_plan(s, c, h, w);
    if (!st)
        st = host_input(s, frames, b, c, h, w, &x);
    return st ? st : sleapc__backend_submit(s->be, &x);
}

sleapc_status sleapc__stage_collect(sleapc_stage *s)
{
    return sleapc__backend_collect(s->be, &s->out);
}

void sleapc__stage_drain(sleapc_stage *s)
{
    /* The message of the error that ends the run outlives a failed collect. */
    char kept[1024];
    snprintf(kept, sizeof kept, "%s", sleapc__last_error());
    bool lost = false;
    while (s->be && s->be->in_flight > 0)
        lost |= sleapc__backend_collect(s->be, &s->out) != SLEAPC_OK;
    if (lost && *kept)
        (void)sleapc__fail(SLEAPC_ERR_STATE, "%s", kept);
    else if (lost)
        sleapc__clear_error();
    sleapc__tensor_map_clear(&s->out);
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
    if (s->convention->input_dtype != SLEAPC_DTYPE_U8 || !input_bytes(b, c, h, w, &n))
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
    if (s->convention->input_dtype != SLEAPC_DTYPE_U8 || !input_bytes(b, c, h, w, &n) ||
        n > s->input_cap)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "model input of %lldx%lldx%lldx%lld: bad size",
                            (long long)b, (long long)c, (long long)h, (long long)w);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {b, c, h, w},
                       .data = s->input};
    sleapc_status st = sleapc__backend_forward(s->be, &x, &s->out);
    if (!st && s->bf16_error < 0 && reduced(s->precision))
        st = bf16_check(s, &x);
    return st;
}

sleapc_status sleapc__stage_forward_f32(sleapc_stage *s, const float *x, int64_t b, int64_t c,
                                        int64_t h, int64_t w)
{
    if (!s->model->graph.input_as_is)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: its network takes frames, not float input",
                            s->model->dir);
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {b, c, h, w},
                       .data = (void *)x};
    return sleapc__backend_forward(s->be, &t, &s->out);
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
                               .device = sleapc__backend_device(s->be),
                               .device_name = sleapc__backend_device_name(s->be),
                               .precision = s->precision,
                               .bf16_error = s->bf16_error,
                               .bf16_moved = s->bf16_moved,
                               .fp16_arithmetic = s->precision == SLEAPC_PRECISION_FP16 &&
                                                  sleapc__backend_fp16_math(s->be)};
}

int sleapc__stage_head_stride(const sleapc_stage *s, const char *name)
{
    for (int h = 0; h < s->model->n_heads; h++)
        if (strcmp(s->model->heads[h].name, name) == 0)
            return s->model->heads[h].stride;
    return 0;
}
