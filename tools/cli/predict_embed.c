/* predict's embedding routes (sleap-nn 0.3.5's cli.py _run_embeddings): a
 * re-ID embedding model among the -m folders embeds detections.
 *   lone:  --data_path X.slp -m EMBEDDING: the detections of X.slp;
 *   fused: -m CENTROID [-m CENTERED_INSTANCE] -m EMBEDDING on a video: the
 *          detection stack predicts first (without tracking), then its
 *          detections are embedded.
 * --save_embeddings slp keeps the vectors in the output; --tracking tracks
 * the embedded detections (the appearance trackers read the vectors). The
 * output defaults to "<input>.embeddings.slp", or "<input>.tracked.slp"
 * when tracking, as sleap-nn names them; the crops go 64 to a forward
 * unless -b is given. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "predict_run.h"
#include "sleapc/embedding.h"

/* sleap-nn's _EMBEDDING_DEFAULT_CROP_BATCH. */
#define CROP_BATCH 64

/* The options the lone route honors (sleap-nn's
 * _EMBEDDING_ROUTE_HONORED_OPTIONS, and sleapc's own run settings); the
 * tracker's options come from the tracking table, checked apart. */
static const char *const lone_honored[] = {
    "model_paths",
    "data_path",
    "output_path",
    "output_dir",
    "device",
    "batch_size",
    "restore_source_videos",
    "headers",
    "stream_mode",
    "stream_to_file",
    "write_interval",
    "cpu_workers",
    "queue_maxsize",
    "paf_workers",
    "gui",
    "backend",
    "threads",
    "precision",
    "conv",
    "compat",
    "verbose",
    "quiet",
    "progress_interval",
    "runtime",
    "max_instances", /* with --tracking: read by the tracker's derived rules */
    NULL};

static const char *input_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int output_for(const cli_predict_args *a, const char *input, char *out, size_t cap)
{
    const char *kind = a->tracking.tracking ? "tracked" : "embeddings";
    int n;
    if (a->output)
        n = snprintf(out, cap, "%s", a->output);
    else if (a->output_dir)
        n = snprintf(out, cap, "%s/%s.%s.slp", a->output_dir, input_name(input), kind);
    else
        n = snprintf(out, cap, "%s.%s.slp", input, kind);
    return n < 0 || (size_t)n >= cap ? cli_error("output path too long for %s", input) : 0;
}

static bool filters_given(const sleapc_filter_opts *f)
{
    const sleapc_filter_opts d = sleapc_filter_opts_default();
    return f->filter_overlapping != d.filter_overlapping ||
           f->filter_min_visible_nodes != d.filter_min_visible_nodes ||
           f->filter_min_visible_node_fraction != d.filter_min_visible_node_fraction ||
           f->filter_min_mean_node_score != d.filter_min_mean_node_score ||
           f->filter_min_instance_score != d.filter_min_instance_score ||
           f->filter_min_centroid_distance != d.filter_min_centroid_distance;
}

static bool is_appearance_tracker(const char *tr)
{
    return tr && (!strcmp(tr, "deepsort") || !strcmp(tr, "strongsort") || !strcmp(tr, "botsort") ||
                  !strcmp(tr, "deepocsort"));
}

/* Identity linking runs: --link_tracklets, or a MOT tracker given a closed
 * set of identities (sleap-nn's TrackerConfig.runs_linking). */
static bool runs_linking(const sleapc_tracking_opts *t, bool mot)
{
    if (t->link_tracklets)
        return true;
    if (!mot)
        return false;
    if (t->max_tracks > 0)
        return true;
    for (int k = 0; k < t->n_mot_params; k++)
        if (!strncmp(t->mot_params[k], "max_tracks=", 11) ||
            !strncmp(t->mot_params[k], "link_tracklets=", 15))
            return true;
    return false;
}

