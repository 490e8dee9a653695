/* Edge visiting order for grouping: sleap-nn's toposort_edges, which takes
 * the first root of networkx's topological sort and then the tree edges of
 * networkx's breadth-first walk from it. */
#include "layers/ops/grouping.h"

#include "core/alloc.h"
#include "core/error.h"

sleapc_status sleapc__grouping_edge_order(const int (*edges)[2], int n_edges, int n_nodes,
                                          int *order, int *n_order)
{
    if (!n_order || n_edges < 0 || n_nodes < 0 || (n_edges && (!edges || !order)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "order skeleton edges: bad arguments");
    *n_order = 0;
    for (int k = 0; k < n_edges; k++) {
        for (int e = 0; e < 2; e++) {
            if (edges[k][e] < 0 || edges[k][e] >= n_nodes)
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                    "order skeleton edges: edge %d: node %d not in [0, %d)", k,
                                    edges[k][e], n_nodes);
        }
    }
    if (n_edges == 0)
        return SLEAPC_OK;

    int *indeg = sleapc__calloc((size_t)n_nodes * 3, sizeof(int));
    if (!indeg)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "order skeleton edges: out of memory");
    int *seen = indeg + n_nodes;
    int *queue = seen + n_nodes;

    /* networkx.DiGraph(edges): duplicate edges collapse onto the first. */
    for (int k = 0; k < n_edges; k++) {
        bool dup = false;
        for (int q = 0; q < k && !dup; q++)
            dup = edges[q][0] == edges[k][0] && edges[q][1] == edges[k][1];
        if (!dup)
            indeg[edges[k][1]]++;
    }
    /* next(topological_sort(G)): first node, in node insertion order (first
     * appearance, source before destination), with no incoming edge. */
    int root = -1;
    for (int k = 0; k < n_edges && root < 0; k++) {
        for (int e = 0; e < 2 && root < 0; e++) {
            if (indeg[edges[k][e]] == 0)
                root = edges[k][e];
        }
    }
    if (root < 0) {
        sleapc__free(indeg);
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "order skeleton edges: every node has an incoming edge "
                            "(the skeleton graph has no root)");
    }

    /* bfs_edges(G, root): successors in edge insertion order. */
    int head = 0, tail = 0, n = 0;
    queue[tail++] = root;
    seen[root] = 1;
    while (head < tail) {
        int u = queue[head++];
        for (int k = 0; k < n_edges; k++) {
            if (edges[k][0] != u)
                continue;
            int v = edges[k][1];
            if (seen[v])
                continue; /* also skips later duplicates of a tree edge */
            seen[v] = 1;
            queue[tail++] = v;
            order[n++] = k; /* edges.index(edge): k is the first (u, v) */
        }
    }
    *n_order = n;
    sleapc__free(indeg);
    return SLEAPC_OK;
}
