/* bbox mode (sleap-nn 0.3.5 _run_bbox_evaluation, bbox_frame_pairs,
 * _frame_bbox_arrays_by_name): every GT frame with a usable user box is
 * scored against the predicted boxes of the prediction frame of its
 * video and frame index. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_bbox.h"

#define OBJECT "object" /* sleap-nn DEFAULT_BBOX_CATEGORY */

typedef struct names {
    int n;
    const char **s;
} names;

/* The index of name (added when new). */
static int name_index(names *c, const char *name)
{
    for (int k = 0; k < c->n; k++)
        if (!strcmp(c->s[k], name))
            return k;
    c->s[c->n] = name;
    return c->n++;
}

static const char *cat_name(const sleapc_ev_labels *l, int category)
{
    return category >= 0 ? l->box_categories[category] : OBJECT;
}

/* class_agnostic=None: one name at most on each side. */
static bool class_agnostic(const sleapc_ev_labels *gt, const sleapc_ev_gt_box *g, int64_t n_g,
                           const sleapc_ev_labels *pr)
{
    const char *first = NULL;
    for (int64_t i = 0; i < n_g; i++) {
        const char *s = cat_name(gt, g[i].category);
        if (first && strcmp(first, s))
            return false;
        first = s;
    }
    first = NULL;
    for (int64_t b = 0; b < pr->n_boxes; b++) {
        if (!pr->boxes[b].predicted)
            continue;
        const char *s = cat_name(pr, pr->boxes[b].category);
        if (first && strcmp(first, s))
            return false;
        first = s;
    }
    return true;
}

/* Items of each frame, grouped stably: start[f] .. start[f + 1] in ix. */
static sleapc_status group(int64_t n_frames, int64_t n, const int64_t *frame_of, int64_t **start,
                           int64_t **ix)
{
    *start = sleapc__calloc((size_t)n_frames + 2, sizeof **start);
    *ix = sleapc__malloc(((size_t)n + 1) * sizeof **ix);
    if (!*start || !*ix)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    for (int64_t i = 0; i < n; i++)
        (*start)[frame_of[i] + 2]++;
    for (int64_t f = 0; f < n_frames; f++)
        (*start)[f + 2] += (*start)[f + 1];
    for (int64_t i = 0; i < n; i++)
        (*ix)[(*start)[frame_of[i] + 1]++] = i;
    return SLEAPC_OK;
}

/* Prediction frames sorted by (video, frame index, row): Labels.find's
 * frame of a video and frame index (the last), by binary search. */
typedef struct fkey {
    int64_t video, frame_idx, row;
} fkey;

