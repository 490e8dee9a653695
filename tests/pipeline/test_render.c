/* Drawing and `sleapc render`: lines and discs colour the pixels they cover
 * and nothing else, missing points draw nothing, coordinates far outside the
 * frame are clipped safely; the CLI draws a .slp written by sleapc on frames
 * of a robot video as a PNG (exactly the source frame away from the poses),
 * an mp4 and a lossless mkv, and refuses bad arguments with exit status 1. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/slp_fixture.h"
#include "core/alloc.h"
#include "io/video/frame_source.h"
#include "pipeline/render/render_draw.h"
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

static bool pixel_is(const uint8_t *rgb, int64_t width, int64_t x, int64_t y, const uint8_t c[3])
{
    const uint8_t *p = rgb + (size_t)((y * width + x) * 3);
    return p[0] == c[0] && p[1] == c[1] && p[2] == c[2];
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* ---- Drawing ---- */

enum { H = 20, W = 30 };

static void test_lines(void)
{
    static uint8_t px[H * W * 3];
    sleapc_draw_image img = {.rgb = px, .height = H, .width = W};
    const uint8_t c[3] = {200, 40, 90};

    memset(px, 0, sizeof px);
    sleapc__draw_line(&img, 2, 10, 25, 10, 1.0, c);
    bool on = true, beside = true;
    for (int x = 2; x <= 25; x++) {
        on = on && pixel_is(px, W, x, 10, c);
        /* One pixel off a 1-px line: distance 1 = half width + the 0.5 ramp. */
        beside = beside && all_zero(px + (9 * W + x) * 3, 3) && all_zero(px + (11 * W + x) * 3, 3);
    }
    CHECK(on);
    CHECK(beside);
    CHECK(all_zero(px + (10 * W + 27) * 3, 3) && all_zero(px + (10 * W + 0) * 3, 3));

    memset(px, 0, sizeof px);
    sleapc__draw_line(&img, 0, 0, 19, 19, 1.0, c);
    bool diag = true;
    for (int k = 0; k < 20; k++)
        diag = diag && pixel_is(px, W, k, k, c);
    CHECK(diag);
    CHECK(all_zero(px + (0 * W + 10) * 3, 3));

    /* A thick line blends its rim: partly covered pixels lie between. */
    memset(px, 0, sizeof px);
    sleapc__draw_line(&img, 5, 5.3, 20, 5.3, 3.0, c);
    const uint8_t *rim = px + (7 * W + 12) * 3;
    CHECK(pixel_is(px, W, 12, 5, c) && rim[0] > 0 && rim[0] < c[0]);
}

static void test_missing_points(void)
{
    static uint8_t a[H * W * 3], b[H * W * 3];
    sleapc_draw_image ia = {.rgb = a, .height = H, .width = W};
    sleapc_draw_image ib = {.rgb = b, .height = H, .width = W};
    const uint8_t c[3] = {10, 220, 30};
    const int edges[][2] = {{0, 1}, {1, 2}, {0, 2}, {2, 7}, {-1, 0}};
    sleapc_draw_style s = {.node_radius_px = 2, .line_width_px = 1};

    /* Node 1 missing: its edges vanish, the rest is drawn as without it. */
    double xy[6] = {3, 3, NAN, NAN, 15, 12};
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    sleapc__draw_pose(&ia, xy, 3, edges, 5, &s, c);
    sleapc__draw_line(&ib, 3, 3, 15, 12, 1, c);
    sleapc__draw_disc(&ib, 3, 3, 2, c);
    sleapc__draw_disc(&ib, 15, 12, 2, c);
    CHECK(memcmp(a, b, sizeof a) == 0);

    /* Every point missing: nothing at all. */
    double none[6] = {NAN, NAN, NAN, 4, INFINITY, 5};
    memset(a, 0, sizeof a);
    sleapc__draw_pose(&ia, none, 3, edges, 5, &s, c);
    CHECK(all_zero(a, sizeof a));
}

