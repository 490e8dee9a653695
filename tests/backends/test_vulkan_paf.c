/* PAF line scores on the Vulkan device (the contract's device_paf_scores,
 * shaders/paf_score.comp) against the host's sleapc__paf_score_lines on the
 * same maps. A graph whose only node is its input hands the maps to the
 * device as they are (float32 inputs with a maximum of at most 1 are not
 * rescaled); the host scores the maps the forward returns.
 *
 * (a) Synthetic PAFs, float32 and fp16 storage, PAF strides 4 (a power of
 * two: the shader multiplies by its exact reciprocal) and 3 (it divides):
 * lines from and to every border and corner and beyond (clipped look-ups),
 * zero-length lines (NaN, as on the host), lines far longer than the maximum
 * edge length (the distance penalty), points on half cells (round half to
 * even), n_points 1, 7, 10, 20 and 64 (Torch's summation orders for short
 * and long rows), two frames in one request.
 * (b) A real PAF head: every bottom-up reference case's stored PAFs and
 * candidates, against the host and against sleap-nn's stored line scores
 * (1e-5, as test_ops_paf: the host's are bit-identical to sleap-nn's).
 *
 * Bound: the shader takes every float step of the host in its order without
 * fused multiply-adds (GLSL precise), so only what Vulkan lets a GPU round
 * loosely differs: division (2.5 ulp; Mesa's is a * (1 / b)), square root,
 * and the one fma (lavapipe runs it unfused). The unit vector, slope, mean
 * and penalty may each be off by an ulp or two, a score by a few ulp of
 * max|PAF| + |score| + 1: the check allows 16 * FLT_EPSILON of that (lavapipe:
 * at most 3 ulp of 1, most lines bit-identical; the counts are printed). A
 * sample moved to the next cell by such an error would exceed it; its
 * position would have to fall within an ulp of a half cell.
 * (c) The layer: bottom-up prediction on a 192 x 128 crop of a reference frame
 * on Vulkan, its lines scored on the device (the layer says so in its debug
 * log), gives the instances the native backend (host scoring) gives, points
 * within 0.02 px (the networks' float32 rounding moves the peaks far less).
 * Also: refusals (65 points, a head that does not exist, no forward yet),
 * zero validation messages. Skipped (77) without a Vulkan device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../layers/ops_bottomup_case.h"
#include "backends/backend.h"
#include "core/alloc.h"
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

static unsigned seed = 777;

static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffffff) / 16777216.0f;
}

static bool same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* The candidates of one request: frame, edge, end points. */
typedef struct lines {
    int64_t n, cap;
    int32_t *frame, *edge;
    float (*src)[2], (*dst)[2];
} lines;

static void add_line(lines *l, int frame, int edge, float sx, float sy, float dx, float dy)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->frame = realloc(l->frame, (size_t)l->cap * sizeof *l->frame);
        l->edge = realloc(l->edge, (size_t)l->cap * sizeof *l->edge);
        l->src = realloc(l->src, (size_t)l->cap * sizeof *l->src);
        l->dst = realloc(l->dst, (size_t)l->cap * sizeof *l->dst);
        if (!l->frame || !l->edge || !l->src || !l->dst)
            abort();
    }
    l->frame[l->n] = frame;
    l->edge[l->n] = edge;
    l->src[l->n][0] = sx;
    l->src[l->n][1] = sy;
    l->dst[l->n][0] = dx;
    l->dst[l->n][1] = dy;
    l->n++;
}

static void lines_free(lines *l)
{
    free(l->frame);
    free(l->edge);
    free(l->src);
    free(l->dst);
    memset(l, 0, sizeof *l);
}

/* Score l on the device against the maps in be's last forward and on the
 * host against maps (B, 2E, h, w); compare. */
