/* The memory planner (model/graph_plan.h) on small hand-built graphs: no two
 * values live at one step overlap, offsets keep the alignment, an identity
 * resize shares its input's storage, a concat read in parts has none and
 * keeps its parts alive, the arena equals the liveness bound here (counted
 * again by brute force), and the memory check's number is the plan's. */
#include <string.h>

#include "model/graph_plan.h"
#include "test_util.h"

typedef struct net {
    sleapc_graph g;
    int in, c0, pool, c1, up, rs, cat, head, gp, vec;
} net;

static int add(sleapc_graph *g, sleapc_node n)
{
    int i = -1;
    CHECK_OK(sleapc__graph_add(g, &n, &i));
    return i;
}

/* A two-level UNet with a vector head: skip, upsample, identity resize,
 * concat, a map output and a vector output. */
static void build(net *t)
{
    sleapc_graph *g = &t->g;
    memset(t, 0, sizeof *t);
    g->in_channels = 1;
    g->max_stride = 2;
    t->in = add(g, (sleapc_node){.op = SLEAPC_OP_INPUT, .name = "input", .c_out = 1});
    t->c0 = add(g, (sleapc_node){.op = SLEAPC_OP_CONV2D,
                                 .name = "c0",
                                 .n_inputs = 1,
                                 .inputs = {t->in},
                                 .c_in = 1,
                                 .c_out = 8,
                                 .kernel = 3});
    t->pool = add(
        g,
        (sleapc_node){.op = SLEAPC_OP_MAXPOOL2D, .name = "pool", .n_inputs = 1, .inputs = {t->c0}});
    t->c1 = add(g, (sleapc_node){.op = SLEAPC_OP_CONV2D,
                                 .name = "c1",
                                 .n_inputs = 1,
                                 .inputs = {t->pool},
                                 .c_in = 8,
                                 .c_out = 16,
                                 .kernel = 3});
    t->up = add(g, (sleapc_node){
                       .op = SLEAPC_OP_UPSAMPLE2X, .name = "up", .n_inputs = 1, .inputs = {t->c1}});
    t->rs = add(
        g, (sleapc_node){
               .op = SLEAPC_OP_RESIZE_LIKE, .name = "rs", .n_inputs = 2, .inputs = {t->up, t->c0}});
    t->cat =
        add(g, (sleapc_node){
                   .op = SLEAPC_OP_CONCAT, .name = "cat", .n_inputs = 2, .inputs = {t->c0, t->rs}});
    t->head = add(g, (sleapc_node){.op = SLEAPC_OP_CONV2D,
                                   .name = "head",
                                   .n_inputs = 1,
                                   .inputs = {t->cat},
                                   .c_in = 24,
                                   .c_out = 4,
                                   .kernel = 1});
    t->gp =
        add(g, (sleapc_node){
                   .op = SLEAPC_OP_GLOBAL_MAXPOOL, .name = "gp", .n_inputs = 1, .inputs = {t->c1}});
    t->vec = add(g, (sleapc_node){.op = SLEAPC_OP_LINEAR,
                                  .name = "vec",
                                  .n_inputs = 1,
                                  .inputs = {t->gp},
                                  .c_in = 16,
                                  .c_out = 3});
    CHECK_OK(sleapc__graph_add_output(g, "MapHead", t->head, 1));
    CHECK_OK(sleapc__graph_add_output(g, "VecHead", t->vec, 0));
}

static int64_t node_bytes(const sleapc_graph_plan *p, int i, size_t elem)
{
    const int64_t *s = p->shapes[i];
    return (s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1]) * (int64_t)elem;
}

static int64_t up_to(int64_t x, int64_t a)
{
    return (x + a - 1) / a * a;
}

/* Every storage inside the arena and aligned; any two live at one step
 * apart; the liveness bound as the most bytes live at any step. */
