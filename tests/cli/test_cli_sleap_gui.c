/* The command lines the SLEAP 1.6.6 GUI runs (sleap/gui/learning/runners.py,
 * make_predict_cli_call: `--gui`, `--data_path PROJECT.slp --video_index N`,
 * `--frames X,-Y` for [X, Y], the tracking and overlap-filter options it
 * adds), given to sleapc in sleap-nn's place, on small_robot_minimal.slp
 * (166 frames, user labels on frames 0 and 79, the video recorded under
 * another folder and found beside the labels file):
 *   - "predict entire video" with --exclude_user_labeled: every frame of the
 *     range but the labelled one, tracked with optical flow (which reads the
 *     video where the input found it);
 *   - the written .slp names the video where it was found, as sleap-io does;
 *   - the progress lines on stdout are JSON, as the GUI parses them. */
#include <stdlib.h>
#include <string.h>

#include "core/results.h"
#include "io/predictions/predictions_format.h"
#include "test_util.h"

static char args[16384], out[2048];

int main(void)
{
    test_require_data();
    const char *slp = "sleap-nn-assets/datasets/small_robot_minimal.slp";
    char slp_path[2048], model[2048];
    snprintf(slp_path, sizeof slp_path, "%s", test_data_path(slp));
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    snprintf(out, sizeof out, "%s/gui.predictions.slp", test_tmp_dir());
    snprintf(args, sizeof args,
             "predict --gui --data_path '%s' --video_index 0 --frames 0,-20 --model_paths '%s' "
             "-o '%s' --device cpu --batch_size 4 --peak_threshold 0.2 --max_instances 1 "
             "--exclude_user_labeled --tracking --track_matching_method hungarian "
             "--tracking_window_size 5 --candidates_method local_queues --max_tracks 1 "
             "--use_flow --post_connect_single_breaks --tracking_target_instance_count 1 "
             "--scoring_reduction robust_quantile --robust_best_instance 0.95 "
             "--features centroids --scoring_method euclidean_dist --filter_overlapping "
             "--filter_overlapping_method iou --filter_overlapping_threshold 0.8",
             slp_path, model, out);
    int rc = test_run_cli_stdout(args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, test_cli_output());
    /* Every stdout line is a JSON object (the GUI's progress reader). */
    const char *o = test_cli_output();
    int n_lines = 0;
    for (const char *l = o; l && *l; n_lines++) {
        CHECK_MSG(*l == '{', "stdout line %d is not JSON: %.60s", n_lines, l);
        const char *nl = strchr(l, '\n');
        l = nl ? nl + 1 : NULL;
    }
    CHECK(n_lines > 0);

    sleapc_predictions pr = {0};
    int64_t n_user = 0;
    CHECK_OK(sleapc__predictions_read(out, &pr, &n_user));
    /* Frames 0-20, less the labelled frame 0 (sleap-nn 0.3.5, #762). */
    CHECK_MSG(pr.n_frames == 20, "%lld frames predicted", (long long)pr.n_frames);
    for (int64_t k = 0; k < pr.n_frames; k++)
        CHECK_MSG(pr.frames[k].frame_idx == k + 1, "frame %lld is %lld", (long long)k,
                  (long long)pr.frames[k].frame_idx);
    CHECK(pr.n_tracks == 1);
    CHECK(pr.n_videos == 1 && pr.videos &&
          strstr(pr.videos[0].filename, "sleap-nn-assets/datasets/small_robot.mp4") != NULL);
    sleapc__predictions_free(&pr);

    /* "0,-20" is a range only with the comma-dash form; "0,20" lists two. */
    snprintf(args, sizeof args,
             "predict --data_path '%s' --video_index 0 --frames 3,40 --model_paths '%s' -o '%s' "
             "--quiet",
             slp_path, model, out);
    CHECK(test_run_cli(args) == 0);
    memset(&pr, 0, sizeof pr);
    CHECK_OK(sleapc__predictions_read(out, &pr, &n_user));
    CHECK(pr.n_frames == 2 && pr.frames[0].frame_idx == 3 && pr.frames[1].frame_idx == 40);
    sleapc__predictions_free(&pr);
    return test_finish();
}
