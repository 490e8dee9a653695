/* The backend contract (backends/backend.h), checked against every backend
 * compiled in, plus the refusal of backends that do not conform, and two
 * fake backends under "auto" (one with device ops, one without): the device
 * ops of the backend auto chose reach it through auto. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "backends/backend_auto.h"
#include "core/alloc.h"
#include "test_util.h"

/* A small graph touching every op: conv, pool, upsample, resize, concat,
 * 1x1 conv head, global pool + linear head. */
typedef struct test_graph {
    sleapc_graph g;
    float w0[4 * 1 * 3 * 3], b0[4];
    float w1[3 * 8], b1[3];
    float w2[2 * 4], b2[2];
} test_graph;

static void build_graph(test_graph *t)
{
    memset(t, 0, sizeof *t);
    test_fill_weights(t->w0, 36, 1, 1.0f);
    test_fill_weights(t->b0, 4, 2, 1.0f);
    test_fill_weights(t->w1, 24, 3, 1.0f);
    test_fill_weights(t->b1, 3, 4, 1.0f);
    test_fill_weights(t->w2, 8, 5, 1.0f);
    test_fill_weights(t->b2, 2, 6, 1.0f);
    sleapc_graph *g = &t->g;
    g->in_channels = 1;
    g->max_stride = 2;
    int in, c0, p, up, rs, cat, head, gp, vec;
    sleapc_node n_in = {.op = SLEAPC_OP_INPUT, .name = "input"};
    CHECK_OK(sleapc__graph_add(g, &n_in, &in));
    sleapc_node n_c0 = {.op = SLEAPC_OP_CONV2D, .name = "conv0", .n_inputs = 1, .inputs = {in},
                        .c_in = 1, .c_out = 4, .kernel = 3, .act = SLEAPC_ACT_RELU,
                        .weight = t->w0, .bias = t->b0};
    CHECK_OK(sleapc__graph_add(g, &n_c0, &c0));
    sleapc_node n_p = {.op = SLEAPC_OP_MAXPOOL2D, .name = "pool", .n_inputs = 1, .inputs = {c0}};
    CHECK_OK(sleapc__graph_add(g, &n_p, &p));
    sleapc_node n_up = {.op = SLEAPC_OP_UPSAMPLE2X, .name = "up", .n_inputs = 1, .inputs = {p}};
    CHECK_OK(sleapc__graph_add(g, &n_up, &up));
    sleapc_node n_rs = {.op = SLEAPC_OP_RESIZE_LIKE, .name = "rs", .n_inputs = 2, .inputs = {up, c0}};
    CHECK_OK(sleapc__graph_add(g, &n_rs, &rs));
    sleapc_node n_cat = {.op = SLEAPC_OP_CONCAT, .name = "cat", .n_inputs = 2, .inputs = {c0, rs}};
    CHECK_OK(sleapc__graph_add(g, &n_cat, &cat));
    sleapc_node n_h = {.op = SLEAPC_OP_CONV2D, .name = "head", .n_inputs = 1, .inputs = {cat},
                       .c_in = 8, .c_out = 3, .kernel = 1, .weight = t->w1, .bias = t->b1};
    CHECK_OK(sleapc__graph_add(g, &n_h, &head));
    sleapc_node n_gp = {.op = SLEAPC_OP_GLOBAL_MAXPOOL, .name = "gp", .n_inputs = 1, .inputs = {p}};
    CHECK_OK(sleapc__graph_add(g, &n_gp, &gp));
    sleapc_node n_v = {.op = SLEAPC_OP_LINEAR, .name = "vec", .n_inputs = 1, .inputs = {gp},
                       .c_in = 4, .c_out = 2, .act = SLEAPC_ACT_SOFTMAX, .weight = t->w2,
                       .bias = t->b2};
    CHECK_OK(sleapc__graph_add(g, &n_v, &vec));
    CHECK_OK(sleapc__graph_add_output(g, "TestMapHead", head, 1));
    CHECK_OK(sleapc__graph_add_output(g, "TestVectorHead", vec, 0));
}

