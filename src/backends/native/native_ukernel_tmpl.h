/* Body of one microkernel set, included once by each native_ukernel_<isa>.c
 * after it has chosen the instruction set, with:
 *   NUK_VW      floats per vector register: 4, 8 or 16
 *   NUK_CB      output channels per packed block: 4, 6, 8 or 12
 *   NUK_ISA     its native_isa value, NUK_NAME its name
 *   NUK_GETTER  the name of the function returning the table
 *   NUK_TAP     (optional) NUK_TAP(acc, in, wp, cb, nv): the multiply-adds
 *               of one kernel tap, acc[c][v] += wp[c] * in[v] for c < cb,
 *               v < nv, when the set has a better way than one broadcast
 *               per weight (NEON: FMLA by element)
 *   NUK_BF16    (optional) 3x3 convs only, on bf16 pairs: each float of the
 *               input rows and of the packed weights holds two bfloat16
 *               values (input channels 2p and 2p + 1) and a multiply-add is
 *               VDPBF16PS: both products added to the float32 sum
 * The includer includes <string.h> and native_ukernel.h first (before any
 * target pragma), so no header is compiled under the pragma.
 *
 * Scheme (direct convolution, NCHW): a step computes NUK_CB output channels
 * x 2 vectors of adjacent output columns, 2 * NUK_CB accumulators that stay
 * in registers for the whole reduction over c_in x kh x kw. Each input
 * vector loaded is used for NUK_CB FMAs and each weight scalar (broadcast)
 * for 2, so loads stay well below the FMA rate. The register budget sets
 * NUK_CB: 2 * NUK_CB accumulators + 2 inputs + 1 broadcast <= the register
 * file (16 on SSE/AVX2, 32 on AVX-512). GCC vector extensions rather than
 * intrinsics keep one source for every width. */

typedef float nuk_vec __attribute__((vector_size(NUK_VW * sizeof(float))));
typedef int32_t nuk_ivec __attribute__((vector_size(NUK_VW * sizeof(float))));

#define NUK_INLINE static inline __attribute__((always_inline))
#define NUK_STRIP (2 * NUK_VW)

NUK_INLINE nuk_vec nuk_load(const float *p)
{
    nuk_vec v;
    memcpy(&v, p, sizeof v);
    return v;
}

NUK_INLINE void nuk_store(float *p, nuk_vec v)
{
    memcpy(p, &v, sizeof v);
}

NUK_INLINE nuk_vec nuk_splat(float s)
{
    nuk_vec z = {0};
    return z + s;
}

#ifdef NUK_BF16
/* acc + in.even * w.even + in.odd * w.odd per float lane, w a broadcast
 * pair; the products are exact in float32, the sums round as float32. */
NUK_INLINE nuk_vec nuk_mac(nuk_vec acc, float w, nuk_vec in)
{
    uint32_t bits;
    memcpy(&bits, &w, sizeof bits);
    return (nuk_vec)_mm512_dpbf16_ps((__m512)acc, (__m512bh)in,
                                     (__m512bh)_mm512_set1_epi32((int)bits));
}
#else
NUK_INLINE nuk_vec nuk_mac(nuk_vec acc, float w, nuk_vec in)
{
    return acc + w * in;
}
#endif

/* Each float's nearest bfloat16 (ties to even) as a float32 bit pattern
 * whose low 16 bits are still to be cleared; a NaN stays a quiet NaN (as
 * sleapc__bf16_round). */
NUK_INLINE nuk_ivec nuk_bf16_rne(nuk_vec x)
{
    nuk_ivec u = (nuk_ivec)x;
    nuk_ivec mag = u & 0x7fffffff;
    nuk_ivec nan = mag > 0x7f800000;
    nuk_ivec rne = u + 0x7fff + ((u >> 16) & 1);
    return (nan & (u | 0x00400000)) | (~nan & rne);
}

/* x rounded to bf16, as sleapc__bf16_round. */
NUK_INLINE nuk_vec nuk_round_bf16(nuk_vec x)
{
    return (nuk_vec)(nuk_bf16_rne(x) & -65536);
}

/* max(v, 0) from the sign bit: no zero constant, which the compiler would
 * keep in a register through the whole reduction (with 2 x 6 accumulators
 * that register is the one that stops a spill in the inner loop). */
