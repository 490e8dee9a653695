/* MOT tracking of a whole run (see mot_run.h). */
#include "pipeline/tracking/mot/mot_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_calib_appearance.h"
#include "pipeline/tracking/mot/mot_detect.h"
#include "pipeline/tracking/mot/mot_link.h"
#include "pipeline/tracking/mot/mot_tracker.h"

/* Whether any instance of pr has a re-ID vector (a finite first element). */
static bool has_vectors(const sleapc_predictions *pr)
{
    for (int64_t i = 0; pr->emb_dim > 0 && pr->embeddings && i < pr->n_insts; i++)
        if (isfinite(pr->embeddings[i * pr->emb_dim]))
            return true;
    return false;
}

sleapc_status sleapc__mot_refuse_no_vectors(const sleapc_mot_params *p)
{
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                        "--tracker %s associates by appearance, but no detection in the labels "
                        "carries an appearance embedding: run the embedding (re-ID) model and "
                        "keep its vectors, or use a geometry-only tracker (--tracker bytetrack "
                        "/ ocsort / sort)",
                        sleapc__mot_tracker_name(p->tracker));
}

sleapc_status sleapc__mot_check_supported(const sleapc_mot_params *p, int n_nodes)
{
    if (p->similarity == SLEAPC_MOT_SIM_OKS || p->similarity == SLEAPC_MOT_SIM_CENTROID ||
        (p->similarity == SLEAPC_MOT_SIM_AUTO && n_nodes == 1))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "--tracker %s: sleapc scores MOT geometry by iou only (the oks and "
                            "centroid similarities%s are not supported)",
                            sleapc__mot_tracker_name(p->tracker),
                            n_nodes == 1 ? ", which single-node skeletons use," : "");
    return SLEAPC_OK;
}

typedef struct frame_key {
    int64_t video, frame_idx, k;
} frame_key;

static int cmp_frames(const void *a, const void *b)
{
    const frame_key *x = a, *y = b;
    if (x->video != y->video)
        return x->video < y->video ? -1 : 1;
    if (x->frame_idx != y->frame_idx)
        return x->frame_idx < y->frame_idx ? -1 : 1;
    return x->k < y->k ? -1 : (x->k > y->k);
}

/* The detections of frames perm[0..nf) (one video, in order) as the
 * calibration first extracts them. */
static sleapc_status fill_video(const sleapc_predictions *pr, const frame_key *perm, int64_t nf,
                                const sleapc_mot_params *p, mot_video *v)
{
    const int K = pr->n_nodes;
    int64_t n = 0;
    for (int64_t s = 0; s < nf; s++)
        n += pr->frames[perm[s].k].n;
    sleapc_status st = sleapc__mot_video_alloc(v, K, nf, n);
    if (st)
        return st;
    double *ps = sleapc__malloc((size_t)(K > 0 ? K : 1) * sizeof *ps);
    if (!ps) {
        sleapc__mot_video_free(v);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    }
    const int E = pr->embeddings ? pr->emb_dim : 0;
    if (E > 0 && has_vectors(pr)) {
        v->emb = sleapc__malloc((size_t)(n > 0 ? n : 1) * E * sizeof *v->emb);
        if (!v->emb) {
            sleapc__free(ps);
            sleapc__mot_video_free(v);
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        }
        v->emb_dim = E;
    }
    int64_t d = 0;
    for (int64_t s = 0; s < nf; s++) {
        const sleapc_pred_frame *f = &pr->frames[perm[s].k];
        v->frame_idx[s] = f->frame_idx;
        v->first[s] = d;
        v->count[s] = (int)f->n;
        for (int64_t i = 0; i < f->n; i++, d++) {
            const int64_t at = f->first + i;
            for (int k = 0; k < 2 * K; k++)
                v->kp[(size_t)d * K * 2 + k] = pr->points[at * K * 2 + k];
            for (int k = 0; k < K; k++)
                ps[k] = pr->point_scores[at * K + k];
            sleapc__mot_detect(v, d, ps, pr->insts[at].score, p);
            if (v->emb)
                memcpy(v->emb + (size_t)d * E, pr->embeddings + (size_t)at * E,
                       (size_t)E * sizeof *v->emb);
        }
    }
    sleapc__free(ps);
    return SLEAPC_OK;
}

/* Tracks the frames perm[0..nf) (one video, in order); app: NULL, or the
 * appearance calibration to link with. */
