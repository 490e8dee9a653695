/* Microkernels of the native backend: the inner loops of the convolutions,
 * one set per instruction set, chosen once at create. The drivers
 * (native_conv.c, native_convt.c) pack weights, split work over threads and
 * stage padded input rows; a microkernel computes one output row for one
 * block of output channels, all in registers.
 *
 * Packed weights: blocks of at most `cb` output channels (native_blocks),
 * each laid out [c_in][kh][kw][channels in block], so the kernel reads one
 * scalar per output channel per input value, in order. */
#ifndef SLEAPC_BACKENDS_NATIVE_UKERNEL_H
#define SLEAPC_BACKENDS_NATIVE_UKERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/native/native_kernels.h"
#include "backends/native/native_winograd.h"

/* Widest input the convolutions take (scratch sizes stay far from
 * overflow); wider gives a scratch size of SIZE_MAX. */
#define NATIVE_MAX_WIDTH ((int64_t)1 << 24)

/* Largest block of output channels any set uses (table size). */
#define NATIVE_UK_CB_MAX 16

typedef enum native_isa {
    NATIVE_ISA_GENERIC = 0, /* baseline of the target (SSE2 on x86-64) */
    NATIVE_ISA_AVX2,        /* AVX2 + FMA */
    NATIVE_ISA_AVX512,      /* AVX-512F */
    NATIVE_ISA_NEON,        /* AArch64 Advanced SIMD, 32 registers */
    NATIVE_ISA_COUNT
} native_isa;

/* One output row of a stride-1 convolution, one block of output channels.
 * The input is a window of padded rows (zero columns already in place):
 * kernel row ky of input channel ci starts at
 * src + ci * src_cs + ((ring0 + ky) % kh) * src_rs, at the padded column of
 * output x = 0. The kernel reads columns up to round_up(n_px, strip) + kw - 2
 * of each such row. */
typedef struct native_conv_row {
    const float *src;
    int64_t src_cs;     /* floats between input channels */
    int64_t src_rs;     /* floats between window rows */
    int ring0;          /* window row holding kernel row 0, < kh */
    int kh, kw;
    int c_in;
    const float *w;     /* packed block [c_in][kh][kw][cb] */
    const float *bias;  /* cb values */
    float *dst;         /* first channel of the block, this row, x = 0 */
    int64_t dst_cs;     /* floats between output channels */
    int64_t n_px;       /* outputs written per channel */
    bool relu;
    bool round_bf16;    /* outputs rounded to bf16 as they are stored (after
                           the ReLU; as sleapc__bf16_round) */
    bool accumulate;    /* add to what dst holds instead of to the bias (a
                           later slice of the input channels) */
    /* A band of output rows as one run (0: a single row). Window rows are
     * then padded rows of band_stride floats back to back (src_rs ==
     * band_stride, ring0 == 0), and output position q of the run is row
     * q / band_stride, column q % band_stride of the band; columns from
     * band_w on are the padding's and are dropped. dst rows are band_w apart. */
    int64_t band_stride;
    int64_t band_w;
} native_conv_row;

/* One output row of the 3 x 3 stride-2 transposed convolution (see
 * native_kernels.h), one block of output channels. 1 or 2 kernel rows feed
 * an output row; input row t (t < n_taps) of channel ci starts at
 * src + ci * src_cs + t * src_ts, at input column -1, which holds a zero,
 * followed by the w_in input columns and zeros up to column
 * round_up(w_in, strip_t) + 1, the last column read. */
typedef struct native_convt_row {
    const float *src;
    int64_t src_cs;     /* floats between input channels */
    int64_t src_ts;     /* floats between the two tap rows */
    int n_taps;         /* 0, 1 or 2 */
    int tap_a[2];       /* kernel row of each tap */
    bool keras;         /* output column x = full x (else full x + 1) */
    int c_in;
    const float *w;     /* packed block [c_in][3][3][cb] */
    const float *bias;  /* cb values */
    float *dst;         /* first channel of the block, this row, x = 0 */
    int64_t dst_cs;     /* floats between output channels */
    int64_t w_in;       /* input columns; 2 * w_in outputs are written */
    bool relu;
} native_convt_row;

