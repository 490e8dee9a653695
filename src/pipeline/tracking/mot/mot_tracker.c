/* The MOT tracker lifecycle (see mot_tracker.h), step for step as
 * BaseMOTTracker.track runs it. */
#include "pipeline/tracking/mot/mot_tracker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_appearance.h"
#include "pipeline/tracking/mot/mot_assoc.h"

static void bury(mot_tracker *T);

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

static void track_free(mot_track *t)
{
    if (!t)
        return;
    sleapc__free(t->last_kp);
    sleapc__free(t->obs_step);
    sleapc__free(t->obs_box);
    sleapc__free(t->mem_det);
    sleapc__free(t->mem_sim);
    sleapc__mot_memory_free(&t->app);
    sleapc__free(t);
}

sleapc_status sleapc__mot_tracker_init(mot_tracker *T, const sleapc_mot_params *p,
                                       const mot_video *v, const mot_calibration *cal,
                                       int name_offset, int *label, double *tscore)
{
    memset(T, 0, sizeof *T);
    T->p = *p;
    T->v = v;
    T->cal = *cal;
    T->name_offset = name_offset;
    T->label = label;
    T->tscore = tscore;
    T->step = -1;
    mot_kf_kind kind;
    switch (p->tracker) {
    case SLEAPC_MOT_SORT:
        T->associate = sleapc__mot_sort_associate;
        kind = MOT_KF_XYSR;
        T->hits_start = 0;
        T->confirm_on_streak = true;
        break;
    case SLEAPC_MOT_OCSORT:
    case SLEAPC_MOT_DEEPOCSORT:
        T->associate = sleapc__mot_ocsort_associate;
        kind = MOT_KF_XYSR;
        T->hits_start = 0;
        T->confirm_on_streak = T->use_oru = T->keeps_obs = true;
        break;
    case SLEAPC_MOT_BYTETRACK:
    case SLEAPC_MOT_BOTSORT:
        T->associate = sleapc__mot_bytetrack_associate;
        kind = MOT_KF_XYAH;
        T->hits_start = 1;
        T->tentative_dies = true;
        break;
    case SLEAPC_MOT_DEEPSORT:
    case SLEAPC_MOT_STRONGSORT:
        T->associate = sleapc__mot_deepsort_associate;
        kind = MOT_KF_XYAH;
        T->hits_start = 1;
        T->tentative_dies = true;
        T->app_stat = p->tracker == SLEAPC_MOT_DEEPSORT ? MOT_STAT_GALLERY : MOT_STAT_EMA;
        break;
    default:
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "--tracker %s is not supported by sleapc",
                            sleapc__mot_tracker_name(p->tracker));
    }
    if (p->kalman == SLEAPC_MOT_KALMAN_XYWH)
        kind = MOT_KF_XYWH;
    else if (p->kalman == SLEAPC_MOT_KALMAN_XYAH)
        kind = MOT_KF_XYAH;
    else if (p->kalman == SLEAPC_MOT_KALMAN_XYSR)
        kind = MOT_KF_XYSR;
    T->kf = sleapc__mot_kf(kind, p->nsa);
    if (p->tracker == SLEAPC_MOT_BYTETRACK) {
        /* the height velocity (the area's for xysr) stops while not tracked */
        T->zero_vel[0] = kind == MOT_KF_XYSR ? 6 : 7;
        T->n_zero_vel = 1;
    } else if (p->tracker == SLEAPC_MOT_DEEPOCSORT && kind == MOT_KF_XYWH) {
        /* Deep OC-SORT stops the box-size velocities of a missed track */
        T->zero_vel[0] = 6;
        T->zero_vel[1] = 7;
        T->n_zero_vel = 2;
    } else if (p->tracker == SLEAPC_MOT_BOTSORT) {
        /* BoT-SORT: the width and height velocities (the area's for xysr) */
        T->zero_vel[0] = 6;
        T->zero_vel[1] = 7;
        T->n_zero_vel = kind == MOT_KF_XYSR ? 1 : 2;
    }
    for (int64_t d = 0; d < v->n; d++) {
        label[d] = -1;
        tscore[d] = 0.0;
    }
    sleapc__mot_app_init(T);
    return SLEAPC_OK;
}

