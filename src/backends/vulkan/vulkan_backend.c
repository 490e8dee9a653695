/* Runs the graph IR with Vulkan compute shaders. The weights go up once at
 * create; for each input shape (warmup, or the first forward of a new shape)
 * a plan allocates the buffers and records one command buffer
 * (vulkan_plan.c). A forward then only puts the input into the mapped
 * input buffer (uint8 frames as they are, normalised on the device:
 * vulkan_input.h), submits the recorded commands, waits, applies the shared
 * sigmoid to the sigmoid heads and hands out views of the mapped output
 * buffers: no allocation, no recording. */
#include "backends/vulkan/vulkan_backend.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/sigmoid.h"
#include "backends/vulkan/vulkan_async.h"
#include "backends/vulkan/vulkan_impl.h"
#include "backends/vulkan/vulkan_input.h"
#include "backends/vulkan/vulkan_paf.h"
#include "backends/vulkan/vulkan_sample.h"
#include "backends/vulkan/vulkan_window.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/settings.h"
#include "model/graph_input.h"

typedef struct vulkan_state {
    const sleapc_graph *g; /* borrowed: the model outlives the backend */
    vk_context ctx;
    vk_pipelines pl;
    vk_weights w;
    vk_plan plan;
    bool fp16;             /* binary16 buffers (--precision fp16); ctx.fp16_math: fp16 products */
    vk_peaks peaks;        /* device peak finding asked for (output -1: none) */
    vk_async async;        /* submit/collect: the spare plan and the runs in flight */
    vk_paf paf;            /* device PAF line scoring (vulkan_paf.h) */
    vk_windows win;        /* frames uploaded for forward_windows (vulkan_window.h) */
    vk_local_peaks lpeaks; /* device local peak finding asked for (output -1: none) */
    uint32_t kept;         /* outputs kept on the device (device_keep_head), a bit each */
    vk_sample sample;      /* heads read at cells (vulkan_sample.h) */
    vk_plan *last;         /* the plan whose outputs were handed out last; NULL: none */
} vulkan_state;

/* Maps (4-D outputs) copied down to the host in this process, and their
 * bytes: what sleapc__vulkan_map_stats reports. */
static atomic_llong n_maps_down, n_bytes_down;

void sleapc__vulkan_map_stats(int64_t *maps, int64_t *bytes)
{
    if (maps)
        *maps = (int64_t)atomic_load(&n_maps_down);
    if (bytes)
        *bytes = (int64_t)atomic_load(&n_bytes_down);
}

int64_t sleapc__vulkan_activation_bytes(const sleapc_backend *be, int64_t *align)
{
    const vulkan_state *vs = be->impl;
    *align = sleapc__vk_plan_align(&vs->ctx);
    return vs->plan.shape[0] ? (int64_t)vs->plan.arena.size : 0;
}

static void count_down(const int64_t *s, size_t elem)
{
    if (s[2] == 0)
        return;
    atomic_fetch_add(&n_maps_down, 1);
    atomic_fetch_add(&n_bytes_down, (long long)(s[0] * s[1] * s[2] * s[3] * (int64_t)elem));
}

static sleapc_status plan_into(vulkan_state *vs, const int64_t shape[4], vk_plan *p)
{
    if (vs->last == p)
        vs->last = NULL;
    sleapc__vk_plan_destroy(&vs->ctx, vs->g, p);
    return sleapc__vk_plan_create(&vs->ctx, &vs->pl, &vs->w, vs->g, shape,
                                  vs->fp16 ? sizeof(uint16_t) : sizeof(float), &vs->peaks,
                                  &vs->lpeaks, vs->kept, p);
}

/* A new plan of the backend's own; the spare goes with the old one. */
static sleapc_status plan(vulkan_state *vs, const int64_t shape[4])
{
    vs->last = NULL;
    sleapc__vk_async_reset(&vs->ctx, vs->g, &vs->async, &vs->plan);
    return plan_into(vs, shape, &vs->plan);
}

/* The current shape planned again (a device op just changed what the plan
 * records), so that the next forward allocates nothing; none yet: nothing. */
