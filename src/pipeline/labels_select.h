/* Frames of a labels file chosen by annotation status. */
#ifndef SLEAPC_PIPELINE_LABELS_SELECT_H
#define SLEAPC_PIPELINE_LABELS_SELECT_H

#include "sleapc/input.h"

/* The body of sleapc_labels_select_frames (include/sleapc/input.h documents
 * it); the pointers are not NULL. */
sleapc_status sleapc__labels_select_frames(const char *path, int video_index,
                                           sleapc_frame_filter filter, int64_t **frames,
                                           int64_t *n_frames);

/* The body of sleapc_labels_frames_at_positions; the pointers are not NULL
 * (positions when n_positions is 0 excepted). */
sleapc_status sleapc__labels_frames_at_positions(const char *path, int video_index,
                                                 const int64_t *positions, int64_t n_positions,
                                                 int64_t **frames, int64_t *n_frames,
                                                 int64_t *n_beyond);

#endif