static void check_plan(const sleapc_graph *g, const sleapc_graph_plan *p, const sleapc_plan_opts *o)
{
    int n = g->n_nodes;
    for (int i = 0; i < n; i++) {
        if (p->home[i] < 0) {
            CHECK(p->offset[i] == -1);
            continue;
        }
        CHECK(p->offset[i] == p->offset[p->home[i]]);
        CHECK(p->offset[i] % o->align == 0);
        CHECK(p->offset[i] + node_bytes(p, i, o->elem) <= p->arena);
        /* A step's own inputs are live while it writes. */
        for (int k = 0; k < g->nodes[i].n_inputs; k++) {
            int h = p->home[g->nodes[i].inputs[k]];
            CHECK(h < 0 || p->last[h] >= i);
        }
    }
    for (int o_ = 0; o_ < g->n_outputs; o_++)
        CHECK(p->last[p->home[g->outputs[o_].node]] == n);
    int64_t bound = 0;
    for (int t = 0; t <= n; t++) {
        int64_t live = 0;
        for (int a = 0; a < n; a++) {
            if (p->home[a] != a || a > t || p->last[a] < t)
                continue;
            live += up_to(node_bytes(p, a, o->elem), o->align);
            for (int b = a + 1; b < n; b++) {
                if (p->home[b] != b || b > t || p->last[b] < t)
                    continue;
                int64_t ea = p->offset[a] + node_bytes(p, a, o->elem);
                int64_t eb = p->offset[b] + node_bytes(p, b, o->elem);
                CHECK_MSG(ea <= p->offset[b] || eb <= p->offset[a],
                          "step %d: %s [%lld, %lld) and %s [%lld, %lld) overlap", t,
                          g->nodes[a].name, (long long)p->offset[a], (long long)ea,
                          g->nodes[b].name, (long long)p->offset[b], (long long)eb);
            }
        }
        if (live > bound)
            bound = live;
    }
    CHECK_MSG(bound == p->live_bound, "bound %lld, plan says %lld", (long long)bound,
              (long long)p->live_bound);
    CHECK_MSG(p->arena >= p->live_bound, "arena %lld below the bound %lld", (long long)p->arena,
              (long long)p->live_bound);
}

static void check_default(net *t)
{
    sleapc_plan_opts o = {.elem = 4, .align = 64};
    sleapc_graph_plan p;
    CHECK_OK(sleapc__graph_plan(&t->g, 2, 16, 16, &o, &p));
    check_plan(&t->g, &p, &o);
    CHECK(p.home[t->rs] == t->up); /* identity resize: in place */
    CHECK(p.home[t->up] == t->up && p.home[t->cat] == t->cat);
    CHECK_MSG(p.arena == p.live_bound, "arena %lld, bound %lld", (long long)p.arena,
              (long long)p.live_bound);
    CHECK(sleapc__graph_peak_bytes(&t->g, 2, 16, 16) == p.arena);
    sleapc__graph_plan_free(&p);
    CHECK(sleapc__graph_peak_bytes(&t->g, 2, 1, 16) == -1); /* too small to pool */
}

/* The native backend's kinds: the concat read in parts by the head, and an
 * odd alignment (fp16, a device's 256 bytes). */
static void check_parts(net *t)
{
    sleapc_plan_kind kind[16] = {0};
    kind[t->rs] = SLEAPC_PLAN_ALIAS;
    kind[t->cat] = SLEAPC_PLAN_PARTS;
    sleapc_plan_opts o = {.elem = 2, .align = 256, .kind = kind};
    sleapc_graph_plan p;
    CHECK_OK(sleapc__graph_plan(&t->g, 1, 18, 22, &o, &p));
    check_plan(&t->g, &p, &o);
    CHECK(p.home[t->cat] == -1 && p.offset[t->cat] == -1);
    CHECK(p.last[t->c0] == t->head && p.last[t->up] == t->head);
    CHECK(p.arena == p.live_bound);
    sleapc__graph_plan_free(&p);
}

/* The packing alone: three overlapping values and one after them that fits
 * in the gap the first leaves. */
static void check_pack(void)
{
    int64_t bytes[5] = {100, 300, 64, 0, 200};
    int first[5] = {0, 1, 2, 3, 4};
    int last[5] = {1, 4, 2, 3, 5};
    int64_t off[5], arena = 0;
    CHECK_OK(sleapc__plan_pack(5, bytes, first, last, 64, off, &arena));
    CHECK(off[3] == -1);
    /* Value 1 (320 B) is live throughout; 0 and 2, then 4, share the rest. */
    CHECK_MSG(arena == 320 + 256, "arena %lld", (long long)arena);
    CHECK(off[0] % 64 == 0 && off[2] % 64 == 0 && off[4] % 64 == 0);
    CHECK(off[1] + 320 <= off[4] || off[4] + 256 <= off[1]);
}

int main(void)
{
    net t;
    build(&t);
    check_default(&t);
    check_parts(&t);
    check_pack();
    sleapc__graph_clear(&t.g);
    return test_finish();
}
