/* The ONNX reader on the sleap-nn exports in the data folder (every *.onnx
 * parses and agrees with its export_metadata.json and export_report.json),
 * and on broken files: truncated, flipped bytes, random garbage, hostile
 * nesting and message floods, failed allocations. A broken file must give a
 * clean SLEAPC_ERR_FORMAT naming it (the sanitizer build checks "clean"). An
 * op the importer does not know is SLEAPC_ERR_UNSUPPORTED naming the node. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/onnx/onnx_read.h"
#include "io/onnx_pb_writer.h"
#include "model/from_onnx.h"
#include "test_util.h"

static cJSON *read_json(const char *path)
{
    size_t n = 0;
    unsigned char *text = test_read_file(path, &n);
    if (!text)
        return NULL;
    cJSON *j = cJSON_ParseWithLength((const char *)text, n);
    free(text);
    return j;
}

static uint32_t rng_state = 12345u;

static uint32_t rng(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* The graph input that is not an initializer. */
static const sleapc_onnx_value *image_input(const sleapc_onnx_model *m)
{
    for (int i = 0; i < m->graph.n_inputs; i++)
        if (!sleapc__onnx_initializer(&m->graph, m->graph.inputs[i].name))
            return &m->graph.inputs[i];
    return NULL;
}

static void check_export_file(const char *dir, const char *file, const cJSON *meta, int opset)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    fclose(f);
    sleapc_onnx_model *m = NULL;
    CHECK_OK(sleapc__onnx_read(path, &m));
    if (!m)
        return;
    CHECK_MSG(m->opset == opset, "%s: opset %lld, export_report.json says %d", path,
              (long long)m->opset, opset);
    CHECK(m->graph.n_nodes > 0 && m->graph.n_outputs > 0 && m->graph.n_initializers > 0);
    /* Every initializer is a whole tensor of its shape. */
    for (int i = 0; i < m->graph.n_initializers; i++) {
        const sleapc_onnx_tensor *t = &m->graph.initializers[i];
        int64_t numel = 1;
        for (int d = 0; d < t->ndim; d++)
            numel *= t->shape[d];
        CHECK(t->numel == numel && t->data && sleapc__onnx_dtype_size(t->dtype) > 0);
        CHECK(sleapc__onnx_initializer(&m->graph, t->name) == t);
    }
    const sleapc_onnx_value *in = image_input(m);
    const cJSON *channels = cJSON_GetObjectItem(meta, "input_channels");
    CHECK_MSG(in && in->ndim == 4 && cJSON_IsNumber(channels) &&
                  in->shape[1] == (int64_t)channels->valuedouble,
              "%s: input is not (B, %g, H, W)", path, cJSON_GetNumberValue(channels));
    const char *meta_type = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "model_type"));
    if (strcmp(file, "model.onnx") == 0) {
        /* The baked graph takes the metadata's input dtype (uint8). */
        const char *dtype = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "input_dtype"));
        CHECK_MSG(in && dtype && strcmp(sleapc__onnx_dtype_name(in->dtype), dtype) == 0,
                  "%s: input dtype %s, metadata says %s", path,
                  in ? sleapc__onnx_dtype_name(in->dtype) : "?", dtype ? dtype : "?");
        /* Embedded metadata, when the exporter wrote it, is the sidecar's. */
        const char *embedded = sleapc__onnx_metadata(m, "sleap_nn_metadata");
        if (embedded) {
            cJSON *j = cJSON_Parse(embedded);
            const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(j, "model_type"));
            CHECK_MSG(t && meta_type && strcmp(t, meta_type) == 0, "%s: embedded model_type", path);
            CHECK(sleapc__onnx_metadata(m, "training_config") != NULL);
            cJSON_Delete(j);
        }
    } else {
        /* The raw graph: float input, one output per head, no metadata. */
        CHECK(in && in->dtype == SLEAPC_ONNX_DTYPE_FLOAT);
        CHECK(m->n_props == 0 && sleapc__onnx_metadata(m, "sleap_nn_metadata") == NULL);
        for (int i = 0; i < m->graph.n_initializers; i++)
            CHECK(m->graph.initializers[i].dtype == SLEAPC_ONNX_DTYPE_FLOAT);
    }
    sleapc__onnx_destroy(m);
}

static int check_all_exports(void)
{
    cJSON *report = read_json(test_data_path("onnx/export_report.json"));
    const cJSON *opset = cJSON_GetObjectItem(report, "opset");
    CHECK(cJSON_IsNumber(opset));
    int n_files = 0;
    DIR *d = opendir(test_data_path("onnx"));
    CHECK(d != NULL);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char dir[4096], path[4096];
        snprintf(dir, sizeof dir, "%s", test_data_path("onnx"));
        size_t n = strlen(dir);
        snprintf(dir + n, sizeof dir - n, "/%s", e->d_name);
        snprintf(path, sizeof path, "%s/export_metadata.json", dir);
        cJSON *meta = read_json(path);
        if (!meta)
            continue;
        for (int k = 0; k < 2; k++) {
            const char *file = k ? "model_raw.onnx" : "model.onnx";
            snprintf(path, sizeof path, "%s/%s", dir, file);
            FILE *f = fopen(path, "rb");
            if (f) {
                fclose(f);
                n_files++;
                check_export_file(dir, file, meta, (int)cJSON_GetNumberValue(opset));
            }
        }
        cJSON_Delete(meta);
    }
    if (d)
        closedir(d);
    cJSON_Delete(report);
    return n_files;
}

