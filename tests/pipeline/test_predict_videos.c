/* The main job end to end, on real inputs, all frames: top-down on
 * centered_pair_small.mp4, single instance on small_robot.mp4, bottom-up on
 * minimal_instance.pkg.slp (its embedded frames). Each run writes a .slp that
 * must read back identically to what the predictor produced, and the frames
 * that have reference cases must agree with sleap-nn within 0.5 px (the
 * reference frames were decoded by the ffmpeg command line; decoders may
 * differ by a grey level or two). Under the sanitizers, and with
 * SLEAPC_TEST_QUICK=1 (`make check`), a long video runs a slice: its first
 * frames and every frame with a reference case, so the batching, seeking,
 * writing and reference checks all still run. */
#include <math.h>

#include "../layers/ops_ref_cases.h"
#include "io/slp/slp_read.h"
#include "sleapc/input.h"

#define PX_TOL 0.5
/* Frames run under the sanitizers (and SLEAPC_TEST_QUICK) from a video with
 * more default frames. */
#define SANITIZED_SLICE 64

/* Everything the predictor produced, collected after each batch. */
typedef struct collected {
    sleapc_predictor *p;
    const int64_t *frames;   /* frame index of each predicted frame, in order */
    int64_t next;            /* frames collected so far */
    int64_t n_nodes;
    int64_t n_insts, cap;
    int64_t *inst_frame;
    float *points, *scores, *inst_scores;
} collected;

static void collect(const sleapc_progress *pr, void *user)
{
    collected *c = user;
    (void)pr;
    for (int k = 0; k < sleapc_predictor_n_frames(c->p); k++, c->next++) {
        for (int i = 0; i < test_n_instances(c->p, k); i++) {
            if (c->n_insts == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 256;
                c->inst_frame = realloc(c->inst_frame, (size_t)c->cap * sizeof(int64_t));
                c->points = realloc(c->points, (size_t)(c->cap * c->n_nodes * 2) * sizeof(float));
                c->scores = realloc(c->scores, (size_t)(c->cap * c->n_nodes) * sizeof(float));
                c->inst_scores = realloc(c->inst_scores, (size_t)c->cap * sizeof(float));
            }
            test_instance in;
            test_read_instance(c->p, k, i, &in);
            c->inst_frame[c->n_insts] = c->frames[c->next];
            memcpy(c->points + c->n_insts * c->n_nodes * 2, in.points,
                   (size_t)c->n_nodes * 2 * sizeof(float));
            memcpy(c->scores + c->n_insts * c->n_nodes, in.point_scores,
                   (size_t)c->n_nodes * sizeof(float));
            c->inst_scores[c->n_insts] = in.score;
            c->n_insts++;
        }
    }
}

/* The .slp holds exactly the collected instances, frame by frame. */
static void check_read_back(const char *slp_path, const collected *c)
{
    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(slp_path, &r));
    if (!r)
        return;
    int64_t k = 0, mismatches = 0;
    for (int64_t f = 0; f < r->n_frames; f++) {
        const sleapc_slp_frame *fr = &r->frames[f];
        for (int64_t i = 0; i < fr->n_instances; i++, k++) {
            const sleapc_slp_instance *in = &r->instances[fr->first_instance + i];
            if (k >= c->n_insts || c->inst_frame[k] != fr->frame_idx || !in->predicted) {
                mismatches++;
                continue;
            }
            mismatches += (float)in->score != c->inst_scores[k];
            for (int64_t n = 0; n < c->n_nodes; n++) {
                const sleapc_slp_point *pt = &r->points[in->first_point + n];
                const float *want = c->points + (k * c->n_nodes + n) * 2;
                bool miss = isnan(want[0]);
                if (miss)
                    mismatches += !(isnan(pt->x) || !pt->visible);
                else
                    mismatches += (float)pt->x != want[0] || (float)pt->y != want[1] ||
                                  (float)pt->score != c->scores[k * c->n_nodes + n];
            }
        }
    }
    CHECK_MSG(k == c->n_insts, "%s: %lld instances read back, %lld predicted", slp_path,
              (long long)k, (long long)c->n_insts);
    CHECK_MSG(mismatches == 0, "%s: %lld values differ after reading back", slp_path,
              (long long)mismatches);
    sleapc__slp_close(r);
}

/* Reference cases of this source: non-empty slots, in order, within PX_TOL. */
static void check_reference(const collected *c, const char *prefix, int *n_checked)
{
    static ref_cases cases;
    ref_list_cases(&cases);
    for (int ci = 0; ci < cases.n; ci++) {
        const char *id = cases.ids[ci];
        if (strncmp(id, prefix, strlen(prefix)) != 0 || strstr(id, "_crop") || strstr(id, "_thr"))
            continue;
        cJSON *m = ref_manifest(id);
        const cJSON *src = ref_obj(m, "source");
        /* Videos name the frame index; package frames their source frame number. */
        int64_t frame = (int64_t)ref_num(src, "frame_idx", ref_num(src, "source_frame_number", -1));
        bool reliable = ref_bool(m, "reliable");
        cJSON_Delete(m);
        sleapc_tensor kp = {0};
        if (!reliable || !ref_load(id, "out.pred_keypoints", &kp))
            continue;
        int64_t I = kp.shape[1], N = kp.shape[2], k = 0;
        while (k < c->n_insts && c->inst_frame[k] != frame)
            k++;
        double worst = 0;
        for (int64_t i = 0; i < I; i++) {
            const float *want = (const float *)kp.data + i * N * 2;
            bool any = false;
            for (int64_t q = 0; q < 2 * N; q++)
                any = any || !isnan(want[q]);
            if (!any)
                continue;
            CHECK_MSG(k < c->n_insts && c->inst_frame[k] == frame, "%s: instance %lld missing", id,
                      (long long)i);
            if (k >= c->n_insts || c->inst_frame[k] != frame)
                break;
            for (int64_t q = 0; q < 2 * N; q++) {
                float got = c->points[k * N * 2 + q];
                CHECK_MSG(isnan(got) == isnan(want[q]), "%s: missing points differ", id);
                if (!isnan(got) && !isnan(want[q]))
                    worst = fmax(worst, fabs(got - want[q]));
            }
            k++;
        }
        CHECK_MSG(worst <= PX_TOL, "%s: keypoints off by %.3f px", id, worst);
        printf("%s: max error %.4f px\n", id, worst);
        (*n_checked)++;
        sleapc__free(kp.data);
    }
}

