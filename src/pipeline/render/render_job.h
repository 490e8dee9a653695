/* Rendering a labels file's instances onto its frames (render_job.c). */
#ifndef SLEAPC_PIPELINE_RENDER_JOB_H
#define SLEAPC_PIPELINE_RENDER_JOB_H

#include "sleapc/render.h"

/* The bodies of sleapc_render_opts_default and sleapc_render
 * (include/sleapc/render.h documents them); arguments are checked there. */
sleapc_render_opts sleapc__render_opts_default(void);
sleapc_status sleapc__render(const char *labels_path, const char *video_path, const char *out_path,
                             const int64_t *frames, int64_t n_frames, const sleapc_render_opts *opts);

#endif
