/* sleapc predict on one input: pick its frames, open one writer per output
 * format, run, write, and print the summary line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "predict_inputs.h"
#include "predict_outputs.h"
#include "predict_run.h"
#include "sleapc/input.h"
#include "sleapc/writer.h"

/* Batch by batch, the predictor's results go to every writer: the batch just
 * predicted is frames[done - n .. done) of the run (runs go in order). */
typedef struct run_ctx {
    sleapc_predictor *p;
    sleapc_writer *writers[CLI_MAX_FORMATS];
    int n_writers;
    const int64_t *frames;  /* NULL: a live source, frames numbered in order */
    int64_t *numbers;       /* a live source's batch of frame numbers */
    int64_t done, instances;
    sleapc_status status;
    volatile sig_atomic_t *stop;
    cli_progress_state progress;
} run_ctx;

static void on_batch(const sleapc_progress *pr, void *user)
{
    run_ctx *c = user;
    int n = sleapc_predictor_n_frames(c->p);
    for (int k = 0; k < n; k++) {
        int n_inst = 0;
        sleapc_predictor_frame_results(c->p, k, NULL, &n_inst);
        c->instances += n_inst;
    }
    const int64_t *batch = c->frames ? c->frames + c->done : c->numbers;
    for (int k = 0; !c->frames && k < n; k++)
        c->numbers[k] = c->done + k;
    for (int i = 0; i < c->n_writers && !c->status; i++)
        if (pr->done - c->done != n ||
            (c->status = sleapc_writer_add(c->writers[i], c->p, 0, batch)))
            *c->stop = 1;
    c->done = pr->done;
    cli_progress_update(&c->progress, pr);
}

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), k = strlen(ext);
    return n > k && strcmp(path + n - k, ext) == 0;
}

/* The library's list of n frames into the caller's (malloc'd) one. */
static int take_frames(int64_t *lib, int64_t n, int64_t **frames)
{
    *frames = malloc((size_t)(n > 0 ? n : 1) * sizeof **frames);
    if (*frames && n)
        memcpy(*frames, lib, (size_t)n * sizeof **frames);
    sleapc_free(lib);
    return *frames ? 0 : cli_error("out of memory");
}

/* --only_labeled_frames etc. on a labels file, in sleap-nn's priority. */
static int select_frames(const cli_predict_args *a, const char *input, int video,
                         int64_t **frames, int64_t *n)
{
    sleapc_frame_filter f = a->only_labeled_frames     ? SLEAPC_FRAMES_USER_LABELED
                            : a->only_suggested_frames ? SLEAPC_FRAMES_SUGGESTED
                            : a->exclude_user_labeled  ? SLEAPC_FRAMES_WITHOUT_USER
                            : a->only_predicted_frames ? SLEAPC_FRAMES_PREDICTED
                                                       : SLEAPC_FRAMES_ALL_LABELED;
    int64_t *lib = NULL;
    if (sleapc_labels_select_frames(input, video, f, &lib, n))
        return cli_lib_error();
    return take_frames(lib, *n, frames);
}

