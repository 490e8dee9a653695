/* PAF candidate enumeration and line scoring, after sleap-nn ops/paf.py.
 * Every float step is float32 and in the order torch 1.13 evaluates it on
 * the CPU, so that the scores are bit-identical to sleap-nn's. */
#include "core/paf.h"

#include <float.h>
#include <math.h>

#include "core/alloc.h"
#include "core/error.h"

/* Points per line scored without a heap buffer (sleap-nn's default is 10). */
#define PAF_STACK_POINTS 64

sleapc_paf_score_opts sleapc__paf_score_opts_default(void)
{
    sleapc_paf_score_opts o = {
        .n_points = 10,
        .paf_stride = 1,
        .max_edge_length_ratio = 0.25,
        .dist_penalty_weight = 1.0,
        .sleap1 = false,
    };
    return o;
}

double sleapc__paf_max_edge_length(double ratio, int64_t n_edges, int64_t paf_h, int64_t paf_w,
                                   int paf_stride)
{
    int64_t m = 2 * n_edges;
    if (paf_w > m)
        m = paf_w;
    if (paf_h > m)
        m = paf_h;
    /* Python: ratio * max(...) * stride, left to right in double. */
    return ratio * (double)m * (double)paf_stride;
}

void sleapc__paf_linspace(int n, float *t)
{
    if (n <= 0)
        return;
    if (n == 1) {
        t[0] = 0.0f;
        return;
    }
    /* Modelled on torch 1.13's linspace_kernel: step = (end - start) /
     * (steps - 1) in float32, value = start + step * idx, except that its
     * vectorised loop, which only runs on full pairs of 8-float vectors,
     * generates base + i * step from base = start + step * (vector start).
     * This gives the correctly rounded j / 9 for n = 10, sleap-nn's default,
     * and ulp differences elsewhere (n = 7, 13, 20), as measured on torch. */
    const float step = 1.0f / (float)(n - 1);
    const int n_vec = (n / 16) * 16;
    for (int j = 0; j < n; j++) {
        if (j < n_vec) {
            int s = (j / 8) * 8;
            float base = 0.0f + step * (float)s;
            t[j] = base + (float)(j - s) * step;
        } else {
            t[j] = 0.0f + step * (float)j;
        }
    }
}

/* torch's float32 sum over a contiguous row (SumKernel.cpp cascade_sum):
 * mean_line_scores = torch.mean(scores, dim=1) is sum().div_(n), and torch
 * 1.13's cascade_sum adds in a fixed, unusual order: 4 interleaved partial
 * sums (multi_row_sum, with a 4-level cascade past 16 rows per partial), and
 * for rows of 8 or more, 8-float vector lanes whose lanes are added last,
 * after the leftover tail elements. Reproducing it makes the scores
 * bit-identical to sleap-nn's. */

/* Item i of a strided sequence: x[i * stride]. */
static float item(const float *x, int64_t stride, int64_t i)
{
    return x[i * stride];
}

static int64_t ceil_log2(int64_t v)
{
    if (v <= 2)
        return 1;
    int64_t bits = 0;
    for (uint64_t u = (uint64_t)(v - 1); u; u >>= 1)
        bits++;
    return bits;
}

/* multi_row_sum<acc, 4>: partial k sums items 4 * i + k, i < n_rows. */
static void multi_row_sum(const float *x, int64_t stride, int64_t n_rows, float out[4])
{
    enum { LEVELS = 4, ROWS = 4 };
    int64_t level_power = ceil_log2(n_rows) / LEVELS;
    if (level_power < 4)
        level_power = 4;
    const int64_t level_step = (int64_t)1 << level_power;
    const int64_t level_mask = level_step - 1;
    float acc[LEVELS][ROWS] = { { 0 } };
    int64_t i = 0;
    for (; i + level_step <= n_rows;) {
        for (int64_t j = 0; j < level_step; j++)
            for (int k = 0; k < ROWS; k++)
                acc[0][k] = acc[0][k] + item(x, stride, (i + j) * ROWS + k);
        for (int j = 1; j < LEVELS; j++) {
            for (int k = 0; k < ROWS; k++) {
                acc[j][k] = acc[j][k] + acc[j - 1][k];
                acc[j - 1][k] = 0.0f;
            }
            if ((i & (level_mask << (j * level_power))) != 0)
                break;
        }
        i += level_step;
    }
    for (; i < n_rows; i++)
        for (int k = 0; k < ROWS; k++)
            acc[0][k] = acc[0][k] + item(x, stride, i * ROWS + k);
    for (int j = 1; j < LEVELS; j++)
        for (int k = 0; k < ROWS; k++)
            acc[0][k] = acc[0][k] + acc[j][k];
    for (int k = 0; k < ROWS; k++)
        out[k] = acc[0][k];
}

