/* sleap-nn 0.3.5's re-ID `embedding` model (tests/goldens/sleapnn-0.3.5-families):
 * the config read, the checkpoint bound strictly (the train-only projection
 * head outside model.* skipped, as sleap-nn's inference drops it), the
 * network run over the first 4 crops sleap-nn embedded
 * (cases/embedding__topdown_slp/heads/input.npy, already standardized) and
 * each vector compared with expected.json's (crops enumerated frame by frame,
 * instance by instance): within 1e-5 per element (the README's tolerance).
 * Every usable backend runs the graph and is held to that bound (each prints
 * its worst difference); SLEAPC_TEST_BACKEND=NAME runs that backend only,
 * and a backend on a software device (Vulkan on lavapipe) runs only when so
 * named (the test_embedding_reference_vulkan re-run). This small model's
 * vectors barely move with the input's scale (the input divided by 255, as
 * the pose models' graphs do to a float image over 1, is 9.4e-6 off), so
 * the CPU backends' are also held to 1e-6 (measured: native 8.9e-8, oneDNN
 * 3.0e-8, XNNPACK 8.9e-8; Vulkan on lavapipe 1.2e-7).
 * An unknown pool is refused naming the key; the predictor refuses the model. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/native/native_kernels.h"
#include "io/config/model_config.h"
#include "io/npy/npy_file.h"
#include "model/model_impl.h"
#include "test_util.h"

#define TOL 1e-5
#define TOL_STRICT 1e-6
#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define MODEL FAMILIES "/models/embedding"
#define CASE FAMILIES "/cases/embedding__topdown_slp"
#define N_CROPS 4
#define DIM 16

/* expected.json's first N_CROPS vectors, frame by frame, instance by instance. */
static int read_expected(float *v)
{
    size_t len = 0;
    unsigned char *text = test_read_file(CASE "/expected.json", &len);
    CHECK(text != NULL);
    cJSON *doc = text ? cJSON_ParseWithLength((const char *)text, len) : NULL;
    free(text);
    int n = 0;
    const cJSON *frames = cJSON_GetObjectItem(doc, "frames");
    for (int f = 0; f < cJSON_GetArraySize(frames) && n < N_CROPS; f++) {
        const cJSON *insts = cJSON_GetObjectItem(cJSON_GetArrayItem(frames, f), "instances");
        for (int i = 0; i < cJSON_GetArraySize(insts) && n < N_CROPS; i++) {
            const cJSON *vec = cJSON_GetObjectItem(cJSON_GetArrayItem(insts, i), "vector");
            CHECK(cJSON_GetArraySize(vec) == DIM);
            if (cJSON_GetArraySize(vec) != DIM)
                break;
            for (int k = 0; k < DIM; k++)
                v[n * DIM + k] = (float)cJSON_GetNumberValue(cJSON_GetArrayItem(vec, k));
            n++;
        }
    }
    cJSON_Delete(doc);
    return n;
}

static void check_config(const sleapc_model *m)
{
    const sleapc_embedding_config *e = &m->cfg.embedding;
    CHECK(m->cfg.model_type == SLEAPC_MODEL_TYPE_EMBEDDING);
    CHECK(strcmp(sleapc_model_type_name(SLEAPC_MODEL_TYPE_EMBEDDING), "embedding") == 0);
    CHECK(e->dim == DIM && e->fc_layers == 1 && e->fc_units == 32);
    CHECK(e->pool == SLEAPC_EMBEDDING_POOL_GEM && e->normalize && e->stride == 32);
    CHECK(m->n_heads == 1 && strcmp(m->heads[0].name, "EmbeddingHead") == 0 &&
          m->heads[0].stride == 0 && m->heads[0].channels == DIM);
    bool gem = false, l2 = false;
    for (int i = 0; i < m->graph.n_nodes; i++) {
        gem |= m->graph.nodes[i].op == SLEAPC_OP_GLOBAL_GEMPOOL;
        l2 |= m->graph.nodes[i].op == SLEAPC_OP_L2NORM;
        CHECK_MSG(m->graph.nodes[i].op != SLEAPC_OP_UPSAMPLE2X &&
                      m->graph.nodes[i].op != SLEAPC_OP_CONV_TRANSPOSE2D,
                  "node %s: an embedding model has no decoder", m->graph.nodes[i].name);
    }
    CHECK(gem && l2);
    /* The input is the standardized crop: never scaled by 255 (its max is over 1). */
    CHECK(m->graph.input_as_is);
}

