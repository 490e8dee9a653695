/* The oneDNN backend: creation, precision and thread settings, forward.
 *
 * Threads: Debian's oneDNN runs on OpenMP and its C API (2.6) has no call to
 * set a thread count; oneDNN uses omp_get_max_threads() of the calling thread,
 * both when a primitive is created (it sizes its work split then) and when it
 * runs. So the backend sets OpenMP's count around planning and every forward
 * and restores the caller's count afterwards. omp_set_num_threads is looked up
 * at run time in the OpenMP runtime oneDNN already loaded, so that nothing
 * outside this folder links against or includes OpenMP. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "backends/onednn/onednn_backend.h"
#include "backends/onednn/onednn_impl.h"
#include "core/alloc.h"
#include "core/error.h"
#include "model/graph_input.h"

static const char *isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse4.1";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2-vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512-mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512-mic-4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512-vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512-bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "amx";
    default: return "no x86 vector extension oneDNN uses";
    }
}

/* The ISA values are nested bit masks: AMX includes AVX512-BF16's bits. */
static bool cpu_has_bf16(dnnl_cpu_isa_t isa)
{
    return ((unsigned)isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) ==
           (unsigned)dnnl_cpu_isa_avx512_core_bf16;
}

static int threads_enter(onednn_state *s)
{
    if (s->n_threads <= 0 || !s->omp_set || !s->omp_get)
        return 0;
    int prev = s->omp_get();
    if (prev != s->n_threads)
        s->omp_set(s->n_threads);
    return prev;
}

static void threads_leave(onednn_state *s, int prev)
{
    if (prev > 0 && prev != s->n_threads)
        s->omp_set(prev);
}

static void threads_lookup(onednn_state *s)
{
    void *self = dlopen(NULL, RTLD_NOW);
    if (!self)
        return;
    s->omp_set = (onednn_omp_set_fn)dlsym(self, "omp_set_num_threads");
    s->omp_get = (onednn_omp_get_fn)dlsym(self, "omp_get_max_threads");
    dlclose(self);
}

static bool same_shape(const onednn_state *s, const int64_t shape[4])
{
    return memcmp(s->plan.shape, shape, sizeof s->plan.shape) == 0;
}

static sleapc_status publish(onednn_state *s, sleapc_tensor_map *out)
{
    const onednn_plan *p = &s->plan;
    for (int o = 0; o < s->g->n_outputs; o++) {
        const sleapc_graph_output *go = &s->g->outputs[o];
        const int64_t *d = p->shapes[go->node];
        sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32, .ndim = d[2] ? 4 : 2,
                           .shape = {d[0], d[1], d[2], d[3]},
                           .data = onednn_value_data(p, p->out_value[o])};
        sleapc_status st = sleapc__tensor_map_set(out, go->name, &t);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

static float *input_buffer(onednn_state *s)
{
    const onednn_plan *p = &s->plan;
    return onednn_value_data(p, p->node_value[0]);
}

static sleapc_status onednn_forward(sleapc_backend *be, const sleapc_tensor *x,
                                    sleapc_tensor_map *out)
{
    onednn_state *s = be->impl;
    sleapc_status st = sleapc__graph_input_check(x, s->g->in_channels);
    if (st)
        return st;
    int64_t shape[4] = {x->shape[0], s->g->in_channels, x->shape[2], x->shape[3]};
    int prev = threads_enter(s);
    if (!same_shape(s, shape))
        st = sleapc__onednn_plan_build(s, shape);
    if (!st)
        st = sleapc__graph_input_prepare_as(x, s->g->in_channels, s->g->input_as_is,
                                            input_buffer(s));
    if (!st)
        st = sleapc__onednn_plan_run(s);
    threads_leave(s, prev);
    if (!st)
        st = publish(s, out);
    return st;
}

/* Plan, then run once on a zero image: the first execution of a primitive
 * still does one-time work (JIT, OpenMP team start-up). */
static sleapc_status onednn_warmup(sleapc_backend *be, const int64_t shape[4])
{
    onednn_state *s = be->impl;
    int64_t sh[4] = {shape[0], s->g->in_channels, shape[2], shape[3]};
    int prev = threads_enter(s);
    sleapc_status st = SLEAPC_OK;
    if (!same_shape(s, sh))
        st = sleapc__onednn_plan_build(s, sh);
    if (!st) {
        memset(input_buffer(s), 0, s->plan.values[s->plan.node_value[0]].bytes);
        st = sleapc__onednn_plan_run(s);
    }
    threads_leave(s, prev);
    return st;
}

/* Primitives keep the thread count they were created with, so a planned
 * shape is planned again under the new count. */
static sleapc_status onednn_set_n_threads(sleapc_backend *be, int n_threads)
{
    onednn_state *s = be->impl;
    if (n_threads == s->n_threads)
        return SLEAPC_OK;
    s->n_threads = n_threads;
    if (s->plan.shape[0] == 0)
        return SLEAPC_OK;  /* nothing planned yet */
    int64_t shape[4];
    memcpy(shape, s->plan.shape, sizeof shape);
    int prev = threads_enter(s);
    sleapc_status st = sleapc__onednn_plan_build(s, shape);
    threads_leave(s, prev);
    return st;
}

static void onednn_destroy(sleapc_backend *be)
{
    if (!be)
        return;
    onednn_state *s = be->impl;
    if (s) {
        sleapc__onednn_plan_free(s);
        for (int i = 0; i < s->g->n_nodes; i++) {
            if (s->wpack)
                sleapc__onednn_pack_free(&s->wpack[i]);
            if (s->bpack)
                sleapc__onednn_pack_free(&s->bpack[i]);
        }
        sleapc__free(s->wpack);
        sleapc__free(s->bpack);
        sleapc__bf16_plan_free(&s->bf16);
        if (s->stream)
            dnnl_stream_destroy(s->stream);
        if (s->eng)
            dnnl_engine_destroy(s->eng);
        sleapc__free(s);
    }
    sleapc__free(be);
}

static const struct sleapc_backend_ops onednn_ops = {
    .abi = SLEAPC_BACKEND_ABI,
    .name = "onednn",
    .forward = onednn_forward,
    .warmup = onednn_warmup,
    .destroy = onednn_destroy,
    .set_n_threads = onednn_set_n_threads,
};

static sleapc_status check_precision(sleapc_precision precision)
{
    if (precision == SLEAPC_PRECISION_FP32)
        return SLEAPC_OK;
    if (precision != SLEAPC_PRECISION_BF16)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "fp16 is not supported (use fp32 or bf16)");
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    if (!cpu_has_bf16(isa))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "bf16 needs a CPU with AVX512-BF16 or AMX (this one has %s)",
                            isa_name(isa));
    return SLEAPC_OK;
}