static void compare(sleapc_backend *be, const char *head, const float *maps, int64_t n_edges,
                    int64_t h, int64_t w, const lines *l, const sleapc_paf_score_opts *o,
                    const char *what)
{
    float *t = malloc((size_t)o->n_points * sizeof *t);
    float *dev = malloc((size_t)l->n * sizeof *dev);
    if (!t || !dev)
        abort();
    sleapc__paf_linspace(o->n_points, t);
    sleapc_backend_paf_lines req = {.n = l->n,
                                    .sample = l->frame,
                                    .edge = l->edge,
                                    .src = (const float(*)[2])l->src,
                                    .dst = (const float(*)[2])l->dst,
                                    .t = t,
                                    .n_points = o->n_points,
                                    .paf_stride = o->paf_stride,
                                    .max_edge_length = (float)sleapc__paf_max_edge_length(
                                        o->max_edge_length_ratio, n_edges, h, w, o->paf_stride),
                                    .dist_penalty_weight = (float)o->dist_penalty_weight};
    CHECK_OK(sleapc__backend_device_paf_scores(be, head, &req, dev));
    float max_paf = 0;
    int64_t n_bits = 0;
    double worst = 0;
    for (int64_t c = 0; c < l->n; c++) {
        const float *frame_maps = maps + (int64_t)l->frame[c] * 2 * n_edges * h * w;
        const float *pm = frame_maps + 2 * (int64_t)l->edge[c] * h * w;
        for (int64_t i = 0; i < 2 * h * w; i++)
            max_paf = fmaxf(max_paf, fabsf(pm[i]));
        float peaks[4] = {l->src[c][0], l->src[c][1], l->dst[c][0], l->dst[c][1]};
        int32_t ei = l->edge[c];
        int64_t epi[1][2] = {{0, 1}};
        float host = 0;
        CHECK_OK(sleapc__paf_score_lines(frame_maps, n_edges, h, w, peaks, 2, &ei,
                                         (const int64_t(*)[2])epi, 1, o, &host));
        n_bits += same_float(dev[c], host);
        double tol = 16 * FLT_EPSILON * (max_paf + fabs(host) + 1);
        bool ok = isnan(host) ? isnan(dev[c]) : fabs((double)dev[c] - host) <= tol;
        if (!isnan(host))
            worst = fmax(worst, fabs((double)dev[c] - host));
        CHECK_MSG(ok,
                  "%s: line %lld (frame %d, edge %d, (%.9g, %.9g) -> (%.9g, %.9g)): "
                  "device %.9g, host %.9g",
                  what, (long long)c, l->frame[c], l->edge[c], l->src[c][0], l->src[c][1],
                  l->dst[c][0], l->dst[c][1], dev[c], host);
    }
    printf("%-40s %4lld lines, %4lld bit-identical, max |device - host| %.3g\n", what,
           (long long)l->n, (long long)n_bits, worst);
    free(t);
    free(dev);
}

enum { B = 2, E = 3 };

static void synthetic_lines(lines *l, int64_t h, int64_t w, int stride)
{
    const float W = (float)(w * stride), H = (float)(h * stride);
    for (int s = 0; s < B; s++) {
        for (int k = 0; k < E; k++) {
            /* corners and borders, and beyond them */
            const float pts[][2] = {{0, 0},
                                    {W - 1, 0},
                                    {0, H - 1},
                                    {W - 1, H - 1},
                                    {-7.5f, H * 0.5f},
                                    {W + 9, -3},
                                    {W * 0.5f, H + 20},
                                    {(float)stride * 2.5f, (float)stride * 3.5f}};
            const int np = (int)(sizeof pts / sizeof pts[0]);
            for (int i = 0; i < np; i++)
                for (int j = 0; j < np; j++)
                    add_line(l, s, k, pts[i][0], pts[i][1], pts[j][0], pts[j][1]);
            /* zero length away from the corners */
            add_line(l, s, k, 5.25f, 6.5f, 5.25f, 6.5f);
            /* random, some short, some longer than the maximum edge length */
            for (int r = 0; r < 24; r++) {
                float sx = rnd() * W, sy = rnd() * H;
                float sc = r % 3 == 0 ? 0.05f : 1.0f;
                add_line(l, s, k, sx, sy, sx + (rnd() - 0.5f) * W * sc,
                         sy + (rnd() - 0.5f) * H * sc);
            }
            /* half cells along the line */
            add_line(l, s, k, (float)stride * 0.5f, (float)stride * 1.5f, (float)stride * 9.5f,
                     (float)stride * 1.5f);
        }
    }
}

