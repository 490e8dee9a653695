/* Heads kept on the Vulkan device (the contract's device_keep_head and
 * device_fetch_head) and bottom-up's PAFs, which stay there while the device
 * scores their lines.
 *
 * (a) The backend, on a graph whose only node is its input (the maps go to
 * the device as they are), float32 and fp16 storage: a kept head's tensor
 * has the head's shape and no data, and no map comes down
 * (sleapc__vulkan_map_stats); its lines score bit for bit as before it was
 * kept (the same shader on the same buffer); a fetch brings the maps down
 * bit for bit as a forward without the request does, once per run; a
 * forward and a fetch of a warmed-up shape allocate nothing; with two runs
 * in flight each collect's fetch has its own run's maps; the kept maps read
 * at cells (device_sample_head: corners, middle, random; every channel) equal
 * the maps bit for bit and bring no map down; keep false brings the maps
 * back with the forward. Refusals: an unknown head, the peaks of a kept
 * head, keep and fetch while a run is in flight, a cell outside the maps.
 * (b) The layer: bottom-up prediction on a 192 x 128 crop of a reference
 * frame on Vulkan, two frames in turn, equals the native backend's (host
 * scoring, maps on the host), points within 0.02 px (test_vulkan_paf's
 * bound: the networks' float32 rounding moves the peaks far less), and no
 * map comes down in predicting either frame (the confidence maps' peaks and
 * the PAFs' line scores are found on the device).
 * (c) The fall-back: 65 points per line, more than the device scores, so
 * the device refuses and the host scores: the first frame fetches the kept
 * PAFs (one map down, the layer then asks for them back), the second gets
 * them with its forward (one map down again); the points equal the native
 * backend's at 65 points within 0.02 px.
 * (d) Multi-class bottom-up on the same crops: its class maps stay on the
 * device and are read there at the peaks, so again no map comes down; the
 * instances, their classes and points equal the native backend's (points
 * within 0.02 px; the class vectors at the peaks are the maps' values bit for
 * bit, (a), so only the networks' float32 rounding differs).
 * Zero validation messages. Skipped (77) without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/paf.h"
#include "sleapc/predictor.h"
#include "sleapc/tools.h"
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

enum { B = 2, E = 3, H = 13, W = 17, N_LINES = 40 };

static unsigned seed = 4242;

static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffffff) / 16777216.0f;
}

static int64_t maps_down(void)
{
    int64_t n = 0;
    sleapc__vulkan_map_stats(&n, NULL);
    return n;
}

/* N_LINES random lines over both samples and every edge, at stride 4. */
typedef struct lines {
    int32_t sample[N_LINES], edge[N_LINES];
    float src[N_LINES][2], dst[N_LINES][2];
    float t[10];
    sleapc_backend_paf_lines req;
} lines;

static void lines_make(lines *l)
{
    for (int i = 0; i < N_LINES; i++) {
        l->sample[i] = i % B;
        l->edge[i] = (i / B) % E;
        l->src[i][0] = rnd() * W * 4;
        l->src[i][1] = rnd() * H * 4;
        l->dst[i][0] = rnd() * W * 4;
        l->dst[i][1] = rnd() * H * 4;
    }
    sleapc__paf_linspace(10, l->t);
    l->req = (sleapc_backend_paf_lines){.n = N_LINES,
                                        .sample = l->sample,
                                        .edge = l->edge,
                                        .src = (const float(*)[2])l->src,
                                        .dst = (const float(*)[2])l->dst,
                                        .t = l->t,
                                        .n_points = 10,
                                        .paf_stride = 4,
                                        .max_edge_length = 30.0f,
                                        .dist_penalty_weight = 1.0f};
}

/* Maps in [-1, 1] with 1 somewhere (not rescaled). */
static void maps_make(float *m, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        m[i] = 2.0f * rnd() - 1.0f;
    m[0] = 1.0f;
}

