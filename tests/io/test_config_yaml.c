/* training_config.yaml reader: every real config parses, values match the
 * files, and every kind of bad file fails cleanly with file and key named. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/config/model_config.h"
#include "io/config/model_heads.h"
#include "test_util.h"

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static bool names_are(char **names, int n, const char *a, const char *b)
{
    return n == 2 && names && str_eq(names[0], a) && str_eq(names[1], b);
}

/* Facts written in the test models' training_config.yaml files (see the
 * spec's table of test model values). */
static void check_model_values(const char *dir_name, const sleapc_model_config *c)
{
    /* Every test model was trained on the same two-node skeleton A -> B. */
    CHECK(str_eq(c->skeleton.name, "Skeleton-0"));
    CHECK(names_are(c->skeleton.node_names, c->skeleton.n_nodes, "A", "B"));
    CHECK(c->skeleton.n_edges == 1 && c->skeleton.edges[0][0] == 0 && c->skeleton.edges[0][1] == 1);
    CHECK(c->skeleton.n_symmetries == 0);
    CHECK(c->backbone_type == SLEAPC_BACKBONE_UNET && str_eq(c->backbone_name, "unet"));
    CHECK(c->unet.kernel_size == 3 && c->unet.stacks == 1 && c->unet.convs_per_block == 2);
    CHECK(c->unet.middle_block && c->unet.stem_stride == 0);
    CHECK(!c->ensure_rgb && !c->ensure_grayscale);

    if (strcmp(dir_name, "minimal_instance_centroid") == 0) {
        CHECK(c->model_type == SLEAPC_MODEL_TYPE_CENTROID);
        CHECK(c->unet.in_channels == 1 && c->unet.filters == 16);
        CHECK(c->unet.filters_rate == 1.5 && c->unet.max_stride == 8);
        CHECK(c->unet.output_stride == 4 && !c->unet.up_interpolate);
        CHECK(c->n_part_names == 1 && c->anchor_part == NULL);
        CHECK(c->confmaps_sigma == 1.5 && c->confmaps_stride == 4);
        CHECK(c->max_height == 384 && c->max_width == 384 && c->scale == 1.0);
        CHECK(c->crop_size == 0);
    } else if (strcmp(dir_name, "minimal_instance_centered_instance") == 0) {
        CHECK(c->model_type == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE);
        CHECK(c->crop_size == 96);
        CHECK(names_are(c->part_names, c->n_part_names, "A", "B"));
        CHECK(c->anchor_part == NULL && c->confmaps_stride == 2);
        CHECK(c->unet.filters == 16 && c->unet.max_stride == 8 && c->unet.output_stride == 2);
    } else if (strcmp(dir_name, "minimal_instance_bottomup") == 0) {
        CHECK(c->model_type == SLEAPC_MODEL_TYPE_BOTTOMUP);
        CHECK(names_are(c->part_names, c->n_part_names, "A", "B"));
        CHECK(c->confmaps_stride == 2 && c->confmaps_sigma == 1.5);
        CHECK(c->n_paf_edges == 1 && c->paf_edges[0][0] == 0 && c->paf_edges[0][1] == 1);
        CHECK(c->pafs_stride == 4 && c->pafs_sigma == 50.0);
    } else if (strcmp(dir_name, "minimal_instance_multiclass_bottomup") == 0) {
        CHECK(c->model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP);
        /* Channel names differ from the skeleton's node names in this file. */
        CHECK(names_are(c->part_names, c->n_part_names, "head", "thorax"));
        CHECK(names_are(c->classes, c->n_classes, "female", "male"));
        CHECK(c->class_maps_stride == 2 && c->confmaps_stride == 2);
        CHECK(c->scale == 0.5);
        CHECK(c->unet.filters == 8 && c->unet.max_stride == 16 && c->unet.up_interpolate);
    } else if (strcmp(dir_name, "minimal_instance_multiclass_centered_instance") == 0) {
        CHECK(c->model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN);
        CHECK(names_are(c->part_names, c->n_part_names, "A", "B"));
        CHECK(str_eq(c->anchor_part, "A"));
        CHECK(names_are(c->classes, c->n_classes, "female", "male"));
        CHECK(c->class_vectors_fc_layers == 3 && c->class_vectors_fc_units == 64);
        CHECK(c->class_vectors_global_pool && c->class_vectors_stride == 16);
        CHECK(c->crop_size == 128);
    } else if (strcmp(dir_name, "minimal_instance_single_instance") == 0) {
        CHECK(c->model_type == SLEAPC_MODEL_TYPE_SINGLE_INSTANCE);
        /* RGB input although ensure_rgb is false: channels come from the data. */
        CHECK(c->unet.in_channels == 3);
        CHECK(c->scale == 0.5 && c->max_height == 320 && c->max_width == 560);
        CHECK(c->unet.filters == 8 && c->unet.filters_rate == 2.0);
        CHECK(c->unet.max_stride == 4 && c->unet.output_stride == 4);
        CHECK(names_are(c->part_names, c->n_part_names, "A", "B"));
    }
}