static int cmp_fkey(const void *a, const void *b)
{
    const fkey *x = a, *y = b;
    if (x->video != y->video)
        return x->video < y->video ? -1 : 1;
    if (x->frame_idx != y->frame_idx)
        return x->frame_idx < y->frame_idx ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int64_t find_first(const fkey *k, int64_t n, int64_t video, int64_t frame_idx)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (k[mid].video < video || (k[mid].video == video && k[mid].frame_idx < frame_idx))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct work {
    sleapc_ev_bbox_frame *frames;
    int64_t n_frames;
    double *gt, *pred, *score;
    int *gt_cls, *pred_cls;
    names cats;
} work;

static void work_free(work *w)
{
    sleapc__free(w->frames);
    sleapc__free(w->gt);
    sleapc__free(w->pred);
    sleapc__free(w->score);
    sleapc__free(w->gt_cls);
    sleapc__free(w->pred_cls);
    sleapc__free(w->cats.s);
}

/* The frames of compute_bbox_metrics. gs/gi: GT boxes by GT frame; ps/pi:
 * predicted boxes by prediction frame. */
static sleapc_status pair(const sleapc_ev_result *r, const sleapc_ev_gt_box *g, int64_t n_g,
                          const int64_t *gs, const int64_t *gi, const int64_t *ps,
                          const int64_t *pi, bool agnostic, work *w)
{
    const sleapc_ev_labels *gt = r->gt, *pr = r->pr;
    /* gt_to_pr: the last prediction video matched to each GT video */
    int *pr_of = sleapc__malloc(((size_t)gt->n_videos + 1) * sizeof *pr_of);
    fkey *keys = sleapc__malloc(((size_t)pr->n_frames + 1) * sizeof *keys);
    if (!pr_of || !keys) {
        sleapc__free(pr_of);
        sleapc__free(keys);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    }
    for (int v = 0; v < gt->n_videos; v++)
        pr_of[v] = -1;
    for (int v = 0; v < pr->n_videos; v++)
        if (r->video_map[v] >= 0)
            pr_of[r->video_map[v]] = v;
    for (int64_t q = 0; q < pr->n_frames; q++)
        keys[q] = (fkey){pr->frames[q].video, pr->frames[q].frame_idx, q};
    qsort(keys, (size_t)pr->n_frames, sizeof *keys, cmp_fkey);
    /* room: the boxes of every prediction frame each scored GT frame pairs with */
    int64_t n_pred_max = 0;
    for (int64_t f = 0; f < gt->n_frames; f++) {
        const int vp = pr_of[gt->frames[f].video];
        if (gs[f + 1] == gs[f] || vp < 0)
            continue;
        int64_t q = -1;
        for (int64_t j = find_first(keys, pr->n_frames, vp, gt->frames[f].frame_idx);
             j < pr->n_frames && keys[j].video == vp &&
             keys[j].frame_idx == gt->frames[f].frame_idx;
             j++)
            q = keys[j].row;
        n_pred_max += q >= 0 ? ps[q + 1] - ps[q] : 0;
    }
    w->frames = sleapc__calloc((size_t)gt->n_frames + 1, sizeof *w->frames);
    w->gt = sleapc__malloc(((size_t)n_g + 1) * 4 * sizeof *w->gt);
    w->gt_cls = sleapc__malloc(((size_t)n_g + 1) * sizeof *w->gt_cls);
    w->pred = sleapc__malloc(((size_t)n_pred_max + 1) * 4 * sizeof *w->pred);
    w->score = sleapc__malloc(((size_t)n_pred_max + 1) * sizeof *w->score);
    w->pred_cls = sleapc__malloc(((size_t)n_pred_max + 1) * sizeof *w->pred_cls);
    w->cats.s = sleapc__malloc(((size_t)gt->n_box_categories + pr->n_box_categories + 2) *
                               sizeof *w->cats.s);
    if (!w->frames || !w->gt || !w->gt_cls || !w->pred || !w->score || !w->pred_cls || !w->cats.s) {
        sleapc__free(pr_of);
        sleapc__free(keys);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    }
    int64_t ng = 0, np = 0;
    for (int64_t f = 0; f < gt->n_frames; f++) {
        if (gs[f + 1] == gs[f])
            continue;
        sleapc_ev_bbox_frame *fr = &w->frames[w->n_frames++];
        const int64_t g0 = ng, p0 = np;
        for (int64_t k = gs[f]; k < gs[f + 1]; k++, ng++) {
            memcpy(w->gt + 4 * ng, g[gi[k]].xyxy, 4 * sizeof *w->gt);
            w->gt_cls[ng] = name_index(&w->cats, cat_name(gt, g[gi[k]].category));
        }
        const int vp = pr_of[gt->frames[f].video];
        const int64_t fi = gt->frames[f].frame_idx;
        /* Labels.find: the last frame of the video and frame index */
        int64_t q = -1;
        for (int64_t j = vp < 0 ? pr->n_frames : find_first(keys, pr->n_frames, vp, fi);
             j < pr->n_frames && keys[j].video == vp && keys[j].frame_idx == fi; j++)
            q = keys[j].row;
        if (q >= 0) {
            for (int64_t k = ps[q]; k < ps[q + 1]; k++) {
                const sleapc_ev_box *b = &pr->boxes[pi[k]];
                if (!b->predicted || isnan(b->x1) || isnan(b->y1) || isnan(b->x2) || isnan(b->y2))
                    continue;
                sleapc__ev_box_bounds(b, w->pred + 4 * np);
                w->score[np] = b->score;
                w->pred_cls[np++] = name_index(&w->cats, cat_name(pr, b->category));
            }
        }
        if (agnostic) {
            memset(w->gt_cls + g0, 0, (size_t)(ng - g0) * sizeof *w->gt_cls);
            memset(w->pred_cls + p0, 0, (size_t)(np - p0) * sizeof *w->pred_cls);
        }
        *fr =
            (sleapc_ev_bbox_frame){ng - g0,          np - p0,       w->gt + 4 * g0,  w->gt_cls + g0,
                                   w->pred + 4 * p0, w->score + p0, w->pred_cls + p0};
    }
    if (agnostic) {
        w->cats.n = 1;
        w->cats.s[0] = OBJECT;
    }
    sleapc__free(pr_of);
    sleapc__free(keys);
    return SLEAPC_OK;
}

sleapc_status sleapc__ev_bbox(sleapc_ev_result *r, const sleapc_ev_opts *o)
{
    r->method = SLEAPC_EV_BBOX;
    bool any = false;
    for (int64_t b = 0; b < r->pr->n_boxes && !any; b++)
        any = r->pr->boxes[b].predicted;
    if (!any) {
        sleapc__log(SLEAPC_LOG_INFO, "eval: 0 predicted boxes in %s: skipping metric computation",
                    r->pr->path);
        return SLEAPC_OK;
    }
    if (!isfinite(o->bbox_padding))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval: --bbox_padding must be finite");
    sleapc_ev_gt_box *g = NULL;
    int64_t n_g = 0, *gs = NULL, *gi = NULL, *ps = NULL, *pi = NULL, *of = NULL;
    work w = {0};
    sleapc_status st =
        sleapc__ev_bbox_gt(r->gt, o->bbox_source, o->bbox_padding, &g, &n_g, &r->bbox_source);
    if (!st)
        st = sleapc__ev_match_videos(r);
    const int64_t n_of = n_g > r->pr->n_boxes ? n_g : r->pr->n_boxes;
    if (!st && !(of = sleapc__malloc(((size_t)n_of + 1) * sizeof *of)))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    for (int64_t i = 0; !st && i < n_g; i++)
        of[i] = g[i].frame;
    if (!st)
        st = group(r->gt->n_frames, n_g, of, &gs, &gi);
    for (int64_t i = 0; !st && i < r->pr->n_boxes; i++)
        of[i] = r->pr->boxes[i].frame;
    if (!st)
        st = group(r->pr->n_frames, r->pr->n_boxes, of, &ps, &pi);
    if (!st)
        st = pair(r, g, n_g, gs, gi, ps, pi, class_agnostic(r->gt, g, n_g, r->pr), &w);
    if (!st && w.n_frames == 0)
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "eval: Empty Frame Pairs: no frame of %s has a usable ground-truth box "
                          "(from %s)",
                          r->gt->path, r->bbox_source);
    if (!st)
        st = sleapc__ev_bbox_metrics(w.frames, w.n_frames, w.cats.n, w.cats.s, &r->metrics);
    if (!st) {
        r->has_metrics = true;
        r->n_frame_pairs = w.n_frames;
    }
    work_free(&w);
    void *all[] = {g, gs, gi, ps, pi, of};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sleapc__free(all[i]);
    return st;
}
