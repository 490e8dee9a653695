/* The small dense ops of ClassVectorsHead and the class-map heads: linear,
 * sigmoid, softmax. A few hundred values per frame, so plain loops. */
#include <math.h>

#include "backends/native/native_kernels.h"
#include "backends/sigmoid.h"

void sleapc__native_linear(const float *src, int64_t b, int64_t n_in, int64_t n_out,
                           const float *weight, const float *bias, bool relu, float *dst)
{
    for (int64_t bi = 0; bi < b; bi++) {
        const float *x = src + bi * n_in;
        for (int64_t o = 0; o < n_out; o++) {
            const float *wr = weight + o * n_in;
            float acc = bias ? bias[o] : 0.0f;
            for (int64_t i = 0; i < n_in; i++)
                acc += wr[i] * x[i];
            dst[bi * n_out + o] = relu && !(acc > 0.0f) ? 0.0f : acc;
        }
    }
}

void sleapc__native_sigmoid(float *x, int64_t n)
{
    sleapc__sigmoid_apply(x, n);
}

void sleapc__native_softmax(float *x, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; r++) {
        float *v = x + r * n;
        if (n <= 0)
            continue;
        /* Subtracting the row max keeps expf in range (torch.softmax does
         * the same); the largest term becomes exactly 1. */
        float m = v[0];
        for (int64_t i = 1; i < n; i++)
            m = v[i] > m ? v[i] : m;
        float sum = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            v[i] = expf(v[i] - m);
            sum += v[i];
        }
        float inv = 1.0f / sum;
        for (int64_t i = 0; i < n; i++)
            v[i] *= inv;
    }
}
