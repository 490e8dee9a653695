/* Sampling host kernels: GridSample (the exports' crops and PAF/class-map
 * lookups), Resize (input scaling before the network) and ScatterND. Float
 * arithmetic follows ONNX Runtime's CPU kernels so the results agree with the
 * reference outputs to rounding. */
#include <math.h>
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/error.h"
#include "core/resize_aa.h"

/* Pixel (iy, ix) of plane p, or 0 outside it (padding_mode "zeros"). */
static float pixel(const float *p, int64_t h, int64_t w, int64_t iy, int64_t ix)
{
    return iy >= 0 && iy < h && ix >= 0 && ix < w ? p[iy * w + ix] : 0.0f;
}

sleapc_status sleapc__rt_op_grid_sample(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                        rt_tensor *out, int n_out)
{
    (void)n_out;
    const char *mode = NULL, *padding = NULL;
    int64_t align = 0;
    sleapc_status st = sleapc__rt_attr_str(c, "mode", "bilinear", &mode);
    if (!st)
        st = sleapc__rt_attr_str(c, "padding_mode", "zeros", &padding);
    if (!st)
        st = sleapc__rt_attr_int(c, "align_corners", 0, &align);
    if (st)
        return st;
    if (strcmp(mode, "bilinear") != 0 || strcmp(padding, "zeros") != 0)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "mode %s, padding %s (bilinear, zeros)",
                               mode, padding);
    if (n_in != 2 || !in[0] || !in[1])
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects 2 inputs");
    const rt_tensor *x = in[0], *grid = in[1];
    if (x->dtype != SLEAPC_ONNX_DTYPE_FLOAT || grid->dtype != SLEAPC_ONNX_DTYPE_FLOAT ||
        x->ndim != 4 || grid->ndim != 4 || grid->shape[0] != x->shape[0] || grid->shape[3] != 2)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT,
                               "expects float (N,C,H,W) data and an (N,Ho,Wo,2) grid");
    int64_t nb = x->shape[0], ch = x->shape[1], h = x->shape[2], w = x->shape[3];
    int64_t ho = grid->shape[1], wo = grid->shape[2];
    int64_t shape[4] = {nb, ch, ho, wo};
    st = sleapc__rt_alloc(c, out, SLEAPC_ONNX_DTYPE_FLOAT, 4, shape);
    if (st)
        return st;
    const float *g = grid->data;
    float *d = out->data;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t oy = 0; oy < ho; oy++)
            for (int64_t ox = 0; ox < wo; ox++) {
                const float *gp = g + ((b * ho + oy) * wo + ox) * 2;
                /* Normalised [-1, 1] to pixels. */
                float fx = align ? (gp[0] + 1.0f) / 2.0f * (float)(w - 1)
                                 : ((gp[0] + 1.0f) * (float)w - 1.0f) / 2.0f;
                float fy = align ? (gp[1] + 1.0f) / 2.0f * (float)(h - 1)
                                 : ((gp[1] + 1.0f) * (float)h - 1.0f) / 2.0f;
                /* Far outside (or NaN): every corner is padding. */
                bool far = !(fabsf(fx) < 1e9f) || !(fabsf(fy) < 1e9f);
                float x0f = far ? -2.0f : floorf(fx), y0f = far ? -2.0f : floorf(fy);
                int64_t x0 = (int64_t)x0f, y0 = (int64_t)y0f;
                float dx = far ? 0.0f : fx - x0f, dy = far ? 0.0f : fy - y0f;
                for (int64_t k = 0; k < ch; k++) {
                    const float *p = (const float *)x->data + (b * ch + k) * h * w;
                    float v00 = pixel(p, h, w, y0, x0), v01 = pixel(p, h, w, y0, x0 + 1);
                    float v10 = pixel(p, h, w, y0 + 1, x0), v11 = pixel(p, h, w, y0 + 1, x0 + 1);
                    float top = (1.0f - dx) * v00 + dx * v01;
                    float bot = (1.0f - dx) * v10 + dx * v11;
                    d[((b * ch + k) * ho + oy) * wo + ox] = (1.0f - dy) * top + dy * bot;
                }
            }
    return SLEAPC_OK;
}