/* Every training_config.yaml one folder below model_ckpts parses. */
static void test_model_ckpts(void)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s", test_data_path("sleap-nn-assets/model_ckpts"));
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot list %s", dir);
    if (!d)
        return;
    int n_found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int len = snprintf(path, sizeof path, "%s/%s/training_config.yaml", dir, e->d_name);
        struct stat sb;
        if (len < 0 || (size_t)len >= sizeof path || stat(path, &sb) != 0)
            continue;
        n_found++;
        sleapc_model_config c;
        sleapc_status st = sleapc__config_read_yaml(path, &c);
        CHECK_MSG(st == SLEAPC_OK, "%s: %s", path, sleapc_last_error());
        if (st)
            continue;
        CHECK(str_eq(c.source_path, path));
        CHECK(c.model_type != SLEAPC_MODEL_TYPE_UNKNOWN);
        check_model_values(e->d_name, &c);
        sleapc__model_config_clear(&c);
    }
    closedir(d);
    CHECK_MSG(n_found >= 6, "found %d model configs", n_found);
}

/* The sample configs have no skeleton: part names and PAF edges stay empty. */
static void test_bench_configs(void)
{
    static const char *const names[] = {
        "config_bottomup_unet_medium_rf.yaml",
        "config_centroid_unet.yaml",
        "config_single_instance_unet_medium_rf.yaml",
        "config_topdown_centered_instance_unet_medium_rf.yaml",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "bench_configs/%s", names[i]);
        sleapc_model_config c;
        CHECK_OK(sleapc__config_read_yaml(test_data_path(rel), &c));
        CHECK(c.skeleton.n_nodes == 0 && str_eq(c.skeleton.name, ""));
        CHECK(c.max_height == 0 && c.max_width == 0);
        if (i == 0) {
            CHECK(c.model_type == SLEAPC_MODEL_TYPE_BOTTOMUP);
            CHECK(c.n_part_names == 0 && c.n_paf_edges == 0);
            CHECK(c.unet.filters == 16 && c.unet.filters_rate == 2.0);
            CHECK(c.unet.max_stride == 32 && c.pafs_stride == 8 && c.confmaps_stride == 4);
        } else if (i == 1) {
            CHECK(c.model_type == SLEAPC_MODEL_TYPE_CENTROID && c.scale == 0.5);
            CHECK(c.n_part_names == 1);
        } else if (i == 3) {
            CHECK(c.model_type == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE);
            CHECK(c.unet.filters == 24 && c.confmaps_stride == 4);
        }
        sleapc__model_config_clear(&c);
    }
}

