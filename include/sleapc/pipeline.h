/* Running a predictor over many frames with decoding, inference and writing
 * overlapped. */
#ifndef SLEAPC_PIPELINE_H
#define SLEAPC_PIPELINE_H

#include "sleapc/predictor.h"
#include "sleapc/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sleapc_progress {
    int64_t done;      /* frames predicted so far */
    int64_t total;     /* frames to predict */
    double elapsed_s;
    double fps;        /* frames per second so far */
} sleapc_progress;

/* Called after every batch, on the calling thread, while the predictor still
 * holds that batch's results (sleapc_predictor_frame_results reads them). */
typedef void (*sleapc_progress_fn)(const sleapc_progress *progress, void *user);

/* Start from sleapc_run_opts_default() (struct_size, see sleapc.h). The
 * abort callback (sleapc_abort_set) stops a run between batches. */
typedef struct sleapc_run_opts {
    uint32_t struct_size;               /* sizeof(sleapc_run_opts) */
    int video;                          /* index of the video in the writer */
    int queue_depth;                    /* batches decoded ahead; 0 = 2 */
    sleapc_progress_fn progress;        /* NULL = none */
    void *user;
} sleapc_run_opts;

SLEAPC_API sleapc_run_opts sleapc_run_opts_default(void);

/* Predict on frames held in memory (sleapc_frame: gray, RGB or BGR rows).
 * frame_indices: which of the frames->n_frames frames (in this order), or NULL for all;
 * they are recorded in w (may be NULL) as frame indices of video opts->video.
 * Returns SLEAPC_OK, SLEAPC_ERR_INTERRUPTED (stopped; the frames done are in
 * w), or the first failure. */
SLEAPC_API sleapc_status sleapc_predict_array(sleapc_predictor *p, const sleapc_frame *frames,
                                              const int64_t *frame_indices, int64_t n_indices,
                                              sleapc_writer *w, const sleapc_run_opts *opts);

#ifdef __cplusplus
}
#endif

#endif
