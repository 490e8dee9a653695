/* The Vulkan backend's two-step forward (the contract's submit/collect,
 * vulkan_async.h) against its plain forward on a real model
 * (minimal_instance_single_instance): batches of different random frames,
 * submitted two ahead (batch k+1 goes to the device before batch k is
 * collected: two in flight, counted by the contract's wrappers), collect
 * hands back every output byte for byte as forward does for the same batch
 * (the same recorded commands on the same device: no tolerance). The same
 * with the head's peaks found on the device. Also: no allocation in a
 * steady run of submits and collects, forward after it, a new batch size
 * after draining, and the refusals (a collect with nothing in flight, a
 * third run in flight, forward or a new shape while runs are in flight).
 * Under the validation layer (zero messages). Skipped (77) without a Vulkan
 * device or the data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "model/model_impl.h"
#include "test_util.h"
#include "vulkan_test_device.h"

#if !SLEAPC_HAVE_VULKAN
int main(void)
{
    printf("skipped: the vulkan backend is not built\n");
    return 77;
}
#else

enum { N_BATCH = 5, B = 2 };

/* A forward's outputs, copied (the backend's views last until its next run). */
typedef struct saved {
    int n;
    char names[SLEAPC_TENSOR_MAP_CAP][SLEAPC_TENSOR_NAME_CAP];
    size_t bytes[SLEAPC_TENSOR_MAP_CAP];
    void *data[SLEAPC_TENSOR_MAP_CAP];
} saved;

static size_t tensor_bytes(const sleapc_tensor *t)
{
    size_t n = 4; /* float32 outputs */
    for (int d = 0; d < t->ndim; d++)
        n *= (size_t)t->shape[d];
    return n;
}

static void save(const sleapc_tensor_map *m, saved *s)
{
    s->n = m->n;
    for (int i = 0; i < m->n; i++) {
        strcpy(s->names[i], m->names[i]);
        s->bytes[i] = tensor_bytes(&m->tensors[i]);
        s->data[i] = malloc(s->bytes[i]);
        if (!s->data[i])
            abort();
        memcpy(s->data[i], m->tensors[i].data, s->bytes[i]);
    }
}

static void release(saved *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->data[i]);
    s->n = 0;
}

static void check_same(const saved *want, const sleapc_tensor_map *got, const char *what, int k)
{
    CHECK_MSG(got->n == want->n, "%s, batch %d: %d outputs, forward %d", what, k, got->n,
              want->n);
    for (int i = 0; i < want->n; i++) {
        const sleapc_tensor *t = sleapc__tensor_map_get(got, want->names[i]);
        CHECK_MSG(t && tensor_bytes(t) == want->bytes[i], "%s, batch %d: output %s missing or "
                  "of another size", what, k, want->names[i]);
        if (t && tensor_bytes(t) == want->bytes[i])
            CHECK_MSG(memcmp(t->data, want->data[i], want->bytes[i]) == 0,
                      "%s, batch %d: output %s differs from forward's", what, k, want->names[i]);
    }
}

/* Forward each batch alone, then submit them two ahead and compare; twice
 * (the first pass makes the spare plan), counting the second's allocations. */
static void check_runs(sleapc_backend *be, sleapc_tensor *x, const char *what)
{
    saved want[N_BATCH];
    sleapc_tensor_map out = {0};
    for (int k = 0; k < N_BATCH; k++) {
        CHECK_OK(sleapc__backend_forward(be, &x[k], &out));
        save(&out, &want[k]);
    }
    for (int pass = 0; pass < 2; pass++) {
        int64_t allocs = 0, max_in_flight = 0;
        CHECK_OK(sleapc__backend_submit(be, &x[0]));
        for (int k = 0; k < N_BATCH; k++) {
            if (k + 1 < N_BATCH)
                CHECK_OK(sleapc__backend_submit(be, &x[k + 1]));
            if (be->in_flight > max_in_flight)
                max_in_flight = be->in_flight;
            int64_t a0 = sleapc__alloc_count();
            CHECK_OK(sleapc__backend_collect(be, &out));
            allocs += sleapc__alloc_count() - a0;
            check_same(&want[k], &out, what, k);
        }
        CHECK_MSG(max_in_flight == 2, "%s: at most %lld runs in flight", what,
                  (long long)max_in_flight);
        CHECK_MSG(be->in_flight == 0, "%s: %d runs left in flight", what, be->in_flight);
        if (pass == 1)
            CHECK_MSG(allocs == 0, "%s: %lld allocations in a steady run", what,
                      (long long)allocs);
    }
    /* forward again after the two-step runs */
    CHECK_OK(sleapc__backend_forward(be, &x[2], &out));
    check_same(&want[2], &out, what, 2);
    for (int k = 0; k < N_BATCH; k++)
        release(&want[k]);
}