static sleapc_status replan(vulkan_state *vs)
{
    int64_t shape[4];
    memcpy(shape, vs->plan.shape, sizeof shape);
    return shape[0] == 0 ? SLEAPC_OK : plan(vs, shape);
}

/* The output named head, or -1 where there is none or the host applies
 * its sigmoid (the device's result would round otherwise): the heads the
 * device-side ops (peaks, PAF scores) may work on. */
static int device_head(const sleapc_graph *g, const char *head)
{
    for (int o = 0; o < g->n_outputs; o++)
        if (strcmp(g->outputs[o].name, head) == 0)
            return sleapc__sigmoid_on_host(g, g->outputs[o].node) ? -1 : o;
    return -1;
}

/* The output named head, sigmoid heads included (their maps are read or
 * fetched, then finished on the host); -1 where there is none. */
static int output_named(const sleapc_graph *g, const char *head)
{
    for (int o = 0; o < g->n_outputs; o++)
        if (strcmp(g->outputs[o].name, head) == 0)
            return o;
    return -1;
}

/* The views of a head's peaks found on the device. */
static sleapc_status peaks_outputs(const vk_plan *p, const int64_t *s, sleapc_tensor_map *out)
{
    float *data = p->peaks.buf.map;
    sleapc_tensor pk = {
        .dtype = SLEAPC_DTYPE_F32, .ndim = 3, .shape = {s[0], s[1], 2}, .data = data};
    sleapc_tensor vals = {.dtype = SLEAPC_DTYPE_F32,
                          .ndim = 2,
                          .shape = {s[0], s[1]},
                          .data = data + s[0] * s[1] * 2};
    sleapc_status st = sleapc__tensor_map_set(out, "peaks", &pk);
    return st ? st : sleapc__tensor_map_set(out, "peak_vals", &vals);
}

/* Find the head's global peaks on the device from now on (the contract's
 * device_global_peaks): a warmed-up shape is planned again at once, so the
 * next forward allocates nothing. */
static sleapc_status vulkan_device_global_peaks(sleapc_backend *be, const char *head,
                                                double threshold, int refine_k)
{
    vulkan_state *vs = be->impl;
    const sleapc_graph *g = vs->g;
    int o = device_head(g, head);
    if (o < 0 || refine_k < 0 || refine_k > VK_PEAKS_MAX_PATCH || vs->peaks.output >= 0 ||
        vs->lpeaks.output == o || (vs->kept >> o & 1))
        return SLEAPC_ERR_UNSUPPORTED;
    vs->peaks = (vk_peaks){.output = o, .threshold = (float)threshold, .refine_k = refine_k};
    sleapc_status st = replan(vs);
    if (st)
        vs->peaks.output = -1;
    return st;
}

/* Find the head's local peaks on the device from now on (the contract's
 * device_local_peaks), planned again at once like the global ones. */
static sleapc_status vulkan_device_local_peaks(sleapc_backend *be, const char *head,
                                               double threshold, int refine_k, int per_map)
{
    vulkan_state *vs = be->impl;
    const sleapc_graph *g = vs->g;
    int o = device_head(g, head);
    if (o < 0 || refine_k < 0 || refine_k > VK_PEAKS_MAX_PATCH || per_map < 1 ||
        vs->lpeaks.output >= 0 || vs->peaks.output == o || (vs->kept >> o & 1))
        return SLEAPC_ERR_UNSUPPORTED;
    vs->lpeaks = (vk_local_peaks){
        .output = o, .threshold = (float)threshold, .refine_k = refine_k, .per_map = per_map};
    sleapc_status st = replan(vs);
    if (st)
        vs->lpeaks.output = -1;
    return st;
}

/* Keep the head's maps on the device from now on, or bring them back (the
 * contract's device_keep_head), planned again at once like the peaks. */
