/* sleapc forward: one network forward pass on a preprocessed input, with
 * every head output written as OUT_DIR/<head>.npy. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sleapc/model.h"
#include "sleapc/runner.h"
#include "sleapc/tools.h"

static int usage(void)
{
    printf("usage: sleapc forward -m MODEL_DIR -i INPUT.npy -o OUT_DIR [options]\n"
           "\n"
           "  -m, --model MODEL_DIR  a model folder in any format sleapc loads: sleap-nn\n"
           "                         (training_config.yaml + best.ckpt), SLEAP 1.x\n"
           "                         (training_config.json + best_model.h5), or a sleap-nn\n"
           "                         ONNX export (model_raw.onnx: the network; model.onnx:\n"
           "                         the whole graph runs and its own outputs are written)\n"
           "  -i, --input INPUT.npy  network input (B,C,H,W), uint8 (divided by 255) or\n"
           "                         float32 (used as is); (B,1,C,H,W) is accepted too\n"
           "  -o, --output OUT_DIR   folder for <head name>.npy outputs (created)\n"
           "  --backend NAME         native (default: auto)\n"
           "  --threads N            worker threads (default: one per core)\n");
    return 0;
}

static int make_dir(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return S_ISDIR(st.st_mode) ? 0 : cli_error("%s exists and is not a folder", path);
    if (mkdir(path, 0777) != 0)
        return cli_error("cannot create %s: %s", path, strerror(errno));
    return 0;
}

int cmd_forward(int argc, char **argv)
{
    const char *model_path = NULL, *in_path = NULL, *out_dir = NULL;
    sleapc_runner_opts ro = sleapc_runner_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage();
        if (cli_is_option(argv[i], "model", "-m")) {
            if (!(model_path = cli_option_value(argc, argv, &i, "model")))
                return 1;
        } else if (cli_is_option(argv[i], "input", "-i")) {
            if (!(in_path = cli_option_value(argc, argv, &i, "input")))
                return 1;
        } else if (cli_is_option(argv[i], "output", "-o")) {
            if (!(out_dir = cli_option_value(argc, argv, &i, "output")))
                return 1;
        } else if (cli_is_option(argv[i], "backend", NULL)) {
            if (!(ro.backend = cli_option_value(argc, argv, &i, "backend")))
                return 1;
        } else if (cli_is_option(argv[i], "threads", NULL)) {
            long n;
            if (!(v = cli_option_value(argc, argv, &i, "threads")))
                return 1;
            if (!cli_parse_int(v, 1, 1024, &n))
                return cli_error("--threads: expected a number from 1 to 1024, got \"%s\"", v);
            ro.n_threads = (int)n;
        } else {
            return cli_unknown_option("forward", argv[i],
                                      (const char *const[]){"model", "input", "output", "backend",
                                                            "threads", "help"},
                                      6);
        }
    }
    if (!model_path || !in_path || !out_dir)
        return cli_error("forward: -m MODEL_DIR, -i INPUT.npy and -o OUT_DIR are required");

    int rc = 1;
    sleapc_model *m = NULL;
    sleapc_runner *r = NULL;
    sleapc_tensor x = {0};
    if (sleapc_model_load(model_path, &m) || sleapc_npy_read(in_path, &x)) {
        rc = cli_lib_error();
        goto done;
    }
    /* sleap-nn's (B, n_samples=1, C, H, W) layout: squeeze the samples axis. */
    if (x.ndim == 5 && x.shape[1] == 1) {
        for (int d = 1; d < 4; d++)
            x.shape[d] = x.shape[d + 1];
        x.ndim = 4;
    }
    if (x.ndim != 4) {
        rc = cli_error("%s: expected a (B,C,H,W) array, got %d dimensions", in_path, x.ndim);
        goto done;
    }
    if (make_dir(out_dir))
        goto done;
    if (sleapc_runner_create(m, &ro, &r) || sleapc_runner_forward(r, &x)) {
        rc = cli_lib_error();
        goto done;
    }
    for (int i = 0; i < sleapc_runner_n_outputs(r); i++) {
        const char *name;
        sleapc_tensor t;
        char path[4096];
        sleapc_runner_output(r, i, &name, &t);
        if (snprintf(path, sizeof path, "%s/%s.npy", out_dir, name) >= (int)sizeof path) {
            rc = cli_error("output path too long");
            goto done;
        }
        if (sleapc_npy_write(path, &t)) {
            rc = cli_lib_error();
            goto done;
        }
        printf("%s: (", path);
        for (int d = 0; d < t.ndim; d++)
            printf("%s%lld", d ? ", " : "", (long long)t.shape[d]);
        printf(") %s\n", sleapc_dtype_name(t.dtype));
    }
    rc = 0;
done:
    sleapc_tensor_free(&x);
    sleapc_runner_destroy(r);
    sleapc_model_destroy(m);
    return rc;
}
