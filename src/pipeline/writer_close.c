/* Closing the writer: tracking over the spilled frames, then the format
 * written from them a block at a time, inside an atomic file. */
#include <string.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/results.h"
#include "core/results_spill.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/track_stream.h"
#include "pipeline/writer_impl.h"
#include "pipeline/writer_state.h"

/* Appends every frame of src to dst (header kept), instances packed. */
static sleapc_status gather(sleapc_results_source *src, sleapc_predictions *dst)
{
    const sleapc_predictions *b = NULL;
    sleapc_status st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    const int64_t N = dst->n_nodes;
    while (!st && b->n_frames > 0) {
        int64_t n = 0;
        for (int64_t k = 0; k < b->n_frames; k++)
            n += b->frames[k].n;
        if ((st = sleapc__results_reserve(dst, dst->n_frames + b->n_frames, dst->n_insts + n)))
            break;
        for (int64_t k = 0; k < b->n_frames; k++) {
            const sleapc_pred_frame *f = &b->frames[k];
            const int64_t at = dst->n_insts;
            dst->frames[dst->n_frames++] = (sleapc_pred_frame){f->video, f->frame_idx, at, f->n};
            memcpy(dst->insts + at, b->insts + f->first, (size_t)f->n * sizeof *dst->insts);
            memcpy(dst->points + at * N * 2, b->points + f->first * N * 2,
                   (size_t)(f->n * N * 2) * sizeof(float));
            memcpy(dst->point_scores + at * N, b->point_scores + f->first * N,
                   (size_t)(f->n * N) * sizeof(float));
            dst->n_insts += f->n;
        }
        st = src->next(src->ctx, &b);
    }
    return st;
}

static void set_track_names(sleapc_predictions *pr, char **names, int n)
{
    for (int i = 0; pr->track_names && i < pr->n_tracks; i++)
        sleapc__free(pr->track_names[i]);
    sleapc__free(pr->track_names);
    pr->track_names = names;
    pr->n_tracks = n;
    pr->multiclass = false;
}

/* Frames added in (video, frame index) order: tracked block by block from
 * the spill into a second spill (empty frames dropped when asked), which
 * *out then owns. */
static sleapc_status track_streamed(sleapc_writer *w, sleapc_results_spill **out)
{
    *out = NULL;
    const char *near = w->pr.n_videos > 0 ? w->pr.videos[0].filename : NULL;
    sleapc_track_stream *ts = NULL;
    sleapc_results_spill *tracked = NULL;
    sleapc_predictions blk = {.n_nodes = w->pr.n_nodes};
    sleapc_results_source src;
    sleapc__spill_source(w->spill, &w->pr, &src);
    sleapc_status st = sleapc__track_stream_create(&w->tracking, &w->pr, near, &ts);
    if (!st)
        st = sleapc__spill_open(w->path, w->pr.n_nodes, &tracked);
    const sleapc_predictions *b = NULL;
    if (!st)
        st = src.rewind(src.ctx);
    if (!st)
        st = src.next(src.ctx, &b);
    while (!st && b->n_frames > 0) {
        st = sleapc__track_stream_block(ts, b, w->drop_empty, &blk);
        if (!st)
            st = sleapc__spill_append(tracked, &blk);
        if (!st)
            st = src.next(src.ctx, &b);
    }
    char **names = NULL;
    int n = 0;
    if (!st && !(st = sleapc__track_stream_names(ts, &names, &n)))
        set_track_names(&w->pr, names, n);
    sleapc__track_stream_destroy(ts);
    sleapc__predictions_free(&blk);
    if (st) {
        sleapc__spill_close(tracked);
        return st;
    }
    *out = tracked;
    return SLEAPC_OK;
}

/* Frames added out of order: sleap-nn tracks them in (video, frame index)
 * order and writes them in the order given, so the tracker needs the whole
 * run: gathered into w->pr and tracked there (the filters already ran). */