void sleapc__mot_tracker_free(mot_tracker *T)
{
    for (int i = 0; i < T->n_tracks; i++)
        track_free(T->tracks[i]);
    bury(T);
    while (T->spare) {
        mot_track *t = T->spare;
        T->spare = t->next_spare;
        track_free(t);
    }
    sleapc__mot_scratch_free(&T->tmp);
    sleapc__free(T->tracks);
    sleapc__free(T->dead);
    sleapc__hungarian_ws_free(&T->hws);
    memset(T, 0, sizeof *T);
}

/* ---- similarity ----------------------------------------------------------- */

void sleapc__mot_geometric_sim(const mot_tracker *T, mot_track *const *tracks, int n, int64_t d0,
                               int m, double *out)
{
    double *boxes = out + (size_t)n * m; /* caller leaves room for n boxes */
    for (int i = 0; i < n; i++)
        sleapc__mot_kf_box(&T->kf, tracks[i]->mean, boxes + 4 * i);
    sleapc__mot_iou(boxes, n, T->v->box + 4 * d0, m, out);
    sleapc__mot_finish_sim(out, n, m, T->v->valid + d0);
}

void sleapc__mot_last_obs_sim(const mot_tracker *T, mot_track *const *tracks, int n, int64_t d0,
                              int m, double *out)
{
    double *boxes = out + (size_t)n * m;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            boxes[4 * i + k] = tracks[i]->has_last_obs ? tracks[i]->last_obs[k] : NAN;
    sleapc__mot_iou(boxes, n, T->v->box + 4 * d0, m, out);
    sleapc__mot_finish_sim(out, n, m, T->v->valid + d0);
}

sleapc_status sleapc__mot_result_add(mot_result *r, mot_track *t, int det, double sim)
{
    r->matches[r->n_matches++] = (mot_match){t, det, sim};
    return SLEAPC_OK;
}

/* ---- lifecycle ------------------------------------------------------------ */

/* A removed track leaves the live list at once but is freed at the end of
 * the frame: this frame's matches and pool may still name it. Its slot in
 * the graveyard was reserved when it was created. */
static void remove_track(mot_tracker *T, mot_track *t)
{
    if (t->state == MOT_REMOVED)
        return;
    t->state = MOT_REMOVED;
    int k = 0;
    for (int i = 0; i < T->n_tracks; i++)
        if (T->tracks[i] != t)
            T->tracks[k++] = T->tracks[i];
    T->n_tracks = k;
    T->dead[T->n_dead++] = t;
}

/* Removed tracks are kept, with their buffers, for the next spawns. */
static void bury(mot_tracker *T)
{
    for (int i = 0; i < T->n_dead; i++) {
        T->dead[i]->next_spare = T->spare;
        T->spare = T->dead[i];
    }
    T->n_dead = 0;
}

/* Advances the clock to frame f and predicts every live track
 * (BaseMOTTracker._advance); returns the steps advanced. */
static int64_t advance(mot_tracker *T, int64_t frame_idx)
{
    if (T->step < 0) {
        T->step = 0;
        T->last_frame_idx = frame_idx;
        return 0;
    }
    const int64_t delta = frame_idx - T->last_frame_idx;
    int64_t n_steps = 1;
    if (T->cal.frames_time_base)
        n_steps = sleapc__mot_steps_between(delta, T->cal.frame_step);
    const int64_t first_step = T->step + 1;
    T->step += n_steps;
    T->last_frame_idx = frame_idx;
    /* tracks the gap's empty steps would already have removed */
    for (int i = 0; i < T->n_tracks;) {
        mot_track *t = T->tracks[i];
        const bool expired = t->tsu + n_steps - 1 > T->p.track_buffer;
        const bool died = n_steps > 1 && T->tentative_dies && t->state == MOT_TENTATIVE;
        if (expired || died)
            remove_track(T, t);
        else
            i++;
    }
    for (int i = 0; i < T->n_tracks; i++) {
        mot_track *t = T->tracks[i];
        const int64_t tsu = t->tsu;
        for (int64_t k = 0; k < n_steps; k++) {
            if (tsu + k > 0) /* not matched at the previous step */
                for (int z = 0; z < T->n_zero_vel; z++)
                    t->mean[T->zero_vel[z]] = 0.0;
            sleapc__mot_kf_predict(&T->kf, t->mean, t->cov);
            if (k == 0 && n_steps > 1 && T->use_oru && tsu == 0 && !t->frozen && t->has_last_obs) {
                /* the gap's first empty step is this track's first miss */
                t->frozen = true;
                memcpy(t->fz_mean, t->mean, sizeof t->mean);
                memcpy(t->fz_cov, t->cov, sizeof t->cov);
                t->fz_step = first_step;
            }
        }
        t->tsu += n_steps;
        t->age += n_steps;
        if (t->tsu > 1)
            t->hit_streak = 0;
        if (n_steps > 1 && t->state == MOT_CONFIRMED)
            t->state = MOT_LOST;
    }
    return n_steps;
}