static void test_clipping(void)
{
    static uint8_t px[H * W * 3];
    sleapc_draw_image img = {.rgb = px, .height = H, .width = W};
    const uint8_t c[3] = {255, 255, 0};

    /* Ends a billion pixels away: the part inside is drawn, nothing else. */
    memset(px, 0, sizeof px);
    sleapc__draw_line(&img, -1e9, -1e9, 1e9, 1e9, 1.0, c);
    bool diag = true;
    for (int k = 0; k < H; k++)
        diag = diag && pixel_is(px, W, k, k, c);
    CHECK(diag);

    /* A disc mostly off the top-left corner covers the corner only. */
    memset(px, 0, sizeof px);
    sleapc__draw_disc(&img, -3, -3, 5, c);
    CHECK(pixel_is(px, W, 0, 0, c) && all_zero(px + (5 * W + 5) * 3, 3));

    /* Entirely outside, non-finite or absurd: no pixel changes. */
    memset(px, 0, sizeof px);
    sleapc__draw_disc(&img, 35, 10, 3, c);
    sleapc__draw_disc(&img, 1e30, 5, 3, c);
    sleapc__draw_disc(&img, INFINITY, 5, 3, c);
    sleapc__draw_disc(&img, 5, 5, NAN, c);
    sleapc__draw_line(&img, -50, -50, -10, -5, 2, c);
    sleapc__draw_line(&img, 0, 0, 10, NAN, 2, c);
    sleapc__draw_line(&img, 0, 0, 10, 10, NAN, c);
    sleapc__draw_line(&img, 0, 0, 1e300, 1e300, 2, c);
    CHECK(all_zero(px, sizeof px));

    /* A disc larger than the image fills it; a 1x1 image works. */
    sleapc__draw_disc(&img, 10, 10, 1e6, c);
    CHECK(pixel_is(px, W, 0, 0, c) && pixel_is(px, W, W - 1, H - 1, c));
    uint8_t one[3] = {0, 0, 0};
    sleapc_draw_image tiny = {.rgb = one, .height = 1, .width = 1};
    sleapc__draw_line(&tiny, -5, 0, 5, 0, 1, c);
    CHECK(pixel_is(one, 1, 0, 0, c));
}

static void test_palette(void)
{
    uint8_t a[3], b[3], d[3];
    sleapc__draw_color(0, a);
    sleapc__draw_color(1, b);
    CHECK(memcmp(a, b, 3) != 0);
    sleapc__draw_color(7, d); /* seven colours, then they repeat */
    CHECK(memcmp(a, d, 3) == 0);
    sleapc__draw_color(-3, d);
    CHECK(memcmp(a, d, 3) == 0);
}

/* ---- The CLI on a robot video ---- */

#define RADIUS 4.0
#define LINE 2.0

/* Instances of the fixture, per labeled frame: 3 nodes each. */
static const float frame1_a[6] = {100, 100, 200, 100, 200, 200};
static const float frame1_b[6] = {400, 50, 450, 80, NAN, NAN};
static const float frame5[6] = {-50, -50, 10, 10, 1e6f, 1e6f};

static void write_fixture(const char *slp, const char *video)
{
    const char *nodes[] = {"a", "b", "c"};
    const int edges[][2] = {{0, 1}, {1, 2}};
    const char *tracks[] = {"t0", "t1"};
    const float scores[3] = {0.9f, 0.9f, 0.9f};
    const float frame3[6] = {50, 250, 60, 260, 70, 270};
    sleapc_predictions pr;
    fixture_init(&pr, "robot", 3, nodes, 2, edges, 2, tracks, video, 3, 4);
    pr.videos[0].n_frames = 166;
    pr.videos[0].height = 320;
    pr.videos[0].width = 560;
    pr.videos[0].channels = 3;
    fixture_add_frame(&pr, 0, 1);
    fixture_add_instance(&pr, frame1_a, scores, 0.9f, 0, 1.0f);
    fixture_add_instance(&pr, frame1_b, scores, 0.8f, 1, 1.0f);
    fixture_add_frame(&pr, 0, 3);
    fixture_add_instance(&pr, frame3, scores, 0.9f, 0, 1.0f);
    fixture_add_frame(&pr, 0, 5);
    fixture_add_instance(&pr, frame5, scores, 0.9f, -1, NAN);
    CHECK_OK(sleapc__predictions_write_slp(&pr, slp));
    fixture_free(&pr);
}

static double seg_dist(double px, double py, const float *a, const float *b)
{
    double dx = b[0] - a[0], dy = b[1] - a[1], len2 = dx * dx + dy * dy;
    double t = len2 > 0 ? ((px - a[0]) * dx + (py - a[1]) * dy) / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return hypot(px - a[0] - t * dx, py - a[1] - t * dy);
}

/* Distance from (x, y) to the nearest drawn shape of frame 1 minus that
 * shape's half size: <= 0 inside, > 1 where nothing may be touched. */
static double frame1_reach(double x, double y)
{
    const float *insts[2] = {frame1_a, frame1_b};
    double best = INFINITY;
    for (int i = 0; i < 2; i++) {
        const float *p = insts[i];
        for (int k = 0; k < 3; k++)
            if (!isnan(p[2 * k]))
                best = fmin(best, hypot(x - p[2 * k], y - p[2 * k + 1]) - RADIUS);
        for (int e = 0; e < 2; e++)
            if (!isnan(p[2 * e]) && !isnan(p[2 * e + 2]))
                best = fmin(best, seg_dist(x, y, p + 2 * e, p + 2 * e + 2) - LINE / 2);
    }
    return best;
}

