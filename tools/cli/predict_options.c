/* sleapc predict's options: one table with every `sleap-nn predict` option
 * (sleap_nn/cli.py, _common_inference_options) and sleapc's own. Each row
 * says how the value is read and where it goes; options sleapc cannot honour
 * are listed too, with the reason they are refused. Spellings with '-' and
 * '_' are the same option. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "predict_args.h"

typedef enum opt_kind {
    OPT_FLAG,   /* --x: int field = 1 */
    OPT_BOOL,   /* --x / --no-x: int field = 1 / 0 */
    OPT_INT,    /* int field in [lo, hi] */
    OPT_NUM,    /* double field in [lo, hi] */
    OPT_STR,    /* const char * field */
    OPT_MODEL,  /* -m: appended to models */
    OPT_INPUT,  /* -i: appended to inputs */
    OPT_FORMAT, /* --output_format: comma list, repeatable */
    OPT_REFUSED /* known to sleap-nn, not possible in sleapc: `why` */
} opt_kind;

typedef struct opt_row {
    const char *name;  /* long name, no leading "--" */
    const char *alias; /* "-b", or a second long name ("--peak-conf-threshold") */
    opt_kind kind;
    size_t offset; /* field in cli_predict_args */
    double lo, hi;
} opt_row;

#define F(field) offsetof(cli_predict_args, field)
#define SEGMENTATION "segmentation models and masks are not supported by sleapc (pose models only)"
#define REMOTE                                                                                     \
    "remote inputs take no HTTP headers or download modes here: network streams (-i rtsp://..., "  \
    "http(s)://...) are read live, as FFmpeg opens them"

