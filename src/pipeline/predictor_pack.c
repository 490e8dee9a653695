/* Layer outputs -> predicted instances (sleap-nn inference/outputs.py): empty
 * slots are skipped, and the instance score is the layer's score, else the
 * NaN-ignoring sum of the node values (single instance). */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/predictor_impl.h"

/* A box detector's boxes of frame b. sleap-nn gives a box no category when
 * its model has the one default class ("object"); the results' category
 * list says which (sleapc__predictor_set_box_categories). */
static sleapc_status pack_boxes(sleapc_predictions *r, sleapc_pred_frame *f,
                                const sleapc_layer_outputs *o, int64_t b)
{
    const sleapc_box *boxes = NULL;
    int n = sleapc__layer_outputs_frame_boxes(o, b, &boxes);
    f->box_first = r->n_boxes;
    f->n_boxes = 0;
    if (n <= 0)
        return SLEAPC_OK;
    if (sleapc__results_reserve_boxes(r, r->n_boxes + n))
        return sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory");
    /* The box-seeded top-down layer puts box i's crop in slot i: its box
     * links to the instance that slot gave (sleap-nn's packaging). */
    const int64_t I = o->n_slots, N = o->n_nodes;
    int inst = 0;
    for (int i = 0; i < n; i++) {
        const sleapc_box *bx = &boxes[i];
        bool found = false;
        for (int64_t k = 0; i < I && k < 2 * N && !found; k++)
            found = !isnan(o->keypoints[((b * I + i) * N) * 2 + k]);
        r->boxes[r->n_boxes + i] = (sleapc_pred_box){
            .x1 = bx->x1, .y1 = bx->y1, .x2 = bx->x2, .y2 = bx->y2, .score = bx->score,
            .category = r->n_bbox_categories > 0 ? bx->category : -1, .track = -1,
            .tracking_score = NAN, .instance = found ? inst++ : -1};
    }
    r->n_boxes += n;
    f->n_boxes = n;
    return SLEAPC_OK;
}

sleapc_status sleapc__predictor_pack(sleapc_predictor *p, const sleapc_layer_outputs *o)
{
    int64_t N = o->n_nodes, I = o->n_slots;
    /* A box detector's outputs hold boxes only: no slot, no node. */
    if (N != p->n_nodes && !(o->has_boxes && I == 0))
        return sleapc__fail(SLEAPC_ERR_STATE, "predict: layer gave %lld nodes, skeleton has %lld",
                            (long long)N, (long long)p->n_nodes);
    sleapc_predictions *r = &p->results;
    sleapc_status st = sleapc__results_reserve(r, r->n_frames + o->n_frames,
                                               r->n_insts + o->n_frames * I);
    if (st)
        return sleapc__fail(st, "predict: out of memory");
    for (int64_t b = 0; b < o->n_frames; b++) {
        sleapc_pred_frame *f = &r->frames[r->n_frames];
        memset(f, 0, sizeof *f);
        f->first = r->n_insts;
        for (int64_t i = 0; i < I; i++) {
            int64_t slot = b * I + i;
            const float *kp = o->keypoints + slot * N * 2;
            const float *pv = o->peak_values + slot * N;
            bool any = false;
            for (int64_t k = 0; k < 2 * N && !any; k++)
                any = !isnan(kp[k]);
            if (!any)
                continue;
            sleapc_pred_instance *ins = &r->insts[r->n_insts];
            memset(ins, 0, sizeof *ins);
            memcpy(r->points + r->n_insts * N * 2, kp, (size_t)N * 2 * sizeof(float));
            memcpy(r->point_scores + r->n_insts * N, pv, (size_t)N * sizeof(float));
            if (o->has_instance_scores) {
                ins->score = o->instance_scores[slot];
            } else {
                float sum = 0.0f;
                for (int64_t k = 0; k < N; k++)
                    if (!isnan(pv[k]))
                        sum += pv[k];
                ins->score = sum;
            }
            ins->track = o->has_classes ? o->class_inds[slot] : -1;
            ins->tracking_score = o->has_classes ? o->tracking_scores[slot] : NAN;
            ins->class_index = -1;
            if (o->has_centroids) {
                ins->has_centroid = true;
                ins->centroid[0] = o->centroids[slot * 2];
                ins->centroid[1] = o->centroids[slot * 2 + 1];
                ins->centroid_score = o->centroid_values[slot];
            }
            r->n_insts++;
        }
        f->n = r->n_insts - f->first;
        st = pack_boxes(r, f, o, b);
        if (st)
            return st;
        r->n_frames++;
    }
    return SLEAPC_OK;
}