/* A broken buffer: FORMAT (or, where the damage happens to leave valid
 * protobuf, OK or an UNSUPPORTED dtype), never anything else; the importer
 * must cope with whatever parsed. */
static sleapc_status parse_any(const uint8_t *buf, size_t n, const char *name)
{
    sleapc_onnx_model *m = NULL;
    sleapc_status st = sleapc__onnx_parse(buf, n, name, &m);
    CHECK_MSG(st == SLEAPC_OK || st == SLEAPC_ERR_FORMAT || st == SLEAPC_ERR_UNSUPPORTED,
              "%s: %s: %s", name, sleapc_status_str(st), sleapc_last_error());
    if (st)
        CHECK_MSG(strstr(sleapc_last_error(), name) != NULL, "message does not name the file: %s",
                  sleapc_last_error());
    if (m) {
        sleapc_weights w = {0};
        sleapc_graph g = {0};
        sleapc_status ist = sleapc__graph_from_onnx(m, NULL, 0, &w, &g);
        CHECK(ist != SLEAPC_ERR_NOMEM);
        sleapc__graph_clear(&g);
        sleapc__weights_clear(&w);
        sleapc__onnx_destroy(m);
    }
    return st;
}

static void check_malformed(const uint8_t *good, size_t size)
{
    const char *name = "broken.onnx";
    /* Truncation anywhere before the graph ends leaves a length that runs
     * past the end (or no graph at all). */
    size_t cuts[] = {1, 2, 3, 7, 16, 100, 1000, size / 3, size / 2, size - size / 50};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        CHECK_MSG(parse_any(good, cuts[i], name) == SLEAPC_ERR_FORMAT, "truncated at %zu", cuts[i]);
    for (int i = 0; i < 60; i++)
        parse_any(good, (size_t)rng() % size, name);

    /* Flipped bytes: in the structure (first and last kilobytes) and anywhere. */
    uint8_t *buf = malloc(size);
    for (int it = 0; it < 300; it++) {
        memcpy(buf, good, size);
        int n_flips = 1 + (int)(rng() % 8);
        for (int k = 0; k < n_flips; k++) {
            size_t at = it % 3 == 0   ? rng() % 1024
                        : it % 3 == 1 ? size - 1 - rng() % 1024
                                      : rng() % size;
            buf[at] ^= (uint8_t)(1u << (rng() % 8));
        }
        parse_any(buf, size, name);
    }
    free(buf);

    /* Random garbage is not an ONNX model. */
    for (int it = 0; it < 50; it++) {
        size_t n = 1 + rng() % 4096;
        uint8_t *g = malloc(n);
        for (size_t k = 0; k < n; k++)
            g[k] = (uint8_t)rng();
        CHECK_MSG(parse_any(g, n, name) == SLEAPC_ERR_FORMAT, "garbage of %zu bytes", n);
        free(g);
    }
    sleapc_onnx_model *m = NULL;
    CHECK(sleapc__onnx_parse(good, 0, name, &m) == SLEAPC_ERR_FORMAT && !m);
}

/* Graph > node > attribute > graph > ... far deeper than any model: refused
 * before protobuf-c recurses into it. */
static void check_deep_nesting(void)
{
    pb inner = {0};
    for (int level = 0; level < 5000; level++) {
        pb attr = {0};
        pb_str(&attr, 1, "then_branch");
        pb_sub(&attr, 6, &inner);
        pb node = {0};
        pb_str(&node, 4, "If");
        pb_sub(&node, 5, &attr);
        pb_sub(&inner, 1, &node);
    }
    pb model = onnx_model(&inner, 17);
    sleapc_onnx_model *m = NULL;
    sleapc_status st = sleapc__onnx_parse(model.d, model.n, "deep.onnx", &m);
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "nested"), "%s",
              sleapc_last_error());
    free(model.d);
}

/* Opsets outside what the interpreter implements are refused when read
 * (opset 1 used to be accepted and run with opset-17 semantics). */
static sleapc_status parse_opset(int opset, bool import)
{
    pb graph = {0};
    pb_str(&graph, 2, "g");
    pb model = {0};
    if (import) {
        model = onnx_model(&graph, opset);
    } else {
        pb_int(&model, 1, 8);
        pb_sub(&model, 7, &graph);
    }
    sleapc_onnx_model *m = NULL;
    sleapc_status st = sleapc__onnx_parse(model.d, model.n, "opset.onnx", &m);
    CHECK(st == SLEAPC_OK ? m && m->opset == opset : m == NULL);
    sleapc__onnx_destroy(m);
    free(model.d);
    return st;
}

