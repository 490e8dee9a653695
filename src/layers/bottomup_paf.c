#include "layers/bottomup_paf.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/stage_kept_heads.h"

void sleapc__paf_scorer_init(sleapc_paf_scorer *ps, bool device)
{
    memset(ps, 0, sizeof *ps);
    ps->device = device;
}

void sleapc__paf_scorer_free(sleapc_paf_scorer *ps)
{
    sleapc__free(ps->sample);
    sleapc__free(ps->src);
    sleapc__free(ps->dst);
    sleapc__free(ps->t);
    memset(ps, 0, sizeof *ps);
}

static sleapc_status reserve(sleapc_paf_scorer *ps, int64_t n, int n_points)
{
    if (n > ps->cap) {
        if (ps->cap <= INT64_MAX / 2 && 2 * ps->cap > n)
            n = 2 * ps->cap;
        sleapc__free(ps->sample);
        sleapc__free(ps->src);
        sleapc__free(ps->dst);
        ps->sample = sleapc__malloc((size_t)n * sizeof *ps->sample);
        ps->src = sleapc__malloc((size_t)n * sizeof *ps->src);
        ps->dst = sleapc__malloc((size_t)n * sizeof *ps->dst);
        ps->cap = ps->sample && ps->src && ps->dst ? n : 0;
        if (!ps->cap)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "PAF scores: out of memory");
    }
    if (n_points != ps->t_n) {
        sleapc__free(ps->t);
        ps->t = sleapc__malloc((size_t)n_points * sizeof *ps->t);
        ps->t_n = ps->t ? n_points : 0;
        if (!ps->t)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "PAF scores: out of memory");
        sleapc__paf_linspace(n_points, ps->t);
    }
    return SLEAPC_OK;
}

/* The whole batch in one request to the device. */
static sleapc_status on_device(sleapc_paf_scorer *ps, sleapc_stage *stage, const char *head,
                               const sleapc_tensor *pafs, int64_t n_edges,
                               const sleapc_peak_list *pk, const int64_t *peak_off,
                               const int64_t *cand_off, int64_t b, const int32_t *edge_inds,
                               const int64_t (*edge_peak_inds)[2],
                               const sleapc_paf_score_opts *opts, float *scores)
{
    int64_t n = cand_off[b];
    sleapc_status st = reserve(ps, n, opts->n_points);
    if (st)
        return st;
    for (int64_t s = 0; s < b; s++) {
        const float *peaks = pk->peaks + 2 * peak_off[s];
        const int64_t np = peak_off[s + 1] - peak_off[s];
        for (int64_t c = cand_off[s]; c < cand_off[s + 1]; c++) {
            const int64_t i = edge_peak_inds[c][0], j = edge_peak_inds[c][1];
            if (i < 0 || i >= np || j < 0 || j >= np)
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                    "PAF scores: candidate %lld: peaks out of range", (long long)c);
            ps->sample[c] = (int32_t)s;
            memcpy(ps->src[c], peaks + 2 * i, sizeof ps->src[c]);
            memcpy(ps->dst[c], peaks + 2 * j, sizeof ps->dst[c]);
        }
    }
    /* As sleapc__paf_score_lines converts it. */
    const float max_len = (float)sleapc__paf_max_edge_length(
        opts->max_edge_length_ratio, n_edges, pafs->shape[2], pafs->shape[3], opts->paf_stride);
    sleapc_backend_paf_lines ln = {.n = n,
                                   .sample = ps->sample,
                                   .edge = edge_inds,
                                   .src = (const float(*)[2])ps->src,
                                   .dst = (const float(*)[2])ps->dst,
                                   .t = ps->t,
                                   .n_points = opts->n_points,
                                   .paf_stride = opts->paf_stride,
                                   .max_edge_length = max_len,
                                   .dist_penalty_weight = (float)opts->dist_penalty_weight};
    return sleapc__backend_device_paf_scores(stage->be, head, &ln, scores);
}

sleapc_status sleapc__paf_scorer_run(sleapc_paf_scorer *ps, sleapc_stage *stage, const char *head,
                                     const sleapc_tensor *pafs, int64_t n_edges,
                                     const sleapc_peak_list *pk, const int64_t *peak_off,
                                     const int64_t *cand_off, int64_t b, const int32_t *edge_inds,
                                     const int64_t (*edge_peak_inds)[2],
                                     const sleapc_paf_score_opts *opts, float *scores)
{
    if (ps->device && !opts->sleap1 && cand_off[b] > 0) {
        sleapc_status st = on_device(ps, stage, head, pafs, n_edges, pk, peak_off, cand_off, b,
                                     edge_inds, edge_peak_inds, opts, scores);
        if (!st && !ps->told)
            sleapc__log(SLEAPC_LOG_DEBUG, "bottom-up: PAF lines scored on the %s device",
                        sleapc__backend_name(stage->be));
        ps->told = ps->told || !st;
        if (!st)
            return SLEAPC_OK;
        if (st != SLEAPC_ERR_UNSUPPORTED)
            sleapc__log(SLEAPC_LOG_WARN,
                        "PAF scores on the device failed (%s); scoring on "
                        "the host from now on",
                        sleapc__last_error());
        sleapc__clear_error();
        ps->device = false;
    }
    if (cand_off[b] == 0)
        return SLEAPC_OK;
    /* Maps kept on the device come down now. */
    sleapc_status st = sleapc__stage_head_maps(stage, head, &pafs);
    if (st)
        return st;
    const int64_t hp = pafs->shape[2], wp = pafs->shape[3];
    for (int64_t s = 0; s < b && !st; s++)
        st = sleapc__paf_score_lines((const float *)pafs->data + s * pafs->shape[1] * hp * wp,
                                     n_edges, hp, wp, pk->peaks + 2 * peak_off[s],
                                     peak_off[s + 1] - peak_off[s], edge_inds + cand_off[s],
                                     edge_peak_inds + cand_off[s], cand_off[s + 1] - cand_off[s],
                                     opts, scores + cand_off[s]);
    return st;
}
