/* Shortest augmenting path assignment, written to follow the decisions of
 * scipy's rectangular_lsap.cpp (scipy >= 1.6, after DF Crouse, "On
 * implementing 2D rectangular assignment algorithms", IEEE TAES 2016) step by
 * step: same scan order, same tie rules, same dual updates. Any exact solver
 * finds an optimal assignment; only this one finds scipy's among equals. */
#include "layers/ops/hungarian.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

enum { LSAP_OK = 0, LSAP_INFEASIBLE = -1 };

/* Scratch for one solve; one allocation. nr <= nc after transposition. */
typedef struct lsap {
    int64_t nr, nc;
    const double *cost; /* nr x nc */
    double *u, *v, *path_cost;
    int64_t *path, *col4row, *row4col, *remaining;
    unsigned char *row_seen, *col_seen;
} lsap;

/* Dijkstra-like search for the cheapest path from free row i to a free
 * column. Columns are scanned from the last to the first (scipy fills its
 * "remaining" list in reverse so a constant matrix yields the identity), and
 * among equal path costs an unassigned column wins, which ends the search. */
static int64_t augmenting_path(lsap *s, int64_t i, double *min_out)
{
    const int64_t nc = s->nc;
    double min_val = 0.0;
    int64_t n_rem = nc;
    for (int64_t it = 0; it < nc; it++) {
        s->remaining[it] = nc - it - 1;
        s->path_cost[it] = INFINITY;
    }
    memset(s->row_seen, 0, (size_t)s->nr);
    memset(s->col_seen, 0, (size_t)nc);

    int64_t sink = -1;
    while (sink == -1) {
        int64_t index = -1;
        double lowest = INFINITY;
        s->row_seen[i] = 1;
        for (int64_t it = 0; it < n_rem; it++) {
            int64_t j = s->remaining[it];
            /* Left-to-right evaluation, as in scipy: rounding must agree. */
            double r = min_val + s->cost[i * nc + j] - s->u[i] - s->v[j];
            if (r < s->path_cost[j]) {
                s->path[j] = i;
                s->path_cost[j] = r;
            }
            if (s->path_cost[j] < lowest || (s->path_cost[j] == lowest && s->row4col[j] == -1)) {
                lowest = s->path_cost[j];
                index = it;
            }
        }
        min_val = lowest;
        if (index < 0 || min_val == INFINITY)
            return -1;
        int64_t j = s->remaining[index];
        if (s->row4col[j] == -1)
            sink = j;
        else
            i = s->row4col[j];
        s->col_seen[j] = 1;
        s->remaining[index] = s->remaining[--n_rem];
    }
    *min_out = min_val;
    return sink;
}

static int lsap_run(lsap *s)
{
    for (int64_t j = 0; j < s->nc; j++)
        s->row4col[j] = -1;
    for (int64_t i = 0; i < s->nr; i++)
        s->col4row[i] = -1;

    for (int64_t cur = 0; cur < s->nr; cur++) {
        double min_val = 0.0;
        int64_t sink = augmenting_path(s, cur, &min_val);
        if (sink < 0)
            return LSAP_INFEASIBLE;

        s->u[cur] += min_val;
        for (int64_t i = 0; i < s->nr; i++) {
            if (s->row_seen[i] && i != cur)
                s->u[i] += min_val - s->path_cost[s->col4row[i]];
        }
        for (int64_t j = 0; j < s->nc; j++) {
            if (s->col_seen[j])
                s->v[j] -= min_val - s->path_cost[j];
        }

        int64_t j = sink;
        for (;;) {
            int64_t i = s->path[j];
            s->row4col[j] = i;
            int64_t prev = s->col4row[i];
            s->col4row[i] = j;
            j = prev;
            if (i == cur)
                break;
        }
    }
    return LSAP_OK;
}

static bool mul_ok(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a)
        return false;
    *out = a * b;
    return true;
}

/* Solve cost (n_rows x n_cols); tall matrices are transposed first, as scipy
 * does. When big > 0, +inf entries are replaced by big (used by the partial
 * solver). Writes min(n_rows, n_cols) pairs sorted by row, or returns
 * LSAP_INFEASIBLE through *code. */
