/* Writing PNGs and videos: PNGs and lossless (FFV1) videos read back with
 * exactly the pixels written, gray and RGB; lossy H.264 mp4s read back with
 * the frame count and size written and a small mean difference; the frame
 * rate is recorded; and every failure leaves neither the file nor a
 * temporary file behind, and never clobbers an existing file. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/video/video_encode.h"
#include "sleapc/render.h"
#include "sleapc/video.h"
#include "test_util.h"

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Temporary files are named "<target>.tmpXXXXXX"; none may outlive a call. */
static int count_temporaries(void)
{
    DIR *d = opendir(test_tmp_dir());
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, ".tmp") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* Noise-like pixels, different per frame and channel, so that any shuffle,
 * shift or rounding on the way shows up. */
static void fill_noise(uint8_t *px, size_t n, unsigned seed)
{
    uint32_t s = 2463534242u ^ seed;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        px[i] = (uint8_t)(s >> 24);
    }
}

static double mean_abs_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += abs((int)a[i] - (int)b[i]);
    return n ? sum / (double)n : 0;
}

static void check_png(int64_t h, int64_t w, int64_t c)
{
    size_t n = (size_t)(h * w * c);
    uint8_t *px = malloc(n);
    fill_noise(px, n, (unsigned)(h * 31 + c));
    const char *path = test_tmp_path(c == 1 ? "gray.png" : "rgb.png");
    sleapc_tensor img = {
        .dtype = SLEAPC_DTYPE_U8, .ndim = c == 1 ? 2 : 3, .shape = {h, w, c}, .data = px};
    CHECK_OK(sleapc_image_write_png(path, &img));
    size_t size = 0;
    unsigned char *bytes = test_read_file(path, &size);
    CHECK(bytes != NULL);
    int64_t rh = 0, rw = 0, rc = 0;
    uint8_t *back = NULL;
    if (bytes)
        CHECK_OK(sleapc_image_decode(bytes, size, &rh, &rw, &rc, &back));
    CHECK_MSG(rh == h && rw == w && rc == c, "png %lldx%lldx%lld read back as %lldx%lldx%lld",
              (long long)h, (long long)w, (long long)c, (long long)rh, (long long)rw,
              (long long)rc);
    CHECK(back && rh == h && rw == w && rc == c && memcmp(back, px, n) == 0);
    sleapc_free(back);
    free(bytes);
    free(px);
}

/* Read every frame of path and compare with want (n frames of h x w x c). */
static void check_exact_video(const char *path, const uint8_t *want, int64_t n, int64_t h,
                              int64_t w, int64_t c)
{
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(path, &v));
    if (!v)
        return;
    int64_t vh, vw, vc;
    sleapc_video_shape(v, &vh, &vw, &vc);
    CHECK_MSG(sleapc_video_n_frames(v) == n, "%s: %lld frames", path,
              (long long)sleapc_video_n_frames(v));
    CHECK_MSG(vh == h && vw == w && vc == c, "%s: %lldx%lldx%lld", path, (long long)vh,
              (long long)vw, (long long)vc);
    size_t fb = (size_t)(h * w * c);
    uint8_t *buf = malloc(fb);
    for (int64_t k = 0; vh == h && vw == w && vc == c && k < n && k < sleapc_video_n_frames(v);
         k++) {
        CHECK_OK(sleapc_video_read(v, k, buf));
        CHECK_MSG(memcmp(buf, want + (size_t)k * fb, fb) == 0, "%s: frame %lld differs", path,
                  (long long)k);
    }
    free(buf);
    sleapc_video_close(v);
}

static void test_lossless(const char *name, int64_t c)
{
    /* Odd sides: lossless output keeps the size as it is. */
    const int64_t n = 5, h = 37, w = 53;
    size_t fb = (size_t)(h * w * 3);
    uint8_t *px = malloc(fb * (size_t)n);
    fill_noise(px, fb * (size_t)n, 7);
    if (c == 1) {
        /* Gray frames become RGB with equal channels; the reader's grayscale
         * rule turns them back into one channel. */
        fb = (size_t)(h * w);
    }
    const char *path = test_tmp_path(name);
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {n, h, w, c}, .data = px};
    CHECK_OK(sleapc_video_write(path, &t, 25.0, true));
    check_exact_video(path, px, n, h, w, c);
    /* The rate goes into the file: 25 is stored exactly as 25/1. */
    CHECK_MSG(fabs(sleapc__video_probe_fps(path) - 25.0) < 1e-9, "%s: fps %g", path,
              sleapc__video_probe_fps(path));
    free(px);
}

/* A smooth picture that moves a little each frame: what a lossy codec is for. */
static void fill_gradient(uint8_t *px, int64_t h, int64_t w, int64_t k)
{
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            uint8_t *p = px + (size_t)((y * w + x) * 3);
            p[0] = (uint8_t)(40 + (x + 2 * k) * 150 / w);
            p[1] = (uint8_t)(60 + y * 120 / h);
            p[2] = (uint8_t)(200 - (x + y) * 100 / (w + h));
        }
}