static void check_synthetic(int64_t h, int64_t w, int stride, bool fp16)
{
    char what[80];
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
    int64_t n = B * 2 * E * h * w;
    float *maps = malloc((size_t)n * sizeof *maps);
    if (!maps || !be)
        abort();
    /* A smooth field plus noise, in [-1, 1] (1 at a corner: no rescaling). */
    for (int64_t i = 0; i < n; i++)
        maps[i] = 0.9f * sinf(0.37f * (float)i) * (rnd() * 0.2f + 0.8f) - 0.05f * rnd();
    maps[0] = 1.0f;
    lines l = {0};
    synthetic_lines(&l, h, w, stride);
    sleapc_paf_score_opts o = sleapc__paf_score_opts_default();
    o.paf_stride = stride;
    float t1[1];
    sleapc_backend_paf_lines none = {.n = 1,
                                     .sample = l.frame,
                                     .edge = l.edge,
                                     .src = (const float(*)[2])l.src,
                                     .dst = (const float(*)[2])l.dst,
                                     .t = t1,
                                     .n_points = 1,
                                     .paf_stride = stride};
    CHECK(sleapc__backend_device_paf_scores(be, "Pafs", &none, t1) == SLEAPC_ERR_UNSUPPORTED);
    sleapc_tensor x = {
        .dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {B, 2 * E, h, w}, .data = maps};
    sleapc_tensor_map out = {0};
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    const sleapc_tensor *back = sleapc__tensor_map_get(&out, "Pafs");
    CHECK(back && back->ndim == 4 && back->shape[1] == 2 * E);
    if (back) {
        CHECK(sleapc__backend_device_paf_scores(be, "Nope", &none, t1) == SLEAPC_ERR_UNSUPPORTED);
        const int points[] = {10, 1, 7, 20, 64};
        for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
            o.n_points = points[i];
            snprintf(what, sizeof what, "%s %lldx%lld stride %d, %d points", fp16 ? "fp16" : "fp32",
                     (long long)h, (long long)w, stride, points[i]);
            compare(be, "Pafs", back->data, E, h, w, &l, &o, what);
        }
        float t65[65];
        sleapc__paf_linspace(65, t65);
        sleapc_backend_paf_lines many = none;
        many.t = t65;
        many.n_points = 65;
        CHECK(sleapc__backend_device_paf_scores(be, "Pafs", &many, t1) == SLEAPC_ERR_UNSUPPORTED);
    }
    lines_free(&l);
    free(maps);
    sleapc__backend_destroy(be);
    sleapc__graph_clear(&g);
}

/* (b): one reference case's PAFs and candidates. */
static void check_reference(const char *id)
{
    bu_case c;
    if (!bu_case_load(id, &c)) {
        bu_case_free(&c);
        return;
    }
    const int64_t np = c.peaks.shape[0], h = c.pafs.shape[2], w = c.pafs.shape[3];
    int64_t k = 0, n = 0;
    CHECK_OK(sleapc__paf_count_candidates(c.peak_channel_inds.data, np, c.n_nodes, c.edges,
                                          c.n_edges, &k));
    int32_t *ei = malloc((size_t)(k + 1) * sizeof *ei);
    int64_t(*epi)[2] = malloc((size_t)(k + 1) * sizeof *epi);
    float *host = malloc((size_t)(k + 1) * sizeof *host);
    if (!ei || !epi || !host)
        abort();
    CHECK_OK(sleapc__paf_candidates(c.peak_channel_inds.data, np, c.n_nodes, c.edges, c.n_edges, k,
                                    ei, epi, &n));
    /* The maps as the device gets them: float32 above 1 would be rescaled. */
    float *maps = c.pafs.data;
    int64_t n_maps = 2 * c.n_edges * h * w;
    float max = 0;
    for (int64_t i = 0; i < n_maps; i++)
        max = fmaxf(max, maps[i]);
    bool as_stored = max <= 1.0f;
    if (!as_stored)
        for (int64_t i = 0; i < n_maps; i++)
            maps[i] /= max;
    sleapc_graph g;
    vulkan_test_identity_graph(&g, 2 * c.n_edges, "Pafs");
    sleapc_backend *be = NULL;
    sleapc_backend_opts bo = {.n_threads = 1};
    CHECK_OK(sleapc__backend_create_from(vk_f, &g, &bo, &be));
    sleapc_tensor x = {
        .dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 2 * c.n_edges, h, w}, .data = maps};
    sleapc_tensor_map out = {0};
    if (be && n > 0) {
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        const sleapc_tensor *back = sleapc__tensor_map_get(&out, "Pafs");
        CHECK(back != NULL);
        lines l = {0};
        const float *pk = c.peaks.data;
        for (int64_t i = 0; i < n; i++)
            add_line(&l, 0, ei[i], pk[2 * epi[i][0]], pk[2 * epi[i][0] + 1], pk[2 * epi[i][1]],
                     pk[2 * epi[i][1] + 1]);
        if (back)
            compare(be, "Pafs", back->data, c.n_edges, h, w, &l, &c.score_opts, id);
        if (back && as_stored) {
            /* And sleap-nn's own scores, through the device. */
            float *t = malloc((size_t)c.score_opts.n_points * sizeof *t);
            if (!t)
                abort();
            sleapc__paf_linspace(c.score_opts.n_points, t);
            sleapc_backend_paf_lines req = {
                .n = n,
                .sample = l.frame,
                .edge = l.edge,
                .src = (const float(*)[2])l.src,
                .dst = (const float(*)[2])l.dst,
                .t = t,
                .n_points = c.score_opts.n_points,
                .paf_stride = c.score_opts.paf_stride,
                .max_edge_length = (float)sleapc__paf_max_edge_length(
                    c.score_opts.max_edge_length_ratio, c.n_edges, h, w, c.score_opts.paf_stride),
                .dist_penalty_weight = (float)c.score_opts.dist_penalty_weight};
            CHECK_OK(sleapc__backend_device_paf_scores(be, "Pafs", &req, host));
            ref_diff d = {0};
            ref_diff_add(&d, host, c.line_scores.data, n);
            CHECK_MSG(d.max_abs <= 1e-5 && d.n_nan_mismatch == 0,
                      "%s: device line scores vs sleap-nn max |err| %.3g", id, d.max_abs);
            free(t);
        }
        lines_free(&l);
    }
    sleapc__backend_destroy(be);
    sleapc__graph_clear(&g);
    free(ei);
    free(epi);
    free(host);
    bu_case_free(&c);
}

