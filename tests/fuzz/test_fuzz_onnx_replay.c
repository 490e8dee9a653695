/* The ONNX fuzz target on a fixed corpus, in every build (the libFuzzer
 * binary needs clang; CONTRIBUTING.md, "Tests and benchmarks"). The corpus: a few
 * small hand-built models (host ops, If, an omitted output, an empty
 * attribute list, a network segment) and every sleap-nn export's model.onnx
 * and model_raw.onnx, each as is, truncated at many lengths, and mutated by
 * seeded byte flips. Every
 * input must end in an expected status (fuzz_onnx_read.c); the sanitizer
 * build checks there is no crash, overflow or leak. The pristine inputs must
 * get as far as they can, and enough mutants must still plan and run, so
 * that the replay reaches past the reader. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_pb_writer.h"
#include "test_util.h"

/* The target itself, compiled into this program: ctest builds each test
 * from its one source file. */
#include "fuzz_onnx_read.c"

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

enum { T_FLOAT = 1, T_INT64 = 7 };

/* Mutants per file; the sanitizers make each run several times slower.
 * SLEAPC_FUZZ_MUTANTS=N replays more (or fewer). */
#ifdef SLEAPC_SANITIZED
#define N_MUTANTS_DEFAULT 160
#else
#define N_MUTANTS_DEFAULT 400
#endif
#define N_CUTS 48

static int mutants_per_file = N_MUTANTS_DEFAULT;

static uint64_t rng_state;

static uint32_t rng(void)
{
    /* xorshift64*: fixed seeds, the same corpus everywhere. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static void feed(const uint8_t *data, size_t n)
{
    /* An exact-size copy, so that ASan sees a read past the end. */
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy)
        return;
    memcpy(copy, data, n);
    LLVMFuzzerTestOneInput(copy, n);
    free(copy);
}

/* One mutant of good: a few bit flips, set bytes or overwritten runs, mostly
 * in the first and last 16 KB (the node list and the graph's inputs and
 * outputs in the exports; the weights lie between), then perhaps a cut. */
static size_t mutate(const uint8_t *good, size_t size, uint8_t *buf)
{
    static const uint8_t special[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12};
    memcpy(buf, good, size);
    /* A small model survives only a few edits. */
    int n_edits = 1 + (int)(rng() % (size < 4096 ? 2 : 6));
    for (int e = 0; e < n_edits; e++) {
        size_t window = size < 16384 ? size : 16384;
        uint32_t where = rng() % 4;
        size_t at = where == 0   ? rng() % size
                    : where == 1 ? size - 1 - rng() % window
                                 : rng() % window;
        switch (rng() % 4) {
        case 0:
        case 1:
            buf[at] ^= (uint8_t)(1u << (rng() % 8));
            break;
        case 2:
            buf[at] = special[rng() % sizeof special];
            break;
        default:
            for (size_t k = at, end = at + 1 + rng() % 8; k < end && k < size; k++)
                buf[k] = (uint8_t)rng();
            break;
        }
    }
    return rng() % 8 == 0 ? rng() % size : size;
}

/* The file as is, cut at n_cuts lengths (all when small), and n_mutants
 * mutants. Returns how many mutants were planned. */
static long replay(const char *name, const uint8_t *good, size_t size, uint64_t seed, int n_cuts,
                   int n_mutants)
{
    rng_state = seed;
    fuzz_onnx_stats before = fuzz_onnx_seen;
    feed(good, size);
    CHECK_MSG(fuzz_onnx_seen.parsed == before.parsed + 1, "%s: does not parse: %s", name,
              sleapc_last_error());
    if (size <= (size_t)n_cuts) {
        for (size_t n = 0; n < size; n++)
            feed(good, n);
    } else {
        /* Every length near the start and the end, the rest spread evenly. */
        for (int i = 0; i < n_cuts; i++) {
            size_t n = i < 16   ? (size_t)i
                       : i < 24 ? size - (size_t)(i - 15)
                                : (size_t)((uint64_t)size * (uint64_t)(i - 23) / (n_cuts - 23));
            feed(good, n < size ? n : size - 1);
        }
    }
    uint8_t *buf = malloc(size);
    long planned = fuzz_onnx_seen.planned;
    for (int m = 0; buf && m < n_mutants; m++)
        feed(buf, mutate(good, size, buf));
    free(buf);
    planned = fuzz_onnx_seen.planned - planned;
    printf("%-44s %8zu bytes: %5ld inputs, %5ld parsed, %5ld planned, %5ld ran, %5ld imported\n",
           name, size, fuzz_onnx_seen.inputs - before.inputs, fuzz_onnx_seen.parsed - before.parsed,
           fuzz_onnx_seen.planned - before.planned, fuzz_onnx_seen.ran - before.ran,
           fuzz_onnx_seen.imported - before.imported);
    return planned;
}