/* row_sum with ilp factor 4 over n items. */
static float row_sum(const float *x, int64_t stride, int64_t n)
{
    float p[4];
    const int64_t n_ilp = n / 4;
    multi_row_sum(x, stride, n_ilp, p);
    for (int64_t i = n_ilp * 4; i < n; i++)
        p[0] = p[0] + item(x, stride, i);
    for (int k = 1; k < 4; k++)
        p[0] = p[0] + p[k];
    return p[0];
}

/* cascade_sum of one contiguous row of n floats. */
static float torch_row_sum(const float *x, int64_t n)
{
    enum { LANES = 8 };
    if (n < LANES)
        return row_sum(x, 1, n); /* scalar_inner_sum */
    /* vectorized_inner_sum: each lane runs row_sum over its vectors. */
    const int64_t n_vec = n / LANES;
    float acc = 0.0f;
    for (int64_t k = n_vec * LANES; k < n; k++)
        acc = acc + x[k];
    for (int l = 0; l < LANES; l++)
        acc = acc + row_sum(x + l, LANES, n_vec);
    return acc;
}

static sleapc_status check_nodes(const int32_t *peak_channel_inds, int64_t n_peaks, int n_nodes,
                                 const int (*edges)[2], int n_edges)
{
    if (n_peaks < 0 || n_nodes < 0 || n_edges < 0 || (n_peaks && !peak_channel_inds) ||
        (n_edges && !edges))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "enumerate PAF candidates: bad arguments");
    for (int64_t p = 0; p < n_peaks; p++) {
        if (peak_channel_inds[p] < 0 || peak_channel_inds[p] >= n_nodes)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "enumerate PAF candidates: peak %lld: node %d not in [0, %d)",
                                (long long)p, (int)peak_channel_inds[p], n_nodes);
    }
    for (int k = 0; k < n_edges; k++) {
        for (int e = 0; e < 2; e++) {
            if (edges[k][e] < 0 || edges[k][e] >= n_nodes)
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                    "enumerate PAF candidates: edge %d: node %d not in [0, %d)", k,
                                    edges[k][e], n_nodes);
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__paf_count_candidates(const int32_t *peak_channel_inds, int64_t n_peaks,
                                           int n_nodes, const int (*edges)[2], int n_edges,
                                           int64_t *out_n)
{
    if (!out_n)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "count PAF candidates: out is required");
    *out_n = 0;
    sleapc_status st = check_nodes(peak_channel_inds, n_peaks, n_nodes, edges, n_edges);
    if (st)
        return st;
    int64_t total = 0;
    for (int k = 0; k < n_edges; k++) {
        int64_t n_src = 0, n_dst = 0;
        for (int64_t p = 0; p < n_peaks; p++) {
            n_src += peak_channel_inds[p] == edges[k][0];
            n_dst += peak_channel_inds[p] == edges[k][1];
        }
        if (n_src && n_dst > (INT64_MAX - total) / n_src)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "count PAF candidates: too many candidate connections");
        total += n_src * n_dst;
    }
    *out_n = total;
    return SLEAPC_OK;
}