static sleapc_status add_member(mot_track *t, int64_t d, double sim)
{
    if (t->n_mem == t->mem_cap) {
        const int cap = t->mem_cap ? 2 * t->mem_cap : 8;
        int64_t *md = sleapc__realloc(t->mem_det, (size_t)cap * sizeof *md);
        if (md)
            t->mem_det = md;
        double *ms = md ? sleapc__realloc(t->mem_sim, (size_t)cap * sizeof *ms) : NULL;
        if (!ms)
            return nomem();
        t->mem_sim = ms;
        t->mem_cap = cap;
    }
    t->mem_det[t->n_mem] = d;
    t->mem_sim[t->n_mem++] = sim;
    return SLEAPC_OK;
}

/* The observation delta_t steps back (the oldest within the window), else
 * the latest one (OC-SORT). */
static const double *previous_obs(const mot_tracker *T, const mot_track *t)
{
    for (int dt = T->p.delta_t; dt > 0; dt--)
        for (int i = 0; i < t->n_obs; i++)
            if (t->obs_step[i] == T->step - dt)
                return t->obs_box + 4 * i;
    return t->has_last_obs ? t->last_obs : NULL;
}

static sleapc_status apply_match(mot_tracker *T, mot_track *t, int64_t d, int64_t frame_idx,
                                 double sim)
{
    const mot_video *v = T->v;
    const double *box = v->box + 4 * d;
    const double score = v->score[d];
    if (T->use_oru && t->frozen && t->has_last_obs) {
        double m[MOT_KF_MAX], c[MOT_KF_MAX * MOT_KF_MAX];
        sleapc__mot_kf_oru(&T->kf, t->fz_mean, t->fz_cov, t->last_obs, box,
                           (int)(T->step - t->step), score, (int)(t->fz_step - t->step), m, c);
        memcpy(t->mean, m, sizeof m);
        memcpy(t->cov, c, sizeof c);
    }
    t->frozen = false;
    sleapc__mot_kf_update(&T->kf, t->mean, t->cov, box, score);
    t->hits++;
    t->hit_streak++;
    t->tsu = 0;
    t->step = T->step;
    t->last_frame = frame_idx;
    memcpy(t->last_box, box, sizeof t->last_box);
    memcpy(t->last_raw, v->raw + 4 * d, sizeof t->last_raw);
    memcpy(t->last_kp, v->kp + (size_t)d * v->n_nodes * 2,
           (size_t)v->n_nodes * 2 * sizeof *t->last_kp);
    t->last_score = score;
    t->kf_center[0] = t->mean[0];
    t->kf_center[1] = t->mean[1];
    if (t->state == MOT_LOST)
        t->state = MOT_CONFIRMED;
    if (T->keeps_obs) {
        if (t->has_last_obs) {
            const double *prev = previous_obs(T, t);
            sleapc__mot_speed_direction(prev, box, t->vel);
            t->has_vel = true;
        }
        const int cap = 2 * T->p.delta_t + 1;
        if (t->n_obs == cap) { /* drop the oldest step */
            int oldest = 0;
            for (int i = 1; i < t->n_obs; i++)
                oldest = t->obs_step[i] < t->obs_step[oldest] ? i : oldest;
            t->obs_step[oldest] = t->obs_step[t->n_obs - 1];
            memcpy(t->obs_box + 4 * oldest, t->obs_box + 4 * (t->n_obs - 1), 4 * sizeof(double));
            t->n_obs--;
        }
        t->obs_step[t->n_obs] = T->step;
        memcpy(t->obs_box + 4 * t->n_obs, box, 4 * sizeof(double));
        t->n_obs++;
    }
    t->has_last_obs = true;
    memcpy(t->last_obs, box, sizeof t->last_obs);
    if (t->public_id < 0)
        return add_member(t, d, sim);
    return SLEAPC_OK;
}