/* AttributeProto with a graph (field g 6, type GRAPH 5). */
static pb attr_graph(const char *name, pb *g)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_sub(&a, 6, g);
    pb_int(&a, 20, 5);
    return a;
}

static void add_value(pb *g, int field, const char *name, int type, int ndim, const int64_t *dims)
{
    pb v = onnx_value(name, type, ndim, dims);
    pb_sub(g, field, &v);
}

static void add_node(pb *g, const char *op, const char *const *ins, const char *const *outs,
                     pb *attrs, int n_attrs)
{
    pb n = onnx_node(op, outs[0], ins, outs, attrs, n_attrs);
    pb_sub(g, ONNX_GRAPH_NODE, &n);
}

/* Host ops of the kinds the exports' post-processing uses. */
static pb host_model(void)
{
    pb g = {0};
    add_value(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 2, (int64_t[]){2, 6});
    pb k = onnx_int64_tensor("k", 1, (int64_t[]){1}, (int64_t[]){3});
    pb_sub(&g, ONNX_GRAPH_INIT, &k);
    pb i0 = onnx_int64_tensor("i0", 1, (int64_t[]){1}, (int64_t[]){0});
    pb_sub(&g, ONNX_GRAPH_INIT, &i0);
    pb two = onnx_float_tensor("two", 0, NULL, (float[]){2.0f});
    pb_sub(&g, ONNX_GRAPH_INIT, &two);
    add_node(&g, "Mul", NAMES("x", "two"), NAMES("x2"), NULL, 0);
    add_node(&g, "TopK", NAMES("x2", "k"), NAMES("v", "i"), NULL, 0);
    add_node(&g, "Shape", NAMES("v"), NAMES("s"), NULL, 0);
    add_node(&g, "Gather", NAMES("s", "i0"), NAMES("rows"), NULL, 0);
    pb axes = onnx_attr_ints("axes", 1, (int64_t[]){1});
    add_node(&g, "ReduceMax", NAMES("v"), NAMES("m"), &axes, 1);
    add_node(&g, "Greater", NAMES("v", "m"), NAMES("gt"), NULL, 0);
    add_node(&g, "Where", NAMES("gt", "v", "m"), NAMES("w"), NULL, 0);
    pb to = onnx_attr_int("to", 1);
    add_node(&g, "Cast", NAMES("i"), NAMES("fi"), &to, 1);
    pb axis = onnx_attr_int("axis", 1);
    add_node(&g, "Concat", NAMES("w", "fi"), NAMES("cat"), &axis, 1);
    add_value(&g, ONNX_GRAPH_OUTPUT, "cat", T_FLOAT, 2, (int64_t[]){2, 6});
    add_value(&g, ONNX_GRAPH_OUTPUT, "rows", T_INT64, 1, (int64_t[]){1});
    return onnx_model(&g, 17);
}

/* If on a computed condition, each branch reading the outer graph. */
static pb if_model(void)
{
    pb then_g = {0};
    add_node(&then_g, "Neg", NAMES("x"), NAMES("a"), NULL, 0);
    add_value(&then_g, ONNX_GRAPH_OUTPUT, "a", T_FLOAT, 0, NULL);
    pb else_g = {0};
    add_node(&else_g, "Abs", NAMES("x"), NAMES("b"), NULL, 0);
    add_value(&else_g, ONNX_GRAPH_OUTPUT, "b", T_FLOAT, 0, NULL);
    pb g = {0};
    add_value(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 1, (int64_t[]){-1});
    pb zero = onnx_float_tensor("zero", 0, NULL, (float[]){0.0f});
    pb_sub(&g, ONNX_GRAPH_INIT, &zero);
    pb keep = onnx_attr_int("keepdims", 0);
    add_node(&g, "ReduceSum", NAMES("x"), NAMES("sum"), &keep, 1);
    add_node(&g, "Greater", NAMES("sum", "zero"), NAMES("c"), NULL, 0);
    pb br[2] = {attr_graph("then_branch", &then_g), attr_graph("else_branch", &else_g)};
    add_node(&g, "If", NAMES("c"), NAMES("y"), br, 2);
    add_value(&g, ONNX_GRAPH_OUTPUT, "y", T_FLOAT, 0, NULL);
    return onnx_model(&g, 17);
}

/* TopK whose indices are left out: the output named "". */
static pb omitted_output_model(void)
{
    pb g = {0};
    add_value(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 2, (int64_t[]){1, 8});
    pb k = onnx_int64_tensor("k", 1, (int64_t[]){1}, (int64_t[]){2});
    pb_sub(&g, ONNX_GRAPH_INIT, &k);
    add_node(&g, "TopK", NAMES("x", "k"), NAMES("v", ""), NULL, 0);
    add_value(&g, ONNX_GRAPH_OUTPUT, "v", T_FLOAT, 2, (int64_t[]){1, 2});
    return onnx_model(&g, 17);
}

