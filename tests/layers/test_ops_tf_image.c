/* TensorFlow image resampling and SLEAP 1.x preprocessing: tf.image.resize
 * (half-pixel bilinear, no antialiasing), crop_and_resize, the SizeMatcher
 * and the whole float32 chain, and SLEAP's instance crops. Expected values
 * follow from the definitions on small images whose values are exact in
 * float32, so equality is exact unless a tolerance is stated. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "layers/ops/crops_sleap1.h"
#include "layers/ops/preprocess_tf.h"
#include "layers/ops/resize_tf.h"
#include "test_util.h"

static void test_scaled_size(void)
{
    int64_t h = 0, w = 0;
    CHECK_OK(sleapc__resize_tf_scaled_size(1024, 1024, 0.5, &h, &w));
    CHECK(h == 512 && w == 512);
    CHECK_OK(sleapc__resize_tf_scaled_size(1001, 999, 0.5, &h, &w));
    CHECK(h == 500 && w == 499); /* truncation */
    CHECK(sleapc__resize_tf_scaled_size(10, 10, 0.0, &h, &w) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__resize_tf_scaled_size(10, 10, 0.01, &h, &w) == SLEAPC_ERR_INVALID_ARG);
}

static void test_resize_half(void)
{
    /* At scale 1/2 every output is the mean of its 2x2 block. */
    enum { C = 2, H = 4, W = 6 };
    uint8_t src[C * H * W];
    for (int i = 0; i < C * H * W; i++)
        src[i] = (uint8_t)((i * 37 + 11) % 256);
    float dst[C * 2 * 3];
    CHECK_OK(sleapc__resize_tf_bilinear(src, true, C, H, W, dst, 2, 3));
    int bad = 0;
    for (int c = 0; c < C; c++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 3; x++) {
                const uint8_t *p = src + (c * H + 2 * y) * W + 2 * x;
                float want = (float)(p[0] + p[1] + p[W] + p[W + 1]) / 4.0f;
                bad += dst[(c * 2 + y) * 3 + x] != want;
            }
    CHECK_MSG(bad == 0, "%d block means differ", bad);

    /* float32 source gives the same numbers. */
    float srcf[C * H * W], dstf[C * 2 * 3];
    for (int i = 0; i < C * H * W; i++)
        srcf[i] = (float)src[i];
    CHECK_OK(sleapc__resize_tf_bilinear(srcf, false, C, H, W, dstf, 2, 3));
    CHECK(memcmp(dst, dstf, sizeof dst) == 0);
}

static void test_resize_up(void)
{
    /* 1 x 2 -> 1 x 4: source x = (i + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75,
     * 1.25, neighbours clamped, no antialiasing. */
    const float src[2] = {0.0f, 100.0f};
    float dst[4];
    CHECK_OK(sleapc__resize_tf_bilinear(src, false, 1, 1, 2, dst, 1, 4));
    CHECK_MSG(dst[0] == 0.0f && dst[1] == 25.0f && dst[2] == 75.0f && dst[3] == 100.0f,
              "got %g %g %g %g", (double)dst[0], (double)dst[1], (double)dst[2], (double)dst[3]);
    CHECK(sleapc__resize_tf_bilinear(NULL, false, 1, 1, 2, dst, 1, 4) == SLEAPC_ERR_INVALID_ARG);
}

/* v(y, x) = 10 y + x + 1: bilinear sampling of a linear image is exact. */
static float lin(float y, float x)
{
    return 10.0f * y + x + 1.0f;
}

static void test_crop(void)
{
    float img[5 * 5];
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 5; x++)
            img[y * 5 + x] = lin((float)y, (float)x);
    float crop[9];
    int bad = 0;

    const float inside[4] = {1, 1, 3, 3};
    CHECK_OK(sleapc__resize_tf_crop(img, false, 1, 5, 5, inside, 3, 3, crop));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            bad += crop[i * 3 + j] != lin((float)(1 + i), (float)(1 + j));
    CHECK_MSG(bad == 0, "whole-pixel box: %d values differ", bad);

    /* Rows and columns outside the image read 0. */
    const float corner[4] = {-1, -1, 1, 1};
    CHECK_OK(sleapc__resize_tf_crop(img, false, 1, 5, 5, corner, 3, 3, crop));
    CHECK(crop[0] == 0 && crop[1] == 0 && crop[2] == 0 && crop[3] == 0 && crop[6] == 0);
    CHECK(crop[4] == lin(0, 0) && crop[8] == lin(1, 1));

    /* Half-pixel box: bilinear values. */
    const float half[4] = {0.5f, 0.5f, 2.5f, 2.5f};
    CHECK_OK(sleapc__resize_tf_crop(img, false, 1, 5, 5, half, 3, 3, crop));
    bad = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            bad += fabsf(crop[i * 3 + j] - lin(0.5f + (float)i, 0.5f + (float)j)) > 1e-5f;
    CHECK_MSG(bad == 0, "half-pixel box: %d values off", bad);
}

