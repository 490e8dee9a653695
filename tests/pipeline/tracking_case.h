/* Reading the tracking reference cases (tracking/<case>/): options.json to
 * tracker options, input.json frames to plain arrays, and, for the flow case,
 * the video frames as grayscale. Shared by the tests and the benchmark. */
#ifndef SLEAPC_TESTS_TRACKING_CASE_H
#define SLEAPC_TESTS_TRACKING_CASE_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/results.h"
#include "pipeline/tracking/tracker.h"
#include "sleapc/video.h"

static inline cJSON *tracking_case_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cJSON *j = NULL;
    if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = 0;
        j = cJSON_Parse(buf);
    }
    free(buf);
    fclose(f);
    return j;
}

static inline int tracking_case_n_nodes(const cJSON *input)
{
    const cJSON *sk = cJSON_GetObjectItem(input, "skeleton");
    return cJSON_GetArraySize(cJSON_GetObjectItem(sk, "nodes"));
}

/* A number, or one of the strings "inf", "-inf", "nan". */
static inline double tracking_case_number(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (cJSON_IsString(v)) {
        if (!strcmp(v->valuestring, "inf"))
            return INFINITY;
        if (!strcmp(v->valuestring, "-inf"))
            return -INFINITY;
    }
    return NAN;
}

static inline int case_enum(const cJSON *obj, const char *key, const char *const *names, int n,
                            int dflt, bool *ok)
{
    const cJSON *v = cJSON_GetObjectItem(obj, key);
    if (!v || cJSON_IsNull(v))
        return dflt;
    for (int i = 0; i < n; i++)
        if (cJSON_IsString(v) && !strcmp(v->valuestring, names[i]))
            return i;
    *ok = false;
    return dflt;
}