/* Refusals carry their reason in `alias` when it does not start with '-'. */
static const opt_row opts[] = {
    /* Inputs and outputs. */
    {"data_path", "-i", OPT_INPUT, 0, 0, 0},
    {"model_paths", "-m", OPT_MODEL, 0, 0, 0},
    {"output_path", "-o", OPT_STR, F(output), 0, 0},
    {"output_format", NULL, OPT_FORMAT, 0, 0, 0},
    {"output_dir", NULL, OPT_STR, F(output_dir), 0, 0},
    {"embed", NULL, OPT_STR, F(embed), 0, 0},
    {"restore_source_videos", NULL, OPT_BOOL, F(restore_source_videos), 0, 0},
    {"video_index", NULL, OPT_INT, F(video_index), 0, 100000},
    {"video_input_format", NULL, OPT_STR, F(video_input_format), 0, 0},
    {"frames", NULL, OPT_STR, F(frames), 0, 0},
    {"only_labeled_frames", NULL, OPT_FLAG, F(only_labeled_frames), 0, 0},
    {"only_suggested_frames", NULL, OPT_FLAG, F(only_suggested_frames), 0, 0},
    {"exclude_user_labeled", NULL, OPT_FLAG, F(exclude_user_labeled), 0, 0},
    {"only_predicted_frames", NULL, OPT_FLAG, F(only_predicted_frames), 0, 0},
    {"no_empty_frames", NULL, OPT_FLAG, F(no_empty_frames), 0, 0},
    {"shard", NULL, OPT_STR, F(shard), 0, 0},
    {"stream_to_file", NULL, OPT_STR, F(output), 0, 0},
    {"write_interval", NULL, OPT_INT, F(write_interval), 1, 1e9},
    /* Running. */
    {"device", "-d", OPT_STR, F(device), 0, 0},
    {"runtime", NULL, OPT_STR, F(runtime), 0, 0},
    {"batch_size", "-b", OPT_INT, F(o.batch_size), 1, 4096},
    {"queue_maxsize", NULL, OPT_INT, F(queue_maxsize), 1, 100000},
    {"paf_workers", NULL, OPT_INT, F(paf_workers), 0, 1024},
    {"cpu_workers", NULL, OPT_INT, F(paf_workers), 0, 1024},
    {"backend", NULL, OPT_STR, F(o.backend), 0, 0},
    {"precision", NULL, OPT_STR, F(precision), 0, 0},
    {"conv", NULL, OPT_STR, F(conv), 0, 0},
    {"compat", NULL, OPT_STR, F(compat), 0, 0},
    {"threads", NULL, OPT_INT, F(o.n_threads), 1, 1024},
    {"gui", NULL, OPT_FLAG, F(gui), 0, 0},
    {"verbose", "-v", OPT_FLAG, F(verbose), 0, 0},
    {"quiet", "-q", OPT_FLAG, F(quiet), 0, 0},
    {"progress_interval", NULL, OPT_NUM, F(progress_interval), 0.01, 86400},
    /* Models and preprocessing. */
    {"max_instances", "-n", OPT_INT, F(o.max_instances), 1, 100000},
    {"max_height", NULL, OPT_INT, F(o.max_height), 1, 65536},
    {"max_width", NULL, OPT_INT, F(o.max_width), 1, 65536},
    {"input_scale", NULL, OPT_NUM, F(o.input_scale), 1e-6, 16},
    {"ensure_rgb", NULL, OPT_BOOL, F(ensure_rgb), 0, 0},
    {"ensure_grayscale", NULL, OPT_BOOL, F(ensure_grayscale), 0, 0},
    {"anchor_part", NULL, OPT_STR, F(o.anchor_part), 0, 0},
    {"crop_size", NULL, OPT_INT, F(o.crop_size), 1, 65536},
    {"centroid_only", NULL, OPT_FLAG, F(centroid_only), 0, 0},
    {"centroid_output", NULL, OPT_STR, F(centroid_output), 0, 0},
    /* Peaks and grouping. */
    {"peak_threshold", "--peak-conf-threshold", OPT_NUM, F(o.peak_threshold), 0, 1},
    {"centroid_peak_threshold", NULL, OPT_NUM, F(o.centroid_peak_threshold), 0, 1},
    {"integral_refinement", NULL, OPT_STR, F(integral_refinement), 0, 0},
    {"integral_patch_size", NULL, OPT_INT, F(o.integral_patch_size), 1, 22},
    {"max_edge_length_ratio", NULL, OPT_NUM, F(o.max_edge_length_ratio), 1e-9, 1e9},
    {"dist_penalty_weight", NULL, OPT_NUM, F(o.dist_penalty_weight), 0, 1e9},
    {"n_points", NULL, OPT_INT, F(o.n_points), 1, 1000},
    {"min_instance_peaks", NULL, OPT_NUM, F(o.min_instance_peaks), 0, 1e9},
    {"min_line_scores", NULL, OPT_NUM, F(o.min_line_scores), -1e9, 1e9},
    /* sleap-nn options sleapc cannot honour. */
    {"headers", REMOTE, OPT_REFUSED, 0, 0, 0},
    {"stream_mode", REMOTE, OPT_REFUSED, 0, 0, 0},
    {"video_dataset", "HDF5 videos are not supported: convert the video to a file FFmpeg reads",
     OPT_REFUSED, 0, 0, 0},
    {"backbone_ckpt_path",
     "sleapc loads a model folder's best.ckpt: give another "
     "checkpoint as -m FOLDER/file.ckpt in a folder with its training_config.yaml",
     OPT_REFUSED, 0, 0, 0},
    {"head_ckpt_path", "sleapc loads backbone and heads from one checkpoint (-m)", OPT_REFUSED, 0,
     0, 0},
    {"fg_threshold", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"min_mask_area", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"center_nms_kernel", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"mask_cleanup", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"no_mask_cleanup", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"mask_cleanup_radius", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"distance_gate_alpha", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"merge_fragments", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"no_merge_fragments", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"merge_method", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"merge_thresholds", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"merge_w_valley", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"merge_w_offset", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"merge_dilate", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"full_res_masks", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"no_full_res_masks", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"mask_output", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"polygon_epsilon", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"mask_backend", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"sam_checkpoint", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"sam_model_type", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"sam_prompt_mode", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"sam_anchor_ind", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"sam_disjointify_masks", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"sam3_model_id", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
    {"overlay_path", SEGMENTATION, OPT_REFUSED, 0, 0, 0},
};

#define N_OPTS ((int)(sizeof opts / sizeof opts[0]))
_Static_assert(sizeof opts / sizeof opts[0] <= CLI_MAX_OPTS, "raise CLI_MAX_OPTS");

static bool same_name(const char *a, const char *b, size_t n_b)
{
    size_t i = 0;
    for (; i < n_b && a[i]; i++)
        if ((a[i] == '-' ? '_' : a[i]) != (b[i] == '-' ? '_' : b[i]))
            return false;
    return i == n_b && a[i] == '\0';
}

/* The row of "--name[=v]" (or a short alias), and whether it was the --no-
 * spelling. -1 when unknown. */
static int find_row(const char *arg, bool *negated)
{
    *negated = false;
    if (arg[0] == '-' && arg[1] != '-') {
        for (int r = 0; r < N_OPTS; r++)
            if (opts[r].kind != OPT_REFUSED && opts[r].alias && opts[r].alias[1] != '-' &&
                strncmp(arg, opts[r].alias, 2) == 0 &&
                (arg[2] == '\0' || (opts[r].kind != OPT_FLAG && opts[r].kind != OPT_BOOL)))
                return r;
        return -1;
    }
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    for (int r = 0; r < N_OPTS; r++) {
        const char *alias = opts[r].alias;
        bool long_alias = opts[r].kind != OPT_REFUSED && alias && alias[1] == '-';
        if (same_name(opts[r].name, name, n) || (long_alias && same_name(alias + 2, name, n)))
            return r;
    }
    if (n > 3 && same_name("no_", name, 3)) {
        for (int r = 0; r < N_OPTS; r++)
            if (opts[r].kind == OPT_BOOL && same_name(opts[r].name, name + 3, n - 3)) {
                *negated = true;
                return r;
            }
    }
    return -1;
}

static int unknown_option(const char *arg)
{
    const char *names[N_OPTS];
    for (int r = 0; r < N_OPTS; r++)
        names[r] = opts[r].name;
    char word[128];
    const char *start = arg + (arg[1] == '-' ? 2 : 1);
    size_t n = strcspn(start, "=");
    if (n >= sizeof word)
        n = sizeof word - 1;
    memcpy(word, start, n);
    word[n] = '\0';
    const char *near = cli_nearest_name(word, names, N_OPTS);
    if (near)
        return cli_error("predict: unknown option \"%s\"; did you mean --%s?", arg, near);
    return cli_error("predict: unknown option \"%s\" (see sleapc predict --help)", arg);
}

static bool parse_number(const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    double v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

static int add_input(cli_predict_args *a, const char *path)
{
    if (a->n_inputs == a->inputs_cap) {
        int cap = a->inputs_cap ? 2 * a->inputs_cap : 8;
        const char **bigger = realloc(a->inputs, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return cli_error("out of memory");
        a->inputs = bigger;
        a->inputs_cap = cap;
    }
    a->inputs[a->n_inputs++] = path;
    return 0;
}

static int add_formats(cli_predict_args *a, const char *list)
{
    static const char *const known[] = {"slp", "analysis_h5", "csv", "json"};
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        int k = 0;
        for (; k < 4; k++)
            if (strlen(known[k]) == n && strncmp(p, known[k], n) == 0)
                break;
        if (k == 4)
            return cli_error("--output_format: expected slp, analysis_h5, csv or json "
                             "(comma-separated or repeated), got \"%s\"",
                             list);
        bool dup = false;
        for (int i = 0; i < a->n_formats; i++)
            dup = dup || a->formats[i] == known[k];
        if (!dup)
            a->formats[a->n_formats++] = known[k];
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* The value of the option at argv[*i]: "--x=v", "-bV", or the next word. */
static const char *option_value(int argc, char **argv, int *i, const opt_row *row)
{
    const char *a = argv[*i];
    if (a[1] != '-' && a[2] != '\0')
        return a + 2;
    const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc) {
        cli_error("option --%s needs a value", row->name);
        return NULL;
    }
    return argv[++*i];
}

static int apply(const opt_row *row, cli_predict_args *a, const char *v, bool negated)
{
    char *base = (char *)a;
    double d;
    switch (row->kind) {
    case OPT_FLAG:
        *(int *)(base + row->offset) = 1;
        return 0;
    case OPT_BOOL:
        *(int *)(base + row->offset) = negated ? 0 : 1;
        return 0;
    case OPT_INT:
    case OPT_NUM:
        if (!parse_number(v, row->lo, row->hi, &d) || (row->kind == OPT_INT && d != floor(d)))
            return cli_error("--%s: expected %s from %g to %g, got \"%s\"", row->name,
                             row->kind == OPT_INT ? "an integer" : "a number", row->lo, row->hi, v);
        if (row->kind == OPT_INT)
            *(int *)(base + row->offset) = (int)d;
        else
            *(double *)(base + row->offset) = d;
        return 0;
    case OPT_STR:
        *(const char **)(base + row->offset) = v;
        return 0;
    case OPT_MODEL:
        if (a->n_models == CLI_MAX_MODELS)
            return cli_error("predict: at most three -m model folders (a centroid model, a "
                             "centered-instance or multi-class top-down model, and an "
                             "embedding model)");
        a->models[a->n_models++] = v;
        return 0;
    case OPT_INPUT:
        return add_input(a, v);
    case OPT_FORMAT:
        return add_formats(a, v);
    case OPT_REFUSED:
        break;
    }
    return cli_error("--%s: %s", row->name, row->alias);
}

static bool takes_value(opt_kind k)
{
    return k != OPT_FLAG && k != OPT_BOOL && k != OPT_REFUSED;
}

int cli_predict_parse(int argc, char **argv, cli_predict_args *a)
{
    memset(a, 0, sizeof *a);
    a->o = sleapc_predictor_opts_default();
    a->video_index = -1;
    a->ensure_rgb = a->ensure_grayscale = -1;
    a->restore_source_videos = 0;
    a->progress_interval = 10;
    a->tracking = sleapc_tracking_opts_default();
    a->filters = sleapc_filter_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            cli_predict_usage();
            return -1;
        }
        /* Read by box detectors (for pose models inert, as in sleap-nn); the
         * tracking options below accept it too, for `sleapc track`. */
        if (cli_is_option(arg, "bbox_nms_iou", NULL)) {
            const char *v = cli_option_value(argc, argv, &i, "bbox_nms_iou");
            char *end = NULL;
            double d = v ? strtod(v, &end) : NAN;
            if (!v || end == v || *end || !isfinite(d) || d > 1)
                return v ? cli_error("--bbox_nms_iou: expected a number up to 1, got \"%s\"", v)
                         : 1;
            a->o.bbox_nms_iou = d;
            continue;
        }
        /* slp takes the embedding route (predict_embed.c); none is inert. */
        if (cli_is_option(arg, "save_embeddings", NULL)) {
            const char *v = cli_option_value(argc, argv, &i, "save_embeddings");
            if (!v)
                return 1;
            if (strcmp(v, "slp") != 0 && strcmp(v, "none") != 0)
                return cli_error("--save_embeddings: \"%s\" is not one of none, slp", v);
            a->save_embeddings = strcmp(v, "slp") == 0;
            continue;
        }
        int tr = cli_tracking_option(argc, argv, &i, &a->tracking, &a->filters);
        if (tr < 0)
            return 1;
        if (tr > 0)
            continue;
        if (arg[0] != '-' || arg[1] == '\0') {
            /* More inputs after -i (a shell glob: -i *.mp4). */
            if (a->n_inputs == 0)
                return cli_error("predict: unexpected argument \"%s\" (give inputs with -i)", arg);
            if (add_input(a, arg))
                return 1;
            continue;
        }
        bool negated;
        int r = find_row(arg, &negated);
        if (r < 0)
            return unknown_option(arg);
        const opt_row *row = &opts[r];
        /* --frames given twice: the last counts, as in sleap-nn (click). */
        bool repeatable = row->kind == OPT_MODEL || row->kind == OPT_INPUT ||
                          row->kind == OPT_FORMAT || strcmp(row->name, "frames") == 0;
        if (a->given[r] && !repeatable)
            return cli_error("predict: --%s given twice", row->name);
        a->given[r] = 1;
        const char *v = NULL;
        if (takes_value(row->kind) && !(v = option_value(argc, argv, &i, row)))
            return 1;
        if (!takes_value(row->kind) && arg[1] == '-' && strchr(arg, '='))
            return cli_error("--%s takes no value (got \"%s\")", row->name, arg);
        if (apply(row, a, v, negated))
            return 1;
    }
    return 0;
}

void cli_predict_args_free(cli_predict_args *a)
{
    free(a->inputs);
    a->inputs = NULL;
    a->n_inputs = a->inputs_cap = 0;
}

int cli_predict_given(const cli_predict_args *a, const char *name)
{
    for (int r = 0; r < N_OPTS; r++)
        if (strcmp(opts[r].name, name) == 0)
            return a->given[r];
    return 0;
}

const char *cli_predict_given_outside(const cli_predict_args *a, const char *const *allowed)
{
    for (int r = 0; r < N_OPTS; r++) {
        if (!a->given[r])
            continue;
        bool listed = false;
        for (int k = 0; allowed[k] && !listed; k++)
            listed = strcmp(opts[r].name, allowed[k]) == 0;
        if (!listed)
            return opts[r].name;
    }
    return NULL;
}
