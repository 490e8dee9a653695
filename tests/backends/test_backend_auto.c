/* The "auto" backend: it serves shapes too small to measure with the
 * best-scoring backend, measures the candidates on the first real shape,
 * keeps one, says which, and then behaves exactly like that backend. */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "test_util.h"

/* Two 3x3 convs (1 -> 32 -> 32 channels) and a 1x1 head: ~0.17 GFLOP per
 * 96x96 frame, above what auto needs to measure; a 16x16 frame is far below. */
enum { C1 = 32, H = 96, W = 96 };

typedef struct test_graph {
    sleapc_graph g;
    float w0[C1 * 9], b0[C1], w1[C1 * C1 * 9], b1[C1], w2[2 * C1], b2[2];
} test_graph;

static void fill(float *p, int n, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = ((float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f) * 0.2f;
    }
}

static void build_graph(test_graph *t)
{
    memset(t, 0, sizeof *t);
    fill(t->w0, C1 * 9, 1);
    fill(t->b0, C1, 2);
    fill(t->w1, C1 * C1 * 9, 3);
    fill(t->b1, C1, 4);
    fill(t->w2, 2 * C1, 5);
    fill(t->b2, 2, 6);
    sleapc_graph *g = &t->g;
    g->in_channels = 1;
    g->max_stride = 1;
    int in, c0, c1, head;
    sleapc_node n_in = {.op = SLEAPC_OP_INPUT, .name = "input"};
    CHECK_OK(sleapc__graph_add(g, &n_in, &in));
    sleapc_node n0 = {.op = SLEAPC_OP_CONV2D, .name = "conv0", .n_inputs = 1, .inputs = {in},
                      .c_in = 1, .c_out = C1, .kernel = 3, .act = SLEAPC_ACT_RELU,
                      .weight = t->w0, .bias = t->b0};
    CHECK_OK(sleapc__graph_add(g, &n0, &c0));
    sleapc_node n1 = {.op = SLEAPC_OP_CONV2D, .name = "conv1", .n_inputs = 1, .inputs = {c0},
                      .c_in = C1, .c_out = C1, .kernel = 3, .act = SLEAPC_ACT_RELU,
                      .weight = t->w1, .bias = t->b1};
    CHECK_OK(sleapc__graph_add(g, &n1, &c1));
    sleapc_node nh = {.op = SLEAPC_OP_CONV2D, .name = "head", .n_inputs = 1, .inputs = {c1},
                      .c_in = C1, .c_out = 2, .kernel = 1, .weight = t->w2, .bias = t->b2};
    CHECK_OK(sleapc__graph_add(g, &nh, &head));
    CHECK_OK(sleapc__graph_add_output(g, "TestMapHead", head, 1));
}

static char last_info[1024];
static int n_choices;

static void capture_log(sleapc_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level == SLEAPC_LOG_INFO && strstr(msg, "backend auto: chose ")) {
        snprintf(last_info, sizeof last_info, "%s", msg);
        n_choices++;
    }
}

/* The backends "auto" may pick from; the first scores best. */
static int candidates(const char **names)
{
    int n = 0;
    bool used[16] = {0};
    for (;;) {
        int best = -1, best_score = 0;
        for (int i = 0; i < sleapc__backend_count() && i < 16; i++) {
            int s = used[i] ? 0 : sleapc__backend_factory(i)->score();
            if (s > best_score) {
                best = i;
                best_score = s;
            }
        }
        if (best < 0)
            return n;
        used[best] = true;
        names[n++] = sleapc__backend_factory(best)->name;
    }
}

static const float *head_of(const sleapc_tensor_map *out)
{
    const sleapc_tensor *t = sleapc__tensor_map_get(out, "TestMapHead");
    CHECK(t && t->ndim == 4 && t->shape[1] == 2);
    return t ? t->data : NULL;
}

/* After choosing, auto's outputs are the chosen backend's own, bit for bit
 * (same kernels, same threads, same input). */
