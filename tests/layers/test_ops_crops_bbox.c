/* Box-scaled crops (ops/crops_bbox.h) against sleap-nn 0.3.5's
 * bbox_crop_windows, crop_windows and letterbox_crops, run on a 12x16 ramp
 * with three boxes (one inside, one over the frame's bottom-left corner, one
 * below the 2 px floor), crop 5, padding 0.15, min_size 2, for each aspect;
 * the crops as sleap-nn rounds them to uint8. The numbers were printed by
 * sleap-nn 0.3.5 (PyTorch 2.15, CPU). Then the lift is the inverse of
 * points_to_crop, and the corners are the window's less 0.5. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "layers/ops/crops_bbox.h"
#include "test_util.h"

static const float BOXES[12] = {3.2f, 2.7f, 9.9f, 6.1f, -2.5f, 8.0f, 4.0f, 14.5f,
                                10.0f, 1.0f, 10.4f, 1.2f};

static const struct {
    sleapc_bbox_aspect aspect;
    float windows[12], scales[6], keep[6];
    uint8_t crops[75];
} want[] = {
    {SLEAPC_BBOX_ASPECT_SQUARE,
     {2.69499969f, 0.545000076f, 11.4049997f, 9.25500011f, -2.9749999f, 7.5250001f, 5.4749999f,
      15.9750004f, 9.69999981f, 0.600000024f, 11.6999998f, 2.5999999f},
     {0.574052811f, 0.574052811f, 0.591715991f, 0.591715991f, 2.5f, 2.5f},
     {2.5f, 1.55281281f, 2.5f, 2.5f, 0.64999938f, 0.399999917f},
     {124, 136, 148, 161, 173, 148, 80,  93,  105, 117, 163, 175, 187, 49,  61,
      172, 184, 196, 208, 220, 151, 164, 176, 188, 200, 0,   31,  134, 146, 157,
      0,   16,  72,  84,  96,  0,   35,  151, 159, 4,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   99,  102, 105, 108, 111, 144, 147, 150, 153, 155,
      164, 167, 169, 172, 175, 108, 111, 114, 117, 119, 53,  55,  58,  61,  64}},
    {SLEAPC_BBOX_ASPECT_LETTERBOX,
     {2.69499969f, 0.545000076f, 11.4049997f, 9.25500011f, -2.9749999f, 7.5250001f, 5.4749999f,
      15.9750004f, 9.69999981f, 0.600000024f, 11.6999998f, 2.5999999f},
     {0.574052811f, 0.574052811f, 0.591715991f, 0.591715991f, 2.5f, 2.5f},
     {2.5f, 1.55281281f, 2.5f, 2.5f, 0.64999938f, 0.399999917f},
     {0,   0,   0,   0,   0,   148, 80,  93,  105, 117, 163, 175, 187, 49,  61,
      172, 184, 196, 208, 220, 0,   0,   0,   0,   0,   0,   31,  134, 146, 157,
      0,   16,  72,  84,  96,  0,   35,  151, 159, 4,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   169, 0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0}},
    {SLEAPC_BBOX_ASPECT_STRETCH,
     {2.69499969f, 2.19500017f, 11.4049997f, 7.60500002f, -2.9749999f, 7.5250001f, 5.4749999f,
      15.9750004f, 9.69999981f, 0.600000024f, 11.6999998f, 2.5999999f},
     {0.574052811f, 0.924214423f, 0.591715991f, 0.591715991f, 2.5f, 2.5f},
     {2.5f, 2.5f, 2.5f, 2.5f, 0.64999938f, 0.399999917f},
     {200, 33,  45,  57,  70,  142, 154, 166, 99,  111, 163, 175, 187, 49,  61,
      133, 146, 158, 170, 182, 113, 125, 137, 150, 162, 0,   31,  134, 146, 157,
      0,   16,  72,  84,  96,  0,   35,  151, 159, 4,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   99,  102, 105, 108, 111, 144, 147, 150, 153, 155,
      164, 167, 169, 172, 175, 108, 111, 114, 117, 119, 53,  55,  58,  61,  64}},
};

static bool close_to(const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        if (fabsf(a[i] - b[i]) > 1e-6f * (1.0f + fabsf(b[i])))
            return false;
    return true;
}

static void test_against_sleap_nn(void)
{
    uint8_t img[12 * 16];
    for (int i = 0; i < 12 * 16; i++)
        img[i] = (uint8_t)(i * 7 % 251);
    const int32_t frames[3] = {0, 0, 0};
    for (size_t a = 0; a < sizeof want / sizeof want[0]; a++) {
        float win[12], sc[6], keep[6];
        uint8_t crops[75];
        sleapc__bbox_crop_windows(BOXES, 3, 5, want[a].aspect, 0.15, 2.0, win, sc, keep);
        CHECK_MSG(close_to(win, want[a].windows, 12), "aspect %zu: windows", a);
        CHECK_MSG(close_to(sc, want[a].scales, 6), "aspect %zu: scales", a);
        CHECK_MSG(close_to(keep, want[a].keep, 6), "aspect %zu: keep_half", a);
        CHECK_OK(sleapc__bbox_crop_cut_u8(img, 1, 1, 12, 16, win,
                                          want[a].aspect == SLEAPC_BBOX_ASPECT_LETTERBOX ? keep
                                                                                         : NULL,
                                          frames, 3, 5, crops));
        int off = 0;
        for (int i = 0; i < 75; i++)
            off += crops[i] != want[a].crops[i];
        CHECK_MSG(off == 0, "aspect %zu: %d crop pixels differ", a, off);
    }
}

static void test_lift_and_corners(void)
{
    float win[4], sc[2], keep[2];
    sleapc__bbox_crop_windows(BOXES, 1, 64, SLEAPC_BBOX_ASPECT_SQUARE, 0.1, 0.0, win, sc, keep);
    /* points_to_crop, then back. */
    const float frame[4] = {5.0f, 4.0f, 9.5f, 6.0f};
    float xy[4];
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            xy[2 * i + k] = (frame[2 * i + k] + 0.5f - win[k]) * sc[k] - 0.5f;
    sleapc__bbox_crop_lift(xy, 2, win, sc);
    CHECK(close_to(xy, frame, 4));
    float c[8];
    sleapc__bbox_crop_corners(win, c);
    CHECK(c[0] == win[0] - 0.5f && c[1] == win[1] - 0.5f && c[2] == win[2] - 0.5f &&
          c[5] == win[3] - 0.5f && c[6] == c[0] && c[3] == c[1]);
    /* Bad arguments are refused, a NaN window too. */
    uint8_t img[4] = {0}, out[4];
    const int32_t f0 = 0, f1 = 1;
    const float nanw[4] = {NAN, 0.0f, 1.0f, 1.0f};
    CHECK(sleapc__bbox_crop_cut_u8(img, 1, 1, 2, 2, win, NULL, &f1, 1, 2, out) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__bbox_crop_cut_u8(img, 1, 1, 2, 2, nanw, NULL, &f0, 1, 2, out) ==
          SLEAPC_ERR_INVALID_ARG);
}

int main(void)
{
    test_against_sleap_nn();
    test_lift_and_corners();
    return test_finish();
}
