/* The short table `sleapc eval` prints: the figures sleap-nn logs. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
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

sleapc_status sleapc__ev_summary(const sleapc_ev_result *r, char **out)
{
    buf b = {{0}, 0};
    if (!r->has_metrics) {
        row(&b, "0 predicted instances in %s: no metrics (nothing usable was predicted)\n",
            r->pr->path);
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
