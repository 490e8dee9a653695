/* Plan once, run many (README §5): once a run has sized the interpreter's
 * buffers for an input shape, running that shape again allocates nothing,
 * host values, kernel scratch and the networks' own buffers included. For
 * every export's model.onnx on its first case: run 1 sizes everything, runs
 * 2-4 must make no allocation through sleapc's allocator, and run 4's outputs
 * must equal run 1's bit for bit (reused buffers carry nothing over).
 *
 * Values give their storage back after their last read, so the host memory
 * held is bounded by what is live at once, not by all the graph computes:
 * the pool makes a buffer only when every buffer is held, so it has at most
 * K buffers, K the most values alive at once; each buffer is as large as the
 * one value that made or last grew it (a value takes one buffer per run, and
 * runs 2-4 grow none), so the buffers hold at most the K largest values'
 * bytes. Held memory = that + the kernels' scratch. */
#include <stdlib.h>
#include <string.h>

#include "backends/onnx/onnxrt.h"
#include "backends/onnx/onnxrt_impl.h"
#include "core/alloc.h"
#include "io/npy/npy.h"
#include "io/onnx/onnx_read.h"
#include "test_util.h"

#define MAX_NAMES 64
#define N_RUNS 4

static size_t tensor_bytes(const sleapc_tensor *t)
{
    return (size_t)sleapc_tensor_numel(t) * sleapc_dtype_size(t->dtype);
}

/* A deep copy of a run's outputs: the runner reuses their buffers. */
static void keep(const sleapc_tensor_map *src, sleapc_tensor_map *dst)
{
    *dst = *src;
    for (int i = 0; i < src->n; i++) {
        size_t n = tensor_bytes(&src->tensors[i]);
        dst->tensors[i].data = malloc(n ? n : 1);
        if (dst->tensors[i].data && n)
            memcpy(dst->tensors[i].data, src->tensors[i].data, n);
    }
}

static int by_size_desc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Held bytes within the bound above; every value's bytes are those of its
 * last run (one shape here). */
static void check_held(const char *name, const sleapc_onnxrt *rt)
{
    rt_mem_stats ms;
    sleapc__onnxrt_mem_stats(rt, &ms);
    size_t *sizes = calloc((size_t)rt->n_vals + 1, sizeof *sizes);
    CHECK(sizes != NULL);
    if (!sizes)
        return;
    int n = 0;
    size_t all = 0;
    for (int v = 0; v < rt->n_vals; v++)
        if (!rt->vals[v].is_const) {
            sizes[n++] = rt->vals[v].t.last_bytes;
            all += rt->vals[v].t.last_bytes;
        }
    qsort(sizes, (size_t)n, sizeof *sizes, by_size_desc);
    size_t bound = ms.scratch;
    for (int i = 0; i < ms.peak_live && i < n; i++)
        bound += sizes[i];
    printf("%-30s held %zu bytes (scratch %zu, %d buffers, at most %d live of %d values; "
           "bound %zu, all values %zu)\n",
           name, ms.held, ms.scratch, ms.n_bufs, ms.peak_live, n, bound, all + ms.scratch);
    CHECK_MSG(ms.n_bufs <= ms.peak_live, "%s: %d buffers for at most %d live values", name,
              ms.n_bufs, ms.peak_live);
    CHECK_MSG(ms.held <= bound,
              "%s: holds %zu bytes, more than the %d largest values + scratch (%zu)", name, ms.held,
              ms.peak_live, bound);
    free(sizes);
}

static void drop(sleapc_tensor_map *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->tensors[i].data);
    m->n = 0;
}

static void check_same(const char *name, const sleapc_tensor_map *first,
                       const sleapc_tensor_map *last)
{
    CHECK_MSG(first->n == last->n && first->n > 0, "%s: %d outputs, then %d", name, first->n,
              last->n);
    for (int i = 0; i < first->n && first->n == last->n; i++) {
        const sleapc_tensor *a = &first->tensors[i];
        const sleapc_tensor *b = sleapc__tensor_map_get(last, first->names[i]);
        bool same = b && a->dtype == b->dtype && a->ndim == b->ndim;
        for (int d = 0; same && d < a->ndim; d++)
            same = a->shape[d] == b->shape[d];
        same = same && a->data && memcmp(a->data, b->data, tensor_bytes(a)) == 0;
        CHECK_MSG(same, "%s: output %s of run %d differs from run 1", name, first->names[i],
                  N_RUNS);
    }
}

/* false when the export has no model.onnx or no case input. */
static bool check_export(const char *name)
{
    char dir[4096], path[4096];
    snprintf(dir, sizeof dir, "%s", test_data_path("onnx"));
    size_t len = strlen(dir);
    snprintf(dir + len, sizeof dir - len, "/%s", name);
    char *cases[MAX_NAMES];
    snprintf(path, sizeof path, "%s/cases", dir);
    int n_cases = test_list_dir(path, cases, MAX_NAMES);
    snprintf(path, sizeof path, "%s/cases/%s/input.npy", dir, n_cases ? cases[0] : "?");
    for (int i = 0; i < n_cases; i++)
        free(cases[i]);
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fclose(f);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    f = fopen(path, "rb");
    if (!f) {
        free(x.data);
        return false;
    }
    fclose(f);
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = NULL;
    CHECK_OK(sleapc__onnx_read(path, &om));
    if (om)
        CHECK_OK(sleapc__onnxrt_create(om, "native", 2, &rt));
    int64_t allocs[N_RUNS] = {0};
    sleapc_tensor_map out = {0}, first = {0};
    for (int r = 0; r < N_RUNS && rt && x.data; r++) {
        int64_t before = sleapc__alloc_count();
        sleapc_status st = sleapc__onnxrt_run(rt, &x, &out);
        allocs[r] = sleapc__alloc_count() - before;
        CHECK_MSG(st == SLEAPC_OK, "%s run %d: %s", name, r + 1, sleapc_last_error());
        if (st)
            break;
        if (r == 0)
            keep(&out, &first);
        else
            CHECK_MSG(allocs[r] == 0, "%s: run %d made %lld allocations", name, r + 1,
                      (long long)allocs[r]);
    }
    printf("%-30s allocations per run:", name);
    for (int r = 0; r < N_RUNS; r++)
        printf(" %lld", (long long)allocs[r]);
    printf("\n");
    if (rt && first.n)
        check_held(name, rt);
    if (first.n)
        check_same(name, &first, &out);
    drop(&first);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
    free(x.data);
    return true;
}

int main(void)
{
    test_require_data();
    char *names[MAX_NAMES];
    int n = test_list_dir(test_data_path("onnx"), names, MAX_NAMES);
    int n_exports = 0;
    for (int i = 0; i < n; i++) {
        n_exports += check_export(names[i]);
        free(names[i]);
    }
    CHECK_MSG(n_exports >= 8, "only %d exports with a case input found", n_exports);
    return test_finish();
}
