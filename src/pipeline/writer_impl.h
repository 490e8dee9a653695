/* The writer: predictions gathered batch by batch, written in one of the
 * formats of io/ when closed. */
#ifndef SLEAPC_PIPELINE_WRITER_IMPL_H
#define SLEAPC_PIPELINE_WRITER_IMPL_H

#include "sleapc/tracking.h"
#include "sleapc/writer.h"

/* The bodies of the public writer functions (include/sleapc/writer.h
 * documents them); pointers are never NULL here, the public functions check. */
sleapc_status sleapc__writer_open(const char *path, const sleapc_predictor *p,
                                  const sleapc_video_info *videos, int n_videos,
                                  sleapc_writer **out);
sleapc_status sleapc__writer_add(sleapc_writer *w, const sleapc_predictor *p, int video,
                                 const int64_t *frame_indices);
sleapc_status sleapc__writer_set_tracking(sleapc_writer *w, const sleapc_tracking_opts *t,
                                          const sleapc_filter_opts *f);
/* n_instances: what the file holds (may be NULL). */
sleapc_status sleapc__writer_close(sleapc_writer *w, int64_t *n_instances);
void sleapc__writer_discard(sleapc_writer *w);
sleapc_status sleapc__writer_set_drop_empty(sleapc_writer *w, bool drop);

#endif
