/* numpy's order of operations (see eval_numpy.h). */
#include "pipeline/eval/eval_numpy.h"

#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/np_sum.h"

double sleapc__ev_np_sum(const double *a, int64_t n)
{
    return sleapc__np_pairwise_sum(a, n);
}

double sleapc__ev_np_mean(const double *a, int64_t n)
{
    return n > 0 ? sleapc__ev_np_sum(a, n) / (double)n : NAN;
}

/* numpy.lib.function_base._quantile, method "linear": virtual index
 * (n-1)*q, neighbours clipped to the last value, _lerp's two-sided form. */
double sleapc__ev_np_percentile_sorted(const double *sorted, int64_t n, double p)
{
    const double q = p / 100.0;
    const double virt = (double)(n - 1) * q;
    int64_t prev, next;
    double gamma;
    if (virt >= (double)(n - 1)) {
        prev = next = n - 1;
        gamma = virt - -1.0;
    } else if (virt < 0) {
        prev = next = 0;
        gamma = virt;
    } else {
        const double fl = floor(virt);
        prev = (int64_t)fl;
        next = prev + 1;
        gamma = virt - fl;
    }
    const double a = sorted[prev], b = sorted[next];
    const double diff = b - a;
    if (gamma >= 0.5)
        return b - diff * (1 - gamma);
    return a + diff * gamma;
}

/* numpy.linspace: arange(num) * step + start, the last value set to stop. */
double sleapc__ev_np_linspace(double start, double stop, int num, int i)
{
    if (num > 1 && i == num - 1)
        return stop;
    const double step = (stop - start) / (double)(num - 1);
    return (double)i * step + start;
}

typedef struct keyed {
    double key; /* -v, NaN last */
    int64_t i;
} keyed;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    const int na = isnan(a->key), nb = isnan(b->key);
    if (na != nb)
        return na - nb;
    if (!na && a->key < b->key)
        return -1;
    if (!na && a->key > b->key)
        return 1;
    return (a->i > b->i) - (a->i < b->i); /* stable */
}

void sleapc__ev_np_argsort_desc(const double *v, int64_t n, int64_t *idx)
{
    keyed *k = sleapc__malloc(sizeof *k * (size_t)(n > 0 ? n : 1));
    if (!k) { /* fall back to a stable insertion sort in place */
        for (int64_t i = 0; i < n; i++)
            idx[i] = i;
        for (int64_t i = 1; i < n; i++)
            for (int64_t j = i; j > 0; j--) {
                const double a = -v[idx[j - 1]], b = -v[idx[j]];
                if (!(isnan(a) && !isnan(b)) && !(a > b))
                    break;
                const int64_t t = idx[j];
                idx[j] = idx[j - 1];
                idx[j - 1] = t;
            }
        return;
    }
    for (int64_t i = 0; i < n; i++)
        k[i] = (keyed){-v[i], i};
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    for (int64_t i = 0; i < n; i++)
        idx[i] = k[i].i;
    sleapc__free(k);
}