static bool same_bits(const float *a, const float *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static const sleapc_tensor *pafs_of(const sleapc_tensor_map *out)
{
    const sleapc_tensor *t = sleapc__tensor_map_get(out, "Pafs");
    CHECK(t && t->ndim == 4 && t->shape[0] == B && t->shape[1] == 2 * E && t->shape[2] == H &&
          t->shape[3] == W);
    return t;
}

static void check_backend(bool fp16)
{
    const char *what = fp16 ? "fp16" : "fp32";
    sleapc_graph g;
    vulkan_test_identity_graph(&g, 2 * E, "Pafs");
    sleapc_backend *be = NULL;
    sleapc_backend_opts bo = {.n_threads = 1,
                              .precision = fp16 ? SLEAPC_PRECISION_FP16 : SLEAPC_PRECISION_FP32};
    sleapc_status st = sleapc__backend_create_from(vk_f, &g, &bo, &be);
    if (fp16 && st == SLEAPC_ERR_UNSUPPORTED) {
        printf("fp16 storage not offered by the device: fp16 case skipped\n");
        sleapc__graph_clear(&g);
        return;
    }
    CHECK_OK(st);
    if (!be) {
        sleapc__graph_clear(&g);
        return;
    }
    const int64_t n = (int64_t)B * 2 * E * H * W;
    float *m1 = malloc((size_t)n * sizeof *m1), *m2 = malloc((size_t)n * sizeof *m2);
    float *ref1 = malloc((size_t)n * sizeof *ref1), *ref2 = malloc((size_t)n * sizeof *ref2);
    if (!m1 || !m2 || !ref1 || !ref2)
        abort();
    maps_make(m1, n);
    maps_make(m2, n);
    sleapc_tensor x1 = {
        .dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {B, 2 * E, H, W}, .data = m1};
    sleapc_tensor x2 = x1;
    x2.data = m2;
    lines l;
    lines_make(&l);
    float scores[N_LINES], kept_scores[N_LINES];

    CHECK(sleapc__backend_device_keep_head(be, "Nope", true) == SLEAPC_ERR_UNSUPPORTED);
    /* Not kept: the maps come back, as the reference. */
    sleapc_tensor_map out = {0};
    CHECK_OK(sleapc__backend_forward(be, &x2, &out));
    const sleapc_tensor *t = pafs_of(&out);
    if (t && t->data)
        memcpy(ref2, t->data, (size_t)n * sizeof *ref2);
    CHECK_OK(sleapc__backend_forward(be, &x1, &out));
    t = pafs_of(&out);
    CHECK(t && t->data);
    if (t && t->data)
        memcpy(ref1, t->data, (size_t)n * sizeof *ref1);
    CHECK_OK(sleapc__backend_device_fetch_head(be, "Pafs", &out)); /* came back: nothing to do */
    CHECK_OK(sleapc__backend_device_paf_scores(be, "Pafs", &l.req, scores));

    /* Kept. */
    CHECK_OK(sleapc__backend_device_keep_head(be, "Pafs", true));
    CHECK_OK(sleapc__backend_device_keep_head(be, "Pafs", true)); /* again: no change */
    CHECK(sleapc__backend_device_global_peaks(be, "Pafs", 0.2, 5) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(sleapc__backend_device_local_peaks(be, "Pafs", 0.2, 5, 4) == SLEAPC_ERR_UNSUPPORTED);
    int64_t down0 = maps_down(), allocs0 = sleapc__alloc_count();
    CHECK_OK(sleapc__backend_forward(be, &x1, &out));
    int64_t allocs_forward = sleapc__alloc_count() - allocs0;
    t = pafs_of(&out);
    CHECK_MSG(t && !t->data, "%s: a kept head came back with the forward", what);
    CHECK_MSG(maps_down() == down0, "%s: %lld maps came down with a kept head", what,
              (long long)(maps_down() - down0));
    CHECK_OK(sleapc__backend_device_paf_scores(be, "Pafs", &l.req, kept_scores));
    CHECK_MSG(same_bits(scores, kept_scores, N_LINES), "%s: kept head's line scores differ", what);
    allocs0 = sleapc__alloc_count();
    CHECK_OK(sleapc__backend_device_fetch_head(be, "Pafs", &out));
    int64_t allocs_fetch = sleapc__alloc_count() - allocs0;
    t = pafs_of(&out);
    CHECK_MSG(t && t->data && same_bits(t->data, ref1, n), "%s: fetched maps differ", what);
    CHECK_MSG(maps_down() == down0 + 1, "%s: a fetch: %lld maps down", what,
              (long long)(maps_down() - down0));
    CHECK_OK(sleapc__backend_device_fetch_head(be, "Pafs", &out)); /* fetched: no copy */
    CHECK(maps_down() == down0 + 1);
    /* A second run of the warmed-up shape, fetched: no allocation. */
    allocs0 = sleapc__alloc_count();
    CHECK_OK(sleapc__backend_forward(be, &x2, &out));
    CHECK_OK(sleapc__backend_device_fetch_head(be, "Pafs", &out));
    int64_t allocs_run = sleapc__alloc_count() - allocs0;
    t = pafs_of(&out);
    CHECK_MSG(t && t->data && same_bits(t->data, ref2, n), "%s: second run's fetch differs", what);
    CHECK_MSG(allocs_forward == 0 && allocs_fetch == 0 && allocs_run == 0,
              "%s: allocations: forward %lld, fetch %lld, forward and fetch %lld", what,
              (long long)allocs_forward, (long long)allocs_fetch, (long long)allocs_run);

    /* Two runs in flight: each collect's fetch has its run's maps. */
    CHECK_OK(sleapc__backend_submit(be, &x1));
    CHECK(sleapc__backend_device_keep_head(be, "Pafs", false) == SLEAPC_ERR_STATE);
    CHECK_OK(sleapc__backend_submit(be, &x2));
    CHECK_OK(sleapc__backend_collect(be, &out));
    CHECK(sleapc__backend_device_fetch_head(be, "Pafs", &out) == SLEAPC_ERR_STATE);
    sleapc__clear_error();
    sleapc_tensor_map out2 = {0};
    CHECK_OK(sleapc__backend_collect(be, &out2));
    CHECK_OK(sleapc__backend_device_fetch_head(be, "Pafs", &out2));
    t = pafs_of(&out2);
    CHECK_MSG(t && t->data && same_bits(t->data, ref2, n), "%s: second collect's fetch", what);
    /* The first collect's run (the other plan) is no longer the last run's. */
    CHECK_OK(sleapc__backend_forward(be, &x1, &out));
    CHECK_OK(sleapc__backend_device_fetch_head(be, "Pafs", &out));
    t = pafs_of(&out);
    CHECK_MSG(t && t->data && same_bits(t->data, ref1, n), "%s: fetch after the runs", what);

    /* Read at cells (device_sample_head), kept: the corners, the middle and
     * random cells of both samples, every channel, bit for bit. */
    int32_t cells[12][3] = {{0, 0, 0}, {1, H - 1, W - 1}, {0, H - 1, 0}, {1, 0, W - 1},
                            {1, H / 2, W / 2}};
    for (int i = 5; i < 12; i++) {
        cells[i][0] = i % B;
        cells[i][1] = (int32_t)(rnd() * H);
        cells[i][2] = (int32_t)(rnd() * W);
    }
    float vals[12 * 2 * E];
    const int64_t down1 = maps_down();
    CHECK_OK(sleapc__backend_forward(be, &x2, &out));
    CHECK_OK(sleapc__backend_device_sample_head(be, "Pafs", 12, (const int32_t(*)[3])cells, vals));
    bool same = true;
    for (int i = 0; i < 12; i++)
        for (int c = 0; c < 2 * E; c++) {
            const float *r = ref2 + (((int64_t)cells[i][0] * 2 * E + c) * H + cells[i][1]) * W +
                             cells[i][2];
            same = same && memcmp(r, &vals[i * 2 * E + c], sizeof *r) == 0;
        }
    CHECK_MSG(same, "%s: values read at cells differ from the maps", what);
    CHECK(sleapc__backend_device_sample_head(be, "Nope", 12, (const int32_t(*)[3])cells, vals) ==
          SLEAPC_ERR_UNSUPPORTED);
    cells[3][2] = W; /* outside */
    CHECK(sleapc__backend_device_sample_head(be, "Pafs", 12, (const int32_t(*)[3])cells, vals) ==
          SLEAPC_ERR_INVALID_ARG);
    sleapc__clear_error();
    CHECK_MSG(maps_down() == down1, "%s: reading cells brought maps down", what);

    /* Back again. */
    CHECK_OK(sleapc__backend_device_keep_head(be, "Pafs", false));
    down0 = maps_down();
    CHECK_OK(sleapc__backend_forward(be, &x2, &out));
    t = pafs_of(&out);
    CHECK_MSG(t && t->data && same_bits(t->data, ref2, n), "%s: the maps did not come back", what);
    CHECK(maps_down() == down0 + 1);
    printf("%s: kept head: no map down, fetched bit for bit, scores unchanged\n", what);

    free(m1);
    free(m2);
    free(ref1);
    free(ref2);
    sleapc__backend_destroy(be);
    sleapc__graph_clear(&g);
}

/* (b), (c): the layer. */
static int told_kept, told_back, told_device, told_cls_kept;

static void on_log(sleapc_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    if (strstr(msg, "PartAffinityFieldsHead stays on the device"))
        told_kept++;
    if (strstr(msg, "PartAffinityFieldsHead comes back from the device"))
        told_back++;
    if (strstr(msg, "PAF lines scored on the vulkan device"))
        told_device++;
    if (strstr(msg, "ClassMapsHead stays on the device"))
        told_cls_kept++;
}

static const char *model_name = "minimal_instance_bottomup";

static sleapc_predictor *predictor(const char *backend, int n_points, const sleapc_tensor *crop)
{
    char model[2048], rel[256];
    snprintf(rel, sizeof rel, "sleap-nn-assets/model_ckpts/%s", model_name);
    snprintf(model, sizeof model, "%s", test_data_path(rel));
    const char *paths[1] = {model};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.backend = backend;
    o.n_threads = 1;
    o.batch_size = 1;
    o.n_points = n_points;
    o.max_height = (int)crop->shape[0];
    o.max_width = (int)crop->shape[1];
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 1, &o, &p));
    return p;
}

