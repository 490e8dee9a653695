/* Per-instance re-ID embedding vectors in a .slp, as sleap-io 0.9.5
 * write_embeddings stores the identity_embedding sleap-nn 0.3.5's
 * --save_embeddings slp gives its instances (SLP format 2.5). */
#ifndef SLEAPC_IO_SLP_WRITE_EMBEDDINGS_H
#define SLEAPC_IO_SLP_WRITE_EMBEDDINGS_H

#include <stdbool.h>

#include "core/results.h"
#include "io/h5/h5_file.h"

/* format_id sleap-io writes once a file holds embeddings. */
#define SLEAPC_SLP_FORMAT_ID_EMBEDDING 2.5

/* sleap-io OWNER_INSTANCE: a row's owner_id is a row of /instances. */
#define SLEAPC_SLP_EMB_OWNER_INSTANCE 0

/* /embeddings: vectors (N, D) float32 (chunks of whole rows, about 1 MiB,
 * gzip, maxshape (None, D)), owner_type (N,) uint8 = 0 and owner_id (N,)
 * int64 = the instance's row in /instances (gzip, maxshape (None,)), one
 * row per instance with a vector (a row not all NaN), in instance order.
 * Nothing without one; *written says whether the group was. Reads src
 * from its start; blocks whose emb_dim differ are an error. */
sleapc_status sleapc__slp_write_embeddings(sleapc_h5 *f, sleapc_results_source *src, bool *written);

#endif