/* An INTS attribute with no values (a protobuf list that is absent): the
 * reader gives no array, which the kernels must not copy from. */
static pb empty_ints_model(void)
{
    pb g = {0};
    add_value(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 2, (int64_t[]){2, 3});
    pb axes = onnx_attr_ints("axes", 0, NULL);
    add_node(&g, "ReduceMax", NAMES("x"), NAMES("m"), &axes, 1);
    add_value(&g, ONNX_GRAPH_OUTPUT, "m", T_FLOAT, 0, NULL);
    return onnx_model(&g, 17);
}

/* A network segment: uint8 -> float / 255 -> Conv -> Relu -> Conv ->
 * Sigmoid, then a host ReduceMax (with_host) or nothing more (a raw network
 * the importer takes as is). */
static pb conv_model(bool with_host)
{
    float w1[2 * 1 * 3 * 3], b1[2] = {0.1f, -0.2f}, w2[1 * 2 * 1 * 1] = {0.5f, -0.25f};
    for (int i = 0; i < 18; i++)
        w1[i] = (float)((i * 7) % 5 - 2) / 4.0f;
    pb g = {0};
    add_value(&g, ONNX_GRAPH_INPUT, "x", with_host ? 2 : T_FLOAT, 4, (int64_t[]){1, 1, -1, -1});
    pb t = onnx_float_tensor("w1", 4, (int64_t[]){2, 1, 3, 3}, w1);
    pb_sub(&g, ONNX_GRAPH_INIT, &t);
    t = onnx_float_tensor("b1", 1, (int64_t[]){2}, b1);
    pb_sub(&g, ONNX_GRAPH_INIT, &t);
    t = onnx_float_tensor("w2", 4, (int64_t[]){1, 2, 1, 1}, w2);
    pb_sub(&g, ONNX_GRAPH_INIT, &t);
    t = onnx_float_tensor("k255", 0, NULL, (float[]){255.0f});
    pb_sub(&g, ONNX_GRAPH_INIT, &t);
    const char *net_in = "x";
    if (with_host) {
        pb to = onnx_attr_int("to", 1);
        add_node(&g, "Cast", NAMES("x"), NAMES("xf"), &to, 1);
        add_node(&g, "Div", NAMES("xf", "k255"), NAMES("xn"), NULL, 0);
        net_in = "xn";
    }
    pb a[2] = {onnx_attr_ints("pads", 4, (int64_t[]){1, 1, 1, 1}),
               onnx_attr_ints("kernel_shape", 2, (int64_t[]){3, 3})};
    add_node(&g, "Conv", NAMES(net_in, "w1", "b1"), NAMES("c1"), a, 2);
    add_node(&g, "Relu", NAMES("c1"), NAMES("r1"), NULL, 0);
    pb k1 = onnx_attr_ints("kernel_shape", 2, (int64_t[]){1, 1});
    add_node(&g, "Conv", NAMES("r1", "w2"), NAMES("c2"), &k1, 1);
    add_node(&g, "Sigmoid", NAMES("c2"), NAMES("maps"), NULL, 0);
    if (with_host) {
        pb axes = onnx_attr_ints("axes", 2, (int64_t[]){2, 3});
        add_node(&g, "ReduceMax", NAMES("maps"), NAMES("peak"), &axes, 1);
        add_value(&g, ONNX_GRAPH_OUTPUT, "peak", T_FLOAT, 4, (int64_t[]){1, 1, 1, 1});
    }
    add_value(&g, ONNX_GRAPH_OUTPUT, "maps", T_FLOAT, 4, (int64_t[]){1, 1, -1, -1});
    return onnx_model(&g, 17);
}

/* Branches nested deeper than the planner allows. */
static pb nested_model(void)
{
    pb inner = {0};
    add_node(&inner, "Identity", NAMES("x"), NAMES("y9"), NULL, 0);
    add_value(&inner, ONNX_GRAPH_OUTPUT, "y9", T_FLOAT, 0, NULL);
    for (int d = 8; d >= 0; d--) {
        char out[8], alt[8];
        snprintf(out, sizeof out, "y%d", d);
        snprintf(alt, sizeof alt, "e%d", d);
        pb then_g = inner;
        pb else_g = {0};
        add_node(&else_g, "Identity", NAMES("x"), NAMES(alt), NULL, 0);
        add_value(&else_g, ONNX_GRAPH_OUTPUT, alt, T_FLOAT, 0, NULL);
        pb g = {0};
        pb br[2] = {attr_graph("then_branch", &then_g), attr_graph("else_branch", &else_g)};
        add_node(&g, "If", NAMES("c"), NAMES(out), br, 2);
        add_value(&g, ONNX_GRAPH_OUTPUT, out, T_FLOAT, 0, NULL);
        inner = g;
    }
    pb g = inner;
    add_value(&g, ONNX_GRAPH_INPUT, "x", T_FLOAT, 1, (int64_t[]){2});
    pb c = onnx_tensor("c", 9, 0, NULL, (uint8_t[]){1}, 1);
    pb_sub(&g, ONNX_GRAPH_INIT, &c);
    return onnx_model(&g, 17);
}