/* The device's and the host's instances of their last frame, within 0.02 px. */
static void compare(sleapc_predictor *dev, sleapc_predictor *host, bool some, const char *what)
{
    int n_dev = test_n_instances(dev, 0), n_host = test_n_instances(host, 0);
    CHECK_MSG(n_dev == n_host && (n_host >= 1 || !some),
              "%s: %d instances on the device, %d on the host", what, n_dev, n_host);
    sleapc_skeleton sk = {0};
    CHECK_OK(sleapc_predictor_skeleton(host, &sk));
    double worst = 0;
    for (int i = 0; n_dev == n_host && i < n_host; i++) {
        test_instance a, b;
        CHECK_OK(test_read_instance(dev, 0, i, &a));
        CHECK_OK(test_read_instance(host, 0, i, &b));
        for (int k = 0; k < 2 * sk.n_nodes; k++) {
            bool both_nan = isnan(a.points[k]) && isnan(b.points[k]);
            double d = both_nan ? 0 : fabs((double)a.points[k] - b.points[k]);
            CHECK_MSG(d <= 0.02,
                      "%s: instance %d point %d: %c %.4f on the device, %.4f on the host", what,
                      i, k / 2, "xy"[k % 2], a.points[k], b.points[k]);
            if (d <= 0.02)
                worst = fmax(worst, d);
        }
        CHECK_MSG(a.track == b.track, "%s: instance %d: class %d on the device, %d on the host",
                  what, i, a.track, b.track);
    }
    printf("%s: %d instances, points within %.3g px of the host path\n", what, n_host, worst);
}

