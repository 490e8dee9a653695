/* Opening a frame source by path: pick the kind, then go through the kind's
 * vtable. Content decides where it is unambiguous (a PNG named .mp4 is still
 * a PNG); the extension decides otherwise, and FFmpeg gets the rest. */
#include "io/video/frame_source.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/compat.h"
#include "core/error.h"
#include "core/suffix.h"

#define NPY_MAGIC "\x93NUMPY"

bool sleapc__image_file_name(const char *path)
{
    static const char *const exts[] = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (sleapc__ends_with_nocase(path, exts[i]))
            return true;
    return false;
}

/* Read the first bytes of path; returns how many (0 for an empty file). */
static sleapc_status read_head(const char *path, uint8_t *head, size_t cap, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sleapc__fail(SLEAPC_ERR_IO, "open video: %s: %s", path, strerror(errno));
    *n = fread(head, 1, cap, f);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad)
        return sleapc__fail(SLEAPC_ERR_IO, "open video: %s: read error", path);
    return SLEAPC_OK;
}

static sleapc_status open_kind(sleapc_frame_source *src, bool is_dir)
{
    if (is_dir)
        return sleapc__image_source_open(src, true);
    uint8_t head[16];
    size_t n = 0;
    sleapc_status st = read_head(src->path, head, sizeof head, &n);
    if (st)
        return st;
    if (n == 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: empty file", src->path);
    if ((n >= 6 && memcmp(head, NPY_MAGIC, 6) == 0) || sleapc__ends_with_nocase(src->path, ".npy"))
        return sleapc__npy_source_open(src);
    if (sleapc__image_sniff(head, n) || sleapc__image_file_name(src->path))
        return sleapc__image_source_open(src, false);
    return sleapc__video_ffmpeg_open(src);
}

sleapc_decode_rule sleapc__decode_rule_of(sleapc_compat c)
{
    return sleapc__compat_is_0_3_3(c) ? SLEAPC_DECODE_BT601_ACCURATE
                                      : SLEAPC_DECODE_FFMPEG_DEFAULT;
}

sleapc_status sleapc__frame_source_open(const char *path, sleapc_frame_source **out)
{
    return sleapc__frame_source_open_rule(path, SLEAPC_DECODE_FFMPEG_DEFAULT, out);
}

sleapc_status sleapc__frame_source_open_rule(const char *path, sleapc_decode_rule rule,
                                             sleapc_frame_source **out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open video: path and out are required");
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sleapc__fail(SLEAPC_ERR_IO, "open video: %s: %s", path, strerror(errno));
    bool is_dir = S_ISDIR(sb.st_mode);
    if (!is_dir && !S_ISREG(sb.st_mode))
        return sleapc__fail(SLEAPC_ERR_IO, "open video: %s: not a regular file or folder", path);

    sleapc_frame_source *src = sleapc__calloc(1, sizeof *src);
    if (!src)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    src->path = sleapc__strdup(path);
    if (!src->path) {
        sleapc__free(src);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    }
    src->decode = rule;
    sleapc_status st = open_kind(src, is_dir);
    if (st) {
        sleapc__frame_source_close(src);
        return st;
    }
    /* Every kind promises these; a violation is a bug in that kind. */
    if (!src->ops || !src->ops->read || src->n_frames < 1 || src->height < 1 ||
        src->width < 1 || (src->channels != 1 && src->channels != 3)) {
        sleapc__frame_source_close(src);
        return sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: inconsistent frame source",
                            path);
    }
    *out = src;
    return SLEAPC_OK;
}

sleapc_status sleapc__frame_source_open_live(const char *path, sleapc_frame_source **out)
{
    return sleapc__frame_source_open_live_rule(path, SLEAPC_DECODE_FFMPEG_DEFAULT, out);
}

sleapc_status sleapc__frame_source_open_live_rule(const char *path, sleapc_decode_rule rule,
                                                  sleapc_frame_source **out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "open video: path and out are required");
    *out = NULL;
    sleapc_frame_source *src = sleapc__calloc(1, sizeof *src);
    if (!src || !(src->path = sleapc__strdup(path))) {
        sleapc__free(src);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", path);
    }
    src->decode = rule;
    sleapc_status st = sleapc__video_live_open(src);
    if (!st && (!src->ops->next || src->height < 1 || src->width < 1 ||
                (src->channels != 1 && src->channels != 3)))
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "open video: %s: inconsistent frame source", path);
    if (st) {
        sleapc__frame_source_close(src);
        return st;
    }
    *out = src;
    return SLEAPC_OK;
}

sleapc_status sleapc__frame_source_next(sleapc_frame_source *src, uint8_t *dst, bool *end)
{
    if (!src || !dst || !end)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read frame: source, dst and end are required");
    if (!src->ops->next)
        return sleapc__fail(SLEAPC_ERR_STATE, "read frame: %s: not a live source", src->path);
    return src->ops->next(src, dst, end);
}

size_t sleapc__frame_source_frame_bytes(const sleapc_frame_source *src)
{
    return (size_t)src->height * (size_t)src->width * (size_t)src->channels;
}

sleapc_status sleapc__frame_source_read(sleapc_frame_source *src, int64_t idx, uint8_t *dst)
{
    if (!src || !dst)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read frame: source and dst are required");
    if (src->live)
        return src->ops->read(src, idx, dst);
    if (idx < 0 || idx >= src->n_frames)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "read frame: %s: frame %lld is out of range (%lld frames)",
                            src->path, (long long)idx, (long long)src->n_frames);
    return src->ops->read(src, idx, dst);
}

void sleapc__frame_source_close(sleapc_frame_source *src)
{
    if (!src)
        return;
    if (src->ops && src->ops->close)
        src->ops->close(src);
    sleapc__free(src->path);
    sleapc__free(src);
}
