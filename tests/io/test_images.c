/* Image files, folders of images and .npy arrays as frame sources, and
 * sleapc_image_decode. The test writes its own PNG (stored deflate blocks),
 * BMP and TIFF files with known pixels and reads them back exactly; the frame
 * embedded in minimal_instance.pkg.slp must match the reference frame. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/npy/npy_file.h"
#include "sleapc/video.h"
#include "test_util.h"

/* ---- Writers ---- */

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_u8(bytes *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    put(b, &c, 1);
}

static void put_be32(bytes *b, uint32_t v)
{
    unsigned char c[4] = {v >> 24, v >> 16, v >> 8, v};
    put(b, c, 4);
}

static void put_le16(bytes *b, unsigned v)
{
    unsigned char c[2] = {v & 255, (v >> 8) & 255};
    put(b, c, 2);
}

static void put_le32(bytes *b, uint32_t v)
{
    unsigned char c[4] = {v, v >> 8, v >> 16, v >> 24};
    put(b, c, 4);
}

static uint32_t crc32_png(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void png_chunk(bytes *b, const char *type, const unsigned char *data, size_t n)
{
    put_be32(b, (uint32_t)n);
    size_t start = b->n;
    put(b, type, 4);
    if (n)
        put(b, data, n);
    put_be32(b, crc32_png(b->p + start, n + 4));
}

/* A PNG of 8-bit samples (color_type 0 gray, 2 RGB, 6 RGBA), no filtering,
 * the zlib stream made of stored (uncompressed) deflate blocks. */
static bytes png_encode(const unsigned char *px, int w, int h, int color_type)
{
    int c = color_type == 0 ? 1 : color_type == 2 ? 3 : 4;
    bytes raw = {0}, z = {0}, out = {0};
    for (int y = 0; y < h; y++) {
        put_u8(&raw, 0);
        put(&raw, px + (size_t)y * w * c, (size_t)w * c);
    }
    put_u8(&z, 0x78);
    put_u8(&z, 0x01);
    for (size_t off = 0; off < raw.n || off == 0;) {
        size_t len = raw.n - off > 65535 ? 65535 : raw.n - off;
        put_u8(&z, off + len == raw.n ? 1 : 0);
        put_le16(&z, (unsigned)len);
        put_le16(&z, (unsigned)(~len & 0xFFFF));
        put(&z, raw.p + off, len);
        off += len;
        if (len == 0)
            break;
    }
    uint32_t a = 1, s = 0;
    for (size_t i = 0; i < raw.n; i++) {
        a = (a + raw.p[i]) % 65521;
        s = (s + a) % 65521;
    }
    put_be32(&z, (s << 16) | a);
    unsigned char ihdr[13];
    bytes hdr = {0};
    put_be32(&hdr, (uint32_t)w);
    put_be32(&hdr, (uint32_t)h);
    memcpy(ihdr, hdr.p, 8);
    ihdr[8] = 8;
    ihdr[9] = (unsigned char)color_type;
    ihdr[10] = ihdr[11] = ihdr[12] = 0;
    put(&out, "\x89PNG\r\n\x1a\n", 8);
    png_chunk(&out, "IHDR", ihdr, 13);
    png_chunk(&out, "IDAT", z.p, z.n);
    png_chunk(&out, "IEND", NULL, 0);
    free(raw.p);
    free(z.p);
    free(hdr.p);
    return out;
}

/* 24-bit BMP: BGR, bottom-up rows padded to 4 bytes. */
static bytes bmp_encode(const unsigned char *rgb, int w, int h)
{
    bytes b = {0};
    uint32_t row = (uint32_t)(w * 3 + 3) & ~3u;
    put(&b, "BM", 2);
    put_le32(&b, 54 + row * (uint32_t)h);
    put_le32(&b, 0);
    put_le32(&b, 54);
    put_le32(&b, 40);
    put_le32(&b, (uint32_t)w);
    put_le32(&b, (uint32_t)h);
    put_le16(&b, 1);
    put_le16(&b, 24);
    put_le32(&b, 0);
    put_le32(&b, row * (uint32_t)h);
    put_le32(&b, 2835);
    put_le32(&b, 2835);
    put_le32(&b, 0);
    put_le32(&b, 0);
    for (int y = h - 1; y >= 0; y--) {
        for (int x = 0; x < w; x++) {
            const unsigned char *p = rgb + ((size_t)y * w + x) * 3;
            unsigned char bgr[3] = {p[2], p[1], p[0]};
            put(&b, bgr, 3);
        }
        for (uint32_t k = (uint32_t)w * 3; k < row; k++)
            put_u8(&b, 0);
    }
    return b;
}

static void tiff_entry(bytes *b, unsigned tag, unsigned type, uint32_t count, uint32_t value)
{
    put_le16(b, tag);
    put_le16(b, type);
    put_le32(b, count);
    if (type == 3 && count == 1) {
        put_le16(b, value);
        put_le16(b, 0);
    } else {
        put_le32(b, value);
    }
}

/* Baseline little-endian TIFF, uncompressed, one strip, 8-bit RGB. */
static bytes tiff_encode(const unsigned char *rgb, int w, int h)
{
    bytes b = {0};
    const uint32_t n_entries = 9, ifd = 8;
    const uint32_t bps_at = ifd + 2 + n_entries * 12 + 4, data_at = bps_at + 6;
    put(&b, "II*\0", 4);
    put_le32(&b, ifd);
    put_le16(&b, n_entries);
    tiff_entry(&b, 256, 4, 1, (uint32_t)w);             /* ImageWidth */
    tiff_entry(&b, 257, 4, 1, (uint32_t)h);             /* ImageLength */
    tiff_entry(&b, 258, 3, 3, bps_at);                  /* BitsPerSample 8,8,8 */
    tiff_entry(&b, 259, 3, 1, 1);                       /* no compression */
    tiff_entry(&b, 262, 3, 1, 2);                       /* RGB */
    tiff_entry(&b, 273, 4, 1, data_at);                 /* StripOffsets */
    tiff_entry(&b, 277, 3, 1, 3);                       /* SamplesPerPixel */
    tiff_entry(&b, 278, 4, 1, (uint32_t)h);             /* RowsPerStrip */
    tiff_entry(&b, 279, 4, 1, (uint32_t)(w * h * 3));   /* StripByteCounts */
    put_le32(&b, 0);
    put_le16(&b, 8);
    put_le16(&b, 8);
    put_le16(&b, 8);
    put(&b, rgb, (size_t)w * h * 3);
    return b;
}

/* Pixels that identify the frame (seed) and position; R differs from B. */
static unsigned char *make_pixels(int w, int h, int c, int seed)
{
    unsigned char *p = malloc((size_t)w * h * c);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++)
                p[((size_t)y * w + x) * c + k] =
                    (unsigned char)(seed * 41 + y * 7 + x * 3 + k * 85 + (x * y) % 13);
    return p;
}

