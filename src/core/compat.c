/* sleapc_compat: names, parsing, resolution of the default. */
#include <string.h>

#include "core/compat.h"
#include "core/error.h"

sleapc_compat sleapc__compat_resolve(sleapc_compat c)
{
    return c == SLEAPC_COMPAT_DEFAULT ? SLEAPC_COMPAT_SLEAP_NN_0_3_5 : c;
}

bool sleapc__compat_valid(sleapc_compat c)
{
    return c == SLEAPC_COMPAT_DEFAULT || c == SLEAPC_COMPAT_SLEAP_NN_0_3_5 ||
           c == SLEAPC_COMPAT_SLEAP_NN_0_3_3;
}

bool sleapc__compat_is_0_3_3(sleapc_compat c)
{
    return sleapc__compat_resolve(c) == SLEAPC_COMPAT_SLEAP_NN_0_3_3;
}

const char *sleapc__compat_name(sleapc_compat c)
{
    switch (sleapc__compat_resolve(c)) {
    case SLEAPC_COMPAT_SLEAP_NN_0_3_5:
        return "0.3.5";
    case SLEAPC_COMPAT_SLEAP_NN_0_3_3:
        return "0.3.3";
    default:
        return NULL;
    }
}

sleapc_status sleapc__compat_parse(const char *s, sleapc_compat *out)
{
    if (!s || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "compat: a value is required");
    const char *v = s;
    static const char *const prefixes[] = {"sleap-nn==", "sleap_nn==", "sleap-nn-", "sleap-nn",
                                           "sleap_nn"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(v, prefixes[i], n) == 0) {
            v += n;
            break;
        }
    }
    if (strcmp(v, "0.3.5") == 0) {
        *out = SLEAPC_COMPAT_SLEAP_NN_0_3_5;
        return SLEAPC_OK;
    }
    if (strcmp(v, "0.3.3") == 0) {
        *out = SLEAPC_COMPAT_SLEAP_NN_0_3_3;
        return SLEAPC_OK;
    }
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                        "compat: unknown sleap-nn release '%s' (choose 0.3.5, the default, or "
                        "0.3.3)",
                        s);
}
