/* libFuzzer target: the legacy SLEAP 1.x Keras weight reader
 * (best_model.h5) over HDF5 files libhdf5 reads correctly, built from the
 * fuzz bytes by fuzz_h5_build.h (groups, attributes such as Keras'
 * model_config, float32 kernels), read against a fixed single-instance
 * legacy config. Every input must end in a status with a message, never a
 * crash, leak or abort. Replayed on its committed corpus by
 * test_fuzz_keras_h5_replay.c. */
#include "fuzz_h5_build.h"
#include "io/ckpt/keras_h5.h"
#include "io/config/model_config.h"

static const char CONFIG[] =
    "{\"data\": {\"labels\": {\"skeletons\": [{\"directed\": true, \"graph\": {\"name\": \"s\","
    " \"num_edges_inserted\": 1}, \"links\": [{\"edge_insert_idx\": 0, \"key\": 0, \"source\":"
    " {\"py/object\": \"sleap.skeleton.Node\", \"py/state\": {\"py/tuple\": [\"a\", 1.0]}},"
    " \"target\": {\"py/object\": \"sleap.skeleton.Node\", \"py/state\": {\"py/tuple\": [\"b\","
    " 1.0]}}, \"type\": {\"py/reduce\": [{\"py/type\": \"sleap.skeleton.EdgeType\"},"
    " {\"py/tuple\": [1]}]}}], \"multigraph\": true, \"nodes\": [{\"id\": {\"py/id\": 1}},"
    " {\"id\": {\"py/id\": 2}}]}]}, \"preprocessing\": {\"ensure_rgb\": false,"
    " \"ensure_grayscale\": false, \"input_scaling\": 1.0, \"pad_to_stride\": 4,"
    " \"resize_and_pad_to_target\": true, \"target_height\": 16, \"target_width\": 16},"
    " \"instance_cropping\": {\"center_on_part\": null, \"crop_size\": null}}, \"model\":"
    " {\"backbone\": {\"unet\": {\"stem_stride\": null, \"max_stride\": 4, \"output_stride\": 2,"
    " \"filters\": 2, \"filters_rate\": 1.0, \"middle_block\": true, \"up_interpolate\": true,"
    " \"stacks\": 1}}, \"heads\": {\"single_instance\": {\"part_names\": [\"a\", \"b\"],"
    " \"sigma\": 1.0, \"output_stride\": 2}}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sleapc_model_config cfg;
    static int have_cfg;
    if (!have_cfg) {
        const char *cpath =
            fuzz_scratch("training_config.json", (const uint8_t *)CONFIG, sizeof CONFIG - 1);
        sleapc__model_config_defaults(&cfg);
        if (!cpath || sleapc__config_read_legacy_json(cpath, &cfg) != SLEAPC_OK)
            abort();
        have_cfg = 1;
    }
    const char *path = fuzz_scratch("best_model.h5", (const uint8_t *)"", 0);
    if (!path || !fuzz_h5_build(path, data, size))
        return 0;
    sleapc_weights w = {0};
    sleapc_status st = sleapc__keras_h5_read(path, &cfg, &w);
    fuzz_expect("fuzz_keras_h5", st);
    sleapc__weights_clear(&w);
    return 0;
}