/* Config-generator files omit many keys: the dataclass defaults apply. */
static void test_generated_configs(void)
{
    static const char *const names[] = {
        "bottomup",       "centered_instance",    "centroid",
        "centroid_only",  "multi_class_bottomup", "multi_class_topdown",
        "single_instance"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "sleap-nn-assets/generated_configs/%s.yaml", names[i]);
        sleapc_model_config c;
        CHECK_OK(sleapc__config_read_yaml(test_data_path(rel), &c));
        /* Omitted in these files: the UNetConfig defaults. */
        CHECK(c.unet.middle_block && c.unet.up_interpolate && c.unet.stacks == 1);
        CHECK(c.unet.convs_per_block == 2 && c.unet.stem_stride == 0);
        if (strcmp(names[i], "centered_instance") == 0)
            CHECK(c.max_height == 0 && c.max_width == 0 && c.crop_size == 112);
        if (strncmp(names[i], "multi_class", 11) == 0)
            CHECK(c.n_classes == 0); /* classes: null until training */
        if (strcmp(names[i], "bottomup") == 0)
            CHECK(c.n_paf_edges == 1 && c.paf_edges[0][0] == 0 && c.paf_edges[0][1] == 1);
        sleapc__model_config_clear(&c);
    }
}

static const char *write_tmp(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", test_tmp_dir(), name);
    if (!test_write_file(path, text, strlen(text)))
        fprintf(stderr, "cannot write %s\n", path);
    return path;
}

static const char *skeleton_yaml =
    "data_config:\n"
    "  preprocessing:\n"
    "    scale: [0.25, 0.5]\n"
    "    crop_size: null\n"
    "  skeletons:\n"
    "  - name: fly\n"
    "    nodes: [{name: head}, {name: thorax}, {name: wingL}, {name: wingR}]\n"
    "    edges:\n"
    "    - {source: {name: head}, destination: {name: thorax}}\n"
    "    - {source: {name: thorax}, destination: {name: wingL}}\n"
    "    - {source: {name: thorax}, destination: {name: wingR}}\n"
    "    symmetries:\n"
    "    - [{name: wingL}, {name: wingR}]\n"
    "    - [wingR, wingL]\n";

/* Nulls resolve to the skeleton; symmetries in both spellings; scale list. */
/* centroid.confmaps.use_sigmoid_activation (sleap-nn 0.3.5, heads.py
 * CentroidConfmapsHead.activation): the centroid head ends in a sigmoid; off
 * when absent, as in sleap-nn; not a boolean: an error naming the key. */
static void test_centroid_sigmoid(void)
{
    static const char *const values[] = {"true", "false", NULL};
    for (int k = 0; k < 3; k++) {
        char text[4096], line[128] = "";
        if (values[k])
            snprintf(line, sizeof line, ", use_sigmoid_activation: %s", values[k]);
        snprintf(text, sizeof text,
                 "%smodel_config:\n"
                 "  backbone_config: {unet: {filters: 8, max_stride: 8}}\n"
                 "  head_configs:\n"
                 "    centroid:\n"
                 "      confmaps: {anchor_part: thorax, sigma: 2.5, output_stride: 2%s}\n",
                 skeleton_yaml, line);
        sleapc_model_config c;
        CHECK_OK(sleapc__config_read_yaml(write_tmp("sigmoid.yaml", text), &c));
        const bool want = k == 0;
        sleapc_head_spec h[4];
        CHECK(sleapc__heads_for_config(&c, h) == 1);
        CHECK_MSG(c.confmaps_sigmoid == want &&
                      h[0].act == (want ? SLEAPC_ACT_SIGMOID : SLEAPC_ACT_NONE),
                  "use_sigmoid_activation %s: sigmoid %d", values[k] ? values[k] : "absent",
                  c.confmaps_sigmoid);
        sleapc__model_config_clear(&c);
    }
    char text[4096];
    snprintf(text, sizeof text,
             "%smodel_config:\n"
             "  backbone_config: {unet: {filters: 8, max_stride: 8}}\n"
             "  head_configs:\n"
             "    centroid:\n"
             "      confmaps: {anchor_part: thorax, use_sigmoid_activation: sometimes}\n",
             skeleton_yaml);
    sleapc_model_config c;
    sleapc_status st = sleapc__config_read_yaml(write_tmp("sigmoid_bad.yaml", text), &c);
    CHECK_MSG(st != SLEAPC_OK && strstr(sleapc_last_error(), "use_sigmoid_activation"),
              "not a boolean: %s", sleapc_last_error());
    if (!st)
        sleapc__model_config_clear(&c);
}

