/* The Vulkan backend's input on the device (shaders/input_u8.comp): uint8
 * frames go up as they are and are normalised there, with channel
 * conversion (1 -> 3 replication, 3 -> 1 luma), and must be bit-identical to
 * the host's sleapc__graph_input_prepare: the shader reads the host's table
 * of v / 255.0f and sums the luma in the host's order without fused
 * multiply-adds, so no rounding differs. float32 inputs (prepared on the
 * host, both with and without the division by 255) likewise. A graph whose
 * only node is its input returns exactly what node 0 holds. Batches of 1 and
 * 3, sizes that are no multiple of the shader's 64-wide groups or of 4 bytes
 * per word, every byte value; no allocation in a warmed-up forward; under
 * the validation layer (zero messages). Skipped (77) without a Vulkan
 * device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "model/graph_input.h"
#include "test_util.h"
#include "vulkan_test_device.h"

#if !SLEAPC_HAVE_VULKAN
int main(void)
{
    printf("skipped: the vulkan backend is not built\n");
    return 77;
}
#else
#include "backends/vulkan/vulkan_backend.h"

static const struct sleapc_backend_factory *vk_f;

/* Forward x on be and compare node 0 bit for bit with the host's. */
static void check_same(sleapc_backend *be, const sleapc_tensor *x, int in_c, const char *what)
{
    int64_t n = x->shape[0] * in_c * x->shape[2] * x->shape[3];
    float *want = malloc((size_t)n * sizeof *want);
    if (!want)
        abort();
    CHECK_OK(sleapc__graph_input_prepare(x, in_c, want));
    sleapc_tensor_map out = {0};
    CHECK_OK(sleapc__backend_forward(be, x, &out));
    const sleapc_tensor *got = sleapc__tensor_map_get(&out, "Input");
    CHECK_MSG(got && got->shape[1] == in_c, "%s: no output of %d channels", what, in_c);
    if (got && got->shape[1] == in_c) {
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < n; i++)
            if (memcmp((const float *)got->data + i, want + i, sizeof(float)) != 0 && bad++ == 0)
                first = i;
        CHECK_MSG(bad == 0, "%s: %lld of %lld values differ (first at %lld: %.9g, host %.9g)",
                  what, (long long)bad, (long long)n, (long long)first,
                  first >= 0 ? ((const float *)got->data)[first] : 0.0,
                  first >= 0 ? want[first] : 0.0);
    }
    free(want);
}

static void check_case(int src_c, int in_c, int64_t b, int64_t h, int64_t w)
{
    char what[96];
    snprintf(what, sizeof what, "uint8 %d -> %d channels, (%lld, %lld, %lld)", src_c, in_c,
             (long long)b, (long long)h, (long long)w);
    sleapc_graph g;
    vulkan_test_identity_graph(&g, in_c, "Input");
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 1};
    CHECK_OK(sleapc__backend_create_from(vk_f, &g, &opts, &be));
    int64_t n = b * src_c * h * w;
    uint8_t *u8 = malloc((size_t)n);
    float *f32 = malloc((size_t)n * sizeof *f32);
    if (!u8 || !f32)
        abort();
    unsigned seed = (unsigned)(src_c * 31 + in_c * 7 + h);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        u8[i] = i < 256 ? (uint8_t)i : (uint8_t)(seed >> 24); /* every byte value */
    }
    if (be) {
        int64_t shape[4] = {b, src_c, h, w};
        CHECK_OK(sleapc__backend_warmup(be, shape));
        sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {b, src_c, h, w},
                           .data = u8};
        int64_t before = sleapc__alloc_count();
        check_same(be, &x, in_c, what);
        CHECK_MSG(sleapc__alloc_count() == before, "%s: a warmed-up forward allocated", what);
        /* float32: divided by 255 (max > 1), then as they are (max <= 1). */
        for (int64_t i = 0; i < n; i++)
            f32[i] = (float)u8[i];
        x.dtype = SLEAPC_DTYPE_F32;
        x.data = f32;
        check_same(be, &x, in_c, "float32 [0, 255]");
        for (int64_t i = 0; i < n; i++)
            f32[i] = (float)u8[i] / 300.0f;
        check_same(be, &x, in_c, "float32 [0, 1]");
    }
    sleapc__backend_destroy(be);
    free(u8);
    free(f32);
    sleapc__graph_clear(&g);
}

int main(void)
{
    vk_f = vulkan_test_factory();
    if (!vk_f)
        return 77;
    check_case(1, 1, 1, 17, 19);
    check_case(3, 3, 3, 13, 11);
    check_case(1, 3, 3, 9, 23);
    check_case(3, 1, 1, 31, 29);
    check_case(3, 1, 3, 7, 5);
    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on, "the validation layer did not run (install vulkan-validationlayers)");
    CHECK_MSG(messages == 0, "%lld validation messages", (long long)messages);
    return test_finish();
}
#endif
