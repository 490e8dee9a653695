#include "layers/topdown_classes.h"

#include <string.h>

/* Crop k's results into output slot `slot`. */
static void put_crop(const sleapc_topdown_batch *tb, int64_t k, int64_t slot,
                     sleapc_layer_outputs *out)
{
    const int64_t N = tb->n_nodes;
    memcpy(out->crop_keypoints + slot * N * 2, tb->peaks + k * N * 2,
           (size_t)N * 2 * sizeof(float));
    memcpy(out->keypoints + slot * N * 2, tb->lifted + k * N * 2, (size_t)N * 2 * sizeof(float));
    memcpy(out->peak_values + slot * N, tb->vals + k * N, (size_t)N * sizeof(float));
    memcpy(out->bboxes + slot * 8, tb->bboxes + k * 8, 8 * sizeof(float));
}

void sleapc__topdown_place(const sleapc_topdown_batch *tb, sleapc_layer_outputs *out)
{
    for (int64_t k = 0; k < tb->n_crops; k++)
        put_crop(tb, k, tb->crop_frame[k] * tb->n_slots + tb->crop_slot[k], out);
}

sleapc_status sleapc__topdown_classes(const sleapc_topdown_batch *tb, sleapc_identity_ws *ws,
                                      sleapc_layer_outputs *out)
{
    const int64_t N = tb->n_nodes > 0 ? tb->n_nodes : 1, I = tb->n_slots, b = tb->n_frames;
    sleapc__topdown_place(tb, out);
    sleapc_status st = sleapc__identity_topdown_assign(
        tb->vecs, tb->n_crops, tb->n_classes, tb->crop_frame, tb->crop_slot, b, I, N, ws,
        tb->class_inds, out->tracking_scores, out->class_vectors);
    if (st)
        return st;
    for (int64_t k = 0; k < b * I; k++)
        out->class_inds[k] = (int32_t)tb->class_inds[k * N];
    return SLEAPC_OK;
}

/* SLEAP 1.x TopDownMultiClassFindPeaks + TopDownMultiClassPredictor: slot =
 * class; a crop keeps its class only where that is its best class
 * (classify_peaks_from_vectors). The predictor zips the class slots with the
 * frame's centroid values padded with NaN to the batch's largest centroid
 * count, so slot i scores the i-th centroid's value (whichever crop took
 * class i) and slots beyond that count are dropped. */
sleapc_status sleapc__topdown_classes_sleap1(const sleapc_topdown_batch *tb,
                                             sleapc_identity_ws *ws, sleapc_layer_outputs *out)
{
    const int64_t C = tb->n_classes, N = tb->n_nodes, n = tb->n_crops, b = tb->n_frames;
    sleapc_status st = sleapc__identity_topdown_classes_sleap1(
        tb->vecs, n, C, tb->crop_frame, b, ws, tb->crop_class, tb->crop_prob);
    if (st)
        return st;
    st = sleapc__layer_outputs_reset(out, b, C, N, C);
    if (st)
        return st;
    out->has_instance_scores = out->has_crops = out->has_centroids = true;
    out->has_classes = out->has_class_vectors = true;
    int64_t max_count = 0;
    for (int64_t s = 0, k = 0; s < b; s++) {
        int64_t count = 0;
        out->eff_scale[s] = tb->eff_scale;
        for (; k < n && tb->crop_frame[k] == s; k++, count++) {
            if (count < C)
                out->instance_scores[s * C + count] = tb->cent_val[k];
        }
        max_count = count > max_count ? count : max_count;
    }
    for (int64_t k = 0; k < n; k++) {
        const int64_t c = tb->crop_class[k];
        if (c < 0 || c >= max_count)
            continue;
        const int64_t slot = tb->crop_frame[k] * C + c;
        put_crop(tb, k, slot, out);
        out->centroids[2 * slot] = tb->cent_xy[2 * k];
        out->centroids[2 * slot + 1] = tb->cent_xy[2 * k + 1];
        out->centroid_values[slot] = tb->cent_val[k];
        out->tracking_scores[slot] = tb->crop_prob[k];
        out->class_inds[slot] = (int32_t)c;
        memcpy(out->class_vectors + slot * C, tb->vecs + k * C, (size_t)C * sizeof(float));
    }
    return SLEAPC_OK;
}