typedef void (*native_conv_row_fn)(const native_conv_row *r);
typedef void (*native_convt_row_fn)(const native_convt_row *r);

/* Winograd input transform (native_winograd.c) of one channel over n tiles:
 * V = B^T d B per tile. Input (i, j) of tile t (i, j < alpha) is at
 * rows + (i * alpha + j) * ps + t (ps >= n). V's position p = k * alpha + l
 * of tile t goes to v + p * v_ps + (t / strip) * v_ss + t % strip: runs of
 * one strip of tiles, v_ss apart (the GEMM's packed panels; v_ss = strip
 * for a contiguous row). tmp: alpha^2 * ps floats. */
typedef struct native_wino_in {
    const struct native_wino_mats *mt;
    const float *rows;
    int64_t ps, n;
    float *v;
    int64_t v_ps, v_ss;
    float *tmp;
} native_wino_in;

/* Winograd output transform of one channel over n tiles: Y = A^T M A +
 * bias, ReLU if asked; M's position p at mm + p * m_ps, n floats. Output
 * (r, s) of tile t goes to y[(r * m + s) * n + t]. tmp: alpha * m * n floats. */
typedef struct native_wino_out {
    const struct native_wino_mats *mt;
    const float *mm;
    int64_t m_ps, n;
    float bias;
    bool relu;
    bool round_bf16; /* Y rounded to bf16 (after the ReLU) */
    float *y;
    float *tmp;
} native_wino_out;

typedef void (*native_wino_in_fn)(const native_wino_in *a);
typedef void (*native_wino_out_fn)(const native_wino_out *a);

/* Winograd staging (native_winograd.c) of one input row: the alpha column
 * phases of tiles [t0, t1), d[j * ps + t] = row[x0 + j + t * m], every
 * column read inside the row. */
typedef void (*native_wino_gather_fn)(const float *row, int64_t x0, int64_t t0, int64_t t1,
                                      float *d, int64_t ps);
/* The output scatter of one row: row[t * m + s] = y[s * ys + t] for the
 * cols outputs of the row. */
typedef void (*native_wino_scatter_fn)(const float *y, int64_t ys, float *row, int64_t cols);

/* A set of microkernels. Tables are indexed by the channels in the block,
 * 1..cb; other entries are NULL. */
typedef struct native_ukernels {
    native_isa isa;
    const char *name;
    int cb;       /* output channels per packed block, <= NATIVE_UK_CB_MAX */
    int strip;    /* output columns per conv step: reads pad to a multiple */
    int strip_t;  /* input columns per transposed-conv step */
    bool bf16_pairs; /* 3x3 only, on pairs of bfloat16 input channels (see
                        sleapc__native_conv_create_bf16) */
    /* bf16 sets: dst[x] = the pair (a[x], b[x]) rounded to bf16 (nearest,
     * ties to even, as sleapc__bf16_round), a in the low half; b NULL reads
     * zeros. */
    void (*pack_pairs)(const float *a, const float *b, int64_t n, float *dst);
    /* bf16 sets: x[i] = sleapc__bf16_round(x[i]) for i < n. */
    void (*round_floats)(float *x, int64_t n);
    native_conv_row_fn conv1[NATIVE_UK_CB_MAX + 1];  /* kh = kw = 1 */
    native_conv_row_fn conv3[NATIVE_UK_CB_MAX + 1];  /* kh = kw = 3 */
    native_conv_row_fn convk[NATIVE_UK_CB_MAX + 1];  /* any kh, kw */
    native_convt_row_fn convt[NATIVE_UK_CB_MAX + 1];
    /* Winograd transforms for F(2), F(4), F(6) (index m / 2 - 1); the GEMM
     * between them runs on conv1. NULL in bf16 sets. */
    native_wino_in_fn wino_in[3];
    native_wino_out_fn wino_out[3];
    native_wino_gather_fn wino_gather[3];
    native_wino_scatter_fn wino_scatter[3];
    /* 2 x 2 max pooling of rows s0, s1 into d, as far as whole vectors go;
     * returns the columns written (the caller finishes the row). NULL in
     * bf16 sets. */
    int64_t (*maxpool2_row)(const float *s0, const float *s1, float *d, int64_t ow);
} native_ukernels;

