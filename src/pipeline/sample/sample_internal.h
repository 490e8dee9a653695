#ifndef SLEAPC_PIPELINE_SAMPLE_INTERNAL_H
#define SLEAPC_PIPELINE_SAMPLE_INTERNAL_H

#include "sleapc/sample.h"

/* The bodies of the public sample functions (include/sleapc/sample.h);
 * sleapc__sample_write checks its arguments itself. */
sleapc_sample_opts sleapc__sample_opts_default(void);
sleapc_status sleapc__sample_write(const char *dir, const sleapc_sample_opts *opts);

/* training_config.yaml + best.ckpt of the sample model into model_dir. */
sleapc_status sleapc__sample_write_model(const char *model_dir);

#endif