static bool write_bytes(const char *path, bytes b)
{
    bool ok = test_write_file(path, b.p, b.n);
    free(b.p);
    return ok;
}

/* ---- Tests ---- */

/* Open path and check every frame against expected (n frames of h*w*c). */
static void check_frames(const char *path, int64_t n, int h, int w, int c,
                         unsigned char *const *expected)
{
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(path, &v));
    if (!v)
        return;
    int64_t vh, vw, vc;
    sleapc_video_shape(v, &vh, &vw, &vc);
    CHECK_MSG(sleapc_video_n_frames(v) == n, "%s: %lld frames", path,
              (long long)sleapc_video_n_frames(v));
    CHECK_MSG(vh == h && vw == w && vc == c, "%s: shape %lldx%lldx%lld", path, (long long)vh,
              (long long)vw, (long long)vc);
    size_t fb = (size_t)h * w * c;
    unsigned char *buf = malloc(fb);
    /* Backwards, to show the order is by name, not by reading history. */
    for (int64_t k = n - 1; k >= 0 && vh == h && vw == w && vc == c; k--) {
        CHECK_OK(sleapc_video_read(v, k, buf));
        CHECK_MSG(memcmp(buf, expected[k], fb) == 0, "%s: frame %lld differs", path,
                  (long long)k);
    }
    free(buf);
    sleapc_video_close(v);
}