/* The first `keep` of frames (ascending), then those of them that a
 * reference case of prefix names; at most cap. */
static int64_t slice_frames(const int64_t *frames, int64_t n, const char *prefix, int64_t *out,
                            int64_t cap)
{
    int64_t k = 0;
    for (; k < n && k < SANITIZED_SLICE; k++)
        out[k] = frames[k];
    static ref_cases cases;
    ref_list_cases(&cases);
    for (int ci = 0; ci < cases.n && k < cap; ci++) {
        if (strncmp(cases.ids[ci], prefix, strlen(prefix)) != 0)
            continue;
        cJSON *m = ref_manifest(cases.ids[ci]);
        const int64_t frame = (int64_t)ref_num(ref_obj(m, "source"), "frame_idx", -1);
        cJSON_Delete(m);
        bool listed = false, later = false;
        for (int64_t i = 0; i < k; i++)
            listed = listed || out[i] == frame;
        for (int64_t i = SANITIZED_SLICE; i < n; i++)
            later = later || frames[i] == frame;
        if (!listed && later)
            out[k++] = frame;
    }
    /* Ascending, as the default frames are. */
    for (int64_t i = 1; i < k; i++)
        for (int64_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            const int64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return k;
}

static void run(const char *name, const char *input, const char *m1, const char *m2,
                const char *ref_prefix, int64_t want_frames)
{
    char a[2048], b[2048], in_path[2048], out[1024];
    snprintf(a, sizeof a, "%s", test_data_path(m1));
    if (m2)
        snprintf(b, sizeof b, "%s", test_data_path(m2));
    snprintf(in_path, sizeof in_path, "%s", test_data_path(input));
    snprintf(out, sizeof out, "%s/%s.slp", test_tmp_dir(), name);
    const char *paths[2] = {a, b};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.n_threads = 2;
    o.backend = "native";
    sleapc_predictor *p = NULL;
    sleapc_input *in = NULL;
    sleapc_writer *w = NULL;
    CHECK_OK(sleapc_predictor_create(paths, m2 ? 2 : 1, &o, &p));
    CHECK_OK(sleapc_input_open_compat(in_path, 0, SLEAPC_COMPAT_SLEAP_NN_0_3_3, &in));
    if (!p || !in) {
        sleapc_predictor_destroy(p);
        sleapc_input_close(in);
        return;
    }
    CHECK(sleapc_input_n_default_frames(in) == want_frames);
    const int64_t *frames = sleapc_input_default_frames(in);
    int64_t n_frames = want_frames;
    bool sliced = test_quick();
#ifdef SLEAPC_SANITIZED
    sliced = true;
#endif
    int64_t slice[SANITIZED_SLICE + 16];
    if (sliced && n_frames > SANITIZED_SLICE) {
        n_frames = slice_frames(frames, want_frames, ref_prefix, slice, SANITIZED_SLICE + 16);
        frames = slice;
    }
    sleapc_video_info vi = sleapc_input_video_info(in);
    CHECK_OK(sleapc_writer_open(out, p, &vi, 1, &w));
    collected c = {.p = p, .frames = frames, .n_nodes = test_n_nodes(p)};
    sleapc_run_opts ro = sleapc_run_opts_default();
    ro.progress = collect;
    ro.user = &c;
    CHECK_OK(sleapc_predict_input(p, in, frames == sleapc_input_default_frames(in) ? NULL : frames,
                                  frames == sleapc_input_default_frames(in) ? 0 : n_frames, w, &ro));
    CHECK_OK(sleapc_writer_close(w, NULL));
    CHECK(c.next == n_frames);
    check_read_back(out, &c);
    int n_checked = 0;
    check_reference(&c, ref_prefix, &n_checked);
    CHECK_MSG(n_checked >= 1, "%s: no reference frame checked", name);
    printf("%s: %lld frames, %lld instances, %d reference frames\n", name, (long long)c.next,
           (long long)c.n_insts, n_checked);
    free(c.inst_frame);
    free(c.points);
    free(c.scores);
    free(c.inst_scores);
    sleapc_predictor_destroy(p);
    sleapc_input_close(in);
}

int main(void)
{
    test_require_data();
    run("topdown", "sleap-nn-assets/datasets/centered_pair_small.mp4",
        "sleap-nn-assets/model_ckpts/minimal_instance_centroid",
        "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance", "topdown__centered_pair",
        1100);
    run("single_instance", "sleap-nn-assets/datasets/small_robot.mp4",
        "sleap-nn-assets/model_ckpts/minimal_instance_single_instance", NULL,
        "single_instance__small_robot", 166);
    run("bottomup", "sleap-nn-assets/datasets/minimal_instance.pkg.slp",
        "sleap-nn-assets/model_ckpts/minimal_instance_bottomup", NULL, "bottomup__pkg", 1);
    return test_finish();
}
