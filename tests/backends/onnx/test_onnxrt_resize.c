/* The interpreter's Resize (mode linear, half-pixel centres) on a graph
 * built here, against the operator's definition computed in double:
 * - opset 18 antialias=1 when shrinking: output pixel i (centre
 *   (i + 0.5) / s in input pixels) is the average of the input pixels j
 *   (centres j + 0.5) weighted by max(0, 1 - |(j + 0.5 - centre) * s|),
 *   the linear filter stretched by 1/s, over the pixels inside the image;
 * - plain linear (antialias 0, and antialias 1 when enlarging): the two
 *   nearest input pixels, the coordinate clamped into the image.
 * 1e-5 absolute is float32 rounding over at most 8 weighted terms of
 * values below 10. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/onnx/onnxrt.h"
#include "io/onnx/onnx_read.h"
#include "io/onnx_pb_writer.h"
#include "test_util.h"

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define TOL 1e-5

enum { T_FLOAT = 1 };
enum { H = 8, W = 12 };

/* y = Resize(x, scales = (1, 1, sy, sx)), or with sizes (1, 1, oh, ow) when
 * oh > 0 (then the scales are oh / H, ow / W). */
static sleapc_onnxrt *plan(float sy, float sx, int oh, int ow, int antialias,
                           sleapc_onnx_model **om)
{
    pb g = {0};
    pb in = onnx_value("x", T_FLOAT, 4, (int64_t[]){1, 1, H, W});
    pb_sub(&g, ONNX_GRAPH_INPUT, &in);
    pb target = oh > 0 ? onnx_int64_tensor("target", 1, (int64_t[]){4}, (int64_t[]){1, 1, oh, ow})
                       : onnx_float_tensor("target", 1, (int64_t[]){4}, (float[]){1, 1, sy, sx});
    pb_sub(&g, ONNX_GRAPH_INIT, &target);
    pb a[3] = {onnx_attr_str("mode", "linear"),
               onnx_attr_str("coordinate_transformation_mode", "half_pixel"),
               onnx_attr_int("antialias", antialias)};
    pb n = onnx_node("Resize", "resize",
                     oh > 0 ? NAMES("x", "", "", "target") : NAMES("x", "", "target"), NAMES("y"),
                     a, 3);
    pb_sub(&g, ONNX_GRAPH_NODE, &n);
    pb out = onnx_value("y", T_FLOAT, 0, NULL);
    pb_sub(&g, ONNX_GRAPH_OUTPUT, &out);
    pb model = onnx_model(&g, 18);
    sleapc_onnxrt *rt = NULL;
    CHECK_OK(sleapc__onnx_parse(model.d, model.n, "resize.onnx", om));
    free(model.d);
    if (*om)
        CHECK_OK(sleapc__onnxrt_create(*om, "native", 1, &rt));
    return rt;
}

/* Weights of output pixel i along an axis of n inputs at scale s. */
static int weights(int i, int n, double s, bool antialias, int *first, double *w)
{
    double centre = (i + 0.5) / s;
    if (antialias && s < 1) {
        double sum = 0;
        int m = 0;
        *first = -1;
        for (int j = 0; j < n; j++) {
            double v = 1 - fabs((j + 0.5 - centre) * s);
            if (v <= 0)
                continue;
            if (*first < 0)
                *first = j;
            w[m++] = v;
            sum += v;
        }
        for (int k = 0; k < m; k++)
            w[k] /= sum;
        return m;
    }
    double x = fmin(fmax(centre - 0.5, 0), n - 1);
    *first = (int)x;
    w[0] = 1 - (x - *first);
    w[1] = x - *first;
    if (*first + 1 >= n)
        return 1;
    return 2;
}

static void check(float sy, float sx, int sized_h, int sized_w, int antialias)
{
    if (sized_h > 0) {
        sy = (float)sized_h / H;
        sx = (float)sized_w / W;
    }
    float x[H * W];
    for (int i = 0; i < H * W; i++)
        x[i] = (float)((i * 7919) % 23) * 0.37f; /* no structure a filter could hide */
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = plan(sy, sx, sized_h, sized_w, antialias, &om);
    sleapc_tensor in = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 1, H, W}, .data = x};
    sleapc_tensor_map out = {0};
    if (rt)
        CHECK_OK(sleapc__onnxrt_run(rt, &in, &out));
    const sleapc_tensor *y = sleapc__tensor_map_get(&out, "y");
    const int oh = sized_h > 0 ? sized_h : (int)floor(H * (double)sy);
    const int ow = sized_h > 0 ? sized_w : (int)floor(W * (double)sx);
    CHECK_MSG(y && y->ndim == 4 && y->shape[2] == oh && y->shape[3] == ow,
              "scales %g x %g: output shape", sy, sx);
    double worst = 0;
    for (int i = 0; y && y->shape[2] == oh && y->shape[3] == ow && i < oh; i++) {
        double wy[16], wx[16];
        int y0, x0, ny = weights(i, H, sy, antialias, &y0, wy);
        for (int j = 0; j < ow; j++) {
            int nx = weights(j, W, sx, antialias, &x0, wx);
            double want = 0;
            for (int a = 0; a < ny; a++)
                for (int b = 0; b < nx; b++)
                    want += wy[a] * wx[b] * x[(y0 + a) * W + x0 + b];
            worst = fmax(worst, fabs(((const float *)y->data)[i * ow + j] - want));
        }
    }
    CHECK_MSG(worst <= TOL, "scales %g x %g, antialias %d: max error %.3g", sy, sx, antialias,
              worst);
    printf("scales %.3g x %.3g antialias %d: %dx%d, max error %.2e\n", sy, sx, antialias, oh, ow,
           worst);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

/* Scales that do not divide the size: the filter would need the given
 * scale where torch (and sleapc) take it from the sizes; refused. */
static void check_refused(void)
{
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = plan(0.3f, 0.5f, 0, 0, 1, &om);
    float x[H * W] = {0};
    sleapc_tensor in = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {1, 1, H, W}, .data = x};
    sleapc_tensor_map out = {0};
    sleapc_status st = rt ? sleapc__onnxrt_run(rt, &in, &out) : SLEAPC_ERR_STATE;
    CHECK_MSG(st == SLEAPC_ERR_UNSUPPORTED && strstr(sleapc_last_error(), "resize"), "%s",
              sleapc_last_error());
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
}

int main(void)
{
    check(0.5f, 0.5f, 0, 0, 1);   /* a single-instance export's input scale */
    check(0.75f, 0.25f, 0, 0, 1); /* uneven shrink factors */
    check(0, 0, 3, 5, 1);         /* sizes (what torch exports): 3/8, 5/12 */
    check(0.5f, 2.0f, 0, 0, 1);   /* shrink one axis, enlarge the other */
    check(2.0f, 1.5f, 0, 0, 1);   /* enlarging: antialias changes nothing */
    check(0.5f, 0.5f, 0, 0, 0);   /* plain linear */
    check_refused();
    return test_finish();
}
