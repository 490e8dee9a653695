/* The Winograd F(m x m, 3 x 3) transforms the native backend uses (Lavin &
 * Gray 2016, "Fast Algorithms for Convolutional Neural Networks"): for an
 * alpha x alpha input tile d (alpha = m + 2) and a 3 x 3 kernel g, the m x m
 * outputs are Y = A^T [(G g G^T) . (B^T d B)] A. Interpolation points:
 *   F(2): 0, 1, -1, inf
 *   F(4): 0, 1, -1, 2, -2, inf
 *   F(6): 0, 1, -1, 2, -2, 1/2, -1/2, inf  (as ncnn and NNPACK)
 * Larger points make larger coefficients, and the rounding error grows with
 * them: see sleapc__native_wino_gain. */
#include "backends/native/native_winograd.h"

#include <math.h>

static const native_wino_mats mats[3] = {
    {
        .m = 2,
        .alpha = 4,
        .bt = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
        .g = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
        .at = {{1, 1, 1, 0}, {0, 1, -1, -1}},
    },
    {
        .m = 4,
        .alpha = 6,
        .bt = {{4, 0, -5, 0, 1, 0},
               {0, -4, -4, 1, 1, 0},
               {0, 4, -4, -1, 1, 0},
               {0, -2, -1, 2, 1, 0},
               {0, 2, -1, -2, 1, 0},
               {0, 4, 0, -5, 0, 1}},
        .g = {{1.0 / 4, 0, 0},
              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
              {1.0 / 24, 1.0 / 12, 1.0 / 6},
              {1.0 / 24, -1.0 / 12, 1.0 / 6},
              {0, 0, 1}},
        .at = {{1, 1, 1, 1, 1, 0},
               {0, 1, -1, 2, -2, 0},
               {0, 1, 1, 4, 4, 0},
               {0, 1, -1, 8, -8, 1}},
    },
    {
        .m = 6,
        .alpha = 8,
        .bt = {{1, 0, -21.0f / 4, 0, 21.0f / 4, 0, -1, 0},
               {0, 1, 1, -17.0f / 4, -17.0f / 4, 1, 1, 0},
               {0, -1, 1, 17.0f / 4, -17.0f / 4, -1, 1, 0},
               {0, 0.5f, 0.25f, -2.5f, -1.25f, 2, 1, 0},
               {0, -0.5f, 0.25f, 2.5f, -1.25f, -2, 1, 0},
               {0, 2, 4, -2.5f, -5, 0.5f, 1, 0},
               {0, -2, 4, 2.5f, -5, -0.5f, 1, 0},
               {0, -1, 0, 21.0f / 4, 0, -21.0f / 4, 0, 1}},
        .g = {{1, 0, 0},
              {-2.0 / 9, -2.0 / 9, -2.0 / 9},
              {-2.0 / 9, 2.0 / 9, -2.0 / 9},
              {1.0 / 90, 1.0 / 45, 2.0 / 45},
              {1.0 / 90, -1.0 / 45, 2.0 / 45},
              {32.0 / 45, 16.0 / 45, 8.0 / 45},
              {32.0 / 45, -16.0 / 45, 8.0 / 45},
              {0, 0, 1}},
        .at = {{1, 1, 1, 1, 1, 1, 1, 0},
               {0, 1, -1, 2, -2, 0.5f, -0.5f, 0},
               {0, 1, 1, 4, 4, 0.25f, 0.25f, 0},
               {0, 1, -1, 8, -8, 0.125f, -0.125f, 0},
               {0, 1, 1, 16, 16, 1.0f / 16, 1.0f / 16, 0},
               {0, 1, -1, 32, -32, 1.0f / 32, -1.0f / 32, 1}},
    },
};

const native_wino_mats *sleapc__native_wino_mats(int m)
{
    return m == 2 ? &mats[0] : m == 4 ? &mats[1] : m == 6 ? &mats[2] : NULL;
}

/* max over outputs (r, s) of sum over the alpha^2 positions (k, l) and
 * input (p, q) / kernel (u, v) taps of
 *   |A_kr||A_ls| |G_ku||G_lv| |B_pk||B_ql|,
 * i.e. the computation in absolute values on all-ones data and weights,
 * divided by the direct method's 9 products. */
double sleapc__native_wino_gain(int m)
{
    const native_wino_mats *mt = sleapc__native_wino_mats(m);
    if (!mt)
        return 0;
    int al = mt->alpha;
    double gs[8] = {0}, bs[8] = {0}; /* row sums of |G| and of |B^T| */
    for (int k = 0; k < al; k++) {
        for (int u = 0; u < 3; u++)
            gs[k] += fabs(mt->g[k][u]);
        for (int p = 0; p < al; p++)
            bs[k] += fabs(mt->bt[k][p]);
    }
    double worst = 0;
    for (int r = 0; r < m; r++)
        for (int s = 0; s < m; s++) {
            double sum = 0;
            for (int k = 0; k < al; k++)
                for (int l = 0; l < al; l++)
                    sum += fabs(mt->at[r][k]) * fabs(mt->at[s][l]) * gs[k] * gs[l] * bs[k] * bs[l];
            if (sum > worst)
                worst = sum;
        }
    return worst / 9.0;
}