static bool selected(const char *name)
{
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    return !only || !*only || strcmp(only, name) == 0;
}

/* One backend's vectors against want: within TOL; returns the worst
 * difference (NaN when it did not run). */
static double backend_vectors(const struct sleapc_backend_factory *f, const sleapc_model *m,
                              const sleapc_tensor *x, const float *want)
{
    sleapc_backend_opts opts = {.n_threads = 2, .precision = SLEAPC_PRECISION_FP32,
                                .conv = SLEAPC_CONV_DIRECT};
    sleapc_backend *be = NULL;
    sleapc_status st = sleapc__backend_create_from(f, &m->graph, &opts, &be);
    CHECK_MSG(st == SLEAPC_OK, "%s: %s", f->name, sleapc_last_error());
    sleapc_tensor_map out = {0};
    if (be)
        CHECK_OK(sleapc__backend_forward(be, x, &out));
    const sleapc_tensor *got = be ? sleapc__tensor_map_get(&out, "EmbeddingHead") : NULL;
    CHECK_MSG(got != NULL, "%s: no EmbeddingHead", f->name);
    double worst = NAN, norm_err = 0.0;
    if (got) {
        CHECK(got->ndim == 2 && got->shape[0] == N_CROPS && got->shape[1] == DIM);
        const float *gd = got->data;
        worst = 0.0;
        for (int n = 0; n < N_CROPS; n++) {
            double ss = 0.0;
            for (int k = 0; k < DIM; k++) {
                float g = gd[n * DIM + k];
                double d = fabs((double)g - (double)want[n * DIM + k]);
                worst = d > worst || d != d ? d : worst;
                ss += (double)g * g;
            }
            norm_err = fmax(norm_err, fabs(sqrt(ss) - 1.0));
        }
        printf("embedding %s: worst |vector - sleap-nn| %.3g (tolerance %.0e), "
               "worst | ||v|| - 1 | %.3g\n",
               f->name, worst, TOL, norm_err);
        CHECK_MSG(worst <= TOL, "%s: worst difference %.3g > %.0e", f->name, worst, TOL);
    }
    if (be)
        sleapc__backend_destroy(be);
    /* fp16 puts the vectors past the bound (Vulkan: 3e-4), and XNNPACK's
     * linears have no fp16 operator: both refuse it with a message. */
    if (strcmp(f->name, "vulkan") == 0 || strcmp(f->name, "xnnpack") == 0) {
        opts.precision = SLEAPC_PRECISION_FP16;
        be = NULL;
        st = sleapc__backend_create_from(f, &m->graph, &opts, &be);
        CHECK_MSG(st != SLEAPC_OK && be == NULL && *sleapc_last_error(),
                  "%s ran the embedding graph in fp16", f->name);
        printf("embedding %s fp16: %s\n", f->name, sleapc_last_error());
        if (be)
            sleapc__backend_destroy(be);
    }
    return worst;
}

/* Every usable backend on the reference crops; the CPU ones also within 1e-6.
 * Returns how many ran. */
static int check_vectors(const sleapc_model *m)
{
    float want[N_CROPS * DIM];
    CHECK(read_expected(want) == N_CROPS);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(CASE "/heads/input.npy", &x));
    if (!x.data)
        return 0;
    CHECK(x.dtype == SLEAPC_DTYPE_F32 && x.ndim == 4 && x.shape[0] == N_CROPS &&
          x.shape[1] == 1 && x.shape[2] == 96 && x.shape[3] == 96);
    int n_run = 0;
    for (int bi = 0; bi < sleapc__backend_count(); bi++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(bi);
        if (!selected(f->name))
            continue;
        if (f->score() <= 0 ||
            (!getenv("SLEAPC_TEST_BACKEND") && test_backend_software_only(f->name))) {
            printf("embedding %s: skipped (not usable here)\n", f->name);
            continue;
        }
        double worst = backend_vectors(f, m, &x, want);
        n_run++;
        /* A GPU's pow and division may round more loosely than libm's. */
        if (strcmp(f->name, "vulkan") != 0)
            CHECK_MSG(worst <= TOL_STRICT, "%s: worst difference %.3g > %.0e (input scaled?)",
                      f->name, worst, TOL_STRICT);
    }
    free(x.data);
    return n_run;
}

