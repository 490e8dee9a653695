/* Frame selection on SLEAP labels files, by annotation status, as sleap-nn's
 * LabelsProvider selects them (--only_labeled_frames etc.). */
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/slp/slp_read.h"
#include "pipeline/labels_select.h"

static bool frame_has(const sleapc_slp *r, const sleapc_slp_frame *f, bool predicted)
{
    for (int64_t i = 0; i < f->n_instances; i++)
        if (r->instances[f->first_instance + i].predicted == predicted)
            return true;
    return false;
}

/* The frame of video v at frame_idx, or NULL. */
static const sleapc_slp_frame *find_frame(const sleapc_slp *r, int v, int64_t frame_idx)
{
    for (int64_t k = 0; k < r->n_frames; k++)
        if (r->frames[k].video == v && r->frames[k].frame_idx == frame_idx)
            return &r->frames[k];
    return NULL;
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The labels file at path, which must have video video_index. */
static sleapc_status open_video(const char *path, int video_index, sleapc_slp **r)
{
    sleapc_status st = sleapc__slp_open(path, r);
    if (st)
        return st;
    if (video_index < 0 || video_index >= (*r)->n_videos) {
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: no video %d (the file has %d)", path,
                          video_index, (*r)->n_videos);
        sleapc__slp_close(*r);
        *r = NULL;
    }
    return st;
}

sleapc_status sleapc__labels_select_frames(const char *path, int video_index,
                                           sleapc_frame_filter filter, int64_t **frames,
                                           int64_t *n_frames)
{
    *frames = NULL;
    *n_frames = 0;
    sleapc_slp *r = NULL;
    sleapc_status st = open_video(path, video_index, &r);
    if (st)
        return st;
    int64_t cap = r->n_frames + r->n_suggestions + 1, n = 0;
    int64_t *out = sleapc__malloc((size_t)cap * sizeof *out);
    if (!out) {
        sleapc__slp_close(r);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    if (filter == SLEAPC_FRAMES_SUGGESTED) {
        /* Suggestions whose frame has no user instance yet. */
        for (int s = 0; s < r->n_suggestions; s++) {
            const sleapc_slp_suggestion *sg = &r->suggestions[s];
            if (sg->video != video_index)
                continue;
            const sleapc_slp_frame *f = find_frame(r, sg->video, sg->frame_idx);
            if (!f || !frame_has(r, f, false))
                out[n++] = sg->frame_idx;
        }
    } else {
        for (int64_t k = 0; k < r->n_frames; k++) {
            const sleapc_slp_frame *f = &r->frames[k];
            if (f->video != video_index)
                continue;
            bool keep = filter == SLEAPC_FRAMES_ALL_LABELED ||
                        (filter == SLEAPC_FRAMES_USER_LABELED && frame_has(r, f, false)) ||
                        (filter == SLEAPC_FRAMES_WITHOUT_USER && !frame_has(r, f, false)) ||
                        (filter == SLEAPC_FRAMES_PREDICTED && frame_has(r, f, true));
            if (keep)
                out[n++] = f->frame_idx;
        }
    }
    sleapc__slp_close(r);
    /* Ascending, each frame once (predicted in decoding order). */
    qsort(out, (size_t)n, sizeof *out, compare_i64);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i])
            out[m++] = out[i];
    *frames = out;
    *n_frames = m;
    return SLEAPC_OK;
}

sleapc_status sleapc__labels_frames_at_positions(const char *path, int video_index,
                                                 const int64_t *positions, int64_t n_positions,
                                                 int64_t **frames, int64_t *n_frames,
                                                 int64_t *n_beyond)
{
    *frames = NULL;
    *n_frames = 0;
    *n_beyond = 0;
    sleapc_slp *r = NULL;
    sleapc_status st = open_video(path, video_index, &r);
    if (st)
        return st;
    /* Which list entries are asked for: a set, as sleap-nn's. */
    uint8_t *wanted = sleapc__calloc((size_t)(r->n_frames > 0 ? r->n_frames : 1), 1);
    int64_t *out = sleapc__malloc((size_t)(r->n_frames > 0 ? r->n_frames : 1) * sizeof *out);
    int64_t *beyond = sleapc__malloc((size_t)(n_positions > 0 ? n_positions : 1) * sizeof *beyond);
    if (!wanted || !out || !beyond) {
        sleapc__free(wanted);
        sleapc__free(out);
        sleapc__free(beyond);
        sleapc__slp_close(r);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    int64_t n_out = 0, nb = 0;
    for (int64_t i = 0; i < n_positions; i++) {
        int64_t p = positions[i];
        if (p >= 0 && p < r->n_frames)
            wanted[p] = 1;
        else
            beyond[nb++] = p;
    }
    qsort(beyond, (size_t)nb, sizeof *beyond, compare_i64);
    for (int64_t i = 0; i < nb; i++)
        *n_beyond += i == 0 || beyond[i] != beyond[i - 1];
    for (int64_t k = 0; k < r->n_frames; k++)
        if (wanted[k] && r->frames[k].video == video_index)
            out[n_out++] = r->frames[k].frame_idx;
    /* Ascending, each once: the order sleap-nn writes them in. */
    qsort(out, (size_t)n_out, sizeof *out, compare_i64);
    int64_t m = 0;
    for (int64_t i = 0; i < n_out; i++)
        if (m == 0 || out[m - 1] != out[i])
            out[m++] = out[i];
    n_out = m;
    sleapc__free(wanted);
    sleapc__free(beyond);
    sleapc__slp_close(r);
    *frames = out;
    *n_frames = n_out;
    return SLEAPC_OK;
}