/* Both crops in turn, a frame a batch, on Vulkan and on the native
 * backend, compared frame by frame; maps[k]: maps down predicting frame k
 * on Vulkan. */
static void predict_both(int n_points, const sleapc_tensor crops[2], int64_t maps[2])
{
    sleapc_log_set(on_log, NULL);
    sleapc_predictor *dev = predictor("vulkan", n_points, &crops[0]);
    sleapc_log_set(NULL, NULL);
    sleapc_predictor *host = predictor("native", n_points, &crops[0]);
    for (int k = 0; k < 2 && dev && host; k++) {
        sleapc_log_set(on_log, NULL);
        int64_t m0 = maps_down();
        CHECK_OK(test_run_array(dev, &crops[k]));
        maps[k] = maps_down() - m0;
        sleapc_log_set(NULL, NULL);
        CHECK_OK(test_run_array(host, &crops[k]));
        char what[96];
        snprintf(what, sizeof what, "%d points, frame %d", n_points, k);
        compare(dev, host, k == 0, what);
    }
    sleapc_predictor_destroy(dev);
    sleapc_predictor_destroy(host);
}

static void check_layer(void)
{
    sleapc_tensor frame;
    CHECK_OK(sleapc_npy_read(test_data_path("reference/bottomup__centered_pair_f0000/frame.npy"),
                             &frame));
    enum { CH = 192, CW = 128 };
    const int y0[2] = {16, 160}, x0[2] = {100, 120};
    bool fits = frame.ndim == 3 && frame.shape[2] == 1;
    for (int k = 0; k < 2; k++)
        fits = fits && frame.shape[0] >= y0[k] + CH && frame.shape[1] >= x0[k] + CW;
    CHECK(fits);
    if (!fits) {
        sleapc_tensor_free(&frame);
        return;
    }
    static uint8_t px[2][CH * CW];
    sleapc_tensor crops[2];
    for (int k = 0; k < 2; k++) {
        for (int y = 0; y < CH; y++)
            memcpy(px[k] + y * CW,
                   (const uint8_t *)frame.data + (y0[k] + y) * frame.shape[1] + x0[k], CW);
        crops[k] = (sleapc_tensor){
            .dtype = SLEAPC_DTYPE_U8, .ndim = 3, .shape = {CH, CW, 1}, .data = px[k]};
    }

    /* (b) */
    int64_t maps[2] = {-1, -1};
    predict_both(10, crops, maps);
    CHECK_MSG(told_kept == 1 && told_back == 0 && told_device == 1,
              "logs: kept %d, back %d, scored on the device %d", told_kept, told_back,
              told_device);
    CHECK_MSG(maps[0] == 0 && maps[1] == 0, "maps down: %lld, then %lld", (long long)maps[0],
              (long long)maps[1]);

    /* (c) */
    told_kept = told_back = told_device = 0;
    predict_both(65, crops, maps);
    CHECK_MSG(told_kept == 1 && told_back == 1 && told_device == 0,
              "refused: logs: kept %d, back %d, scored on the device %d", told_kept, told_back,
              told_device);
    CHECK_MSG(maps[0] == 1 && maps[1] == 1, "refused: maps down: %lld, then %lld",
              (long long)maps[0], (long long)maps[1]);

    /* (d) */
    model_name = "minimal_instance_multiclass_bottomup";
    maps[0] = maps[1] = -1;
    predict_both(10, crops, maps);
    CHECK_MSG(told_cls_kept == 1, "multi-class: the class maps were kept %d times", told_cls_kept);
    CHECK_MSG(maps[0] == 0 && maps[1] == 0, "multi-class: maps down: %lld, then %lld",
              (long long)maps[0], (long long)maps[1]);
    sleapc_tensor_free(&frame);
}

int main(void)
{
    vk_f = vulkan_test_factory();
    if (!vk_f)
        return 77;
    check_backend(false);
    check_backend(true);
    test_require_data();
    check_layer();

    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on, "the validation layer did not run (install vulkan-validationlayers)");
    CHECK_MSG(messages == 0, "%lld validation messages", (long long)messages);
    return test_finish();
}
#endif
