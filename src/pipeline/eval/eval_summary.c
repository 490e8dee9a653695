/* The short table `sleapc eval` prints: the figures sleap-nn logs. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_tracking.h"
#include "pipeline/eval/evaluation.h"

static double num(const sleapc_pyobj *m, const char *section, const char *key)
{
    const sleapc_pyobj *v = sleapc__pyobj_get(sleapc__pyobj_get(m, section), key);
    if (!v)
        return NAN;
    if (v->kind == SLEAPC_PYOBJ_INT || v->kind == SLEAPC_PYOBJ_NP_I64)
        return (double)v->i;
    if (v->kind == SLEAPC_PYOBJ_FLOAT || v->kind == SLEAPC_PYOBJ_NP_F64)
        return v->f;
    return NAN;
}

/* A number of a flat dict. */
static double num1(const sleapc_pyobj *m, const char *key)
{
    const sleapc_pyobj *v = sleapc__pyobj_get(m, key);
    if (!v)
        return NAN;
    if (v->kind == SLEAPC_PYOBJ_INT || v->kind == SLEAPC_PYOBJ_NP_I64)
        return (double)v->i;
    return v->kind == SLEAPC_PYOBJ_FLOAT || v->kind == SLEAPC_PYOBJ_NP_F64 ? v->f : NAN;
}

typedef struct buf {
    char s[4096];
    size_t n;
} buf;