NUK_INLINE nuk_vec nuk_relu(nuk_vec v)
{
    nuk_ivec bits = (nuk_ivec)v;
    return (nuk_vec)(bits & ~(bits >> 31));
}

/* The value a kernel stores: ReLU, then bf16 rounding, where asked. */
NUK_INLINE nuk_vec nuk_output(nuk_vec v, bool relu, bool round_bf16)
{
    if (relu)
        v = nuk_relu(v);
    return round_bf16 ? nuk_round_bf16(v) : v;
}

/* A band run's positions [q, q + n) <-> their outputs in dst (see
 * native_conv_row): the positions that fall in the padding columns are
 * skipped on a put and read as zeros on a get. Out of line: it runs once per
 * channel per step, against c_in x kh x kw FMAs per vector in the step. */
static void nuk_band_put(const native_conv_row *r, float *d, int64_t q, int64_t n,
                         const float *v)
{
    int64_t fs = r->band_stride, w = r->band_w;
    int64_t row = q / fs, col = q - row * fs;
    while (n > 0) {
        int64_t seg = fs - col < n ? fs - col : n;
        if (col < w)
            memcpy(d + row * w + col, v, (size_t)(w - col < seg ? w - col : seg) * sizeof(float));
        v += seg;
        n -= seg;
        row++;
        col = 0;
    }
}

static void nuk_band_get(const native_conv_row *r, const float *d, int64_t q, int64_t n,
                         float *v)
{
    int64_t fs = r->band_stride, w = r->band_w;
    int64_t row = q / fs, col = q - row * fs;
    while (n > 0) {
        int64_t seg = fs - col < n ? fs - col : n;
        int64_t k = col < w ? (w - col < seg ? w - col : seg) : 0;
        if (k > 0)
            memcpy(v, d + row * w + col, (size_t)k * sizeof(float));
        memset(v + k, 0, (size_t)(seg - k) * sizeof(float));
        v += seg;
        n -= seg;
        row++;
        col = 0;
    }
}

/* Output columns [x, x + nv * NUK_VW) of one conv row; n of them stored. */
NUK_INLINE void nuk_conv_step(const native_conv_row *r, int64_t x, int cb, int nv, int kh, int kw,
                              int64_t n)
{
    nuk_vec acc[NUK_CB][2];
    if (r->accumulate && r->band_stride > 0) {
        for (int c = 0; c < cb; c++) {
            float tmp[2 * NUK_VW] = {0};
            nuk_band_get(r, r->dst + c * r->dst_cs, x, n, tmp);
            for (int v = 0; v < nv; v++)
                acc[c][v] = nuk_load(tmp + v * NUK_VW);
        }
    } else if (r->accumulate) {
        for (int c = 0; c < cb; c++) {
            const float *d = r->dst + c * r->dst_cs + x;
            for (int v = 0; v < nv; v++) {
                int64_t m = n - v * NUK_VW;
                if (m >= NUK_VW) {
                    acc[c][v] = nuk_load(d + v * NUK_VW);
                } else {
                    /* Never read past the row's last output. */
                    float tmp[NUK_VW] = {0};
                    if (m > 0)
                        memcpy(tmp, d + v * NUK_VW, (size_t)m * sizeof(float));
                    acc[c][v] = nuk_load(tmp);
                }
            }
        }
    } else {
        for (int c = 0; c < cb; c++)
            for (int v = 0; v < nv; v++)
                acc[c][v] = nuk_splat(r->bias[c]);
    }

    const float *wp = r->w;
    for (int ci = 0; ci < r->c_in; ci++) {
        const float *chan = r->src + ci * r->src_cs + x;
        int slot = r->ring0;
        for (int ky = 0; ky < kh; ky++) {
            const float *row = chan + slot * r->src_rs;
            slot = slot + 1 == kh ? 0 : slot + 1;
            for (int kx = 0; kx < kw; kx++) {
                nuk_vec in[2];
                for (int v = 0; v < nv; v++)
                    in[v] = nuk_load(row + kx + v * NUK_VW);
#ifdef NUK_TAP
                NUK_TAP(acc, in, wp, cb, nv);
#else
                for (int c = 0; c < cb; c++) {
                    float s = wp[c];
                    for (int v = 0; v < nv; v++)
                        acc[c][v] = nuk_mac(acc[c][v], s, in[v]);
                }
#endif
                wp += cb;
            }
        }
    }

    if (r->band_stride > 0) {
        for (int c = 0; c < cb; c++) {
            float tmp[2 * NUK_VW];
            for (int v = 0; v < nv; v++)
                nuk_store(tmp + v * NUK_VW, nuk_output(acc[c][v], r->relu, r->round_bf16));
            nuk_band_put(r, r->dst + c * r->dst_cs, x, n, tmp);
        }
        return;
    }
    for (int c = 0; c < cb; c++) {
        float *d = r->dst + c * r->dst_cs + x;
        for (int v = 0; v < nv; v++) {
            nuk_vec a = nuk_output(acc[c][v], r->relu, r->round_bf16);
            if (n == nv * NUK_VW) {
                nuk_store(d + v * NUK_VW, a);
            } else {
                float tmp[NUK_VW];
                nuk_store(tmp, a);
                int64_t m = n - v * NUK_VW;
                if (m > 0)
                    memcpy(d + v * NUK_VW, tmp, (size_t)(m < NUK_VW ? m : NUK_VW) * sizeof(float));
            }
        }
    }
}

