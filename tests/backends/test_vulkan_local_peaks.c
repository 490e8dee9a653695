/* Local peaks found on the Vulkan device (the contract's device_local_peaks,
 * shaders/peaks_local_*.comp) against the host's sleapc__peaks_find_local on
 * the same maps. A graph whose only node is its input hands the maps to the
 * shaders exactly: the host's reference runs on what sleapc__graph_input_
 * prepare makes of them (a batch whose maximum exceeds 1 is divided by
 * 255), and in fp16 on those rounded to binary16 and widened back.
 *
 * Synthetic cases (a case per channel): random blobs with noise, plateaus
 * and equal neighbours (no peak), peaks on the corners and edges, values
 * exactly at the threshold (not kept) and one float above it (kept), NaN
 * (itself, and beside a peak: Torch's neighbourhood max turns NaN), -0 and
 * +0 neighbours under a negative threshold, subnormals (a GPU may flush
 * them in arithmetic; the shaders compare bits), a dense lattice of peaks;
 * patch sides 0, 1, 4, 5, 22; float32 and fp16 storage. Real maps: the
 * stored heads of the centroid and bottom-up reference cases (pkg_f0000),
 * at their manifest's threshold and patch.
 *
 * Exact: the count per sample and in all, and per peak (in the host's
 * order) its sample, channel, grid x and y (the host at patch side 0) and
 * value (bit for bit). Refined coordinates: within 4 * FLT_EPSILON *
 * max(|x|, k/2) of the host's. The sums are made in the host's order without
 * fused multiply-adds, so they are equal; only the division may differ, by
 * up to 2.5 ulp of the offset (Vulkan's precision for OpFDiv; |offset| <=
 * k/2 on non-negative patches), plus 1 ulp when it is added to the grid
 * index. Also: beyond the room the maps come back (bit for bit) and the
 * next batch has peaks again; the head's maps do not come back otherwise;
 * no allocation in a warmed-up forward; refusals; zero validation
 * messages. Skipped (77) without a Vulkan device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../layers/ops_ref_cases.h"
#include "backends/backend.h"
#include "core/alloc.h"
#include "core/peaks.h"
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
#include "backends/vulkan/vulkan_impl.h"

static const struct sleapc_backend_factory *vk_f;

static unsigned seed = 777;

static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffffff) / 16777216.0f;
}

enum { SYN_C = 8 };

/* (b, SYN_C, h, w) maps, a case per channel; thr: the threshold used. */
static void fill(float *maps, int64_t b, int64_t h, int64_t w, float thr)
{
    for (int64_t s = 0; s < b; s++) {
        for (int64_t c = 0; c < SYN_C; c++) {
            float *m = maps + (s * SYN_C + c) * h * w;
            for (int64_t i = 0; i < h * w; i++)
                m[i] = 0.05f * rnd();
            switch (c) {
            case 0: /* blobs */
                for (int k = 0; k < 3; k++) {
                    float cy = rnd() * (float)(h - 1), cx = rnd() * (float)(w - 1);
                    for (int64_t y = 0; y < h; y++)
                        for (int64_t x = 0; x < w; x++) {
                            float d2 = ((float)y - cy) * ((float)y - cy) +
                                       ((float)x - cx) * ((float)x - cx);
                            m[y * w + x] = fmaxf(m[y * w + x], 0.8f * expf(-d2 / 3.0f));
                        }
                }
                break;
            case 1: /* equal neighbours, a plateau, equal diagonals; one peak */
                m[0 * w + 1] = m[0 * w + 2] = 0.9f;
                if (h > 4 && w > 4)
                    for (int64_t y = 2; y < 5 && y < h; y++)
                        for (int64_t x = 2; x < 5 && x < w; x++)
                            m[y * w + x] = 0.7f;
                m[(h - 1) * w + (w - 1)] = 0.8f;
                if (h > 1 && w > 1)
                    m[(h - 2) * w + (w - 2)] = 0.8f;
                m[(h / 2) * w + 0] = 0.95f;
                break;
            case 2: /* corners and edges */
                m[0] = 0.9f;
                m[w - 1] = 0.91f;
                m[(h - 1) * w] = 0.92f;
                m[h * w - 1] = 0.93f;
                m[(h / 2) * w + (w - 1)] = 0.94f;
                break;
            case 3: /* at the threshold, one float above it */
                m[(h / 3) * w + w / 3] = thr;
                if (w > 4)
                    m[(h / 3) * w + w / 3 + 3] = nextafterf(thr, 2.0f);
                break;
            case 4: /* NaN; a peak beside a NaN; a peak beside an infinity's absence */
                m[(h / 2) * w + w / 2] = NAN;
                if (w > 3)
                    m[(h / 2) * w + w / 2 + 1] = 0.9f;
                m[0] = 0.6f;
                break;
            case 5: /* -0 and +0: +0 is not above -0; 0.5 above both */
                for (int64_t i = 0; i < h * w; i++)
                    m[i] = (i % 3 == 0) ? -0.0f : (i % 3 == 1 ? 0.0f : -0.25f);
                m[h * w / 2] = 0.5f;
                if (h >= 6 && w >= 6) { /* +0 ringed by -0; -0 ringed by -0.25 */
                    for (int64_t y = 0; y < 3; y++)
                        for (int64_t x = 0; x < 3; x++) {
                            m[y * w + x] = -0.0f;
                            m[(h - 1 - y) * w + (w - 1 - x)] = -0.25f;
                        }
                    m[1 * w + 1] = 0.0f;
                    m[(h - 2) * w + (w - 2)] = -0.0f;
                }
                break;
            case 6: /* subnormals among zeros */
                for (int64_t i = 0; i < h * w; i++)
                    m[i] = 0.0f;
                m[(h / 2) * w + w / 2] = 1e-40f;
                m[0] = 2e-41f;
                break;
            default: /* a lattice: a peak every other cell both ways */
                for (int64_t y = 0; y < h; y++)
                    for (int64_t x = 0; x < w; x++)
                        m[y * w + x] = (y % 2 == 0 && x % 2 == 0) ? 0.5f + 0.1f * rnd() : 0.1f;
                break;
            }
        }
    }
}

