/* bbox mode's ground-truth boxes (see eval_bbox.h): sleap-nn 0.3.5
 * resolve_bbox_source, _derived_frame_bboxes and frame_user_bboxes, with
 * sleap-io's Instance.to_bbox(mode="tight", padding=P). */
#include <math.h>
#include <stdbool.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_bbox.h"

void sleapc__ev_box_bounds(const sleapc_ev_box *b, double xyxy[4])
{
    xyxy[0] = b->x1;
    xyxy[1] = b->y1;
    xyxy[2] = b->x2;
    xyxy[3] = b->y2;
    if (!(fabs(b->angle) > 1e-10))
        return;
    /* the rotated corners' extent, as BoundingBox.corners makes them */
    const double hw = (b->x2 - b->x1) / 2, hh = (b->y2 - b->y1) / 2;
    const double cx = (b->x1 + b->x2) / 2, cy = (b->y1 + b->y2) / 2;
    const double c = cos(b->angle), s = sin(b->angle);
    const double dx[4] = {-hw, hw, hw, -hw}, dy[4] = {-hh, -hh, hh, hh};
    for (int k = 0; k < 4; k++) {
        const double x = dx[k] * c - dy[k] * s + cx, y = dx[k] * s + dy[k] * c + cy;
        if (k == 0 || x < xyxy[0])
            xyxy[0] = x;
        if (k == 0 || y < xyxy[1])
            xyxy[1] = y;
        if (k == 0 || x > xyxy[2])
            xyxy[2] = x;
        if (k == 0 || y > xyxy[3])
            xyxy[3] = y;
    }
}

/* frame_user_bboxes' test. */
static bool usable_user(const sleapc_ev_box *b)
{
    return !b->predicted && !isnan(b->x1) && !isnan(b->y1) && !isnan(b->x2) && !isnan(b->y2) &&
           b->x2 - b->x1 > 0 && b->y2 - b->y1 > 0;
}

/* The tight box of instance i's visible points (x not NaN) padded, or
 * false. A visible point with a NaN y makes the box NaN (numpy's min). */
static bool derived(const sleapc_ev_labels *gt, int64_t i, double pad, double xyxy[4])
{
    const double *p = sleapc__ev_points(gt, i);
    bool any = false;
    for (int k = 0; k < gt->insts[i].n_nodes; k++) {
        const double x = p[2 * k], y = p[2 * k + 1];
        if (isnan(x))
            continue;
        if (isnan(y))
            return false;
        if (!any || x < xyxy[0])
            xyxy[0] = x;
        if (!any || x > xyxy[2])
            xyxy[2] = x;
        if (!any || y < xyxy[1])
            xyxy[1] = y;
        if (!any || y > xyxy[3])
            xyxy[3] = y;
        any = true;
    }
    if (!any)
        return false;
    xyxy[0] -= pad;
    xyxy[1] -= pad;
    xyxy[2] += pad;
    xyxy[3] += pad;
    return !isnan(xyxy[0]) && !isnan(xyxy[1]) && !isnan(xyxy[2]) && !isnan(xyxy[3]) &&
           xyxy[2] - xyxy[0] > 0 && xyxy[3] - xyxy[1] > 0;
}

sleapc_status sleapc__ev_bbox_gt(const sleapc_ev_labels *gt, sleapc_ev_box_source src,
                                 double padding, sleapc_ev_gt_box **out, int64_t *n,
                                 const char **source)
{
    *out = NULL;
    *n = 0;
    bool any_box = false, any_user = false;
    for (int64_t b = 0; b < gt->n_boxes; b++)
        any_box = any_box || usable_user(&gt->boxes[b]);
    for (int64_t i = 0; i < gt->n_insts; i++)
        any_user = any_user || !gt->insts[i].predicted;
    if (src == SLEAPC_EV_BOXES_AUTO)
        src = any_box    ? SLEAPC_EV_BOXES_BBOXES
              : any_user ? SLEAPC_EV_BOXES_INSTANCES
                         : SLEAPC_EV_BOXES_MASKS;
    if (src == SLEAPC_EV_BOXES_MASKS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "eval: %s: no ground-truth boxes: it holds no user boxes and no user "
                            "instances to derive them from, and sleapc reads no masks",
                            gt->path);
    *source = src == SLEAPC_EV_BOXES_BBOXES ? "bboxes" : "instances";
    const int64_t cap = (src == SLEAPC_EV_BOXES_BBOXES ? gt->n_boxes : gt->n_insts) + 1;
    sleapc_ev_gt_box *o = sleapc__calloc((size_t)cap, sizeof *o);
    if (!o)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    if (src == SLEAPC_EV_BOXES_BBOXES) {
        /* boxes are kept in file order; a frame's come in that order too */
        for (int64_t b = 0; b < gt->n_boxes; b++)
            if (usable_user(&gt->boxes[b])) {
                o[*n].frame = gt->boxes[b].frame;
                o[*n].category = gt->boxes[b].category;
                sleapc__ev_box_bounds(&gt->boxes[b], o[*n].xyxy);
                (*n)++;
            }
    } else {
        for (int64_t f = 0; f < gt->n_frames; f++)
            for (int64_t i = gt->frames[f].first; i < gt->frames[f].first + gt->frames[f].n; i++)
                if (!gt->insts[i].predicted && derived(gt, i, padding, o[*n].xyxy)) {
                    o[*n].frame = f;
                    o[*n].category = -1;
                    (*n)++;
                }
    }
    *out = o;
    return SLEAPC_OK;
}
