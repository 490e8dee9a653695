/* sleap-nn's Tracker.track with FixedWindowCandidates / LocalQueueCandidates,
 * frame by frame. Stored candidates keep their points, feature, track and
 * visible-point count; nothing else of a past frame is kept. */
#include "pipeline/tracking/tracker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/track_score.h"
#include "pipeline/tracking/tracker_impl.h"

/* Grows an instance set to hold cap instances. */
static sleapc_status set_reserve(inst_set *s, int cap, int n_nodes, int fdim)
{
    if (cap <= s->cap)
        return SLEAPC_OK;
    int64_t *track = sleapc__realloc(s->track, (size_t)cap * sizeof *track);
    if (track)
        s->track = track;
    int *valid = sleapc__realloc(s->valid, (size_t)cap * sizeof *valid);
    if (valid)
        s->valid = valid;
    double *kp = sleapc__realloc(s->kp, (size_t)cap * (size_t)n_nodes * 2 * sizeof *kp);
    if (kp)
        s->kp = kp;
    double *feat = sleapc__realloc(s->feat, (size_t)cap * (size_t)fdim * sizeof *feat);
    if (feat)
        s->feat = feat;
    if (!track || !valid || !kp || !feat)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
    s->cap = cap;
    return SLEAPC_OK;
}

static void set_free(inst_set *s)
{
    sleapc__free(s->track);
    sleapc__free(s->valid);
    sleapc__free(s->kp);
    sleapc__free(s->feat);
    sleapc__free(s->gray);
    memset(s, 0, sizeof *s);
}

