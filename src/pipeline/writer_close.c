/* Closing the writer: tracking over the spilled frames, then the format
 * (io/predictions) written from them a block at a time, atomically. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/results.h"
#include "core/results_spill.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/track_stream.h"
#include "pipeline/writer_impl.h"
#include "pipeline/writer_state.h"

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
    sleapc_status st = sleapc__results_gather(&src, &w->pr);
    if (!st)
        st = sleapc__predictions_postprocess(&w->pr, NULL, &w->tracking, near);
    if (!st && w->drop_empty)
        sleapc__writer_drop_empty_frames(&w->pr);
    return st;
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
        st = w->format->write(&w->pr, &src, w->path, &unheld);
    }
    if (n_instances)
        *n_instances = st ? 0 : held - unheld;
    if (st)
        st = sleapc__wrap(st, "write %s", w->path);
    sleapc__spill_close(tracked);
    sleapc__writer_discard(w);
    return st;
}
