/* eval-tracking reproduces the tracking-quality table of tracking/README.md
 * (and docs/tracking.md): ID switches and IDF1 of SLEAP 1.4's own tracks
 * (clip.predictions.slp) and of sleap-nn's tracker on each case folder
 * (its tracks rebuilt from input.json + expected.json: sleap-nn's own
 * output, not sleapc's), against the true tracks of clip.slp, matching by
 * the mean head/thorax distance within 50 px. The table prints IDF1 to 4
 * decimals, so IDF1 must round to it; switches and tracks are exact. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "pipeline/eval/eval_tracking.h"
#include "test_util.h"

/* sleap-nn's tracked output of one case as labels of gt's video. */
static sleapc_ev_labels *case_labels(const char *dir, const sleapc_ev_labels *gt)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/input.json", dir);
    cJSON *in = test_load_json(path);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    cJSON *ex = test_load_json(path);
    if (!in || !ex) {
        cJSON_Delete(in);
        cJSON_Delete(ex);
        return NULL;
    }
    const cJSON *nodes = cJSON_GetObjectItem(cJSON_GetObjectItem(in, "skeleton"), "nodes");
    const cJSON *tracks = cJSON_GetObjectItem(ex, "tracks_created");
    const cJSON *fin = cJSON_GetObjectItem(in, "frames"), *fex = cJSON_GetObjectItem(ex, "frames");
    const int n_nodes = cJSON_GetArraySize(nodes), n_tracks = cJSON_GetArraySize(tracks);
    const int64_t n_frames = cJSON_GetArraySize(fin);
    int64_t n_insts = 0;
    for (const cJSON *f = fin->child; f; f = f->next)
        n_insts += cJSON_GetArraySize(cJSON_GetObjectItem(f, "instances"));
    sleapc_ev_labels *l = sleapc__calloc(1, sizeof *l);
    l->path = sleapc__strdup(dir);
    l->n_videos = 1;
    l->videos = sleapc__calloc(1, sizeof *l->videos);
    l->videos[0] =
        (sleapc_ev_video){sleapc__strdup(gt->videos[0].filename), NULL, NULL, NULL, -1, -1, -1};
    l->n_skeletons = 1;
    l->n_nodes = n_nodes;
    l->node_names = sleapc__calloc((size_t)n_nodes, sizeof(char *));
    for (int k = 0; k < n_nodes; k++)
        l->node_names[k] = sleapc__strdup(cJSON_GetArrayItem(nodes, k)->valuestring);
    l->n_tracks = n_tracks;
    l->track_names = sleapc__calloc((size_t)n_tracks + 1, sizeof(char *));
    for (int k = 0; k < n_tracks; k++)
        l->track_names[k] = sleapc__strdup(cJSON_GetArrayItem(tracks, k)->valuestring);
    l->frames = sleapc__calloc((size_t)n_frames, sizeof *l->frames);
    l->insts = sleapc__calloc((size_t)n_insts + 1, sizeof *l->insts);
    l->xy = sleapc__malloc(sizeof(double) * 2 * (size_t)(n_insts * n_nodes + 1));
    const cJSON *e = fex->child;
    for (const cJSON *f = fin->child; f && e; f = f->next, e = e->next) {
        const cJSON *insts = cJSON_GetObjectItem(f, "instances");
        const cJSON *names = cJSON_GetObjectItem(e, "track");
        sleapc_ev_frame *fr = &l->frames[l->n_frames++];
        *fr = (sleapc_ev_frame){0, (int64_t)cJSON_GetObjectItem(f, "frame_idx")->valuedouble,
                                l->n_insts, 0};
        /* sleap-nn's output order; instances it dropped are left out */
        for (const cJSON *o = cJSON_GetObjectItem(e, "out")->child; o; o = o->next) {
            const int k = (int)o->valuedouble;
            const cJSON *inst = cJSON_GetArrayItem(insts, k), *name = cJSON_GetArrayItem(names, k);
            int track = -1;
            for (int t = 0; cJSON_IsString(name) && t < n_tracks; t++)
                if (!strcmp(l->track_names[t], name->valuestring))
                    track = t;
            sleapc_ev_inst *di = &l->insts[l->n_insts];
            *di = (sleapc_ev_inst){true, cJSON_GetObjectItem(inst, "score")->valuedouble, track,
                                   n_nodes, l->n_points, 0};
            const cJSON *pts = cJSON_GetObjectItem(inst, "points");
            for (int j = 0; j < n_nodes; j++, l->n_points++) {
                const cJSON *p = cJSON_GetArrayItem(pts, j);
                l->xy[2 * l->n_points] =
                    cJSON_IsArray(p) ? cJSON_GetArrayItem(p, 0)->valuedouble : NAN;
                l->xy[2 * l->n_points + 1] =
                    cJSON_IsArray(p) ? cJSON_GetArrayItem(p, 1)->valuedouble : NAN;
            }
            l->n_insts++;
            fr->n++;
        }
    }
    cJSON_Delete(in);
    cJSON_Delete(ex);
    return l;
}

