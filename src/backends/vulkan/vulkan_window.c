/* Windows cut from uploaded frames on the device (vulkan_window.h). */
#include "backends/vulkan/vulkan_window.h"

#include <stdatomic.h>
#include <string.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_input.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/resize_aa.h"

/* Words of the geometry buffer: the table, then 3 per sample. */
#define GEOM_TABLE 256

static atomic_llong n_resized, n_cut, n_matched, n_converted;

void sleapc__vulkan_window_stats(int64_t *resized, int64_t *cut)
{
    if (resized)
        *resized = (int64_t)atomic_load(&n_resized);
    if (cut)
        *cut = (int64_t)atomic_load(&n_cut);
}

void sleapc__vulkan_window_prep_stats(int64_t *matched, int64_t *converted)
{
    if (matched)
        *matched = (int64_t)atomic_load(&n_matched);
    if (converted)
        *converted = (int64_t)atomic_load(&n_converted);
}

static uint32_t div_up(int64_t a, int64_t b)
{
    return (uint32_t)((a + b - 1) / b);
}

/* A mapped buffer of at least `bytes`, remade only when it is too small. */
static sleapc_status ensure(vk_context *ctx, vk_buffer *b, VkDeviceSize bytes, bool host)
{
    if (b->buf && b->size >= bytes)
        return SLEAPC_OK;
    sleapc__vk_buffer_destroy(ctx, b);
    return sleapc__vk_buffer_create(ctx, bytes, host, b);
}

sleapc_status sleapc__vk_windows_upload(vk_context *ctx, vk_windows *vw,
                                        const sleapc_tensor *frames)
{
    const int64_t *s = frames->shape;
    vw->shape[0] = 0;
    vw->sized_of[0] = 0;
    for (int i = 0; i < 4; i++)
        if (s[i] < 1 || s[i] >= ((int64_t)1 << 24))
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "vulkan: upload frames: dimension %d is %lld", i, (long long)s[i]);
    int64_t bytes = s[0] * s[1] * s[2] * s[3];
    if (bytes >= INT32_MAX) /* the shader's byte index is an int */
        return SLEAPC_ERR_UNSUPPORTED;
    sleapc_status st = ensure(ctx, &vw->frames, (VkDeviceSize)((bytes + 3) / 4 * 4), true);
    if (st)
        return st;
    memcpy(vw->frames.map, frames->data, (size_t)bytes);
    memcpy(vw->shape, s, sizeof vw->shape);
    return SLEAPC_OK;
}

/* Whether w resizes the frames to match a size first (a pad alone needs no
 * pass: a window reads 0 past the frame). */
static bool matches(const vk_windows *vw, const sleapc_backend_windows *w)
{
    return w->match_h > 0 && (w->match_h != vw->shape[2] || w->match_w != vw->shape[3]);
}

/* Geometry words of the windows: the table, 3 per sample, both axes. */
static int64_t window_words(const sleapc_backend_windows *w)
{
    return GEOM_TABLE + 3 * w->n + 2 * (w->rs_w + w->rs_h) +
           w->rs_w * sleapc__resize_aa_max_taps(w->win_w, w->rs_w) +
           w->rs_h * sleapc__resize_aa_max_taps(w->win_h, w->rs_h);
}

/* Those of the size matcher: 3 per frame, both axes. */
static int64_t match_words(const vk_windows *vw, const sleapc_backend_windows *w)
{
    const int64_t fh = vw->shape[2], fw = vw->shape[3];
    return 3 * vw->shape[0] + 2 * (w->match_w + w->match_h) +
           w->match_w * sleapc__resize_aa_max_taps(fw, w->match_w) +
           w->match_h * sleapc__resize_aa_max_taps(fh, w->match_h);
}

