/* Public sleapc_compat functions: check arguments, call inward. */
#include "core/compat.h"

const char *sleapc_compat_name(sleapc_compat c)
{
    return sleapc__compat_name(c);
}

sleapc_status sleapc_compat_parse(const char *s, sleapc_compat *out)
{
    return sleapc__compat_parse(s, out);
}