static sleapc_status vulkan_device_keep_head(sleapc_backend *be, const char *head, bool keep)
{
    vulkan_state *vs = be->impl;
    int o = output_named(vs->g, head);
    if (o < 0 || o == vs->peaks.output || o == vs->lpeaks.output)
        return SLEAPC_ERR_UNSUPPORTED;
    uint32_t was = vs->kept, bit = (uint32_t)1 << o;
    vs->kept = keep ? was | bit : was & ~bit;
    if (vs->kept == was)
        return SLEAPC_OK;
    sleapc_status st = replan(vs);
    if (st)
        vs->kept = was;
    return st;
}

/* The kept head's maps of the last forward, brought down (the contract's
 * device_fetch_head). */
static sleapc_status vulkan_device_fetch_head(sleapc_backend *be, const char *head,
                                              sleapc_tensor_map *out)
{
    vulkan_state *vs = be->impl;
    const sleapc_graph *g = vs->g;
    int o = output_named(g, head);
    vk_plan *p = vs->last;
    if (o < 0 || !p || !(p->kept.mask >> o & 1))
        return sleapc__fail(SLEAPC_ERR_STATE, "vulkan: no kept \"%s\" maps of a last forward",
                            head);
    bool was = p->kept.fetched[o];
    sleapc_status st = sleapc__vk_kept_fetch(&vs->ctx, g, p, o);
    if (st)
        return st;
    const int64_t *s = p->shapes[g->outputs[o].node];
    if (!was)
        count_down(s, p->elem);
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32,
                       .ndim = s[2] ? 4 : 2,
                       .shape = {s[0], s[1], s[2], s[3]},
                       .data = p->out[o].map};
    return sleapc__tensor_map_set(out, head, &t);
}

/* The head's maps of the last forward read at cells, still in its node
 * buffer (the contract's device_sample_head), finished as forward finishes
 * them (the host's sigmoid). */
static sleapc_status vulkan_device_sample_head(sleapc_backend *be, const char *head, int64_t n,
                                               const int32_t (*cells)[3], float *values)
{
    vulkan_state *vs = be->impl;
    const sleapc_graph *g = vs->g;
    const vk_plan *p = vs->last ? vs->last : &vs->plan;
    int o = output_named(g, head);
    if (o < 0 || p->shape[0] == 0 || p->shapes[g->outputs[o].node][2] == 0)
        return SLEAPC_ERR_UNSUPPORTED;
    int node = g->outputs[o].node;
    const int64_t *s = p->shapes[node];
    sleapc_status st = sleapc__vk_sample(&vs->ctx, &vs->pl, &vs->sample, p->node[node], s, n,
                                         cells, values);
    if (!st && sleapc__sigmoid_on_host(g, node))
        sleapc__sigmoid_apply(values, n * s[1]);
    return st;
}

static sleapc_status plan_outputs(vulkan_state *vs, vk_plan *p, sleapc_tensor_map *out);
/* Score PAF lines against the head's maps of the last forward or collect,
 * still in its plan's node buffer (the contract's device_paf_scores). */
static sleapc_status vulkan_device_paf_scores(sleapc_backend *be, const char *head,
                                              const sleapc_backend_paf_lines *lines, float *scores)
{
    vulkan_state *vs = be->impl;
    const sleapc_graph *g = vs->g;
    const vk_plan *p = vs->last ? vs->last : &vs->plan;
    int o = device_head(g, head);
    if (o < 0 || p->shape[0] == 0 || o == p->peaks.output)
        return SLEAPC_ERR_UNSUPPORTED;
    int node = g->outputs[o].node;
    return sleapc__vk_paf_score(&vs->ctx, &vs->pl, &vs->paf, p->node[node], p->shapes[node],
                                lines, scores);
}

static sleapc_status vulkan_forward(sleapc_backend *be, const sleapc_tensor *x,
                                    sleapc_tensor_map *out)
{
    vulkan_state *vs = be->impl;
    const sleapc_graph *g = vs->g;
    sleapc_status st = sleapc__graph_input_check(x, g->in_channels);
    if (st)
        return st;
    int64_t shape[4] = {x->shape[0], g->in_channels, x->shape[2], x->shape[3]};
    if (memcmp(shape, vs->plan.shape, sizeof shape) != 0) {
        st = plan(vs, shape);
        if (st)
            return st;
    }
    st = sleapc__vk_input_fill(vs->plan.in.map, x, g->in_channels, g->input_as_is);
    if (!st)
        st = sleapc__vk_submit_wait(&vs->ctx, vs->plan.cmd, vs->plan.fence);
    vs->last = &vs->plan;
    return st ? st : plan_outputs(vs, &vs->plan, out);
}

