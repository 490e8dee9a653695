/* numpy's float32 sums (see mot_f32.h). */
#include "pipeline/tracking/mot/mot_f32.h"

#include <math.h>

/* np.add.reduce of the float32 squares x[i] * x[i]: sequential under 8
 * values, eight accumulators up to 128, halves above. */
static float pairwise_sq(const float *x, int n)
{
    if (n < 8) {
        float r = 0.0f;
        for (int i = 0; i < n; i++)
            r += x[i] * x[i];
        return r;
    }
    if (n <= 128) {
        float r[8];
        for (int j = 0; j < 8; j++)
            r[j] = x[j] * x[j];
        int i = 8;
        for (; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += x[i + j] * x[i + j];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += x[i] * x[i];
        return res;
    }
    int n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sq(x, n2) + pairwise_sq(x + n2, n - n2);
}

float sleapc__mot_norm_f32(const float *x, int n)
{
    return sqrtf(pairwise_sq(x, n));
}

float sleapc__mot_dot_f32(const float *a, const float *b, int n)
{
    /* four lanes; blocks of 16 accumulate their 4 vectors last to first,
     * the rest one vector at a time; the lanes are summed pairwise */
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int i = 0;
    for (; n - i >= 16; i += 16)
        for (int l = 0; l < 4; l++) {
            float s = acc[l];
            for (int k = 3; k >= 0; k--) {
                const float p = a[i + 4 * k + l] * b[i + 4 * k + l];
                s = p + s;
            }
            acc[l] = s;
        }
    for (; i < n; i += 4)
        for (int l = 0; l < 4; l++) {
            const float p = i + l < n ? a[i + l] * b[i + l] : 0.0f;
            acc[l] = p + acc[l];
        }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

bool sleapc__mot_det_unit(const mot_video *v, int64_t d, float *out)
{
    const int E = v->emb_dim;
    if (E <= 0 || !v->emb)
        return false;
    const float *x = v->emb + (size_t)d * E;
    double ss = 0.0;
    for (int i = 0; i < E; i++)
        ss += (double)x[i] * (double)x[i];
    const double norm = sqrt(ss);
    if (!isfinite(norm) || norm <= 0.0)
        return false;
    for (int i = 0; out && i < E; i++)
        out[i] = (float)((double)x[i] / norm);
    return true;
}
