/* /embeddings as sleap-io 0.9.5 _write_embedding_groups makes it (see
 * slp_write_embeddings.h). */
#include "io/slp/slp_write_embeddings.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

typedef struct rows {
    int dim;
    int64_t n, cap;
    float *vectors;
    uint8_t *owner_type;
    int64_t *owner_id;
} rows;

static void rows_free(rows *r)
{
    sleapc__free(r->vectors);
    sleapc__free(r->owner_type);
    sleapc__free(r->owner_id);
}

static bool has_vector(const float *v, int d)
{
    for (int j = 0; j < d; j++)
        if (!isnan(v[j]))
            return true;
    return false;
}

static sleapc_status push(rows *r, const float *v, int64_t inst_row)
{
    if (r->n == r->cap) {
        const int64_t cap = r->cap ? r->cap * 2 : 256;
        float *vec = sleapc__realloc(r->vectors, (size_t)cap * (size_t)r->dim * sizeof *vec);
        if (vec)
            r->vectors = vec;
        uint8_t *t = vec ? sleapc__realloc(r->owner_type, (size_t)cap) : NULL;
        if (t)
            r->owner_type = t;
        int64_t *id = t ? sleapc__realloc(r->owner_id, (size_t)cap * sizeof *id) : NULL;
        if (!id)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory for embeddings");
        r->owner_id = id;
        r->cap = cap;
    }
    memcpy(r->vectors + r->n * r->dim, v, (size_t)r->dim * sizeof *v);
    r->owner_type[r->n] = SLEAPC_SLP_EMB_OWNER_INSTANCE;
    r->owner_id[r->n] = inst_row;
    r->n++;
    return SLEAPC_OK;
}

/* The rows of src's instances that have vectors; inst_row counts every
 * instance, as /instances does. */
static sleapc_status collect(sleapc_results_source *src, rows *r)
{
    const sleapc_predictions *b = NULL;
    sleapc_status st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    int64_t inst_row = 0;
    while (!st && b->n_frames > 0) {
        const int d = b->emb_dim > 0 && b->embeddings ? b->emb_dim : 0;
        if (d && r->dim && d != r->dim)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "write .slp: embedding lengths differ: %d and %d", d, r->dim);
        if (d)
            r->dim = d;
        for (int64_t k = 0; !st && k < b->n_frames; k++) {
            const sleapc_pred_frame *fr = &b->frames[k];
            for (int64_t i = 0; !st && d && i < fr->n; i++) {
                const float *v = b->embeddings + (fr->first + i) * d;
                if (has_vector(v, d))
                    st = push(r, v, inst_row + i);
            }
            inst_row += fr->n > 0 ? fr->n : 0;
        }
        if (!st)
            st = src->next(src->ctx, &b);
    }
    return st;
}

sleapc_status sleapc__slp_write_embeddings(sleapc_h5 *f, sleapc_results_source *src, bool *written)
{
    *written = false;
    if (src->n_insts <= 0)
        return SLEAPC_OK;
    rows r = {0};
    sleapc_status st = collect(src, &r);
    if (!st && r.n > 0) {
        const int64_t d = r.dim;
        /* chunk_rows = max(1, min(n, (1 << 20) // (d * itemsize))) */
        int64_t chunk_rows = ((int64_t)1 << 20) / (d * (int64_t)sizeof(float));
        chunk_rows = chunk_rows < r.n ? chunk_rows : r.n;
        chunk_rows = chunk_rows > 1 ? chunk_rows : 1;
        const int64_t vshape[2] = {r.n, d}, vchunk[2] = {chunk_rows, d};
        const sleapc_h5_write_opts vo = {
            .chunked = true, .chunk = vchunk, .unlimited_first = true, .gzip = 4};
        /* h5py compression="gzip" is level 4; maxshape=(None,) chunks as guessed. */
        const sleapc_h5_write_opts o = {.chunked = true, .unlimited = true, .gzip = 4};
        st = sleapc__h5_create_group(f, "embeddings");
        if (!st)
            st =
                sleapc__h5_write(f, "embeddings/vectors", SLEAPC_H5_F32, 2, vshape, r.vectors, &vo);
        if (!st)
            st = sleapc__h5_write(f, "embeddings/owner_type", SLEAPC_H5_U8, 1, &r.n, r.owner_type,
                                  &o);
        if (!st)
            st = sleapc__h5_write(f, "embeddings/owner_id", SLEAPC_H5_I64, 1, &r.n, r.owner_id, &o);
        *written = !st;
    }
    rows_free(&r);
    return st;
}