static sleapc_status vulkan_upload_frames(sleapc_backend *be, const sleapc_tensor *frames)
{
    vulkan_state *vs = be->impl;
    return sleapc__vk_windows_upload(&vs->ctx, &vs->win, frames);
}

/* forward with the input cut from the uploaded frames on the device. */
static sleapc_status vulkan_forward_windows(sleapc_backend *be, const sleapc_backend_windows *w,
                                            sleapc_tensor_map *out)
{
    vulkan_state *vs = be->impl;
    const sleapc_graph *g = vs->g;
    sleapc_status st = sleapc__vk_windows_check(&vs->ctx, &vs->win, g, w);
    if (st)
        return st;
    int64_t shape[4] = {w->n, g->in_channels, w->out_h, w->out_w};
    if (memcmp(shape, vs->plan.shape, sizeof shape) != 0) {
        st = plan(vs, shape);
        if (st)
            return st;
    }
    st = sleapc__vk_windows_run(&vs->ctx, &vs->pl, &vs->win, g, &vs->plan, w);
    vs->last = &vs->plan;
    return st ? st : plan_outputs(vs, &vs->plan, out);
}

/* The outputs of a run of plan p, waited for, into out. */
static sleapc_status plan_outputs(vulkan_state *vs, vk_plan *p, sleapc_tensor_map *out)
{
    const sleapc_graph *g = vs->g;
    sleapc_status st = SLEAPC_OK;
    vs->last = p;
    for (int o = 0; o < g->n_outputs && !st; o++) {
        const sleapc_graph_output *go = &g->outputs[o];
        const int64_t *s = p->shapes[go->node];
        if (o == p->peaks.output) {
            st = peaks_outputs(p, s, out);
            continue;
        }
        if (p->kept.mask >> o & 1) { /* its shape only: the maps stay */
            p->kept.fetched[o] = false;
            sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32,
                               .ndim = s[2] ? 4 : 2,
                               .shape = {s[0], s[1], s[2], s[3]}};
            st = sleapc__tensor_map_set(out, go->name, &t);
            continue;
        }
        if (o == p->lpeaks.output) {
            bool fits = false;
            st = sleapc__vk_local_peaks_outputs(&vs->ctx, p, out, &fits);
            if (st || fits)
                continue;
            /* Over the room: the maps came down after all. */
        }
        float *data = p->out[o].map;
        count_down(s, p->elem);
        if (vs->fp16)
            sleapc__vk_half_to_float(data, s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1]);
        if (sleapc__sigmoid_on_host(g, go->node))
            sleapc__sigmoid_apply(data, s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1]);
        sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32,
                           .ndim = s[2] ? 4 : 2,
                           .shape = {s[0], s[1], s[2], s[3]},
                           .data = data};
        st = sleapc__tensor_map_set(out, go->name, &t);
    }
    return st;
}

/* The two-step forward (vulkan_async.h): plans for x's shape, the spare
 * made once, then the input goes up and the run starts. */
static sleapc_status vulkan_submit(sleapc_backend *be, const sleapc_tensor *x)
{
    vulkan_state *vs = be->impl;
    const sleapc_graph *g = vs->g;
    sleapc_status st = sleapc__graph_input_check(x, g->in_channels);
    if (st)
        return st;
    int64_t shape[4] = {x->shape[0], g->in_channels, x->shape[2], x->shape[3]};
    if (memcmp(shape, vs->plan.shape, sizeof shape) != 0) {
        if (vs->async.n > 0)
            return sleapc__fail(SLEAPC_ERR_STATE,
                                "vulkan: submit: a new input shape while runs are in flight");
        st = plan(vs, shape);
        if (st)
            return st;
    }
    if (memcmp(shape, vs->async.spare.shape, sizeof shape) != 0) {
        st = plan_into(vs, shape, &vs->async.spare);
        if (st)
            return st;
    }
    return sleapc__vk_async_submit(&vs->ctx, &vs->async, &vs->plan, x, g->in_channels,
                                   g->input_as_is);
}