/* Output pixel i -> input coordinate, per coordinate_transformation_mode. */
static float source_coord(const char *ctm, int64_t i, int64_t in, int64_t out, float scale)
{
    if (strcmp(ctm, "align_corners") == 0)
        return out == 1 ? 0.0f : (float)i * (float)(in - 1) / (float)(out - 1);
    if (strcmp(ctm, "asymmetric") == 0)
        return (float)i / scale;
    if (strcmp(ctm, "pytorch_half_pixel") == 0 && out == 1)
        return 0.0f;
    return ((float)i + 0.5f) / scale - 0.5f;
}

/* Opset 18's antialias=1 when shrinking (what torch >= 2 exports for
 * F.interpolate(antialias=True), e.g. a single-instance wrapper's input
 * scale): the linear filter stretched by the shrink factor, separable,
 * normalised per output pixel. That is torch's _upsample_bilinear2d_aa, which
 * resize_aa.h reproduces, for half-pixel centres. */
static sleapc_status resize_antialias(const rt_op_ctx *c, const char *ctm, const rt_tensor *x,
                                      rt_tensor *out, int64_t oh, int64_t ow)
{
    if (strcmp(ctm, "half_pixel") != 0 && strcmp(ctm, "pytorch_half_pixel") != 0)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "antialiased resize with %s", ctm);
    const int64_t n = x->shape[0] * x->shape[1], h = x->shape[2], w = x->shape[3];
    size_t bytes = 0;
    void *scratch = NULL;
    sleapc_status st = sleapc__resize_aa_scratch_size(1, h, w, oh, ow, &bytes);
    if (!st && bytes)
        st = sleapc__rt_scratch(c, bytes, &scratch);
    for (int64_t p = 0; p < n && !st; p++)
        st = sleapc__resize_aa_f32((const float *)x->data + p * h * w, 1, h, w,
                                   (float *)out->data + p * oh * ow, oh, ow, scratch);
    return st;
}