/* Odd sides through the lossy path: padded to even by repeating the edge,
 * so the read-back is one larger and the original region is close. */
static void test_lossy_odd_size(void)
{
    const int64_t n = 6, h = 41, w = 63;
    size_t fb = (size_t)(h * w * 3);
    uint8_t *px = malloc(fb * (size_t)n);
    for (int64_t k = 0; k < n; k++)
        fill_gradient(px + (size_t)k * fb, h, w, k);
    const char *path = test_tmp_path("odd.mp4");
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {n, h, w, 3}, .data = px};
    CHECK_OK(sleapc_video_write(path, &t, 30.0, false));
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(path, &v));
    int64_t vh = 0, vw = 0, vc = 0;
    sleapc_video_shape(v, &vh, &vw, &vc);
    CHECK_MSG(sleapc_video_n_frames(v) == n, "odd.mp4: %lld frames",
              (long long)sleapc_video_n_frames(v));
    CHECK_MSG(vh == h + 1 && vw == w + 1 && vc == 3, "odd.mp4: %lldx%lldx%lld", (long long)vh,
              (long long)vw, (long long)vc);
    if (v && vh == h + 1 && vw == w + 1 && vc == 3) {
        uint8_t *buf = malloc((size_t)(vh * vw * 3)), *crop = malloc(fb);
        for (int64_t k = 0; k < n; k++) {
            CHECK_OK(sleapc_video_read(v, k, buf));
            for (int64_t y = 0; y < h; y++)
                memcpy(crop + (size_t)(y * w * 3), buf + (size_t)(y * vw * 3), (size_t)w * 3);
            /* CRF 18 with 4:2:0 chroma on steep colour ramps measures about
             * 2 levels of 255; 4 leaves room for the MPEG-4 fallback. (Frame
             * order is checked exactly by the lossless cases.) */
            double mad = mean_abs_diff(crop, px + (size_t)k * fb, fb);
            CHECK_MSG(mad < 4.0, "odd.mp4 frame %lld: mean abs diff %.3f", (long long)k, mad);
        }
        free(buf);
        free(crop);
    }
    sleapc_video_close(v);
    free(px);
}

/* Real footage through the streaming writer: frames of a robot video
 * re-encoded as H.264 come back with the same count and size, close. */
static void test_lossy_robot(void)
{
    const char *src = test_data_path("sleap-nn-assets/datasets/small_robot.mp4");
    sleapc_video *in = NULL;
    CHECK_OK(sleapc_video_open(src, &in));
    if (!in)
        return;
    int64_t h, w, c;
    sleapc_video_shape(in, &h, &w, &c);
    const int64_t n = 12;
    size_t fb = (size_t)(h * w * c);
    uint8_t *px = malloc(fb * (size_t)n);
    for (int64_t k = 0; k < n; k++)
        CHECK_OK(sleapc_video_read(in, k, px + (size_t)k * fb));
    sleapc_video_close(in);
    double fps = sleapc__video_probe_fps(src);
    CHECK_MSG(fps > 0, "small_robot.mp4: no frame rate");

    const char *path = test_tmp_path("robot.mp4");
    sleapc_video_writer *vw = NULL;
    CHECK_OK(sleapc__video_writer_open(path, h, w, c, fps > 0 ? fps : 30, false, &vw));
    for (int64_t k = 0; vw && k < n; k++)
        CHECK_OK(sleapc__video_writer_write(vw, px + (size_t)k * fb));
    CHECK(!exists(path)); /* not before close */
    CHECK_OK(sleapc__video_writer_close(vw));
    CHECK(count_temporaries() == 0);

    sleapc_video *back = NULL;
    CHECK_OK(sleapc_video_open(path, &back));
    int64_t bh = 0, bw = 0, bc = 0;
    sleapc_video_shape(back, &bh, &bw, &bc);
    CHECK_MSG(sleapc_video_n_frames(back) == n, "robot.mp4: %lld frames",
              (long long)sleapc_video_n_frames(back));
    CHECK(bh == h && bw == w && bc == c);
    if (back && bh == h && bw == w && bc == c) {
        uint8_t *buf = malloc(fb);
        for (int64_t k = 0; k < n && k < sleapc_video_n_frames(back); k++) {
            CHECK_OK(sleapc_video_read(back, k, buf));
            /* A second lossy generation at CRF 18 measures under 2 levels
             * of 255 on average; 4 as above. */
            double mad = mean_abs_diff(buf, px + (size_t)k * fb, fb);
            CHECK_MSG(mad < 4.0, "robot.mp4 frame %lld: mean abs diff %.3f", (long long)k, mad);
        }
        free(buf);
    }
    sleapc_video_close(back);
    CHECK_MSG(fabs(sleapc__video_probe_fps(path) - fps) < 1e-3, "robot.mp4: fps %g, source %g",
              sleapc__video_probe_fps(path), fps);
    free(px);
}