/* Copies instance i of src (or all when i < 0) into dst, and the image. */
sleapc_status sleapc__tracker_set_copy(sleapc_tracker *t, inst_set *dst, const inst_set *src, int i)
{
    const int lo = i < 0 ? 0 : i, n = i < 0 ? src->n : 1;
    sleapc_status st = set_reserve(dst, n > 0 ? n : 1, t->n_nodes, t->fdim);
    if (st)
        return st;
    const size_t kpn = (size_t)t->n_nodes * 2;
    memcpy(dst->track, src->track + lo, (size_t)n * sizeof *dst->track);
    memcpy(dst->valid, src->valid + lo, (size_t)n * sizeof *dst->valid);
    memcpy(dst->kp, src->kp + (size_t)lo * kpn, (size_t)n * kpn * sizeof *dst->kp);
    memcpy(dst->feat, src->feat + (size_t)lo * (size_t)t->fdim,
           (size_t)n * (size_t)t->fdim * sizeof *dst->feat);
    dst->n = n;
    dst->frame_idx = src->frame_idx;
    dst->seq = src->seq;
    if (t->o.use_flow) {
        if (!dst->gray) {
            dst->gray = sleapc__malloc((size_t)(t->height * t->width));
            if (!dst->gray)
                return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
        }
        memcpy(dst->gray, src->gray, (size_t)(t->height * t->width));
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__tracker_create(const sleapc_tracker_opts *opts, int n_nodes,
                                     sleapc_tracker **out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracker: NULL out");
    *out = NULL;
    if (opts && opts->mot)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "--tracker %s tracks a whole video at once (a per-video calibration "
                            "first%s), not frame by frame: track a predictions file "
                            "(sleapc track) or a finished prediction run instead",
                            sleapc__mot_tracker_name(opts->mot_params.tracker),
                            sleapc__mot_params_link(&opts->mot_params)
                                ? ", and identity linking (--link_tracklets / max_tracks) after "
                                  "the last frame"
                                : "");
    sleapc_status st = sleapc__tracker_opts_check(opts, n_nodes);
    if (st)
        return st;
    if (opts->features == SLEAPC_TRACK_EMBEDDINGS && opts->emb_dim < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--features embeddings tracks by the detections' re-ID vectors, and "
                            "these carry none: embed them first (predict -m EMBEDDING_MODEL)");
    sleapc_tracker *t = sleapc__calloc(1, sizeof *t);
    if (!t)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
    t->o = *opts;
    if (t->o.max_tracks >= 0 && t->o.candidates == SLEAPC_TRACK_FIXED_WINDOW)
        t->o.candidates = SLEAPC_TRACK_LOCAL_QUEUES; /* sleap-nn honours max_tracks so */
    t->n_nodes = n_nodes;
    t->fdim = opts->features == SLEAPC_TRACK_EMBEDDINGS
                  ? opts->emb_dim
                  : sleapc__track_feature_dim(opts->features, n_nodes);
    t->swidth = sleapc__track_score_width(opts, n_nodes);
    t->node_work = sleapc__malloc((size_t)n_nodes * sizeof *t->node_work);
    if (!t->node_work) {
        sleapc__tracker_destroy(t);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
    }
    if (t->o.candidates == SLEAPC_TRACK_FIXED_WINDOW) {
        t->window = sleapc__calloc((size_t)t->o.window_size, sizeof *t->window);
        if (!t->window) {
            sleapc__tracker_destroy(t);
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
        }
    }
    if (t->o.use_flow) {
        st = sleapc__track_flow_create(t->o.of_window_size, t->o.of_max_levels, t->o.of_img_scale,
                                       t->o.window_size + 2, &t->flow);
        if (st) {
            sleapc__tracker_destroy(t);
            return st;
        }
    }
    *out = t;
    return SLEAPC_OK;
}

void sleapc__tracker_destroy(sleapc_tracker *t)
{
    if (!t)
        return;
    if (t->window)
        for (int i = 0; i < t->o.window_size; i++)
            set_free(&t->window[i]);
    sleapc__free(t->window);
    for (int q = 0; q < t->n_queues; q++) {
        for (int i = 0; i < t->o.window_size; i++)
            set_free(&t->queues[q].entries[i]);
        sleapc__free(t->queues[q].entries);
    }
    sleapc__free(t->queues);
    set_free(&t->cur);
    sleapc__free(t->cur_src);
    sleapc__free(t->cur_tscore);
    sleapc__free(t->node_work);
    sleapc__free(t->clean_pts);
    sleapc__free(t->clean_sc);
    sleapc__track_cull_ws_free(&t->cull);
    sleapc__free(t->col_track);
    sleapc__free(t->cost);
    sleapc__free(t->vals);
    sleapc__free(t->shifted);
    sleapc__free(t->shift_feat);
    sleapc__free(t->rows);
    sleapc__free(t->cols);
    sleapc__free(t->out_tracks);
    sleapc__free(t->keep);
    sleapc__track_match_ws_free(&t->mws);
    sleapc__track_connect_free(&t->connect);
    sleapc__track_flow_destroy(t->flow);
    sleapc__free(t);
}

int sleapc__tracker_n_tracks(const sleapc_tracker *t)
{
    return t ? (int)t->next_id : 0;
}

sleapc_status sleapc__tracker_grow(void **p, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return SLEAPC_OK;
    int64_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = sleapc__realloc(*p, (size_t)c * elem);
    if (!q)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
    *p = q;
    *cap = c;
    return SLEAPC_OK;
}

/* ---- candidates ------------------------------------------------------- */

/* One stored instance offered as a candidate. */
typedef struct cand {
    const inst_set *set;
    int i;
} cand;

/* Shifts every instance of a stored set onto the current frame with optical
 * flow; shifted points and their features go to t->shifted / t->shift_feat
 * (at offset base instances). */
static sleapc_status flow_shift(sleapc_tracker *t, const inst_set *s, const uint8_t *gray,
                                int64_t base)
{
    const int64_t kpn = (int64_t)t->n_nodes * 2;
    sleapc_status st =
        sleapc__track_flow_points(t->flow, s->gray, s->seq, gray, t->seq, t->height, t->width,
                                  s->kp, (int64_t)s->n * t->n_nodes, t->shifted + base * kpn);
    if (st)
        return st;
    for (int i = 0; i < s->n; i++)
        sleapc__track_feature(t->o.features, t->shifted + (base + i) * kpn, t->n_nodes,
                              t->shift_feat + (base + i) * t->fdim, t->node_work);
    return SLEAPC_OK;
}

/* scores -> cost: cost[r][c] = -reduce(similarities of instance r with the
 * candidates of column c that have more than min_match_points). */
sleapc_status sleapc__tracker_score_columns(sleapc_tracker *t, int n_cols, const uint8_t *gray)
{
    const int n = t->cur.n;
    const bool fixed = t->o.candidates == SLEAPC_TRACK_FIXED_WINDOW;
    sleapc_status st = sleapc__tracker_grow((void **)&t->cost, &t->cost_cap,
                                            (int64_t)n * n_cols + 1, sizeof *t->cost);
    if (st)
        return st;
    /* stored instances in store order, and their flow-shifted features */
    int64_t n_stored = 0;
    if (fixed) {
        for (int k = 0; k < t->win_n; k++)
            n_stored += t->window[(t->win_head + k) % t->o.window_size].n;
    } else {
        for (int q = 0; q < t->n_queues; q++)
            n_stored += t->queues[q].n;
    }
    if (t->o.use_flow) {
        int64_t cap = t->shifted_cap;
        st = sleapc__tracker_grow((void **)&t->shifted, &cap, (n_stored + 1) * t->n_nodes * 2,
                                  sizeof *t->shifted);
        if (!st) {
            cap = t->shifted_cap;
            st = sleapc__tracker_grow((void **)&t->shift_feat, &cap, (n_stored + 1) * t->fdim,
                                      sizeof *t->shift_feat);
        }
        if (st)
            return st;
        t->shifted_cap = cap;
    }
    int64_t base = 0;
    /* per column, the (set, index, shifted-offset) candidates */
    const int64_t max_c = n_stored + 1;
    st = sleapc__tracker_grow((void **)&t->vals, &t->vals_cap, max_c * t->swidth * 2 + 3 * max_c,
                              sizeof *t->vals);
    if (st)
        return st;
    if (t->o.use_flow) {
        if (fixed) {
            for (int k = 0; k < t->win_n; k++) {
                const inst_set *f = &t->window[(t->win_head + k) % t->o.window_size];
                if ((st = flow_shift(t, f, gray, base)))
                    return st;
                base += f->n;
            }
        } else {
            for (int q = 0; q < t->n_queues; q++)
                for (int e = 0; e < t->queues[q].n; e++) {
                    const local_queue *lq = &t->queues[q];
                    const inst_set *s = &lq->entries[(lq->head + e) % t->o.window_size];
                    if ((st = flow_shift(t, s, gray, base)))
                        return st;
                    base += 1;
                }
        }
    }
    cand *cands = sleapc__malloc((size_t)max_c * (sizeof(cand) + sizeof(int64_t)));
    if (!cands)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
    int64_t *offs = (int64_t *)(cands + max_c);
    for (int c = 0; c < n_cols; c++) {
        int nc = 0;
        int64_t off = 0;
        if (fixed) {
            const int64_t id = t->col_track[c];
            for (int k = 0; k < t->win_n; k++) {
                const inst_set *f = &t->window[(t->win_head + k) % t->o.window_size];
                for (int i = 0; i < f->n; i++) {
                    if (f->track[i] != id)
                        continue;
                    cands[nc] = (cand){f, i};
                    offs[nc++] = off + i;
                    if (!t->o.use_flow)
                        break; /* track_ids.index(id): the first only */
                }
                off += f->n;
            }
        } else {
            for (int q = 0; q < c; q++)
                off += t->queues[q].n;
            const local_queue *lq = &t->queues[c];
            for (int e = 0; e < lq->n; e++) {
                cands[nc] = (cand){&lq->entries[(lq->head + e) % t->o.window_size], 0};
                offs[nc++] = off + e;
            }
        }
        for (int r = 0; r < n; r++) {
            double *v = t->vals;
            int64_t nv = 0;
            for (int k = 0; k < nc; k++) {
                if (cands[k].set->valid[cands[k].i] <= t->o.min_match_points)
                    continue;
                const double *fb = t->o.use_flow
                                       ? t->shift_feat + offs[k] * t->fdim
                                       : cands[k].set->feat + (int64_t)cands[k].i * t->fdim;
                sleapc__track_similarity(&t->o, t->n_nodes, t->cur.feat + (int64_t)r * t->fdim, fb,
                                         v + nv, t->node_work);
                nv += t->swidth;
            }
            const double s = sleapc__track_reduce(&t->o, v, nv);
            t->cost[(int64_t)r * n_cols + c] = isnan(s) ? INFINITY : -s;
        }
    }
    sleapc__free(cands);
    return SLEAPC_OK;
}

/* ---- per frame -------------------------------------------------------- */

sleapc_status sleapc__tracker_track_frame(sleapc_tracker *t, const sleapc_track_frame_in *in,
                                          sleapc_track_frame_out *out)
{
    if (!t || !in || !out || in->n_insts < 0 || (in->n_insts > 0 && !in->points) || !out->out ||
        !out->track || !out->tracking_score)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracker: bad frame arguments");
    const int n_in = in->n_insts, nn = t->n_nodes;
    if (t->o.use_flow) {
        if (!in->gray || in->height < 1 || in->width < 1)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "tracker: --use_flow needs the frame images");
        if (t->height == 0) {
            t->height = in->height;
            t->width = in->width;
        } else if (t->height != in->height || t->width != in->width) {
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "tracker: frame size changed from %lldx%lld to %lldx%lld",
                                (long long)t->width, (long long)t->height, (long long)in->width,
                                (long long)in->height);
        }
    }
    const int cap = n_in > 0 ? n_in : 1;
    sleapc_status st = set_reserve(&t->cur, cap, nn, t->fdim);
    if (st)
        return st;
    if (cap > t->pairs_cap) {
        int *src = sleapc__realloc(t->cur_src, (size_t)cap * sizeof *src);
        if (src)
            t->cur_src = src;
        double *ts = sleapc__realloc(t->cur_tscore, (size_t)cap * sizeof *ts);
        if (ts)
            t->cur_tscore = ts;
        int *rows = sleapc__realloc(t->rows, (size_t)cap * sizeof *rows);
        if (rows)
            t->rows = rows;
        int *cols = sleapc__realloc(t->cols, (size_t)cap * sizeof *cols);
        if (cols)
            t->cols = cols;
        int *ot = sleapc__realloc(t->out_tracks, (size_t)cap * sizeof *ot);
        if (ot)
            t->out_tracks = ot;
        bool *keep = sleapc__realloc(t->keep, (size_t)cap * sizeof *keep);
        if (keep)
            t->keep = keep;
        double *cp = sleapc__realloc(t->clean_pts, (size_t)cap * (size_t)nn * 2 * sizeof *cp);
        if (cp)
            t->clean_pts = cp;
        double *cs = sleapc__realloc(t->clean_sc, (size_t)cap * sizeof *cs);
        if (cs)
            t->clean_sc = cs;
        if (!src || !ts || !rows || !cols || !ot || !keep || !cp || !cs)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
        if ((st = sleapc__track_cull_reserve(&t->cull, cap)))
            return st;
        t->pairs_cap = cap;
    }
    for (int i = 0; i < n_in; i++) {
        out->track[i] = -1;
        out->tracking_score[i] = NAN;
    }
    /* pre-cull: keep the top target by score (sleap-nn's code keeps the
     * lowest by mistake; its intent, and cull_instances, keep the top) */
    bool *keep = t->keep;
    for (int i = 0; i < n_in; i++)
        keep[i] = true;
    if (t->o.target_instance_count > 0 && t->o.pre_cull_to_target && in->scores)
        sleapc__track_cull(&t->cull, in->points, in->scores, n_in, nn, t->o.target_instance_count,
                           t->o.pre_cull_iou_threshold, keep);
    int n = 0;
    for (int i = 0; i < n_in; i++) {
        if (!keep[i])
            continue;
        const double *p = in->points + (int64_t)i * nn * 2;
        memcpy(t->cur.kp + (int64_t)n * nn * 2, p, (size_t)nn * 2 * sizeof *p);
        double *feat = t->cur.feat + (int64_t)n * t->fdim;
        if (t->o.features == SLEAPC_TRACK_EMBEDDINGS)
            for (int k = 0; k < t->fdim; k++) /* as get_embedding: float32, widened */
                feat[k] = in->vectors ? in->vectors[(int64_t)i * t->fdim + k] : NAN;
        else
            sleapc__track_feature(t->o.features, p, nn, feat, t->node_work);
        t->cur.valid[n] = sleapc__track_valid_points(p, nn);
        t->cur.track[n] = -1;
        t->cur_tscore[n] = NAN;
        t->cur_src[n++] = i;
    }
    t->cur.n = n;
    t->cur.frame_idx = in->frame_idx;
    t->cur.seq = ++t->seq;
    t->cur.gray = (uint8_t *)in->gray; /* borrowed for this call; set_copy copies */
    int *order = out->out;
    int n_order = 0;
    if (t->o.candidates == SLEAPC_TRACK_FIXED_WINDOW)
        st = sleapc__tracker_track_window(t, in->gray, order, &n_order);
    else
        st = sleapc__tracker_track_queues(t, in->gray, order, &n_order);
    t->cur.gray = NULL;
    if (st)
        return st;
    /* order holds current-frame indices: map to input indices */
    for (int k = 0; k < n_order; k++) {
        const int c = order[k];
        order[k] = t->cur_src[c];
        out->track[t->cur_src[c]] = (int)t->cur.track[c];
        out->tracking_score[t->cur_src[c]] = t->cur_tscore[c];
    }
    /* post-tracking clean-up, per frame */
    if (t->o.clean_instance_count > 0 && n_order > t->o.clean_instance_count) {
        double *pts = t->clean_pts, *sc = t->clean_sc;
        for (int k = 0; k < n_order; k++) {
            memcpy(pts + (size_t)k * nn * 2, in->points + (int64_t)order[k] * nn * 2,
                   (size_t)nn * 2 * sizeof *pts);
            sc[k] = in->scores ? in->scores[order[k]] : 0.0;
        }
        sleapc__track_cull(&t->cull, pts, sc, n_order, nn, t->o.clean_instance_count,
                           t->o.clean_iou_threshold, keep);
        int m = 0;
        for (int k = 0; k < n_order; k++) {
            if (keep[k]) {
                order[m++] = order[k];
            } else {
                out->track[order[k]] = -1;
                out->tracking_score[order[k]] = NAN;
            }
        }
        n_order = m;
    }
    if ((t->o.clean_instance_count > 0 && !t->o.post_connect_single_breaks) ||
        t->o.post_connect_single_breaks) {
        for (int k = 0; k < n_order; k++)
            t->out_tracks[k] = out->track[order[k]];
        if ((st = sleapc__track_connect_frame(&t->connect, t->out_tracks, n_order)))
            return st;
        for (int k = 0; k < n_order; k++)
            out->track[order[k]] = t->out_tracks[k];
    }
    out->n_out = n_order;
    return SLEAPC_OK;
}