static sleapc_status vulkan_collect(sleapc_backend *be, sleapc_tensor_map *out)
{
    vulkan_state *vs = be->impl;
    vk_plan *p = NULL;
    sleapc_status st = sleapc__vk_async_collect(&vs->ctx, &vs->async, &vs->plan, &p);
    vs->last = p; /* NULL after a failed run: the backend's own plan */
    return st ? st : plan_outputs(vs, p, out);
}

/* Plan, then run once on zeros: the first submission pays for the driver's
 * lazy work (shader compilation on some drivers, page faults). */
static sleapc_status vulkan_warmup(sleapc_backend *be, const int64_t shape[4])
{
    vulkan_state *vs = be->impl;
    int64_t s[4] = {shape[0], vs->g->in_channels, shape[2], shape[3]};
    if (memcmp(s, vs->plan.shape, sizeof s) == 0)
        return SLEAPC_OK;
    sleapc_status st = plan(vs, s);
    return st ? st : sleapc__vk_submit_wait(&vs->ctx, vs->plan.cmd, vs->plan.fence);
}

static void vulkan_destroy(sleapc_backend *be)
{
    if (!be)
        return;
    vulkan_state *vs = be->impl;
    if (vs) {
        if (vs->ctx.dev) {
            vkDeviceWaitIdle(vs->ctx.dev);
            sleapc__vk_async_reset(&vs->ctx, vs->g, &vs->async, &vs->plan);
            sleapc__vk_plan_destroy(&vs->ctx, vs->g, &vs->plan);
            sleapc__vk_paf_destroy(&vs->ctx, &vs->paf);
            sleapc__vk_sample_destroy(&vs->ctx, &vs->sample);
            sleapc__vk_windows_destroy(&vs->ctx, &vs->win);
            sleapc__vk_weights_destroy(&vs->ctx, vs->g, &vs->w);
            sleapc__vk_pipelines_destroy(&vs->ctx, &vs->pl);
        }
        sleapc__vk_context_destroy(&vs->ctx);
        sleapc__free(vs);
    }
    sleapc__free(be);
}

static const struct sleapc_backend_device_ops vulkan_device_ops = {
    .device_global_peaks = vulkan_device_global_peaks,
    .submit = vulkan_submit,
    .collect = vulkan_collect,
    .device_paf_scores = vulkan_device_paf_scores,
    .upload_frames = vulkan_upload_frames,
    .forward_windows = vulkan_forward_windows,
    .device_local_peaks = vulkan_device_local_peaks,
    .device_keep_head = vulkan_device_keep_head,
    .device_fetch_head = vulkan_device_fetch_head,
    .device_sample_head = vulkan_device_sample_head,
};

static const struct sleapc_backend_ops vulkan_ops = {
    .abi = SLEAPC_BACKEND_ABI,
    .name = "vulkan",
    .forward = vulkan_forward,
    .warmup = vulkan_warmup,
    .destroy = vulkan_destroy,
    .device = &vulkan_device_ops,
};

