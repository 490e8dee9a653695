/* The eval report: the metrics, the PCK curve, the OKS (or centroid
 * distance) distribution, per-node errors, and the worst frames with ground
 * truth and prediction drawn over the image. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_report.h"
#include "pipeline/render/render_draw.h"

#define N_WORST 6

static const uint8_t GT_RGB[3] = {0, 200, 60}, PR_RGB[3] = {230, 0, 230};

static double num(const sleapc_pyobj *m, const char *section, const char *key)
{
    const sleapc_pyobj *v = sleapc__pyobj_get(sleapc__pyobj_get(m, section), key);
    if (!v)
        return NAN;
    if (v->kind == SLEAPC_PYOBJ_INT || v->kind == SLEAPC_PYOBJ_NP_I64)
        return (double)v->i;
    return v->kind == SLEAPC_PYOBJ_FLOAT || v->kind == SLEAPC_PYOBJ_NP_F64 ? v->f : NAN;
}

static void row(sleapc_rtext *t, const char *name, double v, const char *fmt)
{
    sleapc__rtext_put(t, "<tr><td>%s</td><td class=\"n\">", name);
    sleapc__rtext_put(t, fmt, v);
    sleapc__rtext_put(t, "</td></tr>\n");
}

static void metrics_table(sleapc_rtext *t, const sleapc_ev_result *r)
{
    const sleapc_pyobj *m = r->metrics;
    sleapc__rtext_put(t, "<h2>Metrics</h2><table><tr><th>metric</th><th>value</th></tr>\n");
    if (r->method == SLEAPC_EV_CENTROID) {
        row(t, "precision", num(m, "detection_metrics", "precision"), "%.4f");
        row(t, "recall", num(m, "detection_metrics", "recall"), "%.4f");
        row(t, "F1", num(m, "detection_metrics", "f1"), "%.4f");
        row(t, "true positives", num(m, "detection_metrics", "n_tp"), "%.0f");
        row(t, "false positives", num(m, "detection_metrics", "n_fp"), "%.0f");
        row(t, "false negatives", num(m, "detection_metrics", "n_fn"), "%.0f");
    } else {
        row(t, "mOKS", num(m, "mOKS", "mOKS"), "%.4f");
        row(t, "mAP (OKS VOC)", num(m, "voc_metrics", "oks_voc.mAP"), "%.4f");
        row(t, "mAR (OKS VOC)", num(m, "voc_metrics", "oks_voc.mAR"), "%.4f");
        row(t, "mAP (PCK VOC)", num(m, "voc_metrics", "pck_voc.mAP"), "%.4f");
        row(t, "mPCK", num(m, "pck_metrics", "mPCK"), "%.4f");
        row(t, "PCK@5px", num(m, "pck_metrics", "PCK@5"), "%.4f");
        row(t, "PCK@10px", num(m, "pck_metrics", "PCK@10"), "%.4f");
        row(t, "visibility precision", num(m, "visibility_metrics", "precision"), "%.4f");
        row(t, "visibility recall", num(m, "visibility_metrics", "recall"), "%.4f");
        row(t, "matched instances", (double)r->n_pairs, "%.0f");
        row(t, "unmatched ground truth", (double)r->n_fn, "%.0f");
    }
    row(t, "average distance (px)", num(m, "distance_metrics", "avg"), "%.3f");
    static const char *const p[5] = {"p50", "p75", "p90", "p95", "p99"};
    for (int k = 0; k < 5; k++) {
        char name[48];
        snprintf(name, sizeof name, "distance %s (px)", p[k]);
        row(t, name, num(m, "distance_metrics", p[k]), "%.3f");
    }
    sleapc__rtext_put(t, "</table>\n");
}

static void charts(sleapc_rtext *t, const sleapc_ev_result *r)
{
    const int64_t n_vals = r->n_pairs * (r->dist_cols ? r->dist_cols : 1);
    double x[10], y[10];
    const bool centroid = r->method == SLEAPC_EV_CENTROID;
    for (int k = 0; k < 10; k++) {
        x[k] = centroid ? 5.0 * (k + 1) : k + 1;
        int64_t c = 0;
        for (int64_t i = 0; i < n_vals; i++)
            c += r->dists[i] < x[k]; /* NaN: never */
        y[k] = n_vals ? (double)c / (double)n_vals : NAN;
    }
    sleapc__rtext_put(t, "<h2>Distributions</h2><div class=\"row\">\n");
    sleapc__svg_curve(t, centroid ? "Matched centroids within a distance" : "PCK curve", x, y, 10,
                      "threshold (px)", centroid ? "fraction of matches" : "PCK", 1.0);
    double *scores = sleapc__malloc(sizeof(double) * (size_t)(r->n_pairs + 1));
    if (!scores) {
        t->failed = true;
        return;
    }
    for (int64_t p = 0; p < r->n_pairs; p++)
        scores[p] = r->pairs[p].score;
    if (centroid)
        sleapc__svg_histogram(t, "Centroid distance of matched pairs", scores, r->n_pairs, 0,
                              r->match_threshold, 20, "distance (px)");
    else
        sleapc__svg_histogram(t, "OKS of matched pairs", scores, r->n_pairs, 0, 1, 20, "OKS");
    sleapc__free(scores);
    if (!centroid && r->dist_cols > 0)
        sleapc__svg_boxes(t, "Error per node (matched pairs)",
                          (const char *const *)r->gt->node_names, r->dists, r->n_pairs,
                          r->dist_cols < r->gt->n_nodes ? r->dist_cols : r->gt->n_nodes,
                          "distance (px)");
    sleapc__rtext_put(t, "</div>\n");
}

