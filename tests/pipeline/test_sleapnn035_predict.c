/* sleap-nn 0.3.5's own predictions (sleapnn-0.3.5/predict, see its README),
 * reproduced end to end by `sleapc predict` at the default compat:
 *   __video_ and _slp__ cases: sleap-nn's command line as it was run, with
 *     `sleapc` in place of `sleap-nn` (sleapc decodes the video itself);
 *   __npy_ cases: the same models on the arrays sleap-io 0.9.5 decoded
 *     (the Predictor call's keyword arguments as options).
 * Compared with expected.json: labelled frames, frame indices, instance
 * counts, missing nodes and track names exactly; points within 0.02 px
 * (float32 summation order in the network, README's bound); point and
 * instance scores within 1e-4 absolute. Instances are matched by position
 * (the README allows another order; sleapc keeps sleap-nn's, which this
 * checks too where it holds).
 *
 * SLEAPC_TEST_CASE=name runs one case. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/results.h"
#include "io/predictions/predictions_format.h"
#include "test_util.h"

#define PX_TOL 0.02
#define SCORE_TOL 1e-4

static cJSON *read_json(const char *path)
{
    size_t size = 0;
    unsigned char *text = test_read_file(path, &size);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, size) : NULL;
    free(text);
    return j;
}

static const char *json_str(const cJSON *o, const char *key)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

/* Append " tok" to buf, a path under the data folder when is_path. */
static void add_arg(char *buf, size_t n, const char *tok, bool is_path)
{
    size_t l = strlen(buf);
    if (is_path)
        snprintf(buf + l, n - l, " '%s'", test_data_path(tok));
    else
        snprintf(buf + l, n - l, " %s", tok);
}

/* The sleapc command line of a case into args; false when it has none. */
static bool case_args(const cJSON *opt, const char *out, char *args, size_t n)
{
    args[0] = 0;
    const char *cmd = json_str(opt, "command");
    if (cmd) {
        char *copy = strdup(cmd);
        char *save = NULL;
        bool next_path = false, next_out = false;
        int k = 0;
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save), k++) {
            if (k == 0)
                continue; /* "sleap-nn": the program */
            if (next_out) {
                add_arg(args, n, out, false);
                next_out = false;
                continue;
            }
            add_arg(args, n, t, next_path);
            next_path = strcmp(t, "-i") == 0 || strcmp(t, "-m") == 0;
            next_out = strcmp(t, "-o") == 0;
        }
        free(copy);
        return true;
    }
    const char *npy = json_str(opt, "frames_npy");
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(opt, "model_dirs");
    if (!npy || !cJSON_IsArray(models))
        return false;
    add_arg(args, n, "predict -i", false);
    add_arg(args, n, npy, true);
    const cJSON *m;
    cJSON_ArrayForEach(m, models)
    {
        add_arg(args, n, "-m", false);
        add_arg(args, n, m->valuestring, true);
    }
    const cJSON *kw = cJSON_GetObjectItemCaseSensitive(opt, "kwargs");
    const cJSON *e;
    cJSON_ArrayForEach(e, kw)
    {
        char opt_text[128];
        snprintf(opt_text, sizeof opt_text, "--%s %g", e->string, e->valuedouble);
        add_arg(args, n, opt_text, false);
    }
    char tail[4200];
    snprintf(tail, sizeof tail, "-b 4 -o %s --device cpu", out);
    add_arg(args, n, tail, false);
    return true;
}

/* Whether instance i of the file (points p) is instance want (JSON). */
static double inst_distance(const float *p, int n_nodes, const cJSON *want)
{
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(want, "points");
    double worst = 0;
    for (int k = 0; k < n_nodes; k++) {
        const cJSON *xy = cJSON_GetArrayItem(pts, k);
        bool w_nan = !cJSON_IsArray(xy);
        bool g_nan = isnan(p[2 * k]);
        if (w_nan != g_nan)
            return INFINITY;
        if (w_nan)
            continue;
        double dx = p[2 * k] - cJSON_GetArrayItem(xy, 0)->valuedouble;
        double dy = p[2 * k + 1] - cJSON_GetArrayItem(xy, 1)->valuedouble;
        double d = sqrt(dx * dx + dy * dy);
        worst = d > worst ? d : worst;
    }
    return worst;
}

typedef struct stats {
    double max_px, max_score;
    int n_reordered;
} stats;

