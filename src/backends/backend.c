#include "backends/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend_auto.h"
#include "core/error.h"
#include "core/mem_budget.h"
#include "core/settings.h"
#include "model/graph_plan.h"

/* "cpu", "cuda", "mps", or one of those with ":<index>", as torch spells them;
 * "gpu[:N]" for a GPU of another vendor (the Vulkan backend). */
static bool device_parses(const char *dev)
{
    static const char *const kinds[] = {"cpu", "cuda", "mps", "gpu"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(kinds[i]);
        if (strncmp(dev, kinds[i], n) != 0)
            continue;
        if (dev[n] == '\0')
            return true;
        if (dev[n] != ':' || dev[n + 1] == '\0')
            return false;
        for (const char *p = dev + n + 1; *p; p++)
            if (*p < '0' || *p > '9')
                return false;
        return true;
    }
    return false;
}

sleapc_status sleapc__backend_check(const sleapc_backend *be)
{
    if (!be || !be->ops)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend has no operations table");
    const struct sleapc_backend_ops *ops = be->ops;
    const char *name = ops->name ? ops->name : "(unnamed)";
    if (ops->abi != SLEAPC_BACKEND_ABI)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s: ABI %u, this build needs %u", name,
                            (unsigned)ops->abi, (unsigned)SLEAPC_BACKEND_ABI);
    if (!ops->name || !ops->name[0])
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend has no name");
    if (!ops->forward)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s: no forward function", name);
    if (!ops->warmup)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s: no warmup function", name);
    if (!ops->destroy)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s: no destroy function", name);
    if (ops->delegate && ops->device)
        return sleapc__fail(SLEAPC_ERR_BACKEND,
                            "backend %s: a delegating backend hands over its delegate's device "
                            "ops and has none of its own", name);
    const struct sleapc_backend_device_ops *d = ops->device;
    if (d && !d->submit != !d->collect)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s: submit without collect or the reverse",
                            name);
    if (d && !d->upload_frames != !d->forward_windows)
        return sleapc__fail(SLEAPC_ERR_BACKEND,
                            "backend %s: upload_frames and forward_windows come together", name);
    if (d && !d->device_keep_head != !d->device_fetch_head)
        return sleapc__fail(SLEAPC_ERR_BACKEND,
                            "backend %s: device_keep_head and device_fetch_head come together",
                            name);
    if (memchr(be->device, '\0', sizeof be->device) == NULL || !device_parses(be->device))
        return sleapc__fail(SLEAPC_ERR_BACKEND, "backend %s: device string \"%.*s\" does not parse",
                            name, (int)sizeof be->device, be->device);
    return SLEAPC_OK;
}

sleapc_status sleapc__backend_create_from(const struct sleapc_backend_factory *f,
                                          const sleapc_graph *g, const sleapc_backend_opts *opts,
                                          sleapc_backend **out)
{
    *out = NULL;
    sleapc_backend_opts defaults = {0};
    sleapc_backend *be = NULL;
    sleapc_status st = f->create(g, opts ? opts : &defaults, &be);
    if (st)
        return sleapc__wrap(st, "create backend %s", f->name);
    st = sleapc__backend_check(be);
    if (st) {
        /* Only call destroy if the table says there is one. */
        if (be && be->ops && be->ops->destroy)
            be->ops->destroy(be);
        return st;
    }
    *out = be;
    return SLEAPC_OK;
}

bool sleapc__backend_serves_device(const struct sleapc_backend_factory *f, const char *device,
                                   bool by_name)
{
    if (!device || !*device || strcmp(device, "auto") == 0)
        return true;
    bool accel = f->list_devices != NULL;
    if (strcmp(device, "cpu") == 0)
        return !accel || by_name;
    return accel;
}

