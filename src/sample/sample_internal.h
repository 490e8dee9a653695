#ifndef SLEAPC_SAMPLE_INTERNAL_H
#define SLEAPC_SAMPLE_INTERNAL_H

#include "api/tools_only.h"

/* training_config.yaml + best.ckpt of the sample model into model_dir. */
sleapc_status sleapc__sample_write_model(const char *model_dir);

#endif
