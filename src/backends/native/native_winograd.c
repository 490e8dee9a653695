/* Winograd F(m x m, 3 x 3) for 3 x 3 stride-1 "same" convs: the driver.
 * The transforms are in the microkernel sets (native_ukernel_wino_tmpl.h),
 * the GEMM between them is the 1 x 1 conv microkernel.
 *
 * The tiles of the whole batch are numbered in (item, tile row, tile column)
 * order and cut into chunks of `ts` tiles. A task owns a run of chunks and a
 * group of output-channel blocks; per chunk it
 *  1. stages each input channel's alpha rows of a tile row from the source
 *     parts (a virtual concat is read in place, zeros outside the map),
 *     split in alpha column phases so the input transform is vector code over
 *     tiles, and transforms them into V[p][strip][ci][tile in strip] (p: the
 *     alpha^2 positions; panels of one kernel strip of tiles);
 *  2. multiplies, for each position, its c_in x c_out matrix of transformed
 *     weights (packed as conv1 blocks at create) into M[p][co][tile]
 *     (wino_gemm);
 *  3. transforms M back per output channel, adds the bias, applies the ReLU
 *     and writes the m x m outputs of each tile into dst.
 * Per chunk, the transformed weights are read once and V and M go through
 * L3 once. Where the chunks are too few to share (small maps), the threads
 * run each step of a chunk together instead (phase_in). */
#include "backends/native/native_winograd.h"

#include <string.h>

#include "backends/native/native_ukernel.h"
#include "core/alloc.h"
#include "core/error.h"

/* Bytes of one position's slab of V, bytes of a chunk's staged rows, V and
 * M together (see chunk_tiles), and the fewest and most tiles a chunk holds. */
#define WINO_SLAB_BYTES (128 * 1024)
#define WINO_CHUNK_BYTES (320 * 1024)
#define WINO_MIN_CHUNK 64
#define WINO_MAX_CHUNK 256
#define WINO_MAX_CHANNELS (1 << 20)
/* Transformed weights from which a map with fewer chunks than the threads
 * can share runs each chunk's steps across the threads (phase_in) rather
 * than in smaller chunks, each streaming all the weights again: the steps
 * cost two more waits for the threads and V and M shared between them
 * (1.2-1.5x slower at 48-128 channels on 48x48 maps, 2 threads, with 1-4
 * MiB of weights), a chunk more of 384 channels 9 MiB of weights in F(2). */
#define WINO_PHASED_BYTES (8.0 * 1024 * 1024)
/* Bytes of transformed weights a group of channel blocks keeps in L2 while
 * it runs over every strip of a chunk (see wino_gemm). */
#define WINO_GROUP_BYTES (128 * 1024)

struct native_wino {
    const native_ukernels *uk;
    const native_wino_mats *mt;
    native_wino_in_fn fin;
    native_wino_out_fn fout;
    native_wino_gather_fn gather;
    native_wino_scatter_fn scatter;
    native_conv_row_fn fn_big, fn_small;
    int m, al, c_in, c_out;
    bool relu;
    bool round_bf16; /* outputs rounded to bf16 as they are written */
    native_blocks blocks;
    float *u;      /* per position p: c_in x c_out, conv1 blocks [ci][channels in block] */
    float *bias;   /* c_out */
    float *zeros;  /* c_out zeros: the GEMM adds no bias */
};

static int64_t round_up(int64_t a, int64_t b)
{
    return (a + b - 1) / b * b;
}

int sleapc__native_wino_m(const native_wino *wg)
{
    return wg ? wg->m : 0;
}

void sleapc__native_wino_set_round_bf16(native_wino *wg, bool round_bf16)
{
    if (wg)
        wg->round_bf16 = round_bf16;
}

void sleapc__native_wino_destroy(native_wino *wg)
{
    if (!wg)
        return;
    sleapc__aligned_free(wg->u);
    sleapc__aligned_free(wg->bias);
    sleapc__aligned_free(wg->zeros);
    sleapc__free(wg);
}

