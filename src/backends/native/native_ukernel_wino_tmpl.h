/* Winograd transforms of one microkernel set (see native_wino_in and
 * native_wino_out in native_ukernel.h), included by native_ukernel_tmpl.h
 * under the set's target. Tiles are the innermost, contiguous index of every
 * array, so a vector holds NUK_VW tiles and each transform is vector code:
 * all alpha x alpha values of a vector of tiles are loaded, transformed
 * along the rows and then the columns in registers (and the stack), and
 * stored once, with no temporary array in between.
 *
 * The 1-D transforms are B^T and A^T of native_wino_mats.c written out with
 * their zeros skipped and the usual shared sums (x1 + x2, x1 - x2, ...).
 * Accuracy: every coefficient of the tables is still formed by exactly one
 * product of coefficients (no two paths add into the same entry), so the
 * same computation in absolute values gives the same sum S as the tables
 * (sleapc__native_wino_gain); the longest rounding chain of a 1-D transform
 * is 3 (B^T) or 4 (A^T, 5 with the bias), at most the alpha terms the bound
 * K = c_in + 4 alpha + 2 counts for each (native_conv_choose.c). The
 * multiplications by 2, 4, 8, 16, 32 and their inverses are exact. */

/* y = B^T x for F(2): x, y of 4 vectors. */
NUK_INLINE void nuk_bt_2(const nuk_vec *x, nuk_vec *y)
{
    y[0] = x[0] - x[2];
    y[1] = x[1] + x[2];
    y[2] = x[2] - x[1];
    y[3] = x[1] - x[3];
}

NUK_INLINE void nuk_bt_4(const nuk_vec *x, nuk_vec *y)
{
    nuk_vec s12 = x[1] + x[2], d12 = x[1] - x[2];
    nuk_vec s34 = x[3] + x[4], d43 = x[4] - x[3];
    nuk_vec d42 = x[4] - x[2], d31 = x[3] - x[1];
    y[0] = (x[4] - 5.0f * x[2]) + 4.0f * x[0];
    y[1] = s34 - 4.0f * s12;
    y[2] = d43 + 4.0f * d12;
    y[3] = d42 + 2.0f * d31;
    y[4] = d42 - 2.0f * d31;
    y[5] = (x[5] - 5.0f * x[3]) + 4.0f * x[1];
}

NUK_INLINE void nuk_bt_6(const nuk_vec *x, nuk_vec *y)
{
    y[0] = (x[0] - x[6]) + 5.25f * (x[4] - x[2]);
    y[7] = (x[7] - x[1]) + 5.25f * (x[3] - x[5]);
    nuk_vec a = (x[1] + x[5]) - 4.25f * x[3];
    nuk_vec b = (x[2] + x[6]) - 4.25f * x[4];
    y[1] = b + a;
    y[2] = b - a;
    nuk_vec c = (0.5f * x[1] - 2.5f * x[3]) + 2.0f * x[5];
    nuk_vec d = (0.25f * x[2] - 1.25f * x[4]) + x[6];
    y[3] = d + c;
    y[4] = d - c;
    nuk_vec e = (2.0f * x[1] - 2.5f * x[3]) + 0.5f * x[5];
    nuk_vec f = (4.0f * x[2] - 5.0f * x[4]) + x[6];
    y[5] = f + e;
    y[6] = f - e;
}

/* y = A^T x: x of alpha vectors, y of m. */
NUK_INLINE void nuk_at_2(const nuk_vec *x, nuk_vec *y)
{
    y[0] = (x[0] + x[1]) + x[2];
    y[1] = (x[1] - x[2]) - x[3];
}

NUK_INLINE void nuk_at_4(const nuk_vec *x, nuk_vec *y)
{
    nuk_vec a = x[1] + x[2], b = x[1] - x[2], c = x[3] + x[4], d = x[3] - x[4];
    y[0] = (x[0] + a) + c;
    y[1] = b + 2.0f * d;
    y[2] = a + 4.0f * c;
    y[3] = (b + 8.0f * d) + x[5];
}