static void test_png_folders(void)
{
    const int w = 37, h = 23;
    /* Gray frames written out of order, with names that sort differently
     * as plain text; plus files that are not frames. */
    const char *dir = test_tmp_path("gray");
    mkdir(dir, 0700);
    const char *names[] = {"frame_10.png", "frame_2.png", "frame_9.png", "frame_1.png"};
    const int order[] = {3, 1, 2, 0}; /* natural order: 1, 2, 9, 10 */
    unsigned char *gray[4], *want[4];
    for (int i = 0; i < 4; i++) {
        char p[600];
        gray[i] = make_pixels(w, h, 1, i);
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        CHECK(write_bytes(p, png_encode(gray[i], w, h, 0)));
    }
    for (int k = 0; k < 4; k++)
        want[k] = gray[order[k]];
    char p[600];
    snprintf(p, sizeof p, "%s/notes.txt", dir);
    CHECK(test_write_file(p, "x", 1));
    snprintf(p, sizeof p, "%s/.hidden.png", dir);
    CHECK(test_write_file(p, "not a png", 9));
    snprintf(p, sizeof p, "%s/sub.png", dir);
    mkdir(p, 0700);
    check_frames(dir, 4, h, w, 1, want);

    /* One of those files opened alone. */
    snprintf(p, sizeof p, "%s/frame_9.png", dir);
    check_frames(p, 1, h, w, 1, &gray[2]);

    /* RGB (and RGBA, alpha dropped) frames keep 3 channels. */
    const char *rgb_dir = test_tmp_path("rgb");
    mkdir(rgb_dir, 0700);
    unsigned char *rgb[3];
    for (int i = 0; i < 3; i++) {
        rgb[i] = make_pixels(w, h, 3, 10 + i);
        snprintf(p, sizeof p, "%s/img%d.png", rgb_dir, i);
        if (i == 2) {
            unsigned char *rgba = malloc((size_t)w * h * 4);
            for (int j = 0; j < w * h; j++) {
                memcpy(rgba + 4 * j, rgb[i] + 3 * j, 3);
                rgba[4 * j + 3] = (unsigned char)j;
            }
            CHECK(write_bytes(p, png_encode(rgba, w, h, 6)));
            free(rgba);
        } else {
            CHECK(write_bytes(p, png_encode(rgb[i], w, h, 2)));
        }
    }
    check_frames(rgb_dir, 3, h, w, 3, rgb);

    /* sleap-io's rule: R == B everywhere on the first frame means grayscale,
     * and channel 0 is kept even where G differs. */
    const char *rb_dir = test_tmp_path("rb_equal");
    mkdir(rb_dir, 0700);
    unsigned char *rb = make_pixels(w, h, 3, 3);
    unsigned char *r_only = malloc((size_t)w * h);
    for (int j = 0; j < w * h; j++) {
        rb[3 * j + 2] = rb[3 * j];
        r_only[j] = rb[3 * j];
    }
    snprintf(p, sizeof p, "%s/a.png", rb_dir);
    CHECK(write_bytes(p, png_encode(rb, w, h, 2)));
    check_frames(rb_dir, 1, h, w, 1, &r_only);

    /* A frame of another size, and a damaged one, fail on read, by name. */
    snprintf(p, sizeof p, "%s/img3.png", rgb_dir);
    unsigned char *small = make_pixels(w - 1, h, 3, 9);
    CHECK(write_bytes(p, png_encode(small, w - 1, h, 2)));
    bytes broken = png_encode(rgb[0], w, h, 2);
    broken.n /= 2;
    snprintf(p, sizeof p, "%s/img4.png", rgb_dir);
    CHECK(write_bytes(p, broken));
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(rgb_dir, &v));
    unsigned char *buf = malloc((size_t)w * h * 3);
    CHECK(sleapc_video_n_frames(v) == 5);
    CHECK(sleapc_video_read(v, 3, buf) == SLEAPC_ERR_FORMAT);
    CHECK_MSG(strstr(sleapc_last_error(), "img3.png") != NULL, "%s", sleapc_last_error());
    CHECK(sleapc_video_read(v, 4, buf) == SLEAPC_ERR_FORMAT);
    CHECK_MSG(strstr(sleapc_last_error(), "img4.png") != NULL, "%s", sleapc_last_error());
    CHECK_OK(sleapc_video_read(v, 0, buf));
    CHECK(memcmp(buf, rgb[0], (size_t)w * h * 3) == 0);
    CHECK(sleapc_video_read(v, 5, buf) == SLEAPC_ERR_INVALID_ARG);
    sleapc_video_close(v);

    free(buf);
    free(small);
    free(rb);
    free(r_only);
    for (int i = 0; i < 4; i++)
        free(gray[i]);
    for (int i = 0; i < 3; i++)
        free(rgb[i]);
}

