/* The predictions formats table (see predictions_format.h): extensions,
 * readers and writers of each format, and the atomic writing around them. */
#include "io/predictions/predictions_format.h"

#include <string.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/suffix.h"
#include "io/csv/predictions_csv.h"
#include "io/json/predictions_json.h"
#include "io/predictions/predictions_read_impl.h"
#include "io/slp/slp_write.h"

static sleapc_status write_slp(const sleapc_predictions *head, sleapc_results_source *src,
                               const char *path, int64_t *left_out)
{
    *left_out = 0;
    return sleapc__predictions_write_slp_from(head, src, path);
}

/* Text formats: written into a temporary file, renamed into place. */
static sleapc_status write_text(const sleapc_predictions *head, sleapc_results_source *src,
                                const char *path, bool csv)
{
    sleapc_atomic_file af;
    sleapc_status st = sleapc__atomic_open(path, &af);
    if (st)
        return st;
    st = csv ? sleapc__predictions_write_csv_from(head, src, af.f)
             : sleapc__predictions_write_json_from(head, src, af.f);
    if (st) {
        sleapc__atomic_abort(&af);
        return st;
    }
    return sleapc__atomic_commit(&af);
}

static sleapc_status write_csv(const sleapc_predictions *head, sleapc_results_source *src,
                               const char *path, int64_t *left_out)
{
    *left_out = 0;
    return write_text(head, src, path, true);
}

static sleapc_status write_json(const sleapc_predictions *head, sleapc_results_source *src,
                                const char *path, int64_t *left_out)
{
    *left_out = 0;
    return write_text(head, src, path, false);
}

int64_t sleapc__predictions_h5_unheld(const sleapc_predictions *pr)
{
    /* Without tracks every instance gets a column; with tracks an untracked
     * instance has none, and of one track's instances in a frame the last
     * one stays. */
    int64_t n = 0;
    for (int64_t k = 0; pr->n_tracks > 0 && k < pr->n_frames; k++) {
        const sleapc_pred_frame *f = &pr->frames[k];
        if (f->video != 0)
            continue;
        for (int64_t i = 0; i < f->n; i++) {
            int track = pr->insts[f->first + i].track;
            bool later = false;
            for (int64_t j = i + 1; j < f->n && !later; j++)
                later = pr->insts[f->first + j].track == track;
            n += track < 0 || later;
        }
    }
    return n;
}

/* Instances the analysis .h5 cannot hold, over the whole source. */
static sleapc_status count_unheld(sleapc_results_source *src, int64_t *n)
{
    *n = 0;
    const sleapc_predictions *b = NULL;
    sleapc_status st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    while (!st && b->n_frames > 0) {
        *n += sleapc__predictions_h5_unheld(b);
        st = src->next(src->ctx, &b);
    }
    return st;
}

static sleapc_status write_analysis_h5(const sleapc_predictions *head, sleapc_results_source *src,
                                       const char *path, int64_t *left_out)
{
    int64_t unheld = 0;
    *left_out = 0;
    sleapc_status st = count_unheld(src, &unheld);
    if (st)
        return st;
    /* Said, not silent: a loss would look like a bad model. */
    if (unheld > 0)
        sleapc__log(SLEAPC_LOG_WARN,
                    "%s: the analysis .h5 holds one instance per track and frame; %lld "
                    "untracked or repeated instances are left out",
                    path, (long long)unheld);
    *left_out = unheld;
    /* Dense (frames, tracks, nodes) matrices: written from memory, head's
     * when it holds the frames, else gathered from src under head's header. */
    if (head->n_frames > 0 || src->n_frames == 0)
        return sleapc__predictions_write_analysis_h5(head, path);
    sleapc_predictions all = sleapc__results_header(head);
    st = sleapc__results_gather(src, &all);
    if (!st)
        st = sleapc__predictions_write_analysis_h5(&all, path);
    sleapc__free(all.frames);
    sleapc__free(all.insts);
    sleapc__free(all.points);
    sleapc__free(all.point_scores);
    sleapc__free(all.boxes);
    sleapc__free(all.embeddings);
    return st;
}

static const char *const slp_exts[] = {".slp", NULL};
static const char *const h5_exts[] = {".h5", ".hdf5", NULL};
static const char *const csv_exts[] = {".csv", NULL};
static const char *const json_exts[] = {".json", NULL};