static sleapc_status vulkan_create(const sleapc_graph *g, const sleapc_backend_opts *opts,
                                   sleapc_backend **out)
{
    if (opts->precision != SLEAPC_PRECISION_FP32 && opts->precision != SLEAPC_PRECISION_FP16)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "vulkan: computes in fp32 or fp16, not %s",
                            sleapc__precision_name(opts->precision));
    sleapc_status st = sleapc__vk_check_graph(g);
    if (st)
        return st;
    /* Measured on the reference crops: binary16 values put an embedding's
     * vectors 3e-4 from sleap-nn's, thirty times the 1e-5 they are held to. */
    if (g->input_as_is && opts->precision == SLEAPC_PRECISION_FP16)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "vulkan: fp16 is not supported for an embedding model (its vectors "
                            "are 3e-4 off in fp16); use fp32");
    sleapc_backend *be = sleapc__calloc(1, sizeof *be);
    vulkan_state *vs = sleapc__calloc(1, sizeof *vs);
    if (!be || !vs) {
        sleapc__free(be);
        sleapc__free(vs);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "vulkan: out of memory");
    }
    be->ops = &vulkan_ops;
    be->impl = vs;
    vs->g = g;
    vs->fp16 = opts->precision == SLEAPC_PRECISION_FP16;
    vs->peaks.output = -1;
    vs->lpeaks.output = -1;
    vk_device_query q = {.spec = opts->device, .allow_software = !opts->from_auto};
    st = sleapc__vk_context_create(&q, &vs->ctx);
    if (!st && vs->fp16 && !vs->ctx.storage16)
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                          "vulkan: fp16 needs 16-bit storage buffers "
                          "(storageBuffer16BitAccess), which %s lacks; use fp32",
                          vs->ctx.props.deviceName);
    /* fp16 arithmetic in the convolutions wherever the device has it;
     * SLEAPC_VULKAN_FP16_MATH=0 keeps fp16 storage only (for measuring one
     * against the other). */
    vs->ctx.fp16_math = vs->fp16 && vs->ctx.float16 && sleapc__settings_vulkan_fp16_math();
    if (!st)
        st = sleapc__vk_pipelines_create(&vs->ctx, vs->fp16, &vs->pl);
    if (!st)
        st = sleapc__vk_weights_create(&vs->ctx, g, vs->fp16, &vs->w);
    if (st) {
        vulkan_destroy(be);
        return st;
    }
    snprintf(be->device, sizeof be->device, "%s", vs->ctx.device);
    be->fp16_math = vs->ctx.fp16_math;
    sleapc__log(SLEAPC_LOG_INFO, "vulkan: %s (%s)%s", vs->ctx.props.deviceName, be->device,
                vs->ctx.fp16_math ? ", fp16 storage and arithmetic"
                : vs->fp16        ? ", fp16 storage"
                                  : "");
    *out = be;
    return SLEAPC_OK;
}

/* Whether Vulkan lists a GPU (score for "auto") or only a software device
 * (which runs when asked for by name): looked up once per process. */
static int probed_score;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

/* Whether this Linux machine has a device node a hardware Vulkan driver
 * would open (DRM render nodes, NVIDIA's, WSL's, Mali's, Adreno's). Without
 * one only a software device can be listed, which "auto" declines anyway:
 * the probe then skips creating a Vulkan instance (loading every driver,
 * lavapipe's LLVM among them: about 40 ms and 45 MiB a process). */
static bool hardware_gpu_node(void)
{
#if defined(__linux__)
    static const char *const nodes[] = {"/dev/nvidia0", "/dev/nvidiactl", "/dev/dxg",
                                        "/dev/mali0", "/dev/kgsl-3d0"};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        if (access(nodes[i], F_OK) == 0)
            return true;
    DIR *d = opendir("/dev/dri");
    bool render = false;
    for (struct dirent *e; d && !render && (e = readdir(d));)
        render = strncmp(e->d_name, "renderD", 7) == 0;
    if (d)
        closedir(d);
    return render;
#else
    return true; /* no such rule known here: probe */
#endif
}

static void probe(void)
{
    if (!hardware_gpu_node()) {
        probed_score = 1; /* at most a software device: runs when asked for by name */
        return;
    }
    sleapc_device_info devs[16];
    int n = sleapc__vk_list_devices(devs, 16);
    for (int i = 0; i < n && i < 16; i++) {
        int s = strcmp(devs[i].kind, "software") == 0 ? 1 : 30;
        if (s > probed_score)
            probed_score = s;
    }
}

static int vulkan_score(void)
{
    pthread_once(&probe_once, probe);
    return probed_score;
}

static int vulkan_list_devices(sleapc_device_info *out, int cap)
{
    return sleapc__vk_list_devices(out, cap);
}

const struct sleapc_backend_factory sleapc__vulkan_factory = {
    .name = "vulkan",
    .score = vulkan_score,
    .create = vulkan_create,
    .list_devices = vulkan_list_devices,
};
