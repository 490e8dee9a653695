/* Random weights for a config (model/weights_random.h): for each benchmark
 * config, the set it makes builds the network strictly (every tensor the
 * builder asks for, nothing else), values stay within the stated bounds, the
 * same seed repeats them and another seed does not; a config the builder
 * refuses is refused with the builder's status and an empty set. */
#include <math.h>
#include <string.h>

#include "io/config/model_config.h"
#include "model/build.h"
#include "model/weights_random.h"
#include "test_util.h"

static void check_config(const char *file)
{
    char rel[256];
    snprintf(rel, sizeof rel, "bench_configs/%s", file);
    sleapc_model_config cfg;
    sleapc__model_config_defaults(&cfg);
    CHECK_OK(sleapc__config_read_yaml(test_data_path(rel), &cfg));
    /* The configs carry no skeleton; only the counts shape the network. */
    int saved_parts = cfg.n_part_names, saved_edges = cfg.n_paf_edges;
    if (cfg.model_type != SLEAPC_MODEL_TYPE_CENTROID)
        cfg.n_part_names = 13;
    cfg.n_paf_edges = 12;

    sleapc_weights a = {0}, b = {0}, c = {0};
    CHECK_OK(sleapc__weights_random_for_config(&cfg, 1, &a));
    CHECK_OK(sleapc__weights_random_for_config(&cfg, 1, &b));
    CHECK_OK(sleapc__weights_random_for_config(&cfg, 2, &c));
    CHECK_MSG(a.n > 10 && a.n == b.n && a.n == c.n, "%s: %d, %d, %d tensors", file, a.n, b.n, c.n);
    sleapc_graph g;
    CHECK_OK(sleapc__build_unet(&cfg, &a, "random", true, false, &g));
    CHECK(g.n_nodes > a.n / 2 && g.n_outputs >= 1);
    sleapc__graph_clear(&g);

    bool same_seed_same = true, other_seed_differs = false, in_bounds = true;
    for (int i = 0; i < a.n && i < b.n && i < c.n; i++) {
        int64_t n = sleapc__weight_numel(&a.items[i]);
        size_t bytes = (size_t)n * sizeof(float);
        same_seed_same &= strcmp(a.items[i].name, b.items[i].name) == 0 &&
                          memcmp(a.items[i].data, b.items[i].data, bytes) == 0;
        other_seed_differs |= memcmp(a.items[i].data, c.items[i].data, bytes) != 0;
        /* He-uniform bound sqrt(6 / fan_in) for weights, 0.05 for biases. */
        double bound = a.items[i].ndim >= 2
                           ? sqrt(6.0 / (double)(n / a.items[i].shape[0])) * (1 + 1e-6)
                           : 0.05 * (1 + 1e-6);
        for (int64_t k = 0; k < n; k++)
            in_bounds &= fabs((double)a.items[i].data[k]) <= bound;
    }
    CHECK_MSG(same_seed_same, "%s: seed 1 twice differs", file);
    CHECK_MSG(other_seed_differs, "%s: seeds 1 and 2 agree", file);
    CHECK_MSG(in_bounds, "%s: a value beyond its bound", file);
    sleapc__weights_clear(&a);
    sleapc__weights_clear(&b);
    sleapc__weights_clear(&c);

    /* A network the builder refuses: its status, and nothing left behind. */
    cfg.unet.max_stride = 12;
    sleapc_weights d = {0};
    CHECK(sleapc__weights_random_for_config(&cfg, 1, &d) == SLEAPC_ERR_FORMAT);
    CHECK(d.n == 0 && d.items == NULL);
    CHECK(strstr(sleapc_last_error(), "max_stride") != NULL);

    cfg.n_part_names = saved_parts;
    cfg.n_paf_edges = saved_edges;
    sleapc__model_config_clear(&cfg);
}

int main(void)
{
    test_require_data();
    check_config("config_single_instance_unet_medium_rf.yaml");
    check_config("config_centroid_unet.yaml");
    check_config("config_topdown_centered_instance_unet_medium_rf.yaml");
    check_config("config_bottomup_unet_medium_rf.yaml");
    return test_finish();
}