/* (c): the layer. */
static bool told_device;

static void on_log(sleapc_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    if (strstr(msg, "PAF lines scored on the vulkan device"))
        told_device = true;
}

static sleapc_predictor *predict(const char *backend, const sleapc_tensor *crop)
{
    char model[2048];
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_bottomup"));
    const char *paths[1] = {model};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.backend = backend;
    o.n_threads = 1;
    o.batch_size = 1;
    /* The crop as it is, not padded to the config's 384 x 384 (3 GFLOP, a
     * minute on lavapipe): 0.5 GFLOP. */
    o.max_height = (int)crop->shape[0];
    o.max_width = (int)crop->shape[1];
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 1, &o, &p));
    if (p)
        CHECK_OK(test_run_array(p, crop));
    return p;
}

static void check_layer(void)
{
    sleapc_tensor frame;
    CHECK_OK(sleapc_npy_read(test_data_path("reference/bottomup__centered_pair_f0000/frame.npy"),
                             &frame));
    enum { Y0 = 16, X0 = 100, H = 192, W = 128 };
    CHECK(frame.ndim == 3 && frame.shape[0] >= Y0 + H && frame.shape[1] >= X0 + W &&
          frame.shape[2] == 1);
    if (!(frame.ndim == 3 && frame.shape[0] >= Y0 + H && frame.shape[1] >= X0 + W &&
          frame.shape[2] == 1)) {
        sleapc_tensor_free(&frame);
        return;
    }
    static uint8_t px[H * W];
    for (int y = 0; y < H; y++)
        memcpy(px + y * W, (const uint8_t *)frame.data + (Y0 + y) * frame.shape[1] + X0, W);
    sleapc_tensor crop = {.dtype = SLEAPC_DTYPE_U8, .ndim = 3, .shape = {H, W, 1}, .data = px};
    sleapc_log_set(on_log, NULL);
    sleapc_predictor *dev = predict("vulkan", &crop);
    sleapc_log_set(NULL, NULL);
    CHECK_MSG(told_device, "the layer did not score its PAF lines on the device");
    sleapc_predictor *host = predict("native", &crop);
    int n_dev = dev ? test_n_instances(dev, 0) : -1, n_host = host ? test_n_instances(host, 0) : -2;
    CHECK_MSG(n_dev == n_host && n_host >= 1, "%d instances on the device, %d on the host", n_dev,
              n_host);
    double worst = 0;
    sleapc_skeleton sk = {0};
    if (host)
        CHECK_OK(sleapc_predictor_skeleton(host, &sk));
    for (int i = 0; n_dev == n_host && i < n_host; i++) {
        test_instance a, b;
        CHECK_OK(test_read_instance(dev, 0, i, &a));
        CHECK_OK(test_read_instance(host, 0, i, &b));
        for (int k = 0; k < 2 * sk.n_nodes; k++) {
            bool both_nan = isnan(a.points[k]) && isnan(b.points[k]);
            double d = both_nan ? 0 : fabs((double)a.points[k] - b.points[k]);
            if (!(d <= 0.02))
                CHECK_MSG(false, "instance %d point %d: %c %.4f on the device, %.4f on the host", i,
                          k / 2, "xy"[k % 2], a.points[k], b.points[k]);
            else
                worst = fmax(worst, d);
        }
    }
    printf("layer: %d instances on a %dx%d crop, points within %.3g px of the host path\n", n_host,
           H, W, worst);
    sleapc_predictor_destroy(dev);
    sleapc_predictor_destroy(host);
    sleapc_tensor_free(&frame);
}

int main(void)
{
    vk_f = vulkan_test_factory();
    if (!vk_f)
        return 77;
    check_synthetic(13, 17, 4, false);
    check_synthetic(11, 9, 3, false);
    check_synthetic(13, 17, 4, true);

    test_require_data();
    static ref_cases all;
    const char *ids[REF_MAX_CASES];
    int n = bu_list_cases(&all, ids, REF_MAX_CASES);
    for (int i = 0; i < n; i++)
        if (strstr(ids[i], "multiclass") == NULL)
            check_reference(ids[i]);
    check_layer();

    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on, "the validation layer did not run (install vulkan-validationlayers)");
    CHECK_MSG(messages == 0, "%lld validation messages", (long long)messages);
    return test_finish();
}
#endif
