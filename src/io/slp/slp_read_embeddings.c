/* /embeddings read back (see slp_read_embeddings.h). */
#include "io/slp/slp_read_embeddings.h"

#include <limits.h>
#include <stdbool.h>

#include "core/alloc.h"
#include "core/error.h"

#define OWNER_INSTANCE 0

#define BAD(...) sleapc__fail(SLEAPC_ERR_FORMAT, "read labels: %s: /embeddings: " __VA_ARGS__)

void sleapc__slp_embeddings_free(sleapc_slp_embeddings *e)
{
    if (!e)
        return;
    sleapc__free(e->row_of);
    sleapc__free(e->vectors);
    *e = (sleapc_slp_embeddings){0};
}

const float *sleapc__slp_embedding(const sleapc_slp_embeddings *e, int64_t inst_row)
{
    if (!e->dim || inst_row < 0 || inst_row >= e->n_rows || e->row_of[inst_row] < 0)
        return NULL;
    return e->vectors + e->row_of[inst_row] * e->dim;
}

/* The shape of a dataset of the group, checked against ndim (and n rows
 * when n >= 0). */
static sleapc_status shape_of(sleapc_h5 *f, const char *path, const char *dset, int ndim, int64_t n,
                              sleapc_h5_info *info)
{
    if (!sleapc__h5_is_dataset(f, dset))
        return BAD("no %s", path, dset);
    sleapc_status st = sleapc__h5_dataset_info(f, dset, info);
    if (st)
        return st;
    if (info->ndim != ndim || (n >= 0 && info->shape[0] != n))
        return BAD("%s has the wrong shape", path, dset);
    return SLEAPC_OK;
}

static sleapc_status fill(sleapc_slp_embeddings *e, const char *path, int64_t n,
                          const uint8_t *type, const int64_t *id)
{
    for (int64_t i = 0; i < e->n_rows; i++)
        e->row_of[i] = -1;
    for (int64_t k = 0; k < n; k++) {
        if (type[k] != OWNER_INSTANCE)
            continue;
        if (id[k] < 0 || id[k] >= e->n_rows)
            return BAD("owner_id[%lld] = %lld is not one of the %lld instances", path, (long long)k,
                       (long long)id[k], (long long)e->n_rows);
        e->row_of[id[k]] = k;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__slp_embeddings_read(sleapc_h5 *f, const char *path, int64_t n_inst_rows,
                                          sleapc_slp_embeddings *out)
{
    *out = (sleapc_slp_embeddings){0};
    /* sleap-io reads nothing without the group's vectors. */
    if (!sleapc__h5_is_group(f, "embeddings") || !sleapc__h5_is_dataset(f, "embeddings/vectors"))
        return SLEAPC_OK;
    sleapc_h5_info vi, ti, ii;
    sleapc_status st = shape_of(f, path, "embeddings/vectors", 2, -1, &vi);
    const int64_t n = st ? 0 : vi.shape[0];
    if (!st && (vi.shape[1] < 1 || vi.shape[1] > INT_MAX / 2))
        st = BAD("vectors of length %lld", path, (long long)vi.shape[1]);
    if (!st)
        st = shape_of(f, path, "embeddings/owner_type", 1, n, &ti);
    if (!st)
        st = shape_of(f, path, "embeddings/owner_id", 1, n, &ii);
    if (st || n == 0)
        return st;
    uint8_t *type = NULL;
    int64_t *id = NULL;
    out->dim = (int)vi.shape[1];
    out->n_rows = n_inst_rows;
    st = sleapc__h5_read(f, "embeddings/vectors", SLEAPC_H5_F32, (void **)&out->vectors, NULL);
    if (!st)
        st = sleapc__h5_read(f, "embeddings/owner_type", SLEAPC_H5_U8, (void **)&type, NULL);
    if (!st)
        st = sleapc__h5_read(f, "embeddings/owner_id", SLEAPC_H5_I64, (void **)&id, NULL);
    if (!st && !(out->row_of = sleapc__malloc((size_t)(n_inst_rows + 1) * sizeof(int64_t))))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    if (!st)
        st = fill(out, path, n, type, id);
    sleapc__free(type);
    sleapc__free(id);
    if (st)
        sleapc__slp_embeddings_free(out);
    return st;
}
