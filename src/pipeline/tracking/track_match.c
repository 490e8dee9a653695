/* Hungarian / greedy matching and CPython set order for the tracker. */
#include "pipeline/tracking/track_match.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

void sleapc__track_match_ws_free(sleapc_track_match_ws *ws)
{
    sleapc__hungarian_ws_free(&ws->hws);
    sleapc__free(ws->cost);
    sleapc__free(ws->idx);
    sleapc__free(ws->cols);
    sleapc__free(ws->used);
    sleapc__free(ws->table);
    memset(ws, 0, sizeof *ws);
}

static sleapc_status reserve(sleapc_track_match_ws *ws, int64_t cells)
{
    if (cells <= ws->cap)
        return SLEAPC_OK;
    int64_t cap = ws->cap ? ws->cap : 16;
    while (cap < cells)
        cap *= 2;
    double *cost = sleapc__realloc(ws->cost, (size_t)cap * sizeof *cost);
    if (cost)
        ws->cost = cost;
    int64_t *idx = sleapc__realloc(ws->idx, (size_t)cap * sizeof *idx);
    if (idx)
        ws->idx = idx;
    int64_t *cols = sleapc__realloc(ws->cols, (size_t)cap * sizeof *cols);
    if (cols)
        ws->cols = cols;
    unsigned char *used = sleapc__realloc(ws->used, (size_t)cap * 2);
    if (used)
        ws->used = used;
    if (!cost || !idx || !cols || !used)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
    ws->cap = cap;
    return SLEAPC_OK;
}

/* Stable merge sort of cell indices by cost: equal costs keep row-major
 * order, which is how sleap-nn's argsort resolves them on these sizes. */
static void sort_cells(int64_t *idx, int64_t *tmp, int64_t n, const double *cost)
{
    if (n < 2)
        return;
    const int64_t h = n / 2;
    sort_cells(idx, tmp, h, cost);
    sort_cells(idx + h, tmp, n - h, cost);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cost[idx[j]] < cost[idx[i]] ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

sleapc_status sleapc__track_match(sleapc_track_matching m, const double *cost, int n_rows,
                                  int n_cols, sleapc_track_match_ws *ws, int *rows, int *cols,
                                  int *n_pairs)
{
    *n_pairs = 0;
    const int64_t cells = (int64_t)n_rows * n_cols;
    if (cells == 0)
        return SLEAPC_OK;
    sleapc_status st = reserve(ws, cells);
    if (st)
        return st;
    if (m == SLEAPC_TRACK_GREEDY) {
        for (int64_t c = 0; c < cells; c++)
            ws->idx[c] = c;
        sort_cells(ws->idx, ws->cols, cells, cost);
        unsigned char *row_used = ws->used, *col_used = ws->used + n_rows;
        memset(ws->used, 0, (size_t)n_rows + (size_t)n_cols);
        for (int64_t c = 0; c < cells; c++) {
            const int r = (int)(ws->idx[c] / n_cols), k = (int)(ws->idx[c] % n_cols);
            if (row_used[r] || col_used[k])
                continue;
            row_used[r] = col_used[k] = 1;
            rows[*n_pairs] = r;
            cols[*n_pairs] = k;
            (*n_pairs)++;
        }
        return SLEAPC_OK;
    }
    double maxabs = -1.0;
    for (int64_t c = 0; c < cells; c++)
        if (isfinite(cost[c]) && fabs(cost[c]) > maxabs)
            maxabs = fabs(cost[c]);
    const double fill = maxabs >= 0 ? maxabs * 10 + 1 : 1e6;
    for (int64_t c = 0; c < cells; c++)
        ws->cost[c] = isfinite(cost[c]) ? cost[c] : fill;
    st = sleapc__hungarian_solve_ws(ws->cost, n_rows, n_cols, &ws->hws, ws->idx, ws->cols);
    if (st)
        return sleapc__wrap(st, "tracker matching");
    const int n = n_rows < n_cols ? n_rows : n_cols;
    for (int i = 0; i < n; i++) {
        rows[i] = (int)ws->idx[i];
        cols[i] = (int)ws->cols[i];
    }
    *n_pairs = n;
    return SLEAPC_OK;
}

/* CPython's setobject.c (3.8 - 3.12): linear probes, then perturbation. */
enum { LINEAR_PROBES = 9, PERTURB_SHIFT = 5, EMPTY = -1 };

static void insert_clean(int64_t *table, uint64_t mask, int64_t key)
{
    uint64_t perturb = (uint64_t)key, i = (uint64_t)key & mask;
    for (;;) {
        if (table[i] == EMPTY) {
            table[i] = key;
            return;
        }
        if (i + LINEAR_PROBES <= mask) {
            for (uint64_t j = 1; j <= LINEAR_PROBES; j++) {
                if (table[i + j] == EMPTY) {
                    table[i + j] = key;
                    return;
                }
            }
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
}

int sleapc__pyset_order(const int64_t *keys, int n, sleapc_track_match_ws *ws, int64_t *out)
{
    /* table sizes never exceed 8 * (n + 1) for n distinct keys */
    const int64_t need = 2 * (8 * ((int64_t)n + 1));
    if (need > ws->table_cap) {
        int64_t *t = sleapc__realloc(ws->table, (size_t)need * sizeof *t);
        if (!t)
            return -1;
        ws->table = t;
        ws->table_cap = need;
    }
    int64_t *table = ws->table, *spare = ws->table + need / 2;
    uint64_t mask = 7;
    int64_t fill = 0;
    for (int64_t i = 0; i <= (int64_t)mask; i++)
        table[i] = EMPTY;
    for (int k = 0; k < n; k++) {
        const int64_t key = keys[k];
        uint64_t perturb = (uint64_t)key, i = (uint64_t)key & mask;
        bool present = false, placed = false;
        while (!present && !placed) {
            const uint64_t probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0;
            for (uint64_t j = 0; j <= probes; j++) {
                if (table[i + j] == EMPTY) {
                    table[i + j] = key;
                    placed = true;
                    break;
                }
                if (table[i + j] == key) {
                    present = true;
                    break;
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i * 5 + 1 + perturb) & mask;
        }
        if (present)
            continue;
        fill++;
        if (fill * 5 < (int64_t)mask * 3)
            continue;
        const int64_t minused = fill > 50000 ? fill * 2 : fill * 4;
        uint64_t size = 8;
        while (size <= (uint64_t)minused)
            size <<= 1;
        memcpy(spare, table, (mask + 1) * sizeof *table);
        const uint64_t old_size = mask + 1;
        mask = size - 1;
        for (uint64_t s = 0; s < size; s++)
            table[s] = EMPTY;
        for (uint64_t s = 0; s < old_size; s++)
            if (spare[s] != EMPTY)
                insert_clean(table, mask, spare[s]);
    }
    int m = 0;
    for (uint64_t s = 0; s <= mask; s++)
        if (table[s] != EMPTY)
            out[m++] = table[s];
    return m;
}
