/* sleap-nn 0.3.5's box decoders (inference/bbox.py, data/bboxes.py), step
 * by step in float32 as its tensor ops run, with torchvision's batched_nms.
 * Exact score ties are ranked by index (lowest first): torch's topk and
 * unstable argsort leave their order unspecified. */
#include "layers/ops/bbox_decode.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

/* torchvision's batched_nms splits per class above 4000 numbers. */
#define PRE_NMS_TOP_K 1000

typedef struct cand {
    float b[4];
    float score;
    int cls;
    int64_t key; /* order among equal scores */
} cand;

/* torch's clamp: NaN stays NaN. */
static float clampf(float v, float lo, float hi)
{
    if (v != v)
        return v;
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Descending score, NaN first (torch's topk), then key. */
static int cmp_desc(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    const int an = a->score != a->score, bn = b->score != b->score;
    if (an != bn)
        return bn - an;
    if (!an && a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->key > b->key) - (a->key < b->key);
}

static void sort_desc(cand *c, int64_t n)
{
    if (n > 1)
        qsort(c, (size_t)n, sizeof *c, cmp_desc);
}

static void clip_box(float *b, int h, int w)
{
    b[0] = clampf(b[0], 0.0f, (float)(w - 1));
    b[1] = clampf(b[1], 0.0f, (float)(h - 1));
    b[2] = clampf(b[2], 0.0f, (float)(w - 1));
    b[3] = clampf(b[3], 0.0f, (float)(h - 1));
}

/* torchvision's nms over the class-offset boxes (_batched_nms_coordinate_trick):
 * a stable sort by descending score, IoU > threshold suppresses. Returns the
 * kept count, c reordered to the kept boxes in that order. */
static sleapc_status batched_nms(cand *c, int64_t n, double iou, int64_t *kept)
{
    float maxc = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            maxc = c[i].b[k] > maxc ? c[i].b[k] : maxc;
    for (int64_t i = 0; i < n; i++)
        c[i].key = i;
    sort_desc(c, n);
    float *ob = sleapc__malloc((size_t)n * 5 * sizeof *ob);
    unsigned char *sup = sleapc__calloc((size_t)n, 1);
    if (!ob || !sup) {
        sleapc__free(ob);
        sleapc__free(sup);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "bbox NMS: out of memory");
    }
    for (int64_t i = 0; i < n; i++) {
        const float off = (float)c[i].cls * (maxc + 1.0f);
        float *o = ob + 5 * i;
        for (int k = 0; k < 4; k++)
            o[k] = c[i].b[k] + off;
        o[4] = (o[2] - o[0]) * (o[3] - o[1]);
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (sup[i])
            continue;
        const float *p = ob + 5 * i;
        for (int64_t j = i + 1; j < n; j++) {
            if (sup[j])
                continue;
            const float *q = ob + 5 * j;
            const float xx1 = p[0] > q[0] ? p[0] : q[0];
            const float yy1 = p[1] > q[1] ? p[1] : q[1];
            const float xx2 = p[2] < q[2] ? p[2] : q[2];
            const float yy2 = p[3] < q[3] ? p[3] : q[3];
            const float w = xx2 - xx1 > 0.0f ? xx2 - xx1 : 0.0f;
            const float h = yy2 - yy1 > 0.0f ? yy2 - yy1 : 0.0f;
            const float inter = w * h;
            const float ovr = inter / (p[4] + q[4] - inter);
            if ((double)ovr > iou)
                sup[j] = 1;
        }
        c[m++] = c[i];
    }
    sleapc__free(ob);
    sleapc__free(sup);
    *kept = m;
    return SLEAPC_OK;
}

/* _nms, the SSD's cut to limit, then _pad_detections' sort and cut to k. */
static sleapc_status finish(cand *c, int64_t n, float iou, int64_t limit, int64_t k,
                            sleapc_box *out, int *n_out)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (c[i].b[2] > c[i].b[0] && c[i].b[3] > c[i].b[1])
            c[m++] = c[i];
    n = m;
    if (iou >= 0.0f && n > 0) {
        sleapc_status st = batched_nms(c, n, (double)iou, &n);
        if (st != SLEAPC_OK)
            return st;
    }
    if (n > limit)
        n = limit;
    for (int64_t i = 0; i < n; i++)
        c[i].key = i;
    sort_desc(c, n);
    if (n > k)
        n = k;
    for (int64_t i = 0; i < n; i++)
        out[i] = (sleapc_box){c[i].b[0], c[i].b[1], c[i].b[2], c[i].b[3], c[i].score, c[i].cls};
    *n_out = (int)n;
    return SLEAPC_OK;
}

/* The 3x3 (kernel 3, padding 1) max-pool peak of cell (y, x): the value when
 * it equals its window's max (NaN anywhere in the window spoils it), else
 * value * 0 as torch multiplies by the mask. */