static sleapc_status solve(const double *cost, int64_t n_rows, int64_t n_cols, double big,
                           sleapc_hungarian_ws *ws, int64_t *row_ind, int64_t *col_ind, int *code)
{
    *code = LSAP_OK;
    if (n_rows == 0 || n_cols == 0)
        return SLEAPC_OK;
    const bool transpose = n_cols < n_rows;
    const int64_t nr = transpose ? n_cols : n_rows;
    const int64_t nc = transpose ? n_rows : n_cols;

    /* Per column: v, path_cost, path, row4col, remaining, col_seen; per row:
     * u, col4row, row_seen. */
    size_t n_cells, bytes_cost, bytes_f, bytes_i, total;
    if (!mul_ok((size_t)nr, (size_t)nc, &n_cells) ||
        !mul_ok(n_cells, sizeof(double), &bytes_cost) ||
        !mul_ok((size_t)nc, 2 * sizeof(double) + 3 * sizeof(int64_t) + 1, &bytes_f) ||
        !mul_ok((size_t)nr, sizeof(double) + sizeof(int64_t) + 1, &bytes_i) ||
        bytes_f > SIZE_MAX - bytes_cost || bytes_i > SIZE_MAX - bytes_cost - bytes_f)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "solve assignment: %lld x %lld cost matrix: too large",
                            (long long)n_rows, (long long)n_cols);
    total = bytes_cost + bytes_f + bytes_i;

    if (total > ws->cap) {
        /* Doubling: a stream of slowly growing matrices settles quickly. */
        size_t want = ws->cap <= SIZE_MAX / 2 && 2 * ws->cap > total ? 2 * ws->cap : total;
        sleapc__free(ws->block);
        ws->block = sleapc__malloc(want);
        ws->cap = ws->block ? want : 0;
        if (!ws->block)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "solve assignment: out of memory");
    }
    /* Doubles first, then int64, then bytes: every member stays aligned. */
    unsigned char *block = ws->block;
    lsap s = {.nr = nr, .nc = nc};
    double *c = (double *)block;
    s.u = c + n_cells;
    s.v = s.u + nr;
    s.path_cost = s.v + nc;
    s.path = (int64_t *)(s.path_cost + nc);
    s.col4row = s.path + nc;
    s.row4col = s.col4row + nr;
    s.remaining = s.row4col + nc;
    s.row_seen = (unsigned char *)(s.remaining + nc);
    s.col_seen = s.row_seen + nr;

    for (int64_t i = 0; i < n_rows; i++) {
        for (int64_t j = 0; j < n_cols; j++) {
            double x = cost[i * n_cols + j];
            if (big > 0.0 && x == INFINITY)
                x = big;
            if (transpose)
                c[j * nc + i] = x;
            else
                c[i * nc + j] = x;
        }
    }
    for (int64_t i = 0; i < nr; i++)
        s.u[i] = 0.0;
    for (int64_t j = 0; j < nc; j++)
        s.v[j] = 0.0;
    s.cost = c;

    *code = lsap_run(&s);
    if (*code == LSAP_OK) {
        if (!transpose) {
            for (int64_t i = 0; i < nr; i++) {
                row_ind[i] = i;
                col_ind[i] = s.col4row[i];
            }
        } else {
            /* col4row of the transposed problem maps original columns to
             * original rows; list the pairs by ascending original row
             * (scipy argsorts col4row). Rows are distinct, so reuse row4col
             * (indexed by original row) as the inverse map. */
            for (int64_t r = 0; r < nc; r++)
                s.row4col[r] = -1;
            for (int64_t oc = 0; oc < nr; oc++)
                s.row4col[s.col4row[oc]] = oc;
            int64_t k = 0;
            for (int64_t r = 0; r < nc; r++) {
                if (s.row4col[r] >= 0) {
                    row_ind[k] = r;
                    col_ind[k] = s.row4col[r];
                    k++;
                }
            }
        }
    }
    return SLEAPC_OK;
}

void sleapc__hungarian_ws_free(sleapc_hungarian_ws *ws)
{
    if (!ws)
        return;
    sleapc__free(ws->block);
    ws->block = NULL;
    ws->cap = 0;
}

