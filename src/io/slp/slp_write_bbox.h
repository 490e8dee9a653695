/* A box detector's boxes in a .slp, as sleap-io 0.9.5 writes the
 * PredictedBoundingBoxes sleap-nn 0.3.5 gives its frames: the columnar
 * /bboxes group (SLP format 2.0) and, for boxes with a category, the
 * /categories catalog and links (format 2.7). */
#ifndef SLEAPC_IO_SLP_WRITE_BBOX_H
#define SLEAPC_IO_SLP_WRITE_BBOX_H

#include <stdbool.h>

#include "core/results.h"
#include "io/h5/h5_file.h"

/* format_id sleap-io writes once a file holds boxes, and box categories. */
#define SLEAPC_SLP_FORMAT_ID_BBOX 2.0
#define SLEAPC_SLP_FORMAT_ID_CATEGORY 2.7

/* A run's boxes, read from its source once, in write order. */
typedef struct sleapc_slp_boxes {
    int64_t n;
    double *x1, *y1, *x2, *y2, *angle;
    int32_t *video, *track, *instance;
    int64_t *frame_idx;
    uint8_t *is_predicted;
    float *score, *tracking_score;
    const char **category; /* head's names, or "" */
    int64_t n_categorized;
} sleapc_slp_boxes;

/* Reads src from its start (empty when src->n_boxes is 0). An instance
 * link becomes the instance's row in /instances. */
sleapc_status sleapc__slp_boxes_collect(const sleapc_predictions *head, sleapc_results_source *src,
                                        sleapc_slp_boxes *out);
void sleapc__slp_boxes_free(sleapc_slp_boxes *b);

/* /categories: sleap-io makes a Category of each box's class name, so the
 * catalog has one entry per categorized box, linked to it (owner_type 4 =
 * bbox, owner_id = its row in /bboxes, no score). Nothing without one. */
sleapc_status sleapc__slp_write_box_categories(sleapc_h5 *f, const sleapc_slp_boxes *b);

/* /bboxes (nothing without boxes). */
sleapc_status sleapc__slp_write_bboxes(sleapc_h5 *f, const sleapc_slp_boxes *b);

#endif