static void test_bmp_tiff(void)
{
    const int w = 13, h = 9; /* odd width: BMP rows need padding */
    unsigned char *rgb = make_pixels(w, h, 3, 5);
    const char *bmp = test_tmp_path("frame.bmp");
    CHECK(write_bytes(bmp, bmp_encode(rgb, w, h)));
    check_frames(bmp, 1, h, w, 3, &rgb);
    const char *tif = test_tmp_path("frame.tif");
    CHECK(write_bytes(tif, tiff_encode(rgb, w, h)));
    check_frames(tif, 1, h, w, 3, &rgb);
    free(rgb);
}

static void test_image_decode(void)
{
    const int w = 20, h = 11;
    unsigned char *rgb = make_pixels(w, h, 3, 7);
    bytes png = png_encode(rgb, w, h, 2);
    /* Rows of a fixed-length HDF5 dataset carry zero padding after the image. */
    unsigned char zeros[100] = {0};
    put(&png, zeros, sizeof zeros);
    int64_t ih, iw, ic;
    uint8_t *px = NULL;
    CHECK_OK(sleapc_image_decode(png.p, png.n, &ih, &iw, &ic, &px));
    CHECK(ih == h && iw == w && ic == 3 && px && memcmp(px, rgb, (size_t)w * h * 3) == 0);
    sleapc_free(px);
    free(png.p);

    unsigned char *gray = make_pixels(w, h, 1, 8);
    png = png_encode(gray, w, h, 0);
    CHECK_OK(sleapc_image_decode(png.p, png.n, &ih, &iw, &ic, &px));
    CHECK(ih == h && iw == w && ic == 1 && px && memcmp(px, gray, (size_t)w * h) == 0);
    sleapc_free(px);

    /* Damaged bytes fail cleanly. */
    CHECK(sleapc_image_decode(png.p, png.n / 2, &ih, &iw, &ic, &px) == SLEAPC_ERR_FORMAT);
    CHECK(px == NULL);
    CHECK(sleapc_image_decode((const uint8_t *)"hello", 5, &ih, &iw, &ic, &px) ==
          SLEAPC_ERR_FORMAT);
    CHECK(sleapc_image_decode((const uint8_t *)"BM", 2, &ih, &iw, &ic, &px) ==
          SLEAPC_ERR_FORMAT);
    CHECK(sleapc_image_decode(NULL, 5, &ih, &iw, &ic, &px) == SLEAPC_ERR_INVALID_ARG);
    free(png.p);
    free(gray);
    free(rgb);
}

/* The PNG embedded in minimal_instance.pkg.slp (stored contiguously in the
 * HDF5 file) against the frame the reference decoded from it (lossless). */
