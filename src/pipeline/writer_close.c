/* Closing the writer: tracking over the spilled frames, then the format
 * (io/predictions) written from them a block at a time, atomically. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/results.h"
#include "core/results_spill.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/track_source.h"
#include "pipeline/writer_impl.h"
#include "pipeline/writer_state.h"

/* Frames added in (video, frame index) order: tracked block by block from
 * the spill into a second spill (empty frames dropped when asked), which
 * *out then owns. */
static sleapc_status track_streamed(sleapc_writer *w, sleapc_results_spill **out)
{
    const sleapc_track_source_opts o = {
        .tracking = &w->tracking,
        .drop_empty = w->drop_empty,
        .near_path = w->pr.n_videos > 0 ? w->pr.videos[0].filename : NULL,
        .spill_near = w->path,
    };
    sleapc_results_source src;
    sleapc__spill_source(w->spill, &w->pr, &src);
    return sleapc__track_source(&o, &w->pr, &src, out);
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
