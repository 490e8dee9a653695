/* The results type: per frame its instances, with the skeleton, tracks and
 * videos they refer to. The predictor keeps one batch's results in it, the
 * writer gathers a file's results in it (appending batches), and the
 * predictions formats of io/predictions/ read and write it. Types only: the
 * formats are declared in io. */
#ifndef SLEAPC_CORE_RESULTS_H
#define SLEAPC_CORE_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_pred_instance {
    float score;
    int track;             /* -1 = none */
    float tracking_score;  /* NaN = none */
    bool has_centroid;
    float centroid[2];
    float centroid_score;
    int class_index;       /* multi-class: the class, -1 unmatched; else -1 */
} sleapc_pred_instance;

typedef struct sleapc_pred_frame {
    int video;
    int64_t frame_idx;
    int64_t first;         /* index of its first instance */
    int64_t n;             /* instance count */
    int64_t box_first;     /* index of its first box */
    int64_t n_boxes;       /* box count */
} sleapc_pred_frame;

/* A box detector's box (sleap-io's PredictedBoundingBox), in frame pixels.
 * The .slp stores the corners as float64 and the scores as float32. */
typedef struct sleapc_pred_box {
    double x1, y1, x2, y2;
    float score;
    int category;          /* index into bbox_categories; -1 = none (sleap-nn
                            * leaves a single-class "object" detector's boxes
                            * without one) */
    int track;             /* -1 = none */
    float tracking_score;  /* NaN = none */
    int instance;          /* the instance of its frame it belongs to (index
                            * among the frame's instances), -1 = none */
} sleapc_pred_box;

typedef struct sleapc_pred_video {
    char *filename;
    int64_t n_frames, height, width, channels;
    char *dataset;     /* images embedded in the package `filename`, else NULL */
    char *source_json; /* that package's JSON of the original video, or NULL */
    double fps;        /* frames per second, 0 when unknown */
} sleapc_pred_video;

typedef struct sleapc_predictions {
    char *skeleton_name;
    int n_nodes;
    char **node_names;
    int n_edges;
    int (*edges)[2];
    int n_symmetries;
    int (*symmetries)[2];
    int n_tracks;
    char **track_names;
    bool multiclass;
    bool identities;       /* multi-class with class_output: identity: the .slp
                            * also gets each class as a sleap-io Identity */
    int n_videos;
    sleapc_pred_video *videos;
    int64_t n_frames, frames_cap;
    sleapc_pred_frame *frames;
    int64_t n_insts, insts_cap;
    sleapc_pred_instance *insts;
    float *points;         /* (n_insts, n_nodes, 2) */
    float *point_scores;   /* (n_insts, n_nodes) */
    char *provenance;      /* owned JSON object text recorded as the files' provenance
                            * (sleapc version, models, options); NULL = {} */
    int n_bbox_categories;
    char **bbox_categories; /* a box detector's class names, in its order */
    int64_t n_boxes, boxes_cap;
    sleapc_pred_box *boxes;
    int emb_dim;           /* re-ID embedding length; 0 = none */
    float *embeddings;     /* (n_insts, emb_dim), grown with insts; a row of
                            * NaN = that instance has no vector */
} sleapc_predictions;

void sleapc__predictions_free(sleapc_predictions *pr);

/* Room for frames frames and insts instances (arrays grow geometrically and
 * are kept, so a steady run stops allocating); pr->n_nodes sizes the points. */
sleapc_status sleapc__results_reserve(sleapc_predictions *pr, int64_t frames, int64_t insts);

/* Give pr embedding rows of dim floats (dim 0: none). Every row (up to
 * insts_cap) becomes NaN, i.e. no vector, unless dim is already pr's. */
sleapc_status sleapc__results_set_emb_dim(sleapc_predictions *pr, int dim);

/* results.c's helpers: grow the rows with insts_cap (new rows NaN), and
 * copy n rows of src from instance from to dst's instance at (NaN rows
 * where src has none; dst takes src's emb_dim when it has none; dst has
 * room). */
sleapc_status sleapc__results_grow_emb(sleapc_predictions *pr, int64_t old_cap, int64_t cap);
sleapc_status sleapc__results_copy_emb(sleapc_predictions *dst, int64_t at,
                                       const sleapc_predictions *src, int64_t from, int64_t n);

/* Room for boxes boxes (kept and grown as the instances are). */
sleapc_status sleapc__results_reserve_boxes(sleapc_predictions *pr, int64_t boxes);

/* The frame's boxes: n boxes copied in, after the results' last box (the
 * frame's box_first and n_boxes are set). */
sleapc_status sleapc__results_add_boxes(sleapc_predictions *pr, sleapc_pred_frame *frame,
                                        const sleapc_pred_box *boxes, int64_t n);

/* Set the category names (copied; replaces any). */
sleapc_status sleapc__results_set_bbox_categories(sleapc_predictions *pr,
                                                  const char *const *names, int n);

/* A header copy of pr: the same header (pointers borrowed), no frames,
 * instances or boxes of its own (emb_dim kept, no embedding rows). */
sleapc_predictions sleapc__results_header(const sleapc_predictions *pr);

/* Append src's frames, instances and boxes to dst: frame k of src becomes frame
 * frame_indices[k] of video video. class_index follows dst->multiclass (the
 * track for multi-class models, else -1). Both have the same n_nodes.
 * Embeddings: dst takes src's emb_dim when it has none; src's instances
 * without vectors get NaN rows; two different nonzero dims are an error. */
sleapc_status sleapc__results_append(sleapc_predictions *dst, const sleapc_predictions *src,
                                     int video, const int64_t *frame_indices);

/* A file's frames in file order, a bounded block at a time: the gathered
 * results (one block) or a spill on disk (core/results_spill.h). The format
 * writers read their rows through it, so they need no more memory than a
 * block whatever the length of the run. */
typedef struct sleapc_results_source {
    void *ctx;
    int64_t n_frames, n_insts; /* totals: frames, and instances of those frames */
    /* Back to the first frame. */
    sleapc_status (*rewind)(void *ctx);
    /* The next block: predictions with the file's header (skeleton, tracks,
     * videos) and the block's frames, whose first indices point into the
     * block's own instances. Valid until the next call; n_frames == 0 at
     * the end. */
    sleapc_status (*next)(void *ctx, const sleapc_predictions **blk);
    int64_t n_boxes;           /* total boxes of the frames */
} sleapc_results_source;

/* A one-block source over pr (which it borrows); ctx is the caller's. */
typedef struct sleapc_results_memory {
    const sleapc_predictions *pr;
    bool done;
} sleapc_results_memory;
void sleapc__results_source_memory(const sleapc_predictions *pr, sleapc_results_memory *ctx,
                                   sleapc_results_source *out);

/* Append every frame of src to dst (dst's header kept, instances and
 * boxes packed in frame order): a whole run in memory, for what needs it at once (the
 * analysis .h5's dense matrices, tracking frames given out of order). */
sleapc_status sleapc__results_gather(sleapc_results_source *src, sleapc_predictions *dst);

#endif
