/* Public settings functions: the table is core's (core/settings.c). */
#include "core/settings.h"

sleapc_status sleapc_setting_set(const char *name, const char *value)
{
    return sleapc__settings_set(name, value);
}

sleapc_status sleapc_setting_get(const char *name, char *buf, size_t cap)
{
    return sleapc__settings_get(name, buf, cap);
}