/* preprocessing.crop_mode (sleap-nn 0.3.5): "fixed" (the default) and
 * "bbox" (box-scaled crops, with crop_bbox_aspect / _padding / _min_size
 * and their defaults) read; another value, or another aspect, is a format
 * error naming the key. centroid_method resolves as sleap-nn's. */
static void test_crop_mode(void)
{
    static const char *const modes[] = {
        "crop_mode: fixed", "crop_mode: bbox",
        "crop_mode: bbox, crop_bbox_aspect: letterbox, crop_bbox_padding: 0.25, "
        "crop_bbox_min_size: 24",
        "crop_mode: square", "crop_mode: bbox, crop_bbox_aspect: round"};
    for (int k = 0; k < 5; k++) {
        char text[4096];
        snprintf(text, sizeof text,
                 "data_config:\n"
                 "  bbox_padding: 2.5\n"
                 "  preprocessing: {crop_size: 96, %s}\n"
                 "  skeletons:\n"
                 "  - name: fly\n"
                 "    nodes: [head, thorax]\n"
                 "model_config:\n"
                 "  backbone_config: {unet: {filters: 8, max_stride: 8}}\n"
                 "  head_configs:\n"
                 "    centered_instance:\n"
                 "      confmaps: {anchor_part: thorax, sigma: 2.5, output_stride: 2}\n",
                 modes[k]);
        sleapc_model_config c;
        sleapc_status st = sleapc__config_read_yaml(write_tmp("crop_mode.yaml", text), &c);
        if (k < 3) {
            CHECK_OK(st);
            CHECK(!st && c.crop_size == 96 && c.crop_bbox == (k > 0));
            CHECK(!st && c.bbox_padding == 2.5 && strcmp(c.bbox_source, "auto") == 0);
            CHECK(!st && strcmp(c.crop_centroid_rule, "anchor") == 0);
            if (k == 1)
                CHECK(c.crop_bbox_aspect == 0 && c.crop_bbox_padding == 0.1 &&
                      c.crop_bbox_min_size == 0.0);
            if (k == 2)
                CHECK(c.crop_bbox_aspect == 1 && c.crop_bbox_padding == 0.25 &&
                      c.crop_bbox_min_size == 24.0);
        } else {
            CHECK_MSG(st == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "crop_") &&
                          strstr(sleapc_last_error(), "crop_mode.yaml"),
                      "%s: %s: %s", modes[k], sleapc_status_str(st), sleapc_last_error());
        }
        if (!st)
            sleapc__model_config_clear(&c);
    }
}