sleapc_status sleapc__native_wino_create(const native_ukernels *uk, int m, int c_in, int c_out,
                                         const float *weight, const float *bias, bool relu,
                                         native_wino **out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create winograd conv: out is required");
    *out = NULL;
    const native_wino_mats *mt = sleapc__native_wino_mats(m);
    if (!weight || !mt || c_in < 1 || c_out < 1 || c_in > WINO_MAX_CHANNELS ||
        c_out > WINO_MAX_CHANNELS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "create winograd conv: F(%d), %d -> %d channels: tile size not 2, 4 "
                            "or 6, channels outside 1..%d, or no weights", m, c_in, c_out,
                            WINO_MAX_CHANNELS);
    if (!uk)
        uk = sleapc__native_ukernels_best();
    if (!uk->wino_in[m / 2 - 1])
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "create winograd conv: the %s kernels have no Winograd transforms",
                            uk->name);
    native_wino *wg = sleapc__calloc(1, sizeof *wg);
    if (!wg)
        goto nomem;
    wg->uk = uk;
    wg->mt = mt;
    wg->fin = uk->wino_in[m / 2 - 1];
    wg->fout = uk->wino_out[m / 2 - 1];
    wg->gather = uk->wino_gather[m / 2 - 1];
    wg->scatter = uk->wino_scatter[m / 2 - 1];
    wg->m = m;
    wg->al = m + 2;
    wg->c_in = c_in;
    wg->c_out = c_out;
    wg->relu = relu;
    sleapc__native_blocks_plan(c_out, uk->cb, &wg->blocks);
    wg->fn_big = wg->blocks.size < uk->cb ? uk->conv1[wg->blocks.size + 1] : NULL;
    wg->fn_small = uk->conv1[wg->blocks.size];

    size_t al2 = (size_t)wg->al * (size_t)wg->al;
    size_t per_pos = (size_t)c_in * (size_t)c_out;
    if (per_pos > SIZE_MAX / sizeof(float) / al2)
        goto nomem;
    wg->u = sleapc__aligned_alloc(al2 * per_pos * sizeof(float));
    wg->bias = sleapc__aligned_alloc((size_t)c_out * sizeof(float));
    wg->zeros = sleapc__aligned_alloc((size_t)c_out * sizeof(float));
    if (!wg->u || !wg->bias || !wg->zeros)
        goto nomem;
    for (int co = 0; co < c_out; co++) {
        wg->bias[co] = bias ? bias[co] : 0.0f;
        wg->zeros[co] = 0.0f;
    }
    /* U = G g G^T per (co, ci), in double, rounded once. */
    int al = wg->al;
    for (int blk = 0; blk < wg->blocks.n; blk++) {
        size_t co0 = (size_t)native_block_start(&wg->blocks, blk);
        size_t len = (size_t)native_block_len(&wg->blocks, blk);
        for (size_t k = 0; k < len; k++)
            for (size_t ci = 0; ci < (size_t)c_in; ci++) {
                const float *g = weight + ((co0 + k) * (size_t)c_in + ci) * 9;
                double gg[8][3]; /* G g */
                for (int a = 0; a < al; a++)
                    for (int v = 0; v < 3; v++)
                        gg[a][v] = mt->g[a][0] * g[v] + mt->g[a][1] * g[3 + v] +
                                   mt->g[a][2] * g[6 + v];
                for (int a = 0; a < al; a++)
                    for (int b = 0; b < al; b++) {
                        double s = gg[a][0] * mt->g[b][0] + gg[a][1] * mt->g[b][1] +
                                   gg[a][2] * mt->g[b][2];
                        size_t p = (size_t)(a * al + b);
                        wg->u[p * per_pos + co0 * (size_t)c_in + ci * len + k] = (float)s;
                    }
            }
    }
    *out = wg;
    return SLEAPC_OK;

nomem:
    sleapc__native_wino_destroy(wg);
    return sleapc__fail(SLEAPC_ERR_NOMEM,
                        "create winograd conv: F(%d), %d -> %d channels: out of memory", m, c_in,
                        c_out);
}