static const sleapc_pred_format formats[] = {
    {SLEAPC_PRED_SLP, "slp", slp_exts, sleapc__pred_read_slp, write_slp},
    {SLEAPC_PRED_ANALYSIS_H5, "analysis_h5", h5_exts, sleapc__pred_read_analysis_h5,
     write_analysis_h5},
    {SLEAPC_PRED_CSV, "csv", csv_exts, NULL, write_csv},
    {SLEAPC_PRED_JSON, "json", json_exts, sleapc__pred_read_json, write_json},
};

const sleapc_pred_format *sleapc__pred_format_of(const char *path)
{
    for (size_t i = 0; path && i < sizeof formats / sizeof formats[0]; i++)
        for (const char *const *e = formats[i].exts; *e; e++)
            if (sleapc__ends_with(path, *e))
                return &formats[i];
    return NULL;
}

sleapc_status sleapc__pred_format_for_output(const char *path, const sleapc_pred_format **out)
{
    *out = sleapc__pred_format_of(path);
    if (!*out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write %s: unknown output format (use .slp, .h5, .csv or .json)",
                            path ? path : "(null)");
    return SLEAPC_OK;
}

bool sleapc__pred_path_is_slp(const char *path)
{
    const sleapc_pred_format *f = sleapc__pred_format_of(path);
    return f && f->id == SLEAPC_PRED_SLP;
}

sleapc_status sleapc__predictions_read(const char *path, sleapc_predictions *pr,
                                       int64_t *n_user_frames)
{
    memset(pr, 0, sizeof *pr);
    if (n_user_frames)
        *n_user_frames = 0;
    const sleapc_pred_format *f = sleapc__pred_format_of(path);
    if (!f)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "read %s: unknown input format (use .slp, .h5 or .json)", path);
    if (!f->read)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "read %s: .%s files are written, not read: use the .slp, .h5 or "
                            ".json predictions",
                            path, f->name);
    sleapc_status st = f->read(path, pr, n_user_frames);
    if (st)
        sleapc__predictions_free(pr);
    return st;
}

sleapc_status sleapc__predictions_open_blocks(const char *path, int64_t block_frames,
                                              sleapc_predictions_reader *r)
{
    memset(r, 0, sizeof *r);
    if (!sleapc__pred_path_is_slp(path)) {
        sleapc_status st = sleapc__predictions_read(path, &r->pr, &r->n_user_frames);
        if (!st)
            sleapc__results_source_memory(&r->pr, &r->mem, &r->src);
        r->in_order = true;
        for (int64_t k = 1; k < r->pr.n_frames; k++) {
            const sleapc_pred_frame *a = &r->pr.frames[k - 1], *b = &r->pr.frames[k];
            if (b->video < a->video || (b->video == a->video && b->frame_idx < a->frame_idx))
                r->in_order = false;
        }
        return st;
    }
    sleapc_status st = sleapc__pred_slp_blocks_open(path, block_frames, &r->pr, &r->n_user_frames,
                                                    &r->in_order, &r->blocks, &r->src);
    if (st)
        sleapc__predictions_free(&r->pr);
    return st;
}

sleapc_status sleapc__predictions_open(const char *path, sleapc_predictions_reader *r)
{
    return sleapc__predictions_open_blocks(path, SLEAPC_PRED_BLOCK_FRAMES, r);
}

void sleapc__predictions_reader_close(sleapc_predictions_reader *r)
{
    sleapc__pred_slp_blocks_close(r->blocks);
    r->blocks = NULL;
    sleapc__predictions_free(&r->pr);
}

sleapc_status sleapc__predictions_write(const sleapc_predictions *head, sleapc_results_source *src,
                                        const char *path, int64_t *left_out)
{
    int64_t n = 0;
    const sleapc_pred_format *f = NULL;
    sleapc_status st = sleapc__pred_format_for_output(path, &f);
    if (!st)
        st = f->write(head, src, path, &n);
    if (left_out)
        *left_out = st ? 0 : n;
    return st;
}

sleapc_status sleapc__predictions_write_path(const sleapc_predictions *pr, const char *path)
{
    sleapc_results_memory mem;
    sleapc_results_source src;
    sleapc__results_source_memory(pr, &mem, &src);
    return sleapc__predictions_write(pr, &src, path, NULL);
}
