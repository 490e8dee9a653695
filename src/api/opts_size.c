/* Reading option structs of any size this library knows how to complete. */
#include "api/opts_size.h"

#include <stdint.h>
#include <string.h>

#include "core/error.h"

sleapc_status sleapc__opts_read(void *dst, size_t full_size, const void *defaults, const void *src,
                                const char *what)
{
    memcpy(dst, defaults, full_size);
    if (!src)
        return SLEAPC_OK;
    uint32_t size;
    memcpy(&size, src, sizeof size);
    if (size < sizeof size)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "%s: struct_size is %u; start from %s_default(), which sets it", what,
                            size, what);
    if (size > full_size)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "%s: struct_size is %u, larger than this library's %zu: the "
                            "caller was built against newer headers than the library it runs "
                            "with (ABI %d)",
                            what, size, full_size, SLEAPC_ABI_VERSION);
    memcpy(dst, src, size);
    /* From here on the struct is this library's whole struct. */
    uint32_t full = (uint32_t)full_size;
    memcpy(dst, &full, sizeof full);
    return SLEAPC_OK;
}