static void test_pkg_frame(void)
{
    size_t size = 0;
    unsigned char *f =
        test_read_file(test_data_path("sleap-nn-assets/datasets/minimal_instance.pkg.slp"), &size);
    CHECK(f != NULL);
    const unsigned char *png = NULL, *end = NULL;
    for (size_t i = 0; f && i + 8 <= size && !end; i++) {
        if (!png && memcmp(f + i, "\x89PNG\r\n\x1a\n", 8) == 0)
            png = f + i;
        if (png && memcmp(f + i, "IEND", 4) == 0 && i + 8 <= size)
            end = f + i + 8;
    }
    CHECK_MSG(png && end, "no PNG in the package file");
    sleapc_tensor ref = {0};
    CHECK_OK(sleapc__npy_read(test_data_path("reference/bottomup__pkg_f0000/frame.npy"), &ref));
    if (png && end && ref.data) {
        int64_t ih, iw, ic;
        uint8_t *px = NULL;
        CHECK_OK(sleapc_image_decode(png, (size_t)(end - png), &ih, &iw, &ic, &px));
        CHECK(ref.ndim == 3 && ih == ref.shape[0] && iw == ref.shape[1] && ic == ref.shape[2]);
        CHECK(px && ref.ndim == 3 && memcmp(px, ref.data, (size_t)(ih * iw * ic)) == 0);
        sleapc_free(px);
    }
    sleapc__free(ref.data);
    free(f);
}

/* The JPEG frames of an image-sequence video; the mp4s beside them are not
 * images and are left out. */
static void test_jpeg_folder(void)
{
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(test_data_path("sleap-assets/videos"), &v));
    if (!v)
        return;
    int64_t h, w, c;
    sleapc_video_shape(v, &h, &w, &c);
    CHECK(sleapc_video_n_frames(v) == 3 && h == 320 && w == 560 && c == 3);
    unsigned char *a = malloc((size_t)(h * w * c)), *b = malloc((size_t)(h * w * c));
    CHECK_OK(sleapc_video_read(v, 0, a));
    CHECK_OK(sleapc_video_read(v, 2, b));
    CHECK(memcmp(a, b, (size_t)(h * w * c)) != 0);
    free(a);
    free(b);
    sleapc_video_close(v);
}

static void test_npy_frames(void)
{
    const int n = 3, h = 5, w = 4;
    unsigned char *data = make_pixels(w * 3, h * n, 1, 2); /* n*h*w*3 bytes */
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {n, h, w, 3}, .data = data};
    const char *p4 = test_tmp_path("frames4.npy");
    CHECK_OK(sleapc__npy_write(p4, &t));
    unsigned char *expected[3];
    for (int k = 0; k < n; k++)
        expected[k] = data + (size_t)k * h * w * 3;
    check_frames(p4, n, h, w, 3, expected);

    t.ndim = 3;
    t.shape[0] = n * 3;
    t.shape[1] = h;
    t.shape[2] = w; /* (N, H, W): grayscale frames */
    const char *p3 = test_tmp_path("frames3.npy");
    CHECK_OK(sleapc__npy_write(p3, &t));
    unsigned char *gray[9];
    for (int k = 0; k < 9; k++)
        gray[k] = data + (size_t)k * h * w;
    check_frames(p3, 9, h, w, 1, gray);

    t.shape[0] = h;
    t.shape[1] = w * n;
    t.shape[2] = 3; /* (H, W, 3): one frame */
    const char *p1 = test_tmp_path("frame1.npy");
    CHECK_OK(sleapc__npy_write(p1, &t));
    check_frames(p1, 1, h, w * n, 3, &expected[0]);

    sleapc_video *v = NULL;
    t.ndim = 4; /* (1, H, W, 2): two channels are not a frame */
    t.shape[0] = 1;
    t.shape[1] = h;
    t.shape[2] = w;
    t.shape[3] = 2;
    const char *pbad = test_tmp_path("bad_channels.npy");
    CHECK_OK(sleapc__npy_write(pbad, &t));
    CHECK(sleapc_video_open(pbad, &v) == SLEAPC_ERR_FORMAT);
    CHECK(strstr(sleapc_last_error(), "bad_channels.npy") != NULL);

    float fdata[6] = {0};
    sleapc_tensor tf = {.dtype = SLEAPC_DTYPE_F32, .ndim = 3, .shape = {1, 2, 3}, .data = fdata};
    const char *pf = test_tmp_path("float.npy");
    CHECK_OK(sleapc__npy_write(pf, &tf));
    CHECK(sleapc_video_open(pf, &v) == SLEAPC_ERR_FORMAT);
    CHECK(strstr(sleapc_last_error(), "uint8") != NULL);
    free(data);
}

