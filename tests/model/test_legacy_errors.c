/* Legacy SLEAP 1.x folders (training_config.json + best_model.h5) that are
 * broken or unexpected: each gets a clear error naming the file (and the
 * layer or key), never a crash. Variants are written to the temp dir from a
 * real folder: edited JSON text, truncated files, and .h5 copies rewritten
 * through the HDF5 wrapper with one thing changed. The sanitizer build checks
 * that no path reads out of bounds or leaks. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "model/model_impl.h"
#include "sleapc/model.h"
#include "test_util.h"

static char src_dir[4096]; /* minimal_robot.UNet.single_instance */
static unsigned char *json_text, *h5_bytes;
static size_t json_len, h5_len;
static int n_variants;

static const char *new_dir(void)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/legacy%d", test_tmp_dir(), n_variants++);
    mkdir(dir, 0777);
    return dir;
}

static void put(const char *dir, const char *name, const void *data, size_t n)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(test_write_file(path, data, n));
}

/* A folder with the given config text and .h5 bytes (NULL: file absent). */
static const char *make_variant(const void *json, size_t jlen, const void *h5, size_t hlen)
{
    const char *dir = new_dir();
    if (json)
        put(dir, "training_config.json", json, jlen);
    if (h5)
        put(dir, "best_model.h5", h5, hlen);
    return dir;
}

/* text with the first occurrence of `from` replaced by `to` (caller frees). */
static char *replaced(const char *text, size_t len, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    CHECK_MSG(at != NULL, "\"%s\" not in the text", from);
    if (!at)
        return NULL;
    size_t pre = (size_t)(at - text), n = len - strlen(from) + strlen(to);
    char *s = malloc(n + 1);
    memcpy(s, text, pre);
    memcpy(s + pre, to, strlen(to));
    memcpy(s + pre + strlen(to), at + strlen(from), len - pre - strlen(from));
    s[n] = '\0';
    return s;
}

static void expect_fail(const char *what, const char *dir, sleapc_status want, const char *part1,
                        const char *part2)
{
    sleapc_model *m = (sleapc_model *)1;
    sleapc_status st = sleapc_model_load(dir, &m);
    const char *msg = sleapc_last_error();
    printf("%-34s %s\n", what, msg);
    CHECK_MSG(st == want, "%s: status %s, want %s (%s)", what, sleapc_status_str(st),
              sleapc_status_str(want), msg);
    CHECK(m == NULL);
    if (st == SLEAPC_OK)
        sleapc_model_destroy(m);
    CHECK_MSG(strstr(msg, part1) != NULL, "%s: message \"%s\" lacks \"%s\"", what, msg, part1);
    if (part2)
        CHECK_MSG(strstr(msg, part2) != NULL, "%s: message \"%s\" lacks \"%s\"", what, msg, part2);
}

/* ---- .h5 copies through the wrapper ------------------------------------ */

typedef struct h5_edit {
    const char *drop_layer;   /* not copied */
    const char *kernel_layer; /* its kernel replaced by zeros of kernel_shape */
    int kernel_ndim;
    int64_t kernel_shape[4];
    bool add_unknown_layer;        /* an extra weighted layer of no known name */
    const char *cfg_from, *cfg_to; /* one text edit of the model_config attribute */
} h5_edit;

static void copy_dataset(sleapc_h5 *in, sleapc_h5 *out, const char *layer, const char *path,
                         const char *leaf, const h5_edit *e)
{
    float *data = NULL;
    sleapc_h5_info info;
    CHECK_OK(sleapc__h5_read(in, path, SLEAPC_H5_F32, (void **)&data, &info));
    if (!data)
        return;
    if (e->kernel_layer && strcmp(layer, e->kernel_layer) == 0 && strncmp(leaf, "kernel", 6) == 0) {
        int64_t n = 1;
        for (int i = 0; i < e->kernel_ndim; i++)
            n *= e->kernel_shape[i];
        float *zeros = calloc((size_t)n, sizeof *zeros);
        CHECK_OK(sleapc__h5_write(out, path, SLEAPC_H5_F32, e->kernel_ndim, e->kernel_shape, zeros,
                                  NULL));
        free(zeros);
    } else {
        CHECK_OK(sleapc__h5_write(out, path, SLEAPC_H5_F32, info.ndim, info.shape, data, NULL));
    }
    sleapc__free(data);
}