NUK_INLINE void nuk_at_6(const nuk_vec *x, nuk_vec *y)
{
    nuk_vec a = x[1] + x[2], b = x[1] - x[2], c = x[3] + x[4], d = x[3] - x[4];
    nuk_vec e = x[5] + x[6], f = x[5] - x[6];
    y[0] = ((x[0] + a) + c) + e;
    y[1] = (b + 2.0f * d) + 0.5f * f;
    y[2] = (a + 4.0f * c) + 0.25f * e;
    y[3] = (b + 8.0f * d) + 0.125f * f;
    y[4] = (a + 16.0f * c) + 0.0625f * e;
    y[5] = ((b + 32.0f * d) + 0.03125f * f) + x[7];
}

NUK_INLINE void nuk_bt(const nuk_vec *x, nuk_vec *y, int m)
{
    if (m == 2)
        nuk_bt_2(x, y);
    else if (m == 4)
        nuk_bt_4(x, y);
    else
        nuk_bt_6(x, y);
}

NUK_INLINE void nuk_at(const nuk_vec *x, nuk_vec *y, int m)
{
    if (m == 2)
        nuk_at_2(x, y);
    else if (m == 4)
        nuk_at_4(x, y);
    else
        nuk_at_6(x, y);
}

/* Vectors of tiles [t, t + NUK_VW): reads and writes stay within
 * round_up(n, NUK_VW) <= ps of each row (ps is a whole number of strips), so
 * the last vector is whole; lanes past n are garbage the driver drops.
 * Column phase j's alpha inputs are loaded and transformed at once, and the
 * alpha values of each k go to the stack (tr) for the second pass: one
 * store per value in between, where loading all alpha^2 inputs first made
 * the compiler copy them to the stack and back twice (stores, one a cycle,
 * bounded the transform). The arithmetic is the same. */
NUK_INLINE void nuk_wino_in(const native_wino_in *a, int m)
{
    const int al = m + 2;
    const int64_t ps = a->ps, v_ps = a->v_ps, v_ss = a->v_ss, n = a->n;
    const float *rows = a->rows;
    for (int64_t t = 0; t < n; t += NUK_VW) {
        float *vt = a->v + t / NUK_STRIP * v_ss + t % NUK_STRIP;
        nuk_vec tr[8][8]; /* tr[k][j] = sum_i B^T[k][i] d(i, j) */
        for (int j = 0; j < al; j++) {
            nuk_vec d[8], y[8];
            for (int i = 0; i < al; i++)
                d[i] = nuk_load(rows + (i * al + j) * ps + t);
            nuk_bt(d, y, m);
            for (int k = 0; k < al; k++)
                tr[k][j] = y[k];
        }
        for (int k = 0; k < al; k++) {
            nuk_vec y[8];
            nuk_bt(tr[k], y, m);
            for (int l = 0; l < al; l++)
                nuk_store(vt + (k * al + l) * v_ps, y[l]);
        }
    }
}

/* y has rows of exactly n floats: the last vector is stored in part. As
 * in nuk_wino_in, each pass's results go to the stack once (z), and the
 * struct's fields are read into locals once (stores through y could
 * otherwise alias them, and were followed by reloads of relu and y). */
