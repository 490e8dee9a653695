/* Private to the .slp reader: JSON decoding and embedded-video lookup. */
#ifndef SLEAPC_IO_SLP_READ_IMPL_H
#define SLEAPC_IO_SLP_READ_IMPL_H

#include "io/h5/h5_file.h"
#include "io/slp/slp_read.h"

/* Decode /metadata "json": skeletons (D.2) and provenance into r. */
sleapc_status sleapc__slp_parse_metadata(sleapc_slp *r, const char *json);

/* Decode one /videos_json row (D.3) into v (zeroed by the caller). */
sleapc_status sleapc__slp_parse_video(sleapc_slp *r, int index, const char *json,
                                      sleapc_slp_video *v);

/* Track name from one /tracks_json row: [spawned_on, "name"]. */
sleapc_status sleapc__slp_parse_track(sleapc_slp *r, int index, const char *json, char **name);

/* One /suggestions_json row: {"video": "0", "frame_idx": 12, ...}. */
sleapc_status sleapc__slp_parse_suggestion(sleapc_slp *r, int index, const char *json,
                                           sleapc_slp_suggestion *s);

/* Fill v's embedded-image fields when its images are stored in f (D.6). */
sleapc_status sleapc__slp_read_embedded_info(sleapc_slp *r, sleapc_h5 *f, sleapc_slp_video *v);

#endif