static void check_opsets(void)
{
    int refused[] = {1, 7, 10, 22, 99};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char want[32];
        snprintf(want, sizeof want, "opset %d is not supported", refused[i]);
        sleapc_status st = parse_opset(refused[i], true);
        CHECK_MSG(st == SLEAPC_ERR_UNSUPPORTED && strstr(sleapc_last_error(), want) &&
                      strstr(sleapc_last_error(), "opset.onnx"),
                  "opset %d: %s: %s", refused[i], sleapc_status_str(st), sleapc_last_error());
    }
    int accepted[] = {SLEAPC_ONNX_MIN_OPSET, 17, 18, SLEAPC_ONNX_MAX_OPSET};
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        CHECK_OK(parse_opset(accepted[i], true));
    sleapc_status st = parse_opset(17, false);
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "imports no"), "%s",
              sleapc_last_error());
}

/* Two million empty nodes are 4 MB of file but hundreds of MB of structs. */
static void check_message_flood(void)
{
    pb graph = {0};
    for (int i = 0; i < 2000000; i++)
        pb_raw(&graph, "\x0a\x00", 2);
    pb model = onnx_model(&graph, 17);
    sleapc_onnx_model *m = NULL;
    sleapc_status st = sleapc__onnx_parse(model.d, model.n, "flood.onnx", &m);
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "too many"), "%s",
              sleapc_last_error());
    free(model.d);
}

/* Every allocation of a parse failing in turn: NOMEM, nothing leaked. */
static void check_out_of_memory(const uint8_t *good, size_t size)
{
    int n_fail = 0;
    for (int64_t k = 1; k < 100000; k++) {
        sleapc_onnx_model *m = NULL;
        sleapc__alloc_fail_after(k);
        sleapc_status st = sleapc__onnx_parse(good, size, "oom.onnx", &m);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK) {
            CHECK(m != NULL);
            sleapc__onnx_destroy(m);
            break;
        }
        n_fail++;
        CHECK_MSG(st == SLEAPC_ERR_NOMEM && !m, "allocation %lld: %s", (long long)k,
                  sleapc_last_error());
        if (st != SLEAPC_ERR_NOMEM)
            break;
    }
    CHECK(n_fail > 10);
}

/* Rename the op of the first Relu to Selu (same length, a real ONNX op that
 * sleapc does not run): the import names that node. */
static void check_unknown_op(const uint8_t *good, size_t size)
{
    uint8_t *buf = malloc(size);
    memcpy(buf, good, size);
    const uint8_t key[] = {0x22, 0x04, 'R', 'e', 'l', 'u'}; /* op_type (field 4), length 4 */
    uint8_t *at = NULL;
    for (size_t i = 0; !at && i + sizeof key <= size; i++)
        if (memcmp(buf + i, key, sizeof key) == 0)
            at = buf + i;
    CHECK(at != NULL);
    if (at)
        at[2] = 'S';
    sleapc_onnx_model *m = NULL;
    CHECK_OK(sleapc__onnx_parse(buf, size, "selu.onnx", &m));
    const char *node_name = NULL;
    for (int i = 0; m && i < m->graph.n_nodes; i++)
        if (strcmp(m->graph.nodes[i].op_type, "Selu") == 0)
            node_name = m->graph.nodes[i].name;
    CHECK(node_name && node_name[0]);
    if (m && node_name) {
        sleapc_weights w = {0};
        sleapc_graph g = {0};
        sleapc_status st = sleapc__graph_from_onnx(m, NULL, 0, &w, &g);
        const char *msg = sleapc_last_error();
        CHECK_MSG(st == SLEAPC_ERR_UNSUPPORTED && strstr(msg, node_name) && strstr(msg, "(Selu)") &&
                      strstr(msg, "is not supported"),
                  "%s: %s", sleapc_status_str(st), msg);
        CHECK(g.n_nodes == 0 && w.n == 0);
    }
    sleapc__onnx_destroy(m);
    free(buf);
}

int main(void)
{
    test_require_data();
    int n_files = check_all_exports();
    /* Eight exports, six of them with a model_raw.onnx. */
    CHECK_MSG(n_files >= 14, "only %d ONNX files found", n_files);

    sleapc_onnx_model *m = NULL;
    CHECK(sleapc__onnx_read(test_data_path("onnx/no-such-file.onnx"), &m) == SLEAPC_ERR_IO && !m);

    /* The smallest export keeps the sanitizer build quick. */
    size_t size = 0;
    uint8_t *good = test_read_file(test_data_path("onnx/single_instance/model_raw.onnx"), &size);
    CHECK(good != NULL && size > 4096);
    if (good) {
        check_malformed(good, size);
        check_out_of_memory(good, size);
        check_unknown_op(good, size);
    }
    free(good);
    check_deep_nesting();
    check_message_flood();
    check_opsets();
    return test_finish();
}