static inline double case_num(const cJSON *obj, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItem(obj, key);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The tracker sleap-nn ran: "effective_tracker" (after its derived rules)
 * and the post-tracking settings of "tracker_config". */
static inline bool tracking_case_options(const cJSON *options, sleapc_tracker_opts *o)
{
    static const char *const cand[] = {"fixed_window", "local_queues"};
    static const char *const feat[] = {"keypoints", "centroids", "bboxes"};
    static const char *const scor[] = {"oks", "iou", "cosine_sim", "euclidean_dist"};
    static const char *const red[] = {"mean", "max", "robust_quantile"};
    static const char *const match[] = {"hungarian", "greedy"};
    const cJSON *e = cJSON_GetObjectItem(options, "effective_tracker");
    const cJSON *c = cJSON_GetObjectItem(options, "tracker_config");
    if (!e || !c)
        return false;
    bool ok = true;
    *o = sleapc__tracker_opts_default();
    const cJSON *cc = cJSON_GetObjectItem(e, "candidate_class");
    o->candidates = cJSON_IsString(cc) && !strcmp(cc->valuestring, "LocalQueueCandidates")
                        ? SLEAPC_TRACK_LOCAL_QUEUES
                        : SLEAPC_TRACK_FIXED_WINDOW;
    (void)cand;
    o->window_size = (int)case_num(e, "window_size", 5);
    o->min_new_track_points = (int)case_num(e, "min_new_track_points", 0);
    o->min_match_points = (int)case_num(e, "min_match_points", 0);
    o->max_tracks = (int)case_num(e, "max_tracks", -1);
    o->features = (sleapc_track_features)case_enum(e, "features", feat, 3, 0, &ok);
    o->scoring = (sleapc_track_scoring)case_enum(e, "scoring_method", scor, 4, 0, &ok);
    o->reduction = (sleapc_track_reduction)case_enum(e, "scoring_reduction", red, 3, 0, &ok);
    o->robust_best_instance = case_num(e, "robust_best_instance", 1.0);
    o->oks_stddev = case_num(e, "oks_stddev", 0.025);
    o->matching = (sleapc_track_matching)case_enum(e, "track_matching_method", match, 2, 0, &ok);
    o->target_instance_count = (int)case_num(e, "tracking_target_instance_count", 0);
    o->pre_cull_to_target = case_num(e, "tracking_pre_cull_to_target", 0) != 0;
    o->pre_cull_iou_threshold = case_num(e, "tracking_pre_cull_iou_threshold", 0);
    o->clean_instance_count = (int)case_num(c, "tracking_clean_instance_count", 0);
    o->clean_iou_threshold = case_num(c, "tracking_clean_iou_threshold", 0);
    o->post_connect_single_breaks = case_num(c, "post_connect_single_breaks", 0) != 0;
    o->use_flow = case_num(c, "use_flow", 0) != 0;
    o->of_img_scale = case_num(c, "of_img_scale", 1.0);
    o->of_window_size = (int)case_num(c, "of_window_size", 21);
    o->of_max_levels = (int)case_num(c, "of_max_levels", 3);
    return ok;
}

/* One input frame as arrays (grown as needed). */
typedef struct tracking_case_frame {
    int64_t frame_idx;
    int n, cap;
    double *points, *scores, *tscore;
    int *out, *track;
} tracking_case_frame;

static inline bool tracking_case_frame_read(const cJSON *fin, int n_nodes, tracking_case_frame *f)
{
    const cJSON *insts = cJSON_GetObjectItem(fin, "instances");
    f->frame_idx = (int64_t)cJSON_GetObjectItem(fin, "frame_idx")->valuedouble;
    f->n = cJSON_GetArraySize(insts);
    if (f->n > f->cap) {
        free(f->points);
        free(f->scores);
        free(f->tscore);
        free(f->out);
        free(f->track);
        f->cap = f->n;
        f->points = malloc(sizeof(double) * (size_t)f->n * (size_t)n_nodes * 2);
        f->scores = malloc(sizeof(double) * (size_t)f->n);
        f->tscore = malloc(sizeof(double) * (size_t)f->n);
        f->out = malloc(sizeof(int) * (size_t)f->n);
        f->track = malloc(sizeof(int) * (size_t)f->n);
        if (!f->points || !f->scores || !f->tscore || !f->out || !f->track)
            return false;
    }
    for (int k = 0; k < f->n; k++) {
        const cJSON *inst = cJSON_GetArrayItem(insts, k);
        const cJSON *pts = cJSON_GetObjectItem(inst, "points");
        f->scores[k] = tracking_case_number(cJSON_GetObjectItem(inst, "score"));
        for (int j = 0; j < n_nodes; j++) {
            const cJSON *p = cJSON_GetArrayItem(pts, j);
            double *d = f->points + ((size_t)k * (size_t)n_nodes + (size_t)j) * 2;
            if (cJSON_IsArray(p)) {
                d[0] = tracking_case_number(cJSON_GetArrayItem(p, 0));
                d[1] = tracking_case_number(cJSON_GetArrayItem(p, 1));
            } else {
                d[0] = d[1] = NAN;
            }
        }
    }
    return true;
}

static inline void tracking_case_frame_free(tracking_case_frame *f)
{
    free(f->points);
    free(f->scores);
    free(f->tscore);
    free(f->out);
    free(f->track);
    memset(f, 0, sizeof *f);
}

static inline bool tracking_case_in_out(const sleapc_track_frame_out *o, int k)
{
    for (int i = 0; i < o->n_out; i++)
        if (o->out[i] == k)
            return true;
    return false;
}

/* Video frames for the flow case, decoded as the case says (first channel of
 * a grayscale video). */
typedef struct tracking_case_frames {
    sleapc_video *video;
    int64_t h, w, c;
    uint8_t *rgb, *gray;
} tracking_case_frames;

static inline void tracking_case_frames_close(tracking_case_frames *f)
{
    if (!f)
        return;
    sleapc_video_close(f->video);
    free(f->rgb);
    free(f->gray);
    free(f);
}

static inline tracking_case_frames *tracking_case_frames_open(const char *video_path)
{
    tracking_case_frames *f = calloc(1, sizeof *f);
    /* The 0.3.3 tracking references were made on the 0.3.3 decoding. */
    if (!f || sleapc_video_open_compat(video_path, SLEAPC_COMPAT_SLEAP_NN_0_3_3, &f->video) !=
                  SLEAPC_OK) {
        tracking_case_frames_close(f);
        return NULL;
    }
    sleapc_video_shape(f->video, &f->h, &f->w, &f->c);
    f->rgb = malloc((size_t)(f->h * f->w * f->c));
    f->gray = malloc((size_t)(f->h * f->w));
    if (!f->rgb || !f->gray) {
        tracking_case_frames_close(f);
        return NULL;
    }
    return f;
}

static inline bool tracking_case_frame_image(tracking_case_frames *f, int64_t idx,
                                             sleapc_track_frame_in *in)
{
    if (sleapc_video_read(f->video, idx, f->rgb) != SLEAPC_OK)
        return false;
    for (int64_t i = 0; i < f->h * f->w; i++)
        f->gray[i] = f->rgb[i * f->c];
    in->gray = f->gray;
    in->height = f->h;
    in->width = f->w;
    return true;
}

/* Instance at's track as a tracked file names it, into name (cap bytes;
 * "" when untracked): "track_<id>" when by_id (the tracker's public ids),
 * else the run's track name. Whether it is want's (a name, or JSON null:
 * untracked). */
static inline bool tracking_case_track_is(const sleapc_predictions *pr, int64_t at, bool by_id,
                                          const cJSON *want, char *name, size_t cap)
{
    const int got = pr->insts[at].track;
    name[0] = '\0';
    if (got >= 0 && by_id)
        snprintf(name, cap, "track_%d", got);
    else if (got >= 0 && got < pr->n_tracks)
        snprintf(name, cap, "%s", pr->track_names[got]);
    return cJSON_IsNull(want) ? got < 0 : got >= 0 && !strcmp(name, want->valuestring);
}

#endif
