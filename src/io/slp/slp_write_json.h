/* The JSON texts a .slp file stores for predictions (metadata, videos,
 * tracks), spelled as sleap-io 0.9.5 writes them. Also used by the analysis
 * writer. Each returns a new string (sleapc__free) or a status. */
#ifndef SLEAPC_IO_SLP_WRITE_JSON_H
#define SLEAPC_IO_SLP_WRITE_JSON_H

#include <stdbool.h>

#include "core/results.h"

/* /metadata "json": version, skeletons (node-link form), nodes, empty
 * videos/tracks/suggestions, negative_anchors, provenance (pr->provenance,
 * which must be a JSON object). sleap-io serialize_skeletons/write_metadata. */
sleapc_status sleapc__slp_metadata_json(const sleapc_predictions *pr, char **out);

/* One /videos_json row (sleap-io video_to_dict): a media file (MediaVideo),
 * or with v->dataset the images embedded in the package v->filename
 * (HDF5Video, and its "source_video" when recorded). With backend_only, just the "backend" object; spaced uses
 * json.dumps' default ", " and ": " separators instead of compact ones. */
sleapc_status sleapc__slp_video_json(const sleapc_pred_video *v, bool backend_only, bool spaced,
                                     char **out);

/* One /tracks_json row: [0,"name"] (sleap-io writes 0 as spawned_on). */
sleapc_status sleapc__slp_track_json(const char *name, char **out);

#endif