/* pool: median is refused naming the file and the key. */
static void check_bad_pool(void)
{
    size_t len = 0;
    unsigned char *text = test_read_file(MODEL "/training_config.yaml", &len);
    CHECK(text != NULL);
    if (!text)
        return;
    char *s = malloc(len + 16);
    CHECK(s != NULL);
    const char *at = strstr((const char *)text, "pool: gem");
    CHECK(at != NULL);
    if (s && at) {
        size_t pre = (size_t)(at - (const char *)text);
        memcpy(s, text, pre);
        size_t n = pre + (size_t)sprintf(s + pre, "pool: median");
        size_t rest = len - pre - strlen("pool: gem");
        memcpy(s + n, at + strlen("pool: gem"), rest);
        const char *path = test_tmp_path("embedding_bad_pool.yaml");
        CHECK(test_write_file(path, s, n + rest));
        sleapc_model_config cfg;
        sleapc_status st = sleapc__config_read_yaml(path, &cfg);
        CHECK(st == SLEAPC_ERR_UNSUPPORTED);
        const char *msg = sleapc_last_error();
        CHECK_MSG(strstr(msg, "embedding_bad_pool.yaml") && strstr(msg, "pool") &&
                      strstr(msg, "median"),
                  "message \"%s\"", msg);
        if (st == SLEAPC_OK)
            sleapc__model_config_clear(&cfg);
    }
    free(s);
    free(text);
}

static void check_predictor_refuses(void)
{
    const char *paths[1] = {MODEL};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    sleapc_predictor *p = NULL;
    sleapc_status st = sleapc_predictor_create(paths, 1, &o, &p);
    CHECK(st != SLEAPC_OK && p == NULL);
    CHECK_MSG(strstr(sleapc_last_error(), "it embeds the detections of a .slp") !=
                  NULL,
              "message \"%s\"", sleapc_last_error());
    if (p)
        sleapc_predictor_destroy(p);
}

/* The kernels on values worked by hand: the mean, GeM (p = 3, p clamped to
 * 6, negatives floored at eps) and the L2 norm of a zero row (stays zero). */
static void check_kernels(void)
{
    const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f}, neg[4] = {-1.0f, -2.0f, 0.0f, -4.0f};
    float p3 = 3.0f, p10 = 10.0f, out = 0.0f;
    sleapc__native_global_gempool(x, 1, 1, 2, 2, NULL, 1e-6f, &out);
    CHECK(fabsf(out - 2.5f) < 1e-6f);
    sleapc__native_global_gempool(x, 1, 1, 2, 2, &p3, 1e-6f, &out);
    CHECK(fabs(out - cbrt(25.0)) < 1e-5);
    sleapc__native_global_gempool(x, 1, 1, 2, 2, &p10, 1e-6f, &out);
    CHECK(fabs(out - pow((1 + 64 + 729 + 4096) / 4.0, 1.0 / 6.0)) < 1e-4);
    sleapc__native_global_gempool(neg, 1, 1, 2, 2, &p3, 1e-6f, &out);
    CHECK(fabsf(out - 1e-6f) < 1e-9f);
    float z[3] = {0.0f, 0.0f, 0.0f}, v[2] = {3.0f, 4.0f};
    sleapc__native_l2norm(z, 1, 3, 1e-12f);
    CHECK(z[0] == 0.0f && z[1] == 0.0f && z[2] == 0.0f);
    sleapc__native_l2norm(v, 1, 2, 1e-12f);
    CHECK(fabsf(v[0] - 0.6f) < 1e-7f && fabsf(v[1] - 0.8f) < 1e-7f);
}

int main(void)
{
    check_kernels();
    sleapc_model *m = NULL;
    int n_run = 0;
    CHECK_OK(sleapc__model_load(MODEL, &m));
    if (m) {
        check_config(m);
        n_run = check_vectors(m);
        sleapc__model_destroy(m);
    }
    /* The _vulkan re-run names a backend that may find no device here. */
    if (n_run == 0 && getenv("SLEAPC_TEST_BACKEND")) {
        printf("skipped: backend %s is not built or cannot run here\n",
               getenv("SLEAPC_TEST_BACKEND"));
        return 77;
    }
    CHECK(n_run > 0);
    check_bad_pool();
    check_predictor_refuses();
    return test_finish();
}