static void row(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void row(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n = b->n + (size_t)k < sizeof b->s ? b->n + (size_t)k : sizeof b->s - 1;
}

/* bbox mode: the figures sleap-nn logs ("Evaluation Results (bbox mode)"). */
static void bbox_rows(buf *b, const sleapc_ev_result *r)
{
    const sleapc_pyobj *m = r->metrics;
    row(b, "ground truth   %s (boxes from %s)\npredictions    %s\n", r->gt->path, r->bbox_source,
        r->pr->path);
    row(b, "videos matched %d/%d, frames %.0f, GT boxes %.0f, predicted boxes %.0f\n\n",
        r->n_videos_matched, r->pr->n_videos, num1(m, "n_frames"), num1(m, "n_gt"),
        num1(m, "n_pred"));
    row(b, "| bbox mode (COCO) | value |\n|---|---|\n");
    row(b, "| mAP @[.5:.95] | %.4f |\n", num1(m, "bbox_mAP"));
    row(b, "| AP50 / AP75 | %.4f / %.4f |\n", num1(m, "bbox_AP50"), num1(m, "bbox_AP75"));
    row(b, "| AR @[.5:.95] | %.4f |\n", num1(m, "bbox_AR"));
    row(b, "| @IoU0.5, best-F1 threshold | %.3f |\n", num1(m, "bbox_f1_threshold"));
    row(b, "| precision / recall / F1 | %.4f / %.4f / %.4f |\n", num1(m, "bbox_precision"),
        num1(m, "bbox_recall"), num1(m, "bbox_f1"));
    row(b, "| mean IoU | %.4f |\n", num1(m, "bbox_mean_iou"));
    row(b, "| TP / FP / FN | %.0f / %.0f / %.0f |\n", num1(m, "bbox_n_tp"), num1(m, "bbox_n_fp"),
        num1(m, "bbox_n_fn"));
}

sleapc_status sleapc__ev_summary(const sleapc_ev_result *r, char **out)
{
    buf b = {{0}, 0};
    if (!r->has_metrics && r->method == SLEAPC_EV_BBOX) {
        row(&b, "0 predicted boxes in %s: no metrics (nothing usable was predicted)\n",
            r->pr->path);
    } else if (!r->has_metrics) {
        row(&b, "0 predicted instances in %s: no metrics (nothing usable was predicted)\n",
            r->pr->path);
    } else if (r->method == SLEAPC_EV_BBOX) {
        bbox_rows(&b, r);
    } else {
        const sleapc_pyobj *m = r->metrics;
        row(&b, "ground truth   %s\npredictions    %s\n", r->gt->path, r->pr->path);
        row(&b, "videos matched %d/%d, frame pairs %lld, matched instances %lld, unmatched GT %lld",
            r->n_videos_matched, r->pr->n_videos, (long long)r->n_frame_pairs,
            (long long)r->n_pairs, (long long)r->n_fn);
        if (r->method == SLEAPC_EV_CENTROID) {
            row(&b, ", unmatched predictions %lld\n\n", (long long)r->n_fp);
            row(&b, "| centroid mode (%.4g px) | value |\n|---|---|\n", r->match_threshold);
            row(&b, "| precision | %.4f |\n", num(m, "detection_metrics", "precision"));
            row(&b, "| recall | %.4f |\n", num(m, "detection_metrics", "recall"));
            row(&b, "| F1 | %.4f |\n", num(m, "detection_metrics", "f1"));
            row(&b, "| TP / FP / FN | %lld / %lld / %lld |\n", (long long)r->n_pairs,
                (long long)r->n_fp, (long long)r->n_fn);
        } else {
            row(&b, "\n\n| OKS mode | value |\n|---|---|\n");
            row(&b, "| mOKS | %.4f |\n", num(m, "mOKS", "mOKS"));
            row(&b, "| mAP (OKS VOC) | %.4f |\n", num(m, "voc_metrics", "oks_voc.mAP"));
            row(&b, "| mAR (OKS VOC) | %.4f |\n", num(m, "voc_metrics", "oks_voc.mAR"));
            row(&b, "| mPCK | %.4f |\n", num(m, "pck_metrics", "mPCK"));
            row(&b, "| PCK@5px | %.4f |\n", num(m, "pck_metrics", "PCK@5"));
            row(&b, "| PCK@10px | %.4f |\n", num(m, "pck_metrics", "PCK@10"));
            row(&b, "| visibility precision | %.4f |\n", num(m, "visibility_metrics", "precision"));
            row(&b, "| visibility recall | %.4f |\n", num(m, "visibility_metrics", "recall"));
        }
        row(&b, "| average distance | %.2f px |\n", num(m, "distance_metrics", "avg"));
        row(&b, "| distance p50 / p90 / p95 / p99 | %.2f / %.2f / %.2f / %.2f px |\n",
            num(m, "distance_metrics", "p50"), num(m, "distance_metrics", "p90"),
            num(m, "distance_metrics", "p95"), num(m, "distance_metrics", "p99"));
    }
    if (!(*out = sleapc__strdup(b.s)))
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    return SLEAPC_OK;
}

sleapc_status sleapc__et_summary(const sleapc_et_result *r, char **out)
{
    buf b = {{0}, 0};
    const sleapc_pyobj *m = r->metrics;
    row(&b, "ground truth   %s\npredictions    %s\n", r->gt->path, r->pr->path);
    row(&b, "frames %lld; matching per frame: %s, %s %g%s\n\n", (long long)r->n_frames,
        r->oks ? "Hungarian on 1 - OKS" : "Hungarian on the mean distance of the shared nodes",
        r->oks ? "OKS >=" : "at most", r->threshold, r->oks ? "" : " px");
    row(&b, "| metric | value |\n|---|---|\n");
    row(&b, "| IDF1 | %.4f |\n| IDP / IDR | %.4f / %.4f |\n", num1(m, "idf1"), num1(m, "idp"),
        num1(m, "idr"));
    row(&b, "| ID switches | %.0f |\n| fragmentations | %.0f |\n", num1(m, "id_switches"),
        num1(m, "fragmentations"));
    row(&b, "| MOTA | %.4f |\n| MOTP | %.4f%s |\n", num1(m, "mota"), num1(m, "motp"),
        r->oks ? " (OKS)" : " px");
    row(&b, "| matches / misses / false positives | %.0f / %.0f / %.0f |\n", num1(m, "n_matches"),
        num1(m, "n_misses"), num1(m, "n_false_positives"));
    row(&b, "| mostly tracked / partly / mostly lost | %.0f / %.0f / %.0f |\n",
        num1(m, "mostly_tracked"), num1(m, "partly_tracked"), num1(m, "mostly_lost"));
    row(&b, "| tracks: ground truth / predicted | %.0f / %.0f |\n", num1(m, "n_gt_tracks"),
        num1(m, "n_pred_tracks"));
    if (!(*out = sleapc__strdup(b.s)))
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    return SLEAPC_OK;
}