static void check_conforming(const struct sleapc_backend_factory *f, const sleapc_graph *g)
{
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 2};
    CHECK_OK(sleapc__backend_create_from(f, g, &opts, &be));
    if (!be)
        return;
    CHECK(sleapc__backend_check(be) == SLEAPC_OK);
    CHECK(strcmp(be->ops->name, f->name) == 0);

    enum { B = 2, H = 6, W = 10 };
    uint8_t px[B * H * W];
    for (int i = 0; i < B * H * W; i++)
        px[i] = (uint8_t)(i * 37);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {B, 1, H, W}, .data = px};
    int64_t shape[4] = {B, 1, H, W};
    CHECK_OK(sleapc__backend_warmup(be, shape));

    sleapc_tensor_map out = {0};
    int64_t allocs = sleapc__alloc_count();
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    /* Plan once, run many: a forward of the warmed-up shape allocates nothing. */
    CHECK_MSG(sleapc__alloc_count() == allocs, "%s: forward allocated %lld times", f->name,
              (long long)(sleapc__alloc_count() - allocs));
    CHECK(out.n == 2);
    const sleapc_tensor *map = sleapc__tensor_map_get(&out, "TestMapHead");
    const sleapc_tensor *vec = sleapc__tensor_map_get(&out, "TestVectorHead");
    CHECK(map && map->dtype == SLEAPC_DTYPE_F32 && map->ndim == 4 && map->shape[0] == B &&
          map->shape[1] == 3 && map->shape[2] == H && map->shape[3] == W);
    CHECK(vec && vec->dtype == SLEAPC_DTYPE_F32 && vec->ndim == 2 && vec->shape[0] == B &&
          vec->shape[1] == 2);
    if (vec) {
        const float *v = vec->data;
        for (int b = 0; b < B; b++)
            CHECK(v[2 * b] > 0 && v[2 * b + 1] > 0 && v[2 * b] + v[2 * b + 1] > 0.999f &&
                  v[2 * b] + v[2 * b + 1] < 1.001f);
    }

    /* uint8 and the same values as float32 in [0,1] give the same outputs. */
    float fx[B * H * W];
    for (int i = 0; i < B * H * W; i++)
        fx[i] = (float)px[i] / 255.0f;
    float first[B * 3 * H * W];
    if (map)
        memcpy(first, map->data, sizeof first);
    sleapc_tensor xf = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {B, 1, H, W}, .data = fx};
    CHECK_OK(sleapc__backend_forward(be, &xf, &out));
    map = sleapc__tensor_map_get(&out, "TestMapHead");
    CHECK(map && memcmp(first, map->data, sizeof first) == 0);

    /* A 3-channel input is converted to the model's 1 channel. */
    uint8_t rgb[B * 3 * H * W] = {0};
    sleapc_tensor x3 = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {B, 3, H, W}, .data = rgb};
    CHECK_OK(sleapc__backend_forward(be, &x3, &out));

    /* Bad inputs are refused with a message, never a crash. */
    sleapc_tensor bad = x;
    bad.shape[1] = 2;
    CHECK(sleapc__backend_forward(be, &bad, &out) == SLEAPC_ERR_INVALID_ARG);
    CHECK(strlen(sleapc_last_error()) > 0);
    bad = x;
    bad.ndim = 3;
    CHECK(sleapc__backend_forward(be, &bad, &out) == SLEAPC_ERR_INVALID_ARG);
    bad = x;
    bad.shape[2] = 1;  /* too small to pool */
    CHECK(sleapc__backend_forward(be, &bad, &out) == SLEAPC_ERR_INVALID_ARG);
    bad = x;
    bad.dtype = SLEAPC_DTYPE_I64;
    CHECK(sleapc__backend_forward(be, &bad, &out) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__backend_forward(be, NULL, &out) == SLEAPC_ERR_INVALID_ARG);

    /* A new shape after a refused one still works. */
    sleapc_tensor x2 = x;
    x2.shape[0] = 1;
    CHECK_OK(sleapc__backend_forward(be, &x2, &out));
    sleapc__backend_destroy(be);
}

/* Fake backends that break the contract in one way each. */
static int n_destroyed;
static sleapc_status fake_forward(sleapc_backend *be, const sleapc_tensor *x, sleapc_tensor_map *o)
{
    return SLEAPC_OK;
}
static sleapc_status fake_warmup(sleapc_backend *be, const int64_t shape[4])
{
    return SLEAPC_OK;
}
static sleapc_status fake_submit(sleapc_backend *be, const sleapc_tensor *x)
{
    (void)be;
    (void)x;
    return SLEAPC_OK;
}
static sleapc_backend *fake_delegate(sleapc_backend *be)
{
    return be;
}
static void fake_destroy(sleapc_backend *be)
{
    n_destroyed++;
    free(be);
}

