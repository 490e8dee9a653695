/* The tiling block of training_config.yaml: both tiled test models read with
 * every field as written; what sleapc does not tile is refused, naming the
 * file and the key, at every door (config reader, predictor, command line);
 * a tiled model never runs untiled.
 *
 * Variants are edits of the gray tiled model's config, written to a
 * temporary folder beside a link to its weights. The model types sleap-nn
 * itself refuses to tile are in sleap-nn-assets/tiled/refusals.json. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "io/config/model_config.h"
#include "pipeline/predictor_impl.h"
#include "test_util.h"

#define GRAY "sleap-nn-assets/tiled/tiled_unet_si_gray"
#define RGB "sleap-nn-assets/tiled/tiled_unet_si_rgb"

static char *base_text;

/* A whole file as a NUL-terminated string (free()), NULL when unreadable. */
static char *read_text(const char *path, size_t *size)
{
    size_t n = 0;
    unsigned char *raw = test_read_file(path, &n);
    char *s = raw ? malloc(n + 1) : NULL;
    if (s) {
        memcpy(s, raw, n);
        s[n] = '\0';
        *size = n;
    }
    free(raw);
    return s;
}

/* base_text with each (from, to) pair replaced once; NULL ends the list. */
static char *edited(const char *const *pairs)
{
    char *s = sleapc__strdup(base_text);
    for (int i = 0; s && pairs[i]; i += 2) {
        char *at = strstr(s, pairs[i]);
        CHECK_MSG(at != NULL, "edit: '%s' not in the config", pairs[i]);
        if (!at)
            break;
        size_t head = (size_t)(at - s), from = strlen(pairs[i]), to = strlen(pairs[i + 1]);
        char *n = sleapc__malloc(strlen(s) - from + to + 1);
        memcpy(n, s, head);
        memcpy(n + head, pairs[i + 1], to);
        strcpy(n + head + to, at + from);
        sleapc__free(s);
        s = n;
    }
    return s;
}

/* A model folder named name holding text as training_config.yaml and a
 * link to the gray model's weights. */
static const char *make_model(const char *name, const char *text)
{
    static char dir[1024];
    char path[1200], weights[1200];
    snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir(), name);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(path, sizeof path, "%s/training_config.yaml", dir);
    CHECK(test_write_file(path, text, strlen(text)));
    snprintf(path, sizeof path, "%s/best.ckpt", dir);
    snprintf(weights, sizeof weights, "%s/best.ckpt", test_data_path(GRAY));
    CHECK(symlink(weights, path) == 0);
    return dir;
}

static sleapc_status read_cfg(const char *dir, sleapc_model_config *c)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/training_config.yaml", dir);
    return sleapc__config_read_yaml(path, c);
}

/* The config reader refuses the edit with st and a message holding each of
 * the words. */
static void expect_refused(const char *name, const char *const *pairs, sleapc_status want,
                           const char *key, const char *words)
{
    char *text = edited(pairs);
    const char *dir = make_model(name, text);
    sleapc_model_config c;
    sleapc_status st = read_cfg(dir, &c);
    const char *msg = sleapc_last_error();
    CHECK_MSG(st == want && strstr(msg, dir) && strstr(msg, "training_config.yaml") &&
                  strstr(msg, key) && strstr(msg, words),
              "%s: status %s, message: %s", name, sleapc_status_str(st), msg);
    printf("%-28s %s\n", name, msg);
    sleapc__free(text);
}

static void check_values(void)
{
    sleapc_model_config c;
    CHECK_OK(sleapc__config_read_yaml(test_data_path(GRAY "/training_config.yaml"), &c));
    const sleapc_tiling_config *t = &c.tiling;
    CHECK(t->enabled && t->tile_size == 144 && t->overlap == 40);
    CHECK(t->min_overlap_fraction == 0.25 && t->blend == SLEAPC_TILE_BLEND_GAUSSIAN);
    CHECK(t->sigma_scale == 0.125 && t->tile_batch_size == 0);
    CHECK(strcmp(t->accumulator_device, "auto") == 0 && t->cpu_thresh == 0.4);
    CHECK(strcmp(t->sampling, "foreground") == 0 && t->tile_fg_fraction == 0.5);
    CHECK(t->samples_per_frame == 16 && t->center_jitter == 0.5);
    CHECK(t->min_visible_keypoints == 1 && t->steps_per_epoch == 0 && !t->full_frame_pass);
    sleapc__model_config_clear(&c);
    CHECK_OK(sleapc__config_read_yaml(test_data_path(RGB "/training_config.yaml"), &c));
    CHECK(c.tiling.enabled && c.tiling.tile_size == 96 && c.tiling.overlap == 24);
    CHECK(c.tiling.blend == SLEAPC_TILE_BLEND_PYRAMID && c.tiling.tile_batch_size == 3);
    CHECK(c.tiling.samples_per_frame == 8 && c.ensure_rgb && c.scale == 0.5);
    sleapc__model_config_clear(&c);
    /* A config without the block (sleap-nn before tiling): disabled. */
    CHECK_OK(sleapc__config_read_yaml(
        test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance/"
                       "training_config.yaml"),
        &c));
    CHECK(!c.tiling.enabled && c.tiling.tile_size == 0 && c.tiling.overlap == -1);
    sleapc__model_config_clear(&c);
}