static uint8_t *decode_png(const char *path, int64_t *h, int64_t *w, int64_t *c)
{
    size_t size = 0;
    unsigned char *bytes = test_read_file(path, &size);
    uint8_t *px = NULL;
    *h = *w = *c = 0;
    if (bytes)
        CHECK_OK(sleapc_image_decode(bytes, size, h, w, c, &px));
    free(bytes);
    return px;
}

static void check_png_frame1(const char *png, const char *video)
{
    int64_t h, w, c;
    uint8_t *px = decode_png(png, &h, &w, &c);
    CHECK_MSG(px && h == 320 && w == 560 && c == 3, "%s: %lldx%lldx%lld", png, (long long)h,
              (long long)w, (long long)c);
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(video, &v));
    uint8_t *src = malloc(320 * 560 * 3);
    if (!px || !v || h != 320 || w != 560 || c != 3 || sleapc_video_read(v, 1, src)) {
        CHECK(false);
        goto done;
    }
    uint8_t c0[3], c1[3];
    sleapc__draw_color(0, c0);
    sleapc__draw_color(1, c1);
    /* Nodes and edge midpoints carry their track's colour. */
    CHECK(pixel_is(px, w, 100, 100, c0) && pixel_is(px, w, 150, 100, c0) &&
          pixel_is(px, w, 200, 150, c0));
    CHECK(pixel_is(px, w, 400, 50, c1) && pixel_is(px, w, 450, 80, c1));
    /* Away from every shape the picture is the frame itself: nothing was
     * drawn for the missing node or its edge. */
    int64_t n_changed_far = 0, n_changed = 0;
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            bool changed = memcmp(px + (y * w + x) * 3, src + (y * w + x) * 3, 3) != 0;
            n_changed += changed;
            n_changed_far += changed && frame1_reach((double)x, (double)y) > 1.0;
        }
    CHECK_MSG(n_changed_far == 0, "%s: %lld pixels changed away from the poses", png,
              (long long)n_changed_far);
    CHECK(n_changed > 100);
done:
    free(src);
    sleapc_video_close(v);
    sleapc_free(px);
}

static void check_video(const char *path, int64_t n, int64_t h, int64_t w)
{
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(path, &v));
    int64_t vh = 0, vw = 0, vc = 0;
    sleapc_video_shape(v, &vh, &vw, &vc);
    CHECK_MSG(sleapc_video_n_frames(v) == n && vh == h && vw == w && vc == 3,
              "%s: %lld frames of %lldx%lldx%lld", path, (long long)sleapc_video_n_frames(v),
              (long long)vh, (long long)vw, (long long)vc);
    sleapc_video_close(v);
}

static void test_cli(void)
{
    const char *video = test_data_path("sleap-nn-assets/datasets/small_robot.mp4");
    char slp[512], args[4096];
    snprintf(slp, sizeof slp, "%s", test_tmp_path("robot.slp"));
    write_fixture(slp, video);

    /* One frame as a PNG. */
    const char *png = test_tmp_path("f1.png");
    snprintf(args, sizeof args,
             "render '%s' -i '%s' -o '%s' --frames 1 --node_radius %g "
             "--line_width %g",
             slp, video, png, RADIUS, LINE);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    check_png_frame1(png, video);

    /* The library with no frame list draws the first labeled frame (1), and
     * no video path means the video the file names. */
    const char *png2 = test_tmp_path("first.png");
    sleapc_render_opts o = sleapc_render_opts_default();
    o.node_radius_px = RADIUS;
    o.line_width_px = LINE;
    CHECK_OK(sleapc_render(slp, NULL, png2, NULL, 0, &o));
    size_t na = 0, nb = 0;
    unsigned char *a = test_read_file(png, &na), *b = test_read_file(png2, &nb);
    CHECK(a && b && na == nb && memcmp(a, b, na) == 0);
    free(a);
    free(b);

    /* All labeled frames (1, 3, 5) as an mp4; frame 5's points lie far
     * outside the picture. */
    const char *mp4 = test_tmp_path("all.mp4");
    snprintf(args, sizeof args, "render '%s' -o '%s' --quiet", slp, mp4);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    check_video(mp4, 3, 320, 560);

    /* Lossless: frame 1 in the mkv is exactly the PNG. */
    const char *mkv = test_tmp_path("two.mkv");
    snprintf(args, sizeof args,
             "render '%s' -i '%s' -o '%s' --frames 1,5 --fps 10 "
             "--node_radius %g --line_width %g",
             slp, video, mkv, RADIUS, LINE);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    check_video(mkv, 2, 320, 560);
    sleapc_video *v = NULL;
    int64_t h, w, c;
    uint8_t *want = decode_png(png, &h, &w, &c), *got = malloc(320 * 560 * 3);
    CHECK_OK(sleapc_video_open(mkv, &v));
    CHECK(v && want && sleapc_video_read(v, 0, got) == SLEAPC_OK &&
          memcmp(got, want, 320 * 560 * 3) == 0);
    /* Frame 5: the node at (10, 10) shows; the rest is clipped away. */
    uint8_t c2[3];
    sleapc__draw_color(0, c2);
    CHECK(v && sleapc_video_read(v, 1, got) == SLEAPC_OK && pixel_is(got, 560, 10, 10, c2));
    sleapc_video_close(v);
    sleapc_free(want);
    free(got);
}

