/* Which prediction video is which ground-truth video, and which frames pair
 * up: sleap-io's Labels.match with its AUTO video matcher
 * (VideoMatcher.find_match), then sleap-nn's find_frame_pairs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/evaluation.h"

/* The root of a video's provenance chain: its original video for embedded
 * images that record one (no dataset then), else itself. */
static const char *root_name(const sleapc_ev_video *v, const char **dataset)
{
    *dataset = v->root_filename ? NULL : v->dataset;
    return v->root_filename ? v->root_filename : v->filename;
}

/* path made absolute against the working folder, "." and ".." collapsed
 * (pathlib's resolve() for a path that does not exist). */
static void absolute(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX * 2];
    char cwd[PATH_MAX];
    if (path[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(buf, sizeof buf, "%s/%s", cwd, path);
    else
        snprintf(buf, sizeof buf, "%s", path);
    size_t len = 0;
    out[0] = '\0';
    char *save = NULL;
    for (char *p = strtok_r(buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (!strcmp(p, "."))
            continue;
        if (!strcmp(p, "..")) {
            while (len > 0 && out[len - 1] != '/')
                len--;
            if (len > 0)
                len--;
            out[len] = '\0';
            continue;
        }
        const int k = snprintf(out + len, n - len, "/%s", p);
        if (k < 0 || (size_t)k >= n - len)
            break;
        len += (size_t)k;
    }
    if (!len)
        snprintf(out, n, "/");
}

/* sleap-io _is_same_file_direct on the roots of a and b. */
static bool same_file(const sleapc_ev_video *a, const sleapc_ev_video *b)
{
    const char *da, *db;
    const char *fa = root_name(a, &da), *fb = root_name(b, &db);
    bool same = false;
    struct stat sa, sb;
    if (!stat(fa, &sa) && !stat(fb, &sb))
        same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (!same) {
        char ra[PATH_MAX * 2], rb[PATH_MAX * 2];
        absolute(fa, ra, sizeof ra);
        absolute(fb, rb, sizeof rb);
        same = !strcmp(ra, rb);
    }
    if (!same)
        same = !strcmp(fa, fb);
    if (same && da && db)
        same = !strcmp(da, db);
    return same;
}

/* shapes_compatible is False: frames, height and width known and different.
 * A video of embedded images is compared through its original, whose shape
 * the file may not record: it is never rejected here. */
static bool shapes_conflict(const sleapc_ev_video *a, const sleapc_ev_video *b)
{
    if (a->root_filename || b->root_filename)
        return false;
    if (a->n_frames < 0 || b->n_frames < 0 || a->height < 0 || b->height < 0 || a->width < 0 ||
        b->width < 0)
        return false;
    return a->n_frames != b->n_frames || a->height != b->height || a->width != b->width;
}

/* original_videos_conflict: both record an original, and not the same file. */
static bool provenance_conflict(const sleapc_ev_video *a, const sleapc_ev_video *b)
{
    return a->root_filename && b->root_filename && !same_file(a, b);
}

/* The last depth components of a path ('\' read as '/') into out; false
 * when it has fewer. */
static bool leaf(const char *path, int depth, char *out, size_t n)
{
    char buf[PATH_MAX * 2];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf; *p; p++)
        if (*p == '\\')
            *p = '/';
    const char *parts[256];
    int np = 0;
    if (buf[0] == '/')
        parts[np++] = "/";
    char *save = NULL;
    for (char *p = strtok_r(buf, "/", &save); p && np < 256; p = strtok_r(NULL, "/", &save))
        if (strcmp(p, ".") || np == 0)
            parts[np++] = p;
    if (np < depth)
        return false;
    size_t len = 0;
    out[0] = '\0';
    for (int k = np - depth; k < np; k++) {
        const int w = snprintf(out + len, n - len, k > np - depth ? "/%s" : "%s", parts[k]);
        if (w < 0 || (size_t)w >= n - len)
            return false;
        len += (size_t)w;
    }
    return true;
}

static int max_depth(const char *path)
{
    int d = 1;
    for (const char *p = path; *p; p++)
        d += *p == '/' || *p == '\\';
    return d;
}

/* VideoMatcher(AUTO).find_match(incoming, candidates). */
static int find_match(const sleapc_ev_labels *gt, const sleapc_ev_video *in, const char **rule)
{
    bool viable[1024];
    const int n = gt->n_videos < 1024 ? gt->n_videos : 1024;
    for (int c = 0; c < n; c++)
        viable[c] =
            !shapes_conflict(&gt->videos[c], in) && !provenance_conflict(&gt->videos[c], in);
    for (int c = 0; c < n; c++)
        if (viable[c] && same_file(&gt->videos[c], in)) {
            *rule = "same_file";
            return c;
        }
    for (int c = 0; c < n; c++)
        if (viable[c] && !strcmp(gt->videos[c].filename, in->filename)) {
            *rule = "path";
            return c;
        }
    int depth_max = max_depth(in->filename);
    for (int c = 0; c < n; c++)
        if (max_depth(gt->videos[c].filename) > depth_max)
            depth_max = max_depth(gt->videos[c].filename);
    for (int depth = 1; depth <= depth_max; depth++) {
        char a[PATH_MAX * 2], b[PATH_MAX * 2];
        if (!leaf(in->filename, depth, a, sizeof a))
            continue;
        int found = -1, n_found = 0;
        for (int c = 0; c < n; c++)
            if (viable[c] && leaf(gt->videos[c].filename, depth, b, sizeof b) && !strcmp(a, b)) {
                found = c;
                n_found++;
            }
        if (n_found == 1) {
            *rule = "leaf_path";
            return found;
        }
    }
    *rule = "none";
    return -1;
}

sleapc_status sleapc__ev_match_videos(sleapc_ev_result *r)
{
    const int n = r->pr->n_videos;
    r->video_map = sleapc__calloc((size_t)n + 1, sizeof *r->video_map);
    r->video_rule = sleapc__calloc((size_t)n + 1, sizeof *r->video_rule);
    if (!r->video_map || !r->video_rule)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    r->n_videos_matched = 0;
    for (int v = 0; v < n; v++) {
        r->video_map[v] = find_match(r->gt, &r->pr->videos[v], &r->video_rule[v]);
        r->n_videos_matched += r->video_map[v] >= 0;
    }
    return SLEAPC_OK;
}

bool sleapc__ev_gt_considered(const sleapc_ev_labels *gt, int64_t i, bool user_labels_only)
{
    return !user_labels_only || !gt->insts[i].predicted;
}

typedef struct frame_key {
    int video;
    int64_t frame_idx, index;
} frame_key;

static int cmp_key(const void *pa, const void *pb)
{
    const frame_key *a = pa, *b = pb;
    if (a->video != b->video)
        return a->video < b->video ? -1 : 1;
    if (a->frame_idx != b->frame_idx)
        return a->frame_idx < b->frame_idx ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

sleapc_status sleapc__ev_frame_pairs(sleapc_ev_result *r, bool user_labels_only)
{
    const sleapc_ev_labels *gt = r->gt, *pr = r->pr;
    /* the prediction frames sorted by (video, frame), to find each GT frame's */
    frame_key *keys = sleapc__malloc(sizeof *keys * (size_t)(pr->n_frames + 1));
    r->frame_pairs =
        sleapc__calloc((size_t)gt->n_frames * (size_t)(pr->n_videos > 0 ? pr->n_videos : 1) + 1,
                       sizeof *r->frame_pairs);
    if (!keys || !r->frame_pairs) {
        sleapc__free(keys);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    }
    for (int64_t f = 0; f < pr->n_frames; f++)
        keys[f] = (frame_key){pr->frames[f].video, pr->frames[f].frame_idx, f};
    qsort(keys, (size_t)pr->n_frames, sizeof *keys, cmp_key);
    r->n_frame_pairs = 0;
    for (int vp = 0; vp < pr->n_videos; vp++) {
        const int vg = r->video_map[vp];
        if (vg < 0)
            continue;
        for (int64_t f = 0; f < gt->n_frames; f++) {
            const sleapc_ev_frame *gf = &gt->frames[f];
            if (gf->video != vg)
                continue;
            int64_t n_gt = 0;
            for (int64_t i = gf->first; i < gf->first + gf->n; i++)
                n_gt += sleapc__ev_gt_considered(gt, i, user_labels_only);
            if (user_labels_only && n_gt == 0)
                continue;
            /* labels_pr.find(video_pr, frame_idx): exactly one frame pairs */
            int64_t lo = 0, hi = pr->n_frames;
            while (lo < hi) {
                const int64_t mid = (lo + hi) / 2;
                const frame_key k = {vp, gf->frame_idx, -1};
                if (cmp_key(&keys[mid], &k) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            int64_t n_found = 0;
            while (lo + n_found < pr->n_frames && keys[lo + n_found].video == vp &&
                   keys[lo + n_found].frame_idx == gf->frame_idx)
                n_found++;
            if (n_found != 1)
                continue;
            r->frame_pairs[r->n_frame_pairs++] = (sleapc_ev_frame_pair){f, keys[lo].index, n_gt};
        }
    }
    sleapc__free(keys);
    return SLEAPC_OK;
}
