/* numpy.argsort's default algorithm (numpy 1.24 npysort "quicksort": an
 * introsort) on float32. sleap-nn cuts instances with
 * np.argsort(scores)[::-1]; among equal scores, which survive depends on
 * exactly this sort, so it is followed step by step. */
#include "layers/ops/grouping.h"

/* numpy's float ordering: NaN sorts after everything. */
static bool f_less(float a, float b)
{
    return a < b || (b != b && a == a);
}

/* numpy npysort aheapsort_. numpy indexes its heap from 1; a[k] here is
 * its a[k + 1], so node k has children 2k + 1 and 2k + 2. */
static void heap_argsort(const float *v, int64_t *a, int64_t n)
{
    int64_t i, j, l, tmp;
    for (l = (n >> 1) - 1; l >= 0; --l) {
        tmp = a[l];
        for (i = l, j = 2 * l + 1; j < n;) {
            if (j + 1 < n && f_less(v[a[j]], v[a[j + 1]]))
                j += 1;
            if (f_less(v[tmp], v[a[j]])) {
                a[i] = a[j];
                i = j;
                j = 2 * j + 1;
            } else {
                break;
            }
        }
        a[i] = tmp;
    }
    for (; n > 1;) {
        tmp = a[n - 1];
        a[n - 1] = a[0];
        n -= 1;
        for (i = 0, j = 1; j < n;) {
            if (j + 1 < n && f_less(v[a[j]], v[a[j + 1]]))
                j++;
            if (f_less(v[tmp], v[a[j]])) {
                a[i] = a[j];
                i = j;
                j = 2 * j + 1;
            } else {
                break;
            }
        }
        a[i] = tmp;
    }
}

#define SMALL_QUICKSORT 16
#define QS_STACK 128

static void swap_idx(int64_t *a, int64_t *b)
{
    int64_t t = *a;
    *a = *b;
    *b = t;
}

void sleapc__grouping_argsort(const float *v, int64_t n, int64_t *order)
{
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    if (n < 2)
        return;
    /* numpy npysort aquicksort_: median-of-3 quicksort, larger side pushed,
     * insertion sort for short runs, heapsort past a depth of 2*log2(n). */
    int64_t *pl = order, *pr = order + n - 1;
    int64_t *stack[QS_STACK];
    int64_t **sptr = stack;
    int depth[QS_STACK];
    int *psdepth = depth;
    int msb = 0;
    for (uint64_t u = (uint64_t)n; u > 1; u >>= 1)
        msb++;
    int cdepth = msb * 2;

    for (;;) {
        if (cdepth < 0) {
            heap_argsort(v, pl, pr - pl + 1);
            goto stack_pop;
        }
        while ((pr - pl) > SMALL_QUICKSORT) {
            int64_t *pm = pl + ((pr - pl) >> 1);
            if (f_less(v[*pm], v[*pl]))
                swap_idx(pm, pl);
            if (f_less(v[*pr], v[*pm]))
                swap_idx(pr, pm);
            if (f_less(v[*pm], v[*pl]))
                swap_idx(pm, pl);
            float vp = v[*pm];
            int64_t *pi = pl, *pj = pr - 1;
            swap_idx(pm, pj);
            for (;;) {
                do {
                    ++pi;
                } while (f_less(v[*pi], vp));
                do {
                    --pj;
                } while (f_less(vp, v[*pj]));
                if (pi >= pj)
                    break;
                swap_idx(pi, pj);
            }
            int64_t *pk = pr - 1;
            swap_idx(pi, pk);
            if (pi - pl < pr - pi) {
                *sptr++ = pi + 1;
                *sptr++ = pr;
                pr = pi - 1;
            } else {
                *sptr++ = pl;
                *sptr++ = pi - 1;
                pl = pi + 1;
            }
            *psdepth++ = --cdepth;
        }
        for (int64_t *pi = pl + 1; pi <= pr; ++pi) {
            int64_t vi = *pi;
            float vp = v[vi];
            int64_t *pj = pi, *pk = pi - 1;
            while (pj > pl && f_less(vp, v[*pk]))
                *pj-- = *pk--;
            *pj = vi;
        }
    stack_pop:
        if (sptr == stack)
            break;
        pr = *(--sptr);
        pl = *(--sptr);
        cdepth = *(--psdepth);
    }
}