sleapc_status sleapc__rt_op_resize(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                   rt_tensor *out, int n_out)
{
    (void)n_out;
    const char *mode = NULL, *ctm = NULL;
    int64_t antialias = 0;
    sleapc_status st = sleapc__rt_attr_str(c, "mode", "nearest", &mode);
    if (!st)
        st = sleapc__rt_attr_str(c, "coordinate_transformation_mode", "half_pixel", &ctm);
    if (!st)
        st = sleapc__rt_attr_int(c, "antialias", 0, &antialias);
    if (st)
        return st;
    bool known_ctm = strcmp(ctm, "half_pixel") == 0 || strcmp(ctm, "pytorch_half_pixel") == 0 ||
                     strcmp(ctm, "align_corners") == 0 || strcmp(ctm, "asymmetric") == 0;
    if (strcmp(mode, "linear") != 0 || !known_ctm || sleapc__onnx_node_attr(c->node, "axes"))
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "mode %s, %s (linear only)", mode, ctm);
    if (n_in < 1 || !in[0] || in[0]->dtype != SLEAPC_ONNX_DTYPE_FLOAT || in[0]->ndim != 4 ||
        in[0]->shape[2] < 1 || in[0]->shape[3] < 1)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "expects float (N, C, H, W) data");
    const rt_tensor *x = in[0];
    const rt_tensor *scales = n_in > 2 && in[2] && in[2]->numel ? in[2] : NULL;
    const rt_tensor *sizes = n_in > 3 && in[3] && in[3]->numel ? in[3] : NULL;
    int64_t osz[4];
    float sc[4];
    if (sizes) {
        int n = 0;
        st = sleapc__rt_ints(c, sizes, 4, osz, &n);
        if (!st && n != 4)
            st = sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "sizes has %d values", n);
        for (int i = 0; !st && i < 4; i++)
            sc[i] = x->shape[i] ? (float)osz[i] / (float)x->shape[i] : 1.0f;
    } else if (scales && scales->dtype == SLEAPC_ONNX_DTYPE_FLOAT && scales->numel == 4) {
        for (int i = 0; i < 4; i++) {
            sc[i] = ((const float *)scales->data)[i];
            double o = floor((double)x->shape[i] * sc[i]);
            osz[i] = sc[i] > 0 && o < (double)RT_MAX_NUMEL ? (int64_t)o : -1;
        }
    } else {
        st = sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "needs 4 float scales or 4 sizes");
    }
    if (st)
        return st;
    if (osz[0] != x->shape[0] || osz[1] != x->shape[1] || osz[2] < 1 || osz[3] < 1)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED, "resizing other than H and W");
    st = sleapc__rt_alloc(c, out, SLEAPC_ONNX_DTYPE_FLOAT, 4, osz);
    if (st)
        return st;
    int64_t h = x->shape[2], w = x->shape[3], oh = osz[2], ow = osz[3];
    if (antialias && (oh < h || ow < w)) {
        /* The filter takes its scale from the sizes (as torch does); given
         * scales must agree with them. */
        if (fabsf(sc[2] - (float)oh / (float)h) > 1e-6f * sc[2] ||
            fabsf(sc[3] - (float)ow / (float)w) > 1e-6f * sc[3])
            return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED,
                                   "antialiased resize by scales that do not divide the size");
        return resize_antialias(c, ctm, x, out, oh, ow);
    }
    for (int64_t p = 0; p < x->shape[0] * x->shape[1]; p++) {
        const float *s = (const float *)x->data + p * h * w;
        float *d = (float *)out->data + p * oh * ow;
        for (int64_t oy = 0; oy < oh; oy++) {
            /* Clamped into the image, as ONNX Runtime's linear upsample. */
            float fy = source_coord(ctm, oy, h, oh, sc[2]);
            fy = fy < 0.0f ? 0.0f : fy > (float)(h - 1) ? (float)(h - 1) : fy;
            int64_t y0 = (int64_t)fy, y1 = y0 + 1 < h ? y0 + 1 : h - 1;
            float dy = fy - (float)y0;
            for (int64_t ox = 0; ox < ow; ox++) {
                float fx = source_coord(ctm, ox, w, ow, sc[3]);
                fx = fx < 0.0f ? 0.0f : fx > (float)(w - 1) ? (float)(w - 1) : fx;
                int64_t x0 = (int64_t)fx, x1 = x0 + 1 < w ? x0 + 1 : w - 1;
                float dx = fx - (float)x0;
                float top = s[y0 * w + x0] * (1.0f - dx) + s[y0 * w + x1] * dx;
                float bot = s[y1 * w + x0] * (1.0f - dx) + s[y1 * w + x1] * dx;
                d[oy * ow + ox] = top * (1.0f - dy) + bot * dy;
            }
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_op_scatter_nd(const rt_op_ctx *c, rt_tensor *const *in, int n_in,
                                       rt_tensor *out, int n_out)
{
    (void)n_out;
    const char *reduction = NULL;
    sleapc_status st = sleapc__rt_attr_str(c, "reduction", "none", &reduction);
    if (st)
        return st;
    if (n_in != 3 || !in[0] || !in[1] || !in[2] || strcmp(reduction, "none") != 0)
        return sleapc__rt_fail(c, SLEAPC_ERR_UNSUPPORTED,
                               "expects data, indices, updates, no reduction");
    const rt_tensor *x = in[0], *ix = in[1], *up = in[2];
    int64_t k = ix->ndim ? ix->shape[ix->ndim - 1] : 0;
    if (ix->dtype != SLEAPC_ONNX_DTYPE_INT64 || ix->ndim < 1 || k < 1 || k > x->ndim ||
        up->dtype != x->dtype || up->ndim != ix->ndim - 1 + x->ndim - (int)k)
        return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "indices/updates do not fit the data");
    for (int i = 0; i < ix->ndim - 1; i++)
        if (up->shape[i] != ix->shape[i])
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "updates do not fit the indices");
    int64_t slice = 1;
    for (int i = (int)k; i < x->ndim; i++) {
        if (up->shape[ix->ndim - 1 + i - (int)k] != x->shape[i])
            return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "updates do not fit the data");
        slice *= x->shape[i];
    }
    st = sleapc__rt_copy(c, x, out);
    if (st)
        return st;
    size_t es = sleapc__rt_esize(x);
    int64_t n_idx = ix->numel / k;
    for (int64_t j = 0; j < n_idx; j++) {
        int64_t off = 0;
        for (int i = 0; i < k; i++) {
            int64_t v = ((const int64_t *)ix->data)[j * k + i];
            v = v < 0 ? v + x->shape[i] : v;
            if (v < 0 || v >= x->shape[i])
                return sleapc__rt_fail(c, SLEAPC_ERR_FORMAT, "index %lld out of range",
                                       (long long)v);
            off = off * x->shape[i] + v;
        }
        memcpy((uint8_t *)out->data + (size_t)(off * slice) * es,
               (const uint8_t *)up->data + (size_t)(j * slice) * es, (size_t)slice * es);
    }
    return SLEAPC_OK;
}
