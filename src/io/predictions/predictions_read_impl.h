/* The predictions readers of the formats table (predictions_format.c), one
 * file each. Each fills *pr (zeroed by the caller) from path and may leave
 * it half-filled on failure (the caller frees it); n_user_frames, when not
 * NULL and zeroed, counts frames that also hold user (labelled) instances. */
#ifndef SLEAPC_IO_PREDICTIONS_READ_IMPL_H
#define SLEAPC_IO_PREDICTIONS_READ_IMPL_H

#include "core/results.h"
#include "io/slp/slp_read.h"

sleapc_status sleapc__pred_read_slp(const char *path, sleapc_predictions *pr,
                                    int64_t *n_user_frames);
sleapc_status sleapc__pred_read_json(const char *path, sleapc_predictions *pr,
                                     int64_t *n_user_frames);
sleapc_status sleapc__pred_read_analysis_h5(const char *path, sleapc_predictions *pr,
                                            int64_t *n_user_frames);

/* pr's header from r's (skeleton 0, tracks, videos, provenance), with room
 * for frames frames and insts instances. */
sleapc_status sleapc__pred_slp_header(const sleapc_slp *r, sleapc_predictions *pr, int64_t frames,
                                      int64_t insts);

/* r's predicted boxes (/bboxes) into pr, whose frames are r's /frames rows
 * in order; local_of_row[i] is /instances row i's index among its frame's
 * instances in pr, or -1 (a box's link to it is kept). */
sleapc_status sleapc__pred_slp_boxes(const sleapc_slp *r, const int64_t *local_of_row,
                                     sleapc_predictions *pr);

/* A .slp file's predictions as a source of blocks of block_frames /frames
 * rows (core/results.h): head gets the header (zeroed by the caller; the
 * caller frees it, also on failure), src the blocks, whose header is
 * head's (head must outlive them and not move). Opening makes one pass over
 * /frames and /instances (no points) for the totals and n_user_frames (may
 * be NULL) and *in_order (frames in (video, frame index) order). Errors as
 * sleapc__pred_read_slp's, also from src->next. */
typedef struct sleapc_slp_blocks sleapc_slp_blocks;
sleapc_status sleapc__pred_slp_blocks_open(const char *path, int64_t block_frames,
                                           sleapc_predictions *head, int64_t *n_user_frames,
                                           bool *in_order, sleapc_slp_blocks **out,
                                           sleapc_results_source *src);
void sleapc__pred_slp_blocks_close(sleapc_slp_blocks *b);

/* Room for the header arrays and frames/insts of the body (caps set); the
 * readers fill names and rows. */
sleapc_status sleapc__pred_read_alloc(sleapc_predictions *pr, int nodes, int edges, int syms,
                                      int tracks, int videos, int64_t frames, int64_t insts);
sleapc_status sleapc__pred_read_nomem(void);

#endif
