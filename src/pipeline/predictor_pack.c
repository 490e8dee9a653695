/* Layer outputs -> predicted instances (sleap-nn inference/outputs.py): empty
 * slots are skipped, and the instance score is the layer's score, else the
 * NaN-ignoring sum of the node values (single instance). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/predictor.h"

static sleapc_status reserve(sleapc_predictor *p, int64_t n_frames, int64_t n_insts)
{
    if ((size_t)n_frames + 1 > p->frame_cap) {
        size_t cap = p->frame_cap ? p->frame_cap : 64;
        while (cap < (size_t)n_frames + 1)
            cap *= 2;
        int64_t *f = sleapc__realloc(p->frame_first, cap * sizeof *f);
        if (!f)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory");
        p->frame_first = f;
        p->frame_cap = cap;
    }
    if ((size_t)n_insts > p->inst_cap) {
        size_t cap = p->inst_cap ? p->inst_cap : 64;
        while (cap < (size_t)n_insts)
            cap *= 2;
        packed_instance *ins = sleapc__realloc(p->insts, cap * sizeof *ins);
        if (!ins)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory");
        p->insts = ins;
        p->inst_cap = cap;
        size_t nn = (size_t)(p->n_nodes > 0 ? p->n_nodes : 1);
        float *pts = sleapc__realloc(p->points, cap * nn * 2 * sizeof *pts);
        if (pts)
            p->points = pts;
        float *sc = pts ? sleapc__realloc(p->point_scores, cap * nn * sizeof *sc) : NULL;
        if (sc)
            p->point_scores = sc;
        if (!pts || !sc)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory");
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__predictor_pack(sleapc_predictor *p, const sleapc_layer_outputs *o)
{
    int64_t N = o->n_nodes, I = o->n_slots;
    if (N != p->n_nodes)
        return sleapc__fail(SLEAPC_ERR_STATE, "predict: layer gave %lld nodes, skeleton has %lld",
                            (long long)N, (long long)p->n_nodes);
    sleapc_status st = reserve(p, p->n_frames + o->n_frames, p->n_insts + o->n_frames * I);
    if (st)
        return st;
    for (int64_t b = 0; b < o->n_frames; b++) {
        p->frame_first[p->n_frames] = p->n_insts;
        for (int64_t i = 0; i < I; i++) {
            int64_t slot = b * I + i;
            const float *kp = o->keypoints + slot * N * 2;
            const float *pv = o->peak_values + slot * N;
            bool any = false;
            for (int64_t k = 0; k < 2 * N && !any; k++)
                any = !isnan(kp[k]);
            if (!any)
                continue;
            packed_instance *ins = &p->insts[p->n_insts];
            memset(ins, 0, sizeof *ins);
            memcpy(p->points + p->n_insts * N * 2, kp, (size_t)N * 2 * sizeof(float));
            memcpy(p->point_scores + p->n_insts * N, pv, (size_t)N * sizeof(float));
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
            if (o->has_centroids) {
                ins->has_centroid = true;
                ins->centroid[0] = o->centroids[slot * 2];
                ins->centroid[1] = o->centroids[slot * 2 + 1];
                ins->centroid_score = o->centroid_values[slot];
            }
            p->n_insts++;
        }
        p->n_frames++;
    }
    p->frame_first[p->n_frames] = p->n_insts;
    return SLEAPC_OK;
}