/* Tracking that neither uses nor keeps the vectors (sleap-nn refuses it:
 * the embedding pass would be thrown away). */
static int check_tracking(const cli_predict_args *a)
{
    const sleapc_tracking_opts *t = &a->tracking;
    const bool mot = t->tracker && strcmp(t->tracker, "classic") != 0;
    if (mot && (is_appearance_tracker(t->tracker) || runs_linking(t, mot) || a->save_embeddings))
        return 0;
    if (mot)
        return cli_error("--tracker %s tracks by geometry only, so the embedding model's vectors "
                         "would be computed and then discarded. Use an appearance tracker "
                         "(--tracker botsort / deepocsort / deepsort / strongsort), add "
                         "--link_tracklets (or --max_tracks N) for appearance-based identity "
                         "linking, or add --save_embeddings slp to keep the vectors",
                         t->tracker);
    if (!strcmp(t->features, "embeddings") || runs_linking(t, mot) || a->save_embeddings)
        return 0;
    return cli_error("--features %s tracks by geometry only, so the embedding model's vectors "
                     "would be computed and then discarded. Drop --features to track by "
                     "appearance, add --link_tracklets for appearance-based identity linking, "
                     "use an appearance tracker (--tracker botsort / deepocsort), or add "
                     "--save_embeddings slp to keep the vectors",
                     t->features);
}

/* sleap-nn's _reject_unsupported_embedding_options. */
static int check_route_options(const cli_predict_args *a, bool fused)
{
    if (fused) {
        if (a->shard)
            return cli_error("--shard with an embedding model: the embedding routes run whole "
                             "inputs; leave --shard out");
        for (int k = 0; k < a->n_formats; k++)
            if (strcmp(a->formats[k], "slp") != 0)
                return cli_error("the fused detect->embed route does not support "
                                 "--output_format %s (the embedding route writes a .slp only). "
                                 "Its output is a .slp of the embedded (and optionally tracked) "
                                 "detections; convert it afterwards if you need another format",
                                 a->formats[k]);
        return 0;
    }
    const char *off = cli_predict_given_outside(a, lone_honored);
    if (!off && !a->tracking.tracking && cli_predict_given(a, "max_instances"))
        off = "max_instances"; /* read by the tracker alone */
    if (!off && filters_given(&a->filters))
        off = "filter_*";
    if (off)
        return cli_error("the embedding (re-ID) route does not support --%s. It embeds every "
                         "detection already present in --data_path. Pass a detection model "
                         "alongside the embedding model to detect and embed in one command, in "
                         "which case those options apply to the detection stage",
                         off);
    return 0;
}

/* The detections of `from` embedded (and tracked) into out. */
static int embed_file(const cli_predict_args *a, const sleapc_model *emb,
                      const sleapc_predictor_opts *o, const char *from, const char *out, int64_t *n)
{
    const sleapc_status st =
        a->tracking.tracking
            ? sleapc_embed_and_track(emb, from, out, o, &a->tracking, a->save_embeddings, n)
            : sleapc_embed_detections(emb, from, out, o, n);
    return st ? cli_lib_error() : 0;
}

/* The fused route: in detected into a temporary .slp beside out (removed
 * on every path), then embedded from it. */
static int detect_then_embed(const cli_predict_args *a, const cli_predict_args *det,
                             sleapc_predictor *p, const sleapc_model *emb,
                             const sleapc_predictor_opts *o, const char *in, const char *out,
                             volatile sig_atomic_t *stop, int64_t *n)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.detect-%ld.slp", out, (long)getpid());
    cli_predict_args d = *det;
    d.output = tmp;
    cli_run_totals tot;
    int rc = cli_predict_input(&d, p, in, false, stop, &tot);
    if (rc == 0)
        rc = embed_file(a, emb, o, tmp, out, n);
    remove(tmp);
    return rc;
}

/* The detection stage of the fused route: the other models, no tracking,
 * one .slp, no summary of its own. */
