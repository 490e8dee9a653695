/* The presentation-order index. Packets arrive in decode order, where
 * B-frames make timestamps jump back and forth; sorting the timestamps gives
 * the display order, which is what "frame k" means (ffmpeg's output order). */
#include "io/video/video_index.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

/* Grow *buf (of *cap items of size item) to hold one more than n. */
static bool grow(void **buf, int64_t *cap, int64_t n, size_t item)
{
    if (n < *cap)
        return true;
    int64_t new_cap = *cap ? *cap * 2 : 1024;
    if (new_cap > (int64_t)(SIZE_MAX / 2 / item))
        return false;
    void *p = sleapc__realloc(*buf, (size_t)new_cap * item);
    if (!p)
        return false;
    *buf = p;
    *cap = new_cap;
    return true;
}

sleapc_status sleapc__video_index_add(sleapc_video_index *ix, bool has_pts, int64_t pts,
                                      int64_t seek_ts, bool key)
{
    if (!has_pts) {
        ix->missing_pts = true;
        pts = 0;
    }
    void *buf = ix->pts;
    if (!grow(&buf, &ix->cap, ix->n_frames, sizeof *ix->pts))
        return sleapc__fail(SLEAPC_ERR_NOMEM, "index video: out of memory");
    ix->pts = buf;
    ix->pts[ix->n_frames++] = pts;
    if (key && has_pts) {
        buf = ix->keys;
        if (!grow(&buf, &ix->key_cap, ix->n_keys, sizeof *ix->keys))
            return sleapc__fail(SLEAPC_ERR_NOMEM, "index video: out of memory");
        ix->keys = buf;
        ix->keys[ix->n_keys++] = (sleapc_video_key){.pts = pts, .seek_ts = seek_ts, .frame = -1};
    }
    return SLEAPC_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_key(const void *a, const void *b)
{
    return cmp_i64(&((const sleapc_video_key *)a)->pts, &((const sleapc_video_key *)b)->pts);
}

void sleapc__video_index_finish(sleapc_video_index *ix)
{
    ix->by_pts = false;
    if (ix->missing_pts || ix->n_frames == 0 || ix->n_keys == 0)
        return;
    qsort(ix->pts, (size_t)ix->n_frames, sizeof *ix->pts, cmp_i64);
    for (int64_t i = 1; i < ix->n_frames; i++)
        if (ix->pts[i] == ix->pts[i - 1])
            return;
    qsort(ix->keys, (size_t)ix->n_keys, sizeof *ix->keys, cmp_key);
    for (int64_t k = 0; k < ix->n_keys; k++)
        ix->keys[k].frame = sleapc__video_index_frame_of(ix, ix->keys[k].pts);
    ix->by_pts = true;
}

int64_t sleapc__video_index_frame_of(const sleapc_video_index *ix, int64_t pts)
{
    int64_t lo = 0, hi = ix->n_frames;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ix->pts[mid] < pts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->n_frames && ix->pts[lo] == pts ? lo : -1;
}

int64_t sleapc__video_index_key_for(const sleapc_video_index *ix, int64_t frame)
{
    /* Keys are sorted by pts, hence by frame number too. */
    int64_t lo = 0, hi = ix->n_keys;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ix->keys[mid].frame <= frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

void sleapc__video_index_drop_before(sleapc_video_index *ix, int64_t first)
{
    if (first <= 0 || first >= ix->n_frames)
        return;
    memmove(ix->pts, ix->pts + first, (size_t)(ix->n_frames - first) * sizeof *ix->pts);
    ix->n_frames -= first;
    int64_t kept = 0;
    for (int64_t k = 0; k < ix->n_keys; k++) {
        if (ix->keys[k].frame < first)
            continue;
        ix->keys[kept] = ix->keys[k];
        ix->keys[kept++].frame -= first;
    }
    ix->n_keys = kept;
}

void sleapc__video_index_free(sleapc_video_index *ix)
{
    sleapc__free(ix->pts);
    sleapc__free(ix->keys);
    memset(ix, 0, sizeof *ix);
}
