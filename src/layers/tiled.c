/* TiledLayer (sleap-nn inference/layers/tiled.py) around a single-instance
 * model whose training config enables tiling. Per frame: channel handling
 * and input scale only (no size matcher), a pad to the output stride, the
 * tile grid, the tiles through the network tile_batch_size at a time, each
 * head map pasted into a weighted canvas (ACC += map * window, CNT +=
 * window), ACC / CNT cropped to the frame's map, one global peak per node on
 * it, then the coordinate ladder (stride, input scale).
 *
 * The last backend call of a frame is padded with zero tiles to the size of
 * the others, whose outputs are dropped: tiles are independent samples, so
 * the results are unchanged, and one input shape keeps the backend from
 * re-planning (allocating) every frame. */
#include "layers/tiled.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/coords.h"
#include "core/peaks.h"
#include "layers/ops/tiling.h"
#include "layers/stage.h"

#define HEAD "SingleInstanceConfmapsHead"
#define DEFAULT_TILE_BATCH 8 /* sleap-nn predictor: tile_batch_size or 8 */

typedef struct buf {
    void *p;
    size_t cap;
} buf;

typedef struct tiled_layer {
    sleapc_layer base;
    sleapc_stage stage;
    double threshold;
    int refine_k;
    sleapc_preprocess_opts pp; /* whole frame: no size matcher, pad to the output stride */
    sleapc_preprocess_plan plan;
    bool have_plan;
    sleapc_tiling_config tiling;
    int64_t stride, tile_batch, n_nodes, map_tile;
    float *window; /* (map_tile, map_tile) */
    buf scaled, scratch, axis_y, axis_x, origins, acc, cnt, stitched;
    sleapc_tiled_view view;
    bool ran;
    sleapc_tiled_probe probe;
    void *probe_ctx;
} tiled_layer;

static const struct sleapc_layer_ops tiled_ops;

static sleapc_status grow(buf *b, size_t need)
{
    if (need <= b->cap && b->p)
        return SLEAPC_OK;
    sleapc__aligned_free(b->p);
    b->p = sleapc__aligned_alloc(need ? need : 64);
    b->cap = b->p ? need : 0;
    return b->p ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "tiled layer: out of memory");
}

/* Both axes' origins and their row-major product into t->origins. */
static sleapc_status make_grid(tiled_layer *t, int64_t h, int64_t w, int64_t *n_tiles)
{
    const sleapc_tiling_config *c = &t->tiling;
    const int64_t ms = t->stage.model->graph.max_stride > 1 ? t->stage.model->graph.max_stride : 1;
    int64_t ny = 0, nx = 0;
    sleapc_status st = SLEAPC_OK;
    for (int axis = 0; axis < 2 && !st; axis++) {
        const int64_t dim = axis ? w : h;
        buf *b = axis ? &t->axis_x : &t->axis_y;
        int64_t *n = axis ? &nx : &ny;
        st = grow(b, (size_t)(dim / t->stride + 2) * sizeof(int64_t));
        if (!st)
            st = sleapc__tiling_axis_origins(dim, c->tile_size, c->overlap, t->stride, ms,
                                             c->min_overlap_fraction, dim / t->stride + 2, b->p, n);
    }
    if (!st)
        st = grow(&t->origins, (size_t)(ny * nx * 2) * sizeof(int64_t));
    if (st)
        return st;
    const int64_t *ys = t->axis_y.p, *xs = t->axis_x.p;
    int64_t *o = t->origins.p;
    for (int64_t i = 0; i < ny; i++)
        for (int64_t j = 0; j < nx; j++) {
            o[(i * nx + j) * 2] = ys[i];
            o[(i * nx + j) * 2 + 1] = xs[j];
        }
    *n_tiles = ny * nx;
    return SLEAPC_OK;
}

