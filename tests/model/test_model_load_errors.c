/* Model loading: a real folder loads and describes itself; every kind of
 * broken folder gets a clear error naming the file, never a crash. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "model/model_impl.h"
#include "sleapc/model.h"
#include "test_util.h"

static const char *src_dir;  /* the single-instance model folder */
static unsigned char *yaml_text, *ckpt_bytes;
static size_t yaml_len, ckpt_len;
static int n_variants;

/* A fresh model folder in the temp dir with the given file contents. */
static const char *make_variant(const void *yaml, size_t ylen, const void *ckpt, size_t clen)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/variant%d", test_tmp_dir(), n_variants++);
    mkdir(dir, 0777);
    char path[1200];
    if (yaml) {
        snprintf(path, sizeof path, "%s/training_config.yaml", dir);
        test_write_file(path, yaml, ylen);
    }
    if (ckpt) {
        snprintf(path, sizeof path, "%s/best.ckpt", dir);
        test_write_file(path, ckpt, clen);
    }
    return dir;
}

/* yaml_text with the first occurrence of `from` replaced by `to`. */
static char *yaml_with(const char *from, const char *to)
{
    const char *at = strstr((const char *)yaml_text, from);
    CHECK_MSG(at != NULL, "\"%s\" not in the config", from);
    if (!at)
        return NULL;
    size_t pre = (size_t)(at - (const char *)yaml_text);
    size_t n = yaml_len - strlen(from) + strlen(to);
    char *s = malloc(n + 1);
    memcpy(s, yaml_text, pre);
    memcpy(s + pre, to, strlen(to));
    memcpy(s + pre + strlen(to), at + strlen(from), yaml_len - pre - strlen(from));
    s[n] = '\0';
    return s;
}

static void expect_fail(const char *what, const char *dir, sleapc_status want,
                        const char *msg_part)
{
    sleapc_model *m = (sleapc_model *)1;
    sleapc_status st = sleapc_model_load(dir, &m);
    CHECK_MSG(st == want, "%s: status %s, want %s (%s)", what, sleapc_status_str(st),
              sleapc_status_str(want), sleapc_last_error());
    CHECK(m == NULL);
    CHECK_MSG(strstr(sleapc_last_error(), msg_part) != NULL, "%s: message \"%s\" lacks \"%s\"",
              what, sleapc_last_error(), msg_part);
    if (st == SLEAPC_OK)
        sleapc_model_destroy(m);
}

static void check_good_model(void)
{
    sleapc_model *m = NULL;
    CHECK_OK(sleapc_model_load(src_dir, &m));
    if (!m)
        return;
    /* Facts of this model's training_config.yaml (formats.md A.2, A.6). */
    CHECK(sleapc_model_get_type(m) == SLEAPC_MODEL_TYPE_SINGLE_INSTANCE);
    CHECK(sleapc_model_in_channels(m) == 3);
    CHECK(sleapc_model_max_stride(m) == 4);
    sleapc_skeleton sk = {0};
    CHECK_OK(sleapc_model_skeleton(m, &sk));
    CHECK(sk.n_nodes == 2 && strcmp(sk.node_names[0], "A") == 0);
    CHECK(sleapc_model_n_heads(m) == 1);
    sleapc_head_info h = sleapc_model_head(m, 0);
    CHECK(h.name && strcmp(h.name, "SingleInstanceConfmapsHead") == 0 && h.channels == 2 &&
          h.stride == 4);
    CHECK(sleapc_model_param_count(m) == 18250);
    CHECK(sleapc_model_gflops(m, 64, 64) > 0.0);
    sleapc_model_destroy(m);

    /* The folder may also be named through a file inside it. */
    char path[1024];
    snprintf(path, sizeof path, "%s/best.ckpt", src_dir);
    CHECK_OK(sleapc_model_load(path, &m));
    sleapc_model_destroy(m);
}

