#include "model/graph_input.h"

#include <string.h>

#include "core/dtype.h"
#include "core/error.h"

sleapc_status sleapc__graph_input_check(const sleapc_tensor *x, int in_channels)
{
    if (!x || !x->data)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "forward: no input tensor");
    if (x->ndim != 4)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "forward: input must be (B,C,H,W), got %d dimensions",
                            x->ndim);
    if (x->dtype != SLEAPC_DTYPE_U8 && x->dtype != SLEAPC_DTYPE_F32)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "forward: input must be uint8 or float32, got %s",
                            sleapc__dtype_name(x->dtype));
    for (int i = 0; i < 4; i++)
        if (x->shape[i] < 1 || x->shape[i] > (1 << 20))
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "forward: input dimension %d is %lld", i,
                                (long long)x->shape[i]);
    int64_t c = x->shape[1];
    if (c != in_channels && !((c == 1 && in_channels == 3) || (c == 3 && in_channels == 1)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "forward: input has %lld channels, the model takes %d (1 or 3 can be converted)",
                            (long long)c, in_channels);
    return SLEAPC_OK;
}

sleapc_status sleapc__graph_input_prepare(const sleapc_tensor *x, int in_channels, float *dst)
{
    return sleapc__graph_input_prepare_as(x, in_channels, false, dst);
}

sleapc_status sleapc__graph_input_prepare_as(const sleapc_tensor *x, int in_channels, bool as_is,
                                             float *dst)
{
    sleapc_status st = sleapc__graph_input_check(x, in_channels);
    if (st)
        return st;
    int64_t b = x->shape[0], c = x->shape[1], hw = x->shape[2] * x->shape[3];
    int64_t n = b * c * hw;
    /* sleap-nn divides floats by 255 only when the batch's max exceeds 1. */
    bool divide = false;
    if (as_is) {
        divide = false;
    } else if (x->dtype == SLEAPC_DTYPE_U8) {
        divide = true;
    } else {
        const float *src = x->data;
        float mx = -__builtin_inff();
        for (int64_t i = 0; i < n; i++)
            if (src[i] > mx)
                mx = src[i];
        divide = mx > 1.0f;
    }
    for (int64_t bi = 0; bi < b; bi++) {
        float *out = dst + bi * in_channels * hw;
        /* Source planes of this sample, normalised one value at a time. */
        for (int64_t p = 0; p < hw; p++) {
            /* Only a conversion reads them (c is 1 or 3 then); a model of
             * more channels takes its own count as it is. */
            float v[3];
            for (int64_t ci = 0; ci < c; ci++) {
                int64_t idx = (bi * c + ci) * hw + p;
                float f = x->dtype == SLEAPC_DTYPE_U8 ? (float)((const uint8_t *)x->data)[idx]
                                                      : ((const float *)x->data)[idx];
                f = divide ? f / 255.0f : f;
                if (c == in_channels)
                    out[ci * hw + p] = f;
                else
                    v[ci] = f;
            }
            if (c == in_channels) {
                continue;
            } else if (c == 1) {
                out[p] = out[hw + p] = out[2 * hw + p] = v[0];
            } else {
                /* torchvision rgb_to_grayscale order: ((0.2989 R) + 0.587 G) + 0.114 B. */
                float y = 0.2989f * v[0];
                y = y + 0.587f * v[1];
                y = y + 0.114f * v[2];
                out[p] = y;
            }
        }
    }
    return SLEAPC_OK;
}
