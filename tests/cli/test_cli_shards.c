/* --shard K/N on one video, then `sleapc merge`: the shards get distinct
 * default names in an --output_dir that predict creates, and their merge
 * equals one run over all the frames. Compared: the skeleton, videos,
 * frames (video, index), each frame's instances in order with their
 * points, point scores, instance scores, tracks, tracking scores and the
 * track names; the provenance is not compared. Top-down models on 8 frames
 * of centered_pair_small.mp4 (two animals), tracked:
 * - shards untracked, merged with --tracking: tracking over the joined
 *   frames as the one run tracks;
 * - shards tracked (`sleapc track` on each, as a tracked shard run tracks
 *   from its own first frame), merged without options: the shards' tracks
 *   end at the seam, so merge tracks again (defaults);
 * - a .json and an analysis .h5 of the shards, merged with --tracking.
 * Refused with a message and no output: overlapping shards, another
 * skeleton, another video (a shard's .json edited). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/slp/slp_read.h"
#include "test_util.h"

static char tmp[1024], video[1024], models[4096], single[1024];

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static bool same_float(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* Every compared field of b equals a's (labels for the message). */
static void check_equal_slp(const char *pa, const char *pb)
{
    sleapc_slp *a = NULL, *b = NULL;
    CHECK_OK(sleapc__slp_open(pa, &a));
    CHECK_OK(sleapc__slp_open(pb, &b));
    if (!a || !b) {
        sleapc__slp_close(a);
        sleapc__slp_close(b);
        return;
    }
    CHECK(a->n_skeletons == b->n_skeletons && a->n_skeletons >= 1);
    CHECK(a->skeletons[0].n_nodes == b->skeletons[0].n_nodes);
    CHECK(a->n_videos == b->n_videos && a->n_videos == 1 &&
          strcmp(a->videos[0].filename, b->videos[0].filename) == 0);
    CHECK_MSG(a->n_tracks == b->n_tracks, "tracks %d vs %d", a->n_tracks, b->n_tracks);
    for (int t = 0; t < a->n_tracks && t < b->n_tracks; t++)
        CHECK(strcmp(a->track_names[t], b->track_names[t]) == 0);
    CHECK_MSG(a->n_frames == b->n_frames, "%s: %lld frames, %s: %lld", pa,
              (long long)a->n_frames, pb, (long long)b->n_frames);
    CHECK(a->n_instances == b->n_instances);
    int bad = 0;
    for (int64_t f = 0; f < a->n_frames && f < b->n_frames; f++) {
        const sleapc_slp_frame *fa = &a->frames[f], *fb = &b->frames[f];
        if (fa->video != fb->video || fa->frame_idx != fb->frame_idx ||
            fa->n_instances != fb->n_instances) {
            bad++;
            continue;
        }
        for (int64_t i = 0; i < fa->n_instances; i++) {
            const sleapc_slp_instance *ia = &a->instances[fa->first_instance + i];
            const sleapc_slp_instance *ib = &b->instances[fb->first_instance + i];
            bool same = ia->predicted == ib->predicted && ia->track == ib->track &&
                        same_float(ia->score, ib->score) &&
                        same_float(ia->tracking_score, ib->tracking_score) &&
                        ia->n_points == ib->n_points;
            for (int p = 0; same && p < ia->n_points; p++) {
                const sleapc_slp_point *x = &a->points[ia->first_point + p];
                const sleapc_slp_point *y = &b->points[ib->first_point + p];
                same = same_float(x->x, y->x) && same_float(x->y, y->y) &&
                       same_float(x->score, y->score) && x->visible == y->visible;
            }
            bad += !same;
        }
    }
    CHECK_MSG(bad == 0, "%s vs %s: %d frames or instances differ", pa, pb, bad);
    sleapc__slp_close(a);
    sleapc__slp_close(b);
}

static void predict(const char *extra)
{
    char args[8192];
    snprintf(args, sizeof args, "predict %s -i '%s' --frames 0-7 -q %s", models, video, extra);
    CHECK_MSG(test_run_cli(args) == 0, "%s: %s", extra, test_cli_output());
}

static void merge(const char *args_tail, int want_rc, const char *want_text)
{
    char args[8192];
    snprintf(args, sizeof args, "merge %s", args_tail);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == want_rc, "merge %s: exit %d: %s", args_tail, rc, test_cli_output());
    if (want_text)
        CHECK_MSG(strstr(test_cli_output(), want_text), "merge %s: %s", args_tail,
                  test_cli_output());
}

