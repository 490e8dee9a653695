/* Reading SLEAP .slp / .pkg.slp label files (formats D) into a small
 * read-only structure: videos, skeletons, tracks, labeled frames with their
 * user and predicted instances, suggestions, and the embedded images of
 * package files. Applies the version rules of D.7 (pre-1.1 coordinate
 * shift, pre-1.2 instances without tracking_score, sparse video ids). */
#ifndef SLEAPC_IO_SLP_READ_H
#define SLEAPC_IO_SLP_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/results.h"
#include "sleapc/sleapc.h"

typedef struct sleapc_slp_video {
    char *filename;     /* backend.filename as stored ("." = this file), else the
                         * top-level "filename"; never NULL */
    char *backend_type; /* "MediaVideo", "HDF5Video", "ImageVideo", or "" */
    char *dataset;      /* backend.dataset ("video0/video"), NULL when absent/empty */
    int n_filenames;    /* ImageVideo: its image files */
    char **filenames;
    int64_t n_frames, height, width, channels; /* from backend shape etc.; -1 unknown */
    int grayscale;                             /* 1, 0, or -1 when not stored */
    double fps;                                /* backend fps (sleap-io 0.9), 0 unknown */
    /* Embedded images (package files): */
    bool embedded;          /* images of this video are stored in this file */
    char *embed_dataset;    /* e.g. "video0/video" (owned), NULL unless embedded */
    char image_format[8];   /* "png", "jpg", "hdf5" (raw pixels), "" unknown */
    int64_t n_embedded;     /* number of stored images */
    int64_t *frame_numbers; /* [n_embedded]: source frame index of each image */
    char *source_json;      /* embedded: the original video's JSON as the package
                             * records it (video<N>/source_video), or NULL */
} sleapc_slp_video;

typedef struct sleapc_slp_skeleton {
    char *name;
    int n_nodes;
    char **node_names; /* in skeleton order (the order of point rows) */
    int n_edges;
    int (*edges)[2]; /* body edges, in SLEAP's Skeleton.edges order */
    int n_symmetries;
    int (*symmetries)[2]; /* each pair once */
} sleapc_slp_skeleton;

typedef struct sleapc_slp_point {
    double x, y;  /* pixels, (0,0) = centre of the top-left pixel */
    double score; /* predicted points; NaN for user points */
    bool visible, complete;
} sleapc_slp_point;

typedef struct sleapc_slp_instance {
    bool predicted; /* false: user instance */
    int skeleton;
    int track;              /* index into track_names, -1 = none */
    int64_t from_predicted; /* user instances: index into instances of the prediction
                             * it was corrected from, -1 = none */
    float score;            /* predicted: instance score (users: NaN or 0 as stored) */
    float tracking_score;   /* 0 when the file has none (format < 1.2) */
    int64_t first_point;    /* index into points */
    int n_points;           /* = the skeleton's node count */
} sleapc_slp_instance;

typedef struct sleapc_slp_frame {
    int video; /* index into videos */
    int64_t frame_idx;
    int64_t first_instance; /* index into instances */
    int64_t n_instances;
} sleapc_slp_frame;

typedef struct sleapc_slp_suggestion {
    int video;
    int64_t frame_idx;
} sleapc_slp_suggestion;

typedef struct sleapc_slp {
    char *path;
    double format_id;
    char *provenance; /* metadata "provenance" as compact JSON ("{}" when absent) */
    int n_videos;
    sleapc_slp_video *videos;
    int n_skeletons;
    sleapc_slp_skeleton *skeletons;
    int n_tracks;
    char **track_names;
    int64_t n_frames;
    sleapc_slp_frame *frames;
    int64_t n_instances;
    sleapc_slp_instance *instances;
    int64_t n_points; /* user points first, then predicted points */
    sleapc_slp_point *points;
    int n_suggestions;
    sleapc_slp_suggestion *suggestions;
    /* Private: the open file (for embedded images) and the last image. */
    void *h5;
    uint8_t *image;
    size_t image_size;
} sleapc_slp;

/* Read the labels of path. The file stays open (for embedded images) until
 * close. SLEAPC_ERR_IO / SLEAPC_ERR_FORMAT (not HDF5, missing or
 * inconsistent tables, bad JSON, out-of-range ids) / SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__slp_open(const char *path, sleapc_slp **out);

/* The same without the four tables (n_frames, n_instances and n_points
 * stay 0): the header of a file whose rows are read a slice at a time
 * from its open HDF5 file (r->h5, a sleapc_h5). */
sleapc_status sleapc__slp_open_header(const char *path, sleapc_slp **out);

/* The video of a /frames row's video id: the id itself, or with sparse
 * (some id is not a row of videos_json: old package files) the video whose
 * dataset is "video<id>/...". SLEAPC_ERR_FORMAT naming r's path when none. */
sleapc_status sleapc__slp_map_video(const sleapc_slp *r, uint64_t id, bool sparse, int *out);

/* Free everything. Accepts NULL. */
void sleapc__slp_close(sleapc_slp *r);

/* The encoded bytes of source frame frame_idx of an embedded video: a PNG
 * or JPEG file's bytes (fixed-length storage may add trailing zeros, which
 * decoders ignore), or for format "hdf5" the raw height*width*channels
 * pixels. format (optional, at least 8 bytes) receives image_format. *bytes
 * is owned by r and valid until the next call or close.
 * SLEAPC_ERR_INVALID_ARG: bad video index, the video has no embedded images,
 * or that frame is not stored. */
sleapc_status sleapc__slp_embedded_frame(sleapc_slp *r, int video, int64_t frame_idx,
                                         const uint8_t **bytes, size_t *n, char *format);

/* Find the file of a video the way sleap-io and SLEAP do: the stored path
 * with '\' read as '/', else (relative paths) that path from the folder of
 * the .slp, else the same base name in the folder of the .slp, else in the
 * current folder. An embedded video (filename ".") is the .slp itself.
 * *out is a new string (sleapc__free). SLEAPC_ERR_IO naming the stored path
 * when no candidate exists. */
sleapc_status sleapc__slp_video_path(const sleapc_slp *r, int video, char **out);

/* Are the images of video `video` embedded in another package file? (An
 * HDF5Video that names a .slp and a dataset, as sleap-io writes for labels
 * and predictions made from a package it read.) */
bool sleapc__slp_video_in_package(const sleapc_slp *r, int video);

/* Open the package file holding the images of such a video (found as
 * sleapc__slp_video_path finds it) and the video there whose images are the
 * named dataset. *pkg is closed by the caller. SLEAPC_ERR_INVALID_ARG when
 * the video is not in a package; SLEAPC_ERR_FORMAT when the package holds
 * no such images; errors of sleapc__slp_open. */
sleapc_status sleapc__slp_open_package_video(const sleapc_slp *r, int video, sleapc_slp **pkg,
                                             int *pkg_video);

/* Video `video` as predictions made from these labels record it: its file
 * name and shape, and for images in a package the package and their
 * dataset (the images of this file: this file's path, never "."). Fills
 * *out with new strings (the caller frees them); SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__slp_pred_video(const sleapc_slp *r, int video, sleapc_pred_video *out);

#endif