/* Copy the weights (and model_config) of the source .h5 into dir, edited. */
static void write_h5_copy(const char *dir, const h5_edit *e)
{
    char src[4200], dst[1200];
    snprintf(src, sizeof src, "%s/best_model.h5", src_dir);
    snprintf(dst, sizeof dst, "%s/best_model.h5", dir);
    sleapc_h5 *in = NULL, *out = NULL;
    CHECK_OK(sleapc__h5_open(src, &in));
    CHECK_OK(sleapc__h5_create(dst, &out));
    if (!in || !out) {
        sleapc__h5_close(in);
        sleapc__h5_close(out);
        return;
    }
    char *cfg = NULL;
    CHECK_OK(sleapc__h5_attr_string(in, "/", "model_config", &cfg));
    if (cfg) {
        char *edited = e->cfg_from ? replaced(cfg, strlen(cfg), e->cfg_from, e->cfg_to) : NULL;
        CHECK_OK(sleapc__h5_set_attr_string(out, "/", "model_config", edited ? edited : cfg, true));
        free(edited);
    }
    sleapc__free(cfg);
    CHECK_OK(sleapc__h5_create_group(out, "/model_weights"));
    char **layers = NULL, **subs = NULL, **leaves = NULL;
    int64_t n_layers = 0, n_subs = 0, n_leaves = 0;
    CHECK_OK(sleapc__h5_list(in, "/model_weights", &layers, &n_layers));
    for (int64_t i = 0; i < n_layers; i++) {
        if (e->drop_layer && strcmp(layers[i], e->drop_layer) == 0)
            continue;
        char group[1024], sub[2048], path[3072];
        snprintf(group, sizeof group, "/model_weights/%s", layers[i]);
        CHECK_OK(sleapc__h5_create_group(out, group));
        CHECK_OK(sleapc__h5_list(in, group, &subs, &n_subs));
        for (int64_t j = 0; j < n_subs; j++) {
            snprintf(sub, sizeof sub, "%s/%s", group, subs[j]);
            CHECK_OK(sleapc__h5_list(in, sub, &leaves, &n_leaves));
            for (int64_t k = 0; k < n_leaves; k++) {
                snprintf(path, sizeof path, "%s/%s", sub, leaves[k]);
                copy_dataset(in, out, layers[i], path, leaves[k], e);
            }
            sleapc__h5_free_strings(leaves, n_leaves);
        }
        sleapc__h5_free_strings(subs, n_subs);
    }
    sleapc__h5_free_strings(layers, n_layers);
    if (e->add_unknown_layer) {
        int64_t ks[4] = {3, 3, 8, 8}, bs[1] = {8};
        float zeros[3 * 3 * 8 * 8] = {0};
        CHECK_OK(sleapc__h5_write(out, "/model_weights/mystery_layer/mystery_layer/kernel:0",
                                  SLEAPC_H5_F32, 4, ks, zeros, NULL));
        CHECK_OK(sleapc__h5_write(out, "/model_weights/mystery_layer/mystery_layer/bias:0",
                                  SLEAPC_H5_F32, 1, bs, zeros, NULL));
    }
    CHECK_OK(sleapc__h5_close(out));
    sleapc__h5_close(in);
}

static const char *h5_variant(const h5_edit *e)
{
    const char *dir = new_dir();
    put(dir, "training_config.json", json_text, json_len);
    write_h5_copy(dir, e);
    return dir;
}

/* ---- The checks ---------------------------------------------------------- */

