/* --frames on a labels file, as sleap-nn 0.3.5 reads it (its LabelsProvider):
 * positions in the file's list of labeled frames, not frame numbers; a
 * position past the list's end skipped with a warning; ignored (with a
 * warning here) together with a frame filter such as --only_labeled_frames.
 * --compat 0.3.3 keeps frame numbers. The expected frames are read from the
 * input labels file itself. */
#include <stdlib.h>
#include <string.h>

#include "sleapc/input.h"
#include "sleapc/sleapc.h"
#include "test_util.h"

static char labels[2048], model[2048], args[8192];
static int64_t *labeled;
static int64_t n_labeled;

/* Runs predict with `extra` into out.slp; the frames written, or -1 entries
 * when it failed. */
static int64_t predicted(const char *extra, int64_t **frames)
{
    const char *out = test_tmp_path("positions.slp");
    remove(out);
    snprintf(args, sizeof args, "predict --data_path '%s' -m '%s' %s -o '%s'", labels, model,
             extra, out);
    *frames = NULL;
    if (test_run_cli(args) != 0) {
        CHECK_MSG(0, "%s: %s", extra, test_cli_output());
        return -1;
    }
    int64_t n = -1;
    CHECK_OK(sleapc_labels_select_frames(out, 0, SLEAPC_FRAMES_ALL_LABELED, frames, &n));
    return n;
}

static void expect(const char *extra, const int64_t *want, int64_t n_want, const char *warning)
{
    int64_t *got = NULL;
    int64_t n = predicted(extra, &got);
    CHECK_MSG(n == n_want, "%s: %lld frames, want %lld", extra, (long long)n, (long long)n_want);
    for (int64_t i = 0; i < n && i < n_want; i++)
        CHECK_MSG(got[i] == want[i], "%s: frame %lld, want %lld", extra, (long long)got[i],
                  (long long)want[i]);
    if (warning)
        CHECK_MSG(strstr(test_cli_output(), warning) != NULL, "%s: no warning '%s' in %s", extra,
                  warning, test_cli_output());
    sleapc_free(got);
}

int main(void)
{
    test_require_data();
    snprintf(labels, sizeof labels, "%s",
             test_data_path("sleap-nn-assets/datasets/small_robot_minimal.slp"));
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    CHECK_OK(sleapc_labels_select_frames(labels, 0, SLEAPC_FRAMES_ALL_LABELED, &labeled,
                                         &n_labeled));
    /* The file labels two frames, the second not frame 1 (else positions and
     * numbers could not be told apart). */
    CHECK(n_labeled == 2 && labeled[1] != 1);
    if (n_labeled != 2 || labeled[1] == 1)
        return test_finish();

    expect("--frames 1", labeled + 1, 1, NULL);
    expect("--frames 0-1", labeled, 2, NULL);
    expect("--frames 1,0,1", labeled, 2, NULL);
    /* Past the end: skipped, said so. */
    expect("--frames 1,5", labeled + 1, 1, "1 position(s) past its labeled frames skipped");
    /* With a filter sleap-nn does not apply --frames at all. */
    expect("--frames 1 --only_labeled_frames", labeled, 2, "--frames does not apply");
    /* The 0.3.3 choice: frame numbers of the video. */
    const int64_t one = 1;
    expect("--frames 1 --compat 0.3.3", &one, 1, NULL);

    /* The library's function: positions in any order, repeats, beyond. */
    const int64_t pos[] = {1, 7, 1, 0, 7};
    int64_t *fr = NULL, n = 0, beyond = 0;
    CHECK_OK(sleapc_labels_frames_at_positions(labels, 0, pos, 5, &fr, &n, &beyond));
    CHECK(n == 2 && fr && fr[0] == labeled[0] && fr[1] == labeled[1] && beyond == 1);
    sleapc_free(fr);
    CHECK(sleapc_labels_frames_at_positions(labels, 3, pos, 5, &fr, &n, &beyond) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_labels_frames_at_positions(labels, 0, NULL, 2, &fr, &n, &beyond) ==
          SLEAPC_ERR_INVALID_ARG);
    sleapc_free(labeled);
    return test_finish();
}
