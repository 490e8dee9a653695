/* Global peaks found on the Vulkan device (the contract's
 * device_global_peaks, shaders/peaks_global.comp) against the host's
 * sleapc__peaks_find_global on the same maps. A graph whose only node is its
 * input hands the maps to the shader exactly (float32 inputs in [0, 1] are
 * not rescaled). Cases: random blobs with noise, a constant map, two equal
 * maxima in different rows and columns (x and y found independently), +0
 * and -0 maxima, a NaN, maxima on the border (the patch reaches outside),
 * maps smaller than the shader's 64 threads, maxima below and exactly at the
 * threshold, patch sides 0, 1, 4, 5 and 22.
 *
 * Exact: grid indices (unrefined coordinates), values (bit for bit; NaN as
 * NaN), which maps fall below the threshold. Refined coordinates: within
 * 4 * FLT_EPSILON * max(|x|, k/2). The sums are made in the host's order
 * without fused multiply-adds, so they are equal; only the division may
 * differ, by up to 2.5 ulp of the offset (|offset| <= k/2 for non-negative
 * maps: Vulkan's precision for OpFDiv), plus 1 ulp when the offset is added
 * to the grid index. Also: the head's maps do not come back, no allocation
 * in a warmed-up forward, refusals (patch side 23, a head that does not
 * exist, a second request), zero validation messages. Skipped (77) without
 * a Vulkan device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "core/peaks.h"
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

enum { B = 2, C = 7 };

static unsigned seed = 12345;

static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffffff) / 16777216.0f;
}

/* Map m of (B, C, h, w): a case per channel. */
static void fill(float *maps, int64_t h, int64_t w)
{
    for (int64_t s = 0; s < B; s++) {
        for (int64_t c = 0; c < C; c++) {
            float *m = maps + (s * C + c) * h * w;
            float cy = rnd() * (float)(h - 1), cx = rnd() * (float)(w - 1);
            for (int64_t y = 0; y < h; y++)
                for (int64_t x = 0; x < w; x++) {
                    float d2 = ((float)y - cy) * ((float)y - cy) + ((float)x - cx) * ((float)x - cx);
                    m[y * w + x] = 0.9f * expf(-d2 / 4.0f) + 0.05f * rnd();
                }
            switch (c) {
            case 1: /* constant */
                for (int64_t i = 0; i < h * w; i++)
                    m[i] = 0.5f;
                break;
            case 2: /* equal maxima: (row 1, col w-2) and (row h-1, col 0) */
                m[1 * w + (w - 2)] = 0.97f;
                m[(h - 1) * w + 0] = 0.97f;
                break;
            case 3: /* zeros, -0 first */
                for (int64_t i = 0; i < h * w; i++)
                    m[i] = i < 3 ? -0.0f : 0.0f;
                if (s == 1)
                    m[0] = 0.0f;
                break;
            case 4: /* a NaN in sample 0; a peak on the corner in sample 1 */
                if (s == 0)
                    m[h * w / 2] = NAN;
                else
                    m[(h - 1) * w + (w - 1)] = 0.99f;
                break;
            case 5: /* below the threshold (0.3) */
                for (int64_t i = 0; i < h * w; i++)
                    m[i] *= 0.25f;
                break;
            case 6: /* exactly at the threshold: kept */
                for (int64_t i = 0; i < h * w; i++)
                    m[i] = fminf(m[i], 0.3f);
                m[w + 1] = 0.3f;
                break;
            default:
                break;
            }
        }
    }
}

static bool same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void check_case(int64_t h, int64_t w, int k, float thr)
{
    char what[64];
    snprintf(what, sizeof what, "%lld x %lld, k %d", (long long)h, (long long)w, k);
    sleapc_graph g;
    vulkan_test_identity_graph(&g, C, "Maps");
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 1};
    CHECK_OK(sleapc__backend_create_from(vk_f, &g, &opts, &be));
    float *maps = malloc((size_t)(B * C * h * w) * sizeof *maps);
    float want_pk[B * C * 2], want_v[B * C];
    if (!maps)
        abort();
    fill(maps, h, w);
    CHECK_OK(sleapc__peaks_find_global(maps, B, C, h, w, thr, k, want_pk, want_v));
    if (be) {
        int64_t shape[4] = {B, C, h, w};
        CHECK_OK(sleapc__backend_warmup(be, shape));
        CHECK(sleapc__backend_device_global_peaks(be, "Nope", thr, k) == SLEAPC_ERR_UNSUPPORTED);
        CHECK(sleapc__backend_device_global_peaks(be, "Maps", thr, 23) == SLEAPC_ERR_UNSUPPORTED);
        CHECK_OK(sleapc__backend_device_global_peaks(be, "Maps", thr, k));
        CHECK(sleapc__backend_device_global_peaks(be, "Maps", thr, k) == SLEAPC_ERR_UNSUPPORTED);
        sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {B, C, h, w},
                           .data = maps};
        sleapc_tensor_map out = {0};
        int64_t before = sleapc__alloc_count();
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        CHECK_MSG(sleapc__alloc_count() == before, "%s: a warmed-up forward allocated", what);
        CHECK_MSG(!sleapc__tensor_map_get(&out, "Maps"), "%s: the maps came back", what);
        const sleapc_tensor *pk = sleapc__tensor_map_get(&out, "peaks");
        const sleapc_tensor *v = sleapc__tensor_map_get(&out, "peak_vals");
        bool ok = pk && v && pk->ndim == 3 && pk->shape[0] == B && pk->shape[1] == C &&
                  pk->shape[2] == 2 && v->ndim == 2 && v->shape[0] == B && v->shape[1] == C;
        CHECK_MSG(ok, "%s: no (B, C, 2) peaks and (B, C) values", what);
        for (int i = 0; ok && i < B * C; i++) {
            const float *gp = (const float *)pk->data + 2 * i;
            float gv = ((const float *)v->data)[i];
            CHECK_MSG(same_float(gv, want_v[i]), "%s: map %d: value %.9g, host %.9g", what, i,
                      gv, want_v[i]);
            for (int d = 0; d < 2; d++) {
                float a = gp[d], e = want_pk[2 * i + d];
                double tol = k == 0 ? 0 : 4 * FLT_EPSILON * fmax(fabs(e), k / 2.0);
                bool close = isnan(e) ? isnan(a) : fabs((double)a - e) <= tol;
                CHECK_MSG(close, "%s: map %d: %c %.9g, host %.9g", what, i, "xy"[d], a, e);
            }
        }
    }
    sleapc__backend_destroy(be);
    free(maps);
    sleapc__graph_clear(&g);
}

int main(void)
{
    vk_f = vulkan_test_factory();
    if (!vk_f)
        return 77;
    check_case(23, 19, 5, 0.3f);
    check_case(23, 19, 0, 0.3f);
    check_case(40, 33, 4, 0.3f);
    check_case(24, 24, 22, 0.3f);
    check_case(3, 5, 1, 0.3f);
    check_case(6, 4, 5, 0.0f);
    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on, "the validation layer did not run (install vulkan-validationlayers)");
    CHECK_MSG(messages == 0, "%lld validation messages", (long long)messages);
    return test_finish();
}
#endif
