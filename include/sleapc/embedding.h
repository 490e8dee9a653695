/* Re-ID appearance vectors (sleap-nn 0.3.5's `embedding` models) for the
 * detections of a labels file, as `sleap-nn predict --data_path X.slp -m
 * EMBEDDING_MODEL --save_embeddings slp` computes and saves them, and, with
 * --tracking, the embedded detections tracked in the same run. */
#ifndef SLEAPC_EMBEDDING_H
#define SLEAPC_EMBEDDING_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/model.h"
#include "sleapc/predictor.h"
#include "sleapc/sleapc.h"
#include "sleapc/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Embed every predicted instance of data_path (a .slp; its videos found as
 * predict finds them) with model (an embedding model: crops around each
 * instance's mean point, cut and standardized as sleap-nn does) and write
 * the predictions with their vectors to out_path (a .slp other than
 * data_path; its /embeddings group, SLP format 2.5), atomically. opts (NULL:
 * the defaults) gives the backend, threads, compat and batch_size, the
 * crops a forward (sleap-nn's default on this route: 64). User instances
 * are left out; an instance with no point gets no vector. *n_embedded (may
 * be NULL): the vectors written. */
SLEAPC_API sleapc_status sleapc_embed_detections(const sleapc_model *model, const char *data_path,
                                                 const char *out_path,
                                                 const sleapc_predictor_opts *opts,
                                                 int64_t *n_embedded);

/* sleapc_embed_detections, then the embedded detections tracked with
 * tracking (its tracking flag is ignored: this always tracks; checked as
 * sleapc_tracking_opts_check checks it) before out_path is written, as
 * `sleap-nn predict --data_path X.slp -m EMBEDDING_MODEL --tracking` runs:
 * every detection embedded, then tracked (the appearance trackers read the
 * vectors). keep_vectors: the vectors stay in out_path (--save_embeddings
 * slp); false writes the tracks alone. */
SLEAPC_API sleapc_status sleapc_embed_and_track(const sleapc_model *model, const char *data_path,
                                                const char *out_path,
                                                const sleapc_predictor_opts *opts,
                                                const sleapc_tracking_opts *tracking,
                                                bool keep_vectors, int64_t *n_embedded);

#ifdef __cplusplus
}
#endif

#endif
