/* SLEAP 1.x training_config.json -> sleapc_model_config: the corpus files
 * (facts from formats.md C.6 and the files' own heads), and the jsonpickle
 * skeleton decoding on hand-written skeletons (py/id numbering, insertion
 * order of edges, symmetries stored both ways, inline node definitions). */
#include <stdlib.h>
#include <string.h>

#include "io/config/model_config.h"
#include "test_util.h"

static const char *corpus(const char *rel)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s", test_data_path(rel));
    return path;
}

static void check_corpus(void)
{
    sleapc_model_config c;
    /* formats.md C.6 worked example: nodes [head, thorax] from py/ids 2, 1. */
    CHECK_OK(sleapc__config_read_legacy_json(
        corpus("sleap-nn-assets/legacy_sleap_json_configs/topdown_training_config.json"), &c));
    CHECK(c.legacy && c.model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN);
    CHECK(c.skeleton.n_nodes == 2 && strcmp(c.skeleton.node_names[0], "head") == 0 &&
          strcmp(c.skeleton.node_names[1], "thorax") == 0);
    /* The one link goes thorax -> head. */
    CHECK(c.skeleton.n_edges == 1 && c.skeleton.edges[0][0] == 1 && c.skeleton.edges[0][1] == 0);
    CHECK(c.n_part_names == 2 && strcmp(c.part_names[0], "head") == 0);
    CHECK(c.anchor_part && strcmp(c.anchor_part, "thorax") == 0);
    CHECK(c.n_classes == 2 && strcmp(c.classes[0], "female") == 0 &&
          strcmp(c.classes[1], "male") == 0);
    CHECK(c.class_vectors_fc_layers == 3 && c.class_vectors_fc_units == 64);
    CHECK(c.crop_size == 128 && c.pad_to_stride == 16 && c.resize_and_pad_to_target);
    CHECK(c.unet.filters == 8 && c.unet.filters_rate == 1.5 && c.unet.max_stride == 16 &&
          c.unet.up_interpolate && c.unet.stem_stride == 0 && c.unet.kernel_size == 3 &&
          c.unet.convs_per_block == 2);
    sleapc__model_config_clear(&c);

    CHECK_OK(sleapc__config_read_legacy_json(
        corpus("sleap-nn-assets/legacy_sleap_json_configs/bottomup_training_config.json"), &c));
    CHECK(c.model_type == SLEAPC_MODEL_TYPE_BOTTOMUP);
    CHECK(c.n_paf_edges == 1 && c.paf_edges[0][0] == 0 && c.paf_edges[0][1] == 1);
    CHECK(c.pafs_stride == 4 && c.pafs_sigma == 50 && c.confmaps_stride == 2);
    CHECK(!c.unet.up_interpolate && c.unet.max_stride == 8);
    sleapc__model_config_clear(&c);

    CHECK_OK(sleapc__config_read_legacy_json(
        corpus("sleap-nn-assets/legacy_sleap_json_configs/centroid_training_config.json"), &c));
    CHECK(c.model_type == SLEAPC_MODEL_TYPE_CENTROID && c.n_part_names == 1);
    CHECK(c.anchor_part == NULL && c.confmaps_stride == 4);
    sleapc__model_config_clear(&c);

    /* target_height / target_width become sleap-nn's max_height / max_width. */
    CHECK_OK(sleapc__config_read_legacy_json(
        corpus("sleap-nn-assets/legacy_sleap_json_configs/"
               "centered_instance_with_scaling_training_config.json"),
        &c));
    CHECK(c.model_type == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE);
    CHECK(c.scale == 0.5 && c.max_height == 384 && c.max_width == 384 && c.crop_size == 56);
    CHECK(c.pad_to_stride == 1);
    sleapc__model_config_clear(&c);

    CHECK_OK(sleapc__config_read_legacy_json(
        corpus("sleap-nn-assets/legacy_sleap_json_configs/single_instance_training_config.json"),
        &c));
    CHECK(c.model_type == SLEAPC_MODEL_TYPE_SINGLE_INSTANCE && c.scale == 0.5);
    CHECK(c.unet.filters_rate == 2.0 && c.unet.max_stride == 4 && c.unet.output_stride == 4);
    sleapc__model_config_clear(&c);

    CHECK_OK(sleapc__config_read_legacy_json(
        corpus("sleap-nn-assets/legacy_sleap_json_configs/"
               "bottomup_multiclass_training_config.json"),
        &c));
    CHECK(c.model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP && c.n_classes == 2);
    CHECK(c.class_maps_stride == 2 && c.scale == 0.5);
    sleapc__model_config_clear(&c);
}

static const char *write_json(const char *name, const char *text)
{
    static char path[2048];
    snprintf(path, sizeof path, "%s/%s", test_tmp_dir(), name);
    CHECK(test_write_file(path, text, strlen(text)));
    return path;
}

/* A minimal config around a skeleton; part_names null -> skeleton nodes. */
static char *with_skeleton(const char *skeleton)
{
    static const char *fmt =
        "{\"data\": {\"labels\": {\"skeletons\": [%s]}, \"preprocessing\": {}},"
        " \"model\": {\"backbone\": {\"leap\": null, \"unet\": {\"stem_stride\": null}},"
        " \"heads\": {\"single_instance\": {\"part_names\": null, \"output_stride\": 2}}}}";
    size_t n = strlen(fmt) + strlen(skeleton) + 1;
    char *s = malloc(n);
    snprintf(s, n, fmt, skeleton);
    return s;
}

