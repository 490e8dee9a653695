/* Consistency checks on predictions before any writer touches the disk. */
#include "io/slp/pred_check.h"

#include "core/error.h"

static bool pairs_ok(const int (*v)[2], int n, int n_nodes)
{
    if (n < 0 || (n > 0 && !v))
        return false;
    for (int i = 0; i < n; i++)
        if (v[i][0] < 0 || v[i][0] >= n_nodes || v[i][1] < 0 || v[i][1] >= n_nodes)
            return false;
    return true;
}

sleapc_status sleapc__predictions_check_header(const sleapc_predictions *pr, const char *action)
{
    if (!pr)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: no predictions", action);
    if (pr->n_nodes < 1 || !pr->node_names)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: skeleton has no nodes", action);
    for (int i = 0; i < pr->n_nodes; i++)
        if (!pr->node_names[i])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: node %d has no name", action, i);
    if (!pairs_ok((const int(*)[2])pr->edges, pr->n_edges, pr->n_nodes) ||
        !pairs_ok((const int(*)[2])pr->symmetries, pr->n_symmetries, pr->n_nodes))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: edge or symmetry names a missing node",
                            action);
    if (pr->n_tracks < 0 || (pr->n_tracks > 0 && !pr->track_names))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: bad track list", action);
    for (int i = 0; i < pr->n_tracks; i++)
        if (!pr->track_names[i])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: track %d has no name", action, i);
    if (pr->n_videos < 0 || (pr->n_videos > 0 && !pr->videos))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: bad video list", action);
    return SLEAPC_OK;
}

sleapc_status sleapc__predictions_check(const sleapc_predictions *pr, const char *action)
{
    sleapc_status st = sleapc__predictions_check_header(pr, action);
    if (st)
        return st;
    if (pr->n_frames < 0 || (pr->n_frames > 0 && !pr->frames) || pr->n_insts < 0 ||
        (pr->n_insts > 0 && (!pr->insts || !pr->points || !pr->point_scores)) ||
        pr->emb_dim < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: bad frame or instance arrays", action);
    for (int64_t k = 0; k < pr->n_frames; k++) {
        const sleapc_pred_frame *fr = &pr->frames[k];
        if (fr->video < 0 || fr->video >= pr->n_videos || fr->frame_idx < 0 || fr->n < 0 ||
            fr->first < 0 || fr->first > pr->n_insts - fr->n)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "%s: frame %lld: bad video, frame index or instance range", action,
                                (long long)k);
    }
    for (int64_t i = 0; i < pr->n_insts; i++)
        if (pr->insts[i].track < -1 || pr->insts[i].track >= pr->n_tracks)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: instance %lld: no track %d", action,
                                (long long)i, pr->insts[i].track);
    return SLEAPC_OK;
}
