/* libFuzzer target: legacy SLEAP 1.x training_config.json files (cJSON's
 * parse, then the model, heads and skeleton the reader takes), read from a
 * scratch file. Every input must end in a status with a message,
 * never a crash, leak or abort. Replayed on its committed corpus by
 * test_fuzz_config_json_replay.c. */
#include "fuzz_common.h"
#include "io/config/model_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch("training_config.json", data, size);
    if (!path)
        return 0;
    sleapc_model_config cfg;
    sleapc__model_config_defaults(&cfg);
    sleapc_status st = sleapc__config_read_legacy_json(path, &cfg);
    fuzz_expect("fuzz_config_json", st);
    sleapc__model_config_clear(&cfg);
    return 0;
}
