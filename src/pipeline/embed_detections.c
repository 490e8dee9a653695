/* The lone embedding route (see embed_detections.h): the detections are
 * read whole (their vectors are written with them), then each video's
 * frames are decoded once, in the file's order, and every detection on
 * them is cropped and batched through the embedder; with tracking, the
 * embedded detections are then tracked in memory, as sleap-nn's
 * predict_embeddings_to_slp runs apply_tracking. */
#include "pipeline/embed_detections.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/compat.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "io/predictions/predictions_format.h"
#include "layers/embedder.h"
#include "pipeline/input_impl.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/tracking_config.h"

static sleapc_status check_paths(const char *data_path, const char *out_path, bool tracking)
{
    if (!sleapc__pred_path_is_slp(data_path))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--data_path must be a .slp of detections to embed, got %s: an "
                            "embedding (re-ID) model attaches appearance vectors to detections "
                            "that already exist",
                            data_path);
    const sleapc_pred_format *f = sleapc__pred_format_of(out_path);
    if (!f || f->id != SLEAPC_PRED_SLP)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            tracking ? "%s: the embedding route writes a .slp only (convert "
                                       "it afterwards)"
                                     : "%s: appearance vectors are saved in a .slp only "
                                       "(--save_embeddings slp)",
                            out_path);
    if (strcmp(data_path, out_path) == 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "-o %s is the input: writing it would destroy the detections",
                            out_path);
    return SLEAPC_OK;
}

/* Every detection of video v's frames into the embedder. */
static sleapc_status embed_video(sleapc_embedder *e, sleapc_predictions *pr, int v,
                                 const char *data_path, sleapc_decode_rule rule, int64_t *n_done)
{
    sleapc_input *in = NULL;
    sleapc_status st = sleapc__input_open(data_path, v, rule, &in);
    if (st)
        return st;
    const sleapc_video_info vi = sleapc__input_video_info(in);
    uint8_t *frame = sleapc__aligned_alloc((size_t)(vi.channels * vi.height * vi.width));
    if (!frame)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    const int dim = sleapc__embedder_dim(e);
    for (int64_t f = 0; !st && f < pr->n_frames; f++) {
        const sleapc_pred_frame *fr = &pr->frames[f];
        if (fr->video != v || fr->n == 0)
            continue;
        if (sleapc__interrupted()) {
            st = sleapc__fail(SLEAPC_ERR_INTERRUPTED, "%s: interrupted", data_path);
            break;
        }
        bool read = false;
        for (int64_t i = fr->first; !st && i < fr->first + fr->n; i++) {
            float cx, cy;
            if (!sleapc__embedder_centroid(pr->points + i * pr->n_nodes * 2, pr->n_nodes, &cx, &cy))
                continue; /* no point to centre a crop on: sleap-nn skips it */
            if (!read) {
                st = sleapc__input_read(in, fr->frame_idx, frame);
                if (!st)
                    st = sleapc__embedder_frame(e, frame, vi.channels, vi.height, vi.width);
                read = true;
            }
            if (!st)
                st = sleapc__embedder_add(e, cx, cy, pr->embeddings + i * dim);
            if (!st)
                ++*n_done;
        }
    }
    /* Before the frame buffer goes: queued crops are already cut. */
    if (!st)
        st = sleapc__embedder_flush(e);
    sleapc__aligned_free(frame);
    sleapc__input_close(in);
    return st;
}

/* The detections of data_path read into *pr with a vector for each
 * (NaN where an instance has no point); *n_done: the vectors made. */
static sleapc_status embed_into(const sleapc_model *m, const char *data_path,
                                const sleapc_predictor_opts *o, sleapc_predictions *pr,
                                int64_t *n_done)
{
    sleapc_embedder *e = NULL;
    sleapc_status st = sleapc__embedder_create(m, o, &e);
    if (st)
        return st;
    int64_t n_user = 0;
    st = sleapc__predictions_read(data_path, pr, &n_user);
    if (!st && n_user > 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: %lld frames have user instances; sleapc embeds the predicted "
                    "instances and leaves the user instances out",
                    data_path, (long long)n_user);
    if (!st && pr->n_insts == 0)
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "%s: no detections to embed (%lld frames, no predicted instances)",
                          data_path, (long long)pr->n_frames);
    const int dim = sleapc__embedder_dim(e);
    if (!st) {
        pr->emb_dim = dim;
        pr->embeddings = sleapc__malloc(sizeof(float) * (size_t)(pr->n_insts * dim));
        if (!pr->embeddings)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        for (int64_t k = 0; !st && k < pr->n_insts * dim; k++)
            pr->embeddings[k] = NAN;
    }
    const sleapc_decode_rule rule = sleapc__decode_rule_of(o->compat);
    for (int v = 0; !st && v < pr->n_videos; v++)
        st = embed_video(e, pr, v, data_path, rule, n_done);
    sleapc__embedder_destroy(e);
    return st;
}

sleapc_status sleapc__embed_detections(const sleapc_model *m, const char *data_path,
                                       const char *out_path, const sleapc_predictor_opts *o,
                                       int64_t *n_embedded)
{
    return sleapc__embed_and_track(m, data_path, out_path, o, NULL, true, n_embedded);
}

sleapc_status sleapc__embed_and_track(const sleapc_model *m, const char *data_path,
                                      const char *out_path, const sleapc_predictor_opts *o,
                                      const sleapc_tracking_opts *t, bool keep_vectors,
                                      int64_t *n_embedded)
{
    if (n_embedded)
        *n_embedded = 0;
    sleapc_status st = check_paths(data_path, out_path, t != NULL);
    sleapc_tracker_opts to;
    /* The options that do not depend on the skeleton, before the embedding pass. */
    if (!st && t)
        st = sleapc__tracking_resolve(t, 0, &to);
    if (st)
        return st;
    sleapc_predictions pr = {0};
    int64_t n = 0;
    st = embed_into(m, data_path, o, &pr, &n);
    if (!st && t) {
        st = sleapc__tracking_resolve(t, pr.n_nodes, &to);
        if (!st)
            st = sleapc__predictions_postprocess(&pr, NULL, &to, data_path);
        pr.identities = false; /* tracker tracks are no classes */
    }
    if (!st && !keep_vectors) {
        sleapc__free(pr.embeddings);
        pr.embeddings = NULL;
        pr.emb_dim = 0;
    }
    if (!st)
        st = sleapc__predictions_write_path(&pr, out_path);
    if (!st && n_embedded)
        *n_embedded = n;
    sleapc__predictions_free(&pr);
    return st;
}