sleapc_status sleapc__backend_create(const char *name, const sleapc_graph *g,
                                     const sleapc_backend_opts *opts, sleapc_backend **out)
{
    if (!out || !g)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create backend: graph and out are required");
    *out = NULL;
    if (!name || !*name)
        name = "auto";
    /* SLEAPC_BACKEND pins what "auto" means: runs that must be reproducible
     * to the bit (tests, comparisons between runs) skip the measurement,
     * whose winner can change from run to run on a busy machine. */
    char pinned[64];
    if (strcmp(name, "auto") == 0 && sleapc__settings_backend_pin(pinned, sizeof pinned))
        name = pinned;
    if (strcmp(name, "auto") == 0) {
        sleapc_status st = sleapc__backend_auto_create(g, opts, out);
        if (st == SLEAPC_OK)
            (*out)->graph = g;
        return st;
    }
    for (int i = 0; i < sleapc__backend_count(); i++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
        if (strcmp(f->name, name) != 0)
            continue;
        const char *device = opts ? opts->device : NULL;
        if (!sleapc__backend_serves_device(f, device, true))
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "create backend %s: it runs on the CPU, not on device %s (GPUs: "
                                "backend vulkan or auto)",
                                name, device);
        if (f->score() <= 0)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "create backend %s: cannot run on this machine",
                                name);
        sleapc_status st = sleapc__backend_create_from(f, g, opts, out);
        if (st == SLEAPC_OK) {
            (*out)->graph = g;
            sleapc__log(SLEAPC_LOG_INFO, "backend: %s", f->name);
        }
        return st;
    }
    char names[256] = "";
    size_t len = 0;
    for (int i = 0; i < sleapc__backend_count() && len < sizeof names - 32; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                                sleapc__backend_factory(i)->name);
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create backend: unknown backend \"%s\" (built in: %s, auto)",
                        name, names);
}

/* Time spent in forward passes on this thread: callers attribute network
 * time to themselves by reading it before and after (a forward runs on its
 * caller's thread, whatever threads the backend uses inside). */
static _Thread_local int64_t forward_ns, setup_ns, run_samples;
static _Thread_local uint64_t run_id;

int64_t sleapc__backend_forward_ns(void)
{
    return forward_ns;
}

int64_t sleapc__backend_setup_ns(void)
{
    return setup_ns;
}

void sleapc__backend_add_setup_ns(int64_t ns)
{
    setup_ns += ns;
}

void sleapc__backend_run_begin(int64_t samples)
{
    run_samples = samples > 0 ? samples : 0;
    run_id++;
}

void sleapc__backend_run_end(void)
{
    run_samples = 0;
}

int64_t sleapc__backend_run_samples(void)
{
    return run_samples;
}

uint64_t sleapc__backend_run_id(void)
{
    return run_id;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t sleapc__backend_mem_need(const sleapc_graph *g, const int64_t shape[4])
{
    /* The arena the planner gives the native, oneDNN and Vulkan backends,
     * plus room for their scratch and copies beside it. */
    int64_t need = sleapc__graph_peak_bytes(g, shape[0], shape[2], shape[3]);
    if (need < 0 || need == INT64_MAX)
        return need;
    return need + need / 8;
}

/* Before a backend plans for a new input shape: the activations it will
 * hold at least must fit what the process may take, or the plan is refused
 * here with a message (some libraries do not check their allocations). */
static sleapc_status check_memory(sleapc_backend *be, const int64_t shape[4])
{
    const int64_t *c = be->mem_checked;
    if (!be->graph || (shape[0] <= c[0] && shape[1] == c[1] && shape[2] == c[2] &&
                       shape[3] == c[3]))
        return SLEAPC_OK; /* no more than a size already checked */
    int64_t need = sleapc__backend_mem_need(be->graph, shape);
    if (need == -2)
        return SLEAPC_ERR_NOMEM;
    if (need < 0)
        return SLEAPC_OK; /* the backend's own shape check says why */
    char what[160];
    snprintf(what, sizeof what, "the network on an input of %lld x %lld x %lld x %lld (batch, "
             "channels, height, width)", (long long)shape[0], (long long)shape[1],
             (long long)shape[2], (long long)shape[3]);
    sleapc_status st = sleapc__mem_check(need, what);
    if (st == SLEAPC_OK)
        memcpy(be->mem_checked, shape, sizeof be->mem_checked);
    return st;
}

static sleapc_status in_flight_error(const sleapc_backend *be, const char *what)
{
    return sleapc__fail(SLEAPC_ERR_STATE, "%s (%s backend): %d submitted forward%s not collected",
                        what, be->ops->name, be->in_flight, be->in_flight == 1 ? "" : "s");
}

sleapc_status sleapc__backend_forward(sleapc_backend *be, const sleapc_tensor *x,
                                      sleapc_tensor_map *out)
{
    if (!be || !x || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "forward: backend, input and output are required");
    sleapc__tensor_map_clear(out);
    if (be->in_flight)
        return in_flight_error(be, "forward");
    if (x->ndim == 4) {
        sleapc_status st = check_memory(be, x->shape);
        if (st)
            return st;
    }
    int64_t t0 = now_ns(), setup0 = setup_ns;
    sleapc_status st = be->ops->forward(be, x, out);
    forward_ns += now_ns() - t0 - (setup_ns - setup0);
    if (st)
        return sleapc__wrap(st, "forward (%s backend)", be->ops->name);
    return SLEAPC_OK;
}

sleapc_status sleapc__backend_warmup(sleapc_backend *be, const int64_t shape[4])
{
    if (!be || !shape)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "warmup: backend and shape are required");
    if (be->in_flight)
        return in_flight_error(be, "warmup");
    sleapc_status st = check_memory(be, shape);
    if (st)
        return st;
    st = be->ops->warmup(be, shape);
    if (st)
        return sleapc__wrap(st, "warmup (%s backend)", be->ops->name);
    return SLEAPC_OK;
}