static struct sleapc_backend_ops fake_ops;
static const char *fake_device;
static sleapc_backend *fake_last;  /* freed by the test when it has no destroy */

static sleapc_status fake_create(const sleapc_graph *g, const sleapc_backend_opts *o,
                                 sleapc_backend **out)
{
    sleapc_backend *be = calloc(1, sizeof *be);
    be->ops = &fake_ops;
    strncpy(be->device, fake_device, sizeof be->device - 1);
    fake_last = be;
    *out = be;
    return SLEAPC_OK;
}
static int fake_score(void)
{
    return 1;
}

static void check_refused(const char *why, const char *expect_in_msg)
{
    static const struct sleapc_backend_factory f = {
        .name = "fake", .score = fake_score, .create = fake_create};
    sleapc_backend *be = (sleapc_backend *)1;
    int before = n_destroyed;
    sleapc_graph g = {0};
    sleapc_status st = sleapc__backend_create_from(&f, &g, NULL, &be);
    CHECK_MSG(st == SLEAPC_ERR_BACKEND, "%s: accepted", why);
    CHECK(be == NULL);
    CHECK_MSG(strstr(sleapc_last_error(), expect_in_msg) != NULL, "%s: message \"%s\"", why,
              sleapc_last_error());
    if (fake_ops.destroy)
        CHECK_MSG(n_destroyed == before + 1, "%s: refused backend not destroyed", why);
    else
        free(fake_last);
}

static void check_nonconforming(void)
{
    const struct sleapc_backend_ops good = {.abi = SLEAPC_BACKEND_ABI, .name = "fake",
                                            .forward = fake_forward, .warmup = fake_warmup,
                                            .destroy = fake_destroy};
    fake_ops = good;
    fake_device = "cuda:1";
    static const struct sleapc_backend_factory f = {
        .name = "fake", .score = fake_score, .create = fake_create};
    sleapc_backend *be = NULL;
    sleapc_graph g = {0};
    CHECK_OK(sleapc__backend_create_from(&f, &g, NULL, &be));
    /* Without submit/collect: the two-step forward is refused, forward serves. */
    uint8_t px[4] = {0};
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {1, 1, 2, 2}, .data = px};
    sleapc_tensor_map out = {0};
    CHECK(be && !sleapc__backend_can_submit(be));
    CHECK(sleapc__backend_submit(be, &x) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(sleapc__backend_collect(be, &out) == SLEAPC_ERR_STATE);
    sleapc__backend_destroy(be);

    fake_ops.abi = SLEAPC_BACKEND_ABI + 1;
    check_refused("wrong ABI", "ABI");
    fake_ops = good;
    fake_ops.forward = NULL;
    check_refused("no forward", "forward");
    fake_ops = good;
    fake_ops.warmup = NULL;
    check_refused("no warmup", "warmup");
    fake_ops = good;
    fake_ops.name = NULL;
    check_refused("no name", "name");
    fake_ops = good;
    static const struct sleapc_backend_device_ops submit_only = {.submit = fake_submit};
    fake_ops.device = &submit_only; /* submit/collect: both or neither */
    check_refused("submit without collect", "collect");
    fake_ops = good;
    static const struct sleapc_backend_device_ops none = {0};
    fake_ops.device = &none; /* a delegate's table is the one handed over */
    fake_ops.delegate = fake_delegate;
    check_refused("delegate with its own device ops", "delegat");
    fake_ops = good;
    const char *bad_devices[] = {"", "tpu", "cuda:", "cuda:x", "cpu0", "CPU", "gpu:"};
    for (size_t i = 0; i < sizeof bad_devices / sizeof bad_devices[0]; i++) {
        fake_device = bad_devices[i];
        check_refused(bad_devices[i], "device");
    }
    fake_device = "cpu";
    /* A missing destroy is refused too; the test frees the struct itself. */
    fake_ops.destroy = NULL;
    check_refused("no destroy", "destroy");
}


/* Two fake backends for "auto": "fake-gpu" with every device op (each call
 * counted) and "fake-cpu" with none. Neither computes anything: what is
 * checked is where each call goes. The slower of the two sleeps. */