static void mark_missed(mot_tracker *T, mot_track *t)
{
    if (T->use_oru && !t->frozen && t->has_last_obs && t->tsu > 0) {
        t->frozen = true;
        memcpy(t->fz_mean, t->mean, sizeof t->mean);
        memcpy(t->fz_cov, t->cov, sizeof t->cov);
        t->fz_step = T->step;
    }
    if (t->state == MOT_CONFIRMED)
        t->state = MOT_LOST;
    else if (t->state == MOT_TENTATIVE && T->tentative_dies)
        remove_track(T, t);
}

static sleapc_status spawn(mot_tracker *T, int64_t f, int64_t d, int64_t frame_idx)
{
    sleapc_status st;
    const mot_video *v = T->v;
    const int K = v->n_nodes;
    mot_track *t = T->spare;
    if (t) { /* a removed track's buffers, cleared */
        T->spare = t->next_spare;
        const mot_track keep = *t;
        memset(t, 0, sizeof *t);
        t->last_kp = keep.last_kp;
        t->obs_step = keep.obs_step;
        t->obs_box = keep.obs_box;
        t->mem_det = keep.mem_det;
        t->mem_sim = keep.mem_sim;
        t->mem_cap = keep.mem_cap;
        t->app.ema = keep.app.ema;
        t->app.room = keep.app.room;
    } else {
        t = sleapc__calloc(1, sizeof *t);
        if (!t)
            return nomem();
        t->last_kp = sleapc__malloc((size_t)K * 2 * sizeof *t->last_kp);
        const int cap = T->keeps_obs ? 2 * T->p.delta_t + 1 : 1;
        t->obs_step = sleapc__malloc((size_t)cap * sizeof *t->obs_step);
        t->obs_box = sleapc__malloc((size_t)cap * 4 * sizeof *t->obs_box);
    }
    if (T->n_tracks == T->tracks_cap) {
        /* the graveyard holds as many: every live track may die in a frame */
        const int c = T->tracks_cap ? 2 * T->tracks_cap : 16;
        mot_track **tr = sleapc__realloc(T->tracks, (size_t)c * sizeof *tr);
        if (tr)
            T->tracks = tr;
        mot_track **dd = tr ? sleapc__realloc(T->dead, (size_t)c * sizeof *dd) : NULL;
        if (dd) {
            T->dead = dd;
            T->tracks_cap = c;
        }
    }
    if (!t->last_kp || !t->obs_step || !t->obs_box || T->n_tracks == T->tracks_cap) {
        track_free(t);
        return nomem();
    }
    const double *box = v->box + 4 * d;
    sleapc__mot_kf_initiate(&T->kf, box, t->mean, t->cov);
    t->tid = T->next_tid++;
    t->state = MOT_TENTATIVE;
    t->start_frame = t->last_frame = frame_idx;
    t->step = T->step;
    memcpy(t->last_box, box, sizeof t->last_box);
    memcpy(t->last_raw, v->raw + 4 * d, sizeof t->last_raw);
    t->kf_center[0] = t->mean[0];
    t->kf_center[1] = t->mean[1];
    memcpy(t->last_kp, v->kp + (size_t)d * K * 2, (size_t)K * 2 * sizeof *t->last_kp);
    t->last_score = v->score[d];
    t->hits = t->hit_streak = T->hits_start;
    t->public_id = -1;
    T->tracks[T->n_tracks++] = t;
    if ((st = sleapc__mot_app_spawned(T, t, (int)(d - v->first[f]))))
        return st;
    /* the spawn detection is labeled if the track confirms, but is not an
     * observation for OC-SORT */
    return add_member(t, d, 1.0);
}

static void set_label(mot_tracker *T, int64_t d, int id, double sim)
{
    T->label[d] = id;
    T->tscore[d] = isfinite(sim) ? (sim < 0 ? 0.0 : (sim > 1 ? 1.0 : sim)) : 0.0;
}

static void confirm(mot_tracker *T, mot_track *t)
{
    t->state = MOT_CONFIRMED;
    t->public_id = T->next_public++;
    for (int i = 0; i < t->n_mem; i++)
        set_label(T, t->mem_det[i], t->public_id + T->name_offset, t->mem_sim[i]);
    t->n_mem = 0;
}

static bool in_list(mot_track *const *list, int n, const mot_track *t)
{
    for (int i = 0; i < n; i++)
        if (list[i] == t)
            return true;
    return false;
}

