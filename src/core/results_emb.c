/* The results' per-instance re-ID embedding rows (see results.h): kept in
 * step with the instances by the helpers of results.c. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/results.h"

sleapc_status sleapc__results_set_emb_dim(sleapc_predictions *pr, int dim)
{
    if (dim < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "embedding length %d", dim);
    if (dim == pr->emb_dim && (dim == 0 || pr->embeddings || pr->insts_cap == 0))
        return SLEAPC_OK;
    sleapc__free(pr->embeddings);
    pr->embeddings = NULL;
    pr->emb_dim = dim;
    if (dim == 0 || pr->insts_cap == 0)
        return SLEAPC_OK;
    const size_t n = (size_t)pr->insts_cap * (size_t)dim;
    if (!(pr->embeddings = sleapc__malloc(n * sizeof(float)))) {
        pr->emb_dim = 0;
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        pr->embeddings[i] = NAN;
    return SLEAPC_OK;
}

sleapc_status sleapc__results_grow_emb(sleapc_predictions *pr, int64_t old_cap, int64_t cap)
{
    if (pr->emb_dim <= 0)
        return SLEAPC_OK;
    const size_t d = (size_t)pr->emb_dim;
    if (!pr->embeddings)
        old_cap = 0;
    float *e = sleapc__realloc(pr->embeddings, (size_t)cap * d * sizeof(float));
    if (!e)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    pr->embeddings = e;
    for (size_t i = (size_t)old_cap * d; i < (size_t)cap * d; i++)
        e[i] = NAN; /* rows not yet given a vector have none */
    return SLEAPC_OK;
}

sleapc_status sleapc__results_copy_emb(sleapc_predictions *dst, int64_t at,
                                       const sleapc_predictions *src, int64_t from, int64_t n)
{
    const bool has = src->emb_dim > 0 && src->embeddings;
    /* dst takes src's length, or gets the rows its emb_dim promises. */
    if ((has && dst->emb_dim == 0) || (dst->emb_dim > 0 && !dst->embeddings)) {
        sleapc_status st =
            sleapc__results_set_emb_dim(dst, dst->emb_dim ? dst->emb_dim : src->emb_dim);
        if (st)
            return st;
    }
    if (dst->emb_dim <= 0 || n <= 0)
        return SLEAPC_OK;
    if (has && src->emb_dim != dst->emb_dim)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "embedding lengths differ: %d and %d",
                            src->emb_dim, dst->emb_dim);
    const size_t d = (size_t)dst->emb_dim;
    float *o = dst->embeddings + (size_t)at * d;
    if (has)
        memcpy(o, src->embeddings + (size_t)from * d, (size_t)n * d * sizeof(float));
    else
        for (size_t i = 0; i < (size_t)n * d; i++)
            o[i] = NAN;
    return SLEAPC_OK;
}
