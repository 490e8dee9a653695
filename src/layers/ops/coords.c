/* Coordinate ladder of sleap-nn inference/ops/coord.py. The reference runs
 * each step as a float32 tensor op with a float32 factor; doing exactly that
 * (not a combined double factor) reproduces its outputs bit for bit. */
#include "layers/ops/coords.h"

static void mul_all(float *xy, int64_t n, float f)
{
    for (int64_t i = 0; i < 2 * n; i++)
        xy[i] = xy[i] * f;
}

static void div_all(float *xy, int64_t n, float f)
{
    for (int64_t i = 0; i < 2 * n; i++)
        xy[i] = xy[i] / f;
}

void sleapc__coords_undo_stride(float *xy, int64_t n, double stride)
{
    const float f = (float)stride;
    if (xy && f != 1.0f)
        mul_all(xy, n, f);
}

void sleapc__coords_undo_input_scale(float *xy, int64_t n, double input_scale)
{
    const float f = (float)input_scale;
    if (xy && f != 1.0f)
        div_all(xy, n, f);
}

void sleapc__coords_undo_input_scale_sleap1(float *xy, int64_t n, double input_scale)
{
    /* SLEAP tests the Python float, then divides by its float32 value. */
    if (!xy || input_scale == 1.0)
        return;
    const float f = (float)input_scale;
    for (int64_t i = 0; i < 2 * n; i++)
        xy[i] = xy[i] / f + 0.5f;
}

void sleapc__coords_add_offset(float *xy, int64_t n, float ox, float oy)
{
    if (!xy)
        return;
    for (int64_t i = 0; i < n; i++) {
        xy[2 * i] = xy[2 * i] + ox;
        xy[2 * i + 1] = xy[2 * i + 1] + oy;
    }
}

void sleapc__coords_undo_eff_scale(float *xy, int64_t n, double eff_scale)
{
    const float f = (float)eff_scale;
    if (xy && f != 1.0f)
        div_all(xy, n, f);
}

void sleapc__coords_apply_eff_scale(float *xy, int64_t n, double eff_scale)
{
    const float f = (float)eff_scale;
    if (xy && f != 1.0f)
        mul_all(xy, n, f);
}