/* One backend call: tiles first..first+n-1 in a batch of t->view.tiles_per_call. */
static sleapc_status run_tiles(tiled_layer *t, int64_t first, int64_t n)
{
    sleapc_tiled_view *v = &t->view;
    const int64_t ts = v->tile_size, batch = v->tiles_per_call, c = v->c;
    const size_t tile_bytes = (size_t)(c * ts * ts);
    uint8_t *in = NULL;
    sleapc_status st = sleapc__stage_input_u8(&t->stage, batch, c, ts, ts, &in);
    for (int64_t k = 0; k < n && !st; k++) {
        const int64_t *o = v->origins + (first + k) * 2;
        st = sleapc__tiling_extract_u8(v->scaled, c, v->scaled_h, v->scaled_w, o[0], o[1], ts,
                                       in + (size_t)k * tile_bytes);
    }
    if (st)
        return st;
    memset(in + (size_t)n * tile_bytes, 0, (size_t)(batch - n) * tile_bytes);
    const sleapc_tensor *hm = NULL;
    st = sleapc__stage_forward_input(&t->stage, batch, c, ts, ts);
    if (!st)
        st = sleapc__stage_head(&t->stage, HEAD, false, &hm);
    if (st)
        return st;
    const int64_t mt = t->map_tile;
    if (hm->shape[0] != batch || hm->shape[1] != t->n_nodes || hm->shape[2] != mt ||
        hm->shape[3] != mt)
        return sleapc__fail(
            SLEAPC_ERR_BACKEND, "%s: %s of a %lldx%lld tile is %lldx%lldx%lld, want %lldx%lldx%lld",
            t->stage.model->dir, HEAD, (long long)ts, (long long)ts, (long long)hm->shape[1],
            (long long)hm->shape[2], (long long)hm->shape[3], (long long)t->n_nodes, (long long)mt,
            (long long)mt);
    if (t->probe)
        t->probe(t->probe_ctx, first, n, in, hm->data);
    const float *maps = hm->data;
    for (int64_t k = 0; k < n && !st; k++) {
        const int64_t *o = v->origins + (first + k) * 2;
        st = sleapc__tiling_accumulate(t->acc.p, t->cnt.p, t->n_nodes, v->canvas_h, v->canvas_w,
                                       maps + k * t->n_nodes * mt * mt, t->window, mt, mt,
                                       o[0] / t->stride, o[1] / t->stride);
    }
    return st;
}

/* Tile, run, stitch and find the peaks of one frame. */
static sleapc_status run_frame(tiled_layer *t, const uint8_t *frame, float *xy, float *vals)
{
    const sleapc_preprocess_plan *pl = &t->plan;
    sleapc_tiled_view *v = &t->view;
    const int64_t s = t->stride, ts = t->tiling.tile_size, n = t->n_nodes;
    sleapc_status st = sleapc__preprocess_run_u8(pl, frame, t->scaled.p, t->scratch.p);
    int64_t n_tiles = 0;
    if (!st)
        st = make_grid(t, pl->out_h, pl->out_w, &n_tiles);
    if (st)
        return st;
    v->c = pl->c;
    v->scaled_h = pl->out_h;
    v->scaled_w = pl->out_w;
    v->scaled = t->scaled.p;
    v->n_tiles = n_tiles;
    v->origins = t->origins.p;
    v->tiles_per_call = n_tiles < t->tile_batch ? n_tiles : t->tile_batch;
    v->canvas_h = (pl->out_h > ts ? pl->out_h : ts) / s;
    v->canvas_w = (pl->out_w > ts ? pl->out_w : ts) / s;
    v->map_h = pl->out_h / s;
    v->map_w = pl->out_w / s;
    const size_t plane = (size_t)(v->canvas_h * v->canvas_w);
    st = grow(&t->acc, plane * (size_t)n * sizeof(float));
    if (!st)
        st = grow(&t->cnt, plane * sizeof(float));
    if (!st)
        st = grow(&t->stitched, (size_t)(n * v->map_h * v->map_w) * sizeof(float));
    if (st)
        return st;
    memset(t->acc.p, 0, plane * (size_t)n * sizeof(float));
    memset(t->cnt.p, 0, plane * sizeof(float));
    v->cnt = t->cnt.p;
    v->stitched = t->stitched.p;
    for (int64_t i = 0; i < n_tiles && !st; i += v->tiles_per_call) {
        const int64_t left = n_tiles - i;
        st = run_tiles(t, i, left < v->tiles_per_call ? left : v->tiles_per_call);
    }
    if (!st)
        st = sleapc__tiling_normalise(t->acc.p, t->cnt.p, n, v->canvas_h, v->canvas_w, v->map_h,
                                      v->map_w, t->stitched.p);
    if (!st)
        st = sleapc__peaks_find_global(t->stitched.p, 1, n, v->map_h, v->map_w, t->threshold,
                                       t->refine_k, xy, vals);
    if (st)
        return st;
    /* The tile offsets are in the paste positions; the ladder is stride,
     * input scale, and an eff scale of 1 (no size matcher). */
    sleapc__coords_undo_stride(xy, n, (double)s);
    sleapc__coords_undo_input_scale(xy, n, t->pp.scale);
    t->ran = true;
    return SLEAPC_OK;
}

