/* Frames from image files: one image, or a folder whose PNG, JPEG, TIFF and
 * BMP files (sleap-io's ImageVideo.EXTS, any letter case) are the frames in
 * natural name order (frame2.png before frame10.png). Dot files are skipped,
 * as a glob("*") skips them. All images must have the size of the first;
 * the first image decides the channel count by sleap-io's grayscale rule. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/video/frame_source.h"

typedef struct images {
    char **files;
    int64_t n_files;
    int64_t cap;
    sleapc_image_decoder *dec;
    uint8_t *bytes; /* the current file's contents */
    size_t bytes_cap;
} images;

/* Digit runs compare by value, everything else byte by byte; names equal
 * that way (img01 vs img1) fall back to plain order so the sort is total. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            size_t na = 0, nb = 0;
            while (isdigit((unsigned char)a[na]))
                na++;
            while (isdigit((unsigned char)b[nb]))
                nb++;
            if (na != nb)
                return na < nb ? -1 : 1;
            int c = memcmp(a, b, na);
            if (c)
                return c;
            a += na;
            b += nb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int cmp_files(const void *pa, const void *pb)
{
    const char *a = *(char *const *)pa, *b = *(char *const *)pb;
    int c = natural_cmp(a, b);
    return c ? c : strcmp(a, b);
}

static sleapc_status add_file(images *im, const char *dir, const char *name)
{
    if (im->n_files == im->cap) {
        int64_t cap = im->cap ? im->cap * 2 : 64;
        char **p = sleapc__realloc(im->files, (size_t)cap * sizeof *p);
        if (!p)
            return SLEAPC_ERR_NOMEM;
        im->files = p;
        im->cap = cap;
    }
    size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    char *path = sleapc__malloc(n);
    if (!path)
        return SLEAPC_ERR_NOMEM;
    if (dir)
        snprintf(path, n, "%s/%s", dir, name);
    else
        snprintf(path, n, "%s", name);
    im->files[im->n_files++] = path;
    return SLEAPC_OK;
}

static sleapc_status list_folder(images *im, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return sleapc__fail(SLEAPC_ERR_IO, "open video: %s: %s", dir, strerror(errno));
    sleapc_status st = SLEAPC_OK;
    const struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !sleapc__image_file_name(e->d_name))
            continue;
        st = add_file(im, dir, e->d_name);
        struct stat sb;
        /* A folder or socket named like an image is not one. */
        if (!st && (stat(im->files[im->n_files - 1], &sb) != 0 || !S_ISREG(sb.st_mode)))
            sleapc__free(im->files[--im->n_files]);
    }
    closedir(d);
    if (st)
        return sleapc__fail(st, "open video: %s: out of memory", dir);
    if (im->n_files == 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "open video: %s: no PNG, JPEG, TIFF or BMP images in this folder",
                            dir);
    qsort(im->files, (size_t)im->n_files, sizeof *im->files, cmp_files);
    return SLEAPC_OK;
}

/* Read a whole file into im->bytes (grown only when a file is larger). */
static sleapc_status load_file(images *im, const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sleapc__fail(SLEAPC_ERR_IO, "read image: %s: %s", path, strerror(errno));
    struct stat sb;
    sleapc_status st = SLEAPC_OK;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode))
        st = sleapc__fail(SLEAPC_ERR_IO, "read image: %s: not a regular file", path);
    else if (sb.st_size <= 0)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "read image: %s: empty file", path);
    else if ((uint64_t)sb.st_size > (uint64_t)(SIZE_MAX / 2))
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "read image: %s: too large", path);
    size_t size = st ? 0 : (size_t)sb.st_size;
    if (!st && size > im->bytes_cap) {
        uint8_t *p = sleapc__realloc(im->bytes, size);
        if (!p)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "read image: %s: out of memory", path);
        else {
            im->bytes = p;
            im->bytes_cap = size;
        }
    }
    if (!st && fread(im->bytes, 1, size, f) != size)
        st = sleapc__fail(SLEAPC_ERR_IO, "read image: %s: short read", path);
    fclose(f);
    *n = size;
    return st;
}

static sleapc_status decode_file(images *im, int64_t idx, sleapc_decoded_image *img)
{
    size_t n = 0;
    sleapc_status st = load_file(im, im->files[idx], &n);
    if (st)
        return st;
    return sleapc__image_decoder_decode(im->dec, im->bytes, n, im->files[idx], img);
}

static sleapc_status images_read(sleapc_frame_source *src, int64_t idx, uint8_t *dst)
{
    images *im = src->impl;
    sleapc_decoded_image img;
    sleapc_status st = decode_file(im, idx, &img);
    if (st)
        return st;
    if (img.height != src->height || img.width != src->width)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "read frame: %s: image is %lldx%lld, the first image is %lldx%lld",
                            im->files[idx], (long long)img.width, (long long)img.height,
                            (long long)src->width, (long long)src->height);
    sleapc__frame_rgb_to_channels(img.rgb, (size_t)img.height * (size_t)img.width,
                                  src->channels, dst);
    return SLEAPC_OK;
}

static void images_close(sleapc_frame_source *src)
{
    images *im = src->impl;
    if (!im)
        return;
    for (int64_t i = 0; i < im->n_files; i++)
        sleapc__free(im->files[i]);
    sleapc__free(im->files);
    sleapc__image_decoder_destroy(im->dec);
    sleapc__free(im->bytes);
    sleapc__free(im);
    src->impl = NULL;
}

static const struct sleapc_frame_source_ops images_ops = {
    .kind = "images",
    .read = images_read,
    .close = images_close,
};

sleapc_status sleapc__image_source_open(sleapc_frame_source *src, bool is_dir)
{
    images *im = sleapc__calloc(1, sizeof *im);
    if (!im)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "open video: %s: out of memory", src->path);
    src->ops = &images_ops;
    src->impl = im;
    sleapc_status st = is_dir ? list_folder(im, src->path) : add_file(im, NULL, src->path);
    if (st == SLEAPC_ERR_NOMEM && !is_dir)
        return sleapc__fail(st, "open video: %s: out of memory", src->path);
    if (!st)
        st = sleapc__image_decoder_create(&im->dec);
    sleapc_decoded_image img;
    if (!st)
        st = decode_file(im, 0, &img);
    if (st)
        return st;
    src->n_frames = im->n_files;
    src->height = img.height;
    src->width = img.width;
    src->channels = sleapc__frame_rgb_is_gray(img.rgb, (size_t)img.height * (size_t)img.width)
                        ? 1
                        : 3;
    return SLEAPC_OK;
}