static void test_synthetic(void)
{
    char text[4096];
    snprintf(text, sizeof text,
             "%smodel_config:\n"
             "  backbone_config: {unet: {filters: 8, max_stride: 8}, convnext: null}\n"
             "  head_configs:\n"
             "    single_instance: null\n"
             "    bottomup:\n"
             "      confmaps: {part_names: null, output_stride: 2}\n"
             "      pafs: {edges: ~}\n",
             skeleton_yaml);
    sleapc_model_config c;
    CHECK_OK(sleapc__config_read_yaml(write_tmp("synthetic.yaml", text), &c));
    CHECK(c.model_type == SLEAPC_MODEL_TYPE_BOTTOMUP);
    CHECK(c.scale == 0.25);
    CHECK(str_eq(c.skeleton.name, "fly") && c.skeleton.n_nodes == 4);
    CHECK(c.skeleton.n_symmetries == 2);
    CHECK(c.skeleton.symmetries[0][0] == 2 && c.skeleton.symmetries[0][1] == 3);
    CHECK(c.skeleton.symmetries[1][0] == 3 && c.skeleton.symmetries[1][1] == 2);
    CHECK(c.n_part_names == 4 && str_eq(c.part_names[3], "wingR"));
    CHECK(c.n_paf_edges == 3 && c.paf_edges[2][0] == 1 && c.paf_edges[2][1] == 3);
    CHECK(c.unet.filters == 8 && c.unet.filters_rate == 1.5 && c.unet.output_stride == 1);
    CHECK(c.confmaps_sigma == 5.0 && c.pafs_sigma == 15.0 && c.pafs_stride == 1);
    sleapc__model_config_clear(&c);

    /* part_names given in another order: skeleton edges are mapped by name. */
    snprintf(text, sizeof text,
             "%smodel_config:\n"
             "  backbone_config: {unet: {}}\n"
             "  head_configs:\n"
             "    bottomup:\n"
             "      confmaps: {part_names: [wingR, wingL, thorax, head]}\n"
             "      pafs: {}\n",
             skeleton_yaml);
    CHECK_OK(sleapc__config_read_yaml(write_tmp("reordered.yaml", text), &c));
    CHECK(c.n_paf_edges == 3 && c.paf_edges[0][0] == 3 && c.paf_edges[0][1] == 2);
    sleapc__model_config_clear(&c);

    /* A ConvNeXt backbone is recorded, not refused; class vector stride
     * defaults to max_stride. */
    CHECK_OK(sleapc__config_read_yaml(
        write_tmp("convnext.yaml", "model_config:\n"
                                   "  backbone_config: {unet: null, convnext: {model_type: tiny}}\n"
                                   "  head_configs:\n"
                                   "    multi_class_topdown:\n"
                                   "      confmaps: {part_names: [a, b], anchor_part: b}\n"
                                   "      class_vectors: {classes: [x, y, z]}\n"),
        &c));
    CHECK(c.backbone_type == SLEAPC_BACKBONE_CONVNEXT && str_eq(c.backbone_name, "convnext"));
    CHECK(c.n_classes == 3 && c.class_vectors_stride == c.unet.max_stride);
    CHECK(c.class_vectors_fc_layers == 1 && c.class_vectors_fc_units == 64);
    CHECK(str_eq(c.anchor_part, "b"));
    CHECK(!c.class_identity); /* class_output defaults to track */
    sleapc__model_config_clear(&c);

    /* class_output on either multi-class head: track or identity. */
    CHECK_OK(sleapc__config_read_yaml(
        write_tmp("class_identity_td.yaml", "model_config:\n"
                                            "  backbone_config: {unet: {}}\n"
                                            "  head_configs:\n"
                                            "    multi_class_topdown:\n"
                                            "      confmaps: {part_names: [a, b]}\n"
                                            "      class_vectors: {classes: [x, y],"
                                            " class_output: identity}\n"),
        &c));
    CHECK(c.class_identity && c.n_classes == 2);
    sleapc__model_config_clear(&c);
    CHECK_OK(sleapc__config_read_yaml(
        write_tmp("class_identity_bu.yaml", "model_config:\n"
                                            "  backbone_config: {unet: {}}\n"
                                            "  head_configs:\n"
                                            "    multi_class_bottomup:\n"
                                            "      confmaps: {}\n"
                                            "      class_maps: {classes: [x, y],"
                                            " class_output: \"identity\"}\n"),
        &c));
    CHECK(c.class_identity);
    sleapc__model_config_clear(&c);
    CHECK_OK(sleapc__config_read_yaml(
        write_tmp("class_track_bu.yaml", "model_config:\n"
                                         "  backbone_config: {unet: {}}\n"
                                         "  head_configs:\n"
                                         "    multi_class_bottomup:\n"
                                         "      confmaps: {}\n"
                                         "      class_maps: {classes: [x, y], class_output: track}\n"),
        &c));
    CHECK(!c.class_identity);
    sleapc__model_config_clear(&c);
}