sleapc_status sleapc__mot_tracker_frame(mot_tracker *T, int64_t f)
{
    const mot_video *v = T->v;
    const int64_t d0 = v->first[f], frame_idx = v->frame_idx[f];
    const int m = v->count[f];
    advance(T, frame_idx);
    const int n_live = T->n_tracks;
    const size_t cap_m = (size_t)(m > 0 ? m : 1), cap_t = (size_t)(n_live > 0 ? n_live : 1);
    mot_scratch *tmp = &T->tmp;
    sleapc__mot_scratch_reset(tmp);
    mot_result r = {0};
    r.matches = sleapc__mot_tmp(tmp, cap_m * sizeof *r.matches);
    r.no_spawn = sleapc__mot_tmp_zero(tmp, cap_m * sizeof *r.no_spawn);
    r.removed = sleapc__mot_tmp(tmp, cap_t * sizeof *r.removed);
    mot_track **pool = sleapc__mot_tmp(tmp, cap_t * sizeof *pool);
    mot_match *applied = sleapc__mot_tmp(tmp, cap_m * sizeof *applied);
    bool *used_det = sleapc__mot_tmp_zero(tmp, cap_m * sizeof *used_det);
    mot_track **used_t = sleapc__mot_tmp(tmp, cap_t * sizeof *used_t);
    sleapc_status st = SLEAPC_OK;
    if (!r.matches || !r.no_spawn || !r.removed || !pool || !applied || !used_det || !used_t) {
        st = nomem();
        goto done;
    }
    if ((st = sleapc__mot_app_frame(T, d0, m)))
        goto done;
    if (m > 0 && (st = T->associate(T, d0, m, &r)))
        goto done;
    if (n_live > 0)
        memcpy(pool, T->tracks, (size_t)n_live * sizeof *pool);
    if ((st = sleapc__mot_app_gate_context(T, pool, n_live, d0, m, r.n_matches > 0)))
        goto done;
    /* matches: Kalman update, counters, history, members */
    int n_applied = 0, n_used_t = 0;
    for (int k = 0; k < r.n_matches; k++) {
        mot_track *t = r.matches[k].t;
        const int j = r.matches[k].det;
        if (in_list(used_t, n_used_t, t) || j < 0 || j >= m || used_det[j] ||
            t->state == MOT_REMOVED || !v->valid[d0 + j])
            continue;
        used_t[n_used_t++] = t;
        used_det[j] = true;
        double sim = r.matches[k].sim;
        sim = isfinite(sim) ? (sim < 0 ? 0.0 : (sim > 1 ? 1.0 : sim)) : 0.0;
        if ((st = apply_match(T, t, d0 + j, frame_idx, sim)))
            goto done;
        sleapc__mot_app_matched(T, t, d0, j);
        applied[n_applied++] = (mot_match){t, j, sim};
    }
    /* unmatched live tracks: freeze for ORU, confirmed -> lost, tentative
     * tracks of the dying families removed (pool keeps creation order) */
    for (int i = 0; i < n_live; i++) {
        mot_track *t = pool[i];
        if (in_list(used_t, n_used_t, t) || in_list(r.removed, r.n_removed, t))
            continue;
        mark_missed(T, t);
    }
    for (int i = 0; i < r.n_removed; i++)
        remove_track(T, r.removed[i]);
    /* spawn from unmatched, valid, confident detections */
    for (int j = 0; j < m; j++) {
        const int64_t d = d0 + j;
        if (used_det[j] || r.no_spawn[j] || !v->valid[d] || v->score[d] < T->p.new_track_threshold)
            continue;
        if ((st = spawn(T, f, d, frame_idx)))
            goto done;
    }
    /* confirm tentative tracks that reached min_hits */
    for (int i = 0; i < T->n_tracks; i++) {
        mot_track *t = T->tracks[i];
        if (t->state == MOT_TENTATIVE && t->tsu == 0) {
            const int count = T->confirm_on_streak ? t->hit_streak : t->hits;
            if (count >= T->p.min_hits)
                confirm(T, t);
        }
    }
    /* remove tracks unmatched for longer than the buffer */
    for (int i = 0; i < T->n_tracks;) {
        mot_track *t = T->tracks[i];
        if (t->tsu > T->p.track_buffer)
            remove_track(T, t);
        else
            i++;
    }
    /* this frame's detections of confirmed tracks */
    for (int k = 0; k < n_applied; k++) {
        mot_track *t = applied[k].t;
        if (t->state == MOT_CONFIRMED && t->public_id >= 0)
            set_label(T, d0 + applied[k].det, t->public_id + T->name_offset, applied[k].sim);
    }
done:
    bury(T);
    return st;
}