static void check_broken_folders(void)
{
    char missing[1024];
    snprintf(missing, sizeof missing, "%s/does-not-exist", test_tmp_dir());
    expect_fail("missing path", missing, SLEAPC_ERR_IO, "does-not-exist");
    expect_fail("empty folder", make_variant(NULL, 0, NULL, 0), SLEAPC_ERR_IO,
                "training_config.yaml");
    expect_fail("no checkpoint", make_variant(yaml_text, yaml_len, NULL, 0), SLEAPC_ERR_IO,
                "best.ckpt");
    expect_fail("empty checkpoint", make_variant(yaml_text, yaml_len, "", 0), SLEAPC_ERR_FORMAT,
                "best.ckpt");
    expect_fail("truncated checkpoint", make_variant(yaml_text, yaml_len, ckpt_bytes, ckpt_len / 2),
                SLEAPC_ERR_FORMAT, "best.ckpt");
    expect_fail("empty config", make_variant("", 0, ckpt_bytes, ckpt_len), SLEAPC_ERR_FORMAT,
                "training_config.yaml");

    /* A directory where the checkpoint should be. */
    const char *dir = make_variant(yaml_text, yaml_len, NULL, 0);
    char sub[1200];
    snprintf(sub, sizeof sub, "%s/best.ckpt", dir);
    mkdir(sub, 0777);
    expect_fail("checkpoint is a folder", dir, SLEAPC_ERR_IO, "best.ckpt");

    /* Configs that disagree with the weights or are incomplete. */
    struct {
        const char *what, *from, *to, *msg;
        sleapc_status want;
    } edits[] = {
        {"filters disagree", "filters: 8", "filters: 16", "config expects", SLEAPC_ERR_FORMAT},
        {"filters_rate disagrees", "filters_rate: 2.0", "filters_rate: 1.5", "config expects",
         SLEAPC_ERR_FORMAT},
        {"in_channels disagree", "in_channels: 3", "in_channels: 1", "config expects",
         SLEAPC_ERR_FORMAT},
        {"extra part", "        - B\n", "        - B\n        - C\n", "config expects",
         SLEAPC_ERR_FORMAT},
        {"max_stride deeper", "max_stride: 4", "max_stride: 8", "missing tensor",
         SLEAPC_ERR_FORMAT},
        {"kernel size", "kernel_size: 3", "kernel_size: 5", "config expects", SLEAPC_ERR_FORMAT},
        {"no head configs", "  head_configs:", "  head_configs_renamed:", "head_configs",
         SLEAPC_ERR_FORMAT},
        {"unknown backbone", "    unet:\n", "    unet: null\n    resnet:\n", "backbone",
         SLEAPC_ERR_UNSUPPORTED},
        {"bad number", "filters: 8", "filters: eight", "filters", SLEAPC_ERR_FORMAT},
        {"yaml syntax", "  head_configs:", "  head_configs: [", "training_config.yaml",
         SLEAPC_ERR_FORMAT},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *y = yaml_with(edits[i].from, edits[i].to);
        if (!y)
            continue;
        expect_fail(edits[i].what, make_variant(y, strlen(y), ckpt_bytes, ckpt_len), edits[i].want,
                    edits[i].msg);
        free(y);
    }

    /* A legacy SLEAP folder without its weights is recognised as one. */
    dir = make_variant(NULL, 0, NULL, 0);
    snprintf(sub, sizeof sub, "%s/training_config.json", dir);
    test_write_file(sub, "{}", 2);
    expect_fail("legacy folder without weights", dir, SLEAPC_ERR_IO, "best_model.h5");
}

/* Make `dir` (a model folder of the data) the base the edits apply to. */
static bool use_base(const char *rel)
{
    free(yaml_text);
    free(ckpt_bytes);
    char path[1200];
    snprintf(path, sizeof path, "%s/training_config.yaml", test_data_path(rel));
    yaml_text = test_read_file(path, &yaml_len);
    snprintf(path, sizeof path, "%s/best.ckpt", test_data_path(rel));
    ckpt_bytes = test_read_file(path, &ckpt_len);
    CHECK(yaml_text && ckpt_bytes);
    if (!yaml_text || !ckpt_bytes)
        return false;
    yaml_text = realloc(yaml_text, yaml_len + 1);
    yaml_text[yaml_len] = '\0';
    return true;
}

typedef struct config_edit {
    const char *what, *from, *to, *msg;
    sleapc_status want;
} config_edit;

static void expect_edits_fail(const config_edit *edits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *y = yaml_with(edits[i].from, edits[i].to);
        if (!y)
            continue;
        const char *dir = make_variant(y, strlen(y), ckpt_bytes, ckpt_len);
        expect_fail(edits[i].what, dir, edits[i].want, edits[i].msg);
        /* Every message names the config file or the checkpoint. */
        CHECK_MSG(strstr(sleapc_last_error(), dir) != NULL, "%s: \"%s\" names no file",
                  edits[i].what, sleapc_last_error());
        free(y);
    }
}

/* ConvNeXt and SwinT configs that are corrupt or disagree with the weights
 * (the models of sleap-nn-assets/backbones, README there). */
