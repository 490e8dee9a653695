/* sleap-nn 0.3.4/0.3.5's tracker choice and MOT options (`sleap-nn predict
 * --tracker ...`), shared by "predict" and "track". sleapc runs the classic
 * tracker only: its choice is accepted, and so is every new option at its
 * default or where it does not apply; the rest is refused with the reason. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Options of sleap-nn's MOT trackers; sleap-nn refuses them with the
 * classic tracker. */
static const char *const MOT_ONLY[] = {"track_buffer",         "min_hits",
                                       "track_high_threshold", "track_low_threshold",
                                       "new_track_threshold",  "min_match_similarity",
                                       "appearance_threshold", "mot_param"};

#define MOT_TRACKERS "sort, bytetrack, ocsort, deepsort, strongsort, botsort, deepocsort"

static int choice_number(const char *name, const char *v, double *out)
{
    char *end = NULL;
    *out = *v ? strtod(v, &end) : NAN;
    if (!*v || *end || !isfinite(*out))
        return cli_error("--%s: expected a number, got \"%s\"", name, v);
    return 0;
}

static int tracker_choice(const char *v)
{
    static const char *const geometric[] = {"sort", "bytetrack", "ocsort"};
    static const char *const appearance[] = {"deepsort", "strongsort", "botsort", "deepocsort"};
    if (strcmp(v, "classic") == 0)
        return 0;
    for (size_t k = 0; k < sizeof geometric / sizeof geometric[0]; k++)
        if (strcmp(v, geometric[k]) == 0)
            return cli_error("--tracker %s is not yet supported by sleapc: it runs sleap-nn's "
                             "classic tracker only (--tracker classic, the default)",
                             v);
    for (size_t k = 0; k < sizeof appearance / sizeof appearance[0]; k++)
        if (strcmp(v, appearance[k]) == 0)
            return cli_error("--tracker %s is not yet supported by sleapc: it runs sleap-nn's "
                             "classic tracker only (--tracker classic, the default). %s "
                             "associates by appearance too, which needs re-ID vectors from an "
                             "embedding model; sleap-nn 0.3.5 refuses it without them",
                             v, v);
    return cli_error("--tracker: \"%s\" is not one of classic, " MOT_TRACKERS, v);
}

int cli_tracker_choice_option(int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    for (size_t k = 0; k < sizeof MOT_ONLY / sizeof MOT_ONLY[0]; k++)
        if (cli_is_option(a, MOT_ONLY[k], NULL))
            return cli_error("--%s only applies to sleap-nn's MOT trackers (" MOT_TRACKERS
                             "), which sleapc does not yet support; sleapc runs the classic "
                             "tracker, with which sleap-nn refuses it too",
                             MOT_ONLY[k]),
                   -1;
    if (cli_is_option(a, "link_tracklets", NULL))
        return cli_error("--link_tracklets (sleap-nn 0.3.5's identity linking after tracking) "
                         "is not yet supported by sleapc"),
               -1;
    const char *v = NULL;
    double d;
    if (cli_is_option(a, "tracker", NULL)) {
        if (!(v = cli_option_value(argc, argv, i, "tracker")))
            return -1;
        return tracker_choice(v) ? -1 : 1;
    }
    if (cli_is_option(a, "save_embeddings", NULL)) {
        if (!(v = cli_option_value(argc, argv, i, "save_embeddings")))
            return -1;
        if (strcmp(v, "none") == 0)
            return 1;
        if (strcmp(v, "slp") == 0)
            return cli_error("--save_embeddings slp: sleapc runs no embedding (re-ID) model and "
                             "keeps no appearance vectors, so it has none to save"),
                   -1;
        return cli_error("--save_embeddings: \"%s\" is not one of none, slp", v), -1;
    }
    if (cli_is_option(a, "appearance_weight", NULL)) {
        if (!(v = cli_option_value(argc, argv, i, "appearance_weight")) ||
            choice_number("appearance_weight", v, &d))
            return -1;
        if (d == 0.0)
            return 1; /* geometry only: sleap-nn's default, inert */
        return cli_error("--appearance_weight %s: blending appearance needs re-ID embeddings, "
                         "which sleapc does not compute or read; only 0 (geometry only, the "
                         "default) is supported",
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