/* Most tiles per chunk: each weight loaded serves ts tiles, so ts as large
 * as the cache allows, whole kernel strips: each position's c_in x ts slab
 * of V within WINO_SLAB_BYTES; where the channels are few, the staged rows,
 * V and M of a chunk (written by one step, read by the next) within
 * WINO_CHUNK_BYTES (about 2/3 of a 512 KiB L2; 1.1-1.3x faster at 16-32
 * channels on AVX2 than 256-tile chunks), but not below WINO_MIN_CHUNK
 * tiles, which the weights of the wide layers need. Independent of the map
 * and the batch: the scratch holds a chunk of this size per thread. */
static int64_t chunk_cap(const native_wino *wg)
{
    int64_t strip = wg->uk->strip;
    int64_t ts = WINO_SLAB_BYTES / ((int64_t)wg->c_in * (int64_t)sizeof(float)) / strip * strip;
    int64_t per_tile = (int64_t)wg->al * wg->al * (wg->c_in + wg->c_out + 1) * (int64_t)sizeof(float);
    int64_t fit = WINO_CHUNK_BYTES / per_tile / strip * strip;
    if (fit < WINO_MIN_CHUNK)
        fit = WINO_MIN_CHUNK;
    if (ts > fit)
        ts = fit;
    if (ts > WINO_MAX_CHUNK)
        ts = WINO_MAX_CHUNK;
    return ts < strip ? strip : ts;
}

/* Tiles per chunk of a run over n_tiles tiles (the whole batch): chunks of
 * equal size (whole strips) at most chunk_cap. Each chunk streams every
 * transformed weight once (alpha^2 x c_in x c_out floats: 16 MB for 512
 * channels in F(2), far more than the chunk's V on small maps), so the
 * fewest chunks (but see WINO_PHASED_BYTES): where there are too few chunks
 * to share, the threads split each chunk's steps instead (phase_in). */
static int64_t chunk_tiles(const native_wino *wg, int64_t n_tiles)
{
    int64_t strip = wg->uk->strip, cap = chunk_cap(wg);
    int64_t n_chunks = (n_tiles + cap - 1) / cap;
    if (n_chunks < 1)
        n_chunks = 1;
    int64_t ts = round_up((n_tiles + n_chunks - 1) / n_chunks, strip);
    return ts > cap ? cap : ts < strip ? strip : ts;
}

/* Floats between two positions' slabs of V or M holding `floats`: whole
 * cache lines, an odd number of them. c x ts floats is often a multiple of
 * 4 KiB (16 channels x 64 tiles), and then the alpha^2 values of a tile,
 * which each transform loads or stores together, all fell in one L1 set
 * (8 ways for 36 or 64 lines); an odd line count spreads them over the
 * sets. */
static int64_t pos_stride(int64_t floats)
{
    int64_t n = round_up(floats, 16);
    return (n / 16) % 2 == 0 ? n + 16 : n;
}

/* Per-thread scratch, in floats: V, M, the staged tiles, the transforms'
 * temporaries, and the output tiles. */
typedef struct wino_layout {
    int64_t ts;            /* tiles per chunk (a multiple of the strip) */
    int64_t v_ps, m_ps;    /* floats between positions in V and in M */
    int64_t v, mm, rows, tin, tout, y, total;
} wino_layout;

static wino_layout layout_of(const native_wino *wg, int64_t ts)
{
    wino_layout l;
    int64_t al = wg->al, m = wg->m;
    l.ts = ts;
    l.v_ps = pos_stride(wg->c_in * l.ts);
    l.m_ps = pos_stride(wg->c_out * l.ts);
    int64_t v = al * al * l.v_ps;
    int64_t mm = al * al * l.m_ps;
    int64_t rows = round_up(al * al * l.ts, 16);
    int64_t tin = round_up(al * al * l.ts, 16);
    int64_t tout = round_up(al * m * l.ts, 16);
    int64_t y = round_up(m * m * l.ts, 16);
    l.v = 0;
    l.mm = l.v + v;
    l.rows = l.mm + mm;
    l.tin = l.rows + rows;
    l.tout = l.tin + tin;
    l.y = l.tout + tout;
    l.total = l.y + y;
    return l;
}