static sleapc_status track_gathered(sleapc_writer *w)
{
    const char *near = w->pr.n_videos > 0 ? w->pr.videos[0].filename : NULL;
    sleapc_results_source src;
    sleapc__spill_source(w->spill, &w->pr, &src);
    sleapc_status st = gather(&src, &w->pr);
    if (!st)
        st = sleapc__predictions_postprocess(&w->pr, NULL, &w->tracking, near);
    if (!st && w->drop_empty)
        sleapc__writer_drop_empty_frames(&w->pr);
    return st;
}

/* Instances the analysis .h5 cannot hold, over the whole source. */
static sleapc_status count_unheld(sleapc_results_source *src, int64_t *n)
{
    *n = 0;
    const sleapc_predictions *b = NULL;
    sleapc_status st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    while (!st && b->n_frames > 0) {
        *n += sleapc__predictions_h5_unheld(b);
        st = src->next(src->ctx, &b);
    }
    return st;
}

static sleapc_status write_format(sleapc_writer *w, sleapc_results_source *src, int64_t *unheld_out)
{
    int64_t unheld = 0;
    sleapc_status st = SLEAPC_OK;
    if (w->format == FORMAT_ANALYSIS_H5 && !(st = count_unheld(src, &unheld)) && unheld > 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: the analysis .h5 holds one instance per track and frame; %lld "
                    "instances are left out (%s)",
                    w->path, (long long)unheld,
                    w->pr.n_tracks ? "untracked" : "no tracks: use --tracking");
    if (st)
        return st;
    *unheld_out = unheld;
    if (w->format == FORMAT_SLP)
        return sleapc__predictions_write_slp_from(&w->pr, src, w->path);
    if (w->format == FORMAT_ANALYSIS_H5) {
        /* Dense (frames, tracks, nodes) matrices: written from memory. */
        if (w->pr.n_frames == 0 && src->n_frames > 0 && (st = gather(src, &w->pr)))
            return st;
        return sleapc__predictions_write_analysis_h5(&w->pr, w->path);
    }
    /* Text formats: written into a temporary file, renamed into place. */
    sleapc_atomic_file af;
    st = sleapc__atomic_open(w->path, &af);
    if (st)
        return st;
    if (w->format == FORMAT_CSV)
        st = sleapc__predictions_write_csv_from(&w->pr, src, af.f);
    else
        st = sleapc__predictions_write_json_from(&w->pr, src, af.f);
    if (st) {
        sleapc__atomic_abort(&af);
        return st;
    }
    return sleapc__atomic_commit(&af);
}

sleapc_status sleapc__writer_close(sleapc_writer *w, int64_t *n_instances)
{
    int64_t unheld = 0, held = 0;
    sleapc_results_spill *tracked = NULL;
    sleapc_results_memory mem;
    sleapc_results_source src;
    sleapc_status st = SLEAPC_OK;
    if (!w->spill)
        st = sleapc__fail(SLEAPC_ERR_STATE, "the writer failed before");
    else if (w->track && w->in_order)
        st = track_streamed(w, &tracked);
    else if (w->track)
        st = track_gathered(w);
    if (!st) {
        if (tracked)
            sleapc__spill_source(tracked, &w->pr, &src);
        else if (w->track)
            sleapc__results_source_memory(&w->pr, &mem, &src);
        else
            sleapc__spill_source(w->spill, &w->pr, &src);
        /* Counted from what is written, after tracking culled. */
        held = tracked     ? sleapc__spill_n_insts(tracked)
               : w->track ? w->pr.n_insts
                          : sleapc__spill_n_insts(w->spill);
        st = write_format(w, &src, &unheld);
    }
    if (n_instances)
        *n_instances = st ? 0 : held - unheld;
    if (st)
        st = sleapc__wrap(st, "write %s", w->path);
    sleapc__spill_close(tracked);
    sleapc__writer_discard(w);
    return st;
}