/* One bad file: expected status, message holding the path and each needle. */
static void expect_fail(const char *name, const char *text, sleapc_status want, const char *needle1,
                        const char *needle2)
{
    const char *path = write_tmp(name, text);
    sleapc_model_config c;
    sleapc_status st = sleapc__config_read_yaml(path, &c);
    const char *msg = sleapc_last_error();
    CHECK_MSG(st == want, "%s: got %s (%s)", name, sleapc_status_str(st), msg);
    CHECK_MSG(strstr(msg, path) != NULL, "%s: message lacks the path: %s", name, msg);
    CHECK_MSG(strncmp(msg, "read config: ", 13) == 0, "%s: %s", name, msg);
    CHECK_MSG(!needle1 || strstr(msg, needle1), "%s: lacks '%s': %s", name, needle1, msg);
    CHECK_MSG(!needle2 || strstr(msg, needle2), "%s: lacks '%s': %s", name, needle2, msg);
    /* *cfg is cleared on failure. */
    CHECK(c.source_path == NULL && c.part_names == NULL && c.skeleton.node_names == NULL);
}

#define HEAD_OK "  head_configs: {centroid: {confmaps: {}}}\n"
#define UNET(x) "model_config:\n  backbone_config:\n    unet: {" x "}\n" HEAD_OK