static void test_failures(void)
{
    uint8_t px[8 * 6 * 3] = {0};
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {1, 8, 6, 3}, .data = px};
    sleapc_tensor img = {.dtype = SLEAPC_DTYPE_U8, .ndim = 3, .shape = {8, 6, 3}, .data = px};

    /* A folder that does not exist: nothing can be created. */
    const char *missing = test_tmp_path("no/such/dir/x.mkv");
    CHECK(sleapc_video_write(missing, &t, 30, true) == SLEAPC_ERR_IO);
    CHECK(strstr(sleapc_last_error(), "no/such/dir/x.mkv") != NULL);
    CHECK(sleapc_image_write_png(test_tmp_path("no/such/dir/x.png"), &img) == SLEAPC_ERR_IO);

    /* FFV1 does not go into mp4; not a container; bad rates and shapes. */
    const char *mp4 = test_tmp_path("lossless.mp4");
    CHECK(sleapc_video_write(mp4, &t, 30, true) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(!exists(mp4));
    CHECK(sleapc_video_write(test_tmp_path("x.unknownext"), &t, 30, false) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_video_write(test_tmp_path("x.png"), &t, 30, false) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_video_write(test_tmp_path("x.mkv"), &t, 0, true) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_video_write(test_tmp_path("x.mkv"), &t, NAN, true) == SLEAPC_ERR_INVALID_ARG);
    sleapc_tensor bad = t;
    bad.shape[3] = 2;
    CHECK(sleapc_video_write(test_tmp_path("x.mkv"), &bad, 30, true) == SLEAPC_ERR_INVALID_ARG);
    bad = t;
    bad.shape[0] = 0;
    CHECK(sleapc_video_write(test_tmp_path("x.mkv"), &bad, 30, true) == SLEAPC_ERR_INVALID_ARG);
    bad = t;
    bad.dtype = SLEAPC_DTYPE_F32;
    CHECK(sleapc_video_write(test_tmp_path("x.mkv"), &bad, 30, true) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_video_write(NULL, &t, 30, true) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_image_write_png(test_tmp_path("x.png"), NULL) == SLEAPC_ERR_INVALID_ARG);
    CHECK(!exists(test_tmp_path("x.mkv")) && !exists(test_tmp_path("x.png")));

    /* A writer closed without frames, or discarded, leaves an existing file
     * as it was and no temporary. */
    const char *keep = test_tmp_path("keep.mkv");
    CHECK(test_write_file(keep, "old", 3));
    sleapc_video_writer *w = NULL;
    CHECK_OK(sleapc__video_writer_open(keep, 8, 6, 3, 30, true, &w));
    CHECK(count_temporaries() == 1);
    CHECK(sleapc__video_writer_close(w) == SLEAPC_ERR_STATE);
    w = NULL;
    CHECK_OK(sleapc__video_writer_open(keep, 8, 6, 3, 30, false, &w));
    CHECK_OK(sleapc__video_writer_write(w, px));
    sleapc__video_writer_discard(w);
    sleapc__video_writer_discard(NULL);
    size_t size = 0;
    unsigned char *bytes = test_read_file(keep, &size);
    CHECK(bytes && size == 3 && memcmp(bytes, "old", 3) == 0);
    free(bytes);
    CHECK(count_temporaries() == 0);

    /* Frame rate of things that are not videos: 0, never a failure. */
    CHECK(sleapc__video_probe_fps(keep) == 0);
    CHECK(sleapc__video_probe_fps(test_tmp_path("absent.mp4")) == 0);
}

/* Every allocation failing in turn: a clean NOMEM, no file, no temporary. */
static void test_nomem(void)
{
    uint8_t px[2 * 6 * 4 * 3] = {0};
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {2, 6, 4, 3}, .data = px};
    sleapc_tensor img = {.dtype = SLEAPC_DTYPE_U8, .ndim = 3, .shape = {6, 4, 3}, .data = px};
    const char *paths[2] = {test_tmp_path("nomem.mkv"), test_tmp_path("nomem.png")};
    for (int i = 0; i < 2; i++) {
        int n_fail = 0;
        sleapc_status st = SLEAPC_OK;
        for (int64_t k = 1; k < 100; k++) {
            sleapc__alloc_fail_after(k);
            st = i == 0 ? sleapc_video_write(paths[i], &t, 30, true)
                        : sleapc_image_write_png(paths[i], &img);
            sleapc__alloc_fail_after(0);
            if (!st)
                break;
            n_fail++;
            CHECK_MSG(st == SLEAPC_ERR_NOMEM, "%s: allocation %lld: %s", paths[i], (long long)k,
                      sleapc_last_error());
            CHECK(!exists(paths[i]) && count_temporaries() == 0);
        }
        CHECK_MSG(st == SLEAPC_OK && n_fail >= 2, "%s: %d failures", paths[i], n_fail);
    }
}

int main(void)
{
    test_require_data();
    check_png(29, 43, 3);
    check_png(29, 43, 1);
    check_png(1, 1, 3);
    test_lossless("rgb.mkv", 3);
    test_lossless("gray.mkv", 1);
    test_lossless("rgb.avi", 3);
    test_lossy_odd_size();
    test_lossy_robot();
    test_failures();
    test_nomem();
    CHECK(count_temporaries() == 0);
    return test_finish();
}