NUK_INLINE void nuk_wino_out(const native_wino_out *a, int m, bool relu, bool round_bf16)
{
    const int al = m + 2;
    const int64_t n = a->n, m_ps = a->m_ps;
    const float *mm = a->mm;
    float *yo = a->y;
    const nuk_vec bias = nuk_splat(a->bias);
    for (int64_t t = 0; t < n; t += NUK_VW) {
        nuk_vec z[6][8]; /* z[s][k] = sum_l M(k, l) A[l][s] */
        for (int k = 0; k < al; k++) {
            nuk_vec x[8], y[6];
            for (int l = 0; l < al; l++)
                x[l] = nuk_load(mm + (k * al + l) * m_ps + t);
            nuk_at(x, y, m);
            for (int s = 0; s < m; s++)
                z[s][k] = y[s];
        }
        int64_t left = n - t;
        for (int s = 0; s < m; s++) {
            nuk_vec y[6];
            nuk_at(z[s], y, m);
            for (int r = 0; r < m; r++) {
                nuk_vec o = nuk_output(y[r] + bias, relu, round_bf16);
                float *dst = yo + (r * m + s) * n + t;
                if (left >= NUK_VW) {
                    nuk_store(dst, o);
                } else {
                    float tmp[NUK_VW];
                    nuk_store(tmp, o);
                    memcpy(dst, tmp, (size_t)left * sizeof(float));
                }
            }
        }
    }
}

static void nuk_wino_in_2(const native_wino_in *a)
{
    nuk_wino_in(a, 2);
}

static void nuk_wino_in_4(const native_wino_in *a)
{
    nuk_wino_in(a, 4);
}

static void nuk_wino_in_6(const native_wino_in *a)
{
    nuk_wino_in(a, 6);
}

/* bf16 outputs (--precision bf16 on the float32 kernels): out of line, so
 * the float32 variants stay as they were. */
static __attribute__((noinline)) void nuk_wino_out_rounding(const native_wino_out *a, int m)
{
    if (m == 2)
        a->relu ? nuk_wino_out(a, 2, true, true) : nuk_wino_out(a, 2, false, true);
    else if (m == 4)
        a->relu ? nuk_wino_out(a, 4, true, true) : nuk_wino_out(a, 4, false, true);
    else
        a->relu ? nuk_wino_out(a, 6, true, true) : nuk_wino_out(a, 6, false, true);
}

static void nuk_wino_out_2(const native_wino_out *a)
{
    if (a->round_bf16)
        nuk_wino_out_rounding(a, 2);
    else if (a->relu)
        nuk_wino_out(a, 2, true, false);
    else
        nuk_wino_out(a, 2, false, false);
}

static void nuk_wino_out_4(const native_wino_out *a)
{
    if (a->round_bf16)
        nuk_wino_out_rounding(a, 4);
    else if (a->relu)
        nuk_wino_out(a, 4, true, false);
    else
        nuk_wino_out(a, 4, false, false);
}

static void nuk_wino_out_6(const native_wino_out *a)
{
    if (a->round_bf16)
        nuk_wino_out_rounding(a, 6);
    else if (a->relu)
        nuk_wino_out(a, 6, true, false);
    else
        nuk_wino_out(a, 6, false, false);
}

/* Staging and scatter (native_wino_gather_fn, native_wino_scatter_fn):
 * strided copies with m a constant, here so that they are compiled for the
 * set's target (native_winograd.c is built for the baseline target). On
 * 8-wide sets, 8 tiles at a time: the alpha phases of 8 tiles are an 8 x 8
 * transpose of 8 row loads (one at each tile's first column), and 8 tiles'
 * m x m outputs of one row are the transpose of their m rows of y, stored
 * one tile at a time, each store's 8 - m extra lanes overwritten by the
 * next tile's. The compiler made the plain loops single-float loads and
 * inserts (a third of Winograd's time at 16 channels); the values copied
 * are the same. */
