/* Retracking a predictions file (see retrack.h): the file's blocks through
 * the filters and the tracker into a spill (track_source.h, as predict's
 * writer does when it closes), then every output written from it a block
 * at a time. A file whose frames are not in (video, frame index) order is
 * tracked whole, as sleap-nn visits frames in that order but writes them in
 * the file's. */
#include "pipeline/tracking/retrack.h"

#include "core/error.h"
#include "core/results_spill.h"
#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/track_source.h"
#include "pipeline/tracking/tracking_config.h"

/* The frames out of order: read whole, tracked whole, written from memory. */
static sleapc_status retrack_whole(const char *in_path, const char *const *out_paths, int n_out,
                                   const sleapc_filter_config *fc, const sleapc_tracker_opts *to)
{
    sleapc_predictions pr;
    sleapc_status st = sleapc__predictions_read(in_path, &pr, NULL);
    if (!st)
        st = sleapc__predictions_postprocess(&pr, fc, to, in_path);
    if (to) /* tracker tracks are no classes */
        pr.identities = false;
    for (int i = 0; !st && i < n_out; i++)
        if ((st = sleapc__predictions_write_path(&pr, out_paths[i])))
            st = sleapc__wrap(st, "write %s", out_paths[i]);
    sleapc__predictions_free(&pr);
    return st;
}

/* In order: block by block into a spill, the outputs written from it. */
static sleapc_status retrack_streamed(sleapc_predictions_reader *r, const char *in_path,
                                      const char *const *out_paths, int n_out,
                                      const sleapc_filter_config *fc, const sleapc_tracker_opts *to)
{
    const sleapc_track_source_opts o = {
        .filters = fc, .tracking = to, .near_path = in_path, .spill_near = out_paths[0]};
    sleapc_results_spill *spill = NULL;
    sleapc_status st = sleapc__track_source(&o, &r->pr, &r->src, &spill);
    /* The header alone: formats read whole keep their frames in r->pr. */
    sleapc_predictions head = r->pr;
    head.n_frames = head.n_insts = head.n_boxes = 0;
    if (to) /* tracker tracks are no classes */
        head.identities = false;
    sleapc_results_source src;
    if (!st)
        sleapc__spill_source(spill, &head, &src);
    for (int i = 0; !st && i < n_out; i++)
        if ((st = sleapc__predictions_write(&head, &src, out_paths[i], NULL)))
            st = sleapc__wrap(st, "write %s", out_paths[i]);
    sleapc__spill_close(spill);
    return st;
}

sleapc_status sleapc__retrack(const char *in_path, const char *const *out_paths, int n_out,
                              const sleapc_tracking_opts *t, const sleapc_filter_opts *f)
{
    return sleapc__retrack_blocks(in_path, out_paths, n_out, t, f, SLEAPC_PRED_BLOCK_FRAMES);
}

sleapc_status sleapc__retrack_blocks(const char *in_path, const char *const *out_paths, int n_out,
                                     const sleapc_tracking_opts *t, const sleapc_filter_opts *f,
                                     int64_t block_frames)
{
    const sleapc_pred_format *fmt;
    for (int i = 0; i < n_out; i++) {
        sleapc_status st = sleapc__pred_format_for_output(out_paths[i], &fmt);
        if (st)
            return st;
    }
    sleapc_filter_config fc;
    sleapc_tracker_opts to;
    const bool tracking = t && t->tracking;
    sleapc_status st = sleapc__filters_resolve(f, &fc);
    if (!st && tracking)
        st = sleapc__tracking_resolve(t, 0, &to);
    if (st)
        return st;
    sleapc_predictions_reader r;
    if ((st = sleapc__predictions_open_blocks(in_path, block_frames, &r)))
        return st;
    if (r.n_user_frames > 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: %lld frames have user instances; sleapc tracks the predicted "
                    "instances and leaves the user instances out",
                    in_path, (long long)r.n_user_frames);
    if (tracking)
        st = sleapc__tracking_resolve(t, r.pr.n_nodes, &to);
    if (!st && n_out > 0) {
        if (tracking && !r.in_order) {
            sleapc__predictions_reader_close(&r);
            return retrack_whole(in_path, out_paths, n_out, &fc, &to);
        }
        st = retrack_streamed(&r, in_path, out_paths, n_out, &fc, tracking ? &to : NULL);
    }
    sleapc__predictions_reader_close(&r);
    return st;
}