static void test_bad_images(void)
{
    sleapc_video *v = NULL;
    const char *empty_dir = test_tmp_path("empty_dir");
    mkdir(empty_dir, 0700);
    CHECK(sleapc_video_open(empty_dir, &v) == SLEAPC_ERR_FORMAT);
    CHECK(strstr(sleapc_last_error(), "empty_dir") != NULL);
    CHECK(v == NULL);

    const char *text_dir = test_tmp_path("text_dir");
    mkdir(text_dir, 0700);
    char p[600];
    snprintf(p, sizeof p, "%s/readme.txt", text_dir);
    CHECK(test_write_file(p, "hello", 5));
    CHECK(sleapc_video_open(text_dir, &v) == SLEAPC_ERR_FORMAT);

    const char *fake = test_tmp_path("fake.png");
    CHECK(test_write_file(fake, "this is text", 12));
    CHECK(sleapc_video_open(fake, &v) == SLEAPC_ERR_FORMAT);
    CHECK(strstr(sleapc_last_error(), "fake.png") != NULL);

    /* A broken first image fails the open. */
    const char *broken_dir = test_tmp_path("broken_dir");
    mkdir(broken_dir, 0700);
    unsigned char *px = make_pixels(8, 8, 3, 1);
    bytes png = png_encode(px, 8, 8, 2);
    snprintf(p, sizeof p, "%s/0.png", broken_dir);
    CHECK(test_write_file(p, png.p, png.n - 20));
    CHECK(sleapc_video_open(broken_dir, &v) == SLEAPC_ERR_FORMAT);
    CHECK(strstr(sleapc_last_error(), "0.png") != NULL);

    /* Headers that promise more than the file holds. */
    bytes bmp = bmp_encode(px, 8, 8);
    const char *short_bmp = test_tmp_path("short.bmp");
    CHECK(test_write_file(short_bmp, bmp.p, 60));
    CHECK(sleapc_video_open(short_bmp, &v) == SLEAPC_ERR_FORMAT);
    bytes tif = tiff_encode(px, 8, 8);
    const char *short_tif = test_tmp_path("short.tif");
    CHECK(test_write_file(short_tif, tif.p, 40));
    CHECK(sleapc_video_open(short_tif, &v) == SLEAPC_ERR_FORMAT);
    free(bmp.p);
    free(tif.p);
    free(png.p);
    free(px);
}

/* Every allocation failing in turn: each open reports it and frees the rest
 * (the sanitizer build checks for leaks). */
static void test_alloc_failures(void)
{
    const char *dir = test_tmp_path("gray");
    for (int64_t k = 1; k < 40; k++) {
        sleapc__alloc_fail_after(k);
        sleapc_video *v = NULL;
        sleapc_status st = sleapc_video_open(dir, &v);
        sleapc__alloc_fail_after(0);
        CHECK_MSG(st == SLEAPC_OK || st == SLEAPC_ERR_NOMEM, "allocation %lld: %s", (long long)k,
                  sleapc_last_error());
        CHECK((st == SLEAPC_OK) == (v != NULL));
        sleapc_video_close(v);
    }
}

int main(void)
{
    test_png_folders();
    test_bmp_tiff();
    test_image_decode();
    test_npy_frames();
    test_bad_images();
    test_alloc_failures();
    /* The rest reads the shared data; everything above makes its own files. */
    if (test_data_dir()) {
        test_pkg_frame();
        test_jpeg_folder();
    } else {
        printf("shared data folder not found: package and JPEG checks skipped\n");
    }
    return test_finish();
}