/* Keep the frames of `list` that are also in `sel` (both ascending for sel). */
static void intersect(int64_t *list, int64_t *n, const int64_t *sel, int64_t n_sel)
{
    int64_t m = 0;
    for (int64_t i = 0; i < *n; i++) {
        int64_t lo = 0, hi = n_sel;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (sel[mid] < list[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n_sel && sel[lo] == list[i])
            list[m++] = list[i];
    }
    *n = m;
}

/* Frames 0 .. n_all - 1 (or --frames) less those in sel (ascending). */
static int all_frames_but(const cli_predict_args *a, int64_t n_all, const int64_t *sel,
                          int64_t n_sel, int64_t **frames, int64_t *n)
{
    if (a->frames) {
        if (cli_parse_frames(a->frames, n_all, frames, n))
            return 1;
    } else {
        *frames = malloc((size_t)(n_all > 0 ? n_all : 1) * sizeof **frames);
        if (!*frames)
            return cli_error("out of memory");
        for (int64_t k = 0; k < n_all; k++)
            (*frames)[k] = k;
        *n = n_all;
    }
    int64_t m = 0;
    for (int64_t i = 0; i < *n; i++) {
        bool drop = false;
        for (int64_t j = 0; j < n_sel && !drop; j++)
            drop = sel[j] == (*frames)[i];
        if (!drop)
            (*frames)[m++] = (*frames)[i];
    }
    *n = m;
    return 0;
}

/* sleap-nn 0.3.5 (#762): a labels file with --video_index predicts its whole
 * video (or --frames), less the user-labelled frames with
 * --exclude_user_labeled; the other frame filters do not apply. */
static int pick_video_frames(const cli_predict_args *a, const char *input, sleapc_input *in,
                             int video, int64_t **frames, int64_t *n)
{
    if (a->only_labeled_frames || a->only_suggested_frames || a->only_predicted_frames)
        fprintf(stderr, "sleapc: warning: %s: with --video_index the whole video is "
                "predicted; --only_labeled_frames, --only_suggested_frames and "
                "--only_predicted_frames do not apply (sleap-nn 0.3.5)\n", input);
    int64_t *user = NULL, n_user = 0;
    if (a->exclude_user_labeled &&
        sleapc_labels_select_frames(input, video, SLEAPC_FRAMES_USER_LABELED, &user, &n_user))
        return cli_lib_error();
    int rc = all_frames_but(a, sleapc_input_n_frames(in), user, n_user, frames, n);
    sleapc_free(user);
    return rc;
}

/* sleap-nn 0.3.5: --frames on a labels file (without --video_index) are
 * positions in its list of labeled frames, not frame numbers; positions past
 * its end are skipped with a warning. */
static int pick_positions(const cli_predict_args *a, const char *input, sleapc_input *in,
                          int video, int64_t **frames, int64_t *n)
{
    int64_t *pos = NULL, n_pos = 0, *lib = NULL, n_beyond = 0;
    int64_t bound = sleapc_input_n_frames(in);
    if (bound < sleapc_input_n_default_frames(in))
        bound = sleapc_input_n_default_frames(in);
    if (cli_parse_frames(a->frames, bound, &pos, &n_pos))
        return 1;
    sleapc_status st = sleapc_labels_frames_at_positions(input, video, pos, n_pos, &lib, n, &n_beyond);
    free(pos);
    if (st)
        return cli_lib_error();
    if (n_beyond)
        fprintf(stderr, "sleapc: warning: %s: --frames on a labels file selects labeled frames by "
                "position (sleap-nn 0.3.5); %lld position(s) past its labeled frames skipped\n",
                input, (long long)n_beyond);
    return take_frames(lib, *n, frames);
}

/* The frames to predict, owned by the caller. */
static int pick_frames(const cli_predict_args *a, const char *input, sleapc_input *in, int video,
                       int64_t **frames, int64_t *n)
{
    bool labels = has_ext(input, ".slp");
    if (labels && a->video_index >= 0 && a->o.compat != SLEAPC_COMPAT_SLEAP_NN_0_3_3)
        return pick_video_frames(a, input, in, video, frames, n);
    bool filtered = a->only_labeled_frames || a->only_suggested_frames ||
                    a->exclude_user_labeled || a->only_predicted_frames;
    int64_t *sel = NULL, n_sel = 0;
    if (filtered && !labels)
        fprintf(stderr, "sleapc: warning: %s: --only_labeled_frames, --only_suggested_frames, "
                "--exclude_user_labeled and --only_predicted_frames need a .slp input; "
                "predicting every frame\n", input);
    bool positions = labels && a->frames && a->o.compat != SLEAPC_COMPAT_SLEAP_NN_0_3_3;
    if (positions && !filtered)
        return pick_positions(a, input, in, video, frames, n);
    if (positions)
        fprintf(stderr, "sleapc: warning: %s: --frames does not apply to a labels file together "
                "with --only_labeled_frames, --only_suggested_frames, --exclude_user_labeled or "
                "--only_predicted_frames (sleap-nn 0.3.5 ignores it)\n", input);
    if (filtered && labels && select_frames(a, input, video, &sel, &n_sel))
        return 1;
    if (a->frames && !positions) {
        if (cli_parse_frames(a->frames, sleapc_input_n_frames(in), frames, n)) {
            free(sel);
            return 1;
        }
        if (sel) {
            intersect(*frames, n, sel, n_sel);
            free(sel);
        }
        return 0;
    }
    if (sel) {
        *frames = sel;
        *n = n_sel;
        return 0;
    }
    *n = sleapc_input_n_default_frames(in);
    *frames = malloc((size_t)(*n > 0 ? *n : 1) * sizeof **frames);
    if (!*frames)
        return cli_error("out of memory");
    if (*n)
        memcpy(*frames, sleapc_input_default_frames(in), (size_t)*n * sizeof **frames);
    return 0;
}

/* "models/x.mp4" -> "x" */
static void stem_of(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, n, "%s", slash ? slash + 1 : path);
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = '\0';
}

