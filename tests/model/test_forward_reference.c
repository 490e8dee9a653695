/* Every case in the reference folder: run the network on the stored model
 * input with every compiled-in backend and compare each head with the stored
 * output. Cases are discovered from the folder.
 *
 * Tolerance: relative L2 error <= 1e-4 per head. Float32 summation order alone
 * explains up to ~3e-5 (an independent float32 implementation reached 4e-7 to
 * 5e-6 on most models and 2.8e-5 on the multi-class ones; reference README).
 *
 * The same for reference-backbones/ (ConvNeXt and SwinT), same tolerance:
 * an independent float64 implementation matches its heads within 2.2e-6.
 *
 * Legacy SLEAP 1.x models (best_model.h5) are built with TensorFlow's
 * Conv2DTranspose placement, as SLEAP runs them. legacy_kerasT_* cases record
 * exactly that. The other legacy_* cases record sleap-nn's port, which places
 * the transposed convolution one pixel off (architectures.md §6b): for models
 * without one (single instance, the multi-class UNets) both placements agree
 * and the heads must match; for the others (the centroid, centered-instance
 * and bottom-up models, also the centroid stage of legacy_multiclass_topdown)
 * the case is not a reference for us, and we check instead that our heads
 * differ from it by more than 1e-3 relative L2 (the port is 55-120 % off on
 * real frames), which documents the difference.
 *
 * SLEAPC_TEST_BACKEND=NAME runs that backend only. The Vulkan backend on a
 * software device (Mesa's lavapipe, about 1 GFLOP/s) runs only when named so,
 * and then on the stages of at most SOFTWARE_GFLOP per call unless
 * SLEAPC_TEST_FULL is set.
 * SLEAPC_TEST_PRECISION=fp16 runs the backends at fp16 (the Vulkan
 * backend's binary16 storage, and binary16 products where the device has
 * shaderFloat16 unless SLEAPC_VULKAN_FP16_MATH=0) against the same
 * references, within the bound fp16 roundoff gives a network,
 * SLEAPC_FP16_HEAD_BUDGET (bf16_policy.h).
 * SLEAPC_REFERENCE_CASES (comma-separated case ids) runs only those cases,
 * each of which must be found: the aarch64 build under qemu runs a few small
 * ones. Without it, SLEAPC_TEST_QUICK=1 (`make check`) runs the first case of
 * each model type (test_quick_case). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/bf16_policy.h"
#include "backends/native/native_ukernel.h"
#include "io/npy/npy_file.h"
#include "model/model_impl.h"
#include "test_util.h"

#define REL_L2_TOL 1e-4
#define N_WINOGRAD_RUNS 4
static int n_wino_runs[N_WINOGRAD_RUNS];

static int native_index(void)
{
    for (int i = 0; i < sleapc__backend_count(); i++)
        if (strcmp(sleapc__backend_factory(i)->name, "native") == 0)
            return i;
    return 0;
}
#define PORT_MIN_REL_L2 1e-3
#define SOFTWARE_GFLOP 2.0

/* What a case's stored heads are to us: checkpoint cases and Keras-exact
 * legacy cases must match; a legacy case from sleap-nn's port must match only
 * when the model has no transposed convolution (placement is then moot). */
typedef enum case_kind { CASE_CKPT, CASE_LEGACY_KERAS, CASE_LEGACY_PORT } case_kind;
typedef enum expect { EXPECT_MATCH, EXPECT_DIFFER } expect;

static bool has_transposed_conv(const sleapc_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == SLEAPC_OP_CONV_TRANSPOSE2D)
            return true;
    return false;
}

static bool uses_transformer_ops(const sleapc_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op >= SLEAPC_OP_PATCHES || g->nodes[i].act == SLEAPC_ACT_GELU)
            return true;
    return false;
}

#ifdef SLEAPC_SANITIZED
/* Whether no stage of this kind ran yet (the Winograd runs under the
 * sanitizers: with them they took most of the test's time). */
static bool first_of_kind(const char *stage, bool transformer)
{
    static char seen[32][64];
    static int n_seen;
    char kind[64];
    snprintf(kind, sizeof kind, "%s/%d", stage, transformer);
    for (int i = 0; i < n_seen; i++)
        if (strcmp(seen[i], kind) == 0)
            return false;
    if (n_seen < 32)
        snprintf(seen[n_seen++], sizeof seen[0], "%s", kind);
    return true;
}
#endif

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

static int n_cases_run, n_legacy_run, n_legacy_differ, n_small_skipped, n_heads_compared;