sleapc_status sleapc__vk_windows_check(const vk_context *ctx, const vk_windows *vw,
                                       const sleapc_graph *g, const sleapc_backend_windows *w)
{
    if (vw->shape[0] < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "vulkan: forward windows: no frames uploaded");
    for (int64_t k = 0; k < w->n; k++)
        if (w->frame[k] < 0 || w->frame[k] >= vw->shape[0])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "vulkan: forward windows: window %lld: frame %d of %lld",
                                (long long)k, (int)w->frame[k], (long long)vw->shape[0]);
    const int64_t F = vw->shape[0], fc = vw->shape[1], fh = vw->shape[2], fw = vw->shape[3];
    const int64_t c = w->c ? w->c : fc, in_c = g->in_channels;
    bool convert = c == fc || (fc == 1 && c == 3) || (fc == 4 && c == 3) ||
                   ((fc == 3 || fc == 4) && c == 1);
    bool channels = convert && ((c == in_c && c <= 4) || (c == 1 && in_c == 3) ||
                                (c == 3 && in_c == 1));
    const uint32_t *max = ctx->props.limits.maxComputeWorkGroupCount;
    const int64_t lim = (int64_t)1 << 24;
    bool sizes = w->n < lim && w->win_h < lim && w->win_w < lim && w->rs_h < lim && w->rs_w < lim &&
                 w->out_h < lim && w->out_w < lim && w->n * c * w->win_h * w->rs_w < INT32_MAX &&
                 w->n * in_c * w->out_h * w->out_w < INT32_MAX && (uint64_t)(w->n * c) <= max[2] &&
                 div_up(w->rs_w, 8) <= max[0] && div_up(w->win_h, 8) <= max[1] &&
                 div_up(w->out_w, 8) <= max[0] && div_up(w->out_h, 8) <= max[1] &&
                 window_words(w) < INT32_MAX;
    if (sizes && matches(vw, w)) {
        int64_t bytes = F * c * w->sized_h * w->sized_w, words = (bytes + 3) / 4;
        uint32_t gx = div_up(words, 64) < max[0] ? div_up(words, 64) : max[0];
        sizes = w->match_h < lim && w->match_w < lim && w->sized_h < lim && w->sized_w < lim &&
                bytes < INT32_MAX && F * c * fh * w->match_w < INT32_MAX &&
                (uint64_t)(F * c) <= max[2] && div_up(w->match_w, 8) <= max[0] &&
                div_up(fh, 8) <= max[1] && div_up(words, (int64_t)gx * 64) <= max[1] &&
                window_words(w) + match_words(vw, w) < INT32_MAX;
    }
    (void)fw;
    return channels && sizes ? SLEAPC_OK : SLEAPC_ERR_UNSUPPORTED;
}

/* An axis's taps into the geometry words at *off: bounds (2 per output),
 * then weights (taps per output). */
static sleapc_status put_axis(vk_windows *vw, uint32_t *geom, int64_t in, int64_t out, int64_t *off,
                              int32_t *off_bounds, int32_t *off_weights, int32_t *taps)
{
    int64_t t = sleapc__resize_aa_max_taps(in, out);
    *taps = (int32_t)t;
    *off_bounds = (int32_t)*off;
    *off_weights = (int32_t)(*off + 2 * out);
    if (in == out) { /* a copy: no taps read */
        return SLEAPC_OK;
    }
    if ((size_t)out > vw->bounds_cap) {
        sleapc__free(vw->bounds);
        vw->bounds = sleapc__malloc((size_t)out * 2 * sizeof *vw->bounds);
        vw->bounds_cap = vw->bounds ? (size_t)out : 0;
        if (!vw->bounds)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "vulkan: out of memory");
    }
    float *weights = (float *)(geom + *off_weights);
    sleapc__resize_aa_axis(in, out, vw->bounds, weights);
    for (int64_t i = 0; i < 2 * out; i++)
        geom[*off + i] = (uint32_t)vw->bounds[i];
    *off += 2 * out + out * t;
    return SLEAPC_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static sleapc_status vk_ok(VkResult r, const char *what)
{
    if (r == VK_SUCCESS)
        return SLEAPC_OK;
    return sleapc__fail(r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                            ? SLEAPC_ERR_NOMEM
                            : SLEAPC_ERR_BACKEND,
                        "vulkan: windows: %s: %s", what, sleapc__vk_result_str(r));
}

