/* Does the Vulkan backend's two-step forward (submit/collect) hide the
 * host's work behind the device's? A model's network on random frames,
 * --batches batches of --batch frames of --size pixels, each batch's maps
 * then run through the host's global peak finding --host-reps times (a
 * stand-in for post-processing): first forward then the host work, one
 * batch after the other; then batch k+1 submitted before batch k is
 * collected and worked on. Prints both times, the network alone and the
 * host work alone, and the ratio (sequential / overlapped; the most it can
 * be is (network + host) / max(network, host)).
 * Usage: bench_vulkan_overlap MODEL_DIR [--batch N (8)] [--size PX (256)]
 *        [--batches K (20)] [--host-reps R (1)] [--device D] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "core/peaks.h"
#include "model/model_impl.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *peaks_buf;

/* The host's peaks over every map output, reps times. */
static int host_work(const sleapc_tensor_map *out, int reps)
{
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < out->n; i++) {
            const sleapc_tensor *t = &out->tensors[i];
            if (t->ndim != 4)
                continue;
            if (sleapc__peaks_find_global(t->data, t->shape[0], t->shape[1], t->shape[2],
                                          t->shape[3], 0.2, 5, peaks_buf,
                                          peaks_buf + 2 * t->shape[0] * t->shape[1]))
                return 1;
        }
    return 0;
}

static int fail(const char *what)
{
    fprintf(stderr, "bench_vulkan_overlap: %s: %s\n", what, sleapc_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_vulkan_overlap MODEL_DIR [--batch N] [--size PX] "
                        "[--batches K] [--host-reps R] [--device D]\n");
        return 2;
    }
    long batch = 8, size = 256, n_batches = 20, reps = 1;
    const char *device = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--batch") == 0)
            batch = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--size") == 0)
            size = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--batches") == 0)
            n_batches = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--host-reps") == 0)
            reps = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--device") == 0)
            device = argv[i + 1];
    }
    if (batch < 1 || size < 8 || n_batches < 2 || reps < 0) {
        fprintf(stderr, "bench_vulkan_overlap: bad arguments\n");
        return 2;
    }
    sleapc_model *m = NULL;
    if (sleapc__model_load(argv[1], &m))
        return fail("model");
    const sleapc_graph *g = &m->graph;
    long stride = g->max_stride > 0 ? g->max_stride : 1;
    size = (size + stride - 1) / stride * stride;
    sleapc_backend_opts bo = {.n_threads = 1, .device = device};
    sleapc_backend *be = NULL;
    if (sleapc__backend_create("vulkan", g, &bo, &be))
        return fail("vulkan backend");
    int64_t c = g->in_channels, per = batch * c * size * size;
    uint8_t *frames = malloc((size_t)(per * 2));
    if (!frames)
        return fail("out of memory");
    unsigned seed = 1;
    for (int64_t i = 0; i < per * 2; i++) {
        seed = seed * 1103515245u + 12345u;
        frames[i] = (uint8_t)(seed >> 16);
    }
    sleapc_tensor x[2];
    for (int k = 0; k < 2; k++)
        x[k] = (sleapc_tensor){.dtype = SLEAPC_DTYPE_U8, .ndim = 4,
                               .shape = {batch, c, size, size}, .data = frames + k * per};
    sleapc_tensor_map out = {0};
    /* Warm up both plans. */
    if (sleapc__backend_forward(be, &x[0], &out) || sleapc__backend_submit(be, &x[0]) ||
        sleapc__backend_submit(be, &x[1]) || sleapc__backend_collect(be, &out) ||
        sleapc__backend_collect(be, &out))
        return fail("warm-up");
    int64_t most = 0; /* peaks and values of the largest map output */
    for (int i = 0; i < out.n; i++)
        if (out.tensors[i].ndim == 4 && out.tensors[i].shape[0] * out.tensors[i].shape[1] > most)
            most = out.tensors[i].shape[0] * out.tensors[i].shape[1];
    peaks_buf = malloc((size_t)(3 * most + 1) * sizeof(float));
    if (!peaks_buf)
        return fail("out of memory");

    double t0 = now_s(), net = 0, host = 0;
    for (long k = 0; k < n_batches; k++) {
        double a = now_s();
        if (sleapc__backend_forward(be, &x[k & 1], &out))
            return fail("forward");
        double b = now_s();
        if (host_work(&out, (int)reps))
            return fail("peaks");
        net += b - a;
        host += now_s() - b;
    }
    double sequential = now_s() - t0;

    t0 = now_s();
    if (sleapc__backend_submit(be, &x[0]))
        return fail("submit");
    for (long k = 0; k < n_batches; k++) {
        if (k + 1 < n_batches && sleapc__backend_submit(be, &x[(k + 1) & 1]))
            return fail("submit");
        if (sleapc__backend_collect(be, &out))
            return fail("collect");
        if (host_work(&out, (int)reps))
            return fail("peaks");
    }
    double overlapped = now_s() - t0;
    printf("device %s (%s), batch %ld, %ldx%ld, %ld batches, host peaks x%ld\n",
           sleapc__backend_device(be), sleapc__backend_device_name(be), batch, size, size,
           n_batches, reps);
    printf("network %.3f s + host %.3f s; sequential %.3f s, overlapped %.3f s: %.2fx "
           "(at most %.2fx)\n",
           net, host, sequential, overlapped, sequential / overlapped,
           (net + host) / (net > host ? net : host));
    sleapc__backend_destroy(be);
    sleapc__model_destroy(m);
    free(frames);
    free(peaks_buf);
    return 0;
}
