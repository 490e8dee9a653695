/* The four sample networks of shared/data/bench_configs, as the network
 * benchmarks build them: random weights, a 13-node skeleton with 12 edges
 * (the reference timings' sizes; the configs carry no skeleton), the input
 * sizes of that folder's README, and a fixed pseudo-random input. */
#ifndef SLEAPC_BENCH_NETWORKS_H
#define SLEAPC_BENCH_NETWORKS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/config/model_config.h"
#include "model/build.h"
#include "model/weights_random.h"

#define BENCH_N_PARTS 13
#define BENCH_N_EDGES 12

typedef struct bench_case {
    const char *file;
    int h, w;
} bench_case;

/* Network input sizes from bench_configs/README.md. */
static const bench_case bench_cases[] = {
    {"config_single_instance_unet_medium_rf.yaml", 1024, 1024},
    {"config_centroid_unet.yaml", 512, 512},
    {"config_topdown_centered_instance_unet_medium_rf.yaml", 192, 192},
    {"config_bottomup_unet_medium_rf.yaml", 1024, 1024},
};
#define BENCH_N_CASES ((int)(sizeof bench_cases / sizeof bench_cases[0]))

/* The configs folder: argv[1] when given and not "", else
 * $SLEAPC_DATA_DIR/bench_configs, else the shared data beside the source
 * tree. */
static inline void bench_configs_dir(int argc, char **argv, char *dir, size_t cap)
{
    const char *env = getenv("SLEAPC_DATA_DIR");
    if (argc > 1 && argv[1][0]) {
        snprintf(dir, cap, "%s", argv[1]);
    } else if (env) {
        snprintf(dir, cap, "%s/bench_configs", env);
    } else {
        /* This file's folder (CMake compiles by full path) is bench/. */
        const char *src = __FILE__, *slash = strrchr(src, '/');
        int len = slash ? (int)(slash - src) : 1;
        snprintf(dir, cap, "%.*s/../../shared/data/bench_configs", len, slash ? src : ".");
    }
}

/* Build case c's network from dir; on failure prints why and returns the
 * status (cfg, w and g are then for the caller to clear as usual). */
static inline sleapc_status bench_build(const char *dir, const bench_case *c,
                                        sleapc_model_config *cfg, sleapc_weights *w,
                                        sleapc_graph *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, c->file);
    sleapc__model_config_defaults(cfg);
    sleapc_status st = sleapc__config_read_yaml(path, cfg);
    if (!st) {
        /* Only the counts matter to the network. */
        int saved_parts = cfg->n_part_names, saved_edges = cfg->n_paf_edges;
        if (cfg->model_type != SLEAPC_MODEL_TYPE_CENTROID)
            cfg->n_part_names = BENCH_N_PARTS;
        cfg->n_paf_edges = BENCH_N_EDGES;
        st = sleapc__weights_random_for_config(cfg, 42, w);
        if (!st)
            st = sleapc__build_unet(cfg, w, "random weights", true, false, g);
        cfg->n_part_names = saved_parts;
        cfg->n_paf_edges = saved_edges;
    }
    if (st)
        printf("%s: %s\n", c->file, sleapc_last_error());
    return st;
}

/* A (channels, h, w) float32 input in [0, 1), the same every run; NULL when
 * out of memory. */
static inline float *bench_input(int64_t channels, int h, int w)
{
    size_t n = (size_t)channels * (size_t)h * (size_t)w;
    float *img = malloc(n * sizeof *img);
    unsigned seed = 7;
    for (size_t i = 0; img && i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        img[i] = (float)((seed >> 8) & 0xffff) / 65536.0f;
    }
    return img;
}

#endif