/* The pool, the four sets and the command buffer, made once. */
static sleapc_status make_objects(vk_context *ctx, const vk_pipelines *pl, vk_windows *vw)
{
    if (vw->cmd)
        return SLEAPC_OK;
    VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 .descriptorCount = 4 * VK_N_BINDINGS};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = 4,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &size};
    sleapc_status st =
        vk_ok(vkCreateDescriptorPool(ctx->dev, &dpci, NULL, &vw->pool), "descriptor pool");
    if (st) {
        vw->pool = VK_NULL_HANDLE;
        return st;
    }
    VkDescriptorSetLayout layouts[4] = {pl->set_layout, pl->set_layout, pl->set_layout,
                                        pl->set_layout};
    VkDescriptorSet sets[4];
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = vw->pool,
                                      .descriptorSetCount = 4,
                                      .pSetLayouts = layouts};
    st = vk_ok(vkAllocateDescriptorSets(ctx->dev, &ai, sets), "descriptor sets");
    if (st)
        return st;
    vw->set_w = sets[0];
    vw->set_h = sets[1];
    vw->set_mw = sets[2];
    vw->set_mh = sets[3];
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->cmd_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    st = vk_ok(vkAllocateCommandBuffers(ctx->dev, &cai, &vw->cmd), "command buffer");
    if (st)
        vw->cmd = VK_NULL_HANDLE;
    return st;
}

static void barrier(VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         1, &mb, 0, NULL, 0, NULL);
}

/* The push constants of window_w.comp. */
typedef struct push_w {
    int32_t c, fc, fh, fw, win_h, win_w, rs_w, taps, off_bounds, off_weights, off_samples;
} push_w;

static void dispatch(VkCommandBuffer cmd, const vk_pipelines *pl, vk_kernel k, VkDescriptorSet set,
                     const void *push, uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz)
{
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe[k]);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->layout, 0, 1, &set, 0, NULL);
    vkCmdPushConstants(cmd, pl->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    vkCmdDispatch(cmd, gx, gy, gz);
    barrier(cmd);
}

/* The size matcher's two passes over all F frames into vw->sized: its
 * geometry at word *off of geom (then past it). */
static sleapc_status record_match(vk_context *ctx, const vk_pipelines *pl, vk_windows *vw,
                                  const sleapc_backend_windows *w, int64_t c, int64_t *off)
{
    const int64_t F = vw->shape[0], fc = vw->shape[1], fh = vw->shape[2], fw = vw->shape[3];
    uint32_t *geom = vw->geom.map;
    int32_t off_samples = (int32_t)*off;
    for (int64_t k = 0; k < F; k++) {
        geom[*off + 3 * k] = (uint32_t)k;
        geom[*off + 3 * k + 1] = geom[*off + 3 * k + 2] = 0;
    }
    *off += 3 * F;
    int32_t ob_w, ow_w, taps_w, ob_h, ow_h, taps_h;
    sleapc_status st = put_axis(vw, geom, fw, w->match_w, off, &ob_w, &ow_w, &taps_w);
    if (!st)
        st = put_axis(vw, geom, fh, w->match_h, off, &ob_h, &ow_h, &taps_h);
    if (st)
        return st;
    VkBuffer set_w[VK_N_BINDINGS] = {vw->tmp.buf, vw->frames.buf, vw->geom.buf, vw->geom.buf,
                                     vw->geom.buf};
    VkBuffer set_h[VK_N_BINDINGS] = {vw->sized.buf, vw->tmp.buf, vw->geom.buf, vw->geom.buf,
                                     vw->geom.buf};
    sleapc__vk_set_write(ctx, vw->set_mw, set_w);
    sleapc__vk_set_write(ctx, vw->set_mh, set_h);
    push_w pw = {(int32_t)c,  (int32_t)fc,          (int32_t)fh, (int32_t)fw, (int32_t)fh,
                 (int32_t)fw, (int32_t)w->match_w, taps_w,      ob_w,        ow_w,
                 off_samples};
    dispatch(vw->cmd, pl, VK_K_WINDOW_W, vw->set_mw, &pw, sizeof pw, div_up(w->match_w, 8),
             div_up(fh, 8), (uint32_t)(F * c));
    const int64_t bytes = F * c * w->sized_h * w->sized_w, words = (bytes + 3) / 4;
    const uint32_t max_x = ctx->props.limits.maxComputeWorkGroupCount[0];
    const uint32_t gx = div_up(words, 64) < max_x ? div_up(words, 64) : max_x;
    struct {
        int32_t fh, match_h, match_w, sized_h, sized_w, taps, off_bounds, off_weights, n_bytes,
            row;
    } ph = {(int32_t)fh,         (int32_t)w->match_h, (int32_t)w->match_w, (int32_t)w->sized_h,
            (int32_t)w->sized_w, taps_h,              ob_h,                ow_h,
            (int32_t)bytes,      (int32_t)gx * 64};
    dispatch(vw->cmd, pl, VK_K_FRAMES_MATCH, vw->set_mh, &ph, sizeof ph, gx,
             div_up(words, (int64_t)gx * 64), 1);
    return SLEAPC_OK;
}

