/* The predictions formats, one table (predictions_format.c): SLEAP .slp,
 * SLEAP analysis .h5, SLEAP analysis .csv and sleapc's .json. Each names
 * its extensions, reads a file back (all but .csv) and writes one from a
 * block source (core/results.h), so what feeds it (the predictor's spill,
 * a file read back, tracked blocks) needs no more than a block in memory
 * (the analysis .h5 excepted: its matrices are dense). Code outside io asks
 * here for the format of a path; it never tests extensions itself. The
 * writers of each format are io/slp/slp_write.h, io/json/predictions_json.h
 * and io/csv/predictions_csv.h. */
#ifndef SLEAPC_IO_PREDICTIONS_FORMAT_H
#define SLEAPC_IO_PREDICTIONS_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/results.h"

typedef enum sleapc_pred_format_id {
    SLEAPC_PRED_SLP,
    SLEAPC_PRED_ANALYSIS_H5,
    SLEAPC_PRED_CSV,
    SLEAPC_PRED_JSON,
} sleapc_pred_format_id;

typedef struct sleapc_pred_format {
    sleapc_pred_format_id id;
    const char *name;        /* "slp", "analysis_h5", "csv", "json" */
    const char *const *exts; /* its extensions, NULL-terminated; the first is the usual */
    /* Reads path whole into *pr (zeroed by the caller; freed on failure);
     * n_user_frames (may be NULL) counts frames that also hold user
     * instances, which are left out. NULL: the format is written only. */
    sleapc_status (*read)(const char *path, sleapc_predictions *pr, int64_t *n_user_frames);
    /* Writes head's header with src's frames to path atomically: path
     * appears, or is replaced, only when everything succeeded. *left_out:
     * instances the format cannot hold (the analysis .h5's one per track
     * and frame), with a warning naming path when any. */
    sleapc_status (*write)(const sleapc_predictions *head, sleapc_results_source *src,
                           const char *path, int64_t *left_out);
} sleapc_pred_format;

/* The format of path by its extension, or NULL. */
const sleapc_pred_format *sleapc__pred_format_of(const char *path);

/* As sleapc__pred_format_of, but an error naming path and the formats when
 * none (SLEAPC_ERR_INVALID_ARG, "write <path>: unknown output format"). */
sleapc_status sleapc__pred_format_for_output(const char *path, const sleapc_pred_format **out);

/* Whether path names a SLEAP labels file (.slp): an input of labelled
 * frames rather than a video. */
bool sleapc__pred_path_is_slp(const char *path);

/* Predictions from path in the format of its extension into *pr (zeroed
 * here; freed on failure). n_user_frames as the table's read (may be NULL).
 * A .csv is refused (SLEAPC_ERR_UNSUPPORTED), an unknown extension too
 * (SLEAPC_ERR_INVALID_ARG); else the reader's errors, naming path. */
sleapc_status sleapc__predictions_read(const char *path, sleapc_predictions *pr,
                                       int64_t *n_user_frames);

/* A predictions file opened as a block source. A .slp is read a block of
 * frames at a time (its tables are sliced), so what reads it needs no more
 * memory than a block whatever the file's length; the other formats are
 * read whole, the source then being one block (pr): the analysis .h5
 * (frame-major matrices that could be sliced the same way; not done yet)
 * and the .json (the JSON library parses a whole document). pr holds the
 * header, and for those formats the frames. The reader must not move while
 * src is in use (src points into it). */
typedef struct sleapc_slp_blocks sleapc_slp_blocks;
typedef struct sleapc_predictions_reader {
    sleapc_predictions pr; /* the header; the frames too when read whole */
    int64_t n_user_frames; /* frames that also hold user instances (left out) */
    bool in_order;         /* frames in (video, frame index) order (as trackers need) */
    sleapc_results_memory mem;
    sleapc_slp_blocks *blocks; /* a .slp's block reader, else NULL */
    sleapc_results_source src;
} sleapc_predictions_reader;
sleapc_status sleapc__predictions_open(const char *path, sleapc_predictions_reader *r);
/* The same with blocks of block_frames frames (tests cross many blocks in
 * a short file with a small one). */
#define SLEAPC_PRED_BLOCK_FRAMES 4096
sleapc_status sleapc__predictions_open_blocks(const char *path, int64_t block_frames,
                                              sleapc_predictions_reader *r);
void sleapc__predictions_reader_close(sleapc_predictions_reader *r);

/* Write head's header with src's frames to path in the format of its
 * extension, atomically; left_out (may be NULL) as the table's write. */
sleapc_status sleapc__predictions_write(const sleapc_predictions *head, sleapc_results_source *src,
                                        const char *path, int64_t *left_out);

/* The same from predictions held in memory. */
sleapc_status sleapc__predictions_write_path(const sleapc_predictions *pr, const char *path);

/* Instances of the first video a SLEAP analysis .h5 cannot hold: none
 * without tracks (each frame's instances fill the columns in order); with
 * tracks the untracked ones and all but the last of a track in a frame. */
int64_t sleapc__predictions_h5_unheld(const sleapc_predictions *pr);

#endif