size_t sleapc__native_wino_scratch_size(const native_wino *wg, int64_t h, int64_t w,
                                        int n_threads)
{
    if (w < 0 || w > NATIVE_MAX_WIDTH || h < 0 || h > NATIVE_MAX_WIDTH)
        return SIZE_MAX;
    size_t n = n_threads < 1 ? 1 : (size_t)n_threads;
    uint64_t per = (uint64_t)layout_of(wg, chunk_cap(wg)).total * sizeof(float);
    if (per > SIZE_MAX / n)
        return SIZE_MAX;
    return (size_t)per * n;
}

typedef struct wino_job {
    const native_wino *wg;
    native_conv_src src;
    float *dst;
    int64_t h, w, th, tw, n_tiles;
    wino_layout l;
    char *scratch;
    native_split split;
    int64_t chunk;  /* phased runs: the chunk, and tasks per step */
    int n_parts;
} wino_job;

/* Channel ci's plane of batch item bi, from the part that holds it. */
static const float *src_plane(const wino_job *j, int64_t bi, int ci)
{
    int k = 0;
    while (k + 1 < j->src.n && ci >= j->src.c[k]) {
        ci -= j->src.c[k];
        k++;
    }
    return j->src.data[k] + (bi * j->src.c[k] + ci) * j->h * j->w;
}

/* A run of tiles within one tile row. */
typedef struct tile_run {
    int64_t bi, ty, tx0, n;
} tile_run;

static tile_run run_at(const wino_job *j, int64_t g, int64_t end)
{
    tile_run r;
    int64_t per_item = j->th * j->tw;
    r.bi = g / per_item;
    int64_t rest = g - r.bi * per_item;
    r.ty = rest / j->tw;
    r.tx0 = rest - r.ty * j->tw;
    r.n = j->tw - r.tx0 < end - g ? j->tw - r.tx0 : end - g;
    return r;
}

/* Tile t's alpha phases where some of its columns lie outside the row
 * (zeros there). */
static void gather_edge_tile(const float *row, int64_t w, int64_t x0, int64_t t, float *d,
                             int64_t ps, int m)
{
    for (int jj = 0; jj < m + 2; jj++) {
        int64_t x = x0 + t * m + jj;
        d[jj * ps + t] = x >= 0 && x < w ? row[x] : 0.0f;
    }
}

/* Channel `plane`'s alpha x alpha input tiles of run r -> d: input (i, j)
 * of the run's tile t at d + (i * alpha + j) * ps + t. Each input row is
 * read in place, split in its alpha column phases (columns m and m + 1
 * of a tile are columns 0 and 1 of the next); only the tiles that cross
 * the map's left or right edge are read column by column, with zeros
 * outside. No copy of the row: nearly every run is a whole tile row and
 * meets the border, so a padded copy (and a memcpy per shifted phase)
 * would be small calls on every row. */
static void stage_tiles(const native_wino *wg, const wino_job *j, const float *plane,
                        const tile_run *r, float *d, int64_t ps)
{
    int m = wg->m, al = wg->al;
    int64_t x0 = r->tx0 * m - 1;           /* input column of tile 0's column 0 */
    int64_t n = r->n;
    /* Tiles [t_lo, t_hi) read columns 0..w-1 only. */
    int64_t t_lo = x0 < 0 ? 1 : 0;
    int64_t t_hi = j->w - al - x0 >= 0 ? (j->w - al - x0) / m + 1 : 0;
    if (t_hi > n)
        t_hi = n;
    if (t_lo > t_hi)
        t_lo = t_hi;
    for (int i = 0; i < al; i++) {
        int64_t iy = r->ty * m + i - 1;
        float *di = d + i * al * ps;
        if (iy < 0 || iy >= j->h) {
            for (int jj = 0; jj < al; jj++)
                memset(di + jj * ps, 0, (size_t)n * sizeof(float));
            continue;
        }
        const float *row = plane + iy * j->w;
        wg->gather(row, x0, t_lo, t_hi, di, ps);
        for (int64_t t = 0; t < t_lo; t++)
            gather_edge_tile(row, j->w, x0, t, di, ps, m);
        for (int64_t t = t_hi; t < n; t++)
            gather_edge_tile(row, j->w, x0, t, di, ps, m);
    }
}

