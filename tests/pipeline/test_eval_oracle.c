/* sleapc eval against sleap-nn's own `eval` runs (eval/<case>/: options.json
 * with the command, expected.json with sleap-nn's metrics dict and what its
 * matching produced). Every case runs twice: through the library, where the
 * frame pairs, matched pairs (indices exact, score within tolerance), false
 * negatives / positives and counts are compared too, and through the CLI
 * with -s OUT.json, whose file must hold sleap-nn's metrics.
 *
 * Tolerance: |a - b| <= 1e-9 max(|a|, |b|) + 1e-12 for floats (the oracle's:
 * everything is float64 with numpy's order of operations; exp() and the
 * percentile interpolation may differ in the last bits; the absolute floor
 * covers subnormal OKS values), counts, indices, booleans and threshold
 * arrays exact, NaN / inf as the strings "nan" / "inf" / "-inf", video paths
 * by base name (they depend on where the data lies). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/pyobj/pyobj.h"
#include "pipeline/eval/evaluation.h"
#include "test_util.h"

static const char *base_name(const char *p)
{
    const char *b = p;
    for (const char *s = p; *s; s++)
        if (*s == '/' || *s == '\\')
            b = s + 1;
    return b;
}

static bool close_enough(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-12;
}

/* Compare got with want (sleap-nn's), recursively; where names the value. */
static void compare(const cJSON *got, const cJSON *want, const char *where, const char *case_name)
{
    char sub[512];
    if (cJSON_IsObject(want)) {
        CHECK_MSG(cJSON_IsObject(got), "%s: %s: not a dict", case_name, where);
        if (!cJSON_IsObject(got))
            return;
        const cJSON *g = got->child;
        for (const cJSON *w = want->child; w; w = w->next, g = g ? g->next : NULL) {
            snprintf(sub, sizeof sub, "%s.%s", where, w->string);
            CHECK_MSG(g && !strcmp(g->string, w->string), "%s: %s: key missing or out of order",
                      case_name, sub);
            const cJSON *gv = cJSON_GetObjectItemCaseSensitive(got, w->string);
            if (gv)
                compare(gv, w, sub, case_name);
        }
        CHECK_MSG(cJSON_GetArraySize(got) == cJSON_GetArraySize(want), "%s: %s: %d keys, want %d",
                  case_name, where, cJSON_GetArraySize(got), cJSON_GetArraySize(want));
        return;
    }
    if (cJSON_IsArray(want)) {
        const int n = cJSON_GetArraySize(want);
        CHECK_MSG(cJSON_IsArray(got) && cJSON_GetArraySize(got) == n, "%s: %s: length %d, want %d",
                  case_name, where, cJSON_IsArray(got) ? cJSON_GetArraySize(got) : -1, n);
        if (!cJSON_IsArray(got) || cJSON_GetArraySize(got) != n)
            return;
        int n_bad = 0;
        const cJSON *g = got->child;
        for (const cJSON *w = want->child; w && n_bad < 3; w = w->next, g = g->next) {
            const int before = test_n_failed;
            compare(g, w, where, case_name);
            n_bad += test_n_failed != before;
        }
        return;
    }
    if (cJSON_IsString(want)) {
        const bool path = strstr(where, "video_paths") != NULL;
        CHECK_MSG(cJSON_IsString(got) &&
                      !strcmp(path ? base_name(got->valuestring) : got->valuestring,
                              path ? base_name(want->valuestring) : want->valuestring),
                  "%s: %s: \"%s\", want \"%s\"", case_name, where,
                  cJSON_IsString(got) ? got->valuestring : "(not a string)", want->valuestring);
        return;
    }
    if (cJSON_IsBool(want)) {
        CHECK_MSG(cJSON_IsBool(got) && cJSON_IsTrue(got) == cJSON_IsTrue(want), "%s: %s: bool",
                  case_name, where);
        return;
    }
    CHECK_MSG(cJSON_IsNumber(got), "%s: %s: not a number", case_name, where);
    if (!cJSON_IsNumber(got))
        return;
    /* ints are exact (counts), floats within the tolerance; "thresholds"
     * arrays are exact too */
    const bool exact = strstr(where, "thresholds") || strstr(where, "n_t") ||
                       strstr(where, "n_f") || strstr(where, "frame_idxs") ||
                       strstr(where, "visibility_metrics.t") ||
                       strstr(where, "visibility_metrics.f");
    CHECK_MSG(exact ? got->valuedouble == want->valuedouble
                    : close_enough(got->valuedouble, want->valuedouble),
              "%s: %s: %.17g, want %.17g", case_name, where, got->valuedouble, want->valuedouble);
}