static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* What the device holds: the prepared input, rounded to binary16 in fp16. */
static float *device_view(const float *maps, int64_t b, int64_t c, int64_t h, int64_t w, bool fp16)
{
    int64_t n = b * c * h * w;
    float *v = malloc((size_t)n * sizeof *v);
    if (!v)
        abort();
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {b, c, h, w},
                       .data = (void *)maps};
    CHECK_OK(sleapc__graph_input_prepare(&x, (int)c, v));
    if (fp16) {
        sleapc__vk_half_from_float(v, n);
        sleapc__vk_half_to_float(v, n);
    }
    return v;
}

typedef struct host_peaks {
    int64_t n;
    float *xy, *grid, *vals;
    int32_t *s, *c;
} host_peaks;

static void host_find(const float *v, int64_t b, int64_t c, int64_t h, int64_t w, float thr,
                      int k, float *grid_or_xy, host_peaks *hp)
{
    CHECK_OK(sleapc__peaks_find_local(v, b, c, h, w, thr, k, hp->n, grid_or_xy, hp->vals, hp->s,
                                      hp->c, &hp->n));
}

/* The device's peaks in out against the host's on the maps it holds. */
static void compare(const char *what, const sleapc_tensor_map *out, const float *view, int64_t b,
                    int64_t c, int64_t h, int64_t w, float thr, int k)
{
    host_peaks hp = {0};
    CHECK_OK(sleapc__peaks_find_local(view, b, c, h, w, thr, k, 0, NULL, NULL, NULL, NULL,
                                      &hp.n));
    int64_t n = hp.n;
    size_t room = (size_t)(n > 0 ? n : 1);
    hp.xy = malloc(room * 2 * sizeof(float));
    hp.grid = malloc(room * 2 * sizeof(float));
    hp.vals = malloc(room * sizeof(float));
    hp.s = malloc(room * sizeof(int32_t));
    hp.c = malloc(room * sizeof(int32_t));
    if (!hp.xy || !hp.grid || !hp.vals || !hp.s || !hp.c)
        abort();
    host_find(view, b, c, h, w, thr, 0, hp.grid, &hp);
    hp.n = n;
    host_find(view, b, c, h, w, thr, k, hp.xy, &hp);
    const sleapc_tensor *cnt = sleapc__tensor_map_get(out, "local_peak_counts");
    const sleapc_tensor *xy = sleapc__tensor_map_get(out, "local_peaks");
    const sleapc_tensor *vals = sleapc__tensor_map_get(out, "local_peak_vals");
    const sleapc_tensor *inds = sleapc__tensor_map_get(out, "local_peak_inds");
    bool ok = cnt && xy && vals && inds && cnt->dtype == SLEAPC_DTYPE_I32 && cnt->ndim == 1 &&
              cnt->shape[0] == b && xy->ndim == 2 && xy->shape[1] == 2 && vals->ndim == 1 &&
              inds->dtype == SLEAPC_DTYPE_I32 && inds->ndim == 2 && inds->shape[1] == 4 &&
              vals->shape[0] == xy->shape[0] && inds->shape[0] == xy->shape[0];
    CHECK_MSG(ok, "%s: no local peak outputs of the contract's shapes", what);
    CHECK_MSG(!sleapc__tensor_map_get(out, "Maps"), "%s: the maps came back", what);
    if (ok) {
        CHECK_MSG(xy->shape[0] == n, "%s: %lld peaks, host %lld", what, (long long)xy->shape[0],
                  (long long)n);
        for (int64_t s = 0, i = 0; s < b; s++) {
            int64_t want = 0;
            while (i < n && hp.s[i] == s) {
                want++;
                i++;
            }
            int32_t got = ((const int32_t *)cnt->data)[s];
            CHECK_MSG(got == want, "%s: sample %lld: %d peaks, host %lld", what, (long long)s,
                      got, (long long)want);
        }
    }
    int64_t bad = 0;
    for (int64_t i = 0; ok && i < n && i < xy->shape[0] && bad < 5; i++) {
        const int32_t *e = (const int32_t *)inds->data + 4 * i;
        const float *p = (const float *)xy->data + 2 * i;
        float v = ((const float *)vals->data)[i];
        bool same = e[0] == hp.s[i] && e[1] == hp.c[i] && (float)e[2] == hp.grid[2 * i] &&
                    (float)e[3] == hp.grid[2 * i + 1] && same_bits(v, hp.vals[i]);
        for (int d = 0; d < 2; d++) {
            float want = hp.xy[2 * i + d];
            double tol = k == 0 ? 0 : 4 * FLT_EPSILON * fmax(fabs(want), k / 2.0);
            same = same && (isnan(want) ? isnan(p[d]) : fabs((double)p[d] - want) <= tol);
        }
        CHECK_MSG(same,
                  "%s: peak %lld: sample %d channel %d grid (%d, %d) value %.9g at (%.9g, %.9g); "
                  "host %d %d (%g, %g) %.9g at (%.9g, %.9g)",
                  what, (long long)i, e[0], e[1], e[2], e[3], v, p[0], p[1], hp.s[i], hp.c[i],
                  hp.grid[2 * i], hp.grid[2 * i + 1], hp.vals[i], hp.xy[2 * i], hp.xy[2 * i + 1]);
        bad += !same;
    }
    free(hp.xy);
    free(hp.grid);
    free(hp.vals);
    free(hp.s);
    free(hp.c);
}

