/* The predictions readers of the formats table (predictions_format.c), one
 * file each. Each fills *pr (zeroed by the caller) from path and may leave
 * it half-filled on failure (the caller frees it); n_user_frames, when not
 * NULL and zeroed, counts frames that also hold user (labelled) instances. */
#ifndef SLEAPC_IO_PREDICTIONS_READ_IMPL_H
#define SLEAPC_IO_PREDICTIONS_READ_IMPL_H

#include "core/results.h"
#include "io/slp/slp_read.h"
#include "io/slp/slp_read_bbox.h"

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
 * in order (boxes of no frame of r left out); local_of_row[i] is /instances row i's index among its
 * frame's instances in pr, or -1 (a box's link to it is kept). */
sleapc_status sleapc__pred_slp_boxes(const sleapc_slp *r, const int64_t *local_of_row,
                                     sleapc_predictions *pr);

/* The block reader's boxes (predictions_read_slp_block_boxes.c): the
 * whole /bboxes group, its predicted boxes sorted by (video, frame index,
 * row) in order[0..n), claim[i] the /frames row box i belongs to (the
 * last of its video and frame index; -1 none), category[i] its index
 * in the header's categories. */
typedef struct sleapc_slp_block_boxes {
    sleapc_slp_bbox_rows rows;
    int64_t n;
    int64_t *order, *claim;
    int *category;
} sleapc_slp_block_boxes;
sleapc_status sleapc__slp_block_boxes_open(sleapc_h5 *f, const char *path,
                                           sleapc_slp_block_boxes *out);
/* The counting pass: /frames row frame_row claims the boxes of its key. */
void sleapc__slp_block_boxes_claim(sleapc_slp_block_boxes *x, int64_t frame_row, int64_t video,
                                   int64_t frame_idx);
/* After the pass: head's categories and the count of claimed boxes. */
sleapc_status sleapc__slp_block_boxes_header(sleapc_slp_block_boxes *x, sleapc_predictions *head,
                                             int64_t *n_boxes);
/* The boxes of /frames row frame_row into pr after its last, fr's
 * box_first / n_boxes set; local_of[row - base] for the frame's /instances
 * rows [inst_lo, inst_hi): the row's index among fr's instances, or -1. */
sleapc_status sleapc__slp_block_boxes_add(const sleapc_slp_block_boxes *x, int64_t frame_row,
                                          int64_t video, int64_t frame_idx, int64_t inst_lo,
                                          int64_t inst_hi, const int64_t *local_of, int64_t base,
                                          sleapc_predictions *pr, sleapc_pred_frame *fr);
void sleapc__slp_block_boxes_free(sleapc_slp_block_boxes *x);

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
