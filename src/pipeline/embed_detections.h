/* Re-ID vectors for the detections of a labels file (sleap-nn 0.3.5's
 * `predict --data_path X.slp -m EMBEDDING --save_embeddings slp`, the lone
 * route of cli.py _run_embeddings / inference/embedding.py
 * predict_embeddings_to_slp): every predicted instance with a point gets
 * its appearance vector, written into a copy of the file's predictions. */
#ifndef SLEAPC_PIPELINE_EMBED_DETECTIONS_H
#define SLEAPC_PIPELINE_EMBED_DETECTIONS_H

#include "model/model_impl.h"
#include "sleapc/predictor.h"
#include "sleapc/tracking.h"

/* m: an embedding model. data_path: a .slp of detections (its videos are
 * found as predict finds them). out_path: a .slp, written atomically; it
 * must not be data_path. o: backend, threads, batch_size (crops a forward),
 * compat (the frame decoding). *n_embedded (may be NULL): the vectors made. */
sleapc_status sleapc__embed_detections(const sleapc_model *m, const char *data_path,
                                       const char *out_path, const sleapc_predictor_opts *o,
                                       int64_t *n_embedded);

/* The same, then the embedded detections tracked with t (NULL: not
 * tracked) before they are written; keep_vectors false writes the tracks
 * without the vectors (sleap-nn's --save_embeddings none). */
sleapc_status sleapc__embed_and_track(const sleapc_model *m, const char *data_path,
                                      const char *out_path, const sleapc_predictor_opts *o,
                                      const sleapc_tracking_opts *t, bool keep_vectors,
                                      int64_t *n_embedded);

#endif