sleapc_status sleapc__vk_windows_run(vk_context *ctx, const vk_pipelines *pl, vk_windows *vw,
                                     const sleapc_graph *g, vk_plan *p,
                                     const sleapc_backend_windows *w)
{
    const int64_t F = vw->shape[0], fc = vw->shape[1];
    const int64_t c = w->c ? w->c : fc;
    /* The image windows are cut from: the frames, or the frames size-matched
     * (made here unless the last run made them of this upload). */
    const bool match = matches(vw, w);
    const int64_t key[5] = {c, w->match_h, w->match_w, w->sized_h, w->sized_w};
    const bool matched = match && memcmp(vw->sized_of, key, sizeof key) == 0;
    const int64_t sc = match ? c : fc, fh = match ? w->sized_h : vw->shape[2],
                  fw = match ? w->sized_w : vw->shape[3];
    int64_t words = window_words(w) + (match ? match_words(vw, w) : 0);
    int64_t tmp_n = w->n * c * w->win_h * w->rs_w, match_n = F * c * vw->shape[2] * w->match_w;
    if (match && match_n > tmp_n)
        tmp_n = match_n;
    sleapc_status st = make_objects(ctx, pl, vw);
    if (!st)
        st = ensure(ctx, &vw->geom, (VkDeviceSize)words * 4, true);
    if (!st)
        st = ensure(ctx, &vw->tmp, (VkDeviceSize)tmp_n * sizeof(float), false);
    if (!st && match && !matched) {
        vw->sized_of[0] = 0;
        st = ensure(ctx, &vw->sized, (VkDeviceSize)((F * c * fh * fw + 3) / 4 * 4), false);
    }
    if (st)
        return st;
    uint32_t *geom = vw->geom.map;
    float *table = vw->geom.map;
    for (int v = 0; v < 256; v++)
        table[v] = (float)v / 255.0f; /* graph_input.c's rounding */
    bool cut = false;
    for (int64_t k = 0; k < w->n; k++) {
        /* A window wholly outside reads zeros wherever it is: keep it near. */
        int64_t x0 = clamp64(w->origin[2 * k], -w->win_w, fw);
        int64_t y0 = clamp64(w->origin[2 * k + 1], -w->win_h, fh);
        geom[GEOM_TABLE + 3 * k] = (uint32_t)w->frame[k];
        geom[GEOM_TABLE + 3 * k + 1] = (uint32_t)(int32_t)x0;
        geom[GEOM_TABLE + 3 * k + 2] = (uint32_t)(int32_t)y0;
        cut = cut || x0 != 0 || y0 != 0;
    }
    int64_t off = GEOM_TABLE + 3 * w->n;
    int32_t ob_w, ow_w, taps_w, ob_h, ow_h, taps_h;
    st = put_axis(vw, geom, w->win_w, w->rs_w, &off, &ob_w, &ow_w, &taps_w);
    if (!st)
        st = put_axis(vw, geom, w->win_h, w->rs_h, &off, &ob_h, &ow_h, &taps_h);
    if (st)
        return st;

    VkBuffer set_w[VK_N_BINDINGS] = {vw->tmp.buf, match ? vw->sized.buf : vw->frames.buf,
                                     vw->geom.buf, vw->geom.buf, vw->geom.buf};
    vk_view gv = {vw->geom.buf, 0, VK_WHOLE_SIZE};
    vk_view set_h[VK_N_BINDINGS] = {p->node[0], {vw->tmp.buf, 0, VK_WHOLE_SIZE}, gv, gv, gv};
    sleapc__vk_set_write(ctx, vw->set_w, set_w);
    sleapc__vk_set_write_views(ctx, vw->set_h, set_h);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    st = vk_ok(vkBeginCommandBuffer(vw->cmd, &bi), "begin commands");
    if (st)
        return st;
    /* The host's writes to the mapped buffers are visible to the shaders
     * (the submission makes them so). */
    if (match && !matched)
        st = record_match(ctx, pl, vw, w, c, &off);
    if (st) {
        vkEndCommandBuffer(vw->cmd);
        return st;
    }
    push_w pw = {(int32_t)c,        (int32_t)sc,       (int32_t)fh, (int32_t)fw,
                 (int32_t)w->win_h, (int32_t)w->win_w, (int32_t)w->rs_w, taps_w,
                 ob_w,              ow_w,              GEOM_TABLE};
    dispatch(vw->cmd, pl, VK_K_WINDOW_W, vw->set_w, &pw, sizeof pw, div_up(w->rs_w, 8),
             div_up(w->win_h, 8), (uint32_t)(w->n * c));
    struct {
        int32_t c, in_c, win_h, rs_h, rs_w, out_h, out_w, taps, off_bounds, off_weights;
    } ph = {(int32_t)c,
            (int32_t)g->in_channels,
            (int32_t)w->win_h,
            (int32_t)w->rs_h,
            (int32_t)w->rs_w,
            (int32_t)w->out_h,
            (int32_t)w->out_w,
            taps_h,
            ob_h,
            ow_h};
    dispatch(vw->cmd, pl, VK_K_WINDOW_H, vw->set_h, &ph, sizeof ph, div_up(w->out_w, 8),
             div_up(w->out_h, 8), (uint32_t)w->n);
    st = vk_ok(vkEndCommandBuffer(vw->cmd), "end commands");
    if (st)
        return st;
    uint32_t *in = p->in.map;
    in[VK_INPUT_MODE] = VK_INPUT_MODE_NONE;
    VkCommandBuffer cmds[2] = {vw->cmd, p->cmd};
    st = sleapc__vk_submit_wait_n(ctx, cmds, 2, p->fence);
    if (!st) {
        if (match)
            memcpy(vw->sized_of, key, sizeof key);
        if (w->win_h != w->rs_h || w->win_w != w->rs_w)
            atomic_fetch_add(&n_resized, 1);
        if (cut || w->win_h != fh || w->win_w != fw)
            atomic_fetch_add(&n_cut, 1);
        if (match)
            atomic_fetch_add(&n_matched, 1);
        if (c != fc)
            atomic_fetch_add(&n_converted, 1);
    }
    return st;
}

void sleapc__vk_windows_destroy(vk_context *ctx, vk_windows *vw)
{
    if (vw->cmd)
        vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, &vw->cmd);
    if (vw->pool)
        vkDestroyDescriptorPool(ctx->dev, vw->pool, NULL);
    sleapc__vk_buffer_destroy(ctx, &vw->frames);
    sleapc__vk_buffer_destroy(ctx, &vw->geom);
    sleapc__vk_buffer_destroy(ctx, &vw->tmp);
    sleapc__vk_buffer_destroy(ctx, &vw->sized);
    sleapc__free(vw->bounds);
    memset(vw, 0, sizeof *vw);
}