#define NODE(name)                                                                         \
    "{\"py/object\": \"sleap.skeleton.Node\", \"py/state\": {\"py/tuple\": [\"" name "\", 1.0]}}"
#define BODY "{\"py/reduce\": [{\"py/type\": \"sleap.skeleton.EdgeType\"}, {\"py/tuple\": [1]}]}"
#define SYM "{\"py/reduce\": [{\"py/type\": \"sleap.skeleton.EdgeType\"}, {\"py/tuple\": [2]}]}"

static void check_skeletons(void)
{
    /* py/ids: b 1, c 2, body 3, a 4, symmetry 5. Links stored out of
     * insertion order; the symmetry a<->b is stored both ways. */
    char *j = with_skeleton(
        "{\"graph\": {\"name\": \"sk\"}, \"links\": ["
        "{\"edge_insert_idx\": 1, \"source\": " NODE("b") ", \"target\": " NODE("c")
        ", \"type\": " BODY "},"
        "{\"edge_insert_idx\": 0, \"source\": " NODE("a")
        ", \"target\": {\"py/id\": 1}, \"type\": {\"py/id\": 3}},"
        "{\"source\": {\"py/id\": 1}, \"target\": {\"py/id\": 4}, \"type\": " SYM "},"
        "{\"source\": {\"py/id\": 4}, \"target\": {\"py/id\": 1}, \"type\": {\"py/id\": 5}}],"
        "\"nodes\": [{\"id\": {\"py/id\": 4}}, {\"id\": {\"py/id\": 1}},"
        " {\"id\": {\"py/id\": 2}}]}");
    sleapc_model_config c;
    CHECK_OK(sleapc__config_read_legacy_json(write_json("sk1.json", j), &c));
    free(j);
    const sleapc_skeleton_config *sk = &c.skeleton;
    CHECK(strcmp(sk->name, "sk") == 0);
    CHECK(sk->n_nodes == 3 && strcmp(sk->node_names[0], "a") == 0 &&
          strcmp(sk->node_names[1], "b") == 0 && strcmp(sk->node_names[2], "c") == 0);
    /* SLEAP's Skeleton.edges: by edge_insert_idx, so a->b before b->c. */
    CHECK(sk->n_edges == 2 && sk->edges[0][0] == 0 && sk->edges[0][1] == 1 &&
          sk->edges[1][0] == 1 && sk->edges[1][1] == 2);
    CHECK(sk->n_symmetries == 1);
    CHECK(sk->n_symmetries == 1 && ((sk->symmetries[0][0] == 1 && sk->symmetries[0][1] == 0) ||
                                    (sk->symmetries[0][0] == 0 && sk->symmetries[0][1] == 1)));
    CHECK(c.n_part_names == 3 && strcmp(c.part_names[2], "c") == 0);
    /* An absent stem_stride key would mean a stem in sleap-nn; null here. */
    CHECK(c.unet.stem_stride == 0 && c.confmaps_stride == 2);
    sleapc__model_config_clear(&c);

    /* A node with no link, defined in the nodes list ({"name": ...} state):
     * the list then names fewer nodes by py/id than exist, so the order is
     * that of definition, as sleap-io decodes it. */
    j = with_skeleton(
        "{\"links\": [{\"source\": " NODE("x") ", \"target\": " NODE("y") ", \"type\": " BODY "}],"
        "\"nodes\": [{\"id\": {\"py/id\": 2}}, {\"id\": {\"py/id\": 1}},"
        " {\"id\": {\"py/object\": \"sleap.skeleton.Node\","
        " \"py/state\": {\"name\": \"z\", \"weight\": 1.0}}}]}");
    CHECK_OK(sleapc__config_read_legacy_json(write_json("sk2.json", j), &c));
    free(j);
    CHECK(c.skeleton.n_nodes == 3 && strcmp(c.skeleton.node_names[0], "x") == 0 &&
          strcmp(c.skeleton.node_names[2], "z") == 0);
    CHECK(c.skeleton.n_edges == 1 && c.skeleton.edges[0][0] == 0 && c.skeleton.edges[0][1] == 1);
    sleapc__model_config_clear(&c);

    /* Broken references: an error naming the file and the skeleton. */
    static const char *const broken[] = {
        "{\"links\": [{\"source\": {\"py/id\": 7}, \"target\": " NODE("y") "}], \"nodes\": []}",
        "{\"links\": [{\"source\": " NODE("x") ", \"target\": " NODE("y")
        ", \"type\": {\"py/id\": 1}}],"
        " \"nodes\": []}",
        "{\"links\": [{\"source\": {\"py/object\": \"sleap.skeleton.Node\"},"
        " \"target\": " NODE("y") "}]}",
        "{\"links\": [7]}",
        "{\"links\": [{\"source\": " NODE("x") ", \"target\": " NODE("y") "}],"
        " \"nodes\": [{\"id\": {\"py/id\": 1}}, {\"id\": {\"py/id\": 1}}]}",
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        j = with_skeleton(broken[i]);
        sleapc_status st = sleapc__config_read_legacy_json(write_json("bad.json", j), &c);
        free(j);
        CHECK_MSG(st == SLEAPC_ERR_FORMAT, "broken skeleton %zu: %s", i, sleapc_status_str(st));
        CHECK_MSG(strstr(sleapc_last_error(), "bad.json") &&
                      strstr(sleapc_last_error(), "skeletons[0]"),
                  "broken skeleton %zu: %s", i, sleapc_last_error());
        CHECK(c.skeleton.node_names == NULL && c.source_path == NULL); /* cleared */
    }
}

int main(void)
{
    test_require_data();
    check_corpus();
    check_skeletons();
    return test_finish();
}
