/* Filters and tracking over a sleapc_predictions (see predictions_track.h). */
#include "pipeline/tracking/predictions_track.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_run.h"

/* Removes instance k of frame f when drop[k]; keeps the others in order. */
static sleapc_status compact_frame(sleapc_predictions *pr, sleapc_pred_frame *f, const bool *drop,
                                   const int *order, int n_order)
{
    const int64_t N = pr->n_nodes;
    const int64_t D = pr->emb_dim > 0 && pr->embeddings ? pr->emb_dim : 0;
    /* gather the kept instances (in `order` when given) into scratch, then
     * copy back over the frame's own range */
    int64_t m = 0;
    const int64_t n = order ? n_order : f->n;
    const size_t cap = (size_t)(n > 0 ? n : 1);
    sleapc_pred_instance *tmp_i = sleapc__malloc(cap * sizeof *tmp_i);
    float *tmp_p = sleapc__malloc(cap * (size_t)(N * 3 + D + 1) * sizeof(float));
    if (!tmp_i || !tmp_p) {
        sleapc__free(tmp_i);
        sleapc__free(tmp_p);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    float *tmp_s = tmp_p + n * N * 2, *tmp_e = tmp_s + n * N;
    for (int64_t k = 0; k < n; k++) {
        const int64_t src = order ? order[k] : k;
        if (!order && drop[src])
            continue;
        const int64_t at = f->first + src;
        tmp_i[m] = pr->insts[at];
        memcpy(tmp_p + m * N * 2, pr->points + at * N * 2, (size_t)N * 2 * sizeof(float));
        memcpy(tmp_s + m * N, pr->point_scores + at * N, (size_t)N * sizeof(float));
        if (D)
            memcpy(tmp_e + m * D, pr->embeddings + at * D, (size_t)D * sizeof(float));
        m++;
    }
    for (int64_t k = 0; k < m; k++) {
        const int64_t at = f->first + k;
        pr->insts[at] = tmp_i[k];
        memcpy(pr->points + at * N * 2, tmp_p + k * N * 2, (size_t)N * 2 * sizeof(float));
        memcpy(pr->point_scores + at * N, tmp_s + k * N, (size_t)N * sizeof(float));
        if (D)
            memcpy(pr->embeddings + at * D, tmp_e + k * D, (size_t)D * sizeof(float));
    }
    sleapc__free(tmp_i);
    sleapc__free(tmp_p);
    f->n = m;
    return SLEAPC_OK;
}

/* Closes the gaps compact_frame left between frames. */
static void pack_frames(sleapc_predictions *pr)
{
    const int64_t N = pr->n_nodes;
    const int64_t D = pr->emb_dim > 0 && pr->embeddings ? pr->emb_dim : 0;
    int64_t at = 0;
    for (int64_t k = 0; k < pr->n_frames; k++) {
        sleapc_pred_frame *f = &pr->frames[k];
        if (f->first != at && f->n > 0) {
            memmove(pr->insts + at, pr->insts + f->first, (size_t)f->n * sizeof *pr->insts);
            memmove(pr->points + at * N * 2, pr->points + f->first * N * 2,
                    (size_t)(f->n * N * 2) * sizeof(float));
            memmove(pr->point_scores + at * N, pr->point_scores + f->first * N,
                    (size_t)(f->n * N) * sizeof(float));
            if (D)
                memmove(pr->embeddings + at * D, pr->embeddings + f->first * D,
                        (size_t)(f->n * D) * sizeof(float));
        }
        f->first = at;
        at += f->n;
    }
    pr->n_insts = at;
}

static bool all_nan(const float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isnan(p[i]))
            return false;
    return true;
}