static void test_corrupt(void)
{
    expect_fail("empty.yaml", "", SLEAPC_ERR_FORMAT, "empty", NULL);
    expect_fail("comments.yaml", "# nothing here\n", SLEAPC_ERR_FORMAT, "empty", NULL);
    expect_fail("syntax.yaml", "model_config:\n  a: [1, 2\n  b: 3\n", SLEAPC_ERR_FORMAT, "line",
                "column");
    expect_fail("toplist.yaml", "- 1\n- 2\n", SLEAPC_ERR_FORMAT, "mapping", NULL);
    expect_fail("nomodel.yaml", "data_config: {}\n", SLEAPC_ERR_FORMAT, "missing key model_config",
                NULL);
    expect_fail("noheads.yaml", "model_config:\n  backbone_config: {unet: {}}\n", SLEAPC_ERR_FORMAT,
                "missing key model_config.head_configs", NULL);
    expect_fail("nullheads.yaml",
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs:\n    single_instance: null\n    centroid: ~\n    bottomup:\n",
                SLEAPC_ERR_FORMAT, "model_config.head_configs", "null");
    expect_fail("segmentation.yaml",
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs: {single_instance: null, segmentation: {masks: {}}}\n",
                SLEAPC_ERR_UNSUPPORTED, "segmentation", NULL);
    expect_fail("nobackbone.yaml", "model_config:\n" HEAD_OK, SLEAPC_ERR_FORMAT, "backbone_config",
                NULL);
    expect_fail("nullbackbone.yaml",
                "model_config:\n  backbone_config: {unet: null, convnext: null}\n" HEAD_OK,
                SLEAPC_ERR_FORMAT, "backbone_config", NULL);
    expect_fail("filters_abc.yaml", UNET("filters: abc"), SLEAPC_ERR_FORMAT,
                "model_config.backbone_config.unet.filters: expected an integer, got 'abc'", NULL);
    expect_fail("filters_quoted.yaml", UNET("filters: '16'"), SLEAPC_ERR_FORMAT, "unet.filters",
                "quoted");
    expect_fail("filters_float.yaml", UNET("filters: 16.5"), SLEAPC_ERR_FORMAT, "unet.filters",
                "integer");
    expect_fail("filters_list.yaml", UNET("filters: [1]"), SLEAPC_ERR_FORMAT, "unet.filters",
                "a list");
    expect_fail("filters_zero.yaml", UNET("filters: 0"), SLEAPC_ERR_FORMAT, "unet.filters",
                "positive");
    expect_fail("filters_neg.yaml", UNET("filters: -8"), SLEAPC_ERR_FORMAT, "unet.filters",
                "positive");
    expect_fail("filters_huge.yaml", UNET("filters: 99999999999"), SLEAPC_ERR_FORMAT,
                "unet.filters", "range");
    expect_fail("rate_zero.yaml", UNET("filters_rate: 0.0"), SLEAPC_ERR_FORMAT, "unet.filters_rate",
                "positive");
    expect_fail("rate_inf.yaml", UNET("filters_rate: .inf"), SLEAPC_ERR_FORMAT, "unet.filters_rate",
                "number");
    expect_fail("stride_12.yaml", UNET("max_stride: 12"), SLEAPC_ERR_FORMAT, "unet.max_stride",
                "power of two");
    expect_fail("bool_bad.yaml", UNET("up_interpolate: maybe"), SLEAPC_ERR_FORMAT,
                "unet.up_interpolate", "true or false");
    expect_fail("unet_scalar.yaml", "model_config:\n  backbone_config: {unet: 3}\n" HEAD_OK,
                SLEAPC_ERR_FORMAT, "backbone_config.unet", "mapping");
    expect_fail("dupkey.yaml", UNET("filters: 8, filters: 16"), SLEAPC_ERR_FORMAT, "unet.filters",
                "twice");
    expect_fail("scale_neg.yaml", "data_config: {preprocessing: {scale: -1.0}}\n" UNET(""),
                SLEAPC_ERR_FORMAT, "data_config.preprocessing.scale", "positive");
    expect_fail("scale_empty.yaml", "data_config: {preprocessing: {scale: []}}\n" UNET(""),
                SLEAPC_ERR_FORMAT, "data_config.preprocessing.scale", NULL);
    expect_fail("nocrop.yaml", "data_config: {preprocessing: {crop_size: [96, 128]}}\n" UNET(""),
                SLEAPC_ERR_UNSUPPORTED, "crop_size", NULL);
    expect_fail("skel_scalar.yaml", "data_config: {skeletons: 3}\n" UNET(""), SLEAPC_ERR_FORMAT,
                "data_config.skeletons", "list");
    expect_fail("skel_edge.yaml",
                "data_config:\n  skeletons:\n  - nodes: [{name: A}, {name: B}]\n"
                "    edges: [{source: {name: A}, destination: {name: Z}}]\n" UNET(""),
                SLEAPC_ERR_FORMAT, "data_config.skeletons[0].edges[0].destination", "'Z'");
    expect_fail("skel_dup.yaml",
                "data_config:\n  skeletons:\n  - nodes: [{name: A}, {name: A}]\n" UNET(""),
                SLEAPC_ERR_FORMAT, "data_config.skeletons[0].nodes[1]", "twice");
    expect_fail("skel_sym.yaml",
                "data_config:\n  skeletons:\n  - nodes: [A, B]\n"
                "    symmetries: [[A]]\n" UNET(""),
                SLEAPC_ERR_FORMAT, "symmetries[0]", "pair");
    expect_fail("paf_edge.yaml",
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs:\n    bottomup:\n      confmaps: {part_names: [A, B]}\n"
                "      pafs: {edges: [[A, B], [B, C]]}\n",
                SLEAPC_ERR_FORMAT, "model_config.head_configs.bottomup.pafs.edges[1][1]", "'C'");
    expect_fail("anchor.yaml",
                "data_config: {skeletons: [{nodes: [A, B]}]}\n"
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs: {centroid: {confmaps: {anchor_part: C}}}\n",
                SLEAPC_ERR_FORMAT, "model_config.head_configs.centroid.confmaps.anchor_part",
                "'C'");
    expect_fail("no_pafs.yaml",
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs:\n    bottomup:\n      confmaps: {}\n",
                SLEAPC_ERR_FORMAT, "missing key model_config.head_configs.bottomup.pafs", NULL);
    expect_fail("no_confmaps.yaml",
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs:\n    single_instance: {}\n",
                SLEAPC_ERR_FORMAT, "single_instance.confmaps", NULL);
    expect_fail("classes_scalar.yaml",
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs:\n    multi_class_bottomup:\n      confmaps: {}\n"
                "      class_maps: {classes: female}\n",
                SLEAPC_ERR_FORMAT, "class_maps.classes", "list");
    expect_fail("class_output.yaml",
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs:\n    multi_class_bottomup:\n      confmaps: {}\n"
                "      class_maps: {classes: [a], class_output: category}\n",
                SLEAPC_ERR_FORMAT, "multi_class_bottomup.class_maps.class_output",
                "'category'");
    expect_fail("class_output_list.yaml",
                "model_config:\n  backbone_config: {unet: {}}\n"
                "  head_configs:\n    multi_class_topdown:\n      confmaps: {}\n"
                "      class_vectors: {classes: [a], class_output: [identity]}\n",
                SLEAPC_ERR_FORMAT, "class_vectors.class_output", NULL);
    expect_fail("bad_utf8.yaml", "model_config:\n  a: \xff\xfe\n", SLEAPC_ERR_FORMAT, "YAML", NULL);

    /* Hostile sizes: deep brackets (libyaml is quadratic in them), a huge file. */
    static char big[(1 << 20) + 64];
    int k = snprintf(big, sizeof big, "a: ");
    for (int i = 0; i < 300; i++)
        big[k++] = '[';
    for (int i = 0; i < 300; i++)
        big[k++] = ']';
    big[k] = '\0';
    expect_fail("deep.yaml", big, SLEAPC_ERR_FORMAT, "nested", NULL);
    memset(big, '#', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    expect_fail("big.yaml", big, SLEAPC_ERR_FORMAT, "larger", NULL);

    /* Not files. */
    sleapc_model_config c;
    char path[512];
    snprintf(path, sizeof path, "%s/no_such_file.yaml", test_tmp_dir());
    sleapc_status st = sleapc__config_read_yaml(path, &c);
    CHECK(st == SLEAPC_ERR_IO && strstr(sleapc_last_error(), path));
    st = sleapc__config_read_yaml(test_tmp_dir(), &c);
    CHECK(st == SLEAPC_ERR_IO && strstr(sleapc_last_error(), test_tmp_dir()) &&
          strstr(sleapc_last_error(), "is a directory"));
    CHECK(sleapc__config_read_yaml(NULL, &c) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__config_read_yaml(path, NULL) == SLEAPC_ERR_INVALID_ARG);
}

/* Fail the Nth allocation for n = 1, 2, ... until the read succeeds: each
 * failure is a clean SLEAPC_ERR_NOMEM (ASan checks that nothing leaks). */
static void test_alloc_failures(const char *path)
{
    int n;
    for (n = 1; n < 1000; n++) {
        sleapc_model_config c;
        sleapc__alloc_fail_after(n);
        sleapc_status st = sleapc__config_read_yaml(path, &c);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK) {
            sleapc__model_config_clear(&c);
            break;
        }
        CHECK_MSG(st == SLEAPC_ERR_NOMEM, "n=%d: %s", n, sleapc_last_error());
        CHECK(c.source_path == NULL && c.part_names == NULL);
    }
    CHECK_MSG(n > 5 && n < 1000, "%s: succeeded after %d failures", path, n - 1);
}

int main(void)
{
    test_require_data();
    test_model_ckpts();
    test_bench_configs();
    test_generated_configs();
    test_synthetic();
    test_centroid_sigmoid();
    test_crop_mode();
    test_corrupt();
    test_alloc_failures(
        test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_multiclass_centered_instance/"
                       "training_config.yaml"));
    char text[4096];
    snprintf(text, sizeof text,
             "%smodel_config:\n  backbone_config: {unet: {}}\n"
             "  head_configs: {bottomup: {confmaps: {}, pafs: {}}}\n",
             skeleton_yaml);
    char path[512];
    snprintf(path, sizeof path, "%s", write_tmp("alloc.yaml", text));
    test_alloc_failures(path);
    return test_finish();
}