static int64_t count(const cJSON *counts, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(counts, key);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

static const cJSON *item(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* The case's options and file paths. */
static bool case_options(const cJSON *options, const char *dir, sleapc_ev_opts *o, char *gt,
                         char *pr, size_t n)
{
    const cJSON *p = item(options, "parsed_options");
    *o = sleapc__ev_opts_default();
    o->degenerate_fallback = false; /* these are sleap-nn 0.3.3's results */
    const cJSON *v;
    if ((v = item(p, "oks_stddev")) && cJSON_IsNumber(v))
        o->oks_stddev = v->valuedouble;
    if ((v = item(p, "oks_scale")) && cJSON_IsNumber(v))
        o->oks_scale = v->valuedouble;
    if ((v = item(p, "match_threshold")) && cJSON_IsNumber(v))
        o->match_threshold = v->valuedouble;
    if ((v = item(p, "user_labels_only")) && cJSON_IsBool(v))
        o->user_labels_only = cJSON_IsTrue(v);
    if ((v = item(p, "match_method")) && cJSON_IsString(v))
        o->method = !strcmp(v->valuestring, "oks")        ? SLEAPC_EV_OKS
                    : !strcmp(v->valuestring, "centroid") ? SLEAPC_EV_CENTROID
                                                          : SLEAPC_EV_AUTO;
    if ((v = item(p, "anchor_part")) && cJSON_IsString(v))
        o->anchor_part = v->valuestring;
    const cJSON *g = item(p, "ground_truth_path"), *q = item(p, "predicted_path");
    if (!cJSON_IsString(g) || !cJSON_IsString(q))
        return false;
    const char *paths[2] = {g->valuestring, q->valuestring};
    char *outs[2] = {gt, pr};
    for (int k = 0; k < 2; k++) {
        if (!strncmp(paths[k], "data/", 5))
            snprintf(outs[k], n, "%s", test_data_path(paths[k] + 5));
        else
            snprintf(outs[k], n, "%s/%s", dir, paths[k]);
    }
    return true;
}

/* Position of instance i in its frame's list. */
static int64_t in_frame(const sleapc_ev_labels *l, int64_t frame, int64_t inst)
{
    return inst - l->frames[frame].first;
}

static int64_t frame_of(const sleapc_ev_labels *l, int64_t inst)
{
    for (int64_t f = 0; f < l->n_frames; f++)
        if (inst >= l->frames[f].first && inst < l->frames[f].first + l->frames[f].n)
            return f;
    return -1;
}

static void compare_matching(const sleapc_ev_result *r, const cJSON *want, const char *name)
{
    const cJSON *counts = item(want, "counts");
    int64_t n_gt = 0, n_pr = 0;
    for (int64_t k = 0; k < r->n_frame_pairs; k++) {
        n_gt += r->frame_pairs[k].n_gt;
        n_pr += r->pr->frames[r->frame_pairs[k].pr_frame].n;
    }
    CHECK_MSG(r->n_frame_pairs == count(counts, "n_frame_pairs"), "%s: %lld frame pairs", name,
              (long long)r->n_frame_pairs);
    CHECK_MSG(n_gt == count(counts, "n_gt_instances_in_frame_pairs"), "%s: %lld GT instances", name,
              (long long)n_gt);
    CHECK_MSG(n_pr == count(counts, "n_pred_instances_in_frame_pairs"),
              "%s: %lld predicted instances", name, (long long)n_pr);
    CHECK_MSG(r->n_pairs == count(counts, "n_matched_pairs"), "%s: %lld matched pairs", name,
              (long long)r->n_pairs);
    CHECK_MSG(r->n_fn == count(counts, "n_false_negatives"), "%s: %lld false negatives", name,
              (long long)r->n_fn);
    CHECK_MSG(n_pr - r->n_pairs == count(counts, "n_unmatched_predictions_derived"),
              "%s: unmatched predictions", name);
    if (r->method == SLEAPC_EV_CENTROID)
        CHECK_MSG(r->n_fp == count(counts, "n_false_positives"), "%s: %lld false positives", name,
                  (long long)r->n_fp);
    const cJSON *method = item(want, "match_method_used");
    CHECK_MSG(
        cJSON_IsString(method) &&
            !strcmp(method->valuestring, r->method == SLEAPC_EV_CENTROID ? "centroid" : "oks"),
        "%s: match method", name);
    const cJSON *kw = item(want, "evaluator_kwargs");
    CHECK_MSG(item(kw, "match_threshold")->valuedouble == r->match_threshold,
              "%s: match threshold %g", name, r->match_threshold);
    const cJSON *anchor = item(kw, "anchor_ind");
    CHECK_MSG(cJSON_IsNull(anchor) ? r->anchor_ind < 0 : anchor->valuedouble == r->anchor_ind,
              "%s: anchor %d", name, r->anchor_ind);
    /* frame pairs [gt_frame_idx, pred_frame_idx, n_gt, n_pred] */
    const cJSON *fps = item(want, "frame_pairs");
    int64_t k = 0;
    for (const cJSON *w = fps ? fps->child : NULL; w && k < r->n_frame_pairs; w = w->next, k++) {
        const sleapc_ev_frame_pair *p = &r->frame_pairs[k];
        const bool ok =
            cJSON_GetArrayItem(w, 0)->valuedouble == r->gt->frames[p->gt_frame].frame_idx &&
            cJSON_GetArrayItem(w, 1)->valuedouble == r->pr->frames[p->pr_frame].frame_idx &&
            cJSON_GetArrayItem(w, 2)->valuedouble == p->n_gt &&
            cJSON_GetArrayItem(w, 3)->valuedouble == r->pr->frames[p->pr_frame].n;
        CHECK_MSG(ok, "%s: frame pair %lld", name, (long long)k);
        if (!ok)
            break;
    }
    /* matched pairs [frame_idx, gt index in frame, pred index in frame, score] */
    k = 0;
    int n_bad = 0;
    for (const cJSON *w = item(want, "matched_pairs")->child; w && k < r->n_pairs && n_bad < 3;
         w = w->next, k++) {
        const sleapc_ev_pair *p = &r->pairs[k];
        const int64_t gf = frame_of(r->gt, p->gt), pf = frame_of(r->pr, p->pr);
        const bool ok = cJSON_GetArrayItem(w, 0)->valuedouble == r->gt->frames[gf].frame_idx &&
                        cJSON_GetArrayItem(w, 1)->valuedouble == in_frame(r->gt, gf, p->gt) &&
                        cJSON_GetArrayItem(w, 2)->valuedouble == in_frame(r->pr, pf, p->pr) &&
                        close_enough(cJSON_GetArrayItem(w, 3)->valuedouble, p->score) &&
                        (p->score > 0) == (cJSON_GetArrayItem(w, 3)->valuedouble > 0);
        CHECK_MSG(ok, "%s: matched pair %lld: frame %lld gt %lld pred %lld score %.17g", name,
                  (long long)k, (long long)r->gt->frames[gf].frame_idx,
                  (long long)in_frame(r->gt, gf, p->gt), (long long)in_frame(r->pr, pf, p->pr),
                  p->score);
        n_bad += !ok;
    }
    /* false negatives / positives [frame_idx, index in frame] */
    const char *keys[2] = {"false_negatives", "false_positives"};
    const int64_t *lists[2] = {r->fn, r->fp};
    const int64_t ns[2] = {r->n_fn, r->n_fp};
    const sleapc_ev_labels *ls[2] = {r->gt, r->pr};
    for (int s = 0; s < 2; s++) {
        const cJSON *list = item(want, keys[s]);
        if (!cJSON_IsArray(list))
            continue;
        k = 0;
        for (const cJSON *w = list->child; w && k < ns[s]; w = w->next, k++) {
            const int64_t f = frame_of(ls[s], lists[s][k]);
            const bool ok =
                cJSON_GetArrayItem(w, 0)->valuedouble == ls[s]->frames[f].frame_idx &&
                cJSON_GetArrayItem(w, 1)->valuedouble == in_frame(ls[s], f, lists[s][k]);
            CHECK_MSG(ok, "%s: %s[%lld]", name, keys[s], (long long)k);
            if (!ok)
                break;
        }
    }
}

/* The same through the CLI: exit status, and the metrics file. */
static void run_cli(const char *name, const cJSON *options, const char *gt, const char *pr,
                    const cJSON *want)
{
    char args[4096], out[1024];
    snprintf(out, sizeof out, "%s/%s.json", test_tmp_dir(), name);
    size_t n = (size_t)snprintf(args, sizeof args, "eval --compat 0.3.3 -q -s '%s'", out);
    const cJSON *argv = item(options, "argv_after_eval");
    for (const cJSON *a = argv->child; a; a = a->next) {
        const char *s = a->valuestring;
        if (!strncmp(s, "data/", 5))
            s = test_data_path(s + 5);
        else if (!strcmp(s, "pred.slp"))
            s = pr;
        n += (size_t)snprintf(args + n, sizeof args - n, " '%s'", s);
    }
    (void)gt;
    const int rc = test_run_cli(args);
    const cJSON *error = item(want, "error");
    const cJSON *metrics = item(want, "metrics");
    if (error) {
        CHECK_MSG(rc != 0 && strstr(test_cli_output(), "Empty Frame Pairs"),
                  "%s: CLI: rc %d, want an error: %s", name, rc, test_cli_output());
        return;
    }
    CHECK_MSG(rc == 0, "%s: CLI: rc %d: %s", name, rc, test_cli_output());
    cJSON *got = test_load_json(out);
    if (cJSON_IsNull(metrics)) {
        CHECK_MSG(!got, "%s: CLI wrote metrics where sleap-nn has none", name);
    } else {
        CHECK_MSG(got != NULL, "%s: CLI wrote no metrics", name);
        if (got)
            compare(got, metrics, "cli", name);
    }
    cJSON_Delete(got);
}

static void run_case(const char *dir, const char *name)
{
    char path[1024], gt[1024], pr[1024];
    snprintf(path, sizeof path, "%s/options.json", dir);
    cJSON *options = test_load_json(path);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    cJSON *want = test_load_json(path);
    sleapc_ev_opts o;
    const bool ok = options && want && case_options(options, dir, &o, gt, pr, sizeof gt);
    CHECK_MSG(ok, "%s: unreadable case", name);
    if (ok) {
        sleapc_ev_result *r = NULL;
        const sleapc_status st = sleapc__ev_run(gt, pr, &o, &r);
        const cJSON *error = item(want, "error");
        const cJSON *metrics = item(want, "metrics");
        if (error) {
            CHECK_MSG(st == SLEAPC_ERR_INVALID_ARG &&
                          strstr(sleapc_last_error(), "Empty Frame Pairs"),
                      "%s: want sleap-nn's error, got %d: %s", name, st, sleapc_last_error());
        } else if (st) {
            CHECK_MSG(0, "%s: %s", name, sleapc_last_error());
        } else if (cJSON_IsNull(metrics)) {
            CHECK_MSG(!r->has_metrics, "%s: metrics where sleap-nn returns None", name);
        } else {
            CHECK_MSG(r->has_metrics, "%s: no metrics", name);
            char *json = NULL;
            if (r->has_metrics && !sleapc__pyobj_to_json(r->metrics, &json)) {
                cJSON *got = cJSON_Parse(json);
                compare(got, metrics, "metrics", name);
                cJSON_Delete(got);
            }
            free(json);
            compare_matching(r, want, name);
        }
        sleapc__ev_result_free(r);
        run_cli(name, options, gt, pr, want);
    }
    cJSON_Delete(options);
    cJSON_Delete(want);
}

int main(void)
{
    test_require_data();
    char root[1024];
    snprintf(root, sizeof root, "%s", test_data_path("eval"));
    char *names[256];
    const int n = test_list_dir(root, names, 256);
    if (n <= 0) {
        fprintf(stderr, "SKIP: no eval cases under %s\n", root);
        return 77;
    }
    int n_cases = 0;
    for (int k = 0; k < n; k++) {
        char dir[1200], opt[1300];
        snprintf(dir, sizeof dir, "%s/%s", root, names[k]);
        snprintf(opt, sizeof opt, "%s/options.json", dir);
        FILE *f = fopen(opt, "rb");
        if (f) {
            fclose(f);
            const int before = test_n_failed;
            run_case(dir, names[k]);
            printf("%s: %s\n", names[k], test_n_failed == before ? "ok" : "FAILED");
            n_cases++;
        }
        free(names[k]);
    }
    CHECK_MSG(n_cases >= 13, "%d cases", n_cases);
    return test_finish();
}