typedef struct device_calls {
    int forward, global_peaks, local_peaks, submit, collect, paf, upload, windows, keep, fetch,
        sample;
} device_calls;
static device_calls gpu_calls;
static bool gpu_slow;

static void nap(void)
{
    struct timespec t = {0, 20 * 1000 * 1000};
    nanosleep(&t, NULL);
}

static sleapc_status gpu_forward(sleapc_backend *be, const sleapc_tensor *x, sleapc_tensor_map *o)
{
    (void)be;
    (void)x;
    (void)o;
    gpu_calls.forward++;
    if (gpu_slow)
        nap();
    return SLEAPC_OK;
}
static sleapc_status cpu_forward(sleapc_backend *be, const sleapc_tensor *x, sleapc_tensor_map *o)
{
    (void)be;
    (void)x;
    (void)o;
    if (!gpu_slow)
        nap();
    return SLEAPC_OK;
}
static sleapc_status gpu_global_peaks(sleapc_backend *be, const char *head, double t, int k)
{
    (void)be, (void)head, (void)t, (void)k;
    gpu_calls.global_peaks++;
    return SLEAPC_OK;
}
static sleapc_status gpu_local_peaks(sleapc_backend *be, const char *head, double t, int k, int n)
{
    (void)be, (void)head, (void)t, (void)k, (void)n;
    gpu_calls.local_peaks++;
    return SLEAPC_OK;
}
static sleapc_status gpu_submit(sleapc_backend *be, const sleapc_tensor *x)
{
    (void)be, (void)x;
    gpu_calls.submit++;
    return SLEAPC_OK;
}
static sleapc_status gpu_collect(sleapc_backend *be, sleapc_tensor_map *out)
{
    (void)be, (void)out;
    gpu_calls.collect++;
    return SLEAPC_OK;
}
static sleapc_status gpu_paf(sleapc_backend *be, const char *head,
                             const sleapc_backend_paf_lines *lines, float *scores)
{
    (void)be, (void)head, (void)lines;
    scores[0] = 1;
    gpu_calls.paf++;
    return SLEAPC_OK;
}
static sleapc_status gpu_upload(sleapc_backend *be, const sleapc_tensor *frames)
{
    (void)be, (void)frames;
    gpu_calls.upload++;
    return SLEAPC_OK;
}
static sleapc_status gpu_windows(sleapc_backend *be, const sleapc_backend_windows *w,
                                 sleapc_tensor_map *out)
{
    (void)be, (void)w, (void)out;
    gpu_calls.windows++;
    return SLEAPC_OK;
}
static sleapc_status gpu_keep(sleapc_backend *be, const char *head, bool keep)
{
    (void)be, (void)head, (void)keep;
    gpu_calls.keep++;
    return SLEAPC_OK;
}
static float kept_map[4];
static sleapc_status gpu_fetch(sleapc_backend *be, const char *head, sleapc_tensor_map *out)
{
    (void)be;
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 1, 2, 2},
                       .data = kept_map};
    gpu_calls.fetch++;
    return sleapc__tensor_map_set(out, head, &t);
}
static sleapc_status gpu_sample(sleapc_backend *be, const char *head, int64_t n,
                                const int32_t (*cells)[3], float *values)
{
    (void)be, (void)head, (void)n, (void)cells, (void)values;
    gpu_calls.sample++;
    return SLEAPC_OK;
}

static const struct sleapc_backend_device_ops gpu_device = {
    .device_global_peaks = gpu_global_peaks, .submit = gpu_submit, .collect = gpu_collect,
    .device_paf_scores = gpu_paf, .upload_frames = gpu_upload, .forward_windows = gpu_windows,
    .device_local_peaks = gpu_local_peaks, .device_keep_head = gpu_keep,
    .device_fetch_head = gpu_fetch, .device_sample_head = gpu_sample};
static const struct sleapc_backend_ops gpu_ops = {
    .abi = SLEAPC_BACKEND_ABI, .name = "fake-gpu", .forward = gpu_forward,
    .warmup = fake_warmup, .destroy = fake_destroy, .device = &gpu_device};
static const struct sleapc_backend_ops cpu_ops = {
    .abi = SLEAPC_BACKEND_ABI, .name = "fake-cpu", .forward = cpu_forward,
    .warmup = fake_warmup, .destroy = fake_destroy};

