/* A MOT tracker fed frame by frame (see mot_online.h). The detections of
 * the pending frames live in a mot_video used as a window: taken frames
 * are dropped by moving the rest down (when the window is full, so the
 * cost is amortized) and it grows only when more frames are pending than
 * ever before, so a steady stream allocates nothing here after warm-up. */
#include "pipeline/tracking/mot/mot_online.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_tracker.h"

struct mot_online {
    sleapc_mot_params p;
    mot_calibration cal;
    mot_video v; /* the window: frames [0, v.n_frames), detections [0, v.n) */
    int64_t fcap, dcap;
    int *label;
    double *tscore;
    double *ps;        /* n_nodes point scores of one detection */
    int64_t head;      /* frames before it were taken */
    int64_t final_end; /* frames before it are final */
    bool finished;
    mot_tracker T;
};

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

sleapc_status sleapc__mot_online_create(const sleapc_mot_params *p, int n_nodes, int emb_dim,
                                        const mot_calibration *cal, int name_offset,
                                        mot_online **out)
{
    *out = NULL;
    if (n_nodes < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracking: a skeleton without nodes");
    mot_online *o = sleapc__calloc(1, sizeof *o);
    if (!o)
        return nomem();
    o->p = *p;
    o->cal = *cal;
    sleapc_status st = sleapc__mot_video_alloc(&o->v, n_nodes, 0, 0);
    if (st) {
        sleapc__free(o);
        return st;
    }
    o->fcap = o->dcap = 1;
    if (emb_dim > 0) {
        o->v.emb = sleapc__malloc((size_t)emb_dim * sizeof *o->v.emb);
        o->v.emb_dim = emb_dim;
        if (!o->v.emb) {
            sleapc__mot_online_destroy(o);
            return nomem();
        }
    }
    o->label = sleapc__malloc(sizeof *o->label);
    o->tscore = sleapc__malloc(sizeof *o->tscore);
    o->ps = sleapc__malloc((size_t)n_nodes * sizeof *o->ps);
    if (!o->label || !o->tscore || !o->ps) {
        sleapc__mot_online_destroy(o);
        return nomem();
    }
    if ((st = sleapc__mot_tracker_init(&o->T, p, &o->v, cal, name_offset, o->label, o->tscore))) {
        sleapc__mot_online_destroy(o);
        return st;
    }
    *out = o;
    return SLEAPC_OK;
}

void sleapc__mot_online_destroy(mot_online *o)
{
    if (!o)
        return;
    sleapc__mot_tracker_free(&o->T);
    sleapc__mot_video_free(&o->v);
    sleapc__free(o->label);
    sleapc__free(o->tscore);
    sleapc__free(o->ps);
    sleapc__free(o);
}

/* Drops the taken frames: the rest move to the front. */
static void compact(mot_online *o)
{
    mot_video *v = &o->v;
    const int64_t nf = o->head;
    if (nf == 0)
        return;
    const int64_t nd = nf < v->n_frames ? v->first[nf] : v->n;
    const int64_t rf = v->n_frames - nf, rd = v->n - nd;
    const size_t K2 = (size_t)v->n_nodes * 2;
    memmove(v->frame_idx, v->frame_idx + nf, (size_t)rf * sizeof *v->frame_idx);
    memmove(v->count, v->count + nf, (size_t)rf * sizeof *v->count);
    for (int64_t f = 0; f < rf; f++)
        v->first[f] = v->first[f + nf] - nd;
    memmove(v->kp, v->kp + nd * K2, (size_t)rd * K2 * sizeof *v->kp);
    memmove(v->box, v->box + 4 * nd, (size_t)rd * 4 * sizeof *v->box);
    memmove(v->raw, v->raw + 4 * nd, (size_t)rd * 4 * sizeof *v->raw);
    memmove(v->score, v->score + nd, (size_t)rd * sizeof *v->score);
    memmove(v->valid, v->valid + nd, (size_t)rd * sizeof *v->valid);
    memmove(v->n_visible, v->n_visible + nd, (size_t)rd * sizeof *v->n_visible);
    if (v->emb_dim > 0)
        memmove(v->emb, v->emb + nd * v->emb_dim, (size_t)(rd * v->emb_dim) * sizeof *v->emb);
    memmove(o->label, o->label + nd, (size_t)rd * sizeof *o->label);
    memmove(o->tscore, o->tscore + nd, (size_t)rd * sizeof *o->tscore);
    /* tentative tracks remember their detections by index */
    for (int i = 0; i < o->T.n_tracks; i++) {
        mot_track *t = o->T.tracks[i];
        for (int k = 0; k < t->n_mem; k++)
            t->mem_det[k] -= nd;
    }
    v->n_frames = rf;
    v->n = rd;
    o->final_end -= nf;
    o->head = 0;
}

static bool grow(void **p, size_t elem, int64_t cap)
{
    void *q = sleapc__realloc(*p, (size_t)cap * elem);
    if (q)
        *p = q;
    return q != NULL;
}

/* Room for one more frame of m detections. */
static sleapc_status reserve(mot_online *o, int m)
{
    mot_video *v = &o->v;
    if (v->n_frames + 1 <= o->fcap && v->n + m <= o->dcap)
        return SLEAPC_OK;
    compact(o);
    if (v->n_frames + 1 > o->fcap) {
        const int64_t cap = 2 * o->fcap;
        if (!grow((void **)&v->frame_idx, sizeof *v->frame_idx, cap) ||
            !grow((void **)&v->first, sizeof *v->first, cap) ||
            !grow((void **)&v->count, sizeof *v->count, cap))
            return nomem();
        o->fcap = cap;
    }
    if (v->n + m > o->dcap) {
        int64_t cap = 2 * o->dcap;
        cap = cap > v->n + m ? cap : v->n + m;
        const size_t K2 = (size_t)v->n_nodes * 2;
        if (!grow((void **)&v->kp, K2 * sizeof *v->kp, cap) ||
            !grow((void **)&v->box, 4 * sizeof *v->box, cap) ||
            !grow((void **)&v->raw, 4 * sizeof *v->raw, cap) ||
            !grow((void **)&v->score, sizeof *v->score, cap) ||
            !grow((void **)&v->valid, sizeof *v->valid, cap) ||
            !grow((void **)&v->n_visible, sizeof *v->n_visible, cap) ||
            !grow((void **)&o->label, sizeof *o->label, cap) ||
            !grow((void **)&o->tscore, sizeof *o->tscore, cap) ||
            (v->emb_dim > 0 && !grow((void **)&v->emb, (size_t)v->emb_dim * sizeof *v->emb, cap)))
            return nomem();
        o->dcap = cap;
    }
    o->T.label = o->label;
    o->T.tscore = o->tscore;
    return SLEAPC_OK;
}

/* Frames before the oldest one a tentative track still holds are final. */
static void update_final(mot_online *o)
{
    const mot_video *v = &o->v;
    int64_t oldest = v->n;
    for (int i = 0; i < o->T.n_tracks; i++) {
        const mot_track *t = o->T.tracks[i];
        if (t->n_mem > 0 && t->mem_det[0] < oldest)
            oldest = t->mem_det[0];
    }
    int64_t f = o->final_end;
    while (f < v->n_frames && v->first[f] + v->count[f] <= oldest)
        f++;
    o->final_end = f;
}

sleapc_status sleapc__mot_online_push(mot_online *o, int64_t frame_idx, const float *points,
                                      const float *point_scores, const float *scores,
                                      const float *emb, int n)
{
    if (n < 0 || (n > 0 && (!points || !scores)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracking: a frame without its instances");
    if (o->finished)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracking: a frame after the last one");
    sleapc_status st = reserve(o, n);
    if (st)
        return st;
    mot_video *v = &o->v;
    const int K = v->n_nodes;
    const int64_t f = v->n_frames, d0 = v->n;
    v->frame_idx[f] = frame_idx;
    v->first[f] = d0;
    v->count[f] = n;
    for (size_t k = 0; k < (size_t)n * K * 2; k++)
        v->kp[(size_t)d0 * K * 2 + k] = points[k];
    v->n_frames = f + 1;
    v->n = d0 + n;
    for (int i = 0; i < n; i++) {
        const int64_t d = d0 + i;
        for (int k = 0; k < K; k++)
            o->ps[k] = point_scores ? point_scores[(size_t)i * K + k] : NAN;
        sleapc__mot_detect(v, d, o->ps, scores[i], &o->p);
        sleapc__mot_finish_detection(v, d, &o->p, &o->cal);
        o->label[d] = -1;
        o->tscore[d] = 0.0;
        /* the re-ID vector, NaN: none */
        for (int e = 0; e < v->emb_dim; e++)
            v->emb[d * v->emb_dim + e] = emb ? emb[(size_t)i * v->emb_dim + e] : NAN;
    }
    if ((st = sleapc__mot_tracker_frame(&o->T, f)))
        return st;
    update_final(o);
    return SLEAPC_OK;
}

void sleapc__mot_online_finish(mot_online *o)
{
    o->finished = true;
    o->final_end = o->v.n_frames;
}

bool sleapc__mot_online_take(mot_online *o, int64_t *frame_idx, int *n, const int **label,
                             const double **tscore)
{
    if (o->head >= o->final_end)
        return false;
    const int64_t f = o->head++;
    *frame_idx = o->v.frame_idx[f];
    *n = o->v.count[f];
    *label = o->label + o->v.first[f];
    *tscore = o->tscore + o->v.first[f];
    return true;
}

int sleapc__mot_online_next_name(const mot_online *o)
{
    return o->T.name_offset + o->T.next_public;
}