static void test_luma(void)
{
    int bad = 0;
    for (int v = 0; v < 256; v++)
        bad += sleapc__preprocess_tf_luma_u8((uint8_t)v, (uint8_t)v, (uint8_t)v) != v;
    CHECK_MSG(bad == 0, "%d grey levels change", bad); /* x 255.5 absorbs the 0.9999 sum */
    /* Pure red: trunc(0.2989 * 255.5) = 76 (float32 and double agree here). */
    CHECK(sleapc__preprocess_tf_luma_u8(255, 0, 0) == 76);
    CHECK(sleapc__preprocess_tf_luma_u8(0, 0, 255) == 29); /* trunc(0.114 * 255.5) */
}

static void test_chain(void)
{
    /* 1000 x 1000 grey at scale 0.5, stride 16: 500 -> padded to 512. */
    sleapc_preprocess_opts o = {.scale = 0.5, .max_stride = 16, .ensure_grayscale = true};
    sleapc_preprocess_plan p;
    CHECK_OK(sleapc__preprocess_tf_plan_make(&o, 1, 1000, 1000, &p));
    CHECK(p.c == 1 && p.scaled_h == 500 && p.out_h == 512 && p.out_w == 512);
    CHECK(p.eff_scale == 1.0 && p.sized_h == 1000);
    uint8_t *src = sleapc__malloc(1000 * 1000);
    float *dst = sleapc__malloc(512 * 512 * sizeof(float));
    void *scratch = sleapc__aligned_alloc(p.scratch_bytes);
    if (src && dst && scratch) {
        memset(src, 200, 1000 * 1000);
        CHECK_OK(sleapc__preprocess_tf_run(&p, src, dst, scratch));
        const float v = 200.0f * (1.0f / 255.0f); /* convert_image_dtype */
        CHECK(dst[0] == v && dst[499 * 512 + 499] == v);
        CHECK(dst[499 * 512 + 500] == 0.0f && dst[500 * 512] == 0.0f && dst[511 * 512 + 511] == 0);
    }
    sleapc__free(src);
    sleapc__free(dst);
    sleapc__aligned_free(scratch);

    /* RGB into a grey model: TensorFlow's luma, then / 255. */
    sleapc_preprocess_opts g = {.scale = 1.0, .max_stride = 1, .ensure_grayscale = true};
    CHECK_OK(sleapc__preprocess_tf_plan_make(&g, 3, 2, 2, &p));
    CHECK(p.c == 1 && p.out_h == 2);
    uint8_t rgb[3 * 4] = {255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0};
    float out[4];
    void *s2 = sleapc__aligned_alloc(p.scratch_bytes ? p.scratch_bytes : 16);
    CHECK_OK(sleapc__preprocess_tf_run(&p, rgb, out, s2));
    CHECK(out[0] == 76.0f * (1.0f / 255.0f));
    sleapc__aligned_free(s2);

    CHECK(sleapc__preprocess_tf_plan_make(&o, 0, 10, 10, &p) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__preprocess_tf_plan_make(NULL, 1, 10, 10, &p) == SLEAPC_ERR_INVALID_ARG);
}