static sleapc_status tiled_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                               int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    tiled_layer *t = l->impl;
    sleapc_status st = SLEAPC_OK;
    if (!t->have_plan || t->plan.src_c != c || t->plan.src_h != h || t->plan.src_w != w) {
        t->have_plan = false;
        st = sleapc__preprocess_plan_make(&t->pp, c, h, w, &t->plan);
        if (!st)
            st = grow(&t->scaled, (size_t)(t->plan.c * t->plan.out_h * t->plan.out_w));
        if (!st)
            st = grow(&t->scratch, t->plan.scratch_bytes);
        if (st)
            return st;
        t->have_plan = true;
    }
    st = sleapc__layer_outputs_reset(out, b, 1, t->n_nodes, 0);
    const size_t frame_bytes = (size_t)(c * h * w);
    for (int64_t k = 0; k < b && !st; k++) {
        st = run_frame(t, frames + (size_t)k * frame_bytes, out->keypoints + k * t->n_nodes * 2,
                       out->peak_values + k * t->n_nodes);
        out->eff_scale[k] = 1.0f;
    }
    return st;
}

static void tiled_destroy(sleapc_layer *l)
{
    tiled_layer *t = l->impl;
    sleapc__stage_free(&t->stage);
    sleapc__free(t->window);
    buf *bufs[] = {&t->scaled,  &t->scratch, &t->axis_y, &t->axis_x,
                   &t->origins, &t->acc,     &t->cnt,    &t->stitched};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        sleapc__aligned_free(bufs[i]->p);
    sleapc__free(t);
}

static int tiled_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const tiled_layer *t = l->impl;
    out[0] = sleapc__stage_info(&t->stage);
    return 1;
}

static const struct sleapc_layer_ops tiled_ops = {
    .name = "TiledLayer", .run = tiled_run, .destroy = tiled_destroy, .stages = tiled_stages};

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* The geometry check_tiling enforces at training (sleap-nn config/utils.py):
 * the tile a multiple of lcm(max_stride, output_stride), so that every tile
 * goes through the backbone whole and maps onto whole cells. */
static sleapc_status check_geometry(const sleapc_model *m, int64_t stride)
{
    const sleapc_tiling_config *c = &m->cfg.tiling;
    const char *file = m->cfg.source_path ? m->cfg.source_path : m->dir;
    const int64_t ms = m->graph.max_stride > 1 ? m->graph.max_stride : 1;
    const int64_t lcm = ms / gcd(ms, stride) * stride;
    if (c->tile_size % lcm != 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: data_config.preprocessing.tiling.tile_size: %d is not a multiple "
                            "of lcm(max_stride %lld, output_stride %lld) = %lld, which sleap-nn's "
                            "training ensures",
                            file, c->tile_size, (long long)ms, (long long)stride, (long long)lcm);
    if (c->tile_size / stride > 4096)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: data_config.preprocessing.tiling.tile_size: %d is too large", file,
                            c->tile_size);
    return SLEAPC_OK;
}

