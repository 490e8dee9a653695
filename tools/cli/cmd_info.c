/* sleapc info: what a model is, what it expects and what it costs. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sleapc/model.h"

static int usage(void)
{
    printf("usage: sleapc info -m MODEL_DIR [--size HxW]\n"
           "\n"
           "  -m, --model MODEL_DIR  sleap-nn model folder (training_config.yaml + best.ckpt)\n"
           "  --size HxW             input size for the GFLOP count (default: the model's\n"
           "                         max_height x max_width, else 512x512)\n");
    return 0;
}

static bool parse_size(const char *s, long *h, long *w)
{
    char hb[32];
    const char *x = strchr(s, 'x');
    if (!x || (size_t)(x - s) >= sizeof hb)
        return false;
    memcpy(hb, s, (size_t)(x - s));
    hb[x - s] = '\0';
    return cli_parse_int(hb, 1, 1 << 16, h) && cli_parse_int(x + 1, 1, 1 << 16, w);
}

static long round_up(long v, long m)
{
    return m > 0 ? (v + m - 1) / m * m : v;
}

int cmd_info(int argc, char **argv)
{
    const char *model_path = NULL;
    long h = 0, w = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage();
        if (cli_is_option(argv[i], "model", "-m")) {
            if (!(model_path = cli_option_value(argc, argv, &i, "model")))
                return 1;
        } else if (cli_is_option(argv[i], "size", NULL)) {
            const char *v = cli_option_value(argc, argv, &i, "size");
            if (!v)
                return 1;
            if (!parse_size(v, &h, &w))
                return cli_error("--size: expected HxW (e.g. 384x384), got \"%s\"", v);
        } else {
            return cli_error("info: unknown option \"%s\" (see sleapc info --help)", argv[i]);
        }
    }
    if (!model_path)
        return cli_error("info: -m MODEL_DIR is required");

    sleapc_model *m = NULL;
    if (sleapc_model_load(model_path, &m) != SLEAPC_OK)
        return cli_lib_error();
    if (!h || !w) {
        int mh = 0, mw = 0;
        sleapc_model_max_size(m, &mh, &mw);
        h = mh ? mh : 512;
        w = mw ? mw : 512;
    }
    int stride = sleapc_model_max_stride(m);
    long ph = round_up(h, stride), pw = round_up(w, stride);

    printf("model:          %s\n", model_path);
    if (sleapc_model_is_exported(m))
        printf("format:         sleap-nn ONNX export (model.onnx, post-processing in the graph)\n"
               "export type:    %s\n",
               sleapc_model_export_type(m));
    printf("type:           %s\n", sleapc_model_type_name(sleapc_model_get_type(m)));
    printf("backbone:       %s\n", sleapc_model_backbone_name(m));
    if (*sleapc_model_backbone_arch(m))
        printf("arch:           %s\n", sleapc_model_backbone_arch(m));
    printf("input:          %d channel%s, scale %g", sleapc_model_in_channels(m),
           sleapc_model_in_channels(m) == 1 ? "" : "s", sleapc_model_input_scale(m));
    if (sleapc_model_is_exported(m))
        printf(" (applied in the graph; frames go in as they are)\n");
    else
        printf(", max stride %d\n", stride);
    int mh = 0, mw = 0, tile = 0, overlap = 0, per_call = 0;
    const char *blend = "";
    sleapc_model_max_size(m, &mh, &mw);
    if (sleapc_model_tiling(m, &tile, &overlap, &blend, &per_call))
        printf("tiling:         %d px tiles, overlap %d, %s window, %d tiles per call (no size "
               "matcher)\n",
               tile, overlap, blend, per_call);
    else if (mh || mw)
        printf("size matcher:   %dx%d\n", mh, mw);
    if (sleapc_model_crop_size(m))
        printf("crop size:      %d\n", sleapc_model_crop_size(m));
    printf("skeleton:       %s (%d nodes, %d edges)\n", sleapc_model_skeleton_name(m),
           sleapc_model_n_nodes(m), sleapc_model_n_edges(m));
    printf("  nodes:       ");
    for (int i = 0; i < sleapc_model_n_nodes(m); i++)
        printf(" %s", sleapc_model_node_name(m, i));
    printf("\n  edges:       ");
    for (int i = 0; i < sleapc_model_n_edges(m); i++) {
        int s, d;
        sleapc_model_edge(m, i, &s, &d);
        printf(" %s->%s", sleapc_model_node_name(m, s), sleapc_model_node_name(m, d));
    }
    printf("\n");
    if (sleapc_model_is_exported(m)) {
        /* No network graph of sleapc's own to describe. */
        sleapc_model_destroy(m);
        return 0;
    }
    printf("heads:\n");
    for (int i = 0; i < sleapc_model_n_heads(m); i++) {
        sleapc_head_info hi = sleapc_model_head(m, i);
        if (hi.stride)
            printf("  %-30s %3d channels, stride %d\n", hi.name, hi.channels, hi.stride);
        else
            printf("  %-30s %3d classes (vector)\n", hi.name, hi.channels);
    }
    printf("parameters:     %lld\n", (long long)sleapc_model_param_count(m));
    printf("GFLOPs:         %.3f per frame at %ldx%ld", sleapc_model_gflops(m, ph, pw), h, w);
    if (ph != h || pw != w)
        printf(" (padded to %ldx%ld)", ph, pw);
    printf("\n");
    sleapc_model_destroy(m);
    return 0;
}
