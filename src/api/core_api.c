/* Public version, status, log and dtype functions: call into core. */
#include "core/error.h"
#include "core/tensor.h"

const char *sleapc_version(void)
{
    return sleapc__version();
}

const char *sleapc_status_str(sleapc_status st)
{
    return sleapc__status_str(st);
}

const char *sleapc_last_error(void)
{
    return sleapc__last_error();
}

void sleapc_log_set(sleapc_log_fn fn, void *user)
{
    sleapc__log_set(fn, user);
}

size_t sleapc_dtype_size(sleapc_dtype dtype)
{
    return sleapc__dtype_size(dtype);
}

const char *sleapc_dtype_name(sleapc_dtype dtype)
{
    return sleapc__dtype_name(dtype);
}

int64_t sleapc_tensor_numel(const sleapc_tensor *t)
{
    return sleapc__tensor_numel(t);
}