sleapc_status sleapc__backend_set_n_threads(sleapc_backend *be, int n_threads)
{
    if (!be)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "set threads: no backend");
    if (!be->ops->set_n_threads)
        return SLEAPC_OK;  /* default: the count chosen at creation stays */
    return be->ops->set_n_threads(be, n_threads);
}

const struct sleapc_backend_device_ops *sleapc__backend_device_ops(sleapc_backend *be,
                                                                   sleapc_backend **target)
{
    /* A delegate may delegate in turn; the depth bounds a loop. */
    for (int depth = 0; be && be->ops->delegate && depth < 8; depth++)
        be = be->ops->delegate(be);
    if (target)
        *target = be;
    return be && !be->ops->delegate ? be->ops->device : NULL;
}

sleapc_status sleapc__backend_device_global_peaks(sleapc_backend *be, const char *head,
                                                  double threshold, int refine_k)
{
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = be ? sleapc__backend_device_ops(be, &t) : NULL;
    if (!head || !d || !d->device_global_peaks)
        return SLEAPC_ERR_UNSUPPORTED;
    if (be->in_flight)
        return in_flight_error(be, "device peaks");
    return d->device_global_peaks(t, head, threshold, refine_k);
}

bool sleapc__backend_can_submit(sleapc_backend *be)
{
    const struct sleapc_backend_device_ops *d = be ? sleapc__backend_device_ops(be, NULL) : NULL;
    return d && d->submit && d->collect;
}

sleapc_status sleapc__backend_submit(sleapc_backend *be, const sleapc_tensor *x)
{
    if (!be || !x)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "submit: backend and input are required");
    if (!sleapc__backend_can_submit(be))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "submit: the %s backend runs forward only",
                            be->ops->name);
    if (be->in_flight >= SLEAPC_BACKEND_MAX_IN_FLIGHT)
        return in_flight_error(be, "submit");
    if (x->ndim == 4) {
        sleapc_status st = check_memory(be, x->shape);
        if (st)
            return st;
    }
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = sleapc__backend_device_ops(be, &t);
    int64_t t0 = now_ns(), setup0 = setup_ns;
    sleapc_status st = d->submit(t, x);
    forward_ns += now_ns() - t0 - (setup_ns - setup0);
    if (st)
        return sleapc__wrap(st, "submit (%s backend)", be->ops->name);
    be->in_flight++;
    return SLEAPC_OK;
}