static sleapc_backend *make_backend(const sleapc_graph *g, bool fp16)
{
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 1,
                                .precision = fp16 ? SLEAPC_PRECISION_FP16 : SLEAPC_PRECISION_FP32};
    CHECK_OK(sleapc__backend_create_from(vk_f, g, &opts, &be));
    return be;
}

static void check_synthetic(int64_t b, int64_t h, int64_t w, int k, float thr, bool fp16)
{
    char what[96];
    snprintf(what, sizeof what, "%lld x %lld x %lld, k %d, thr %g%s", (long long)b, (long long)h,
             (long long)w, k, thr, fp16 ? ", fp16" : "");
    sleapc_graph g;
    vulkan_test_identity_graph(&g, SYN_C, "Maps");
    sleapc_backend *be = make_backend(&g, fp16);
    float *maps = malloc((size_t)(b * SYN_C * h * w) * sizeof *maps);
    if (!maps)
        abort();
    fill(maps, b, h, w, thr);
    float *view = device_view(maps, b, SYN_C, h, w, fp16);
    if (be) {
        int64_t shape[4] = {b, SYN_C, h, w};
        CHECK_OK(sleapc__backend_warmup(be, shape));
        CHECK(sleapc__backend_device_local_peaks(be, "Nope", thr, k, 8) == SLEAPC_ERR_UNSUPPORTED);
        CHECK(sleapc__backend_device_local_peaks(be, "Maps", thr, 23, 8) ==
              SLEAPC_ERR_UNSUPPORTED);
        CHECK(sleapc__backend_device_local_peaks(be, "Maps", thr, k, 0) ==
              SLEAPC_ERR_UNSUPPORTED);
        CHECK_OK(sleapc__backend_device_local_peaks(be, "Maps", thr, k, 64));
        CHECK(sleapc__backend_device_local_peaks(be, "Maps", thr, k, 64) ==
              SLEAPC_ERR_UNSUPPORTED);
        CHECK(sleapc__backend_device_global_peaks(be, "Maps", thr, k) == SLEAPC_ERR_UNSUPPORTED);
        sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {b, SYN_C, h, w},
                           .data = maps};
        sleapc_tensor_map out = {0};
        int64_t before = sleapc__alloc_count();
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        CHECK_MSG(sleapc__alloc_count() == before, "%s: a warmed-up forward allocated", what);
        compare(what, &out, view, b, SYN_C, h, w, thr, k);
        const sleapc_tensor *xy = sleapc__tensor_map_get(&out, "local_peaks");
        printf("%s: %lld peaks on the device\n", what, xy ? (long long)xy->shape[0] : -1LL);
    }
    sleapc__backend_destroy(be);
    free(view);
    free(maps);
    sleapc__graph_clear(&g);
}