int cli_predict_input(const cli_predict_args *a, sleapc_predictor *p, const char *input,
                      bool shard_frames, volatile sig_atomic_t *stop, cli_run_totals *t)
{
    int rc = 1;
    int video = a->video_index < 0 ? 0 : a->video_index;
    sleapc_input *in = NULL;
    int64_t *frames = NULL, n = 0;
    run_ctx c = {.p = p, .stop = stop};
    cli_output_list outs;
    memset(t, 0, sizeof *t);
    sleapc_status ost = sleapc_input_open_compat(input, video, a->o.compat, &in);
    if (ost == SLEAPC_ERR_INTERRUPTED) {
        fprintf(stderr, "\nsleapc: interrupted: %s; nothing was written\n", sleapc_last_error());
        rc = 130;
        goto done;
    }
    if (ost) {
        rc = cli_lib_error();
        goto done;
    }
    sleapc_video_info vi = sleapc_input_video_info(in);
    bool live = sleapc_input_is_live(in);
    if (live) {
        c.numbers = malloc((size_t)sleapc_predictor_batch_size(p) * sizeof *c.numbers);
        if (!c.numbers) {
            rc = cli_error("out of memory");
            goto done;
        }
    } else if (pick_frames(a, input, in, video, &frames, &n)) {
        goto done;
    }
    if (shard_frames && !live)
        cli_frames_shard(frames, &n, a->shard_k, a->shard_n);
    /* On a labels file the model crops around the labels' instances (sleap-nn
     * 0.3.5's ground-truth centroids); an export cannot. */
    bool given = has_ext(input, ".slp") &&
                 strcmp(sleapc_predictor_layer_name(p), "CenteredInstanceLayer") == 0;
    if (a->crops_only > 0 && !given && (vi.height > a->crops_only || vi.width > a->crops_only)) {
        rc = cli_error("%s: a centered-instance model alone predicts on crops of %dx%d, or on a "
                       "labels file around its instances; these frames are %lldx%lld. Give the "
                       "centroid model too (-m CENTROID_DIR -m CENTERED_INSTANCE_DIR)",
                       input, a->crops_only, a->crops_only, (long long)vi.height,
                       (long long)vi.width);
        goto done;
    }
    char scoped[1024];
    bool scope = a->video_index >= 0 && has_ext(input, ".slp");
    if (scope)
        stem_of(vi.filename && *vi.filename ? vi.filename : "video", scoped, sizeof scoped);
    if (cli_output_paths(a, input, scope ? scoped : NULL, &outs))
        goto done;
    for (int i = 0; i < outs.n; i++) {
        if (cli_check_output(outs.paths[i], &input, 1))
            goto done;
        if (sleapc_writer_open(outs.paths[i], p, &vi, 1, &c.writers[i]) ||
            sleapc_writer_set_tracking(c.writers[i], &a->tracking, &a->filters)) {
            rc = cli_lib_error();
            goto done;
        }
        c.n_writers++;
        if (a->no_empty_frames)
            sleapc_writer_set_drop_empty(c.writers[i], true);
    }
    c.frames = frames;
    cli_progress_init(&c.progress, a->progress_mode, a->progress_interval, input);
    sleapc_run_opts ro = sleapc_run_opts_default();
    ro.progress = on_batch;
    ro.user = &c;
    if (a->queue_maxsize > 0) {
        int bs = a->o.batch_size > 0 ? a->o.batch_size : 4;
        ro.queue_depth = (a->queue_maxsize + bs - 1) / bs;
    }
    sleapc_status st = sleapc_predict_input(p, in, frames, n, NULL, &ro);
    if (live && a->progress_mode == CLI_PROGRESS_BAR && c.done > 0)
        fputc('\n', stderr);  /* the bar's line has no end of its own */
    if (c.status) {
        rc = cli_lib_error();
        goto done;
    }
    if (st && st != SLEAPC_ERR_INTERRUPTED) {
        rc = cli_lib_error();
        goto done;
    }
    /* The summary counts what the files hold: tracking's culling
     * (--max_tracks) and the filters happen as they are written. An analysis
     * .h5 holds fewer (one per track and frame), said in its warning: the
     * count is another format's when there is one. */
    int64_t held = -1;
    for (int i = 0; i < c.n_writers; i++) {
        int64_t in_file = 0;
        sleapc_status cs = sleapc_writer_close(c.writers[i], &in_file);
        if (!cs && (held < 0 || !has_ext(outs.paths[i], ".h5")))
            held = in_file;
        c.writers[i] = NULL;
        if (cs) {
            rc = cli_lib_error();
            goto done;
        }
    }
    t->frames = c.done;
    t->instances = held >= 0 ? held : c.instances;
    if (st == SLEAPC_ERR_INTERRUPTED) {
        fprintf(stderr, "\nsleapc: interrupted: %s; the frames done so far are in %s\n",
                sleapc_last_error(), outs.paths[0]);
        rc = 130;
        goto done;
    }
    snprintf(t->outputs, sizeof t->outputs, "%s", outs.paths[0]);
    for (int i = 1; i < outs.n; i++) {
        size_t len = strlen(t->outputs);
        snprintf(t->outputs + len, sizeof t->outputs - len, ", %s", outs.paths[i]);
    }
    rc = 0;
done:
    for (int i = 0; i < c.n_writers; i++)
        sleapc_writer_discard(c.writers[i]);
    free(frames);
    free(c.numbers);
    sleapc_input_close(in);
    return rc;
}
