/* Joining the outputs of shards (sleapc merge): each input holds some frames
 * of the same videos, predicted with the same skeleton; the joined file lists
 * every frame once, in (video, frame) order, as one run over all of them
 * writes it. Tracks cannot be joined at the seams, so tracked inputs (or a
 * request) are tracked again over the joined frames, as one run tracks. */
#include "pipeline/merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/tracking_config.h"

static const char *str(const char *s)
{
    return s ? s : "";
}

/* The skeleton and the videos of b against a's; a message names what differs. */
static sleapc_status check_same(const sleapc_predictions *a, const char *pa,
                                const sleapc_predictions *b, const char *pb)
{
    bool same = a->n_nodes == b->n_nodes && a->n_edges == b->n_edges &&
                (!*str(a->skeleton_name) || !*str(b->skeleton_name) ||
                 strcmp(a->skeleton_name, b->skeleton_name) == 0);
    for (int i = 0; same && i < a->n_nodes; i++)
        same = strcmp(str(a->node_names[i]), str(b->node_names[i])) == 0;
    for (int i = 0; same && i < a->n_edges; i++)
        same = a->edges[i][0] == b->edges[i][0] && a->edges[i][1] == b->edges[i][1];
    if (!same)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "%s and %s have different skeletons (\"%s\", %d nodes; \"%s\", %d "
                            "nodes): only outputs of one model's shards can be merged",
                            pa, pb, str(a->skeleton_name), a->n_nodes, str(b->skeleton_name),
                            b->n_nodes);
    if (a->n_videos != b->n_videos)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "%s names %d videos and %s %d: shards of one run name the same videos",
                            pa, a->n_videos, pb, b->n_videos);
    for (int v = 0; v < a->n_videos; v++) {
        const sleapc_pred_video *x = &a->videos[v], *y = &b->videos[v];
        /* An analysis .h5 may not name its video: it then matches any. */
        bool names = !*str(x->filename) || !*str(y->filename) ||
                     strcmp(x->filename, y->filename) == 0;
        bool sizes = x->height <= 0 || y->height <= 0 ||
                     (x->height == y->height && x->width == y->width);
        if (!names || !sizes)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "%s and %s are predictions of different videos (%s, %s): shards "
                                "of one run name the same videos",
                                pa, pb, str(x->filename), str(y->filename));
    }
    return SLEAPC_OK;
}

typedef struct frame_ref {
    int input;
    int64_t frame; /* index into that input's frames */
    int video;
    int64_t frame_idx;
} frame_ref;

static int compare_refs(const void *pa, const void *pb)
{
    const frame_ref *a = pa, *b = pb;
    if (a->video != b->video)
        return a->video < b->video ? -1 : 1;
    if (a->frame_idx != b->frame_idx)
        return a->frame_idx < b->frame_idx ? -1 : 1;
    return a->input < b->input ? -1 : a->input > b->input;
}

/* Tracks named by the tracker ("track_<n>") were made by one shard's tracker
 * and mean nothing across the seam; other names (a multi-class model's
 * classes) are identities shared by every shard. */
static bool tracker_named(const sleapc_predictions *pr)
{
    for (int i = 0; i < pr->n_tracks; i++) {
        const char *s = str(pr->track_names[i]);
        if (strncmp(s, "track_", 6) != 0 || !s[6] || strspn(s + 6, "0123456789") != strlen(s + 6))
            return false;
    }
    return true;
}

/* The track of input in's track t in the joined list of names, added when new. */
static sleapc_status joined_track(sleapc_predictions *out, const sleapc_predictions *in, int t,
                                  int *id)
{
    *id = -1;
    if (t < 0 || t >= in->n_tracks)
        return SLEAPC_OK;
    for (int i = 0; i < out->n_tracks; i++)
        if (strcmp(out->track_names[i], str(in->track_names[t])) == 0) {
            *id = i;
            return SLEAPC_OK;
        }
    char **names = sleapc__realloc(out->track_names, ((size_t)out->n_tracks + 1) * sizeof *names);
    if (!names)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    out->track_names = names;
    if (!(names[out->n_tracks] = sleapc__strdup(str(in->track_names[t]))))
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    *id = out->n_tracks++;
    return SLEAPC_OK;
}

/* Frames of every input into out (whose header is the first input's), in
 * (video, frame) order; a frame in two inputs is refused. */