static void check_same_as_chosen(const test_graph *t, sleapc_backend *be, const sleapc_tensor *x,
                                 const float *got)
{
    sleapc_backend *ref = NULL;
    sleapc_backend_opts opts = {.n_threads = 2};
    CHECK_OK(sleapc__backend_create(sleapc__backend_name(be), &t->g, &opts, &ref));
    sleapc_tensor_map out = {0};
    CHECK_OK(sleapc__backend_forward(ref, x, &out));
    const float *want = head_of(&out);
    size_t n = (size_t)x->shape[0] * 2 * H * W;
    CHECK_MSG(want && got && memcmp(want, got, n * sizeof(float)) == 0,
              "auto (%s) differs from the backend itself", sleapc__backend_name(be));
    sleapc__backend_destroy(ref);
}

int main(void)
{
    /* The suite pins "auto" to one backend for reproducible files; this
     * test is about the measuring itself. */
    unsetenv("SLEAPC_BACKEND");
    sleapc_log_set(capture_log, NULL);
    test_graph t;
    build_graph(&t);
    const char *names[16];
    int n_cand = candidates(names);
    CHECK(n_cand >= 1);

    enum { B = 2 };
    uint8_t *px = malloc(B * H * W);
    for (int i = 0; i < B * H * W; i++)
        px[i] = (uint8_t)(i * 2654435761u >> 24);
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {B, 1, H, W}, .data = px};
    sleapc_backend_opts opts = {.n_threads = 2};
    sleapc_tensor_map out = {0};

    /* Created, warmed up and run on a tiny shape: nothing measured yet, the
     * best-scoring backend serves. */
    sleapc_backend *be = NULL;
    CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
    CHECK(be && strcmp(sleapc__backend_name(be), names[0]) == 0);
    int64_t tiny[4] = {1, 1, 16, 16};
    CHECK_OK(sleapc__backend_warmup(be, tiny));
    sleapc_tensor xt = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {1, 1, 16, 16}, .data = px};
    CHECK_OK(sleapc__backend_forward(be, &xt, &out));
    CHECK(n_choices == 0 && strcmp(sleapc__backend_name(be), names[0]) == 0);

    /* A bad input of a measurable size is refused as such, measuring nothing. */
    sleapc_tensor bad = x;
    bad.shape[1] = 2;
    CHECK(sleapc__backend_forward(be, &bad, &out) == SLEAPC_ERR_INVALID_ARG);
    CHECK(n_choices == 0);

    /* The real shape's warmup measures, says so once, and keeps one of them. */
    CHECK_OK(sleapc__backend_warmup(be, x.shape));
    CHECK(n_choices == (n_cand > 1 ? 1 : 0));
    const char *chosen = sleapc__backend_name(be);
    bool known = false;
    for (int i = 0; i < n_cand; i++)
        known |= strcmp(chosen, names[i]) == 0;
    CHECK_MSG(known, "chose \"%s\"", chosen);
    if (n_cand > 1) {
        char want[64];
        snprintf(want, sizeof want, "chose %s (", chosen);
        CHECK_MSG(strstr(last_info, want) && strstr(last_info, "per batch of 2 at 1x96x96"),
                  "info line: %s", last_info);
    }

    /* From then on: a forward of the warmed shape allocates nothing, gives
     * the chosen backend's outputs, and another shape keeps the choice. */
    int64_t allocs = sleapc__alloc_count();
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK_MSG(sleapc__alloc_count() == allocs, "forward allocated %lld times",
              (long long)(sleapc__alloc_count() - allocs));
    check_same_as_chosen(&t, be, &x, head_of(&out));
    sleapc_tensor x1 = x;
    x1.shape[0] = 1;
    CHECK_OK(sleapc__backend_forward(be, &x1, &out));
    CHECK(n_choices == (n_cand > 1 ? 1 : 0) && strcmp(sleapc__backend_name(be), chosen) == 0);
    CHECK_OK(sleapc__backend_set_n_threads(be, 1));
    sleapc__backend_destroy(be);

    /* Without a warmup, the first forward of a real shape measures. */
    n_choices = 0;
    CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK(n_choices == (n_cand > 1 ? 1 : 0));
    check_same_as_chosen(&t, be, &x, head_of(&out));
    sleapc__backend_destroy(be);

    free(px);
    sleapc__graph_clear(&t.g);
    sleapc_log_set(NULL, NULL);
    return test_finish();
}