typedef struct frame_score {
    int64_t pair; /* frame pair */
    double score; /* lower is worse */
} frame_score;

static int cmp_score(const void *a, const void *b)
{
    const frame_score *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    return (x->pair > y->pair) - (x->pair < y->pair);
}

/* Per frame pair: mean OKS over its GT instances (unmatched count 0), or in
 * centroid mode minus its errors (FN + FP) and mean distance / threshold. */
static frame_score *rank_frames(const sleapc_ev_result *r)
{
    frame_score *s = sleapc__calloc((size_t)(r->n_frame_pairs + 1), sizeof *s);
    int64_t *of_gt = sleapc__malloc(sizeof(int64_t) * (size_t)(r->gt->n_frames + 1));
    int64_t *of_pr = sleapc__malloc(sizeof(int64_t) * (size_t)(r->pr->n_frames + 1));
    if (!s || !of_gt || !of_pr) {
        sleapc__free(s);
        s = NULL;
        goto done;
    }
    for (int64_t f = 0; f < r->gt->n_frames; f++)
        of_gt[f] = -1;
    for (int64_t f = 0; f < r->pr->n_frames; f++)
        of_pr[f] = -1;
    for (int64_t k = 0; k < r->n_frame_pairs; k++) {
        s[k].pair = k;
        of_gt[r->frame_pairs[k].gt_frame] = k;
        of_pr[r->frame_pairs[k].pr_frame] = k;
    }
    const bool centroid = r->method == SLEAPC_EV_CENTROID;
    for (int64_t p = 0; p < r->n_pairs; p++) {
        for (int64_t f = 0; f < r->gt->n_frames; f++) {
            const sleapc_ev_frame *gf = &r->gt->frames[f];
            if (r->pairs[p].gt >= gf->first && r->pairs[p].gt < gf->first + gf->n &&
                of_gt[f] >= 0) {
                const int64_t k = of_gt[f];
                s[k].score += centroid ? -r->pairs[p].score / r->match_threshold
                                       : r->pairs[p].score / (double)r->frame_pairs[k].n_gt;
                break;
            }
        }
    }
    if (centroid) {
        const int64_t *lists[2] = {r->fn, r->fp};
        const int64_t ns[2] = {r->n_fn, r->n_fp};
        const sleapc_ev_labels *ls[2] = {r->gt, r->pr};
        const int64_t *maps[2] = {of_gt, of_pr};
        for (int side = 0; side < 2; side++)
            for (int64_t i = 0; i < ns[side]; i++)
                for (int64_t f = 0; f < ls[side]->n_frames; f++) {
                    const sleapc_ev_frame *fr = &ls[side]->frames[f];
                    if (lists[side][i] >= fr->first && lists[side][i] < fr->first + fr->n) {
                        if (maps[side][f] >= 0)
                            s[maps[side][f]].score -= 1;
                        break;
                    }
                }
    }
    qsort(s, (size_t)r->n_frame_pairs, sizeof *s, cmp_score);
done:
    sleapc__free(of_gt);
    sleapc__free(of_pr);
    return s;
}

static void draw_frame_instances(const sleapc_ev_labels *l, const sleapc_ev_frame *f,
                                 const sleapc_draw_image *img, const sleapc_draw_style *style,
                                 const uint8_t rgb[3], bool user_only, double box[4])
{
    for (int64_t i = f->first; i < f->first + f->n; i++) {
        if (user_only && l->insts[i].predicted)
            continue;
        const double *xy = sleapc__ev_points(l, i);
        const int n = l->insts[i].n_nodes;
        sleapc__draw_pose(img, xy, n, (const int(*)[2])l->edges, n == l->n_nodes ? l->n_edges : 0,
                          style, rgb);
        for (int k = 0; k < n; k++)
            if (isfinite(xy[2 * k]) && isfinite(xy[2 * k + 1])) {
                box[0] = fmin(box[0], xy[2 * k]);
                box[1] = fmin(box[1], xy[2 * k + 1]);
                box[2] = fmax(box[2], xy[2 * k]);
                box[3] = fmax(box[3], xy[2 * k + 1]);
            }
    }
}

