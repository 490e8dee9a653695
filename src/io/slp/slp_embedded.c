/* Embedded images of package files (formats D.6) and finding the video
 * file of a non-embedded video (D.3 path rules). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/suffix.h"
#include "io/slp/slp_read_impl.h"

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Is v's image dataset inside this file? sleap-io marks embedded videos
 * with filename "."; older package files name themselves instead. */
static bool stored_here(const sleapc_slp *r, sleapc_h5 *f, const sleapc_slp_video *v)
{
    if (!v->dataset || !sleapc__h5_is_dataset(f, v->dataset))
        return false;
    return strcmp(v->filename, ".") == 0 || strcmp(base_name(v->filename), base_name(r->path)) == 0;
}

static void read_size_attr(sleapc_h5 *f, const char *dset, const char *name, int64_t *v)
{
    int64_t x;
    if (*v < 0 && sleapc__h5_attr_exists(f, dset, name) && !sleapc__h5_attr_int(f, dset, name, &x))
        *v = x;
}

sleapc_status sleapc__slp_read_embedded_info(sleapc_slp *r, sleapc_h5 *f, sleapc_slp_video *v)
{
    if (!stored_here(r, f, v))
        return SLEAPC_OK;
    const char *ds = v->dataset[0] == '/' ? v->dataset + 1 : v->dataset;
    size_t n = strlen(ds);
    v->embed_dataset = sleapc__strdup(ds);
    char *numbers = sleapc__malloc(n + 32);
    if (!v->embed_dataset || !numbers) {
        sleapc__free(numbers);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read labels: %s: out of memory", r->path);
    }
    /* "video0/video" -> "video0/frame_numbers". */
    const char *slash = strrchr(ds, '/');
    size_t group_len = slash ? (size_t)(slash - ds) : 0;
    snprintf(numbers, n + 32, "%.*s%sframe_numbers", (int)group_len, ds, slash ? "/" : "");
    sleapc_h5_info info;
    sleapc_status st = sleapc__h5_dataset_info(f, ds, &info);
    if (!st && info.ndim < 1)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "read labels: %s: %s: not a table of images", r->path,
                          ds);
    if (!st) {
        v->n_embedded = info.shape[0];
        char *format = NULL;
        if (sleapc__h5_attr_exists(f, ds, "format") &&
            !sleapc__h5_attr_string(f, ds, "format", &format))
            snprintf(v->image_format, sizeof v->image_format, "%s", format);
        sleapc__free(format);
        read_size_attr(f, ds, "height", &v->height);
        read_size_attr(f, ds, "width", &v->width);
        read_size_attr(f, ds, "channels", &v->channels);
        read_size_attr(f, ds, "frames", &v->n_frames);
    }
    if (!st && sleapc__h5_is_dataset(f, numbers)) {
        void *data = NULL;
        st = sleapc__h5_read(f, numbers, SLEAPC_H5_I64, &data, &info);
        if (!st && info.n_elems != v->n_embedded)
            st = sleapc__fail(SLEAPC_ERR_FORMAT,
                              "read labels: %s: %s has %lld entries for %lld "
                              "images",
                              r->path, numbers, (long long)info.n_elems, (long long)v->n_embedded);
        if (st)
            sleapc__free(data);
        else
            v->frame_numbers = data;
    } else if (!st) {
        /* No index: image i is frame i. */
        v->frame_numbers = sleapc__calloc((size_t)v->n_embedded + 1, sizeof *v->frame_numbers);
        if (!v->frame_numbers)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "read labels: %s: out of memory", r->path);
        for (int64_t i = 0; !st && i < v->n_embedded; i++)
            v->frame_numbers[i] = i;
    }
    /* "video0/video" -> "video0/source_video": the original video, kept
     * when present (predictions made from the package record it). */
    if (!st) {
        snprintf(numbers, n + 32, "%.*s%ssource_video", (int)group_len, ds, slash ? "/" : "");
        if (sleapc__h5_attr_exists(f, numbers, "json") &&
            sleapc__h5_attr_string(f, numbers, "json", &v->source_json))
            sleapc__clear_error();
    }
    sleapc__free(numbers);
    if (!st)
        v->embedded = true;
    return st;
}

sleapc_status sleapc__slp_embedded_frame(sleapc_slp *r, int video, int64_t frame_idx,
                                         const uint8_t **bytes, size_t *n, char *format)
{
    *bytes = NULL;
    *n = 0;
    if (format)
        format[0] = '\0';
    if (!r || video < 0 || video >= r->n_videos)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read embedded frame: no video %d", video);
    const sleapc_slp_video *v = &r->videos[video];
    if (!v->embedded)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "read embedded frame: %s: video %d has no embedded images", r->path,
                            video);
    int64_t row = -1;
    for (int64_t i = 0; i < v->n_embedded && row < 0; i++)
        if (v->frame_numbers[i] == frame_idx)
            row = i;
    if (row < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "read embedded frame: %s: frame %lld of video %d is not stored",
                            r->path, (long long)frame_idx, video);
    uint8_t *buf = NULL;
    size_t size = 0;
    sleapc_status st = sleapc__h5_read_row_bytes(r->h5, v->embed_dataset, row, &buf, &size);
    if (st)
        return sleapc__wrap(st, "read embedded frame %lld", (long long)frame_idx);
    sleapc__free(r->image);
    r->image = buf;
    r->image_size = size;
    *bytes = buf;
    *n = size;
    if (format)
        snprintf(format, 8, "%s", v->image_format);
    return SLEAPC_OK;
}