static void compare_frame(const sleapc_predictions *pr, const sleapc_pred_frame *f,
                          const cJSON *want, const char *name, stats *s)
{
    const cJSON *insts = cJSON_GetObjectItemCaseSensitive(want, "instances");
    int n_want = cJSON_GetArraySize(insts);
    CHECK_MSG(f->n == n_want, "%s frame %lld: %lld instances, sleap-nn %d", name,
              (long long)f->frame_idx, (long long)f->n, n_want);
    if (f->n != n_want)
        return;
    bool used[256] = {0};
    for (int i = 0; i < n_want && i < 256; i++) {
        const cJSON *w = cJSON_GetArrayItem(insts, i);
        int best = -1;
        double best_d = INFINITY;
        for (int g = 0; g < n_want && g < 256; g++) {
            if (used[g])
                continue;
            double d = inst_distance(pr->points + (f->first + g) * pr->n_nodes * 2, pr->n_nodes,
                                     w);
            if (d < best_d) {
                best_d = d;
                best = g;
            }
        }
        CHECK_MSG(best >= 0 && best_d <= PX_TOL, "%s frame %lld instance %d: %.4g px from sleap-nn",
                  name, (long long)f->frame_idx, i, best_d);
        if (best < 0)
            continue;
        used[best] = true;
        s->n_reordered += best != i;
        s->max_px = best_d > s->max_px ? best_d : s->max_px;
        const sleapc_pred_instance *gi = &pr->insts[f->first + best];
        double ds = fabs(gi->score - cJSON_GetObjectItemCaseSensitive(w, "score")->valuedouble);
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(w, "point_scores");
        for (int k = 0; k < pr->n_nodes; k++) {
            const cJSON *v = cJSON_GetArrayItem(ps, k);
            if (cJSON_IsNumber(v)) {
                double d = fabs(pr->point_scores[(f->first + best) * pr->n_nodes + k] -
                                v->valuedouble);
                ds = d > ds ? d : ds;
            }
        }
        CHECK_MSG(ds <= SCORE_TOL, "%s frame %lld instance %d: scores differ by %.3g", name,
                  (long long)f->frame_idx, i, ds);
        s->max_score = ds > s->max_score ? ds : s->max_score;
        const char *track = json_str(w, "track");
        const char *got_track = gi->track >= 0 && gi->track < pr->n_tracks
                                    ? pr->track_names[gi->track]
                                    : NULL;
        CHECK_MSG((track == NULL) == (got_track == NULL) &&
                      (!track || strcmp(track, got_track) == 0),
                  "%s frame %lld instance %d: track %s, sleap-nn %s", name,
                  (long long)f->frame_idx, i, got_track ? got_track : "none",
                  track ? track : "none");
    }
}

static void run_case(const char *dir, const char *name)
{
    char path[4096], out[4096], args[16384];
    snprintf(path, sizeof path, "%s/options.json", dir);
    cJSON *opt = read_json(path);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    cJSON *exp = read_json(path);
    CHECK_MSG(opt && exp, "%s: options.json or expected.json unreadable", name);
    snprintf(out, sizeof out, "%s/%s.slp", test_tmp_dir(), name);
    if (!opt || !exp || !case_args(opt, out, args, sizeof args)) {
        CHECK_MSG(false, "%s: no command line", name);
        cJSON_Delete(opt);
        cJSON_Delete(exp);
        return;
    }
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "%s: sleapc%s: exit %d: %s", name, args, rc, test_cli_output());
    sleapc_predictions pr = {0};
    int64_t n_user = 0;
    sleapc_status st = rc == 0 ? sleapc__predictions_read(out, &pr, &n_user) : SLEAPC_ERR_IO;
    CHECK_MSG(st == SLEAPC_OK, "%s: read %s: %s", name, out, sleapc_last_error());
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(exp, "frames");
    int n_want = cJSON_GetArraySize(frames);
    if (!st) {
        CHECK_MSG(pr.n_frames == n_want, "%s: %lld labelled frames, sleap-nn %d", name,
                  (long long)pr.n_frames, n_want);
        stats s = {0};
        for (int64_t k = 0; k < pr.n_frames && k < n_want; k++) {
            const cJSON *w = cJSON_GetArrayItem(frames, (int)k);
            int64_t idx = (int64_t)cJSON_GetObjectItemCaseSensitive(w, "frame_idx")->valuedouble;
            CHECK_MSG(pr.frames[k].frame_idx == idx, "%s: frame %lld is %lld, sleap-nn %lld",
                      name, (long long)k, (long long)pr.frames[k].frame_idx, (long long)idx);
            if (pr.frames[k].frame_idx == idx)
                compare_frame(&pr, &pr.frames[k], w, name, &s);
        }
        printf("%s: %lld frames, max %.2e px, scores %.2e, %d instances in another order\n",
               name, (long long)pr.n_frames, s.max_px, s.max_score, s.n_reordered);
    }
    sleapc__predictions_free(&pr);
    cJSON_Delete(opt);
    cJSON_Delete(exp);
}

int main(void)
{
    test_require_data();
    char root[4096];
    snprintf(root, sizeof root, "%s", test_data_path("sleapnn-0.3.5/predict"));
    char *names[64];
    int n = test_list_dir(root, names, 64);
    if (n == 0) {
        printf("no sleapnn-0.3.5/predict cases: skipped\n");
        return 77;
    }
    const char *only = getenv("SLEAPC_TEST_CASE");
    for (int i = 0; i < n; i++) {
        char dir[8192];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        if (!strchr(names[i], '.') && (!only || strcmp(only, names[i]) == 0))
            run_case(dir, names[i]);
        free(names[i]);
    }
    return test_finish();
}