/* M[p][co][tile] = sum over ci of U[p][ci][co] V[p][ci][tile] for the
 * chunk's n tiles, positions [p0, p1) and the output channels of blocks
 * [blk0, blk1), on the 1x1 microkernels. V of a position is packed by strips of tiles, each strip's
 * c_in x strip panel contiguous (wino_in's v_ss), so a kernel call reads its
 * panel in order and it stays in L1 while the blocks of a group, whose
 * weights stay in L2 (WINO_GROUP_BYTES), run over it; a last partial strip
 * runs on a whole vector of tiles, not a whole strip (less padding on small
 * maps; its lanes past n hold zeros, see wino_task). Every sum
 * runs over ci in order, as in the direct method: the same products, added
 * in the same order, whatever the blocking. */
static void wino_gemm(const native_wino *wg, const float *v, float *mm, const wino_layout *l, int64_t n,
                      int64_t p0, int64_t p1, int blk0, int blk1)
{
    int64_t strip = wg->uk->strip, vw = wg->uk->strip_t; /* vw: one vector of tiles */
    int64_t c_in = wg->c_in;
    int64_t ts = l->ts, v_ps = l->v_ps, v_ss = c_in * strip, m_ps = l->m_ps;
    int64_t n_strips = (n + strip - 1) / strip;
    int64_t last = n - (n_strips - 1) * strip; /* tiles in the last strip */
    int per_group = (int)(WINO_GROUP_BYTES / (c_in * wg->uk->cb * (int64_t)sizeof(float)));
    if (per_group < 1)
        per_group = 1;
    native_conv_row gr = {.src_cs = strip, .kh = 1, .kw = 1, .c_in = wg->c_in, .dst_cs = ts};
    for (int64_t p = p0; p < p1; p++) {
        const float *u = wg->u + (size_t)p * (size_t)c_in * (size_t)wg->c_out;
        for (int g0 = blk0; g0 < blk1; g0 += per_group) {
            int g1 = g0 + per_group < blk1 ? g0 + per_group : blk1;
            for (int64_t s = 0; s < n_strips; s++) {
                gr.src = v + p * v_ps + s * v_ss;
                gr.n_px = s + 1 < n_strips ? strip : round_up(last, vw);
                for (int blk = g0; blk < g1; blk++) {
                    int co0 = native_block_start(&wg->blocks, blk);
                    gr.w = u + (size_t)co0 * (size_t)c_in;
                    gr.bias = wg->zeros + co0;
                    gr.dst = mm + p * m_ps + co0 * ts + s * strip;
                    (blk < wg->blocks.n_big ? wg->fn_big : wg->fn_small)(&gr);
                }
            }
        }
    }
}

/* A thread's scratch: V, M, the staged rows, the transforms' temporaries
 * and the output tiles of one chunk. */
typedef struct wino_bufs {
    float *v, *mm, *rows, *tin, *tout, *y;
} wino_bufs;

static wino_bufs bufs_of(const wino_job *j, int thread)
{
    float *base = (float *)(j->scratch + (size_t)thread * (size_t)j->l.total * sizeof(float));
    wino_bufs bf = {base + j->l.v,   base + j->l.mm,   base + j->l.rows,
                    base + j->l.tin, base + j->l.tout, base + j->l.y};
    return bf;
}

/* Tiles [g0, g1) of chunk c. */
static void chunk_range(const wino_job *j, int64_t c, int64_t *g0, int64_t *g1)
{
    *g0 = c * j->l.ts;
    *g1 = *g0 + j->l.ts < j->n_tiles ? *g0 + j->l.ts : j->n_tiles;
}

/* Steps 1 (stage, input transform) for input channels [ci0, ci1) of chunk
 * c into v, with the thread's rows and tin. */
