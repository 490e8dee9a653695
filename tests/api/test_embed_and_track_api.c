/* sleapc_embed_and_track's refusals: missing arguments, tracker options it
 * cannot run (checked before the embedding pass), an output over the input
 * or in a format that is not .slp; nothing is written by any of them. Then
 * one run (DeepSORT on 0.3.5's top-down detections, vectors dropped): the
 * output has tracks and no vectors. sleap-nn's values on that run:
 * test_cli_predict_embed_track. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "io/predictions/predictions_format.h"
#include "sleapc/embedding.h"
#include "test_util.h"

#define MODEL SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families/models/embedding"
#define DETECTIONS "sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp"

static void expect_fails(const char *what, sleapc_status st, const char *msg, const char *out)
{
    CHECK_MSG(st == SLEAPC_ERR_INVALID_ARG, "%s: %s (%s)", what, sleapc_status_str(st),
              sleapc_last_error());
    CHECK_MSG(strstr(sleapc_last_error(), msg) != NULL, "%s: \"%s\" lacks \"%s\"", what,
              sleapc_last_error(), msg);
    if (out)
        CHECK_MSG(access(out, F_OK) != 0, "%s: %s was written", what, out);
}

int main(void)
{
    test_require_data();
    CHECK(chdir(test_data_dir()) == 0); /* the detections' video path is the data root's */
    sleapc_model *m = NULL;
    CHECK_OK(sleapc_model_load(MODEL, &m));
    if (!m)
        return test_finish();
    const char *out = test_tmp_path("tracked.slp");
    sleapc_tracking_opts t = sleapc_tracking_opts_default();
    t.tracker = "deepsort";

    expect_fails("no tracking options",
                 sleapc_embed_and_track(m, DETECTIONS, out, NULL, NULL, false, NULL),
                 "tracking are required", out);
    sleapc_tracking_opts bad = t;
    bad.tracker = "bytetrack";
    bad.appearance_threshold = "0.5";
    expect_fails("--appearance_threshold with a geometry tracker",
                 sleapc_embed_and_track(m, DETECTIONS, out, NULL, &bad, false, NULL),
                 "--appearance_threshold only applies to the appearance trackers", out);
    bad = t;
    bad.appearance_threshold = "near";
    expect_fails("--appearance_threshold near",
                 sleapc_embed_and_track(m, DETECTIONS, out, NULL, &bad, false, NULL),
                 "'auto' or a cosine in [-1, 1]", out);
    expect_fails("-o over the input",
                 sleapc_embed_and_track(m, DETECTIONS, DETECTIONS, NULL, &t, false, NULL),
                 "is the input", NULL);
    const char *csv = test_tmp_path("tracked.csv");
    expect_fails("a .csv output", sleapc_embed_and_track(m, DETECTIONS, csv, NULL, &t, false, NULL),
                 "writes a .slp only", csv);

    int64_t n = 0;
    CHECK_OK(sleapc_embed_and_track(m, DETECTIONS, out, NULL, &t, false, &n));
    CHECK_MSG(n == 40, "%lld embedded, expected 40", (long long)n);
    sleapc_predictions pr;
    if (sleapc__predictions_read(out, &pr, NULL) == SLEAPC_OK) {
        CHECK_MSG(pr.n_tracks == 2 && pr.emb_dim == 0, "%d tracks, vectors of %d", pr.n_tracks,
                  pr.emb_dim);
        sleapc__predictions_free(&pr);
    } else {
        CHECK_MSG(false, "%s unreadable", out);
    }
    sleapc_model_destroy(m);
    return test_finish();
}
