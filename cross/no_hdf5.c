/* The aarch64 build has no HDF5 (Debian's libhdf5-dev cannot be installed
 * for two architectures at once): legacy SLEAP models (best_model.h5) are
 * refused with a clear error instead. */
#include "core/error.h"
#include "io/ckpt/keras_h5.h"

sleapc_status sleapc__keras_h5_read(const char *path, const sleapc_model_config *cfg,
                                    sleapc_weights *out)
{
    (void)cfg;
    (void)out;
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: this build has no HDF5 (legacy SLEAP models)",
                        path);
}

sleapc_status sleapc__keras_h5_patch_config(const sleapc_weights *w, const char *path,
                                            sleapc_model_config *cfg)
{
    (void)w;
    (void)cfg;
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s: this build has no HDF5 (legacy SLEAP models)",
                        path);
}