sleapc_status sleapc__predictions_filter(sleapc_predictions *pr, const sleapc_filter_config *cfg)
{
    if (!cfg || (!(cfg->min_peak_value > 0) && !(cfg->min_instance_score > 0) &&
                 !(cfg->min_mean_node_score > 0) && cfg->min_visible_nodes <= 0 &&
                 !(cfg->min_visible_node_fraction > 0) && !cfg->overlapping &&
                 !(cfg->min_centroid_distance > 0)))
        return SLEAPC_OK; /* every filter off */
    const int64_t N = pr->n_nodes;
    for (int64_t k = 0; k < pr->n_frames; k++) {
        sleapc_pred_frame *f = &pr->frames[k];
        const int64_t n = f->n;
        if (n == 0)
            continue;
        float *buf = sleapc__malloc((size_t)n * (size_t)(N * 3 + 4) * sizeof(float));
        bool *drop = sleapc__malloc((size_t)n * sizeof(bool));
        if (!buf || !drop) {
            sleapc__free(buf);
            sleapc__free(drop);
            return sleapc__fail(SLEAPC_ERR_NOMEM, "filters: out of memory");
        }
        float *kp = buf, *pv = kp + n * N * 2, *sc = pv + n * N, *cen = sc + n;
        bool centroids = true;
        for (int64_t i = 0; i < n; i++) {
            const sleapc_pred_instance *in = &pr->insts[f->first + i];
            sc[i] = in->score;
            centroids = centroids && (in->has_centroid || N == 1);
            const float *c = in->has_centroid ? in->centroid : pr->points + (f->first + i) * N * 2;
            cen[2 * i] = c[0];
            cen[2 * i + 1] = c[1];
        }
        memcpy(kp, pr->points + f->first * N * 2, (size_t)(n * N * 2) * sizeof(float));
        memcpy(pv, pr->point_scores + f->first * N, (size_t)(n * N) * sizeof(float));
        sleapc_filter_outputs io = {.n_frames = 1,
                                    .n_slots = n,
                                    .n_nodes = N,
                                    .keypoints = kp,
                                    .peak_values = pv,
                                    .instance_scores = sc,
                                    .centroids = centroids ? cen : NULL};
        sleapc_status st = sleapc__filters_apply(cfg, &io);
        if (!st) {
            for (int64_t i = 0; i < n; i++) {
                const float before = pr->insts[f->first + i].score;
                const float *p0 = pr->points + (f->first + i) * N * 2;
                drop[i] = isnan(before) ? (all_nan(kp + i * N * 2, N * 2) && !all_nan(p0, N * 2))
                                        : isnan(sc[i]);
            }
            st = compact_frame(pr, f, drop, NULL, 0);
        }
        sleapc__free(buf);
        sleapc__free(drop);
        if (st)
            return st;
    }
    pack_frames(pr);
    return SLEAPC_OK;
}

/* Frames in (video, frame index) order: sort keys. */
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

static sleapc_status name_tracks(sleapc_predictions *pr, int n_ids)
{
    /* first appearance in frame order (the file's frame order) */
    int *rank = sleapc__malloc((size_t)(n_ids > 0 ? n_ids : 1) * sizeof *rank);
    char **names = sleapc__calloc((size_t)n_ids + 1, sizeof *names);
    if (!rank || !names) {
        sleapc__free(rank);
        sleapc__free(names);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    }
    for (int i = 0; i < n_ids; i++)
        rank[i] = -1;
    int n_used = 0;
    for (int64_t k = 0; k < pr->n_insts; k++) {
        const int id = pr->insts[k].track;
        if (id >= 0 && rank[id] < 0) {
            char name[32];
            snprintf(name, sizeof name, "track_%d", id);
            if (!(names[n_used] = sleapc__strdup(name))) {
                for (int i = 0; i < n_used; i++)
                    sleapc__free(names[i]);
                sleapc__free(names);
                sleapc__free(rank);
                return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
            }
            rank[id] = n_used++;
        }
    }
    for (int64_t k = 0; k < pr->n_insts; k++)
        if (pr->insts[k].track >= 0)
            pr->insts[k].track = rank[pr->insts[k].track];
    for (int i = 0; pr->track_names && i < pr->n_tracks; i++)
        sleapc__free(pr->track_names[i]);
    sleapc__free(pr->track_names);
    pr->track_names = names;
    pr->n_tracks = n_used;
    pr->multiclass = false;
    pr->identities = false;
    sleapc__free(rank);
    return SLEAPC_OK;
}

