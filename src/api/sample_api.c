/* Public sample functions: call the pipeline, which checks the options. */
#include "pipeline/sample/sample_internal.h"

sleapc_sample_opts sleapc_sample_opts_default(void)
{
    return sleapc__sample_opts_default();
}

sleapc_status sleapc_sample_write(const char *dir, const sleapc_sample_opts *opts)
{
    return sleapc__sample_write(dir, opts);
}
