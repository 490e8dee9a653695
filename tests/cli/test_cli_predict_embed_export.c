/* `sleapc predict --save_embeddings slp` with sleap-nn 0.3.5's ONNX export of
 * the re-ID embedding model (tests/goldens/sleapnn-0.3.5-families/exports/
 * embedding): the graph standardizes each crop itself, so sleapc hands it
 * the crops as cut (uint8) and never standardizes them. Against the case
 * exports/cases/embedding__topdown_slp: onnxruntime's vectors of that export
 * on sleap-nn's own crops of the same 40 detections, in the same order, every
 * element within 1e-5 (the README's tolerance); also printed, the distance
 * to the checkpoint path's vectors. On the default backend, then on every
 * other backend built and usable here (Vulkan included where a device
 * exists). The export embeds detections only: as a pose model on a video it
 * is refused with the reason. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "sleapc/runner.h"
#include "test_util.h"

#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define MODEL FAMILIES "/exports/embedding"
#define CASE FAMILIES "/exports/cases/embedding__topdown_slp"
#define DETECTIONS "sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp"
#define VIDEO "sleap-nn-assets/datasets/centered_pair_small.mp4"
#define TOL 1e-5

/* The largest element difference between got (n vectors of dim, instance
 * order) and key `key` of the case's instances; -1 when they do not line up. */
static double worst_against(const cJSON *exp, const char *key, const float *got, int64_t n,
                            int64_t dim)
{
    double worst = 0;
    int64_t k = 0;
    const cJSON *fr, *inst;
    cJSON_ArrayForEach(fr, cJSON_GetObjectItem(exp, "frames"))
    {
        cJSON_ArrayForEach(inst, cJSON_GetObjectItem(fr, "instances"))
        {
            const cJSON *v = cJSON_GetObjectItem(inst, key);
            if (!cJSON_IsArray(v))
                continue;
            if (k >= n || cJSON_GetArraySize(v) != dim)
                return -1;
            for (int64_t d = 0; d < dim; d++)
                worst = fmax(worst, fabs(cJSON_GetArrayItem(v, (int)d)->valuedouble -
                                         (double)got[k * dim + d]));
            k++;
        }
    }
    return k == n ? worst : -1;
}

static void compare(const char *out, const char *backend)
{
    cJSON *exp = test_load_json(CASE "/expected.json");
    CHECK_MSG(exp != NULL, "cannot read %s/expected.json", CASE);
    sleapc_h5 *got = NULL;
    CHECK_OK(sleapc__h5_open(out, &got));
    float *v = NULL;
    sleapc_h5_info info = {0};
    if (got)
        CHECK_OK(sleapc__h5_read(got, "embeddings/vectors", SLEAPC_H5_F32, (void **)&v, &info));
    if (exp && v) {
        const int64_t n = info.ndim == 2 ? info.shape[0] : 0,
                      dim = info.ndim == 2 ? info.shape[1] : 0;
        double w = worst_against(exp, "vector", v, n, dim);
        double wc = worst_against(exp, "checkpoint_vector", v, n, dim);
        printf("%s: %lld vectors of %lld: worst element difference %.3g from onnxruntime's "
               "(tolerance %.0e), %.3g from sleap-nn's checkpoint path\n",
               backend, (long long)n, (long long)dim, w, TOL, wc);
        CHECK_MSG(n == 40 && w >= 0 && w <= TOL, "%s: %lld vectors, worst %.3g", backend,
                  (long long)n, w);
    }
    sleapc__free(v);
    sleapc__h5_close(got);
    cJSON_Delete(exp);
}

/* The detections embedded on backend (NULL: the default), against the case. */
static void embed_on(const char *backend)
{
    char out[1024], args[4096], opt[64] = "";
    if (backend)
        snprintf(opt, sizeof opt, " --backend %s", backend);
    snprintf(out, sizeof out, "%s/embedded_export_%s.slp", test_tmp_dir(),
             backend ? backend : "default");
    snprintf(args, sizeof args, "predict --data_path %s -m '%s' --save_embeddings slp%s -o '%s'",
             DETECTIONS, MODEL, opt, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), "40 detections embedded"), "%s: rc %d: %s",
              backend ? backend : "default", rc, test_cli_output());
    if (rc == 0)
        compare(out, backend ? backend : "default");
}

int main(void)
{
    test_require_data();
    /* The relative video path in the detections is the data root's. */
    CHECK(chdir(test_data_dir()) == 0);
    embed_on(NULL);
    for (int i = 0; i < sleapc_backend_count(); i++) {
        const char *name = sleapc_backend_name(i);
        if (strcmp(name, "native") != 0 && sleapc_backend_available(i)) /* native: the default */
            embed_on(name);
    }
    char args[4096], bad[1024];
    snprintf(bad, sizeof bad, "%s/refused.slp", test_tmp_dir());
    snprintf(args, sizeof args, "predict -i %s -m '%s' -o '%s'", VIDEO, MODEL, bad);
    int rc = test_run_cli(args);
    CHECK_MSG(rc != 0 && strstr(test_cli_output(), "embedding (re-ID) export"), "rc %d: %s", rc,
              test_cli_output());
    CHECK_MSG(access(bad, F_OK) != 0, "%s was written", bad);
    return test_finish();
}