sleapc_status sleapc__backend_collect(sleapc_backend *be, sleapc_tensor_map *out)
{
    if (!be || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "collect: backend and output are required");
    sleapc__tensor_map_clear(out);
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = sleapc__backend_device_ops(be, &t);
    if (!d || !d->collect || be->in_flight == 0)
        return sleapc__fail(SLEAPC_ERR_STATE, "collect (%s backend): nothing was submitted",
                            be->ops->name);
    int64_t t0 = now_ns();
    sleapc_status st = d->collect(t, out);
    forward_ns += now_ns() - t0;
    be->in_flight--; /* collected, or lost with its error */
    if (st)
        return sleapc__wrap(st, "collect (%s backend)", be->ops->name);
    return SLEAPC_OK;
}

sleapc_status sleapc__backend_device_paf_scores(sleapc_backend *be, const char *head,
                                                const sleapc_backend_paf_lines *lines,
                                                float *scores)
{
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = be ? sleapc__backend_device_ops(be, &t) : NULL;
    if (!head || !lines || !d || !d->device_paf_scores)
        return SLEAPC_ERR_UNSUPPORTED;
    if (lines->n < 0 || (lines->n && (!lines->sample || !lines->edge || !lines->src ||
                                      !lines->dst || !scores)) ||
        lines->n_points < 1 || !lines->t || lines->paf_stride < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "device PAF scores: bad arguments");
    if (be->in_flight) /* the maps scored are the last forward's */
        return in_flight_error(be, "device PAF scores");
    if (lines->n == 0)
        return SLEAPC_OK;
    return d->device_paf_scores(t, head, lines, scores);
}

bool sleapc__backend_has_windows(sleapc_backend *be)
{
    const struct sleapc_backend_device_ops *d = be ? sleapc__backend_device_ops(be, NULL) : NULL;
    return d && d->upload_frames && d->forward_windows;
}

sleapc_status sleapc__backend_upload_frames(sleapc_backend *be, const sleapc_tensor *frames)
{
    if (!sleapc__backend_has_windows(be))
        return SLEAPC_ERR_UNSUPPORTED;
    if (!frames || !frames->data || frames->dtype != SLEAPC_DTYPE_U8 || frames->ndim != 4)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "upload frames: (F, C, H, W) uint8 expected");
    if (be->in_flight)
        return in_flight_error(be, "upload frames");
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = sleapc__backend_device_ops(be, &t);
    int64_t t0 = now_ns();
    sleapc_status st = d->upload_frames(t, frames);
    forward_ns += now_ns() - t0;
    return st;
}

sleapc_status sleapc__backend_forward_windows(sleapc_backend *be, const sleapc_backend_windows *w,
                                              sleapc_tensor_map *out)
{
    if (!sleapc__backend_has_windows(be))
        return SLEAPC_ERR_UNSUPPORTED;
    if (!w || !out || w->n < 1 || !w->frame || !w->origin || w->win_h < 1 || w->win_w < 1 ||
        w->rs_h < 1 || w->rs_w < 1 || w->out_h < w->rs_h || w->out_w < w->rs_w || w->c < 0 ||
        w->match_h < 0 || w->match_w < 0 || !w->match_h != !w->match_w ||
        w->sized_h < w->match_h || w->sized_w < w->match_w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "forward windows: bad windows");
    if (be->in_flight)
        return in_flight_error(be, "forward windows");
    sleapc__tensor_map_clear(out);
    int64_t shape[4] = {w->n, be->graph ? be->graph->in_channels : 1, w->out_h, w->out_w};
    sleapc_status st = check_memory(be, shape);
    if (st)
        return st;
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = sleapc__backend_device_ops(be, &t);
    int64_t t0 = now_ns();
    st = d->forward_windows(t, w, out);
    forward_ns += now_ns() - t0;
    if (st && st != SLEAPC_ERR_UNSUPPORTED)
        return sleapc__wrap(st, "forward windows (%s backend)", be->ops->name);
    return st;
}