sleapc_status sleapc__tiled_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                         sleapc_layer **out)
{
    const char *file = m->cfg.source_path ? m->cfg.source_path : m->dir;
    /* Tiles are cut from the uint8 frames and fed to the model as they are,
     * so the convention must take uint8 input (SLEAP 1.x's takes float32). */
    if (m->cfg.model_type != SLEAPC_MODEL_TYPE_SINGLE_INSTANCE || m->baked ||
        sleapc__convention_of(m)->input_dtype != SLEAPC_DTYPE_U8)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: data_config.preprocessing.tiling.enabled: tiled inference runs "
                            "single-instance checkpoint models only (sleap-nn refuses exported "
                            "tiled models)",
                            file);
    const sleapc_head_spec *head = NULL;
    for (int h = 0; h < m->n_heads; h++)
        if (strcmp(m->heads[h].name, HEAD) == 0)
            head = &m->heads[h];
    if (!head || head->stride < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: no %s", m->dir, HEAD);
    sleapc_status st = check_geometry(m, head->stride);
    if (st)
        return st;
    tiled_layer *t = sleapc__calloc(1, sizeof *t);
    if (!t)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    t->base.ops = &tiled_ops;
    t->base.impl = t;
    t->threshold = o->peak_threshold;
    t->refine_k = sleapc__layer_refine_k(o);
    t->tiling = m->cfg.tiling;
    t->stride = head->stride;
    t->n_nodes = head->channels;
    t->tile_batch = sleapc__tiled_tiles_per_call(&t->tiling);
    t->map_tile = t->tiling.tile_size / t->stride;
    /* sleap-nn: _apply_full_preprocess(skip_sizematcher=True,
     * max_stride=output_stride). */
    if (o->max_height > 0 || o->max_width > 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: --max_height / --max_width ignored: a tiled model runs at the frame's "
                    "own size (sleap-nn skips the size matcher when tiling)",
                    m->dir);
    t->pp = sleapc__layer_preprocess_opts(m, o, true);
    t->pp.max_height = 0;
    t->pp.max_width = 0;
    t->pp.max_stride = t->stride;
    t->window = sleapc__malloc((size_t)(t->map_tile * t->map_tile) * sizeof(float));
    st = t->window ? sleapc__tiling_window(t->map_tile, t->map_tile, t->tiling.blend,
                                           t->tiling.sigma_scale, t->window)
                   : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!st)
        st = sleapc__stage_init(&t->stage, m, o, &t->pp);
    if (st) {
        tiled_destroy(&t->base);
        return st;
    }
    t->view.tile_size = t->tiling.tile_size;
    t->view.stride = t->stride;
    t->view.map_tile = t->map_tile;
    t->view.window = t->window;
    t->view.n_nodes = t->n_nodes;
    *out = &t->base;
    return SLEAPC_OK;
}

int sleapc__tiled_tiles_per_call(const sleapc_tiling_config *t)
{
    return t->tile_batch_size > 0 ? t->tile_batch_size : DEFAULT_TILE_BATCH;
}

sleapc_status sleapc__tiled_layer_view(const sleapc_layer *l, sleapc_tiled_view *out)
{
    if (!l || l->ops != &tiled_ops || !out || !((const tiled_layer *)l->impl)->ran)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "not a tiled layer that has run");
    *out = ((const tiled_layer *)l->impl)->view;
    return SLEAPC_OK;
}

sleapc_status sleapc__tiled_layer_set_probe(sleapc_layer *l, sleapc_tiled_probe fn, void *ctx)
{
    if (!l || l->ops != &tiled_ops)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "not a tiled layer");
    tiled_layer *t = l->impl;
    t->probe = fn;
    t->probe_ctx = ctx;
    return SLEAPC_OK;
}
