/* Public version, status, log and dtype functions: call into core. */
#include "core/dtype.h"
#include "core/error.h"
#include "core/interrupt.h"

const char *sleapc_version(void)
{
    return sleapc__version();
}

uint32_t sleapc_version_number(void)
{
    return SLEAPC_VERSION_NUMBER;
}

int sleapc_abi_version(void)
{
    return SLEAPC_ABI_VERSION;
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

void sleapc_abort_set(sleapc_abort_fn fn, void *user)
{
    sleapc__abort_set(fn, user);
}
