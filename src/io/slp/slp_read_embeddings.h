/* The /embeddings group of a .slp (SLP format 2.5, sleap-io 0.9.5
 * read_embeddings): the re-ID vectors of its instances, looked up by
 * /instances row. Rows of other owners (masks, boxes, ...) are skipped, as
 * sleapc keeps no such objects. */
#ifndef SLEAPC_IO_SLP_READ_EMBEDDINGS_H
#define SLEAPC_IO_SLP_READ_EMBEDDINGS_H

#include "io/h5/h5_file.h"

typedef struct sleapc_slp_embeddings {
    int dim;         /* 0: the file has none */
    int64_t n_rows;  /* /instances rows row_of covers */
    int64_t *row_of; /* per /instances row, its row of vectors, or -1 */
    float *vectors;  /* (rows of the group, dim) */
} sleapc_slp_embeddings;

/* Reads f's group (none: dim 0). n_inst_rows is the length of /instances.
 * A malformed group (not 2-D vectors, columns of another length, an
 * owner_id outside /instances) is SLEAPC_ERR_FORMAT naming path. A later
 * row for the same instance wins, as in sleap-io's dict. */
sleapc_status sleapc__slp_embeddings_read(sleapc_h5 *f, const char *path, int64_t n_inst_rows,
                                          sleapc_slp_embeddings *out);

/* The vector of /instances row inst_row, or NULL. */
const float *sleapc__slp_embedding(const sleapc_slp_embeddings *e, int64_t inst_row);

void sleapc__slp_embeddings_free(sleapc_slp_embeddings *e);

#endif
