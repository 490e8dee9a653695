/* The compiled-in backends. Optional backends add themselves here under
 * their SLEAPC_HAVE_<NAME> define, the only place outside their own folder
 * where the define appears. */
#include "backends/backend.h"
#include "backends/native/native_backend.h"
#if SLEAPC_HAVE_ONEDNN
#include "backends/onednn/onednn_backend.h"
#endif
#if SLEAPC_HAVE_XNNPACK
#include "backends/xnnpack/xnnpack_backend.h"
#endif
#if SLEAPC_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.h"
#endif

static const struct sleapc_backend_factory *const factories[] = {
    &sleapc__native_factory,
#if SLEAPC_HAVE_ONEDNN
    &sleapc__onednn_factory,
#endif
#if SLEAPC_HAVE_XNNPACK
    &sleapc__xnnpack_factory,
#endif
#if SLEAPC_HAVE_VULKAN
    &sleapc__vulkan_factory,
#endif
};

int sleapc__backend_count(void)
{
    return (int)(sizeof factories / sizeof factories[0]);
}

const struct sleapc_backend_factory *sleapc__backend_factory(int i)
{
    return i >= 0 && i < sleapc__backend_count() ? factories[i] : NULL;
}
