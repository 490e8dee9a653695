/* The compiled-in backends. Optional backends add themselves here under
 * their SLEAPC_HAVE_<NAME> define, the only place outside their own folder
 * where the define appears. */
#include "backends/backend.h"
#include "backends/native/native_backend.h"

static const struct sleapc_backend_factory *const factories[] = {
    &sleapc__native_factory,
};

int sleapc__backend_count(void)
{
    return (int)(sizeof factories / sizeof factories[0]);
}

const struct sleapc_backend_factory *sleapc__backend_factory(int i)
{
    return i >= 0 && i < sleapc__backend_count() ? factories[i] : NULL;
}
