/* The columnar /bboxes group of a .slp (SLP format 2.0, sleap-io 0.9.5
 * _read_bboxes_columnar) read back, user and predicted boxes alike, with
 * each box's class name as sleap-io resolves it: the /categories catalog
 * entry linked to it (owner_type 4 = bbox) when there is one, else the
 * `category` column. */
#ifndef SLEAPC_IO_SLP_READ_BBOX_H
#define SLEAPC_IO_SLP_READ_BBOX_H

#include <stdint.h>

#include "io/h5/h5_file.h"
#include "io/slp/slp_read.h"

typedef struct sleapc_slp_bbox_rows {
    int64_t n;
    double *x1, *y1, *x2, *y2, *angle;
    int32_t *video, *track, *instance; /* instance: a row of /instances, -1 none */
    int64_t *frame_idx;
    uint8_t *is_predicted;
    float *score, *tracking_score;
    char **category; /* "" for none */
} sleapc_slp_bbox_rows;

/* Reads f's /bboxes (none, or sleap-io's pre-2.0 table, which sleapc does
 * not read: n = 0). Columns missing or of another length, or a category
 * link outside the catalog or the boxes, are SLEAPC_ERR_FORMAT naming path. */
sleapc_status sleapc__slp_bboxes_read(sleapc_h5 *f, const char *path, sleapc_slp_bbox_rows *out);

void sleapc__slp_bbox_rows_free(sleapc_slp_bbox_rows *b);

/* frame_of[i] (b->n entries): the /frames row of box i, the last with its
 * video and frame index (sleap-io's look-up keeps the last), or -1 when r
 * has no such frame (sleap-io then makes one for a box of a known video
 * and a frame index >= 0). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__slp_bbox_frames(const sleapc_slp *r, const sleapc_slp_bbox_rows *b,
                                      int64_t *frame_of);

#endif
