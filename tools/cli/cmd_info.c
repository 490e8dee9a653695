/* sleapc info: what a model is, what it expects and what it costs. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sleapc/model.h"
#include "sleapc/runner.h"

static int usage(void)
{
    printf("usage: sleapc info MODEL_DIR [--size HxW]\n"
           "       sleapc info -m MODEL_DIR [--size HxW]\n"
           "       sleapc info --devices\n"
           "\n"
           "  --devices              list the devices sleapc can run on (--device NAME)\n"
           "  -m, --model MODEL_DIR  a model folder in any format sleapc loads: sleap-nn\n"
           "                         (training_config.yaml + best.ckpt), SLEAP 1.x\n"
           "                         (training_config.json + best_model.h5), or a sleap-nn\n"
           "                         ONNX export (model.onnx or model_raw.onnx +\n"
           "                         export_metadata.json); a file inside it works too\n"
           "  --size HxW             input size for the GFLOP count (default: the input the\n"
           "                         network gets: its crop for centered-instance models,\n"
           "                         else max_height x max_width, else 512x512; scaled by\n"
           "                         the input scale and padded to the max stride)\n");
    return 0;
}

/* The CPU, then every GPU a backend of this build finds. */
static int list_devices(void)
{
    printf("%-8s %-8s %-16s %s\n", "device", "backend", "kind", "name");
    printf("%-8s %-8s %-16s %s\n", "cpu", "native", "CPU", "the CPU backends (native, onednn, "
           "xnnpack)");
    sleapc_device_info devs[16];
    int n = sleapc_devices_list(devs, 16);
    for (int i = 0; i < n && i < 16; i++)
        printf("%-8s %-8s %-16s %s%s\n", devs[i].device, devs[i].backend, devs[i].kind,
               devs[i].name,
               strcmp(devs[i].kind, "software") == 0 ? " (only with --backend vulkan)" : "");
    if (n == 0)
        printf("(no GPU: no Vulkan device found, or this build has no vulkan backend)\n");
    return 0;
}

int cmd_info(int argc, char **argv)
{
    const char *model_path = NULL;
    long h = 0, w = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage();
        if (strcmp(argv[i], "--devices") == 0)
            return list_devices();
        if (cli_is_option(argv[i], "model", "-m")) {
            if (!(model_path = cli_option_value(argc, argv, &i, "model")))
                return 1;
        } else if (cli_is_option(argv[i], "size", NULL)) {
            const char *v = cli_option_value(argc, argv, &i, "size");
            if (!v)
                return 1;
            if (!cli_parse_size(v, &h, &w))
                return cli_error("--size: expected HxW (e.g. 384x384), got \"%s\"", v);
        } else if (argv[i][0] != '-' && !model_path) {
            model_path = argv[i];  /* sleapc info MODEL_DIR */
        } else if (argv[i][0] != '-') {
            return cli_error("info: one model (got \"%s\" and \"%s\")", model_path, argv[i]);
        } else {
            return cli_unknown_option("info", argv[i], (const char *const[]){"model", "size", "help"},
                                      3);
        }
    }
    if (!model_path)
        return cli_error("info: a model is required: sleapc info MODEL_DIR (or -m MODEL_DIR)");

    sleapc_model *m = NULL;
    if (sleapc_model_load(model_path, &m) != SLEAPC_OK)
        return cli_lib_error();
    if (!h || !w)
        cli_model_input_size(m, &h, &w);
    int stride = sleapc_model_max_stride(m);
    long ph = cli_round_up(h, stride), pw = cli_round_up(w, stride);

    printf("model:          %s\n", model_path);
    /* Box detector exports hold the network only: frames are preprocessed
     * and boxes decoded on the host, as for a checkpoint. */
    const bool exported = sleapc_model_is_exported(m);
    const char *etype = exported ? sleapc_model_export_type(m) : "";
    const bool net_only = strncmp(etype, "bbox_", 5) == 0;
    const bool embeds = strcmp(etype, "embedding") == 0;
    if (exported)
        printf("format:         sleap-nn ONNX export (model.onnx, %s)\n"
               "export type:    %s\n",
               net_only ? "the network; preprocessing and box decoding on the host"
               : embeds ? "crop -> vector, the per-crop standardize in the graph"
                        : "post-processing in the graph",
               etype);
    printf("type:           %s\n", sleapc_model_type_name(sleapc_model_get_type(m)));
    printf("backbone:       %s\n", sleapc_model_backbone_name(m));
    if (*sleapc_model_backbone_arch(m))
        printf("arch:           %s\n", sleapc_model_backbone_arch(m));
    printf("input:          %d channel%s, scale %g", sleapc_model_in_channels(m),
           sleapc_model_in_channels(m) == 1 ? "" : "s", sleapc_model_input_scale(m));
    if (net_only || embeds)
        printf(" (on the host)\n");
    else if (exported)
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
    sleapc_skeleton sk;
    sleapc_model_skeleton(m, &sk);
    printf("skeleton:       %s (%d nodes, %d edges)\n", sk.name, sk.n_nodes, sk.n_edges);
    printf("  nodes:       ");
    for (int i = 0; i < sk.n_nodes; i++)
        printf(" %s", sk.node_names[i]);
    printf("\n  edges:       ");
    for (int i = 0; i < sk.n_edges; i++) {
        int s = sk.edges[2 * i], d = sk.edges[2 * i + 1];
        bool known = s >= 0 && s < sk.n_nodes && d >= 0 && d < sk.n_nodes;
        printf(" %s->%s", known ? sk.node_names[s] : "?", known ? sk.node_names[d] : "?");
    }
    printf("\n");
    if (sk.n_classes > 0) {
        printf("classes:        %d\n  names:       ", sk.n_classes);
        for (int i = 0; i < sk.n_classes; i++)
            printf(" %s", sk.class_names[i]);
        printf("\n");
    }
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
        else if (sleapc_model_get_type(m) == SLEAPC_MODEL_TYPE_EMBEDDING)
            printf("  %-30s %3d floats (embedding vector)\n", hi.name, hi.channels);
        else
            printf("  %-30s %3d classes (vector)\n", hi.name, hi.channels);
    }
    printf("parameters:     %lld\n", (long long)sleapc_model_param_count(m));
    sleapc_model_type t = sleapc_model_get_type(m);
    bool crops = t == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE ||
                 t == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN || t == SLEAPC_MODEL_TYPE_EMBEDDING;
    printf("GFLOPs:         %.3f per %s at %ldx%ld", sleapc_model_gflops(m, ph, pw),
           crops ? "instance crop" : "frame", h, w);
    if (ph != h || pw != w)
        printf(" (padded to %ldx%ld)", ph, pw);
    printf("\n");
    sleapc_model_destroy(m);
    return 0;
}
