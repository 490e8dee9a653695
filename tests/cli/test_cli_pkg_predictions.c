/* Predictions from a .pkg.slp (frames embedded in the labels) name that
 * package and its images as sleap-io does (an HDF5Video of the package,
 * dataset "video0/video": the form of sleap-nn's labels_train_gt_0.slp,
 * written by sleap-io from the same package), so that the predictions open
 * with their images: sleapc's reader finds the package and its frames, and
 * `sleapc render` draws on the package's own image. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "io/slp/slp_read.h"
#include "io/video/frame_source.h"
#include "sleapc/input.h"
#include "test_util.h"

#define MODEL "sleap-nn-assets/model_ckpts/minimal_instance_single_instance"
#define PKG "sleap-nn-assets/datasets/minimal_instance.pkg.slp"
/* sleap-io's reference to that package (read, then saved keeping it). */
#define SLEAP_IO_REF "sleap-nn-assets/model_ckpts/minimal_instance_centroid/labels_train_gt_0.slp"

/* Row 0 of a labels file's /videos_json, parsed; NULL when unreadable. */
static cJSON *video_json(const char *path)
{
    sleapc_h5 *f = NULL;
    char **rows = NULL;
    int64_t n = 0;
    cJSON *j = NULL;
    if (sleapc__h5_open(path, &f) == SLEAPC_OK &&
        sleapc__h5_read_strings(f, "videos_json", &rows, &n) == SLEAPC_OK && n >= 1)
        j = cJSON_Parse(rows[0]);
    sleapc__h5_free_strings(rows, n);
    if (f)
        sleapc__h5_close(f);
    return j;
}

/* The output's backend agrees with sleap-io's on every key sleap-io writes
 * for an embedded package video, but the file name (a path here). */
static void check_video_json(const char *out, const char *pkg)
{
    cJSON *got = video_json(out), *want = video_json(test_data_path(SLEAP_IO_REF));
    CHECK_MSG(got && want, "videos_json of %s or of the sleap-io reference unreadable", out);
    if (!got || !want) {
        cJSON_Delete(got);
        cJSON_Delete(want);
        return;
    }
    const cJSON *gb = cJSON_GetObjectItem(got, "backend"),
                *wb = cJSON_GetObjectItem(want, "backend");
    const cJSON *fn = cJSON_GetObjectItem(gb, "filename");
    CHECK_MSG(cJSON_IsString(fn) && strcmp(fn->valuestring, pkg) == 0, "backend filename %s",
              cJSON_IsString(fn) ? fn->valuestring : "(none)");
    fn = cJSON_GetObjectItem(got, "filename");
    CHECK(cJSON_IsString(fn) && strcmp(fn->valuestring, pkg) == 0);
    const cJSON *key;
    int compared = 0;
    cJSON_ArrayForEach(key, wb)
    {
        if (strcmp(key->string, "filename") == 0)
            continue;
        const cJSON *mine = cJSON_GetObjectItem(gb, key->string);
        CHECK_MSG(mine && cJSON_Compare(mine, key, true), "backend \"%s\" differs from sleap-io's",
                  key->string);
        compared++;
    }
    CHECK_MSG(compared >= 6, "only %d backend keys compared", compared);
    /* The package's record of the original video travels along. */
    const cJSON *src = cJSON_GetObjectItem(got, "source_video");
    const cJSON *src_file = cJSON_GetObjectItem(cJSON_GetObjectItem(src, "backend"), "filename");
    CHECK_MSG(cJSON_IsString(src_file) &&
                  strcmp(src_file->valuestring,
                         "tests/data/json_format_v1/centered_pair_low_quality.mp4") == 0,
              "source_video missing");
    cJSON_Delete(got);
    cJSON_Delete(want);
}