/* Room for 1 peak a map: the lattice channel overflows it; the maps come
 * back exactly, a batch of few peaks has its peaks again, and the first
 * batch once more its maps (nothing of the batch before). */
static void check_overflow(bool fp16)
{
    const int64_t b = 2, h = 12, w = 10;
    const float thr = 0.3f;
    const char *what = fp16 ? "overflow, fp16" : "overflow";
    sleapc_graph g;
    vulkan_test_identity_graph(&g, SYN_C, "Maps");
    sleapc_backend *be = make_backend(&g, fp16);
    float *maps = malloc((size_t)(b * SYN_C * h * w) * sizeof *maps);
    if (!maps)
        abort();
    fill(maps, b, h, w, thr);
    float *view = device_view(maps, b, SYN_C, h, w, fp16);
    float *dense = malloc((size_t)(b * SYN_C * h * w) * sizeof *dense);
    if (!dense)
        abort();
    memcpy(dense, maps, (size_t)(b * SYN_C * h * w) * sizeof *dense);
    if (be) {
        CHECK_OK(sleapc__backend_device_local_peaks(be, "Maps", thr, 5, 1));
        sleapc_tensor x = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {b, SYN_C, h, w},
                           .data = maps};
        sleapc_tensor_map out = {0};
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        const sleapc_tensor *m = sleapc__tensor_map_get(&out, "Maps");
        CHECK_MSG(m && m->ndim == 4 && m->shape[0] == b && m->shape[1] == SYN_C &&
                      m->shape[2] == h && m->shape[3] == w,
                  "%s: the maps did not come back", what);
        CHECK_MSG(!sleapc__tensor_map_get(&out, "local_peaks"), "%s: peaks beyond the room",
                  what);
        int64_t differ = 0;
        for (int64_t i = 0; m && i < b * SYN_C * h * w; i++) {
            float a = ((const float *)m->data)[i];
            differ += !(same_bits(a, view[i]) || (isnan(a) && isnan(view[i])));
        }
        CHECK_MSG(differ == 0, "%s: %lld map values differ from the input", what,
                  (long long)differ);
        /* Few peaks: channel 2's five on a flat map, the rest below thr. */
        for (int64_t i = 0; i < b * SYN_C * h * w; i++)
            maps[i] = 0.0f;
        for (int64_t s = 0; s < b; s++)
            maps[(s * SYN_C + 2) * h * w + 3 * w + 4] = 0.9f;
        free(view);
        view = device_view(maps, b, SYN_C, h, w, fp16);
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        compare(what, &out, view, b, SYN_C, h, w, thr, 5);
        memcpy(maps, dense, (size_t)(b * SYN_C * h * w) * sizeof *dense);
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        CHECK_MSG(sleapc__tensor_map_get(&out, "Maps") &&
                      !sleapc__tensor_map_get(&out, "local_peaks") &&
                      !sleapc__tensor_map_get(&out, "local_peak_counts"),
                  "%s: a second batch beyond the room has no maps, or old peaks", what);
    }
    sleapc__backend_destroy(be);
    free(dense);
    free(view);
    free(maps);
    sleapc__graph_clear(&g);
}