static float pool_peak(const float *m, int h, int w, int y, int x)
{
    const float v = m[(int64_t)y * w + x];
    float mx = -INFINITY;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            const int yy = y + dy, xx = x + dx;
            if (yy < 0 || yy >= h || xx < 0 || xx >= w)
                continue;
            const float u = m[(int64_t)yy * w + xx];
            if (u != u || u > mx)
                mx = u;
            if (mx != mx)
                return v * 0.0f;
        }
    return v * (mx == v ? 1.0f : 0.0f);
}

sleapc_status sleapc__bbox_decode_centernet(const float *heat, int n_categories, const float *size,
                                            const float *offset, int h, int w, int stride,
                                            const sleapc_bbox_decode_opts *opts, sleapc_box *out,
                                            int *n)
{
    if (n)
        *n = 0;
    if (!heat || !size || !opts || !out || !n || n_categories < 1 || h < 1 || w < 1 || stride < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "CenterNet decode: bad arguments");
    const int64_t hw = (int64_t)h * w, total = hw * n_categories;
    const int64_t k = opts->max_detections < total ? opts->max_detections : total;
    if (k <= 0)
        return SLEAPC_OK;
    cand *c = sleapc__malloc((size_t)total * sizeof *c);
    if (!c)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "CenterNet decode: out of memory");
    /* topk over the peaks: cells off every peak are 0 and, under a positive
     * threshold, never kept, so only the others need ranking then. */
    const bool all = !(opts->score_threshold > 0.0f);
    int64_t m = 0;
    for (int64_t i = 0; i < total; i++) {
        const int64_t cell = i % hw;
        const float p = pool_peak(heat + (i / hw) * hw, h, w, (int)(cell / w), (int)(cell % w));
        if (all || p != 0.0f) {
            c[m].score = p;
            c[m].key = i;
            m++;
        }
    }
    sort_desc(c, m);
    if (m > k)
        m = k;
    const float s = (float)stride;
    int64_t kept = 0;
    for (int64_t i = 0; i < m; i++) {
        const int64_t cell = c[i].key % hw;
        float xs = (float)(cell % w), ys = (float)(cell / w);
        float bw = size[cell], bh = size[hw + cell];
        bw = bw < 0.0f ? 0.0f : bw;
        bh = bh < 0.0f ? 0.0f : bh;
        if (offset) {
            xs = xs + offset[cell];
            ys = ys + offset[hw + cell];
        }
        cand *o = &c[kept];
        const float score = c[i].score;
        const int cls = (int)(c[i].key / hw);
        if (!(score >= opts->score_threshold))
            continue;
        o->b[0] = (xs - bw / 2.0f) * s;
        o->b[1] = (ys - bh / 2.0f) * s;
        o->b[2] = (xs + bw / 2.0f) * s;
        o->b[3] = (ys + bh / 2.0f) * s;
        if (opts->in_h > 0 && opts->in_w > 0)
            clip_box(o->b, opts->in_h, opts->in_w);
        o->score = score;
        o->cls = cls;
        kept++;
    }
    sleapc_status st = finish(c, kept, opts->iou_threshold, k, k, out, n);
    sleapc__free(c);
    return st;
}

int sleapc__ssd_anchors_per_cell(const sleapc_ssd_anchors *a)
{
    if (!a || a->n_scales < 1 || a->n_scales > 8 || a->n_ratios < 1 || a->n_ratios > 8)
        return 0;
    return a->n_scales * a->n_ratios;
}

static int64_t cells(int in, int stride)
{
    return ((int64_t)in + stride - 1) / stride;
}

int64_t sleapc__ssd_anchor_count(const sleapc_ssd_anchors *a, int in_h, int in_w)
{
    const int apc = sleapc__ssd_anchors_per_cell(a);
    if (!apc || a->n_levels < 1 || a->n_levels > 8 || in_h < 1 || in_w < 1)
        return 0;
    int64_t total = 0;
    for (int l = 0; l < a->n_levels; l++) {
        if (a->strides[l] < 1)
            return 0;
        total += cells(in_h, a->strides[l]) * cells(in_w, a->strides[l]) * apc;
    }
    return total;
}

/* Anchor i (head order) as xyxy float32 (make_anchors / anchor_shapes). */
static void anchor_at(const sleapc_ssd_anchors *a, int in_h, int in_w, int64_t i, float *xyxy)
{
    const int apc = a->n_scales * a->n_ratios;
    int l = 0;
    int64_t lw;
    for (;; l++) {
        lw = cells(in_w, a->strides[l]);
        const int64_t nl = cells(in_h, a->strides[l]) * lw * apc;
        if (i < nl || l == a->n_levels - 1)
            break;
        i -= nl;
    }
    const int shape = (int)(i % apc);
    const int64_t cell = i / apc;
    const double size = a->sizes[l] * a->scales[shape / a->n_ratios];
    const double ratio = a->ratios[shape % a->n_ratios];
    const double dw = sqrt(size * size / ratio);
    const float half_w = (float)dw / 2.0f, half_h = (float)(dw * ratio) / 2.0f;
    const float st = (float)a->strides[l];
    const float cx = ((float)(cell % lw) + 0.5f) * st;
    const float cy = ((float)(cell / lw) + 0.5f) * st;
    xyxy[0] = cx - half_w;
    xyxy[1] = cy - half_h;
    xyxy[2] = cx + half_w;
    xyxy[3] = cy + half_h;
}

