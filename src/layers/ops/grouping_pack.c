/* Packing one batch of grouped frames into fixed (B, I, ...) slots, after
 * sleap-nn's inference/streaming.py:group_scored_batch. */
#include "layers/ops/grouping.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/coords.h"

int64_t sleapc__grouping_n_slots(const sleapc_grouping_result *frames, int64_t n_frames,
                                 int64_t max_instances)
{
    if (max_instances > 0)
        return max_instances;
    int64_t m = 0;
    for (int64_t b = 0; frames && b < n_frames; b++)
        m = frames[b].n_instances > m ? frames[b].n_instances : m;
    return m > 0 ? m : 1;
}

sleapc_status sleapc__grouping_pack(const sleapc_grouping_result *frames, int64_t n_frames,
                                    int64_t n_nodes, int64_t max_instances, int64_t n_slots,
                                    float input_scale, const float *eff_scale, float *keypoints,
                                    float *peak_values, float *instance_scores)
{
    if (n_frames < 0 || n_nodes < 1 || n_slots < 1 || (n_frames && !frames) ||
        (n_frames && (!keypoints || !peak_values || !instance_scores)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "pack instances: bad arguments");
    if (n_frames && n_slots > INT64_MAX / 2 / n_frames / n_nodes)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "pack instances: sizes overflow");
    int64_t most = 0;
    for (int64_t b = 0; b < n_frames; b++) {
        if (frames[b].n_instances < 0 ||
            (frames[b].n_instances > 0 && frames[b].n_nodes != n_nodes))
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "pack instances: frame %lld: node count differs", (long long)b);
        if (frames[b].n_instances > n_slots && max_instances <= 0)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "pack instances: frame %lld: %lld instances, %lld slots",
                                (long long)b, (long long)frames[b].n_instances, (long long)n_slots);
        most = frames[b].n_instances > most ? frames[b].n_instances : most;
    }
    for (int64_t i = 0; i < n_frames * n_slots * n_nodes * 2; i++)
        keypoints[i] = NAN;
    for (int64_t i = 0; i < n_frames * n_slots * n_nodes; i++)
        peak_values[i] = NAN;
    for (int64_t i = 0; i < n_frames * n_slots; i++)
        instance_scores[i] = NAN;

    /* Only for frames built by hand: results from group_frame carry their
     * own order scratch. */
    int64_t *spare = NULL;
    for (int64_t b = 0; b < n_frames; b++) {
        const sleapc_grouping_result *f = &frames[b];
        const int64_t n = f->n_instances;
        const float eff = eff_scale ? eff_scale[b] : 1.0f;
        int64_t *order = NULL; /* NULL: assembly order */
        if (n > n_slots) {
            order = f->order && f->cap_instances >= n ? f->order : spare;
            if (!order) {
                order = spare = sleapc__malloc((size_t)most * sizeof *order);
                if (!order)
                    return sleapc__fail(SLEAPC_ERR_NOMEM, "pack instances: out of memory");
            }
            /* np.argsort(scores)[::-1]: descending, equal scores later-first. */
            sleapc__grouping_argsort(f->scores, n, order);
            for (int64_t i = 0; i < n / 2; i++) {
                int64_t t = order[i];
                order[i] = order[n - 1 - i];
                order[n - 1 - i] = t;
            }
        }
        const int64_t n_keep = n < n_slots ? n : n_slots;
        for (int64_t i = 0; i < n_keep; i++) {
            const int64_t src = order ? order[i] : i;
            const int64_t dst = b * n_slots + i;
            float *xy = keypoints + dst * n_nodes * 2;
            memcpy(xy, f->keypoints + src * n_nodes * 2, (size_t)n_nodes * 2 * sizeof(float));
            sleapc__coords_undo_input_scale(xy, n_nodes, input_scale);
            sleapc__coords_undo_eff_scale(xy, n_nodes, eff);
            memcpy(peak_values + dst * n_nodes, f->peak_values + src * n_nodes,
                   (size_t)n_nodes * sizeof(float));
            instance_scores[dst] = f->scores[src];
        }
    }
    sleapc__free(spare);
    return SLEAPC_OK;
}
