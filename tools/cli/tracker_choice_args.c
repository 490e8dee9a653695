/* sleap-nn 0.3.4/0.3.5's tracker options that sleapc does not run as they
 * are, shared by "predict" and "track": the classic tracker's appearance
 * options are accepted at their defaults or where they do not apply, and
 * refused with the reason otherwise. The trackers (classic, the motion and
 * the appearance MOT trackers) and their options are read by the tracking
 * table (tracking_args.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int choice_number(const char *name, const char *v, double *out)
{
    char *end = NULL;
    *out = *v ? strtod(v, &end) : NAN;
    if (!*v || *end || !isfinite(*out))
        return cli_error("--%s: expected a number, got \"%s\"", name, v);
    return 0;
}

int cli_tracker_choice_option(int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *v = NULL;
    double d;
    if (cli_is_option(a, "save_embeddings", NULL)) {
        if (!(v = cli_option_value(argc, argv, i, "save_embeddings")))
            return -1;
        if (strcmp(v, "none") == 0)
            return 1;
        if (strcmp(v, "slp") == 0)
            return cli_error("--save_embeddings slp needs an embedding (re-ID) model: sleapc "
                             "predict --data_path DETECTIONS.slp -m EMBEDDING_MODEL "
                             "--save_embeddings slp"),
                   -1;
        return cli_error("--save_embeddings: \"%s\" is not one of none, slp", v), -1;
    }
    if (cli_is_option(a, "appearance_weight", NULL)) {
        if (!(v = cli_option_value(argc, argv, i, "appearance_weight")) ||
            choice_number("appearance_weight", v, &d))
            return -1;
        if (d == 0.0)
            return 1; /* geometry only: sleap-nn's default, inert */
        return cli_error("--appearance_weight %s: the classic tracker's blend of re-ID embeddings "
                         "into its geometric score is not supported by sleapc; only 0 (geometry "
                         "only, the default) is. The appearance trackers (--tracker deepsort / "
                         "strongsort / botsort / deepocsort) read the vectors",
                         v),
               -1;
    }
    /* Read by sleap-nn only with a non-zero --appearance_weight, and by its
     * bounding-box detectors (bbox_centernet / bbox_ssd), which are not pose
     * models: accepted and, as there, without effect. */
    static const char *const inert[] = {"euclidean_scale", "bbox_nms_iou"};
    for (size_t k = 0; k < 2; k++) {
        if (!cli_is_option(a, inert[k], NULL))
            continue;
        if (!(v = cli_option_value(argc, argv, i, inert[k])) || choice_number(inert[k], v, &d))
            return -1;
        return 1;
    }
    return 0;
}