/* decode_boxes of one anchor's deltas. */
static void decode_deltas(const float *an, const float *d, const float *v, float *b)
{
    const float lim = (float)log(1000.0);
    const float aw = an[2] - an[0], ah = an[3] - an[1];
    const float acx = an[0] + aw / 2.0f, acy = an[1] + ah / 2.0f;
    const float cx = acx + d[0] * v[0] * aw;
    const float cy = acy + d[1] * v[1] * ah;
    float lw = d[2] * v[2], lh = d[3] * v[3];
    lw = lw > lim ? lim : lw;
    lh = lh > lim ? lim : lh;
    const float bw = aw * expf(lw), bh = ah * expf(lh);
    b[0] = cx - bw / 2.0f;
    b[1] = cy - bh / 2.0f;
    b[2] = cx + bw / 2.0f;
    b[3] = cy + bh / 2.0f;
}

/* Softmax over the logits as torch's last-dim kernel: exp(x - max), times
 * the reciprocal of the sum. */
static void softmax(const float *x, int n, float *p)
{
    float mx = x[0];
    for (int i = 1; i < n && mx == mx; i++)
        if (x[i] != x[i] || x[i] > mx)
            mx = x[i];
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        p[i] = expf(x[i] - mx);
        sum += p[i];
    }
    const float r = 1.0f / sum;
    for (int i = 0; i < n; i++)
        p[i] = p[i] * r;
}

sleapc_status sleapc__bbox_decode_ssd(const float *raw, int64_t n_anchors, int n_logits,
                                      const sleapc_ssd_anchors *a,
                                      const sleapc_bbox_decode_opts *opts, sleapc_box *out, int *n)
{
    if (n)
        *n = 0;
    if (!raw || !a || !opts || !out || !n || n_logits < 2 || n_logits > 4096)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "SSD decode: bad arguments");
    const int64_t want = sleapc__ssd_anchor_count(a, opts->in_h, opts->in_w);
    if (want == 0 || want != n_anchors)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "SSD decode: %lld anchors, the config gives %lld for %dx%d",
                            (long long)n_anchors, (long long)want, opts->in_h, opts->in_w);
    if (opts->max_detections <= 0)
        return SLEAPC_OK;
    const int nc = n_logits - 1, stride = n_logits + 4;
    float *p = sleapc__malloc((size_t)n_logits * sizeof *p);
    int64_t cap = 256, m = 0;
    cand *c = sleapc__malloc((size_t)cap * sizeof *c);
    sleapc_status st = SLEAPC_OK;
    if (!p || !c)
        goto oom;
    for (int64_t i = 0; i < n_anchors; i++) {
        softmax(raw + i * stride, n_logits, p);
        for (int k = 0; k < nc; k++) {
            if (!(p[k + 1] >= opts->score_threshold))
                continue;
            if (m == cap) {
                cand *g = sleapc__realloc(c, (size_t)cap * 2 * sizeof *c);
                if (!g)
                    goto oom;
                c = g;
                cap *= 2;
            }
            c[m].score = p[k + 1];
            c[m].key = i * nc + k;
            m++;
        }
    }
    /* pre_nms_top_k: the best in descending order; else flat index order. */
    if (m > PRE_NMS_TOP_K) {
        sort_desc(c, m);
        m = PRE_NMS_TOP_K;
    }
    for (int64_t j = 0; j < m; j++) {
        const int64_t ai = c[j].key / nc;
        float an[4];
        anchor_at(a, opts->in_h, opts->in_w, ai, an);
        decode_deltas(an, raw + ai * stride + n_logits, a->variances, c[j].b);
        if (opts->in_h > 0 && opts->in_w > 0)
            clip_box(c[j].b, opts->in_h, opts->in_w);
        c[j].cls = (int)(c[j].key % nc);
    }
    st = finish(c, m, opts->iou_threshold, opts->max_detections, opts->max_detections, out, n);
    sleapc__free(p);
    sleapc__free(c);
    return st;
oom:
    sleapc__free(p);
    sleapc__free(c);
    return sleapc__fail(SLEAPC_ERR_NOMEM, "SSD decode: out of memory");
}

void sleapc__bbox_clip_to_frame(sleapc_box *boxes, int *n, int frame_h, int frame_w)
{
    if (!boxes || !n)
        return;
    int m = 0;
    for (int i = 0; i < *n; i++) {
        sleapc_box b = boxes[i];
        b.x1 = clampf(b.x1, 0.0f, (float)(frame_w - 1));
        b.y1 = clampf(b.y1, 0.0f, (float)(frame_h - 1));
        b.x2 = clampf(b.x2, 0.0f, (float)(frame_w - 1));
        b.y2 = clampf(b.y2, 0.0f, (float)(frame_h - 1));
        if (b.x2 > b.x1 && b.y2 > b.y1 && isfinite(b.score))
            boxes[m++] = b;
    }
    *n = m;
}
