/* A MOT tracker over a block source in two passes (see
 * track_source_mot.h). */
#include "pipeline/tracking/track_source_mot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_calib_appearance.h"
#include "pipeline/tracking/mot/mot_online.h"
#include "pipeline/tracking/mot/mot_run.h"
#include "pipeline/tracking/predictions_track.h"

typedef struct video_cal {
    int video;
    mot_calibration cal;
} video_cal;

typedef struct mot_source {
    const sleapc_track_source_opts *o;
    const sleapc_mot_params *p;
    int K;
    sleapc_results_source *src;
    sleapc_predictions filtered; /* the block after the filters */
    /* pass 1: per video its calibration, from what it measures */
    video_cal *cals;
    int n_cals, cals_cap;
    mot_calib_data data;
    int64_t deltas_cap, diags_cap, scores_cap;
    mot_video one; /* one detection, measured */
    double *ps;
    /* appearance trackers: the video's frames, for the appearance part of
     * its calibration (anchor tracklets over the whole video) */
    bool appearance, any_vector;
    sleapc_predictions whole;
    /* pass 2 */
    mot_online *on;
    int video, at_cal, name_offset; /* on's video; the next calibration */
    int emb_dim;                    /* on's re-ID vector length */
    sleapc_predictions pending;     /* pushed frames, in order, from pending_head on not out */
    int64_t pending_head;
    sleapc_predictions out; /* this block's final frames */
    float *sc;              /* one frame's instance scores */
    int64_t sc_cap;
    int *rank; /* track id -> index of its name, -1 unseen */
    int rank_cap;
    char **names; /* in order of first appearance */
    int n_names, names_cap;
} mot_source;

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