static sleapc_status onednn_create(const sleapc_graph *g, const sleapc_backend_opts *opts,
                                   sleapc_backend **out)
{
    sleapc_status st = check_precision(opts->precision);
    if (st)
        return st;
    if (g->n_nodes < 1 || g->nodes[0].op != SLEAPC_OP_INPUT)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "graph has no input node");
    for (int i = 0; i < g->n_nodes; i++) {
        st = sleapc__onednn_node_supported(g, i);
        if (st)
            return st;
    }
    sleapc_backend *be = sleapc__calloc(1, sizeof *be);
    onednn_state *s = sleapc__calloc(1, sizeof *s);
    if (!be || !s) {
        sleapc__free(be);
        sleapc__free(s);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create backend: out of memory");
    }
    be->ops = &onednn_ops;
    be->impl = s;
    strcpy(be->device, "cpu");
    s->g = g;
    if (opts->precision == SLEAPC_PRECISION_BF16) {
        st = sleapc__bf16_plan_make(g, sleapc__bf16_keep_or_default(opts->bf16_keep), &s->bf16);
        if (st)
            goto fail;
    }
    s->n_threads = opts->n_threads;
    threads_lookup(s);
    s->wpack = sleapc__calloc((size_t)g->n_nodes, sizeof *s->wpack);
    s->bpack = sleapc__calloc((size_t)g->n_nodes, sizeof *s->bpack);
    if (!s->wpack || !s->bpack) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "create backend: out of memory");
        goto fail;
    }
    st = sleapc__onednn_check(dnnl_engine_create(&s->eng, dnnl_cpu, 0), "create engine", "(none)");
    if (!st)
        st = sleapc__onednn_check(dnnl_stream_create(&s->stream, s->eng, dnnl_stream_default_flags),
                                  "create stream", "(none)");
    if (st)
        goto fail;
    *out = be;
    return SLEAPC_OK;
fail:
    onednn_destroy(be);
    return st;
}

static int onednn_score(void)
{
    /* The order "auto" serves before it has measured anything (a run too
     * short to repay timing, an empty cache): native first on every CPU.
     * Measured in float32 (bench/README.md, "Backend order"): oneDNN 2.6 ran
     * the four bench networks 1.5-1.8x slower than native on an AMD EPYC
     * with AVX-512 (Zen 5), about even on AVX2 (Zen 3) once native had
     * Winograd, and 2-7x slower on an Intel Xeon with AMX (as reported with
     * the issue that changed this order). It stays available by name and to
     * auto's measurement. */
    if (dnnl_engine_get_count(dnnl_cpu) == 0)
        return 0;
    return 1;
}

/* The library loaded at run time, which may differ from the headers'. */
static void onednn_version(char *out, size_t cap)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(out, cap, "%d.%d.%d", v->major, v->minor, v->patch);
}

const struct sleapc_backend_factory sleapc__onednn_factory = {
    .name = "onednn",
    .score = onednn_score,
    .create = onednn_create,
    .version = onednn_version,
};
