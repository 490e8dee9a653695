/* Presentation-order index of a video stream, built from one demux pass at
 * open: which timestamp each frame carries and where the keyframes are, so
 * frame k can be found exactly after a seek even with B-frames. */
#ifndef SLEAPC_IO_VIDEO_INDEX_H
#define SLEAPC_IO_VIDEO_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_video_key {
    int64_t pts;     /* presentation timestamp of the keyframe */
    int64_t seek_ts; /* what to seek to: its decode timestamp (<= pts) */
    int64_t frame;   /* its frame number (position of pts), set by finish */
} sleapc_video_key;

typedef struct sleapc_video_index {
    int64_t *pts;          /* after finish: sorted, pts[k] belongs to frame k */
    int64_t n_frames;
    int64_t cap;
    sleapc_video_key *keys; /* after finish: sorted by pts */
    int64_t n_keys;
    int64_t key_cap;
    bool missing_pts;       /* a packet had no timestamp at all */
    bool by_pts;            /* after finish: timestamps identify frames */
} sleapc_video_index;

/* Record one packet (in demux order). has_pts false marks the index as
 * unusable for timestamp lookups (frames then count in decode order).
 * Returns SLEAPC_ERR_NOMEM on allocation failure (message set). */
sleapc_status sleapc__video_index_add(sleapc_video_index *ix, bool has_pts, int64_t pts,
                                      int64_t seek_ts, bool key);

/* Sort into presentation order and decide by_pts: every packet had a
 * timestamp, all are distinct, and there is at least one keyframe. */
void sleapc__video_index_finish(sleapc_video_index *ix);

/* Frame number of a decoded frame's timestamp, or -1 if no frame has it. */
int64_t sleapc__video_index_frame_of(const sleapc_video_index *ix, int64_t pts);

/* The last keyframe at or before frame (in presentation order), as an index
 * into keys, or -1 when frame precedes every keyframe. */
int64_t sleapc__video_index_key_for(const sleapc_video_index *ix, int64_t frame);

/* Forget the frames before frame `first` (0 < first < n_frames), and the
 * keyframes among them: frame `first` becomes frame 0. */
void sleapc__video_index_drop_before(sleapc_video_index *ix, int64_t first);

void sleapc__video_index_free(sleapc_video_index *ix);

#endif