static sleapc_status track_video(sleapc_predictions *pr, const frame_key *perm, int64_t nf,
                                 const sleapc_mot_params *p, const mot_appearance_calibration *app,
                                 int *name_offset, double *scores)
{
    mot_video v;
    sleapc_status st = fill_video(pr, perm, nf, p, &v);
    if (st)
        return st;
    const int64_t n = v.n;
    int *label = sleapc__malloc((size_t)(n > 0 ? n : 1) * sizeof *label);
    double *tscore = sleapc__malloc((size_t)(n > 0 ? n : 1) * sizeof *tscore);
    int64_t d = 0;
    if (!label || !tscore) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        goto done;
    }
    mot_calibration cal;
    if ((st = sleapc__mot_calibrate(&v, p, &cal)))
        goto done;
    if (app)
        cal.app = *app;
    sleapc__mot_finish_detections(&v, p, &cal);
    mot_tracker T;
    if ((st = sleapc__mot_tracker_init(&T, p, &v, &cal, *name_offset, label, tscore)))
        goto done;
    for (int64_t s = 0; !st && s < nf; s++)
        st = sleapc__mot_tracker_frame(&T, s);
    /* the next video's names continue past this one's */
    *name_offset += T.next_public;
    sleapc__mot_tracker_free(&T);
    /* identity linking: offline, over the whole video's tracks */
    if (!st && sleapc__mot_params_link(p) && v.emb && cal.app.status == MOT_APPEARANCE_NO_VECTORS)
        sleapc__log(SLEAPC_LOG_WARN,
                    "tracking: the detections carry re-ID vectors, but sleapc did not calibrate "
                    "them; tracklets are linked by position, where sleap-nn 0.3.5 may link them "
                    "by appearance");
    else if (!st && sleapc__mot_params_link(p) && v.emb && !cal.app.for_linking)
        sleapc__log(SLEAPC_LOG_INFO,
                    "tracking: the re-ID vectors are not usable for linking (calibration); "
                    "tracklets are linked by position");
    if (!st && sleapc__mot_params_link(p))
        st = sleapc__mot_link(&v, p, &cal, label, tscore);
    if (st)
        goto done;
    d = 0;
    for (int64_t s = 0; s < nf; s++) {
        const sleapc_pred_frame *f = &pr->frames[perm[s].k];
        for (int64_t i = 0; i < f->n; i++, d++) {
            sleapc_pred_instance *in = &pr->insts[f->first + i];
            in->track = label[d];
            in->tracking_score = (float)tscore[d];
            if (scores)
                scores[f->first + i] = tscore[d];
            in->class_index = -1;
        }
    }
done:
    sleapc__free(label);
    sleapc__free(tscore);
    sleapc__mot_video_free(&v);
    return st;
}

sleapc_status sleapc__mot_run_calibrate(const sleapc_predictions *pr, int64_t video,
                                        const sleapc_mot_params *p, mot_calibration *cal)
{
    int64_t nf = 0;
    for (int64_t k = 0; k < pr->n_frames; k++)
        nf += pr->frames[k].video == video;
    frame_key *perm = sleapc__malloc((size_t)(nf > 0 ? nf : 1) * sizeof *perm);
    if (!perm)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    nf = 0;
    for (int64_t k = 0; k < pr->n_frames; k++)
        if (pr->frames[k].video == video)
            perm[nf++] = (frame_key){video, pr->frames[k].frame_idx, k};
    qsort(perm, (size_t)nf, sizeof *perm, cmp_frames);
    mot_video v;
    sleapc_status st = fill_video(pr, perm, nf, p, &v);
    if (!st)
        st = sleapc__mot_calibrate(&v, p, cal);
    sleapc__mot_video_free(&v);
    sleapc__free(perm);
    return st;
}

sleapc_status sleapc__mot_track_predictions(sleapc_predictions *pr, const sleapc_mot_params *p,
                                            int *n_ids, double *scores)
{
    return sleapc__mot_track_predictions_app(pr, p, NULL, n_ids, scores);
}

sleapc_status sleapc__mot_track_predictions_app(sleapc_predictions *pr, const sleapc_mot_params *p,
                                                const mot_appearance_calibration *app, int *n_ids,
                                                double *scores)
{
    *n_ids = 0;
    sleapc_status st = sleapc__mot_check_supported(p, pr->n_nodes);
    if (st)
        return st;
    if (sleapc__mot_uses_appearance(p->tracker) && !has_vectors(pr))
        return sleapc__mot_refuse_no_vectors(p);
    frame_key *perm = sleapc__malloc((size_t)(pr->n_frames > 0 ? pr->n_frames : 1) * sizeof *perm);
    if (!perm)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    for (int64_t k = 0; k < pr->n_frames; k++)
        perm[k] = (frame_key){pr->frames[k].video, pr->frames[k].frame_idx, k};
    qsort(perm, (size_t)pr->n_frames, sizeof *perm, cmp_frames);
    int offset = 0;
    for (int64_t s = 0; !st && s < pr->n_frames;) {
        int64_t e = s;
        while (e < pr->n_frames && perm[e].video == perm[s].video)
            e++;
        st = track_video(pr, perm + s, e - s, p, app, &offset, scores);
        s = e;
    }
    sleapc__free(perm);
    *n_ids = offset;
    return st;
}
