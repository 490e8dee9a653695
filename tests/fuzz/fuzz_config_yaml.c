/* libFuzzer target: sleap-nn training_config.yaml files (libyaml's parse,
 * then every key the model reader takes: backbone, heads, preprocessing,
 * skeletons), read from a scratch file. Every input must end in a status with a message,
 * never a crash, leak or abort. Replayed on its committed corpus by
 * test_fuzz_config_yaml_replay.c. */
#include "fuzz_common.h"
#include "io/config/model_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch("training_config.yaml", data, size);
    if (!path)
        return 0;
    sleapc_model_config cfg;
    sleapc__model_config_defaults(&cfg);
    sleapc_status st = sleapc__config_read_yaml(path, &cfg);
    fuzz_expect("fuzz_config_yaml", st);
    sleapc__model_config_clear(&cfg);
    return 0;
}