static sleapc_status make_fake(const struct sleapc_backend_ops *ops, const char *device,
                               sleapc_backend **out)
{
    sleapc_backend *be = calloc(1, sizeof *be);
    if (!be)
        return SLEAPC_ERR_NOMEM;
    be->ops = ops;
    snprintf(be->device, sizeof be->device, "%s", device);
    *out = be;
    return SLEAPC_OK;
}
static sleapc_status gpu_create(const sleapc_graph *g, const sleapc_backend_opts *o,
                                sleapc_backend **out)
{
    (void)g, (void)o;
    return make_fake(&gpu_ops, "gpu", out);
}
static sleapc_status cpu_create(const sleapc_graph *g, const sleapc_backend_opts *o,
                                sleapc_backend **out)
{
    (void)g, (void)o;
    return make_fake(&cpu_ops, "cpu", out);
}
static int gpu_score(void)
{
    return 10;
}
static int cpu_score(void)
{
    return 5;
}
static const struct sleapc_backend_factory gpu_factory = {
    .name = "fake-gpu", .score = gpu_score, .create = gpu_create};
static const struct sleapc_backend_factory cpu_factory = {
    .name = "fake-cpu", .score = cpu_score, .create = cpu_create};

/* Every device op through be: how many answered SLEAPC_OK. */
static int device_ops_through(sleapc_backend *be)
{
    int ok = 0;
    ok += sleapc__backend_device_global_peaks(be, "TestMapHead", 0.2, 5) == SLEAPC_OK;
    ok += sleapc__backend_device_local_peaks(be, "TestMapHead", 0.2, 5, 4) == SLEAPC_OK;
    uint8_t px[4] = {0};
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {1, 1, 2, 2}, .data = px};
    sleapc_tensor_map out = {0};
    if (sleapc__backend_can_submit(be)) {
        ok += sleapc__backend_submit(be, &x) == SLEAPC_OK;
        CHECK(be->in_flight == 1);
        ok += sleapc__backend_collect(be, &out) == SLEAPC_OK;
        CHECK(be->in_flight == 0);
    } else {
        CHECK(sleapc__backend_submit(be, &x) == SLEAPC_ERR_UNSUPPORTED);
    }
    const int32_t sample = 0, edge = 0;
    const float src[1][2] = {{0, 0}}, dst[1][2] = {{1, 1}}, t[1] = {0};
    sleapc_backend_paf_lines ln = {.n = 1, .sample = &sample, .edge = &edge, .src = src,
                                   .dst = dst, .t = t, .n_points = 1, .paf_stride = 1,
                                   .max_edge_length = 10, .dist_penalty_weight = 1};
    float score = 0;
    ok += sleapc__backend_device_paf_scores(be, "PafsHead", &ln, &score) == SLEAPC_OK;
    ok += sleapc__backend_upload_frames(be, &x) == SLEAPC_OK;
    const int32_t frame = 0;
    const int64_t origin[2] = {0, 0};
    sleapc_backend_windows w = {.n = 1, .frame = &frame, .origin = origin, .win_h = 2,
                                .win_w = 2, .rs_h = 2, .rs_w = 2, .out_h = 2, .out_w = 2};
    ok += sleapc__backend_forward_windows(be, &w, &out) == SLEAPC_OK;
    ok += sleapc__backend_device_keep_head(be, "PafsHead", true) == SLEAPC_OK;
    sleapc_tensor kept = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 1, 2, 2}};
    sleapc__tensor_map_clear(&out);
    CHECK_OK(sleapc__tensor_map_set(&out, "PafsHead", &kept));
    ok += sleapc__backend_device_fetch_head(be, "PafsHead", &out) == SLEAPC_OK;
    const int32_t cells[1][3] = {{0, 0, 0}};
    float v = 0;
    ok += sleapc__backend_device_sample_head(be, "PafsHead", 1, cells, &v) == SLEAPC_OK;
    return ok;
}

/* A batch big enough for auto to decide on (test_backend_auto.c). */
enum { AB = 8, AH = 512, AW = 512 };