static void worst_frames(sleapc_rtext *t, const sleapc_ev_result *r, bool user_only)
{
    sleapc__rtext_put(t, "<h2>Worst frames</h2><p class=\"key\">"
                         "<span style=\"background:#00c83c\"></span>ground truth"
                         "<span style=\"background:#e600e6\"></span>prediction</p>\n");
    frame_score *s = rank_frames(r);
    if (!s) {
        t->failed = true;
        return;
    }
    int video = -1;
    sleapc_report_frames *frames = NULL;
    const char *why = NULL;
    int shown = 0;
    for (int64_t k = 0; k < r->n_frame_pairs && shown < N_WORST; k++) {
        const sleapc_ev_frame_pair *fp = &r->frame_pairs[s[k].pair];
        const sleapc_ev_frame *gf = &r->gt->frames[fp->gt_frame];
        const sleapc_ev_frame *pf = &r->pr->frames[fp->pr_frame];
        if (gf->video != video) {
            sleapc__report_frames_close(frames);
            video = gf->video;
            frames = sleapc__report_frames_open(r->gt->path, video, &why);
        }
        uint8_t *rgb = NULL;
        int64_t h = 0, w = 0;
        if (!frames || sleapc__report_frame_rgb(frames, gf->frame_idx, &rgb, &h, &w)) {
            if (!frames) {
                sleapc__rtext_put(t, "<p>Frames unavailable: ");
                sleapc__rtext_escaped(t, why ? why : "unknown");
                sleapc__rtext_put(t, "</p>\n");
                break;
            }
            continue;
        }
        const sleapc_draw_image img = {rgb, h, w};
        const sleapc_draw_style style = sleapc__draw_style_for(h, w);
        double box[4] = {INFINITY, INFINITY, -INFINITY, -INFINITY};
        draw_frame_instances(r->gt, gf, &img, &style, GT_RGB, user_only, box);
        draw_frame_instances(r->pr, pf, &img, &style, PR_RGB, false, box);
        char caption[256];
        if (r->method == SLEAPC_EV_CENTROID)
            snprintf(caption, sizeof caption,
                     "frame %lld: %lld ground-truth, %lld predicted instances",
                     (long long)gf->frame_idx, (long long)fp->n_gt, (long long)pf->n);
        else
            snprintf(caption, sizeof caption,
                     "frame %lld: mean OKS %.3f over %lld ground-truth instances (unmatched: 0), "
                     "%lld predicted",
                     (long long)gf->frame_idx, s[k].score, (long long)fp->n_gt, (long long)pf->n);
        const int64_t m = 40;
        if (isfinite(box[0]))
            sleapc__report_image(t, rgb, h, w, (int64_t)box[0] - m, (int64_t)box[1] - m,
                                 (int64_t)box[2] + m, (int64_t)box[3] + m, 360, caption);
        else
            sleapc__report_image(t, rgb, h, w, 0, 0, w, h, 360, caption);
        sleapc__free(rgb);
        shown++;
    }
    sleapc__report_frames_close(frames);
    sleapc__free(s);
}

sleapc_status sleapc__ev_report(const sleapc_ev_result *r, const char *path)
{
    /* the page draws poses and their distances; boxes have neither */
    if (r->method == SLEAPC_EV_BBOX)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "report: %s: bbox mode has no report page (use --save_metrics)", path);
    sleapc_rtext t = {0};
    sleapc__report_begin(&t, "sleapc eval report");
    sleapc__rtext_put(&t, "<table><tr><td>ground truth</td><td>");
    sleapc__rtext_escaped(&t, r->gt->path);
    sleapc__rtext_put(&t, "</td></tr><tr><td>predictions</td><td>");
    sleapc__rtext_escaped(&t, r->pr->path);
    sleapc__rtext_put(&t,
                      "</td></tr><tr><td>matching</td><td>%s, threshold %g%s</td></tr>"
                      "<tr><td>frame pairs</td><td>%lld</td></tr></table>\n",
                      r->method == SLEAPC_EV_CENTROID ? "centroid distance (Hungarian)"
                                                      : "OKS (greedy by prediction score)",
                      r->match_threshold, r->method == SLEAPC_EV_CENTROID ? " px" : "",
                      (long long)r->n_frame_pairs);
    if (!r->has_metrics) {
        sleapc__rtext_put(&t, "<p>No predicted instances: no metrics.</p>\n");
    } else {
        metrics_table(&t, r);
        charts(&t, r);
        worst_frames(&t, r, true);
    }
    sleapc__report_end(&t);
    const sleapc_status st = sleapc__report_write(&t, path);
    sleapc__free(t.s);
    return st;
}
