/* Labels as the evaluation reads them (sleap-io's view of a labels file):
 * videos, the first skeleton's nodes, frames in file order, and each frame's
 * instances in file order, user and predicted, with float64 points (NaN for
 * points that are not visible), and boxes (.slp /bboxes, sleapc's predicted
 * boxes). Read from any .slp / .pkg.slp, sleapc's
 * predictions .json, or a SLEAP analysis .h5 (predictions). */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_LABELS_H
#define SLEAPC_PIPELINE_EVAL_EVAL_LABELS_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_ev_video {
    char *filename;      /* as sleap-io names it: the package for embedded images */
    char *dataset;       /* images in an HDF5 file: their dataset, else NULL */
    char *root_filename; /* the original video of embedded images, else NULL */
    char *found;         /* the file as sleap-io finds it (reported in video_paths), or NULL */
    int64_t n_frames, height, width; /* -1 when unknown */
} sleapc_ev_video;

typedef struct sleapc_ev_inst {
    bool predicted;
    double score;  /* predicted instances; NaN for user instances */
    int track;     /* -1 = none */
    int n_nodes;   /* of its own skeleton */
    int64_t first; /* its points: xy[2*first ...] */
    int64_t linked; /* user instances: 1 + the instance it corrects (from_predicted); 0 none */
} sleapc_ev_inst;

/* A box of the file (sleap-io's UserBoundingBox / PredictedBoundingBox). */
typedef struct sleapc_ev_box {
    double x1, y1, x2, y2, angle; /* angle in radians about the center */
    bool predicted;
    double score;  /* predicted boxes; 1 for user boxes */
    int category;  /* index into box_categories; -1 = none ("object") */
    int64_t frame; /* index into frames */
} sleapc_ev_box;

typedef struct sleapc_ev_frame {
    int video;
    int64_t frame_idx;
    int64_t first, n; /* instances[first .. first+n) */
} sleapc_ev_frame;

typedef struct sleapc_ev_labels {
    char *path;
    int n_videos;
    sleapc_ev_video *videos;
    int n_skeletons;
    int n_nodes; /* the first skeleton's */
    char **node_names;
    int n_edges;
    int (*edges)[2];
    int n_tracks;
    char **track_names;
    int64_t n_frames;
    sleapc_ev_frame *frames;
    int64_t n_insts;
    sleapc_ev_inst *insts;
    int64_t n_points;
    double *xy; /* [2 * n_points] */
    int64_t n_boxes;
    sleapc_ev_box *boxes; /* file order; frames made for boxes of no frame, as sleap-io does */
    int n_box_categories;
    char **box_categories; /* names as first seen; never "" */
} sleapc_ev_labels;

/* Read path (.slp, .pkg.slp, sleapc .json or analysis .h5, by extension). *out is new
 * (sleapc__ev_labels_free). SLEAPC_ERR_IO / SLEAPC_ERR_FORMAT naming the
 * file; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__ev_labels_load(const char *path, sleapc_ev_labels **out);

void sleapc__ev_labels_free(sleapc_ev_labels *l);

/* Point k of instance i: xy + 2 * (first + k). */
static inline const double *sleapc__ev_points(const sleapc_ev_labels *l, int64_t inst)
{
    return l->xy + 2 * l->insts[inst].first;
}

#endif
