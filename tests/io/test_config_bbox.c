/* The box detectors' configs (sleap-nn 0.3.5 bbox_centernet / bbox_ssd):
 * the trained models' training_config.yaml read field by field, their heads,
 * and edits of them that must fail with the file and the key named (a null
 * anchor_sizes, strides that disagree, a missing leaf) or, with the
 * checkpoint, with the tensor named (a config that no longer fits the
 * weights). The predictor refuses them cleanly for now. */
#include <stdlib.h>
#include <string.h>

#include "io/config/model_config.h"
#include "io/config/model_heads.h"
#include "model/model_impl.h"
#include "sleapc/predictor.h"
#include "test_util.h"

#define MODELS SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families/models"

static char *read_text(const char *path)
{
    size_t n = 0;
    unsigned char *t = test_read_file(path, &n);
    char *s = t ? realloc(t, n + 1) : NULL;
    if (s)
        s[n] = '\0';
    else
        free(t);
    return s;
}

/* text with the first `from` replaced by `to` (caller frees); NULL when
 * `from` is absent. */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    CHECK_MSG(at != NULL, "'%s' not in the config", from);
    if (!at)
        return NULL;
    size_t pre = (size_t)(at - text), nf = strlen(from), nt = strlen(to);
    char *out = malloc(strlen(text) - nf + nt + 1);
    if (!out)
        return NULL;
    memcpy(out, text, pre);
    memcpy(out + pre, to, nt);
    strcpy(out + pre + nt, at + nf);
    return out;
}

/* A model folder in the temporary dir: the edited config and, when ckpt
 * is given, a copy of that checkpoint. Returns the folder. */
static const char *make_model(const char *name, const char *yaml, const char *ckpt)
{
    static char dir[1024];
    char path[1200];
    snprintf(dir, sizeof dir, "%s", test_tmp_path(name));
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/training_config.yaml", dir);
    CHECK(test_write_file(path, yaml, strlen(yaml)));
    if (ckpt) {
        size_t n = 0;
        unsigned char *bytes = test_read_file(ckpt, &n);
        CHECK(bytes != NULL);
        snprintf(path, sizeof path, "%s/best.ckpt", dir);
        CHECK(bytes && test_write_file(path, bytes, n));
        free(bytes);
    }
    return dir;
}

static void test_centernet(void)
{
    sleapc_model_config c;
    CHECK_OK(sleapc__config_read_yaml(MODELS "/bbox_centernet/training_config.yaml", &c));
    CHECK(c.model_type == SLEAPC_MODEL_TYPE_BBOX_CENTERNET);
    CHECK(c.bbox.stride == 4 && c.bbox.n_categories == 1 &&
          strcmp(c.bbox.categories[0], "object") == 0);
    CHECK(c.max_height == 384 && c.max_width == 384 && c.scale == 1.0);
    sleapc_head_spec h[SLEAPC_MAX_HEADS];
    CHECK(sleapc__heads_for_config(&c, h) == 3);
    CHECK(strcmp(h[0].name, "BBoxCenterHead") == 0 && h[0].channels == 1 && h[0].stride == 4 &&
          h[0].act == SLEAPC_ACT_SIGMOID);
    CHECK(strcmp(h[1].name, "BBoxSizeHead") == 0 && h[1].channels == 2 && h[1].stride == 4);
    CHECK(strcmp(h[2].name, "BBoxOffsetHead") == 0 && h[2].channels == 2 && h[2].stride == 4);
    CHECK(strcmp(sleapc_model_type_name(c.model_type), "bbox_centernet") == 0);
    sleapc__model_config_clear(&c);
}

static void test_ssd(void)
{
    sleapc_model_config c;
    CHECK_OK(sleapc__config_read_yaml(MODELS "/bbox_ssd/training_config.yaml", &c));
    const sleapc_bbox_config *b = &c.bbox;
    CHECK(c.model_type == SLEAPC_MODEL_TYPE_BBOX_SSD);
    CHECK(b->stride == 8 && b->ssd_levels == 3 && b->n_anchor_sizes == 3 &&
          b->anchor_sizes[0] == 34.43800411775648 && b->anchor_sizes[2] == 50.52966940185265);
    CHECK(b->n_anchor_scales == 3 && b->anchor_scales[2] == 1.587 && b->n_aspect_ratios == 3 &&
          b->aspect_ratios[0] == 0.5 && b->box_variances[0] == 0.1 && b->box_variances[3] == 0.2);
    CHECK(b->head_channels == 16 && b->head_convs == 1 && b->n_categories == 1);
    sleapc_head_spec h[SLEAPC_MAX_HEADS];
    CHECK(sleapc__heads_for_config(&c, h) == 6);
    CHECK(strcmp(h[0].name, "SSDHead.cls.0") == 0 && h[0].channels == 18 && h[0].stride == 8 &&
          h[0].kind == SLEAPC_HEAD_SSD_CLS && h[0].level == 0);
    CHECK(strcmp(h[5].name, "SSDHead.box.2") == 0 && h[5].channels == 36 && h[5].stride == 32 &&
          h[5].kind == SLEAPC_HEAD_SSD_BOX && h[5].level == 2);
    CHECK(sleapc__model_type_from_name("bbox_ssd") == SLEAPC_MODEL_TYPE_BBOX_SSD);
    sleapc__model_config_clear(&c);
}