static void test_size_matcher(void)
{
    sleapc_preprocess_plan p;
    /* Already the target: a no-op. */
    CHECK_OK(sleapc__preprocess_tf_size_match(1024, 1024, 1024, 1024, &p));
    CHECK(p.eff_scale == 1.0 && p.match_h == 1024 && p.sized_h == 1024);
    /* 500 x 700 into 1024 x 1024: width is the bottleneck, eff = 1024 / 700
     * in float32, target 731 x 1024. resize_with_pad then fits the frame
     * into that by its own ratio, max(700 / 1024, 500 / 731) = 500 / 731,
     * which leaves the content a pixel narrow: 731 x floor(1023.4). */
    CHECK_OK(sleapc__preprocess_tf_size_match(500, 700, 1024, 1024, &p));
    CHECK(p.eff_scale == (double)(1024.0f / 700.0f));
    CHECK(p.sized_h == 1024 && p.sized_w == 1024);
    CHECK_MSG(p.match_h == 731 && p.match_w == 1023, "content %lldx%lld",
              (long long)p.match_h, (long long)p.match_w);
    CHECK(p.pad_left == 0 && p.pad_top == 0);

    /* Run: a constant frame stays constant in the content and is 0 below it. */
    sleapc_preprocess_opts o = {.scale = 1.0, .max_stride = 1, .max_height = 1024,
                                .max_width = 1024};
    CHECK_OK(sleapc__preprocess_tf_plan_make(&o, 1, 500, 700, &p));
    uint8_t *src = sleapc__malloc(500 * 700);
    uint8_t *dst = sleapc__malloc(1024 * 1024);
    void *scratch = sleapc__aligned_alloc(p.scratch_bytes);
    if (src && dst && scratch) {
        memset(src, 90, 500 * 700);
        CHECK_OK(sleapc__preprocess_tf_run_u8(&p, src, dst, scratch));
        int64_t bottom = p.match_h, right = p.match_w;
        CHECK(dst[0] == 90 && dst[(bottom - 1) * 1024 + right - 1] == 90);
        CHECK(dst[bottom * 1024] == 0 && dst[right] == 0 && dst[1023 * 1024 + 1023] == 0);
    }
    sleapc__free(src);
    sleapc__free(dst);
    sleapc__aligned_free(scratch);
}

static void test_instance_crops(void)
{
    const float centers[2] = {10.25f, 20.75f};
    float box[4];
    CHECK_OK(sleapc__crops_sleap1_boxes(centers, 1, 5, box));
    CHECK(box[0] == 18.75f && box[1] == 8.25f && box[2] == 22.75f && box[3] == 12.25f);
    int64_t ch = 0, cw = 0;
    CHECK_OK(sleapc__crops_sleap1_size(box, &ch, &cw));
    CHECK(ch == 5 && cw == 5);
    float off[2];
    sleapc__crops_sleap1_offsets(centers, 1, 5, off);
    CHECK(off[0] == 10.25f - 2.5f && off[1] == 20.75f - 2.5f);

    /* v = 3x: sampled half a pixel right of a whole pixel it is 3x + 1.5,
     * truncated to 3x + 1. Whole-pixel boxes copy. */
    uint8_t img[2 * 8 * 8];
    for (int k = 0; k < 2; k++)
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++)
                img[(k * 8 + y) * 8 + x] = (uint8_t)(3 * x + 50 * k);
    const float c2[4] = {3.5f, 3.0f, 4.0f, 4.0f};
    float boxes[8];
    CHECK_OK(sleapc__crops_sleap1_boxes(c2, 2, 3, boxes));
    const int32_t samples[2] = {0, 1};
    uint8_t crops[2 * 3 * 3];
    void *scratch = sleapc__aligned_alloc(sleapc__crops_sleap1_scratch_size(1, 3, 3));
    CHECK_OK(sleapc__crops_sleap1_extract(img, 2, 1, 8, 8, boxes, samples, 2, 3, 3, scratch,
                                          crops));
    CHECK(crops[0] == 3 * 2 + 1 && crops[1] == 3 * 3 + 1); /* x from 2.5 */
    CHECK(crops[9] == 3 * 3 + 50 && crops[10] == 3 * 4 + 50); /* whole pixels, image 1 */
    const int32_t bad[1] = {2};
    CHECK(sleapc__crops_sleap1_extract(img, 2, 1, 8, 8, boxes, bad, 1, 3, 3, scratch, crops) ==
          SLEAPC_ERR_INVALID_ARG);
    sleapc__aligned_free(scratch);
}

int main(void)
{
    test_scaled_size();
    test_resize_half();
    test_resize_up();
    test_crop();
    test_luma();
    test_chain();
    test_size_matcher();
    test_instance_crops();
    return test_finish();
}