sleapc_status sleapc__backend_device_local_peaks(sleapc_backend *be, const char *head,
                                                 double threshold, int refine_k, int per_map)
{
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = be ? sleapc__backend_device_ops(be, &t) : NULL;
    if (!head || !d || !d->device_local_peaks)
        return SLEAPC_ERR_UNSUPPORTED;
    if (be->in_flight)
        return in_flight_error(be, "device peaks");
    return d->device_local_peaks(t, head, threshold, refine_k, per_map);
}

sleapc_status sleapc__backend_device_keep_head(sleapc_backend *be, const char *head, bool keep)
{
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = be ? sleapc__backend_device_ops(be, &t) : NULL;
    if (!head || !d || !d->device_keep_head)
        return SLEAPC_ERR_UNSUPPORTED;
    if (be->in_flight)
        return in_flight_error(be, "keep head");
    return d->device_keep_head(t, head, keep);
}

sleapc_status sleapc__backend_device_fetch_head(sleapc_backend *be, const char *head,
                                                sleapc_tensor_map *out)
{
    if (!be || !head || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "fetch head: backend, head and map are required");
    const sleapc_tensor *t = sleapc__tensor_map_get(out, head);
    if (t && t->data)
        return SLEAPC_OK; /* it came back with the forward */
    sleapc_backend *target;
    const struct sleapc_backend_device_ops *d = sleapc__backend_device_ops(be, &target);
    if (!t || !d || !d->device_fetch_head)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "fetch head (%s backend): no \"%s\" maps",
                            be->ops->name, head);
    if (be->in_flight)
        return in_flight_error(be, "fetch head");
    sleapc_status st = d->device_fetch_head(target, head, out);
    if (st)
        return sleapc__wrap(st, "fetch %s (%s backend)", head, be->ops->name);
    t = sleapc__tensor_map_get(out, head);
    if (!t || !t->data)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "fetch head (%s backend): \"%s\" did not come back",
                            be->ops->name, head);
    return SLEAPC_OK;
}

sleapc_status sleapc__backend_device_sample_head(sleapc_backend *be, const char *head, int64_t n,
                                                 const int32_t (*cells)[3], float *values)
{
    sleapc_backend *t;
    const struct sleapc_backend_device_ops *d = be ? sleapc__backend_device_ops(be, &t) : NULL;
    if (!head || !d || !d->device_sample_head)
        return SLEAPC_ERR_UNSUPPORTED;
    if (n < 0 || (n && (!cells || !values)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "device sample head: bad arguments");
    if (be->in_flight) /* the maps read are the last forward's */
        return in_flight_error(be, "device sample head");
    if (n == 0)
        return SLEAPC_OK;
    return d->device_sample_head(t, head, n, cells, values);
}

const char *sleapc__backend_name(const sleapc_backend *be)
{
    if (!be)
        return "";
    const char *serving = sleapc__backend_auto_serving(be);
    return serving ? serving : be->ops->name;
}

const char *sleapc__backend_device(const sleapc_backend *be)
{
    if (!be)
        return "";
    const sleapc_backend *s = sleapc__backend_auto_serving_backend(be);
    return (s ? s : be)->device;
}

const char *sleapc__backend_device_name(const sleapc_backend *be)
{
    if (!be)
        return "";
    const sleapc_backend *s = sleapc__backend_auto_serving_backend(be);
    return (s ? s : be)->device_name;
}

bool sleapc__backend_fp16_math(const sleapc_backend *be)
{
    if (!be)
        return false;
    const sleapc_backend *s = sleapc__backend_auto_serving_backend(be);
    return (s ? s : be)->fp16_math;
}

const char *sleapc__precision_name(sleapc_precision precision)
{
    switch (precision) {
    case SLEAPC_PRECISION_FP32:
        return "fp32";
    case SLEAPC_PRECISION_BF16:
        return "bf16";
    case SLEAPC_PRECISION_FP16:
        return "fp16";
    case SLEAPC_PRECISION_BF16_EMULATED:
        return "bf16-emulated";
    }
    return "?";
}

void sleapc__backend_destroy(sleapc_backend *be)
{
    if (be)
        be->ops->destroy(be);
}