/* NaN and -inf are refused, as scipy refuses them. */
static sleapc_status check_entries(const double *cost, int64_t n_rows, int64_t n_cols,
                                   const void *row_ind, const void *col_ind)
{
    if (n_rows < 0 || n_cols < 0 || ((n_rows && n_cols) && (!cost || !row_ind || !col_ind)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "solve assignment: cost matrix and output buffers are required");
    for (int64_t i = 0; i < n_rows; i++) {
        for (int64_t j = 0; j < n_cols; j++) {
            double x = cost[i * n_cols + j];
            if (isnan(x) || x == -INFINITY)
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                    "solve assignment: cost[%lld][%lld]: invalid value %g",
                                    (long long)i, (long long)j, x);
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__hungarian_solve(const double *cost, int64_t n_rows, int64_t n_cols,
                                      int64_t *row_ind, int64_t *col_ind)
{
    sleapc_hungarian_ws ws = {0};
    sleapc_status st = sleapc__hungarian_solve_ws(cost, n_rows, n_cols, &ws, row_ind, col_ind);
    sleapc__hungarian_ws_free(&ws);
    return st;
}

sleapc_status sleapc__hungarian_solve_ws(const double *cost, int64_t n_rows, int64_t n_cols,
                                         sleapc_hungarian_ws *ws, int64_t *row_ind,
                                         int64_t *col_ind)
{
    if (!ws)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "solve assignment: workspace is required");
    sleapc_status st = check_entries(cost, n_rows, n_cols, row_ind, col_ind);
    if (st)
        return st;
    int code;
    st = solve(cost, n_rows, n_cols, 0.0, ws, row_ind, col_ind, &code);
    if (st)
        return st;
    if (code != LSAP_OK)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "solve assignment: %lld x %lld cost matrix: infeasible",
                            (long long)n_rows, (long long)n_cols);
    return SLEAPC_OK;
}

sleapc_status sleapc__hungarian_solve_partial(const double *cost, int64_t n_rows, int64_t n_cols,
                                              int64_t *row_ind, int64_t *col_ind, int64_t *n_pairs)
{
    sleapc_hungarian_ws ws = {0};
    sleapc_status st =
        sleapc__hungarian_solve_partial_ws(cost, n_rows, n_cols, &ws, row_ind, col_ind, n_pairs);
    sleapc__hungarian_ws_free(&ws);
    return st;
}

sleapc_status sleapc__hungarian_solve_partial_ws(const double *cost, int64_t n_rows,
                                                 int64_t n_cols, sleapc_hungarian_ws *ws,
                                                 int64_t *row_ind, int64_t *col_ind,
                                                 int64_t *n_pairs)
{
    if (!n_pairs || !ws)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "solve assignment: n_pairs and workspace are required");
    *n_pairs = 0;
    sleapc_status st = check_entries(cost, n_rows, n_cols, row_ind, col_ind);
    if (st)
        return st;
    int code;
    st = solve(cost, n_rows, n_cols, 0.0, ws, row_ind, col_ind, &code);
    if (st)
        return st;
    const int64_t k = n_rows < n_cols ? n_rows : n_cols;
    if (code == LSAP_OK) {
        *n_pairs = k;
        return SLEAPC_OK;
    }

    /* Infeasible: price every forbidden pair above any mix of allowed ones,
     * so the solver first maximises the number of allowed pairs. */
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n_rows * n_cols; i++) {
        if (cost[i] != INFINITY) {
            lo = cost[i] < lo ? cost[i] : lo;
            hi = cost[i] > hi ? cost[i] : hi;
        }
    }
    if (lo == INFINITY)
        return SLEAPC_OK; /* nothing is allowed */
    const double big = fabs(hi) + (hi - lo + 1.0) * (double)(k + 1) + 1.0;
    st = solve(cost, n_rows, n_cols, big, ws, row_ind, col_ind, &code);
    if (st)
        return st;
    if (code != LSAP_OK) /* every entry is finite now; cannot happen */
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "solve assignment: no assignment found");
    int64_t n = 0;
    for (int64_t p = 0; p < k; p++) {
        if (cost[row_ind[p] * n_cols + col_ind[p]] != INFINITY) {
            row_ind[n] = row_ind[p];
            col_ind[n] = col_ind[p];
            n++;
        }
    }
    *n_pairs = n;
    return SLEAPC_OK;
}