static void test_cli_errors(void)
{
    const char *video = test_data_path("sleap-nn-assets/datasets/small_robot.mp4");
    char slp[512], args[4096];
    snprintf(slp, sizeof slp, "%s", test_tmp_path("robot.slp"));
    const char *out = test_tmp_path("bad.png"), *out_mp4 = test_tmp_path("bad.mp4");

    CHECK(test_run_cli("render --help") == 0 && strstr(test_cli_output(), "usage: sleapc render") != NULL);
    CHECK(test_run_cli("render") == 1 && strstr(test_cli_output(), "sleapc: error: render:") != NULL);
    snprintf(args, sizeof args, "render '%s'", slp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "-o OUTPUT") != NULL);
    snprintf(args, sizeof args, "render '%s' -o '%s' --bogus", slp, out);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "unknown option \"--bogus\"") != NULL);
    snprintf(args, sizeof args, "render '%s' -o '%s'", slp, test_tmp_path("bad.txt"));
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), ".png") != NULL);
    snprintf(args, sizeof args, "render '%s' -i '%s' -o '%s' --frames 500", slp, video, out);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "beyond the end") != NULL);
    snprintf(args, sizeof args, "render '%s' -o '%s' --frames 3-1", slp, out);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "--frames") != NULL);
    snprintf(args, sizeof args, "render '%s' -o '%s' --fps 0", slp, out_mp4);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "--fps") != NULL);
    snprintf(args, sizeof args, "render '%s' -o '%s' --video_index 3", slp, out);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "no video 3") != NULL);
    snprintf(args, sizeof args, "render '%s' -o '%s'", test_tmp_path("absent.slp"), out);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "absent.slp") != NULL);
    snprintf(args, sizeof args, "render '%s' -i '%s' -o '%s'", slp, test_tmp_path("absent.mp4"),
             out_mp4);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "absent.mp4") != NULL);
    CHECK(!exists(out) && !exists(out_mp4) && count_temporaries() == 0);

    /* The library's own argument checks. */
    CHECK(sleapc_render(NULL, NULL, out, NULL, 0, NULL) == SLEAPC_ERR_INVALID_ARG);
    int64_t f = 0;
    CHECK(sleapc_render(slp, NULL, out, &f, 0, NULL) == SLEAPC_ERR_INVALID_ARG);
    f = -1;
    CHECK(sleapc_render(slp, NULL, out, &f, 1, NULL) == SLEAPC_ERR_INVALID_ARG);
    CHECK(!exists(out));
}

/* Every allocation failing in turn: a clean NOMEM, no output, no
 * temporary file, and (under the sanitizer) no leak. */
static void test_render_nomem(void)
{
    const char *video = test_data_path("sleap-nn-assets/datasets/small_robot.mp4");
    char slp[512];
    snprintf(slp, sizeof slp, "%s", test_tmp_path("robot.slp"));
    const int64_t frames[2] = {1, 3};
    const char *outs[2] = {test_tmp_path("nomem.png"), test_tmp_path("nomem.mkv")};
    for (int i = 0; i < 2; i++) {
        int n_fail = 0;
        sleapc_status st = SLEAPC_OK;
        for (int64_t k = 1; k < 2000; k++) {
            sleapc__alloc_fail_after(k);
            st = sleapc_render(slp, video, outs[i], frames, 2, NULL);
            sleapc__alloc_fail_after(0);
            if (!st)
                break;
            n_fail++;
            CHECK_MSG(st == SLEAPC_ERR_NOMEM, "%s: allocation %lld: %s", outs[i], (long long)k,
                      sleapc_last_error());
            CHECK(!exists(outs[i]) && count_temporaries() == 0);
        }
        CHECK_MSG(st == SLEAPC_OK && n_fail > 5 && exists(outs[i]), "%s: %d failures", outs[i],
                  n_fail);
    }
}

int main(void)
{
    test_require_data();
    test_lines();
    test_missing_points();
    test_clipping();
    test_palette();
    test_cli();
    test_cli_errors();
    test_render_nomem();
    return test_finish();
}