static double metric(const sleapc_et_result *r, const char *key)
{
    const sleapc_pyobj *v = sleapc__pyobj_get(r->metrics, key);
    return !v ? NAN : v->kind == SLEAPC_PYOBJ_INT ? (double)v->i : v->f;
}

static void check_row(const char *name, sleapc_ev_labels *gt, sleapc_ev_labels *pr, double idf1,
                      int switches, int tracks)
{
    sleapc_et_opts o = sleapc__et_opts_default();
    sleapc_et_result *r = NULL;
    CHECK_OK(sleapc__et_run_labels(gt, pr, &o, &r));
    if (!r)
        return;
    const double got = metric(r, "idf1");
    CHECK_MSG(fabs(round(got * 1e4) - idf1 * 1e4) < 0.5, "%s: IDF1 %.6f, table %.4f", name, got,
              idf1);
    CHECK_MSG(metric(r, "id_switches") == switches, "%s: %g switches, table %d", name,
              metric(r, "id_switches"), switches);
    CHECK_MSG(metric(r, "n_pred_tracks") == tracks, "%s: %g tracks, table %d", name,
              metric(r, "n_pred_tracks"), tracks);
    printf("%s: IDF1 %.4f, %g switches, %g tracks\n", name, got, metric(r, "id_switches"),
           metric(r, "n_pred_tracks"));
    sleapc__et_result_free(r);
}

int main(void)
{
    test_require_data();
    char gt_path[1024], own[1024];
    snprintf(gt_path, sizeof gt_path, "%s", test_data_path("sleap-assets/tracks/clip.slp"));
    snprintf(own, sizeof own, "%s", test_data_path("sleap-assets/tracks/clip.predictions.slp"));
    static const struct {
        const char *name;
        double idf1;
        int switches, tracks;
    } table[] = {
        {NULL, 0.9116, 15, 2}, /* SLEAP 1.4's own tracks */
        {"clip_a_default", 0.7999, 17, 3},
        {"clip_b_centroid_euclid_greedy", 0.7034, 15, 3},
        {"clip_d_localq_oks_max2", 0.9116, 15, 2},
        {"clip_f_target2_precull_connect", 0.9116, 15, 2},
        {"clip_h_flow", 0.7999, 17, 3},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        sleapc_ev_labels *gt = NULL, *pr = NULL;
        CHECK_OK(sleapc__ev_labels_load(gt_path, &gt));
        if (!table[k].name) {
            CHECK_OK(sleapc__ev_labels_load(own, &pr));
        } else {
            char dir[1024];
            snprintf(dir, sizeof dir, "%s/%s", test_data_path("tracking"), table[k].name);
            pr = gt ? case_labels(dir, gt) : NULL;
            CHECK_MSG(pr != NULL, "%s: unreadable", dir);
        }
        if (gt && pr)
            check_row(table[k].name ? table[k].name : "clip.predictions.slp", gt, pr, table[k].idf1,
                      table[k].switches, table[k].tracks);
        else {
            sleapc__ev_labels_free(gt);
            sleapc__ev_labels_free(pr);
        }
    }
    /* the CLI on the file (sleapc's 0.3.3 table): the same figures, and its errors */
    char args[4096];
    snprintf(args, sizeof args, "eval-tracking --compat 0.3.3 -g '%s' -p '%s'", gt_path, own);
    CHECK_MSG(test_run_cli(args) == 0 && strstr(test_cli_output(), "| IDF1 | 0.9116 |") &&
                  strstr(test_cli_output(), "| ID switches | 15 |"),
              "%s", test_cli_output());
    snprintf(args, sizeof args, "eval-tracking --compat 0.3.3 -g '%s' -p '%s'", own, own);
    CHECK_MSG(test_run_cli(args) != 0 &&
                  strstr(test_cli_output(), "no user-labeled instance with a track"),
              "%s", test_cli_output());
    return test_finish();
}