static cli_predict_args detection_args(const cli_predict_args *a, int emb_index)
{
    cli_predict_args d = *a;
    d.n_models = 0;
    for (int i = 0; i < a->n_models; i++)
        if (i != emb_index)
            d.models[d.n_models++] = a->models[i];
    d.tracking.tracking = false;
    d.output_dir = NULL;
    d.formats[0] = "slp";
    d.n_formats = 1;
    return d;
}

int cli_predict_embed(const cli_predict_args *given, const cli_input_list *inputs, int emb_index,
                      volatile sig_atomic_t *stop)
{
    /* With an embedding model the classic tracker tracks by appearance:
     * --features embeddings and --scoring_method cosine_sim unless given
     * (cli.py sets them so). */
    cli_predict_args args = *given;
    const cli_predict_args *a = &args;
    const char *tr = args.tracking.tracker;
    if (!tr || !strcmp(tr, "classic")) {
        if (!args.tracking.features)
            args.tracking.features = "embeddings";
        if (!args.tracking.scoring_method)
            args.tracking.scoring_method = "cosine_sim";
    }
    const bool fused = a->n_models > 1;
    if (!a->save_embeddings && !a->tracking.tracking)
        return cli_error("%s is an embedding (re-ID) model; pass --save_embeddings slp to persist "
                         "the appearance vectors into a .slp, or --tracking to track detections "
                         "by appearance into a .slp",
                         a->models[emb_index]);
    if (check_route_options(a, fused) || (a->tracking.tracking && check_tracking(a)))
        return 1;
    if (a->tracking.tracking && sleapc_tracking_opts_check(&a->tracking, NULL, 0))
        return cli_lib_error();
    if (inputs->n > 1 && a->output)
        return cli_error("predict: -o names one file but there are %d inputs", inputs->n);
    sleapc_model *m = NULL;
    if (sleapc_model_load(a->models[emb_index], &m))
        return cli_lib_error();
    cli_predict_args det = detection_args(a, emb_index);
    sleapc_predictor *p = NULL;
    int rc = 0;
    if (fused && sleapc_predictor_create(det.models, det.n_models, &det.o, &p))
        rc = cli_lib_error();
    sleapc_predictor_opts o = a->o;
    if (!cli_predict_given(a, "batch_size"))
        o.batch_size = CROP_BATCH;
    for (int i = 0; !rc && i < inputs->n; i++) {
        char out[4096];
        const char *in = inputs->paths[i];
        if ((rc = output_for(a, in, out, sizeof out)) ||
            (rc = cli_check_output(out, (const char *const *)inputs->paths, inputs->n)))
            break;
        int64_t n = 0;
        if ((rc = p ? detect_then_embed(a, &det, p, m, &o, in, out, stop, &n)
                    : embed_file(a, m, &o, in, out, &n)))
            break;
        if (!cli_quiet)
            fprintf(stderr, "sleapc: %s: %lld detections embedded; wrote %s to %s\n", in,
                    (long long)n, a->tracking.tracking ? "tracked labels" : "embeddings", out);
    }
    sleapc_predictor_destroy(p);
    sleapc_model_destroy(m);
    return rc;
}

int cli_predict_embedding_index(const cli_predict_args *a, int *index)
{
    *index = -1;
    for (int i = 0; i < a->n_models; i++) {
        sleapc_model *m = NULL;
        if (sleapc_model_load(a->models[i], &m))
            return cli_lib_error();
        const bool emb = sleapc_model_get_type(m) == SLEAPC_MODEL_TYPE_EMBEDDING;
        sleapc_model_destroy(m);
        if (emb && *index >= 0)
            return cli_error("got two embedding (re-ID) models (%s, %s); pass exactly one. Each "
                             "detection has a single appearance-vector slot",
                             a->models[*index], a->models[i]);
        if (emb)
            *index = i;
    }
    return 0;
}