/* yaml (an edit of a trained config) fails to read, naming the file and key. */
static void expect_config_fail(const char *name, const char *yaml, sleapc_status want,
                               const char *key)
{
    if (!yaml)
        return;
    const char *dir = make_model(name, yaml, NULL);
    char path[1200];
    snprintf(path, sizeof path, "%s/training_config.yaml", dir);
    sleapc_model_config c;
    sleapc_status st = sleapc__config_read_yaml(path, &c);
    const char *msg = sleapc_last_error();
    CHECK_MSG(st == want, "%s: got %s (%s)", name, sleapc_status_str(st), msg);
    CHECK_MSG(strstr(msg, path) && strstr(msg, key), "%s: lacks the path or '%s': %s", name, key,
              msg);
    CHECK(c.source_path == NULL && c.bbox.categories == NULL);
}

static void test_config_errors(void)
{
    char *ssd = read_text(MODELS "/bbox_ssd/training_config.yaml");
    char *cn = read_text(MODELS "/bbox_centernet/training_config.yaml");
    CHECK(ssd && cn);
    if (!ssd || !cn) {
        free(ssd);
        free(cn);
        return;
    }
    char *e = replace(ssd, "anchor_sizes:\n", "anchor_sizes: null\n        sizes_were:\n");
    expect_config_fail("ssd_null_anchors", e, SLEAPC_ERR_FORMAT, "ssd.anchor_sizes: null");
    free(e);
    e = replace(ssd, "        - 50.52966940185265\n", "");
    expect_config_fail("ssd_two_anchors", e, SLEAPC_ERR_FORMAT, "ssd.anchor_sizes");
    free(e);
    e = replace(ssd, "num_levels: 3", "num_levels: 9");
    expect_config_fail("ssd_nine_levels", e, SLEAPC_ERR_UNSUPPORTED, "num_levels 9");
    free(e);
    e = replace(ssd, "- 0.1\n        - 0.1\n        - 0.2\n        - 0.2\n", "- 0.1\n");
    expect_config_fail("ssd_variances", e, SLEAPC_ERR_FORMAT, "ssd.box_variances");
    free(e);
    e = replace(ssd, "head_convs: 1", "head_convs: -1");
    expect_config_fail("ssd_head_convs", e, SLEAPC_ERR_FORMAT, "ssd.head_convs");
    free(e);
    e = replace(cn, "      size:\n        output_stride: 4", "      size:\n        output_stride: 8");
    expect_config_fail("centernet_strides", e, SLEAPC_ERR_FORMAT, "size.output_stride");
    free(e);
    e = replace(cn, "      offset:\n        output_stride: 4\n        loss_weight: 1.0\n",
                "      offset: null\n");
    expect_config_fail("centernet_no_offset", e, SLEAPC_ERR_FORMAT, "bbox_centernet.offset");
    free(e);
    /* categories: null is sleap-nn's ["object"]. */
    e = replace(cn, "categories:\n        - object\n", "categories: null\n");
    if (e) {
        const char *dir = make_model("centernet_null_categories", e, NULL);
        char path[1200];
        snprintf(path, sizeof path, "%s/training_config.yaml", dir);
        sleapc_model_config c;
        CHECK_OK(sleapc__config_read_yaml(path, &c));
        CHECK(c.bbox.n_categories == 1 && strcmp(c.bbox.categories[0], "object") == 0);
        sleapc__model_config_clear(&c);
    }
    free(e);
    free(ssd);
    free(cn);
}

/* A config that no longer fits the checkpoint: the tensor and both shapes. */
static void expect_load_fail(const char *name, const char *family, const char *from,
                             const char *to, const char *tensor)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/training_config.yaml", MODELS, family);
    char *yaml = read_text(path);
    char *e = yaml ? replace(yaml, from, to) : NULL;
    free(yaml);
    if (!e)
        return;
    snprintf(path, sizeof path, "%s/%s/best.ckpt", MODELS, family);
    const char *dir = make_model(name, e, path);
    free(e);
    sleapc_model *m = NULL;
    sleapc_status st = sleapc__model_load(dir, &m);
    const char *msg = sleapc_last_error();
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && m == NULL, "%s: got %s", name, sleapc_status_str(st));
    CHECK_MSG(strstr(msg, "best.ckpt") && strstr(msg, tensor), "%s: lacks '%s': %s", name,
              tensor, msg);
    sleapc__model_destroy(m);
}

static void test_weight_errors(void)
{
    expect_load_fail("ssd_width", "bbox_ssd", "head_channels: 16", "head_channels: 12",
                     "model.head_layers.0.towers.0.0.weight");
    expect_load_fail("ssd_no_tower", "bbox_ssd", "head_convs: 1", "head_convs: 0",
                     "model.head_layers.0.cls_preds.0.weight");
    expect_load_fail("ssd_ratios", "bbox_ssd", "        - 0.5\n        - 1.0\n        - 2.0\n",
                     "        - 1.0\n", "model.head_layers.0.cls_preds.0.weight");
    expect_load_fail("centernet_two_categories", "bbox_centernet", "- object\n",
                     "- object\n        - other\n", "BBoxCenterHead.0.weight");
}

/* Both load into a predictor (their boxes: test_cli_predict_bbox). */
static void test_predictor_creates(void)
{
    const char *paths[2] = {MODELS "/bbox_centernet", MODELS "/bbox_ssd"};
    for (int i = 0; i < 2; i++) {
        sleapc_predictor_opts o = sleapc_predictor_opts_default();
        o.backend = "native";
        sleapc_predictor *p = NULL;
        sleapc_status st = sleapc_predictor_create(&paths[i], 1, &o, &p);
        CHECK_MSG(st == SLEAPC_OK && p != NULL, "%s: %s", paths[i], sleapc_last_error());
        sleapc_predictor_destroy(p);
    }
}

int main(void)
{
    test_centernet();
    test_ssd();
    test_config_errors();
    test_weight_errors();
    test_predictor_creates();
    return test_finish();
}
