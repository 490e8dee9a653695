/* sleapc track: retrack existing predictions with no model, like sleap-nn
 * predict -i PREDICTIONS.slp --tracking. With models (-m / --model_paths)
 * it is sleap-nn's legacy `track` command, which shares predict's options:
 * it predicts, and tracks with --tracking, exactly as `sleapc predict`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sleapc/tracking.h"

static int usage(void)
{
    printf("usage: sleapc track -i PREDICTIONS -o OUTPUT [-o OUTPUT] [options]\n"
           "       sleapc track --data_path VIDEO --model_paths MODEL_DIR [-o OUTPUT] [options]\n"
           "\n"
           "With models this is sleap-nn's legacy `track` command: it predicts as\n"
           "`sleapc predict` does, with every predict option, and tracks with --tracking\n"
           "(see sleapc predict --help). Without models it retracks predictions:\n"
           "\n"
           "  -i, --data_path PREDICTIONS  a .slp (SLEAP's, sleap-nn's or sleapc's) or a sleapc\n"
           "                               predictions .json\n"
           "  -o, --output_path OUTPUT     .slp, .h5 (analysis), .csv or .json; repeatable\n"
           "  --quiet                      no summary line\n"
           "  --compat V                   0.3.5 | 0.3.3 (0.3.5): the sleap-nn release whose\n"
           "                               tracker is reproduced (docs/compatibility.md)\n"
           "\n"
           "Tracking is on unless --no_tracking (then only the filters run).\n\n");
    cli_tracking_usage();
    return 0;
}

/* -m / --model_paths / --model-paths, with or without "=VALUE". */
static bool names_models(const char *a)
{
    if (strcmp(a, "-m") == 0)
        return true;
    static const char *const long_names[] = {"--model_paths", "--model-paths"};
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(long_names[k]);
        if (strncmp(a, long_names[k], n) == 0 && (a[n] == '\0' || a[n] == '='))
            return true;
    }
    return false;
}

int cmd_track(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (names_models(argv[i]))
            return cmd_predict(argc, argv);
    const char *in_path = NULL, *outs[8];
    int n_out = 0;
    bool quiet = false, no_tracking = false;
    sleapc_tracking_opts t = sleapc_tracking_opts_default();
    sleapc_filter_opts f = sleapc_filter_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return usage();
        const int r = cli_tracking_option(argc, argv, &i, &t, &f);
        if (r < 0)
            return 1;
        if (r > 0)
            continue;
        if (cli_is_option(a, "data_path", "-i") || cli_is_option(a, "input", NULL)) {
            if (!(in_path = cli_option_value(argc, argv, &i, "data_path")))
                return 1;
        } else if (cli_is_option(a, "output_path", "-o") || cli_is_option(a, "output", NULL)) {
            if (n_out == 8)
                return cli_error("track: at most 8 outputs");
            if (!(outs[n_out++] = cli_option_value(argc, argv, &i, "output_path")))
                return 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = true;
        } else if (cli_is_option(a, "compat", NULL)) {
            const char *v = cli_option_value(argc, argv, &i, "compat");
            if (!v)
                return 1;
            if (sleapc_compat_parse(v, &t.compat))
                return cli_error("--compat: %s", sleapc_last_error());
        } else if (strcmp(a, "--no_tracking") == 0) {
            no_tracking = true;
        } else {
            return cli_error("track: unknown option \"%s\" (see sleapc track --help)", a);
        }
    }
    if (!in_path || n_out == 0)
        return cli_error("track: -i PREDICTIONS and -o OUTPUT are required");
    t.tracking = !no_tracking;
    if (sleapc_tracking_opts_check(&t, &f, 0) ||
        sleapc_retrack(in_path, (const char *const *)outs, n_out, &t, &f))
        return cli_lib_error();
    if (!quiet)
        for (int i = 0; i < n_out; i++)
            fprintf(stderr, "sleapc: %s -> %s\n", in_path, outs[i]);
    return 0;
}
