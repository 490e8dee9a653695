/* Predictions from a SLEAP .slp labels file: its predicted instances of the
 * first skeleton (user instances are labels, not predictions). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/predictions/predictions_read_impl.h"
#include "io/slp/slp_read.h"
#include "io/slp/slp_read_embeddings.h"
#include "io/slp/slp_read_identity.h"

/* See predictions_read_impl.h. */
sleapc_status sleapc__pred_slp_header(const sleapc_slp *r, sleapc_predictions *pr, int64_t frames,
                                      int64_t insts)
{
    if (r->n_skeletons < 1)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: no skeleton", r->path);
    const sleapc_slp_skeleton *sk = &r->skeletons[0];
    sleapc_status st = sleapc__pred_read_alloc(pr, sk->n_nodes, sk->n_edges, sk->n_symmetries,
                                               r->n_tracks, r->n_videos, frames, insts);
    if (!st && !(pr->skeleton_name = sleapc__strdup(sk->name ? sk->name : "")))
        st = sleapc__pred_read_nomem();
    for (int i = 0; !st && i < sk->n_nodes; i++)
        if (!(pr->node_names[i] = sleapc__strdup(sk->node_names[i])))
            st = sleapc__pred_read_nomem();
    for (int i = 0; !st && i < sk->n_edges; i++)
        memcpy(pr->edges[i], sk->edges[i], sizeof pr->edges[i]);
    for (int i = 0; !st && i < sk->n_symmetries; i++)
        memcpy(pr->symmetries[i], sk->symmetries[i], sizeof pr->symmetries[i]);
    for (int i = 0; !st && i < r->n_tracks; i++)
        if (!(pr->track_names[i] = sleapc__strdup(r->track_names[i])))
            st = sleapc__pred_read_nomem();
    for (int i = 0; !st && i < r->n_videos; i++)
        st = sleapc__slp_pred_video(r, i, &pr->videos[i]);
    if (!st && r->provenance && !(pr->provenance = sleapc__strdup(r->provenance)))
        st = sleapc__pred_read_nomem();
    /* A class_output: identity file names its tracks again as identities:
     * kept, so that a rewrite (convert, filters) writes them too. */
    if (!st)
        st = sleapc__slp_identities_kept(r->h5, r->path, pr->track_names, pr->n_tracks,
                                         &pr->identities);
    return st;
}

sleapc_status sleapc__pred_read_slp(const char *path, sleapc_predictions *pr,
                                    int64_t *n_user_frames)
{
    sleapc_slp *r = NULL;
    sleapc_status st = sleapc__slp_open(path, &r);
    if (st)
        return st;
    int64_t n_pred = 0;
    for (int64_t i = 0; i < r->n_instances; i++)
        n_pred += r->instances[i].predicted && r->instances[i].skeleton == 0;
    st = sleapc__pred_slp_header(r, pr, r->n_frames, n_pred);
    sleapc_slp_embeddings emb = {0};
    int64_t *local_of_row =
        st ? NULL : sleapc__malloc(((size_t)r->n_instances + 1) * sizeof(int64_t));
    if (!st && !local_of_row)
        st = sleapc__pred_read_nomem();
    for (int64_t i = 0; !st && i < r->n_instances; i++)
        local_of_row[i] = -1;
    if (!st)
        st = sleapc__slp_embeddings_read(r->h5, path, r->n_instances, &emb);
    if (!st)
        st = sleapc__results_set_emb_dim(pr, emb.dim);
    for (int64_t k = 0; !st && k < r->n_frames; k++) {
        const sleapc_slp_frame *f = &r->frames[k];
        sleapc_pred_frame *d = &pr->frames[pr->n_frames++];
        d->video = f->video;
        d->frame_idx = f->frame_idx;
        d->first = pr->n_insts;
        bool user = false;
        for (int64_t i = 0; i < f->n_instances; i++) {
            const sleapc_slp_instance *in = &r->instances[f->first_instance + i];
            user = user || !in->predicted;
            local_of_row[f->first_instance + i] = -1;
            if (!in->predicted || in->skeleton != 0)
                continue;
            local_of_row[f->first_instance + i] = d->n;
            int64_t q = pr->n_insts++;
            const float *v = sleapc__slp_embedding(&emb, f->first_instance + i);
            if (v)
                memcpy(pr->embeddings + q * emb.dim, v, (size_t)emb.dim * sizeof *v);
            sleapc_pred_instance *o = &pr->insts[q];
            o->score = in->score;
            o->track = in->track;
            o->tracking_score = in->tracking_score;
            o->class_index = -1;
            for (int n = 0; n < pr->n_nodes && n < in->n_points; n++) {
                const sleapc_slp_point *pt = &r->points[in->first_point + n];
                bool missing = !pt->visible || isnan(pt->x) || isnan(pt->y);
                pr->points[(q * pr->n_nodes + n) * 2] = missing ? NAN : (float)pt->x;
                pr->points[(q * pr->n_nodes + n) * 2 + 1] = missing ? NAN : (float)pt->y;
                pr->point_scores[q * pr->n_nodes + n] = missing ? NAN : (float)pt->score;
            }
            d->n++;
        }
        if (user && n_user_frames)
            (*n_user_frames)++;
    }
    if (!st)
        st = sleapc__pred_slp_boxes(r, local_of_row, pr);
    sleapc__free(local_of_row);
    sleapc__slp_embeddings_free(&emb);
    sleapc__slp_close(r);
    return st;
}
