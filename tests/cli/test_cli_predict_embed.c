/* `sleapc predict --save_embeddings slp` with a lone re-ID embedding model,
 * run as sleap-nn 0.3.5 ran it for tests/goldens/sleapnn-0.3.5-families case
 * embedding__topdown_slp (from the data root, so the .slp's relative video
 * path resolves as it did there): the file's embeddings/ group against the
 * case's pred.slp written by sleap-nn: the same owners (instance rows) in
 * the same order, every vector within 1e-5 per element (the README's
 * tolerance: float32 convolutions summed in another order), format_id 2.5.
 * Then the refusals: a video instead of a .slp, -o over the input, a pose
 * model, an output that cannot hold vectors; nothing is written by them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "test_util.h"

#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define MODEL FAMILIES "/models/embedding"
#define CASE FAMILIES "/cases/embedding__topdown_slp"
#define DETECTIONS "sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp"
#define VIDEO "sleap-nn-assets/datasets/centered_pair_small.mp4"
#define TOL 1e-5

static void *read_col(sleapc_h5 *f, const char *name, sleapc_h5_type type, sleapc_h5_info *info)
{
    void *d = NULL;
    CHECK_OK(sleapc__h5_read(f, name, type, &d, info));
    return d;
}

static void compare(const char *out)
{
    sleapc_h5 *want = NULL, *got = NULL;
    CHECK_OK(sleapc__h5_open(CASE "/pred.slp", &want));
    CHECK_OK(sleapc__h5_open(out, &got));
    if (!want || !got) {
        sleapc__h5_close(want);
        sleapc__h5_close(got);
        return;
    }
    sleapc_h5_info wi = {0}, gi = {0}, woi = {0}, goi = {0};
    float *wv = read_col(want, "embeddings/vectors", SLEAPC_H5_F32, &wi);
    float *gv = read_col(got, "embeddings/vectors", SLEAPC_H5_F32, &gi);
    int64_t *wo = read_col(want, "embeddings/owner_id", SLEAPC_H5_I64, &woi);
    int64_t *go = read_col(got, "embeddings/owner_id", SLEAPC_H5_I64, &goi);
    CHECK_MSG(wv && gv && wi.n_elems == gi.n_elems, "%lld floats, sleap-nn's %lld",
              (long long)gi.n_elems, (long long)wi.n_elems);
    CHECK(wo && go && woi.n_elems == goi.n_elems);
    int64_t owners_differ = 0;
    for (int64_t i = 0; wo && go && i < woi.n_elems && i < goi.n_elems; i++)
        owners_differ += wo[i] != go[i];
    CHECK_MSG(owners_differ == 0, "%lld owners differ", (long long)owners_differ);
    double worst = 0;
    for (int64_t i = 0; wv && gv && i < wi.n_elems && i < gi.n_elems; i++)
        worst = fmax(worst, fabs((double)wv[i] - gv[i]));
    printf("%lld vectors, worst element difference %.3g (tolerance %.0e)\n",
           (long long)goi.n_elems, worst, TOL);
    CHECK(worst <= TOL);
    double format = 0;
    CHECK_OK(sleapc__h5_attr_double(got, "metadata", "format_id", &format));
    CHECK(format == 2.5);
    sleapc__free(wv);
    sleapc__free(gv);
    sleapc__free(wo);
    sleapc__free(go);
    sleapc__h5_close(want);
    sleapc__h5_close(got);
}

static void refused(const char *args, const char *words, const char *out)
{
    int rc = test_run_cli(args);
    CHECK_MSG(rc != 0 && strstr(test_cli_output(), words), "%s: rc %d: %s", args, rc,
              test_cli_output());
    if (out)
        CHECK_MSG(access(out, F_OK) != 0, "%s was written", out);
}

int main(void)
{
    test_require_data();
    /* The relative video path in the detections is the data root's. */
    CHECK(chdir(test_data_dir()) == 0);
    char out[1024], args[4096];
    snprintf(out, sizeof out, "%s/embedded.slp", test_tmp_dir());
    snprintf(args, sizeof args, "predict --data_path %s -m '%s' --save_embeddings slp -o '%s'",
             DETECTIONS, MODEL, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), "40 detections embedded"), "rc %d: %s", rc,
              test_cli_output());
    if (rc == 0)
        compare(out);

    char bad[1024];
    snprintf(bad, sizeof bad, "%s/refused.slp", test_tmp_dir());
    snprintf(args, sizeof args, "predict -i %s -m '%s' --save_embeddings slp -o '%s'", VIDEO,
             MODEL, bad);
    refused(args, "must be a .slp of detections", bad);
    snprintf(args, sizeof args, "predict --data_path '%s' -m '%s' --save_embeddings slp -o '%s'",
             out, MODEL, out);
    refused(args, "is the input", NULL);
    snprintf(args, sizeof args, "predict --data_path %s -m '%s/models/bbox_ssd' "
             "--save_embeddings slp -o '%s'", DETECTIONS, FAMILIES, bad);
    refused(args, "needs an embedding (re-ID) model", bad);
    snprintf(bad, sizeof bad, "%s/refused.csv", test_tmp_dir());
    snprintf(args, sizeof args, "predict --data_path %s -m '%s' --save_embeddings slp -o '%s'",
             DETECTIONS, MODEL, bad);
    refused(args, "saved in a .slp only", bad);
    return test_finish();
}