int main(void)
{
    const struct sleapc_backend_factory *f = vulkan_test_factory();
    if (!f)
        return 77;
    test_require_data();
    sleapc_model *m = NULL;
    CHECK_OK(sleapc__model_load(
        test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"), &m));
    if (!m)
        return test_finish();
    const sleapc_graph *g = &m->graph;
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 1};
    CHECK_OK(sleapc__backend_create_from(f, g, &opts, &be));
    if (!be) {
        sleapc__model_destroy(m);
        return test_finish();
    }
    CHECK(sleapc__backend_can_submit(be));
    int64_t side = g->max_stride > 0 ? 4 * (int64_t)g->max_stride : 64;
    int64_t c = g->in_channels, per = B * c * side * side;
    uint8_t *frames = malloc((size_t)(per * N_BATCH));
    if (!frames)
        abort();
    unsigned seed = 7;
    for (int64_t i = 0; i < per * N_BATCH; i++) {
        seed = seed * 1103515245u + 12345u;
        frames[i] = (uint8_t)(seed >> 16);
    }
    sleapc_tensor x[N_BATCH];
    for (int k = 0; k < N_BATCH; k++)
        x[k] = (sleapc_tensor){.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {B, c, side, side},
                               .data = frames + k * per};

    check_runs(be, x, "maps");

    /* Refusals, and nothing lost by them. */
    sleapc_tensor_map out = {0};
    CHECK(sleapc__backend_collect(be, &out) == SLEAPC_ERR_STATE);
    CHECK_OK(sleapc__backend_submit(be, &x[0]));
    CHECK_OK(sleapc__backend_submit(be, &x[1]));
    CHECK(sleapc__backend_submit(be, &x[2]) == SLEAPC_ERR_STATE);
    CHECK(sleapc__backend_forward(be, &x[2], &out) == SLEAPC_ERR_STATE);
    CHECK(sleapc__backend_warmup(be, x[2].shape) == SLEAPC_ERR_STATE);
    CHECK_OK(sleapc__backend_collect(be, &out));
    sleapc_tensor one = x[3];
    one.shape[0] = 1;
    CHECK(sleapc__backend_submit(be, &one) == SLEAPC_ERR_STATE);
    CHECK_OK(sleapc__backend_collect(be, &out));
    CHECK(be->in_flight == 0);

    /* Another batch size after draining: planned again, the same as forward. */
    saved want1;
    CHECK_OK(sleapc__backend_forward(be, &one, &out));
    save(&out, &want1);
    CHECK_OK(sleapc__backend_submit(be, &one));
    CHECK_OK(sleapc__backend_collect(be, &out));
    check_same(&want1, &out, "batch of 1", 0);
    release(&want1);

    /* The head's peaks found on the device: each plan has its own peaks. */
    CHECK_OK(sleapc__backend_device_global_peaks(be, g->outputs[0].name, 0.2, 5));
    check_runs(be, x, "device peaks");

    sleapc__backend_destroy(be);
    /* Destroyed with runs in flight: waited for, nothing leaks. */
    be = NULL;
    CHECK_OK(sleapc__backend_create_from(f, g, &opts, &be));
    if (be) {
        CHECK_OK(sleapc__backend_submit(be, &x[0]));
        CHECK_OK(sleapc__backend_submit(be, &x[1]));
        sleapc__backend_destroy(be);
    }
    free(frames);
    sleapc__model_destroy(m);
    return test_finish();
}
#endif
