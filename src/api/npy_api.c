#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/npy/npy_file.h"
#include "sleapc/tools.h"

sleapc_status sleapc_npy_read(const char *path, sleapc_tensor *out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read npy: path and out are required");
    return sleapc__npy_read(path, out);
}

sleapc_status sleapc_npy_write(const char *path, const sleapc_tensor *t)
{
    if (!path || !t)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write npy: path and tensor are required");
    return sleapc__npy_write(path, t);
}

void sleapc_tensor_free(sleapc_tensor *t)
{
    if (!t)
        return;
    sleapc__free(t->data);
    memset(t, 0, sizeof *t);
}