int main(void)
{
    test_require_data();
    snprintf(tmp, sizeof tmp, "%s", test_tmp_dir());
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));
    char centroid[1024];
    snprintf(centroid, sizeof centroid, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(models, sizeof models, "-m '%s' -m '%s'", centroid,
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));

    /* One run over frames 0-7, tracked. */
    char extra[4096], a[2048], b[2048], out[2048], shard_dir[1200];
    snprintf(single, sizeof single, "%s/single.slp", tmp);
    snprintf(extra, sizeof extra, "-o '%s' --tracking", single);
    predict(extra);

    /* Untracked shards into a folder predict creates: distinct names. */
    snprintf(shard_dir, sizeof shard_dir, "%s/shards/untracked", tmp);
    for (int k = 0; k < 2; k++) {
        snprintf(extra, sizeof extra,
                 "--shard %d/2 --output_dir '%s' --output_format slp,json", k,
                 shard_dir);
        predict(extra);
    }
    snprintf(a, sizeof a, "%s/centered_pair_small.mp4.shard-0-of-2.slp", shard_dir);
    snprintf(b, sizeof b, "%s/centered_pair_small.mp4.shard-1-of-2.slp", shard_dir);
    CHECK_MSG(exists(a) && exists(b), "shard outputs %s, %s", a, b);
    snprintf(out, sizeof out, "%s/merged.slp", tmp);
    snprintf(extra, sizeof extra, "'%s' '%s' '%s' --tracking -q", out, b, a);
    merge(extra, 0, NULL);
    check_equal_slp(single, out);

    /* K is padded to the width of N, so that names sort in order. */
    snprintf(extra, sizeof extra, "--shard 3/10 --output_dir '%s'", shard_dir);
    predict(extra);
    snprintf(out, sizeof out, "%s/centered_pair_small.mp4.shard-03-of-10.slp", shard_dir);
    CHECK_MSG(exists(out), "%s", out);

    /* Tracked shards (each tracked from its own first frame, as a tracked
     * shard run tracks), merged with no options: tracked again. */
    char a2[2048], b2[2048];
    snprintf(a2, sizeof a2, "%s/shard0_tracked.slp", tmp);
    snprintf(b2, sizeof b2, "%s/shard1_tracked.slp", tmp);
    snprintf(extra, sizeof extra, "track -i '%s' -o '%s' -q", a, a2);
    CHECK(test_run_cli(extra) == 0);
    snprintf(extra, sizeof extra, "track -i '%s' -o '%s' -q", b, b2);
    CHECK(test_run_cli(extra) == 0);
    snprintf(out, sizeof out, "%s/merged_tracked.slp", tmp);
    snprintf(extra, sizeof extra, "'%s' '%s' '%s'", out, a2, b2);
    merge(extra, 0, "tracked again");
    check_equal_slp(single, out);
    /* Other formats of the same shards: a .json, and an analysis .h5 (one
     * instance per track and frame: of the tracked shard). */
    snprintf(out, sizeof out, "%s/merged_mixed.slp", tmp);
    snprintf(extra, sizeof extra, "convert '%s' '%s/shard1_tracked.h5' -q", b2, tmp);
    CHECK(test_run_cli(extra) == 0);
    snprintf(extra, sizeof extra,
             "'%s' '%s/centered_pair_small.mp4.shard-0-of-2.json' '%s/shard1_tracked.h5' "
             "--tracking -q",
             out, shard_dir, tmp);
    merge(extra, 0, NULL);
    check_equal_slp(single, out);

    /* Overlap: the same shard twice. */
    snprintf(out, sizeof out, "%s/refused.slp", tmp);
    snprintf(extra, sizeof extra, "'%s' '%s' '%s'", out, a, a2);
    merge(extra, 1, "overlap");
    CHECK(!exists(out));
    /* Another skeleton, another video: shard 1 as .json with a node, then
     * the video, renamed. */
    char json[2048], other[2048];
    snprintf(json, sizeof json, "%s/centered_pair_small.mp4.shard-1-of-2.json", shard_dir);
    snprintf(other, sizeof other, "%s/other.json", tmp);
    const char *const edits[2][3] = {{"\"A\"", "\"Z\"", "different skeletons"},
                                     {"centered_pair_small.mp4\"", "elsewhere.mp4\"",
                                      "different videos"}};
    for (int e = 0; e < 2; e++) {
        size_t n = 0;
        unsigned char *bytes = test_read_file(json, &n);
        char *text = bytes ? malloc(n + 1) : NULL;
        if (text) {
            memcpy(text, bytes, n);
            text[n] = '\0';
        }
        free(bytes);
        char *at = text ? strstr(text, edits[e][0]) : NULL;
        CHECK_MSG(at != NULL, "%s has no %s", json, edits[e][0]);
        if (!at) {
            free(text);
            continue;
        }
        size_t head = (size_t)(at - text), old_len = strlen(edits[e][0]);
        char *edited = malloc(n + 64);
        snprintf(edited, n + 64, "%.*s%s%s", (int)head, text, edits[e][1], at + old_len);
        CHECK(test_write_file(other, edited, strlen(edited)));
        free(edited);
        free(text);
        snprintf(extra, sizeof extra, "'%s' '%s' '%s'", out, a, other);
        merge(extra, 1, edits[e][2]);
        CHECK(!exists(out));
    }
    /* The output may not be one of the inputs. */
    snprintf(extra, sizeof extra, "'%s' '%s' '%s'", a, a, b);
    merge(extra, 1, NULL);
    return test_finish();
}
