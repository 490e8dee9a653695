/* The storage pool of a runner's values. A value takes a buffer when it is
 * computed and gives it back after its last read, so later values reuse it.
 * A value first tries the buffer it took in the previous run: a run of the
 * same shapes then takes exactly the same buffers (each was free at that
 * point before, and buffers only grow), allocating nothing. */
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/alloc.h"
#include "core/error.h"

/* b's storage made at least `bytes` (its contents dropped). */
static sleapc_status grow(rt_pool_buf *b, size_t bytes)
{
    sleapc__aligned_free(b->data);
    b->cap = 0;
    b->data = sleapc__aligned_alloc(bytes ? bytes : 1);
    if (!b->data)
        return SLEAPC_ERR_NOMEM;
    b->cap = bytes;
    return SLEAPC_OK;
}

/* The buffer t should take (an index; pool->n for a new one). */
static int choose(const rt_pool *pool, const rt_tensor *t, size_t bytes)
{
    int pref = t->pref - 1;
    bool pref_free = pref >= 0 && pref < pool->n && !pool->bufs[pref].busy;
    if (pref_free && pool->bufs[pref].cap >= bytes)
        return pref;
    int fit = -1, largest = -1;
    for (int i = 0; i < pool->n; i++) {
        const rt_pool_buf *b = &pool->bufs[i];
        if (b->busy)
            continue;
        if (b->cap >= bytes && (fit < 0 || b->cap < pool->bufs[fit].cap))
            fit = i;
        if (largest < 0 || b->cap > pool->bufs[largest].cap)
            largest = i;
    }
    return fit >= 0 ? fit : pref_free ? pref : largest >= 0 ? largest : pool->n;
}

static sleapc_status take(rt_pool *pool, rt_tensor *t, size_t bytes)
{
    int i = choose(pool, t, bytes);
    if (i == pool->n) {
        if (pool->n == pool->cap_bufs) {
            int cap = pool->cap_bufs ? 2 * pool->cap_bufs : 32;
            rt_pool_buf *bufs = sleapc__realloc(pool->bufs, (size_t)cap * sizeof *bufs);
            if (!bufs)
                return SLEAPC_ERR_NOMEM;
            pool->bufs = bufs;
            pool->cap_bufs = cap;
        }
        memset(&pool->bufs[pool->n++], 0, sizeof pool->bufs[0]);
    }
    rt_pool_buf *b = &pool->bufs[i];
    if (!b->data || b->cap < bytes) {
        sleapc_status st = grow(b, bytes);
        if (st)
            return st;
    }
    b->busy = true;
    if (++pool->busy > pool->peak)
        pool->peak = pool->busy;
    t->buf = b->data;
    t->cap = b->cap;
    t->pooled = t->pref = i + 1;
    return SLEAPC_OK;
}

sleapc_status sleapc__rt_storage(rt_pool *pool, rt_tensor *t, size_t bytes)
{
    if (t->buf && bytes <= t->cap)
        return SLEAPC_OK;
    if (t->pooled) {
        if (!pool || t->pooled > pool->n)
            return SLEAPC_ERR_STATE;
        rt_pool_buf *b = &pool->bufs[t->pooled - 1];
        sleapc_status st = grow(b, bytes);
        t->buf = b->data;
        t->cap = b->cap;
        return st;
    }
    if (pool && !t->buf)
        return take(pool, t, bytes);
    sleapc__aligned_free(t->buf);
    t->cap = 0;
    t->buf = sleapc__aligned_alloc(bytes ? bytes : 1);
    if (!t->buf)
        return SLEAPC_ERR_NOMEM;
    t->cap = bytes;
    return SLEAPC_OK;
}

void sleapc__rt_pool_put(rt_pool *pool, rt_tensor *t)
{
    if (t->pooled && t->pooled <= pool->n && pool->bufs[t->pooled - 1].busy) {
        pool->bufs[t->pooled - 1].busy = false;
        pool->busy--;
        t->buf = NULL;
        t->cap = 0;
        t->pooled = 0;
    }
    sleapc__rt_release(t);
}

void sleapc__rt_pool_free(rt_pool *pool)
{
    for (int i = 0; i < pool->n; i++)
        sleapc__aligned_free(pool->bufs[i].data);
    sleapc__free(pool->bufs);
    memset(pool, 0, sizeof *pool);
}

void sleapc__onnxrt_mem_stats(const sleapc_onnxrt *rt, rt_mem_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!rt)
        return;
    out->scratch = rt->scratch.cap;
    out->held = out->scratch;
    for (int i = 0; i < rt->pool.n; i++)
        out->held += rt->pool.bufs[i].cap;
    /* Storage of a value's own (none while every result takes a pool buffer). */
    for (int v = 0; v < rt->n_vals; v++)
        if (!rt->vals[v].t.pooled)
            out->held += rt->vals[v].t.cap;
    out->n_bufs = rt->pool.n;
    out->peak_live = rt->pool.peak;
}

size_t sleapc__onnxrt_bytes_held(const sleapc_onnxrt *rt)
{
    rt_mem_stats s;
    sleapc__onnxrt_mem_stats(rt, &s);
    return s.held;
}