sleapc_status sleapc__predictions_track(sleapc_predictions *pr, const sleapc_tracker_opts *o,
                                        const sleapc_track_images *images)
{
    if (o->mot) {
        /* a MOT tracker keeps every instance, in place */
        int n_ids = 0;
        sleapc_status st = sleapc__mot_track_predictions(pr, &o->mot_params, &n_ids, NULL);
        return st ? st : name_tracks(pr, n_ids);
    }
    if (o->use_flow && (!images || !images->gray))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--use_flow needs the video frames, which are not available");
    sleapc_tracker *t = NULL;
    sleapc_tracker_opts with_vectors = *o;
    const bool vectors =
        o->features == SLEAPC_TRACK_EMBEDDINGS && pr->emb_dim > 0 && pr->embeddings;
    with_vectors.emb_dim = vectors ? pr->emb_dim : 0;
    sleapc_status st = sleapc__tracker_create(&with_vectors, pr->n_nodes, &t);
    if (st)
        return st;
    const int64_t N = pr->n_nodes;
    int64_t max_n = 1;
    for (int64_t k = 0; k < pr->n_frames; k++)
        max_n = pr->frames[k].n > max_n ? pr->frames[k].n : max_n;
    frame_key *perm = sleapc__malloc((size_t)(pr->n_frames > 0 ? pr->n_frames : 1) * sizeof *perm);
    double *pts = sleapc__malloc((size_t)(max_n * (N * 2 + 2)) * sizeof(double));
    int *ibuf = sleapc__malloc((size_t)max_n * 2 * sizeof(int));
    bool *drop = sleapc__malloc((size_t)max_n * sizeof(bool));
    if (!perm || !pts || !ibuf || !drop) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        goto done;
    }
    double *scores = pts + max_n * N * 2, *tscore = scores + max_n;
    for (int64_t k = 0; k < pr->n_frames; k++)
        perm[k] = (frame_key){pr->frames[k].video, pr->frames[k].frame_idx, k};
    qsort(perm, (size_t)pr->n_frames, sizeof *perm, cmp_frames);
    for (int64_t s = 0; s < pr->n_frames; s++) {
        sleapc_pred_frame *f = &pr->frames[perm[s].k];
        const int n = (int)f->n;
        for (int64_t i = 0; i < n * N * 2; i++)
            pts[i] = pr->points[f->first * N * 2 + i];
        for (int i = 0; i < n; i++)
            scores[i] = pr->insts[f->first + i].score;
        sleapc_track_frame_in in = {
            .frame_idx = f->frame_idx, .n_insts = n, .points = pts, .scores = scores};
        if (vectors)
            in.vectors = pr->embeddings + f->first * pr->emb_dim;
        if (o->use_flow && (st = images->gray(images->ctx, f->video, f->frame_idx, &in.gray,
                                              &in.height, &in.width)))
            goto done;
        sleapc_track_frame_out out = {.out = ibuf, .track = ibuf + max_n, .tracking_score = tscore};
        if ((st = sleapc__tracker_track_frame(t, &in, &out)))
            goto done;
        for (int i = 0; i < n; i++) {
            sleapc_pred_instance *d = &pr->insts[f->first + i];
            d->track = out.track[i];
            d->tracking_score = (float)out.tracking_score[i];
            d->class_index = -1;
        }
        if ((st = compact_frame(pr, f, drop, out.out, out.n_out)))
            goto done;
    }
    pack_frames(pr);
    st = name_tracks(pr, sleapc__tracker_n_tracks(t));
done:
    sleapc__free(perm);
    sleapc__free(pts);
    sleapc__free(ibuf);
    sleapc__free(drop);
    sleapc__tracker_destroy(t);
    return st;
}