static void check_auto_hands_device_ops(const sleapc_graph *g)
{
    CHECK(sleapc__graph_flops(g, AB, AH, AW) >= 0.1e9);
    static uint8_t px[AB * AH * AW];
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {AB, 1, AH, AW}, .data = px};
    const struct sleapc_backend_factory *facs[] = {&cpu_factory, &gpu_factory};
    sleapc_tensor_map out = {0};

    /* fake-gpu serves first and stays (fake-cpu is slower). */
    memset(&gpu_calls, 0, sizeof gpu_calls);
    gpu_slow = false;
    sleapc_backend *be = NULL;
    CHECK_OK(sleapc__backend_auto_create_among(facs, 2, g, NULL, &be));
    if (!be)
        return;
    CHECK(strcmp(be->ops->name, "auto") == 0);
    /* Undecided: forwards must come to auto to be measured. */
    CHECK(device_ops_through(be) == 0);
    CHECK(!sleapc__backend_can_submit(be) && !sleapc__backend_has_windows(be));
    /* A run of one batch: chosen, nothing measured (a longer run would). */
    sleapc__backend_run_begin(AB);
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    sleapc__backend_run_end();
    CHECK(strcmp(sleapc__backend_name(be), "fake-gpu") == 0);
    CHECK(sleapc__backend_can_submit(be) && sleapc__backend_has_windows(be));
    CHECK(device_ops_through(be) == 10);
    CHECK(gpu_calls.global_peaks == 1 && gpu_calls.local_peaks == 1 && gpu_calls.submit == 1 &&
          gpu_calls.collect == 1 && gpu_calls.paf == 1 && gpu_calls.upload == 1 &&
          gpu_calls.windows == 1 && gpu_calls.keep == 1 && gpu_calls.fetch == 1 &&
          gpu_calls.sample == 1);
    /* Kept from then on, a run that could measure too: its device may hold
     * the layer's state. */
    sleapc__backend_run_begin(0);
    int forwards = gpu_calls.forward;
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK(gpu_calls.forward == forwards + 1 && strcmp(sleapc__backend_name(be), "fake-gpu") == 0);
    sleapc__backend_run_end();
    sleapc__backend_destroy(be);

    /* fake-gpu serves first, fake-cpu wins the measurement: no device ops. */
    memset(&gpu_calls, 0, sizeof gpu_calls);
    gpu_slow = true;
    CHECK_OK(sleapc__backend_auto_create_among(facs, 2, g, NULL, &be));
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK(strcmp(sleapc__backend_name(be), "fake-cpu") == 0);
    CHECK(device_ops_through(be) == 0);
    CHECK(gpu_calls.global_peaks + gpu_calls.submit + gpu_calls.sample == 0);
    sleapc__backend_destroy(be);

    /* One candidate: auto is that backend itself, device ops and all. */
    memset(&gpu_calls, 0, sizeof gpu_calls);
    CHECK_OK(sleapc__backend_auto_create_among(facs + 1, 1, g, NULL, &be));
    CHECK(be && be->ops == &gpu_ops);
    CHECK(device_ops_through(be) == 10);
    sleapc__backend_destroy(be);
}

int main(void)
{
    /* Nothing measured here is kept, and measuring stays on. */
    setenv("SLEAPC_NO_CACHE", "1", 1);
    unsetenv("SLEAPC_AUTO_MEASURE");
    test_graph t;
    build_graph(&t);
    int n_backends = 0;
    for (int i = 0; i < sleapc__backend_count(); i++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(i);
        CHECK(f && f->name && f->score && f->create);
        if (f->score() > 0) {
            check_conforming(f, &t.g);
            n_backends++;
        }
    }
    CHECK(n_backends >= 1);  /* the native backend runs anywhere */

    /* Lookup by name: unknown names are refused with the list of backends. */
    sleapc_backend *be = NULL;
    CHECK(sleapc__backend_create("no-such-backend", &t.g, NULL, &be) == SLEAPC_ERR_INVALID_ARG);
    CHECK(strstr(sleapc_last_error(), "native") != NULL);
    CHECK_OK(sleapc__backend_create("auto", &t.g, NULL, &be));
    sleapc__backend_destroy(be);
    CHECK_OK(sleapc__backend_create("native", &t.g, NULL, &be));
    CHECK(be && strcmp(be->device, "cpu") == 0 && !be->baked_postproc);
    sleapc__backend_destroy(be);

    check_nonconforming();
    check_auto_hands_device_ops(&t.g);
    sleapc__graph_clear(&t.g);
    return test_finish();
}