static void check_files(void)
{
    /* The unedited copy loads: the variants below differ in one thing only. */
    h5_edit none = {0};
    sleapc_model *m = NULL;
    CHECK_OK(sleapc_model_load(h5_variant(&none), &m));
    sleapc_model_destroy(m);

    expect_fail("no best_model.h5", make_variant(json_text, json_len, NULL, 0), SLEAPC_ERR_IO,
                "best_model.h5", NULL);
    expect_fail("truncated .h5", make_variant(json_text, json_len, h5_bytes, h5_len / 2),
                SLEAPC_ERR_FORMAT, "best_model.h5", NULL);
    expect_fail("empty .h5", make_variant(json_text, json_len, "", 0), SLEAPC_ERR_FORMAT,
                "best_model.h5", NULL);
    expect_fail("text as .h5", make_variant(json_text, json_len, "not hdf5", 8), SLEAPC_ERR_FORMAT,
                "best_model.h5", NULL);

    h5_edit drop = {.drop_layer = "stack0_enc1_conv0"};
    expect_fail("layer removed", h5_variant(&drop), SLEAPC_ERR_FORMAT, "best_model.h5",
                "stack0_enc1_conv0");
    /* Keras (kh, kw, in, out): 9 inputs where the config implies 8. */
    h5_edit wrong_in = {
        .kernel_layer = "stack0_enc1_conv0", .kernel_ndim = 4, .kernel_shape = {3, 3, 9, 16}};
    expect_fail("kernel with wrong input channels", h5_variant(&wrong_in), SLEAPC_ERR_FORMAT,
                "best_model.h5", "stack0_enc1_conv0");
    h5_edit wrong_out = {
        .kernel_layer = "stack0_enc1_conv0", .kernel_ndim = 4, .kernel_shape = {3, 3, 8, 15}};
    expect_fail("kernel disagreeing with its bias", h5_variant(&wrong_out), SLEAPC_ERR_FORMAT,
                "best_model.h5", "layer stack0_enc1_conv0: bias");
    h5_edit flat = {.kernel_layer = "stack0_enc0_conv0", .kernel_ndim = 2, .kernel_shape = {27, 8}};
    expect_fail("2-D conv kernel", h5_variant(&flat), SLEAPC_ERR_FORMAT, "best_model.h5",
                "stack0_enc0_conv0");
    h5_edit unknown = {.add_unknown_layer = true};
    expect_fail("unknown layer", h5_variant(&unknown), SLEAPC_ERR_FORMAT, "best_model.h5",
                "mystery_layer");
    h5_edit valid_pad = {.cfg_from = "\"padding\": \"same\"", .cfg_to = "\"padding\": \"valid\""};
    expect_fail("valid padding", h5_variant(&valid_pad), SLEAPC_ERR_FORMAT, "best_model.h5",
                "padding");
    h5_edit bn = {.cfg_from = "\"class_name\": \"Activation\"",
                  .cfg_to = "\"class_name\": \"BatchNormalization\""};
    expect_fail("unknown layer kind", h5_variant(&bn), SLEAPC_ERR_FORMAT, "best_model.h5",
                "BatchNormalization");
    h5_edit act = {.cfg_from = "\"activation\": \"linear\"", .cfg_to = "\"activation\": \"relu\""};
    expect_fail("fused activation", h5_variant(&act), SLEAPC_ERR_FORMAT, "best_model.h5",
                "activation");
    h5_edit not_json = {.cfg_from = "{", .cfg_to = "["};
    expect_fail("model_config not JSON", h5_variant(&not_json), SLEAPC_ERR_FORMAT, "best_model.h5",
                "model_config");
}