NUK_INLINE void nuk_conv_row(const native_conv_row *r, int cb, int kh, int kw)
{
    int64_t x = 0;
    for (; x + NUK_STRIP <= r->n_px; x += NUK_STRIP)
        nuk_conv_step(r, x, cb, 2, kh, kw, NUK_STRIP);
    int64_t rem = r->n_px - x;
    if (rem > NUK_VW)
        nuk_conv_step(r, x, cb, 2, kh, kw, rem);
    else if (rem > 0)
        nuk_conv_step(r, x, cb, 1, kh, kw, rem);
}

/* Input columns [j, j + NUK_VW) of one transposed-conv row, i.e. output
 * columns [2j, 2j + 2 NUK_VW); n input columns' worth stored. Even and odd
 * output columns take different kernel columns, so they are accumulated
 * apart and interleaved at the store:
 *   PyTorch: out[2j] = w1 x[j],           out[2j+1] = w0 x[j+1] + w2 x[j]
 *   Keras:   out[2j] = w0 x[j] + w2 x[j-1], out[2j+1] = w1 x[j]
 * (wc = W[ci, co, a, c] for the tap's kernel row a). */
NUK_INLINE void nuk_convt_step(const native_convt_row *r, int64_t j, int cb, bool keras, int64_t n)
{
    nuk_vec even[NUK_CB], odd[NUK_CB];
    for (int c = 0; c < cb; c++) {
        even[c] = nuk_splat(r->bias[c]);
        odd[c] = even[c];
    }

    for (int ci = 0; ci < r->c_in; ci++) {
        for (int t = 0; t < r->n_taps; t++) {
            const float *row = r->src + ci * r->src_cs + t * r->src_ts + j;
            const float *wa = r->w + (ci * 3 + r->tap_a[t]) * 3 * cb;
            nuk_vec x0 = nuk_load(row + 1);
            if (keras) {
                nuk_vec xm = nuk_load(row);
                for (int c = 0; c < cb; c++) {
                    even[c] += wa[c] * x0;
                    even[c] += wa[2 * cb + c] * xm;
                    odd[c] += wa[cb + c] * x0;
                }
            } else {
                nuk_vec xp = nuk_load(row + 2);
                for (int c = 0; c < cb; c++) {
                    even[c] += wa[cb + c] * x0;
                    odd[c] += wa[c] * xp;
                    odd[c] += wa[2 * cb + c] * x0;
                }
            }
        }
    }

    for (int c = 0; c < cb; c++) {
        nuk_vec e = r->relu ? nuk_relu(even[c]) : even[c];
        nuk_vec o = r->relu ? nuk_relu(odd[c]) : odd[c];
        float ev[NUK_VW], ov[NUK_VW], both[2 * NUK_VW];
        nuk_store(ev, e);
        nuk_store(ov, o);
        for (int k = 0; k < NUK_VW; k++) {
            both[2 * k] = ev[k];
            both[2 * k + 1] = ov[k];
        }
        memcpy(r->dst + c * r->dst_cs + 2 * j, both, (size_t)(2 * n) * sizeof(float));
    }
}

NUK_INLINE void nuk_convt_row(const native_convt_row *r, int cb, bool keras)
{
    for (int64_t j = 0; j < r->w_in; j += NUK_VW) {
        int64_t n = r->w_in - j < NUK_VW ? r->w_in - j : NUK_VW;
        nuk_convt_step(r, j, cb, keras, n);
    }
}