static void check_vit_configs(void)
{
    static const config_edit convnext[] = {
        /* A preset model_type wins over arch (convnext.py), so the tiny
         * network is expected and the small checkpoint does not fit. */
        {"preset over arch", "model_type: custom", "model_type: tiny", "config expects",
         SLEAPC_ERR_FORMAT},
        {"three stages", "        - 2\n        - 1\n", "        - 2\n", "stages",
         SLEAPC_ERR_FORMAT},
        {"channels disagree", "        - 48\n", "        - 40\n", "config expects",
         SLEAPC_ERR_FORMAT},
        {"depth disagrees", "        - 2\n        - 1\n", "        - 1\n        - 1\n",
         "is not part of the network", SLEAPC_ERR_FORMAT},
        {"zero depth", "        - 2\n        - 1\n", "        - 0\n        - 1\n",
         "arch.depths[2]", SLEAPC_ERR_FORMAT},
        {"channels not a list", "        channels:\n        - 16\n        - 24\n        - 32\n        - 48\n",
         "        channels: 16\n", "arch.channels", SLEAPC_ERR_FORMAT},
        {"arch not a mapping", "      arch:\n", "      arch: 5\n      arch_was:\n", "arch",
         SLEAPC_ERR_FORMAT},
        {"stem stride", "stem_patch_stride: 2", "stem_patch_stride: 3", "stem_patch_stride",
         SLEAPC_ERR_FORMAT},
        {"stem kernel", "stem_patch_kernel: 4", "stem_patch_kernel: 3", "config expects",
         SLEAPC_ERR_FORMAT},
        {"filters_rate text", "filters_rate: 2.0", "filters_rate: two", "filters_rate",
         SLEAPC_ERR_FORMAT},
        {"filters_rate disagrees", "filters_rate: 2.0", "filters_rate: 1.5", "config expects",
         SLEAPC_ERR_FORMAT},
        {"in_channels disagree", "in_channels: 1", "in_channels: 3", "config expects",
         SLEAPC_ERR_FORMAT},
        {"kernel_size disagrees", "kernel_size: 3", "kernel_size: 5", "config expects",
         SLEAPC_ERR_FORMAT},
        {"up_interpolate disagrees", "up_interpolate: true", "up_interpolate: false",
         "missing tensor", SLEAPC_ERR_FORMAT},
        {"output_stride deeper", "output_stride: 2\n      max_stride: 32", "output_stride: 1\n      max_stride: 32",
         "missing tensor", SLEAPC_ERR_FORMAT},
        {"output_stride above the network", "output_stride: 2\n      max_stride: 32",
         "output_stride: 64\n      max_stride: 32", "output_stride", SLEAPC_ERR_FORMAT},
        {"convs_per_block disagrees", "convs_per_block: 2", "convs_per_block: 3",
         "missing tensor", SLEAPC_ERR_FORMAT},
    };
    static const config_edit swint[] = {
        {"swint preset over arch", "model_type: custom", "model_type: tiny", "config expects",
         SLEAPC_ERR_FORMAT},
        {"window size disagrees", "window_size: 7", "window_size: 8", "relative_position",
         SLEAPC_ERR_FORMAT},
        {"heads disagree", "        - 1\n        - 2\n        - 4\n        - 4\n",
         "        - 2\n        - 2\n        - 4\n        - 4\n", "config expects",
         SLEAPC_ERR_FORMAT},
        {"heads do not divide", "        - 1\n        - 2\n        - 4\n        - 4\n",
         "        - 3\n        - 2\n        - 4\n        - 4\n", "do not divide",
         SLEAPC_ERR_FORMAT},
        {"embed disagrees", "embed: 8", "embed: 16", "config expects", SLEAPC_ERR_FORMAT},
        {"embed missing", "embed: 8", "embed_dim: 8", "embed", SLEAPC_ERR_FORMAT},
        {"patch size disagrees", "patch_size: 4", "patch_size: 2", "config expects",
         SLEAPC_ERR_FORMAT},
        {"window size zero", "window_size: 7", "window_size: 0", "window_size",
         SLEAPC_ERR_FORMAT},
    };
    if (use_base("sleap-nn-assets/backbones/convnext_bottomup"))
        expect_edits_fail(convnext, sizeof convnext / sizeof convnext[0]);
    if (use_base("sleap-nn-assets/backbones/swint_centroid"))
        expect_edits_fail(swint, sizeof swint / sizeof swint[0]);
    sleapc_model *m = NULL;
    CHECK_OK(sleapc_model_load(test_data_path("sleap-nn-assets/backbones/swint_centroid"), &m));
    if (m) {
        CHECK(strcmp(sleapc_model_backbone_name(m), "swint") == 0);
        CHECK(sleapc_model_in_channels(m) == 1 && sleapc_model_max_stride(m) == 32);
        sleapc_model_destroy(m);
    }
}

/* Every allocation of a full load failing in turn: a clean error each time
 * (the sanitizer build checks nothing leaks). */
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
            CHECK_MSG(0, "allocation %lld failing gave %s: %s", (long long)n,
                      sleapc_status_str(st), sleapc_last_error());
            return;
        }
    }
    CHECK_MSG(0, "load never succeeded");
}

int main(void)
{
    test_require_data();
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    src_dir = dir;
    char path[1200];
    snprintf(path, sizeof path, "%s/training_config.yaml", src_dir);
    yaml_text = test_read_file(path, &yaml_len);
    snprintf(path, sizeof path, "%s/best.ckpt", src_dir);
    ckpt_bytes = test_read_file(path, &ckpt_len);
    CHECK(yaml_text && ckpt_bytes);
    if (!yaml_text || !ckpt_bytes)
        return test_finish();
    /* NUL-terminate the config text for strstr. */
    yaml_text = realloc(yaml_text, yaml_len + 1);
    yaml_text[yaml_len] = '\0';

    check_good_model();
    check_broken_folders();
    check_alloc_failures();
    check_vit_configs();
    free(yaml_text);
    free(ckpt_bytes);
    return test_finish();
}