/* Every other pose model type: sleap-nn's own check_tiling refuses bottomup
 * and centroid (refusals.json); the others have no tiled path either. */
static void check_model_types(void)
{
    size_t n = 0;
    char *text = read_text(test_data_path("sleap-nn-assets/tiled/refusals.json"), &n);
    cJSON *ref = text ? cJSON_ParseWithLength(text, n) : NULL;
    free(text);
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(ref, "result");
    CHECK(cJSON_GetObjectItemCaseSensitive(result, "bottomup") &&
          cJSON_GetObjectItemCaseSensitive(result, "centroid"));
    static const char *const types[] = {"centroid", "centered_instance", "bottomup",
                                        "multi_class_bottomup", "multi_class_topdown"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char from[64], to[128], name[64], words[96];
        snprintf(from, sizeof from, "    %s: null\n", types[i]);
        snprintf(to, sizeof to, "    single_instance: null\n    %s:\n      confmaps:", types[i]);
        const char *pairs[] = {from, "", "    single_instance:\n      confmaps:", to, NULL};
        snprintf(name, sizeof name, "type_%s", types[i]);
        snprintf(words, sizeof words, "model_type=%s", types[i]);
        expect_refused(name, pairs, SLEAPC_ERR_UNSUPPORTED,
                       "data_config.preprocessing.tiling.enabled", words);
    }
    cJSON_Delete(ref);
}

static void check_fields(void)
{
    static const struct {
        const char *name, *from, *to, *key, *words;
    } cases[] = {
        {"tile_null", "tile_size: 144", "tile_size: null", "tiling.tile_size", "must be set"},
        {"overlap_null", "overlap: 40", "overlap: null", "tiling.overlap", "must be set"},
        {"overlap_big", "overlap: 40", "overlap: 144", "tiling.overlap", "less than tile_size"},
        {"overlap_neg", "overlap: 40", "overlap: -8", "tiling.overlap", "0 or more"},
        {"tile_zero", "tile_size: 144", "tile_size: 0", "tiling.tile_size", "positive"},
        {"blend", "blend: gaussian", "blend: cosine", "tiling.blend", "'pyramid'"},
        {"sigma", "sigma_scale: 0.125", "sigma_scale: 0", "tiling.sigma_scale", "(0, 1]"},
        {"fraction", "min_overlap_fraction: 0.25", "min_overlap_fraction: 1.5",
         "tiling.min_overlap_fraction", "[0, 1]"},
        {"batch", "tile_batch_size: null", "tile_batch_size: 0", "tiling.tile_batch_size",
         "positive"},
        {"device", "accumulator_device: auto", "accumulator_device: gpu",
         "tiling.accumulator_device", "'cuda'"},
        {"cpu_thresh", "cpu_thresh: 0.4", "cpu_thresh: 2", "tiling.cpu_thresh", "[0, 1]"},
        {"sampling", "sampling: foreground", "sampling: random", "tiling.sampling", "'grid'"},
        {"fg_fraction", "tile_fg_fraction: 0.5", "tile_fg_fraction: 1.0", "tiling.tile_fg_fraction",
         "[0, 1)"},
        {"jitter", "center_jitter: 0.5", "center_jitter: -0.1", "tiling.center_jitter", "[0, 1]"},
        {"visible", "min_visible_keypoints: 1", "min_visible_keypoints: -1",
         "tiling.min_visible_keypoints", "0 or more"},
        {"samples", "samples_per_frame: 16", "samples_per_frame: 0", "tiling.samples_per_frame",
         "positive"},
        {"steps", "steps_per_epoch: null", "steps_per_epoch: -3", "tiling.steps_per_epoch",
         "positive"},
        {"enabled_text", "enabled: true", "enabled: maybe", "tiling.enabled", "true or false"},
        {"ffp", "full_frame_pass: false", "full_frame_pass: 3", "tiling.full_frame_pass",
         "true or false"},
        {"tile_text", "tile_size: 144", "tile_size: big", "tiling.tile_size", "integer"},
        {"not_map", "    tiling:\n      enabled: true\n",
         "    tiling: [1, 2]\n    old:\n      enabled: true\n", "preprocessing.tiling",
         "expected a mapping"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *pairs[] = {cases[i].from, cases[i].to, NULL};
        expect_refused(cases[i].name, pairs, SLEAPC_ERR_FORMAT, cases[i].key, cases[i].words);
    }
}

static sleapc_predictor_opts opts(void)
{
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.n_threads = 2;
    o.backend = "native";
    return o;
}

/* A tile that is not a multiple of lcm(max_stride, output_stride) (sleap-nn's
 * training rounds it up) is refused by the predictor and the command line;
 * with tiling disabled the same model runs untiled. */
static void check_predictor(void)
{
    const char *pairs[] = {"tile_size: 144", "tile_size: 100", NULL};
    char *text = edited(pairs);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", make_model("tile_100", text));
    sleapc__free(text);
    sleapc_predictor_opts o = opts();
    const char *paths[1] = {dir};
    sleapc_predictor *p = NULL;
    sleapc_status st = sleapc_predictor_create(paths, 1, &o, &p);
    CHECK_MSG(st == SLEAPC_ERR_UNSUPPORTED && p == NULL &&
                  strstr(sleapc_last_error(), "training_config.yaml") &&
                  strstr(sleapc_last_error(), "tiling.tile_size: 100 is not a multiple of "
                                              "lcm(max_stride 16, output_stride 2) = 16"),
              "tile 100: %s", sleapc_last_error());
    sleapc_predictor_destroy(p);

    char args[4096];
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/never.json' --backend native", dir,
             test_data_path("reference-tiled/tiled_single_instance__centered_pair_f0000/frame.npy"),
             test_tmp_dir());
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 1 && strstr(test_cli_output(), "sleapc: error: ") &&
                  strstr(test_cli_output(), "tiling.tile_size"),
              "CLI: exit %d: %s", rc, test_cli_output());
    char out[1200];
    snprintf(out, sizeof out, "%s/never.json", test_tmp_dir());
    CHECK(access(out, F_OK) != 0);

    /* Disabled: the plain single-instance layer, size matcher included. */
    const char *off[] = {"enabled: true", "enabled: false", NULL};
    text = edited(off);
    snprintf(dir, sizeof dir, "%s", make_model("disabled", text));
    sleapc__free(text);
    CHECK_OK(sleapc_predictor_create(paths, 1, &o, &p));
    CHECK(p && strcmp(p->layer->ops->name, "SingleInstanceLayer") == 0);
    sleapc_predictor_destroy(p);

    /* The tiled model paired with another: refused, not run untiled. */
    char pair[1024];
    snprintf(pair, sizeof pair, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    const char *two[2] = {test_data_path(GRAY), pair};
    char gray[1024];
    snprintf(gray, sizeof gray, "%s", two[0]);
    two[0] = gray;
    p = NULL;
    st = sleapc_predictor_create(two, 2, &o, &p);
    CHECK_MSG(st != SLEAPC_OK && p == NULL && strstr(sleapc_last_error(), "tiling.enabled"),
              "pair: %s", sleapc_last_error());
    sleapc_predictor_destroy(p);
}