sleapc_status sleapc__paf_candidates(const int32_t *peak_channel_inds, int64_t n_peaks, int n_nodes,
                                     const int (*edges)[2], int n_edges, int64_t capacity,
                                     int32_t *edge_inds, int64_t (*edge_peak_inds)[2],
                                     int64_t *n_out)
{
    if (!n_out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "enumerate PAF candidates: n_out is required");
    *n_out = 0;
    int64_t total;
    sleapc_status st =
        sleapc__paf_count_candidates(peak_channel_inds, n_peaks, n_nodes, edges, n_edges, &total);
    if (st)
        return st;
    if (total > capacity || (total && (!edge_inds || !edge_peak_inds)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "enumerate PAF candidates: %lld candidates, room for %lld",
                            (long long)total, (long long)capacity);
    /* get_connection_candidates groups peaks by node with an argsort that
     * keeps peak order within a node, then takes a src-major meshgrid. */
    int64_t n = 0;
    for (int k = 0; k < n_edges; k++) {
        for (int64_t s = 0; s < n_peaks; s++) {
            if (peak_channel_inds[s] != edges[k][0])
                continue;
            for (int64_t d = 0; d < n_peaks; d++) {
                if (peak_channel_inds[d] != edges[k][1])
                    continue;
                edge_inds[n] = (int32_t)k;
                edge_peak_inds[n][0] = s;
                edge_peak_inds[n][1] = d;
                n++;
            }
        }
    }
    *n_out = n;
    return SLEAPC_OK;
}

/* make_line_subs: (x / stride).round().int(), then clip to [0, size - 1].
 * Clipping happens before the int conversion here so that huge or NaN
 * coordinates stay defined; in range the result is the same. */
static int64_t grid_index(float coord, int stride, int64_t size)
{
    float r = rintf(coord / (float)stride); /* half to even, like torch.round */
    if (!(r >= 0.0f))
        return 0;
    if (r > (float)(size - 1))
        return size - 1;
    return (int64_t)r;
}

/* SLEAP 1.x make_line_subs: tf.round(x / stride) (half to even), no clip;
 * -1 for a look-up outside the map (it reads 0). */
static int64_t grid_index_sleap1(float coord, int stride, int64_t size)
{
    float r = rintf(coord / (float)stride);
    if (!(r >= 0.0f) || r > (float)(size - 1))
        return -1;
    return (int64_t)r;
}

/* One candidate as SLEAP 1.x scores it (make_line_subs, get_paf_lines,
 * score_paf_lines, compute_distance_penalty), float32 throughout. */
static float score_sleap1(const float *px_map, const float *py_map, int64_t paf_h, int64_t paf_w,
                          float sx, float sy, float dx, float dy,
                          const sleapc_paf_score_opts *opts, float max_len, float *dots)
{
    const int n = opts->n_points;
    /* tf.linspace: delta = (stop - start) / (n - 1), start + delta * j inside,
     * the end points exact. */
    const float steps = (float)(n - 1 > 1 ? n - 1 : 1);
    const float delta_x = (dx - sx) / steps, delta_y = (dy - sy) / steps;
    const float vx = dx - sx, vy = dy - sy;
    const float len = sqrtf(vx * vx + vy * vy);
    const float ux = vx / len, uy = vy / len;
    for (int j = 0; j < n; j++) {
        float x = sx, y = sy;
        if (j > 0 && j == n - 1) {
            x = dx;
            y = dy;
        } else if (j > 0) {
            x = sx + delta_x * (float)j;
            y = sy + delta_y * (float)j;
        }
        const int64_t col = grid_index_sleap1(x, opts->paf_stride, paf_w);
        const int64_t row = grid_index_sleap1(y, opts->paf_stride, paf_h);
        float lx = 0.0f, ly = 0.0f;
        if (col >= 0 && row >= 0) {
            lx = px_map[row * paf_w + col];
            ly = py_map[row * paf_w + col];
        }
        dots[j] = lx * ux + ly * uy;
    }
    float sum = 0.0f;
    for (int j = 0; j < n; j++)
        sum = sum + dots[j];
    const float mean = sum / (float)n;
    float pen = max_len / len - 1.0f;
    if (pen > 0.0f)
        pen = 0.0f;
    return mean + pen * (float)opts->dist_penalty_weight;
}

sleapc_status sleapc__paf_score_lines(const float *pafs, int64_t n_edges, int64_t paf_h,
                                      int64_t paf_w, const float *peaks, int64_t n_peaks,
                                      const int32_t *edge_inds, const int64_t (*edge_peak_inds)[2],
                                      int64_t n_cand, const sleapc_paf_score_opts *opts,
                                      float *line_scores)
{
    if (!opts || opts->n_points < 1 || opts->paf_stride < 1 || n_edges < 0 || paf_h < 1 ||
        paf_w < 1 || n_peaks < 0 || n_cand < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "score PAF lines: bad sizes or options");
    if (n_edges > INT64_MAX / 4 || paf_h > INT64_MAX / paf_w / (2 * n_edges + 1))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "score PAF lines: PAF sizes overflow");
    if (n_cand == 0)
        return SLEAPC_OK;
    if (!pafs || !peaks || !edge_inds || !edge_peak_inds || !line_scores)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "score PAF lines: NULL array");

    /* Sample positions and dot products; on the stack for the usual point
     * counts, so scoring a frame allocates nothing. */
    const int n_points = opts->n_points;
    float small[2 * PAF_STACK_POINTS];
    float *t = n_points <= PAF_STACK_POINTS ? small : sleapc__malloc((size_t)n_points * 2 * sizeof *t);
    if (!t)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "score PAF lines: out of memory");
    float *dots = t + n_points;
    sleapc__paf_linspace(n_points, t);

    float max_len = (float)sleapc__paf_max_edge_length(opts->max_edge_length_ratio, n_edges,
                                                       paf_h, paf_w, opts->paf_stride);
    if (opts->sleap1) {
        /* score_paf_lines_batch: ratio * float32(max(shape)) * stride in float32. */
        int64_t m = 2 * n_edges > paf_h ? 2 * n_edges : paf_h;
        m = paf_w > m ? paf_w : m;
        max_len = ((float)opts->max_edge_length_ratio * (float)m) * (float)opts->paf_stride;
    }
    const float weight = (float)opts->dist_penalty_weight;
    /* interp1d divides by eps + (x1 - x0) with x = [0, 1]: 1 + 2^-23. */
    const float interp_den = 1.0f + FLT_EPSILON;
    const int64_t plane = paf_h * paf_w;

    for (int64_t c = 0; c < n_cand; c++) {
        const int64_t k = edge_inds[c];
        const int64_t s = edge_peak_inds[c][0], d = edge_peak_inds[c][1];
        if (k < 0 || k >= n_edges || s < 0 || s >= n_peaks || d < 0 || d >= n_peaks) {
            if (t != small)
                sleapc__free(t);
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "score PAF lines: candidate %lld: edge %lld or peaks "
                                "(%lld, %lld) out of range",
                                (long long)c, (long long)k, (long long)s, (long long)d);
        }
        const float sx = peaks[2 * s], sy = peaks[2 * s + 1];
        const float dx = peaks[2 * d], dy = peaks[2 * d + 1];
        if (opts->sleap1) {
            const float *pxm = pafs + 2 * k * plane;
            line_scores[c] = score_sleap1(pxm, pxm + plane, paf_h, paf_w, sx, sy, dx, dy, opts,
                                          max_len, dots);
            continue;
        }

        /* score_paf_lines: unit displacement vector via torch.norm. */
        const float vx = dx - sx, vy = dy - sy;
        /* torch.norm's float kernel accumulates x * x with fused
         * multiply-adds (its AVX2 build contracts them). */
        const float sq = fmaf(vy, vy, vx * vx);
        const float len = sqrtf(sq);
        const float ux = vx / len, uy = vy / len;

        const float slope_x = vx / interp_den, slope_y = vy / interp_den;
        const float *px_map = pafs + 2 * k * plane;
        const float *py_map = px_map + plane;
        for (int j = 0; j < n_points; j++) {
            const float x = sx + slope_x * t[j];
            const float y = sy + slope_y * t[j];
            const int64_t col = grid_index(x, opts->paf_stride, paf_w);
            const int64_t row = grid_index(y, opts->paf_stride, paf_h);
            const int64_t at = row * paf_w + col;
            /* bmm's small-matrix kernel: plain multiply, then add. */
            float dot = px_map[at] * ux;
            dot = dot + py_map[at] * uy;
            dots[j] = dot;
        }
        const float mean = torch_row_sum(dots, n_points) / (float)n_points;

        /* compute_distance_penalty: torch evaluates max_len / len as
         * reciprocal(len) * max_len (Tensor.__rtruediv__). */
        float pen = (1.0f / len) * max_len;
        pen = pen - 1.0f;
        if (pen > 0.0f)
            pen = 0.0f;
        pen = pen * weight;
        line_scores[c] = mean + pen;
    }
    if (t != small)
        sleapc__free(t);
    return SLEAPC_OK;
}