static bool selected(const char *name)
{
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    return !only || !*only || strcmp(only, name) == 0;
}

/* A backend on a software GPU emulation (an accelerator backend whose
 * device string is "cpu"). */
static bool on_software_device(const struct sleapc_backend_factory *f, const sleapc_backend *be)
{
    return f->list_devices && strcmp(be->device, "cpu") == 0;
}

/* One backend call of a case: stage input -> heads. */
static void check_stage(const char *case_dir, const char *case_id, const char *model_dir,
                        const cJSON *call, case_kind kind)
{
    const char *stage = cJSON_GetStringValue(cJSON_GetObjectItem(call, "stage"));
    const cJSON *heads = cJSON_GetObjectItem(call, "heads");
    CHECK(stage && heads);
    if (!stage || !heads)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.input.npy", case_dir, stage);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    if (!x.data)
        return;
    /* (B, n_samples=1, C, H, W) -> (B, C, H, W) */
    CHECK(x.ndim == 5 && x.shape[1] == 1);
    for (int d = 1; d < 4; d++)
        x.shape[d] = x.shape[d + 1];
    x.ndim = 4;

    sleapc_model *m = NULL;
    CHECK_OK(sleapc__model_load(model_dir, &m));
    expect ex = kind == CASE_LEGACY_PORT && m && has_transposed_conv(&m->graph) ? EXPECT_DIFFER
                                                                                : EXPECT_MATCH;
    n_legacy_differ += ex == EXPECT_DIFFER;
    /* The native backend also with Winograd on every 3x3 conv: F(2), F(4),
     * F(6) forced, then as --conv auto (the default) chooses per layer among
     * direct and the accurate sizes (its timing costs some ten conv runs
     * per layer). Under the sanitizers only on the first stage of each kind
     * (stage name, UNet or transformer backbone): every tile size still
     * runs on every model type. */
    int n_runs = sleapc__backend_count() + N_WINOGRAD_RUNS;
#ifdef SLEAPC_SANITIZED
    if (m && !first_of_kind(stage, uses_transformer_ops(&m->graph)))
        n_runs = sleapc__backend_count();
#endif
    for (int run = 0; m && run < n_runs; run++) {
        int bi = run < sleapc__backend_count() ? run : native_index();
        int wino = run - sleapc__backend_count(); /* >= 0: a Winograd run */
        const struct sleapc_backend_factory *f = sleapc__backend_factory(bi);
        if (f->score() <= 0 || !selected(f->name))
            continue;
        /* Not even created: a software device's set-up costs time too. */
        static int software[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                   -1, -1, -1, -1, -1, -1, -1, -1};
        if (bi < 16 && software[bi] < 0)
            software[bi] = test_backend_software_only(f->name);
        if (!getenv("SLEAPC_TEST_BACKEND") && bi < 16 && software[bi])
            continue;
        sleapc_backend *be = NULL;
        const char *prec = getenv("SLEAPC_TEST_PRECISION");
        bool fp16 = prec && strcmp(prec, "fp16") == 0;
        double tol = fp16 ? SLEAPC_FP16_HEAD_BUDGET : REL_L2_TOL;
        if (fp16 && wino >= 0)
            continue;
        sleapc_backend_opts opts = {.n_threads = 2,
                                    .precision = fp16 ? SLEAPC_PRECISION_FP16
                                                      : SLEAPC_PRECISION_FP32};
        char label[32];
        snprintf(label, sizeof label, "%s", f->name);
        if (wino >= 0) {
            opts.conv = wino < 3 ? SLEAPC_CONV_WINOGRAD : SLEAPC_CONV_AUTO;
            opts.winograd_tile = wino < 3 ? 2 * wino + 2 : 0;
            snprintf(label, sizeof label, "native/F(%d)", opts.winograd_tile);
            if (!opts.winograd_tile)
                snprintf(label, sizeof label, "native/auto");
            n_wino_runs[wino]++;
        } else {
            opts.conv = SLEAPC_CONV_DIRECT;
        }
        sleapc_status cst = sleapc__backend_create_from(f, &m->graph, &opts, &be);
        /* oneDNN and XNNPACK lower none of the ConvNeXt / SwinT ops: they
         * must refuse such a graph cleanly (auto then picks native). */
        if (cst == SLEAPC_ERR_UNSUPPORTED && uses_transformer_ops(&m->graph)) {
            printf("%-45s %-30s %-8s refused: %s\n", case_id, "", label, sleapc_last_error());
            continue;
        }
        CHECK_MSG(cst == SLEAPC_OK, "%s: %s", sleapc_status_str(cst), sleapc_last_error());
        if (!be)
            continue;
        if (on_software_device(f, be)) {
            double gflop = sleapc__graph_flops(&m->graph, x.shape[0], x.shape[2], x.shape[3]) * 1e-9;
            const char *full = getenv("SLEAPC_TEST_FULL");
            if (gflop > SOFTWARE_GFLOP && !(full && *full && strcmp(full, "0") != 0)) {
                n_small_skipped++;
                sleapc__backend_destroy(be);
                continue;
            }
        }
        sleapc_tensor_map out = {0};
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        const cJSON *h;
        cJSON_ArrayForEach(h, heads)
        {
            snprintf(path, sizeof path, "%s/%s.head.%s.npy", case_dir, stage, h->string);
            sleapc_tensor ref = {0};
            CHECK_OK(sleapc__npy_read(path, &ref));
            const sleapc_tensor *got = sleapc__tensor_map_get(&out, h->string);
            CHECK_MSG(got != NULL, "%s/%s: backend %s returned no %s", case_id, stage, label,
                      h->string);
            if (got && ref.data) {
                bool same_shape = got->ndim == ref.ndim;
                for (int d = 0; same_shape && d < ref.ndim; d++)
                    same_shape = got->shape[d] == ref.shape[d];
                CHECK_MSG(same_shape, "%s/%s %s: shape differs", case_id, stage, h->string);
                if (same_shape) {
                    double err = test_rel_l2(got->data, ref.data, sleapc_tensor_numel(&ref));
                    n_heads_compared++;
                    if (ex == EXPECT_MATCH)
                        CHECK_MSG(err <= tol, "%s/%s %s [%s]: relative L2 %.3g > %.0e",
                                  case_id, stage, h->string, label, err, tol);
                    else
                        CHECK_MSG(err > PORT_MIN_REL_L2,
                                  "%s/%s %s [%s]: relative L2 %.3g: expected sleap-nn's port to "
                                  "differ from SLEAP by more than %.0e",
                                  case_id, stage, h->string, label, err, PORT_MIN_REL_L2);
                    printf("%-45s %-30s %-8s rel L2 %.2e%s\n", case_id, h->string, label, err,
                           ex == EXPECT_MATCH ? "" : " (sleap-nn port, skipped: must differ)");
                }
            }
            free(ref.data);
        }
        sleapc__backend_destroy(be);
    }
    sleapc__model_destroy(m);
    free(x.data);
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

static void check_case(const char *folder, const char *case_id)
{
    char case_dir[4096], path[4096];
    snprintf(case_dir, sizeof case_dir, "%s", test_data_path(folder));
    size_t n = strlen(case_dir);
    snprintf(case_dir + n, sizeof case_dir - n, "/%s", case_id);
    snprintf(path, sizeof path, "%s/manifest.json", case_dir);
    cJSON *man = read_json(path);
    CHECK_MSG(man != NULL, "%s: cannot read manifest", case_id);
    if (!man)
        return;
    const cJSON *dirs = cJSON_GetObjectItem(man, "model_dirs");
    const cJSON *calls = cJSON_GetObjectItem(man, "backend_calls");
    int n_calls = cJSON_GetArraySize(calls);
    CHECK(n_calls >= 1 && n_calls == cJSON_GetArraySize(dirs));
    for (int i = 0; i < n_calls && i < cJSON_GetArraySize(dirs); i++) {
        const char *rel = cJSON_GetStringValue(cJSON_GetArrayItem(dirs, i));
        /* Manifest paths start at the repository that holds shared/data. */
        const char *prefix = "shared/data/";
        if (!rel || strncmp(rel, prefix, strlen(prefix)) != 0)
            continue;
        char model_dir[4096], ckpt[4096], h5[4096];
        snprintf(model_dir, sizeof model_dir, "%s", test_data_path(rel + strlen(prefix)));
        snprintf(ckpt, sizeof ckpt, "%s/best.ckpt", model_dir);
        snprintf(h5, sizeof h5, "%s/best_model.h5", model_dir);
        if (file_exists(ckpt)) {
            check_stage(case_dir, case_id, model_dir, cJSON_GetArrayItem(calls, i), CASE_CKPT);
            n_cases_run++;
        } else if (file_exists(h5)) {
            case_kind kind = strncmp(case_id, "legacy_kerasT_", 14) == 0 ? CASE_LEGACY_KERAS
                                                                         : CASE_LEGACY_PORT;
            check_stage(case_dir, case_id, model_dir, cJSON_GetArrayItem(calls, i), kind);
            n_legacy_run++;
        }
    }
    cJSON_Delete(man);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The case ids of SLEAPC_REFERENCE_CASES, or NULL for every case. */
static const char *case_filter(void)
{
    const char *f = getenv("SLEAPC_REFERENCE_CASES");
    return f && *f ? f : NULL;
}

static bool case_selected(const char *id)
{
    const char *f = case_filter();
    if (!f)
        return true;
    size_t n = strlen(id);
    for (const char *p = f; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, id, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static int n_selected_run;

/* Every case of one reference folder, in name order. */
static void check_folder(const char *folder)
{
    DIR *d = opendir(test_data_path(folder));
    CHECK_MSG(d != NULL, "no folder %s", folder);
    if (!d)
        return;
    char *names[512];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 512)
        if (e->d_name[0] != '.' && !strstr(e->d_name, ".json") && !strstr(e->d_name, ".md"))
            names[n++] = strdup(e->d_name);  /* case folders; ids may hold "thr0.75" */
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (int i = 0; i < n; i++) {
        /* SLEAPC_TEST_QUICK: the first case of each model type (unless
         * SLEAPC_REFERENCE_CASES names the cases). */
        if (!case_selected(names[i]) || (!case_filter() && !test_quick_case(names[i]))) {
            free(names[i]);
            continue;
        }
        n_selected_run++;
#ifdef SLEAPC_SANITIZED
        /* Under the sanitizers one frame of each backbone model suffices:
         * the names sort as pairs of frames of one model. */
        if (strcmp(folder, "reference-backbones") != 0 || i % 2 == 0)
#endif
            check_case(folder, names[i]);
        free(names[i]);
    }
}

int main(void)
{
    test_require_data();
    /* auto as the user gets it: the tests' SLEAPC_CONV=direct pin off. */
    test_setenv("SLEAPC_CONV", NULL);
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    if (only && *only) {
        bool runs = false;
        for (int i = 0; i < sleapc__backend_count(); i++)
            runs = runs || (strcmp(sleapc__backend_factory(i)->name, only) == 0 &&
                            sleapc__backend_factory(i)->score() > 0);
        if (!runs) {
            printf("skipped: backend %s is not built or cannot run here\n", only);
            return 77;
        }
    }
    /* Which microkernels the native backend runs on this CPU. */
    printf("native microkernels: %s\n", sleapc__native_ukernels_best()->name);
    const char *filter = case_filter();
    if (filter) {
        check_folder("reference");
        check_folder("reference-backbones");
        int n_listed = 1;
        for (const char *p = filter; *p; p++)
            n_listed += *p == ',';
        CHECK_MSG(n_selected_run == n_listed, "SLEAPC_REFERENCE_CASES: %d of %d cases found",
                  n_selected_run, n_listed);
        return test_finish();
    }
    check_folder("reference");
    /* The folder holds checkpoint cases of all six model types. */
    CHECK_MSG(n_cases_run >= 6, "only %d checkpoint stages found", n_cases_run);
    /* And legacy cases of both kinds (README "Legacy (Keras) cases"). */
    CHECK_MSG(n_legacy_run > n_legacy_differ && n_legacy_differ >= 3,
              "legacy stages: %d run, %d of them sleap-nn's port", n_legacy_run, n_legacy_differ);
    /* ConvNeXt and SwinT (README of reference-backbones): 8 cases, 10 stages. */
    int before = n_cases_run;
    check_folder("reference-backbones");
    /* One frame of each backbone model (sanitizers, SLEAPC_TEST_QUICK): 5. */
    int min_backbone_stages = test_quick() ? 5 : 10;
#ifdef SLEAPC_SANITIZED
    min_backbone_stages = 5;
#endif
    CHECK_MSG(n_cases_run - before >= min_backbone_stages, "only %d backbone stages found",
              n_cases_run - before);
    if (n_small_skipped)
        printf("%d stages above %.1f GFLOP left out on a software device (SLEAPC_TEST_FULL=1 "
               "runs them)\n",
               n_small_skipped, SOFTWARE_GFLOP);
    CHECK_MSG(n_heads_compared > 0, "no head compared");
    /* Every Winograd tile size, and auto, ran on some stage of every
     * checkpoint model type at least (the folder's first cases). */
    for (int k = 0; k < N_WINOGRAD_RUNS && selected("native"); k++)
        CHECK_MSG(n_wino_runs[k] >= 6, "Winograd run %d ran on only %d stages", k,
                  n_wino_runs[k]);
    return test_finish();
}