/* One function per (kind, channels in block): constant cb, kh, kw let the
 * compiler unroll the register block completely. */
#ifdef NUK_BF16
#define NUK_KERNELS(n)                                                          \
    static void nuk_conv3_##n(const native_conv_row *r)                         \
    {                                                                           \
        nuk_conv_row(r, n, 3, 3);                                               \
    }
#else
#define NUK_KERNELS(n)                                                          \
    static void nuk_conv1_##n(const native_conv_row *r)                         \
    {                                                                           \
        nuk_conv_row(r, n, 1, 1);                                               \
    }                                                                           \
    static void nuk_conv3_##n(const native_conv_row *r)                         \
    {                                                                           \
        nuk_conv_row(r, n, 3, 3);                                               \
    }                                                                           \
    static void nuk_convk_##n(const native_conv_row *r)                         \
    {                                                                           \
        nuk_conv_row(r, n, r->kh, r->kw);                                       \
    }                                                                           \
    static void nuk_convt_##n(const native_convt_row *r)                        \
    {                                                                           \
        if (r->keras)                                                           \
            nuk_convt_row(r, n, true);                                          \
        else                                                                    \
            nuk_convt_row(r, n, false);                                         \
    }
#endif

#define NUK_E(kind, n) [n] = nuk_##kind##_##n

NUK_KERNELS(1)
NUK_KERNELS(2)
NUK_KERNELS(3)
NUK_KERNELS(4)
#define NUK_ROW_LO(kind) NUK_E(kind, 1), NUK_E(kind, 2), NUK_E(kind, 3), NUK_E(kind, 4)

#if NUK_CB == 4
#define NUK_ROW(kind) NUK_ROW_LO(kind)
#elif NUK_CB == 6
NUK_KERNELS(5)
NUK_KERNELS(6)
#define NUK_ROW(kind) NUK_ROW_LO(kind), NUK_E(kind, 5), NUK_E(kind, 6)
#elif NUK_CB == 8
NUK_KERNELS(5)
NUK_KERNELS(6)
NUK_KERNELS(7)
NUK_KERNELS(8)
#define NUK_ROW(kind)                                                                 \
    NUK_ROW_LO(kind), NUK_E(kind, 5), NUK_E(kind, 6), NUK_E(kind, 7), NUK_E(kind, 8)
#elif NUK_CB == 12
NUK_KERNELS(5)
NUK_KERNELS(6)
NUK_KERNELS(7)
NUK_KERNELS(8)
NUK_KERNELS(9)
NUK_KERNELS(10)
NUK_KERNELS(11)
NUK_KERNELS(12)
#define NUK_ROW(kind)                                                                 \
    NUK_ROW_LO(kind), NUK_E(kind, 5), NUK_E(kind, 6), NUK_E(kind, 7), NUK_E(kind, 8), \
        NUK_E(kind, 9), NUK_E(kind, 10), NUK_E(kind, 11), NUK_E(kind, 12)
#else
#error "NUK_CB must be 4, 6, 8 or 12"
#endif

_Static_assert(NUK_CB <= NATIVE_UK_CB_MAX, "block larger than the tables");

#ifdef NUK_BF16
/* 16 floats -> their nearest bf16 (ties to even) in the low 16 bits of each
 * lane; a NaN stays a quiet NaN (bits as sleapc__bf16_round's). */
NUK_INLINE nuk_ivec nuk_bf16_bits(nuk_vec x)
{
    return (nuk_bf16_rne(x) >> 16) & 0xffff;
}

static void nuk_pack_pairs(const float *a, const float *b, int64_t n, float *dst)
{
    int64_t x = 0;
    nuk_vec zero = {0};
    for (; x + NUK_VW <= n; x += NUK_VW) {
        nuk_ivec lo = nuk_bf16_bits(nuk_load(a + x));
        nuk_ivec hi = nuk_bf16_bits(b ? nuk_load(b + x) : zero);
        nuk_store(dst + x, (nuk_vec)(lo | hi << 16));
    }
    if (x < n) {
        float ta[NUK_VW] = {0}, tb[NUK_VW] = {0}, td[NUK_VW];
        memcpy(ta, a + x, (size_t)(n - x) * sizeof(float));
        if (b)
            memcpy(tb, b + x, (size_t)(n - x) * sizeof(float));
        nuk_ivec lo = nuk_bf16_bits(nuk_load(ta)), hi = nuk_bf16_bits(nuk_load(tb));
        nuk_store(td, (nuk_vec)(lo | hi << 16));
        memcpy(dst + x, td, (size_t)(n - x) * sizeof(float));
    }
}