static sleapc_status join_frames(sleapc_predictions *in, const char *const *paths, int n,
                                 sleapc_predictions *out, bool keep_tracks)
{
    int64_t n_frames = 0, n_insts = 0;
    for (int i = 0; i < n; i++) {
        n_frames += in[i].n_frames;
        n_insts += in[i].n_insts;
    }
    frame_ref *refs = sleapc__malloc((size_t)(n_frames + 1) * sizeof *refs);
    if (!refs)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    int64_t k = 0;
    for (int i = 0; i < n; i++)
        for (int64_t f = 0; f < in[i].n_frames; f++)
            refs[k++] = (frame_ref){i, f, in[i].frames[f].video, in[i].frames[f].frame_idx};
    qsort(refs, (size_t)n_frames, sizeof *refs, compare_refs);
    sleapc_status st = SLEAPC_OK;
    for (int64_t r = 1; r < n_frames && !st; r++)
        if (refs[r].video == refs[r - 1].video && refs[r].frame_idx == refs[r - 1].frame_idx)
            st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                              "frame %lld of video %d is in both %s and %s: the inputs overlap "
                              "(merge joins shards, each with its own frames)",
                              (long long)refs[r].frame_idx, refs[r].video,
                              paths[refs[r - 1].input], paths[refs[r].input]);
    /* Embeddings: one length for all inputs that have them. */
    size_t D = 0;
    for (int i = 0; i < n && !st; i++) {
        const size_t d = in[i].emb_dim > 0 && in[i].embeddings ? (size_t)in[i].emb_dim : 0;
        if (d && D && d != D)
            st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: embeddings of length %zu, not %zu",
                              paths[i], d, D);
        D = d ? d : D;
    }
    size_t N = (size_t)(out->n_nodes > 0 ? out->n_nodes : 1);
    sleapc_pred_frame *frames = NULL;
    sleapc_pred_instance *insts = NULL;
    float *points = NULL, *scores = NULL, *emb = NULL;
    if (!st) {
        frames = sleapc__calloc((size_t)n_frames + 1, sizeof *frames);
        insts = sleapc__calloc((size_t)n_insts + 1, sizeof *insts);
        points = sleapc__calloc(((size_t)n_insts + 1) * N * 2, sizeof *points);
        scores = sleapc__calloc(((size_t)n_insts + 1) * N, sizeof *scores);
        emb = D ? sleapc__malloc(((size_t)n_insts + 1) * D * sizeof *emb) : NULL;
        if (!frames || !insts || !points || !scores || (D && !emb))
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    /* The header's track names are rebuilt from what the instances use. */
    for (int t = 0; !st && t < out->n_tracks; t++)
        sleapc__free(out->track_names[t]);
    if (!st)
        out->n_tracks = 0;
    int64_t q = 0;
    for (int64_t r = 0; r < n_frames && !st; r++) {
        const sleapc_predictions *src = &in[refs[r].input];
        const sleapc_pred_frame *f = &src->frames[refs[r].frame];
        frames[r] = (sleapc_pred_frame){f->video, f->frame_idx, q, f->n, 0, 0};
        for (int64_t j = 0; j < f->n && !st; j++, q++) {
            int64_t s = f->first + j;
            insts[q] = src->insts[s];
            if (keep_tracks)
                st = joined_track(out, src, src->insts[s].track, &insts[q].track);
            else
                insts[q].track = -1;
            memcpy(points + (size_t)q * N * 2, src->points + (size_t)s * N * 2,
                   N * 2 * sizeof *points);
            memcpy(scores + (size_t)q * N, src->point_scores + (size_t)s * N, N * sizeof *scores);
            for (size_t e = 0; e < D; e++) /* NaN: an input without vectors */
                emb[(size_t)q * D + e] =
                    src->emb_dim > 0 && src->embeddings ? src->embeddings[(size_t)s * D + e] : NAN;
        }
    }
    sleapc__free(refs);
    if (st) {
        sleapc__free(frames);
        sleapc__free(insts);
        sleapc__free(points);
        sleapc__free(scores);
        sleapc__free(emb);
        return st;
    }
    sleapc__free(out->frames);
    sleapc__free(out->insts);
    sleapc__free(out->points);
    sleapc__free(out->point_scores);
    sleapc__free(out->embeddings);
    out->frames = frames;
    out->embeddings = emb;
    out->emb_dim = (int)D;
    out->insts = insts;
    out->points = points;
    out->point_scores = scores;
    out->n_frames = out->frames_cap = n_frames;
    out->n_insts = out->insts_cap = n_insts;
    return SLEAPC_OK;
}

sleapc_status sleapc__predictions_merge(const char *const *in_paths, int n_in,
                                        const char *out_path, const sleapc_tracking_opts *t,
                                        const sleapc_filter_opts *f)
{
    for (int i = 0; i < n_in; i++)
        if (strcmp(in_paths[i], out_path) == 0)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "merge: the output %s is also an input", out_path);
    sleapc_filter_config fc;
    sleapc_status st = sleapc__filters_resolve(f, &fc);
    if (st)
        return st;
    sleapc_predictions *in = sleapc__calloc((size_t)n_in, sizeof *in);
    if (!in)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    bool tracked = false, identities = false;
    for (int i = 0; i < n_in && !st; i++) {
        st = sleapc__predictions_read(in_paths[i], &in[i], NULL);
        if (!st && i > 0)
            st = check_same(&in[0], in_paths[0], &in[i], in_paths[i]);
        if (!st && in[i].n_tracks > 0) {
            tracked = true;
            identities = identities || in[i].multiclass || in[i].identities ||
                         !tracker_named(&in[i]);
        }
    }
    bool asked = t && t->tracking;
    bool retrack = asked || (tracked && !identities && !t); /* t, tracking off: never */
    if (!st)
        st = join_frames(in, in_paths, n_in, &in[0], identities && !asked);
    sleapc_tracker_opts to;
    if (!st && retrack) {
        sleapc_tracking_opts dflt = sleapc__tracking_opts_default();
        dflt.tracking = true;
        if (!asked)
            sleapc__log(SLEAPC_LOG_WARN,
                        "merge: the inputs are tracked; their tracks end at each seam, so the "
                        "joined frames are tracked again with the default tracking options "
                        "(give the ones the shards used, e.g. --max_tracks, to change them)");
        st = sleapc__tracking_resolve(asked ? t : &dflt, in[0].n_nodes, &to);
    }
    if (!st)
        st = sleapc__predictions_postprocess(&in[0], &fc, retrack ? &to : NULL, in_paths[0]);
    /* Tracker tracks are no classes: identities only while the tracks are. */
    if (retrack)
        in[0].identities = false;
    if (!st)
        st = sleapc__predictions_write_path(&in[0], out_path);
    for (int i = 0; i < n_in; i++)
        sleapc__predictions_free(&in[i]);
    sleapc__free(in);
    return st ? sleapc__wrap(st, "merge into %s", out_path) : SLEAPC_OK;
}
