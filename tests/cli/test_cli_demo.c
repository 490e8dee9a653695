/* sleapc demo: the synthetic sample's predictions land within 1 px of the
 * known keypoints (issue goal: >= 99% of points), its model folder is a
 * sleap-nn model folder the other commands read, and it leaves the clip as a
 * lossless video, the predictions as a .slp and an overlay PNG of frame 0
 * with the skeleton drawn. Needs no shared data. */
#include <stdlib.h>
#include <string.h>

#include "sleapc/video.h"
#include "test_util.h"


static const char *demo_path(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/demo/%s", test_tmp_dir(), name);
    return path;
}

/* The files the demo leaves: clip.mkv holds the 16 frames, predictions.slp
 * is an HDF5 file, and overlay.png is frame 0 of the clip with something
 * drawn on it (the default sample is 192x256 RGB). */
static void check_outputs(void)
{
    size_t n = 0;
    unsigned char *slp = test_read_file(demo_path("predictions.slp"), &n);
    CHECK_MSG(slp && n > 8 && memcmp(slp, "\x89HDF\r\n\x1a\n", 8) == 0,
              "predictions.slp missing or not HDF5");
    free(slp);

    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(demo_path("clip.mkv"), &v));
    int64_t h = 0, w = 0, c = 0;
    sleapc_video_shape(v, &h, &w, &c);
    CHECK(sleapc_video_n_frames(v) == 16 && h == 192 && w == 256 && c == 3);

    unsigned char *png = test_read_file(demo_path("overlay.png"), &n);
    CHECK_MSG(png != NULL, "overlay.png missing");
    int64_t ph = 0, pw = 0, pc = 0;
    uint8_t *px = NULL;
    if (png)
        CHECK_OK(sleapc_image_decode(png, n, &ph, &pw, &pc, &px));
    CHECK(px && ph == 192 && pw == 256 && pc == 3);
    uint8_t *frame0 = malloc(192 * 256 * 3);
    if (px && v && ph == 192 && pw == 256 && pc == 3 && sleapc_video_read(v, 0, frame0) == 0) {
        int n_drawn = 0;
        for (size_t i = 0; i < 192 * 256 * 3; i++)
            n_drawn += px[i] != frame0[i];
        CHECK_MSG(n_drawn > 20, "overlay.png: only %d values differ from frame 0", n_drawn);
    }
    free(frame0);
    sleapc_free(px);
    free(png);
    sleapc_video_close(v);
}

int main(void)
{
    char args[4096];
    snprintf(args, sizeof args, "demo '%s/demo' --frames 16 --threads 2", test_tmp_dir());
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    CHECK_MSG(strstr(test_cli_output(), "result:       PASS") != NULL, "%s", test_cli_output());
    CHECK(strstr(test_cli_output(), "points 48, found 48") != NULL);

    CHECK(strstr(test_cli_output(), "overlay:") != NULL && strstr(test_cli_output(), "predictions:") != NULL);
    check_outputs();

    snprintf(args, sizeof args, "info -m '%s/demo/model'", test_tmp_dir());
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    CHECK(strstr(test_cli_output(), "type:           single_instance") != NULL);
    CHECK(strstr(test_cli_output(), "head->thorax") != NULL);

    snprintf(args, sizeof args, "demo '%s/demo' --frames 0", test_tmp_dir());
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "sleapc: error: --frames") != NULL);
    return test_finish();
}