static bool is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

sleapc_status sleapc__slp_video_path(const sleapc_slp *r, int video, char **out)
{
    *out = NULL;
    if (!r || video < 0 || video >= r->n_videos)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "find video: no video %d", video);
    const sleapc_slp_video *v = &r->videos[video];
    if (strcmp(v->filename, ".") == 0) {
        *out = sleapc__strdup(r->path);
        return *out ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "find video: out of memory");
    }
    /* Paths may come from Windows: read '\' as a separator. */
    char *stored = sleapc__strdup(v->filename);
    size_t dir_len = strrchr(r->path, '/') ? (size_t)(strrchr(r->path, '/') - r->path) : 0;
    size_t cap = strlen(v->filename) + strlen(r->path) + 2;
    char *cand = sleapc__malloc(cap);
    if (!stored || !cand) {
        sleapc__free(stored);
        sleapc__free(cand);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "find video: out of memory");
    }
    for (char *p = stored; *p; p++)
        if (*p == '\\')
            *p = '/';
    const char *base = base_name(stored);
    bool found = false;
    /* sleap-io: the stored path, then the same name beside the labels file;
     * SLEAP also tries the current folder. A relative stored path is also
     * tried from the labels' folder (files moved together with their video
     * tree, e.g. "../videos/x.mp4"). */
    for (int attempt = 0; attempt < 4 && !found; attempt++) {
        if (attempt == 0)
            snprintf(cand, cap, "%s", stored);
        else if (attempt == 1 && dir_len && stored[0] != '/' && !strchr(stored, ':'))
            snprintf(cand, cap, "%.*s/%s", (int)dir_len, r->path, stored);
        else if (attempt == 2 && dir_len)
            snprintf(cand, cap, "%.*s/%s", (int)dir_len, r->path, base);
        else
            snprintf(cand, cap, "%s", base);
        found = base[0] && is_file(cand);
    }
    sleapc_status st = SLEAPC_OK;
    if (found)
        *out = cand;
    else
        st = sleapc__fail(SLEAPC_ERR_IO,
                          "find video: %s: %s not found (nor beside the labels "
                          "or in the current folder)",
                          r->path, v->filename);
    if (!found)
        sleapc__free(cand);
    sleapc__free(stored);
    return st;
}

static const char *skip_slash(const char *ds)
{
    return ds[0] == '/' ? ds + 1 : ds;
}

bool sleapc__slp_video_in_package(const sleapc_slp *r, int video)
{
    if (!r || video < 0 || video >= r->n_videos)
        return false;
    const sleapc_slp_video *v = &r->videos[video];
    return !v->embedded && v->dataset && v->dataset[0] && strcmp(v->filename, ".") != 0 &&
           sleapc__ends_with(v->filename, ".slp");
}

sleapc_status sleapc__slp_open_package_video(const sleapc_slp *r, int video, sleapc_slp **pkg,
                                             int *pkg_video)
{
    *pkg = NULL;
    *pkg_video = -1;
    if (!sleapc__slp_video_in_package(r, video))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "open package video: video %d is not embedded in a package", video);
    const sleapc_slp_video *v = &r->videos[video];
    char *file = NULL;
    sleapc_status st = sleapc__slp_video_path(r, video, &file);
    sleapc_slp *p = NULL;
    if (!st)
        st = sleapc__slp_open(file, &p);
    /* Only images stored in that file count: no chain of references. */
    for (int k = 0; !st && p && k < p->n_videos && *pkg_video < 0; k++)
        if (p->videos[k].embedded &&
            strcmp(skip_slash(p->videos[k].embed_dataset), skip_slash(v->dataset)) == 0)
            *pkg_video = k;
    if (!st && *pkg_video < 0)
        st = sleapc__fail(SLEAPC_ERR_FORMAT,
                          "read labels: %s: video %d names images %s in %s, "
                          "which that file does not hold",
                          r->path, video, v->dataset, file);
    if (st)
        sleapc__slp_close(p);
    else
        *pkg = p;
    sleapc__free(file);
    return st;
}

sleapc_status sleapc__slp_pred_video(const sleapc_slp *r, int video, sleapc_pred_video *out)
{
    const sleapc_slp_video *v = &r->videos[video];
    *out = (sleapc_pred_video){NULL, v->n_frames, v->height, v->width, v->channels,
                               NULL, NULL, v->fps};
    const char *dataset = v->embedded                              ? v->embed_dataset
                          : sleapc__slp_video_in_package(r, video) ? v->dataset
                                                                   : NULL;
    out->filename = sleapc__strdup(v->embedded ? r->path : v->filename ? v->filename : "");
    bool ok = out->filename != NULL;
    if (ok && dataset)
        ok = (out->dataset = sleapc__strdup(dataset)) != NULL;
    if (ok && dataset && v->source_json)
        ok = (out->source_json = sleapc__strdup(v->source_json)) != NULL;
    if (ok)
        return SLEAPC_OK;
    sleapc__free(out->filename);
    sleapc__free(out->dataset);
    *out = (sleapc_pred_video){0};
    return sleapc__fail(SLEAPC_ERR_NOMEM, "read labels: %s: out of memory", r->path);
}
