/* Winograd transforms of one microkernel set (see native_wino_in and
 * native_wino_out in native_ukernel.h), included by native_ukernel_tmpl.h
 * under the set's target. Tiles are the innermost, contiguous index of every
 * array, so each loop over t is plain vector code at the set's width; m and
 * alpha are constants in each instance, so the sums over the transform's
 * rows unroll. The zero coefficients are multiplied too: a test in the loop
 * would stop it being vector code, and the transforms are a small part of
 * the time next to the GEMM. */

NUK_INLINE void nuk_wino_in(const native_wino_in *a, int m)
{
    const int al = m + 2;
    const native_wino_mats *mt = a->mt;
    const int64_t n = a->n, ps = a->ps;
    /* Along the rows: T[k][j][t] = sum_i B^T[k][i] d[i][j][t]. */
    for (int k = 0; k < al; k++) {
        float c[8];
        for (int i = 0; i < al; i++)
            c[i] = mt->bt[k][i];
        for (int j = 0; j < al; j++) {
            const float *s = a->rows + j * ps;
            float *d = a->tmp + (k * al + j) * ps;
            for (int64_t t = 0; t < n; t++) {
                float acc = 0;
                for (int i = 0; i < al; i++)
                    acc += c[i] * s[i * al * ps + t];
                d[t] = acc;
            }
        }
    }
    /* Along the columns: V[k][l][t] = sum_j T[k][j][t] B^T[l][j]. */
    for (int l = 0; l < al; l++) {
        float c[8];
        for (int j = 0; j < al; j++)
            c[j] = mt->bt[l][j];
        for (int k = 0; k < al; k++) {
            const float *s = a->tmp + k * al * ps;
            float *d = a->v + (k * al + l) * a->v_ps;
            for (int64_t t = 0; t < n; t++) {
                float acc = 0;
                for (int j = 0; j < al; j++)
                    acc += c[j] * s[j * ps + t];
                d[t] = acc;
            }
        }
    }
}

NUK_INLINE void nuk_wino_out(const native_wino_out *a, int m)
{
    const int al = m + 2;
    const native_wino_mats *mt = a->mt;
    const int64_t n = a->n;
    /* Z[k][s][t] = sum_l M[k][l][t] A[l][s] */
    for (int s = 0; s < m; s++) {
        float c[8];
        for (int l = 0; l < al; l++)
            c[l] = mt->at[s][l];
        for (int k = 0; k < al; k++) {
            const float *src = a->mm + k * al * a->m_ps;
            float *d = a->tmp + (k * m + s) * n;
            for (int64_t t = 0; t < n; t++) {
                float acc = 0;
                for (int l = 0; l < al; l++)
                    acc += c[l] * src[l * a->m_ps + t];
                d[t] = acc;
            }
        }
    }
    /* Y[r][s][t] = bias + sum_k A^T[r][k] Z[k][s][t] */
    for (int r = 0; r < m; r++) {
        float c[8];
        for (int k = 0; k < al; k++)
            c[k] = mt->at[r][k];
        for (int s = 0; s < m; s++) {
            const float *src = a->tmp + s * n;
            float *d = a->y + (r * m + s) * n;
            for (int64_t t = 0; t < n; t++) {
                float acc = a->bias;
                for (int k = 0; k < al; k++)
                    acc += c[k] * src[k * m * n + t];
                d[t] = a->relu && acc < 0 ? 0.0f : acc;
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

static void nuk_wino_out_2(const native_wino_out *a)
{
    nuk_wino_out(a, 2);
}

static void nuk_wino_out_4(const native_wino_out *a)
{
    nuk_wino_out(a, 4);
}

static void nuk_wino_out_6(const native_wino_out *a)
{
    nuk_wino_out(a, 6);
}