typedef struct built {
    const char *name;
    pb model;
    bool plans, runs, imports; /* as is */
} built;

static void replay_built(built *b, uint64_t seed)
{
    /* SLEAPC_FUZZ_SEEDS=DIR: also write the model there, as a seed for the
     * libFuzzer binary's corpus. */
    const char *seeds = getenv("SLEAPC_FUZZ_SEEDS");
    if (seeds) {
        char path[4096];
        snprintf(path, sizeof path, "%s/built_%llu.onnx", seeds, (unsigned long long)seed);
        CHECK_MSG(test_write_file(path, b->model.d, b->model.n), "cannot write %s", path);
    }
    fuzz_onnx_stats before = fuzz_onnx_seen;
    feed(b->model.d, b->model.n);
    CHECK_MSG(fuzz_onnx_seen.planned - before.planned == b->plans, "%s: planned: %s", b->name,
              sleapc_last_error());
    CHECK_MSG(fuzz_onnx_seen.ran - before.ran == b->runs, "%s: ran: %s", b->name,
              sleapc_last_error());
    CHECK_MSG(fuzz_onnx_seen.imported - before.imported == b->imports, "%s: imported: %s", b->name,
              sleapc_last_error());
    long planned = replay(b->name, b->model.d, b->model.n, seed, 1 << 20, mutants_per_file);
    if (b->plans && mutants_per_file >= 40)
        CHECK_MSG(planned > 0, "%s: none of %d mutants planned", b->name, mutants_per_file);
    free(b->model.d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_exports(void)
{
    const char *root = test_data_path("onnx");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", root);
    char *names[64];
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    int n_files = 0;
    for (int i = 0; i < n; i++) {
        const char *files[] = {"model.onnx", "model_raw.onnx"};
        for (int f = 0; f < 2; f++) {
            char path[4096], label[256];
            snprintf(path, sizeof path, "%s/%s/%s", dir, names[i], files[f]);
            size_t size = 0;
            uint8_t *good = test_read_file(path, &size);
            if (!good)
                continue;
            n_files++;
            snprintf(label, sizeof label, "%s/%s", names[i], files[f]);
            fuzz_onnx_stats before = fuzz_onnx_seen;
            long planned =
                replay(label, good, size, 0x9e3779b97f4a7c15ull * (uint64_t)(2 * i + f + 1), N_CUTS,
                       mutants_per_file);
            /* The baked graph plans; the raw network imports. */
            CHECK_MSG(f == 1 || mutants_per_file < 40 || planned > mutants_per_file / 20,
                      "%s: only %ld of %d mutants planned", label, planned, mutants_per_file);
            CHECK_MSG(f == 0 || mutants_per_file < 40 ||
                          fuzz_onnx_seen.imported - before.imported > mutants_per_file / 20,
                      "%s: only %ld mutants imported", label,
                      fuzz_onnx_seen.imported - before.imported);
            free(good);
        }
        free(names[i]);
    }
    return n_files;
}

int main(void)
{
    const char *env = getenv("SLEAPC_FUZZ_MUTANTS");
    if (env && atoi(env) > 0)
        mutants_per_file = atoi(env);
    built models[] = {
        {"host ops", host_model(), true, true, false},
        {"If", if_model(), true, true, false},
        {"omitted output", omitted_output_model(), true, true, false},
        {"empty INTS attribute", empty_ints_model(), true, true, false},
        {"uint8 -> network -> host", conv_model(true), true, true, false},
        {"raw network", conv_model(false), true, true, true},
        {"nested If", nested_model(), false, false, false},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        replay_built(&models[i], 1000 + i);
    if (test_data_dir()) {
        int n_files = replay_exports();
        CHECK_MSG(n_files >= 14, "only %d export files found", n_files);
    } else {
        printf("no data folder: the exports were not replayed\n");
    }
    CHECK_MSG(fuzz_onnx_seen.unexpected == 0, "%ld unexpected statuses, the last: %s",
              fuzz_onnx_seen.unexpected, fuzz_onnx_seen.last_unexpected);
    printf("%ld inputs: %ld parsed, %ld planned, %ld ran, %ld imported, %ld unexpected\n",
           fuzz_onnx_seen.inputs, fuzz_onnx_seen.parsed, fuzz_onnx_seen.planned, fuzz_onnx_seen.ran,
           fuzz_onnx_seen.imported, fuzz_onnx_seen.unexpected);
    return test_finish();
}