/* Frame 0 of the package as the package itself decodes (RGB); NULL on error. */
static uint8_t *package_frame(const char *pkg, int64_t *h, int64_t *w)
{
    sleapc_slp *r = NULL;
    sleapc_image_decoder *dec = NULL;
    const uint8_t *bytes = NULL;
    size_t n = 0;
    uint8_t *rgb = NULL;
    sleapc_decoded_image img;
    CHECK_OK(sleapc__slp_open(pkg, &r));
    CHECK_OK(sleapc__image_decoder_create(&dec));
    if (r && dec && sleapc__slp_embedded_frame(r, 0, 0, &bytes, &n, NULL) == SLEAPC_OK &&
        sleapc__image_decoder_decode(dec, bytes, n, pkg, &img) == SLEAPC_OK) {
        *h = img.height;
        *w = img.width;
        rgb = malloc((size_t)(img.height * img.width * 3));
        if (rgb)
            memcpy(rgb, img.rgb, (size_t)(img.height * img.width * 3));
    }
    sleapc__image_decoder_destroy(dec);
    sleapc__slp_close(r);
    return rgb;
}

/* sleapc's reader opens the output's video on the package's images. */
static void check_read_back(const char *out, const char *pkg)
{
    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(out, &r));
    if (!r)
        return;
    CHECK(r->n_videos == 1 && sleapc__slp_video_in_package(r, 0));
    sleapc_slp *p = NULL;
    int pv = -1;
    CHECK_OK(sleapc__slp_open_package_video(r, 0, &p, &pv));
    CHECK(p && pv == 0 && strcmp(p->path, pkg) == 0);
    sleapc__slp_close(p);
    sleapc__slp_close(r);

    /* As an input: the same frames and size as the package. */
    sleapc_input *a = NULL, *b = NULL;
    CHECK_OK(sleapc_input_open(out, 0, &a));
    CHECK_OK(sleapc_input_open(pkg, 0, &b));
    if (a && b) {
        sleapc_video_info va = sleapc_input_video_info(a), vb = sleapc_input_video_info(b);
        CHECK(va.height == vb.height && va.width == vb.width && va.channels == vb.channels);
        CHECK(sleapc_input_n_default_frames(a) == sleapc_input_n_default_frames(b));
        CHECK(va.dataset && strcmp(va.dataset, "video0/video") == 0 &&
              strcmp(va.filename, pkg) == 0);
    }
    sleapc_input_close(a);
    sleapc_input_close(b);
}

/* `sleapc render` draws on the package's image: away from the few pixels
 * the pose covers, the PNG is that image exactly (PNG is lossless). */
static void check_render(const char *out, const char *pkg)
{
    char png[1280], args[4096];
    snprintf(png, sizeof png, "%s/render.png", test_tmp_dir());
    snprintf(args, sizeof args, "render '%s' -o '%s' --quiet", out, png);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "render exit %d: %s", rc, test_cli_output());
    int64_t h = 0, w = 0;
    uint8_t *want = package_frame(pkg, &h, &w);
    size_t n = 0;
    unsigned char *bytes = test_read_file(png, &n);
    sleapc_image_decoder *dec = NULL;
    sleapc_decoded_image img = {0};
    CHECK_OK(sleapc__image_decoder_create(&dec));
    CHECK_MSG(bytes && dec && sleapc__image_decoder_decode(dec, bytes, n, png, &img) == SLEAPC_OK,
              "rendered PNG unreadable");
    if (want && img.rgb) {
        CHECK(img.height == h && img.width == w);
        int64_t same = 0, total = h * w;
        for (int64_t i = 0; img.height == h && img.width == w && i < total * 3; i += 3)
            same += memcmp(img.rgb + i, want + i, 3) == 0;
        /* Two points and one edge cover far less than 5% of 384 x 384. */
        CHECK_MSG(same >= total * 95 / 100, "render: %lld of %lld pixels are the package's",
                  (long long)same, (long long)total);
    }
    sleapc__image_decoder_destroy(dec);
    free(bytes);
    free(want);
}

int main(void)
{
    test_require_data();
    char model[2048], pkg[2048], out[1280], args[8192];
    snprintf(model, sizeof model, "%s", test_data_path(MODEL));
    snprintf(pkg, sizeof pkg, "%s", test_data_path(PKG));
    snprintf(out, sizeof out, "%s/pkg_predictions.slp", test_tmp_dir());
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model, pkg, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "predict exit %d: %s", rc, test_cli_output());
    check_video_json(out, pkg);
    check_read_back(out, pkg);
    check_render(out, pkg);
    return test_finish();
}