/* sleap-nn refuses exported tiled models (its predictor's
 * _build_tiled_layer): an export folder whose config enables tiling. */
static void check_export(void)
{
    const char *src = test_data_path("onnx/single_instance");
    char src_dir[1024], dir[1200], a[1400], b[1400];
    snprintf(src_dir, sizeof src_dir, "%s", src);
    snprintf(dir, sizeof dir, "%s/export", test_tmp_dir());
    CHECK(mkdir(dir, 0755) == 0);
    static const char *const files[] = {"model.onnx", "export_metadata.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(a, sizeof a, "%s/%s", src_dir, files[i]);
        snprintf(b, sizeof b, "%s/%s", dir, files[i]);
        CHECK(symlink(a, b) == 0);
    }
    snprintf(a, sizeof a, "%s/training_config.yaml", src_dir);
    size_t n = 0;
    char *yaml = read_text(a, &n);
    char *at = yaml ? strstr(yaml, "  preprocessing:\n") : NULL;
    CHECK(at != NULL);
    if (!at) {
        free(yaml);
        return;
    }
    const char *block =
        "    tiling:\n      enabled: true\n      tile_size: 96\n      overlap: 24\n";
    size_t head = (size_t)(at - yaml) + strlen("  preprocessing:\n");
    char *text = sleapc__malloc(n + strlen(block) + 1);
    memcpy(text, yaml, head);
    strcpy(text + head, block);
    memcpy(text + head + strlen(block), yaml + head, n - head);
    text[n + strlen(block)] = '\0';
    snprintf(b, sizeof b, "%s/training_config.yaml", dir);
    CHECK(test_write_file(b, text, strlen(text)));
    sleapc__free(text);
    free(yaml);
    sleapc_predictor_opts o = opts();
    const char *paths[1] = {dir};
    sleapc_predictor *p = NULL;
    sleapc_status st = sleapc_predictor_create(paths, 1, &o, &p);
    CHECK_MSG(st == SLEAPC_ERR_UNSUPPORTED && p == NULL &&
                  strstr(sleapc_last_error(), "tiling.enabled") &&
                  strstr(sleapc_last_error(), "exported"),
              "export: %s", sleapc_last_error());
    sleapc_predictor_destroy(p);
}

int main(void)
{
    test_require_data();
    size_t n = 0;
    base_text = read_text(test_data_path(GRAY "/training_config.yaml"), &n);
    CHECK(base_text != NULL);
    if (!base_text)
        return test_finish();
    check_values();
    check_model_types();
    check_fields();
    check_predictor();
    check_export();
    free(base_text);
    return test_finish();
}