/* A reference case's stored head, at its manifest's threshold and patch. */
static void check_reference(const char *id, const char *array, bool fp16)
{
    if (!ref_has(id, array)) {
        printf("%s: no %s, left out\n", id, array);
        return;
    }
    cJSON *man = ref_manifest(id);
    sleapc_tensor t;
    if (!man || !ref_load(id, array, &t)) {
        cJSON_Delete(man);
        return;
    }
    const cJSON *post = ref_obj(ref_obj(man, "pipeline"), "postprocess");
    float thr = (float)ref_num(post, "peak_threshold", 0.2);
    int k = (int)ref_num(post, "integral_patch_size", 5);
    int64_t b = t.shape[0], c = t.shape[1], h = t.shape[2], w = t.shape[3];
    char what[256];
    snprintf(what, sizeof what, "%s %s (%lld, %lld, %lld, %lld)%s", id, array, (long long)b,
             (long long)c, (long long)h, (long long)w, fp16 ? ", fp16" : "");
    sleapc_graph g;
    vulkan_test_identity_graph(&g, (int)c, "Maps");
    sleapc_backend *be = make_backend(&g, fp16);
    float *view = device_view(t.data, b, c, h, w, fp16);
    if (be) {
        CHECK_OK(sleapc__backend_device_local_peaks(be, "Maps", thr, k, 16));
        sleapc_tensor_map out = {0};
        CHECK_OK(sleapc__backend_forward(be, &t, &out));
        compare(what, &out, view, b, c, h, w, thr, k);
        const sleapc_tensor *xy = sleapc__tensor_map_get(&out, "local_peaks");
        printf("%s: %lld peaks on the device\n", what, xy ? (long long)xy->shape[0] : -1LL);
    }
    sleapc__backend_destroy(be);
    free(view);
    sleapc__free(t.data);
    sleapc__graph_clear(&g);
    cJSON_Delete(man);
}

int main(void)
{
    vk_f = vulkan_test_factory();
    if (!vk_f)
        return 77;
    check_synthetic(2, 23, 19, 5, 0.3f, false);
    check_synthetic(2, 23, 19, 0, 0.3f, false);
    check_synthetic(1, 40, 33, 4, 0.2f, false);
    check_synthetic(3, 24, 24, 22, 0.3f, false);
    check_synthetic(2, 3, 5, 1, 0.3f, false);
    check_synthetic(2, 6, 4, 5, 0.0f, false);
    check_synthetic(2, 9, 11, 3, -0.5f, false);
    check_synthetic(2, 23, 19, 5, 0.3f, true);
    check_synthetic(2, 9, 11, 3, -0.5f, true);
    check_overflow(false);
    check_overflow(true);
    if (test_data_dir()) {
        check_reference("centroid__pkg_f0000", "centroid.head.CentroidConfmapsHead", false);
        check_reference("bottomup__pkg_f0000", "bottomup.head.MultiInstanceConfmapsHead", false);
        check_reference("bottomup__pkg_f0000", "bottomup.head.MultiInstanceConfmapsHead", true);
    } else {
        printf("no shared data: the reference heads are left out\n");
    }
    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on, "the validation layer did not run (install vulkan-validationlayers)");
    CHECK_MSG(messages == 0, "%lld validation messages", (long long)messages);
    return test_finish();
}
#endif