/* The set for isa, or NULL when this build or this CPU cannot run it. */
const native_ukernels *sleapc__native_ukernels_get(native_isa isa);
/* The fastest set this CPU runs (never NULL). */
const native_ukernels *sleapc__native_ukernels_best(void);

/* Each set as compiled (native_ukernel_<isa>.c); NULL where the compiler
 * cannot target it. These do not check the CPU: use _get. */
const native_ukernels *sleapc__native_ukernels_generic(void);
const native_ukernels *sleapc__native_ukernels_avx2(void);
const native_ukernels *sleapc__native_ukernels_avx512(void);
const native_ukernels *sleapc__native_ukernels_avx512bf16(void);
const native_ukernels *sleapc__native_ukernels_neon(void);

/* The bf16 set (AVX512-BF16's VDPBF16PS), or NULL when this build or this
 * CPU has none. */
const native_ukernels *sleapc__native_ukernels_bf16(void);

/* Output channels cut into n blocks of near-equal size, at most the set's
 * cb: the first n_big blocks hold size + 1 channels, the others size. Even
 * blocks keep every microkernel call near its full register block (64
 * channels as 9 x 6 + 2 x 5 rather than 10 x 6 + 4). Blocks are stored
 * back to back, weights and bias alike. */
typedef struct native_blocks {
    int n;
    int size;
    int n_big;
} native_blocks;

void sleapc__native_blocks_plan(int c_out, int cb, native_blocks *out);

/* First output channel of block k, and its channel count. */
static inline int native_block_start(const native_blocks *b, int k)
{
    return k * b->size + (k < b->n_big ? k : b->n_big);
}

static inline int native_block_len(const native_blocks *b, int k)
{
    return b->size + (k < b->n_big);
}

/* How a kernel run is cut into tasks: per batch item, n_units units of work
 * (output rows, pixel strips) in runs of units_per_task, times the channel
 * blocks in groups of blocks_per_group. Task t is batch item
 * t / (n_unit_tasks * n_groups), unit run (t / n_groups) % n_unit_tasks,
 * group t % n_groups. */
typedef struct native_split {
    int64_t units_per_task;
    int64_t n_unit_tasks;
    int blocks_per_group;
    int n_groups;
    int64_t n_tasks;
} native_split;

/* About per_thread tasks per thread, as few as balance allows (each task
 * re-stages its input); one task per batch item for one thread. Tasks take
 * differing times (borders, the last channel block), so a few per thread
 * (NATIVE_TASKS_PER_THREAD) even out the load. */
#define NATIVE_TASKS_PER_THREAD 4
void sleapc__native_split_plan(int64_t b, int64_t n_units, int n_blocks, int n_threads,
                               int per_thread, native_split *out);

/* Bytes of padded input rows a k x k conv keeps hot while it runs every
 * channel block over them: more input channels than fit are reduced in
 * slices, each added onto the partial sums in dst. Tests set a small budget
 * to exercise the slicing; 0 restores the default. */
void sleapc__native_conv_set_slice_bytes(native_conv *conv, size_t bytes);

/* How a k x k conv walks the map: AUTO picks (bands for narrow maps, see
 * native_conv.c); tests force each to check both on every size. */
typedef enum native_conv_layout {
    NATIVE_CONV_LAYOUT_AUTO = 0,
    NATIVE_CONV_LAYOUT_ROWS,
    NATIVE_CONV_LAYOUT_BANDS,
} native_conv_layout;

void sleapc__native_conv_set_layout(native_conv *conv, native_conv_layout layout);

/* The create functions with the microkernel set chosen by the caller (tests
 * run every set the CPU has). uk NULL: the best. */
sleapc_status sleapc__native_conv_create_uk(const native_ukernels *uk, int c_in, int c_out,
                                            int kh, int kw, const float *weight,
                                            const float *bias, bool relu, native_conv **out);
sleapc_status sleapc__native_convt_create_uk(const native_ukernels *uk, int c_in, int c_out,
                                             const float *weight, const float *bias, bool relu,
                                             bool keras_placement, native_convt **out);

#endif