static void check_json(void)
{
    static const struct {
        const char *what, *from, *to, *msg;
        sleapc_status want;
    } edits[] = {
        {"no model", "\"model\": {", "\"model_renamed\": {", "model: missing", SLEAPC_ERR_FORMAT},
        {"filters a string", "\"filters\": 8", "\"filters\": \"eight\"",
         "model.backbone.unet.filters", SLEAPC_ERR_FORMAT},
        {"fractional filters", "\"filters\": 8", "\"filters\": 8.5", "model.backbone.unet.filters",
         SLEAPC_ERR_FORMAT},
        {"max_stride not a power of 2", "\"max_stride\": 4", "\"max_stride\": 6", "max_stride",
         SLEAPC_ERR_FORMAT},
        {"input_scaling a string", "\"input_scaling\": 0.5", "\"input_scaling\": \"half\"",
         "data.preprocessing.input_scaling", SLEAPC_ERR_FORMAT},
        {"negative scale", "\"input_scaling\": 0.5", "\"input_scaling\": -0.5", "input_scaling",
         SLEAPC_ERR_FORMAT},
        {"part_names a number", "\"part_names\": [", "\"part_names\": 5, \"x\": [",
         "model.heads.single_instance.part_names", SLEAPC_ERR_FORMAT},
        {"heads a list", "\"heads\": {", "\"heads\": [], \"h\": {",
         "model.heads: expected an object", SLEAPC_ERR_FORMAT},
        {"unknown head type", "\"single_instance\": {", "\"multi_class_single\": {",
         "multi_class_single", SLEAPC_ERR_UNSUPPORTED},
        {"other backbone", "\"leap\": null", "\"leap\": {}", "leap", SLEAPC_ERR_UNSUPPORTED},
        {"skeleton links a string", "\"links\": [", "\"links\": \"x\", \"l\": [",
         "data.labels.skeletons[0].links: expected a list", SLEAPC_ERR_FORMAT},
        {"syntax error", "\"model\": {", "\"model\" {", "not valid JSON", SLEAPC_ERR_FORMAT},
        {"trailing garbage", "\n}", "\n}}", "not valid JSON", SLEAPC_ERR_FORMAT},
        /* Well-formed, but the weights are 8 filters wide. */
        {"config disagrees with weights", "\"filters\": 8", "\"filters\": 16", "best_model.h5",
         SLEAPC_ERR_FORMAT},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *j = replaced((const char *)json_text, json_len, edits[i].from, edits[i].to);
        if (!j)
            continue;
        /* The config errors name training_config.json; the last one the .h5. */
        const char *file =
            strcmp(edits[i].msg, "best_model.h5") == 0 ? "best_model.h5" : "training_config.json";
        expect_fail(edits[i].what, make_variant(j, strlen(j), h5_bytes, h5_len), edits[i].want,
                    file, edits[i].msg);
        free(j);
    }
    expect_fail("JSON list at the top", make_variant("[1, 2]", 6, h5_bytes, h5_len),
                SLEAPC_ERR_FORMAT, "training_config.json", "JSON object");
    expect_fail("empty JSON", make_variant("", 0, h5_bytes, h5_len), SLEAPC_ERR_FORMAT,
                "training_config.json", "not valid JSON");
    /* Deeper than any parser stack should go. */
    static char deep[100000];
    memset(deep, '[', sizeof deep);
    expect_fail("deep nesting", make_variant(deep, sizeof deep, h5_bytes, h5_len),
                SLEAPC_ERR_FORMAT, "training_config.json", "not valid JSON");
}

/* Layers a model type does not use are skipped with a log line. */
static char log_seen[4096];
static void capture(sleapc_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    if (strstr(msg, "OffsetRefinementHead"))
        snprintf(log_seen, sizeof log_seen, "%s", msg);
}

static void check_skipped_head(void)
{
    sleapc_log_set(capture, NULL);
    sleapc_model *m = NULL;
    CHECK_OK(sleapc_model_load(
        test_data_path("sleap-nn-assets/legacy_models/minimal_instance.UNet.centroid"), &m));
    sleapc_log_set(NULL, NULL);
    CHECK_MSG(strstr(log_seen, "skipped") != NULL, "no log line for OffsetRefinementHead: \"%s\"",
              log_seen);
    sleapc_model_destroy(m);
}

/* Every allocation of a full legacy load failing in turn: a clean
 * SLEAPC_ERR_NOMEM each time, and (sanitizer build) nothing leaks. */
static void check_alloc_failures(void)
{
    for (int64_t n = 1; n < 100000; n++) {
        sleapc_model *m = NULL;
        sleapc__alloc_fail_after(n);
        sleapc_status st = sleapc_model_load(src_dir, &m);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK) {
            CHECK(m != NULL);
            sleapc_model_destroy(m);
            CHECK(n > 10);
            return;
        }
        if (st != SLEAPC_ERR_NOMEM || m != NULL) {
            CHECK_MSG(false, "allocation %lld failing: %s (%s)", (long long)n,
                      sleapc_status_str(st), sleapc_last_error());
            return;
        }
    }
    CHECK_MSG(false, "the load never succeeded");
}

int main(void)
{
    test_require_data();
    snprintf(src_dir, sizeof src_dir, "%s",
             test_data_path("sleap-nn-assets/legacy_models/minimal_robot.UNet.single_instance"));
    char path[4200];
    snprintf(path, sizeof path, "%s/training_config.json", src_dir);
    json_text = test_read_file(path, &json_len);
    if (json_text) { /* NUL-terminated for the text edits */
        json_text = realloc(json_text, json_len + 1);
        json_text[json_len] = '\0';
    }
    snprintf(path, sizeof path, "%s/best_model.h5", src_dir);
    h5_bytes = test_read_file(path, &h5_len);
    CHECK(json_text && h5_bytes);
    if (!json_text || !h5_bytes)
        return test_finish();

    check_files();
    check_json();
    check_skipped_head();
    check_alloc_failures();

    free(json_text);
    free(h5_bytes);
    return test_finish();
}
