/* Internals shared by identity.c (class maps) and identity_vectors.c (class
 * vectors): the workspace layout and the scipy-exact row assignment. */
#ifndef SLEAPC_LAYERS_OPS_IDENTITY_IMPL_H
#define SLEAPC_LAYERS_OPS_IDENTITY_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layers/ops/hungarian.h"
#include "layers/ops/identity.h"

/* The arrays of one call, laid out in one block: each starts on an 8-byte
 * boundary, so float64 and int64 arrays stay aligned. */
typedef struct sleapc_identity_layout {
    size_t bytes;
    bool ok; /* false once a size overflowed */
} sleapc_identity_layout;

void sleapc__identity_fill_nan(float *x, int64_t n);
/* Appends count * elem bytes; returns their offset. */
size_t sleapc__identity_layout_add(sleapc_identity_layout *l, size_t count, size_t elem);
/* ws->block with room for bytes (> 0); old contents are dropped. */
unsigned char *sleapc__identity_ws_reserve(sleapc_identity_ws *ws, size_t bytes);
/* Scipy's assignment of rows to classes on cost = -probs; see identity.c. */
sleapc_status sleapc__identity_assign_rows(const float *probs, int64_t n_rows, int64_t n_classes,
                                           sleapc_hungarian_ws *hws, double *cost, int64_t *row,
                                           int64_t *col, int64_t *n_pairs);

#endif