static void nuk_round_floats(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + NUK_VW <= n; i += NUK_VW)
        nuk_store(x + i, nuk_round_bf16(nuk_load(x + i)));
    if (i < n) {
        float t[NUK_VW] = {0};
        memcpy(t, x + i, (size_t)(n - i) * sizeof(float));
        nuk_store(t, nuk_round_bf16(nuk_load(t)));
        memcpy(x + i, t, (size_t)(n - i) * sizeof(float));
    }
}

static const native_ukernels nuk_table = {
    .isa = NUK_ISA,
    .name = NUK_NAME,
    .cb = NUK_CB,
    .strip = NUK_STRIP,
    .strip_t = NUK_VW,
    .bf16_pairs = true,
    .pack_pairs = nuk_pack_pairs,
    .round_floats = nuk_round_floats,
    .conv3 = {NUK_ROW(conv3)},
};
#else
#include "backends/native/native_ukernel_wino_tmpl.h"

/* PyTorch's max: v replaces m when larger or NaN (see native_pool.c). */
NUK_INLINE nuk_vec nuk_max_nan(nuk_vec m, nuk_vec v)
{
    nuk_ivec take = (v > m) | (v != v);
    return (nuk_vec)(((nuk_ivec)v & take) | ((nuk_ivec)m & ~take));
}

/* Even and odd lanes of the 2 * NUK_VW floats at p. */
#if defined(__GNUC__) && !defined(__clang__)
NUK_INLINE void nuk_deinterleave(const float *p, nuk_vec *even, nuk_vec *odd)
{
    nuk_vec a = nuk_load(p), b = nuk_load(p + NUK_VW);
    nuk_ivec ie, io;
    for (int k = 0; k < NUK_VW; k++) {
        ie[k] = 2 * k;
        io[k] = 2 * k + 1;
    }
    *even = __builtin_shuffle(a, b, ie);
    *odd = __builtin_shuffle(a, b, io);
}
#else
NUK_INLINE void nuk_deinterleave(const float *p, nuk_vec *even, nuk_vec *odd)
{
    (void)p, (void)even, (void)odd;
}
#endif

/* d[x] = max of s0[2x], s0[2x+1], s1[2x], s1[2x+1] in that order, for the
 * vector-sized part of ow; returns how many columns it wrote. */
static int64_t nuk_maxpool2_row(const float *s0, const float *s1, float *d, int64_t ow)
{
    int64_t x = 0;
#if defined(__clang__) || !defined(__GNUC__)
    /* __builtin_shuffle is GCC's: the caller's scalar loop does it all. */
    (void)s0, (void)s1, (void)d, (void)ow;
    return x;
#endif
    for (; x + NUK_VW <= ow; x += NUK_VW) {
        nuk_vec e0, o0, e1, o1;
        nuk_deinterleave(s0 + 2 * x, &e0, &o0);
        nuk_deinterleave(s1 + 2 * x, &e1, &o1);
        nuk_store(d + x, nuk_max_nan(nuk_max_nan(nuk_max_nan(e0, o0), e1), o1));
    }
    return x;
}

static const native_ukernels nuk_table = {
    .isa = NUK_ISA,
    .name = NUK_NAME,
    .cb = NUK_CB,
    .strip = NUK_STRIP,
    .strip_t = NUK_VW,
    .conv1 = {NUK_ROW(conv1)},
    .conv3 = {NUK_ROW(conv3)},
    .convk = {NUK_ROW(convk)},
    .convt = {NUK_ROW(convt)},
    .wino_in = {nuk_wino_in_2, nuk_wino_in_4, nuk_wino_in_6},
    .wino_out = {nuk_wino_out_2, nuk_wino_out_4, nuk_wino_out_6},
    .wino_gather = {nuk_wino_gather_2, nuk_wino_gather_4, nuk_wino_gather_6},
    .wino_scatter = {nuk_wino_scatter_2, nuk_wino_scatter_4, nuk_wino_scatter_6},
    .maxpool2_row = nuk_maxpool2_row,
};
#endif

const native_ukernels *NUK_GETTER(void)
{
    return &nuk_table;
}