#if NUK_VW == 8
/* o[k][j] = x[j][k], 8 x 8 (unpacks, shuffles, 128-bit permutes). */
NUK_INLINE void nuk_transpose8(const nuk_vec *x, nuk_vec *o)
{
    const nuk_ivec lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
    const nuk_ivec s44 = {0, 1, 8, 9, 4, 5, 12, 13}, see = {2, 3, 10, 11, 6, 7, 14, 15};
    const nuk_ivec p20 = {0, 1, 2, 3, 8, 9, 10, 11}, p31 = {4, 5, 6, 7, 12, 13, 14, 15};
    nuk_vec t[8], u[8];
    for (int k = 0; k < 4; k++) {
        t[2 * k] = __builtin_shuffle(x[2 * k], x[2 * k + 1], lo);
        t[2 * k + 1] = __builtin_shuffle(x[2 * k], x[2 * k + 1], hi);
    }
    for (int k = 0; k < 2; k++) {
        u[4 * k] = __builtin_shuffle(t[4 * k], t[4 * k + 2], s44);
        u[4 * k + 1] = __builtin_shuffle(t[4 * k], t[4 * k + 2], see);
        u[4 * k + 2] = __builtin_shuffle(t[4 * k + 1], t[4 * k + 3], s44);
        u[4 * k + 3] = __builtin_shuffle(t[4 * k + 1], t[4 * k + 3], see);
    }
    for (int k = 0; k < 4; k++) {
        o[k] = __builtin_shuffle(u[k], u[k + 4], p20);
        o[k + 4] = __builtin_shuffle(u[k], u[k + 4], p31);
    }
}
#endif

NUK_INLINE void nuk_wino_gather(const float *row, int64_t x0, int64_t t0, int64_t t1, float *d,
                                int64_t ps, int m)
{
#if NUK_VW == 8
    /* Whole groups of 8 tiles whose loads (8 columns from each tile's
     * first) stay inside [x0 + t0 m, x0 + t1 m + 2), the columns the caller
     * lets us read. */
    int64_t end = x0 + (t1 - 1) * m + m + 2;
    for (; t0 + 8 <= t1 && x0 + (t0 + 7) * m + 8 <= end; t0 += 8) {
        nuk_vec x[8], o[8];
        for (int k = 0; k < 8; k++)
            x[k] = nuk_load(row + x0 + (t0 + k) * m);
        nuk_transpose8(x, o);
        for (int j = 0; j < m + 2; j++)
            nuk_store(d + j * ps + t0, o[j]);
    }
#endif
    for (int j = 0; j < m + 2; j++) {
        float *dd = d + j * ps;
        for (int64_t t = t0; t < t1; t++)
            dd[t] = row[x0 + j + t * m];
    }
}

NUK_INLINE void nuk_wino_scatter(const float *y, int64_t ys, float *row, int64_t cols, int m)
{
    int64_t whole = cols / m;
    int64_t t = 0;
#if NUK_VW == 8
    /* Each tile's store writes 8 columns: the group's last one must end
     * inside the row. */
    for (; t + 8 <= whole && (t + 7) * m + 8 <= cols; t += 8) {
        nuk_vec x[8], o[8];
        for (int s = 0; s < 8; s++)
            x[s] = nuk_load(y + (s < m ? s : m - 1) * ys + t);
        nuk_transpose8(x, o);
        for (int k = 0; k < 8; k++)
            nuk_store(row + (t + k) * m, o[k]);
    }
#endif
    for (; t < whole; t++)
        for (int s = 0; s < m; s++)
            row[t * m + s] = y[s * ys + t];
    for (int s = 0; whole * m + s < cols; s++)
        row[whole * m + s] = y[s * ys + whole];
}

#define NUK_WINO_COPIES(m)                                                                   \
    static void nuk_wino_gather_##m(const float *row, int64_t x0, int64_t t0, int64_t t1,   \
                                    float *d, int64_t ps)                                     \
    {                                                                                          \
        nuk_wino_gather(row, x0, t0, t1, d, ps, m);                                           \
    }                                                                                          \
    static void nuk_wino_scatter_##m(const float *y, int64_t ys, float *row, int64_t cols)    \
    {                                                                                          \
        nuk_wino_scatter(y, ys, row, cols, m);                                                \
    }
NUK_WINO_COPIES(2)
NUK_WINO_COPIES(4)
NUK_WINO_COPIES(6)
#undef NUK_WINO_COPIES
