#include "core/weights.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

sleapc_status sleapc__weights_add(sleapc_weights *w, const char *name, int ndim,
                                  const int64_t *shape, float *data)
{
    if (ndim < 0 || ndim > SLEAPC_WEIGHT_MAX_DIMS) {
        sleapc__aligned_free(data);
        return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\" has %d dimensions (at most %d)",
                            name, ndim, SLEAPC_WEIGHT_MAX_DIMS);
    }
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 32;
        sleapc_weight *items = sleapc__realloc(w->items, (size_t)cap * sizeof *items);
        if (!items) {
            sleapc__aligned_free(data);
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        }
        w->items = items;
        w->cap = cap;
    }
    sleapc_weight *t = &w->items[w->n];
    memset(t, 0, sizeof *t);
    t->name = sleapc__strdup(name);
    if (!t->name) {
        sleapc__aligned_free(data);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->data = data;
    w->n++;
    return SLEAPC_OK;
}

const sleapc_weight *sleapc__weights_find(const sleapc_weights *w, const char *name)
{
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->items[i].name, name) == 0)
            return &w->items[i];
    return NULL;
}

int64_t sleapc__weight_numel(const sleapc_weight *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

int64_t sleapc__weights_param_count(const sleapc_weights *w)
{
    int64_t n = 0;
    for (int i = 0; i < w->n; i++)
        n += sleapc__weight_numel(&w->items[i]);
    return n;
}

void sleapc__weights_clear(sleapc_weights *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->n; i++) {
        sleapc__free(w->items[i].name);
        sleapc__aligned_free(w->items[i].data);
    }
    sleapc__free(w->items);
    memset(w, 0, sizeof *w);
}
