#include "core/tensor_map.h"

#include <string.h>

#include "core/error.h"

void sleapc__tensor_map_clear(sleapc_tensor_map *m)
{
    m->n = 0;
}

sleapc_status sleapc__tensor_map_set(sleapc_tensor_map *m, const char *name,
                                     const sleapc_tensor *t)
{
    if (strlen(name) >= SLEAPC_TENSOR_NAME_CAP)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor name \"%s\" is too long", name);
    for (int i = 0; i < m->n; i++) {
        if (strcmp(m->names[i], name) == 0) {
            m->tensors[i] = *t;
            return SLEAPC_OK;
        }
    }
    if (m->n == SLEAPC_TENSOR_MAP_CAP)
        return sleapc__fail(SLEAPC_ERR_STATE, "more than %d output tensors", SLEAPC_TENSOR_MAP_CAP);
    strcpy(m->names[m->n], name);
    m->tensors[m->n] = *t;
    m->n++;
    return SLEAPC_OK;
}

const sleapc_tensor *sleapc__tensor_map_get(const sleapc_tensor_map *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0)
            return &m->tensors[i];
    return NULL;
}