/* Grows *p (of *cap elements of elem bytes) to hold n. */
static bool reserve(void **p, int64_t *cap, int64_t n, size_t elem)
{
    if (n <= *cap)
        return true;
    const int64_t c = n > 2 * *cap ? n : 2 * *cap;
    void *q = sleapc__realloc(*p, (size_t)c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* The next block, filtered; n_frames 0 at the end. */
static sleapc_status next_block(mot_source *m, const sleapc_predictions **cur)
{
    const sleapc_predictions *b = NULL;
    sleapc_status st = m->src->next(m->src->ctx, &b);
    if (st || !m->o->filters || b->n_frames == 0) {
        *cur = b;
        return st;
    }
    if ((st = sleapc__track_copy_block(b, &m->filtered)) ||
        (st = sleapc__predictions_filter(&m->filtered, m->o->filters)))
        return st;
    *cur = &m->filtered;
    return SLEAPC_OK;
}

static sleapc_status append_frame(sleapc_predictions *dst, const sleapc_predictions *src,
                                  const sleapc_pred_frame *f);

/* ---- pass 1: calibration ------------------------------------------------- */

static sleapc_status close_video(mot_source *m, int video)
{
    if (m->n_cals == m->cals_cap) {
        int64_t cap = m->cals_cap;
        if (!reserve((void **)&m->cals, &cap, m->n_cals + 1, sizeof *m->cals))
            return nomem();
        m->cals_cap = (int)cap;
    }
    video_cal *vc = &m->cals[m->n_cals++];
    vc->video = video;
    sleapc_status st = sleapc__mot_calibrate_data(&m->data, m->p, &vc->cal);
    m->data.n_deltas = m->data.n_diags = m->data.n_scores = m->data.n_valid = 0;
    if (!st && m->appearance) {
        mot_calibration whole;
        if (!(st = sleapc__mot_run_calibrate(&m->whole, video, m->p, &whole)))
            vc->cal.app = whole.app;
        m->whole.n_frames = m->whole.n_insts = 0;
    }
    return st;
}

static sleapc_status calibrate(mot_source *m)
{
    sleapc_status st = m->src->rewind(m->src->ctx);
    const sleapc_predictions *b = NULL;
    if (!st)
        st = next_block(m, &b);
    int video = 0;
    int64_t prev = 0;
    bool any = false;
    const int K = m->K;
    while (!st && b->n_frames > 0) {
        for (int64_t k = 0; !st && k < b->n_frames; k++) {
            const sleapc_pred_frame *f = &b->frames[k];
            if (any && f->video != video && (st = close_video(m, video)))
                break;
            mot_calib_data *c = &m->data;
            if (any && f->video == video && f->frame_idx - prev > 0) {
                if (!reserve((void **)&c->deltas, &m->deltas_cap, c->n_deltas + 1,
                             sizeof *c->deltas)) {
                    st = nomem();
                    break;
                }
                c->deltas[c->n_deltas++] = f->frame_idx - prev;
            }
            video = f->video;
            prev = f->frame_idx;
            any = true;
            if (m->appearance && (st = append_frame(&m->whole, b, f)))
                break;
            for (int64_t i = 0; b->emb_dim > 0 && b->embeddings && i < f->n; i++)
                m->any_vector =
                    m->any_vector || isfinite(b->embeddings[(f->first + i) * b->emb_dim]);
            if (!reserve((void **)&c->diags, &m->diags_cap, c->n_diags + f->n, sizeof *c->diags) ||
                !reserve((void **)&c->scores, &m->scores_cap, c->n_scores + f->n,
                         sizeof *c->scores)) {
                st = nomem();
                break;
            }
            for (int64_t i = 0; i < f->n; i++) {
                const int64_t at = f->first + i;
                for (int q = 0; q < 2 * K; q++)
                    m->one.kp[q] = b->points[at * K * 2 + q];
                for (int q = 0; q < K; q++)
                    m->ps[q] = b->point_scores[at * K + q];
                sleapc__mot_detect(&m->one, 0, m->ps, b->insts[at].score, m->p);
                double diag;
                if (sleapc__mot_sized_diag(&m->one, 0, &diag))
                    c->diags[c->n_diags++] = diag;
                if (m->one.valid[0] && isfinite(m->one.score[0]))
                    c->scores[c->n_scores++] = m->one.score[0];
                c->n_valid += m->one.valid[0];
            }
        }
        if (!st)
            st = next_block(m, &b);
    }
    if (!st && any)
        st = close_video(m, video);
    return st;
}

/* ---- pass 2: tracking ---------------------------------------------------- */

/* The index of track id's name, minted at its first appearance. */
static sleapc_status name_of(mot_source *m, int id, int *out)
{
    *out = -1;
    if (id < 0)
        return SLEAPC_OK;
    if (id >= m->rank_cap) {
        int64_t cap = m->rank_cap;
        if (!reserve((void **)&m->rank, &cap, (int64_t)id + 1, sizeof *m->rank))
            return nomem();
        for (int64_t i = m->rank_cap; i < cap; i++)
            m->rank[i] = -1;
        m->rank_cap = (int)cap;
    }
    if (m->rank[id] < 0) {
        int64_t cap = m->names_cap;
        if (!reserve((void **)&m->names, &cap, m->n_names + 2, sizeof *m->names))
            return nomem();
        m->names_cap = (int)cap;
        char name[32];
        snprintf(name, sizeof name, "track_%d", id);
        if (!(m->names[m->n_names] = sleapc__strdup(name)))
            return nomem();
        m->names[m->n_names + 1] = NULL;
        m->rank[id] = m->n_names++;
    }
    *out = m->rank[id];
    return SLEAPC_OK;
}

/* One frame of src appended to dst (its video and frame index kept). */
static sleapc_status append_frame(sleapc_predictions *dst, const sleapc_predictions *src,
                                  const sleapc_pred_frame *f)
{
    sleapc_predictions one = *src;
    sleapc_pred_frame fr = *f;
    fr.first = 0;
    one.frames = &fr;
    one.n_frames = 1;
    one.insts = src->insts + f->first;
    one.points = src->points + f->first * src->n_nodes * 2;
    one.point_scores = src->point_scores + f->first * src->n_nodes;
    if (src->emb_dim > 0 && src->embeddings)
        one.embeddings = src->embeddings + f->first * src->emb_dim;
    one.n_insts = f->n;
    const int64_t frame_idx = f->frame_idx;
    return sleapc__results_append(dst, &one, f->video, &frame_idx);
}

/* The frames whose tracks are final, labelled, into m->out. */
static sleapc_status drain(mot_source *m)
{
    int64_t frame_idx;
    int n;
    const int *label;
    const double *tscore;
    while (sleapc__mot_online_take(m->on, &frame_idx, &n, &label, &tscore)) {
        const sleapc_pred_frame *f = &m->pending.frames[m->pending_head++];
        for (int i = 0; i < n && i < f->n; i++) {
            sleapc_pred_instance *in = &m->pending.insts[f->first + i];
            sleapc_status st = name_of(m, label[i], &in->track);
            if (st)
                return st;
            in->tracking_score = (float)tscore[i];
            in->class_index = -1;
        }
        if (f->n == 0 && m->o->drop_empty)
            continue;
        sleapc_status st = append_frame(&m->out, &m->pending, f);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

/* Forgets the pending frames already out. */
static void compact_pending(mot_source *m)
{
    sleapc_predictions *pr = &m->pending;
    const int64_t nf = m->pending_head;
    if (nf == 0)
        return;
    const int64_t ni = nf < pr->n_frames ? pr->frames[nf].first : pr->n_insts;
    const int64_t K = pr->n_nodes;
    for (int64_t k = nf; k < pr->n_frames; k++) {
        pr->frames[k - nf] = pr->frames[k];
        pr->frames[k - nf].first -= ni;
    }
    memmove(pr->insts, pr->insts + ni, (size_t)(pr->n_insts - ni) * sizeof *pr->insts);
    memmove(pr->points, pr->points + ni * K * 2,
            (size_t)((pr->n_insts - ni) * K * 2) * sizeof *pr->points);
    memmove(pr->point_scores, pr->point_scores + ni * K,
            (size_t)((pr->n_insts - ni) * K) * sizeof *pr->point_scores);
    if (pr->emb_dim > 0 && pr->embeddings)
        memmove(pr->embeddings, pr->embeddings + ni * pr->emb_dim,
                (size_t)((pr->n_insts - ni) * pr->emb_dim) * sizeof *pr->embeddings);
    pr->n_frames -= nf;
    pr->n_insts -= ni;
    m->pending_head = 0;
}

/* The current video's last frames out, its tracker closed. */
static sleapc_status end_video(mot_source *m)
{
    if (!m->on)
        return SLEAPC_OK;
    sleapc__mot_online_finish(m->on);
    sleapc_status st = drain(m);
    m->name_offset = sleapc__mot_online_next_name(m->on);
    sleapc__mot_online_destroy(m->on);
    m->on = NULL;
    return st;
}

static sleapc_status track_frame(mot_source *m, const sleapc_predictions *b,
                                 const sleapc_pred_frame *f)
{
    sleapc_status st;
    if (!m->on || f->video != m->video) {
        /* the next video: its calibration is the next one measured */
        if ((st = end_video(m)))
            return st;
        if (m->at_cal >= m->n_cals || m->cals[m->at_cal].video != f->video)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "tracking: the frames changed between two reads");
        m->emb_dim = b->embeddings ? b->emb_dim : 0;
        if ((st = sleapc__mot_online_create(m->p, m->K, m->emb_dim, &m->cals[m->at_cal].cal,
                                            m->name_offset, &m->on)))
            return st;
        m->video = f->video;
        m->at_cal++;
    }
    if (!reserve((void **)&m->sc, &m->sc_cap, f->n > 0 ? f->n : 1, sizeof *m->sc))
        return nomem();
    for (int64_t i = 0; i < f->n; i++)
        m->sc[i] = b->insts[f->first + i].score;
    if ((st = append_frame(&m->pending, b, f)))
        return st;
    const float *emb = m->emb_dim > 0 && b->embeddings && b->emb_dim == m->emb_dim
                           ? b->embeddings + f->first * b->emb_dim
                           : NULL;
    if ((st = sleapc__mot_online_push(m->on, f->frame_idx, b->points + f->first * m->K * 2,
                                      b->point_scores + f->first * m->K, m->sc, emb, (int)f->n)))
        return st;
    return drain(m);
}

static sleapc_status track(mot_source *m, sleapc_results_spill *spill)
{
    sleapc_status st = m->src->rewind(m->src->ctx);
    const sleapc_predictions *b = NULL;
    if (!st)
        st = next_block(m, &b);
    while (!st && b->n_frames > 0) {
        m->out.n_frames = m->out.n_insts = 0;
        for (int64_t k = 0; !st && k < b->n_frames; k++)
            st = track_frame(m, b, &b->frames[k]);
        if (!st && m->out.n_frames > 0)
            st = sleapc__spill_append(spill, &m->out);
        compact_pending(m);
        if (!st)
            st = next_block(m, &b);
    }
    m->out.n_frames = m->out.n_insts = 0;
    if (!st)
        st = end_video(m);
    if (!st && m->out.n_frames > 0)
        st = sleapc__spill_append(spill, &m->out);
    return st;
}

sleapc_status sleapc__track_source_mot(const sleapc_track_source_opts *o, sleapc_predictions *head,
                                       sleapc_results_source *src, sleapc_results_spill **out)
{
    *out = NULL;
    const int K = head->n_nodes;
    mot_source m = {.o = o,
                    .p = &o->tracking->mot_params,
                    .K = K,
                    .src = src,
                    .filtered = {.n_nodes = K},
                    .pending = {.n_nodes = K},
                    .out = {.n_nodes = K},
                    .whole = {.n_nodes = K},
                    .appearance = sleapc__mot_uses_appearance(o->tracking->mot_params.tracker)};
    sleapc_results_spill *spill = NULL;
    sleapc_status st = sleapc__mot_check_supported(m.p, K);
    if (!st && K < 1)
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracking: a skeleton without nodes");
    if (!st && (st = sleapc__mot_video_alloc(&m.one, K, 1, 1)) == SLEAPC_OK &&
        !(m.ps = sleapc__malloc((size_t)K * sizeof *m.ps)))
        st = nomem();
    if (!st)
        st = calibrate(&m);
    if (!st && m.appearance && !m.any_vector)
        st = sleapc__mot_refuse_no_vectors(m.p);
    if (!st)
        st = sleapc__spill_open(o->spill_near, K, &spill);
    if (!st)
        st = track(&m, spill);
    if (!st) {
        /* head takes the names */
        for (int i = 0; head->track_names && i < head->n_tracks; i++)
            sleapc__free(head->track_names[i]);
        sleapc__free(head->track_names);
        if (!m.names && !(m.names = sleapc__calloc(1, sizeof *m.names)))
            st = nomem();
        head->track_names = m.names;
        head->n_tracks = m.n_names;
        head->multiclass = false;
        head->identities = false;
        m.names = NULL;
        m.n_names = 0;
    }
    sleapc__mot_online_destroy(m.on);
    for (int i = 0; m.names && i < m.n_names; i++)
        sleapc__free(m.names[i]);
    sleapc__free(m.names);
    sleapc__free(m.rank);
    sleapc__free(m.sc);
    sleapc__free(m.cals);
    sleapc__free(m.data.deltas);
    sleapc__free(m.data.diags);
    sleapc__free(m.data.scores);
    sleapc__free(m.ps);
    sleapc__mot_video_free(&m.one);
    sleapc__predictions_free(&m.filtered);
    sleapc__predictions_free(&m.pending);
    sleapc__predictions_free(&m.whole);
    sleapc__predictions_free(&m.out);
    if (st) {
        sleapc__spill_close(spill);
        return st;
    }
    *out = spill;
    return SLEAPC_OK;
}