static void chunk_in(const wino_job *j, int64_t c, int ci0, int ci1, const wino_bufs *bf,
                     float *v)
{
    const native_wino *wg = j->wg;
    int64_t g0, g1, ts = j->l.ts, strip = wg->uk->strip;
    chunk_range(j, c, &g0, &g1);
    int64_t n = g1 - g0;
    /* The GEMM reads whole vectors of tiles: zeros past n, which the
     * staging leaves alone, so V is zero there too. */
    int64_t n_vec = round_up(n, wg->uk->strip_t);
    if (n_vec > n)
        for (int q = 0; q < wg->al * wg->al; q++)
            memset(bf->rows + q * ts + n, 0, (size_t)(n_vec - n) * sizeof(float));
    for (int ci = ci0; ci < ci1; ci++) {
        for (int64_t g = g0; g < g1;) {
            tile_run r = run_at(j, g, g1);
            stage_tiles(wg, j, src_plane(j, r.bi, ci), &r, bf->rows + (g - g0), ts);
            g += r.n;
        }
        native_wino_in a = {.mt = wg->mt, .rows = bf->rows, .ps = ts, .n = n,
                            .v = v + ci * strip, .v_ps = j->l.v_ps,
                            .v_ss = (int64_t)wg->c_in * strip, .tmp = bf->tin};
        wg->fin(&a);
    }
}

/* Step 3 (output transform, bias, ReLU, scatter) for output channels
 * [co_lo, co_hi) of chunk c from mm, with the thread's tout and y. */
static void chunk_out(const wino_job *j, int64_t c, int co_lo, int co_hi, const wino_bufs *bf,
                      const float *mm)
{
    const native_wino *wg = j->wg;
    int64_t g0, g1, ts = j->l.ts, m = wg->m, plane = j->h * j->w;
    chunk_range(j, c, &g0, &g1);
    int64_t n = g1 - g0;
    for (int co = co_lo; co < co_hi; co++) {
        native_wino_out a = {.mt = wg->mt,
                             .mm = mm + co * ts,
                             .m_ps = j->l.m_ps,
                             .n = n,
                             .bias = wg->bias[co],
                             .relu = wg->relu,
                             .round_bf16 = wg->round_bf16,
                             .y = bf->y,
                             .tmp = bf->tout};
        wg->fout(&a);
        for (int64_t g = g0; g < g1;) {
            tile_run r = run_at(j, g, g1);
            const float *yr = bf->y + (g - g0);
            float *out = j->dst + (r.bi * wg->c_out + co) * plane;
            int64_t cols = j->w - r.tx0 * m; /* outputs of the run in a row */
            if (cols > r.n * m)
                cols = r.n * m;
            for (int64_t ry = 0; ry < m && r.ty * m + ry < j->h; ry++) {
                float *row = out + (r.ty * m + ry) * j->w + r.tx0 * m;
                wg->scatter(yr + ry * m * n, n, row, cols);
            }
            g += r.n;
        }
    }
}

static int block_co(const native_wino *wg, int blk)
{
    return blk < wg->blocks.n ? native_block_start(&wg->blocks, blk) : wg->c_out;
}

/* A run of chunks for a group of channel blocks, all three steps. */
static void wino_task(void *ctx, int64_t task, int thread)
{
    const wino_job *j = ctx;
    const native_wino *wg = j->wg;
    const native_split *sp = &j->split;
    int group = (int)(task % sp->n_groups);
    int64_t unit_task = task / sp->n_groups;
    int blk0 = group * sp->blocks_per_group;
    int blk1 = blk0 + sp->blocks_per_group < wg->blocks.n ? blk0 + sp->blocks_per_group
                                                          : wg->blocks.n;
    int64_t c0 = unit_task * sp->units_per_task;
    int64_t n_chunks = (j->n_tiles + j->l.ts - 1) / j->l.ts;
    int64_t c1 = c0 + sp->units_per_task < n_chunks ? c0 + sp->units_per_task : n_chunks;
    wino_bufs bf = bufs_of(j, thread);
    for (int64_t c = c0; c < c1; c++) {
        int64_t g0, g1;
        chunk_range(j, c, &g0, &g1);
        chunk_in(j, c, 0, wg->c_in, &bf, bf.v);
        wino_gemm(wg, bf.v, bf.mm, &j->l, g1 - g0, 0, (int64_t)wg->al * wg->al, blk0, blk1);
        chunk_out(j, c, block_co(wg, blk0), block_co(wg, blk1), &bf, bf.mm);
    }
}

