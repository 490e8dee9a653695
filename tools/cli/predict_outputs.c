/* Where predictions of one input go. sleap-nn's rules (cli.py
 * _default_predictions_path, run.py save_analysis_h5_files): without -o,
 * "<input>.slp" next to the input, or "<labels stem>.<video stem>.predictions.slp"
 * for --video_index on a labels file; analysis HDF5 beside the .slp as
 * "<base>.analysis.h5" where base drops ".predictions.slp" or ".slp". sleapc
 * adds "<base>.csv" and "<base>.json", --output_dir, and for --shard K/N on
 * one input (a range of its frames) "<input>.shard-KK-of-N.slp". */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "predict_outputs.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* path without one of the extensions sleapc writes. */
static void strip_known_ext(const char *path, char *out, size_t n)
{
    static const char *const exts[] = {".predictions.slp", ".slp", ".analysis.h5", ".h5",
                                       ".csv", ".json"};
    snprintf(out, n, "%s", path);
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (ends_with(out, exts[i]) && strlen(out) > strlen(exts[i])) {
            out[strlen(out) - strlen(exts[i])] = '\0';
            return;
        }
}

static int put(char *dst, const char *a, const char *b)
{
    if (snprintf(dst, CLI_PATH_MAX, "%s%s", a, b) >= CLI_PATH_MAX)
        return cli_error("output path too long: %s%s", a, b);
    return 0;
}

int cli_output_paths(const cli_predict_args *a, const char *input, const char *scoped_video,
                     cli_output_list *out)
{
    char primary[CLI_PATH_MAX], tmp[CLI_PATH_MAX];
    out->n = 0;
    if (a->output) {
        snprintf(primary, sizeof primary, "%s", a->output);
    } else {
        snprintf(tmp, sizeof tmp, "%s", input);
        size_t n = strlen(tmp);
        while (n > 1 && tmp[n - 1] == '/')
            tmp[--n] = '\0';
        if (scoped_video) {
            char stem[CLI_PATH_MAX];
            snprintf(stem, sizeof stem, "%s", tmp);
            if (ends_with(stem, ".slp"))
                stem[strlen(stem) - 4] = '\0';
            if (snprintf(primary, sizeof primary, "%s.%s.predictions.slp", stem, scoped_video) >=
                (int)sizeof primary)
                return cli_error("output path too long for %s", input);
        } else if (a->shard_frames) {
            /* Each frame range its own file: "a.mp4.shard-03-of-50.slp",
             * K padded to the width of N so that names sort in order. */
            int width = snprintf(NULL, 0, "%d", a->shard_n);
            if (snprintf(primary, sizeof primary, "%s.shard-%0*d-of-%d.slp", tmp, width,
                         a->shard_k, a->shard_n) >= (int)sizeof primary)
                return cli_error("output path too long for %s", input);
        } else if (put(primary, tmp, ".slp")) {
            return 1;
        }
    }
    if (a->output_dir) {
        snprintf(tmp, sizeof tmp, "%s", primary);
        if (snprintf(primary, sizeof primary, "%s/%s", a->output_dir, base_name(tmp)) >=
            (int)sizeof primary)
            return cli_error("output path too long in %s", a->output_dir);
    }
    if (a->n_formats == 0) {
        snprintf(out->paths[out->n++], CLI_PATH_MAX, "%s", primary);
        return 0;
    }
    char base[CLI_PATH_MAX];
    strip_known_ext(primary, base, sizeof base);
    for (int i = 0; i < a->n_formats; i++) {
        const char *f = a->formats[i];
        char *dst = out->paths[out->n++];
        int rc;
        if (strcmp(f, "slp") == 0)
            rc = ends_with(primary, ".slp") ? put(dst, primary, "") : put(dst, base, ".slp");
        else if (strcmp(f, "analysis_h5") == 0)
            rc = ends_with(primary, ".h5") ? put(dst, primary, "") : put(dst, base, ".analysis.h5");
        else if (strcmp(f, "csv") == 0)
            rc = ends_with(primary, ".csv") ? put(dst, primary, "") : put(dst, base, ".csv");
        else
            rc = ends_with(primary, ".json") ? put(dst, primary, "") : put(dst, base, ".json");
        if (rc)
            return rc;
    }
    return 0;
}