/* Fewer chunks than the threads can share (small maps) and large weights
 * (WINO_PHASED_BYTES): each chunk in three
 * parallel steps over one V and M (thread 0's), split by input channels,
 * alpha^2 positions and output channels, so that no thread repeats the
 * input transform (a third of Winograd's time at 128 channels) and every
 * transformed weight and every value of V is read once per chunk. */
static void phase_in(void *ctx, int64_t task, int thread)
{
    const wino_job *j = ctx;
    int c_in = j->wg->c_in;
    wino_bufs bf = bufs_of(j, thread), b0 = bufs_of(j, 0);
    chunk_in(j, j->chunk, (int)(task * c_in / j->n_parts), (int)((task + 1) * c_in / j->n_parts),
             &bf, b0.v);
}

static void phase_gemm(void *ctx, int64_t task, int thread)
{
    (void)thread;
    const wino_job *j = ctx;
    int64_t al2 = (int64_t)j->wg->al * j->wg->al;
    int64_t g0, g1;
    chunk_range(j, j->chunk, &g0, &g1);
    wino_bufs b0 = bufs_of(j, 0);
    wino_gemm(j->wg, b0.v, b0.mm, &j->l, g1 - g0, task * al2 / j->n_parts,
              (task + 1) * al2 / j->n_parts, 0, j->wg->blocks.n);
}

static void phase_out(void *ctx, int64_t task, int thread)
{
    const wino_job *j = ctx;
    int c_out = j->wg->c_out;
    wino_bufs bf = bufs_of(j, thread), b0 = bufs_of(j, 0);
    chunk_out(j, j->chunk, (int)(task * c_out / j->n_parts),
              (int)((task + 1) * c_out / j->n_parts), &bf, b0.mm);
}

void sleapc__native_wino_run_parts(const native_wino *wg, sleapc_threadpool *tp,
                                   const native_conv_src *src, int64_t b, int64_t h, int64_t w,
                                   float *dst, void *scratch)
{
    if (b <= 0 || h <= 0 || w <= 0)
        return;
    int n_threads = sleapc__threadpool_n_threads(tp);
    wino_job j = {
        .wg = wg,
        .src = *src,
        .dst = dst,
        .h = h,
        .w = w,
        .th = (h + wg->m - 1) / wg->m,
        .tw = (w + wg->m - 1) / wg->m,
        .scratch = scratch,
    };
    j.n_tiles = b * j.th * j.tw;
    int64_t ts = chunk_tiles(wg, j.n_tiles);
    int64_t n_chunks = (j.n_tiles + ts - 1) / ts;
    bool few = n_threads > 1 && n_chunks < 2 * n_threads;
    double w_bytes = (double)wg->al * wg->al * wg->c_in * wg->c_out * sizeof(float);
    if (few && w_bytes < WINO_PHASED_BYTES) {
        /* Small weights: two chunks a thread, each thread all three steps. */
        int64_t spread = round_up((j.n_tiles + 2 * n_threads - 1) / (2 * n_threads),
                                  wg->uk->strip);
        ts = spread < ts ? spread : ts;
        n_chunks = (j.n_tiles + ts - 1) / ts;
        few = false;
    }
    j.l = layout_of(wg, ts);
    if (few) {
        int n_min = wg->c_in < wg->c_out ? wg->c_in : wg->c_out;
        if (n_min > wg->al * wg->al)
            n_min = wg->al * wg->al;
        j.n_parts = NATIVE_TASKS_PER_THREAD * n_threads < n_min
                        ? NATIVE_TASKS_PER_THREAD * n_threads
                        : n_min;
        for (j.chunk = 0; j.chunk < n_chunks; j.chunk++) {
            sleapc__threadpool_run_indexed(tp, phase_in, &j, j.n_parts);
            sleapc__threadpool_run_indexed(tp, phase_gemm, &j, j.n_parts);
            sleapc__threadpool_run_indexed(tp, phase_out, &j, j.n_parts);
        }
        return;
    }
    sleapc__native_split_plan(1, n_chunks, wg->blocks.n, n_threads, 2, &j.split);
    sleapc__threadpool_run_indexed(tp, wino_task, &j, j.split.n_tasks);
}
