/* The "auto" backend: it serves shapes too small to measure with the
 * best-scoring backend, measures the candidates on the first real shape,
 * keeps one, says which, and then behaves exactly like that backend. What it
 * measured is cached: a second backend for the same graph and shape runs the
 * cached choice without timing anything (the cache file is not even
 * rewritten); a corrupt or foreign cache file is ignored; concurrent writers
 * leave a valid file; within a run too short to repay it, nothing is timed. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/auto_cache.h"
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

static void build_graph(test_graph *t)
{
    memset(t, 0, sizeof *t);
    test_fill_weights(t->w0, C1 * 9, 1, 0.2f);
    test_fill_weights(t->b0, C1, 2, 0.2f);
    test_fill_weights(t->w1, C1 * C1 * 9, 3, 0.2f);
    test_fill_weights(t->b1, C1, 4, 0.2f);
    test_fill_weights(t->w2, 2 * C1, 5, 0.2f);
    test_fill_weights(t->b2, 2, 6, 0.2f);
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
static int n_measured, n_cached, n_unmeasured;

static void capture_log(sleapc_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level != SLEAPC_LOG_INFO || !strstr(msg, "backend auto: chose "))
        return;
    snprintf(last_info, sizeof last_info, "%s", msg);
    n_measured += strstr(msg, "(measured in ") != NULL;
    n_cached += strstr(msg, "(cached: ") != NULL;
    n_unmeasured += strstr(msg, "(not measured: ") != NULL;
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

static char cache_dir[1024];

/* The one cache file (auto-*.txt) in cache_dir, into path; how many there are. */
static int cache_files(char *path, size_t cap)
{
    char *names[16];
    int n = test_list_dir(cache_dir, names, 16), found = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(names[i], "auto-", 5) == 0 && strstr(names[i], ".txt") &&
            !strstr(names[i], ".tmp")) {
            snprintf(path, cap, "%s/%s", cache_dir, names[i]);
            found++;
        } else {
            fprintf(stderr, "unexpected file in the cache folder: %s\n", names[i]);
            found += 100;
        }
        free(names[i]);
    }
    return found;
}

static void clear_cache(void)
{
    char path[2048];
    while (cache_files(path, sizeof path) == 1)
        unlink(path);
}

static struct timespec mtime_of(const char *path)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    stat(path, &st);
    return st.st_mtim;
}

/* Concurrent writers of one key, a reader meanwhile: the reader finds either
 * no file yet or a whole entry of one writer, and a valid file stays. Run
 * before any backend starts threads (fork). */
static void check_concurrent_writers(void)
{
    const char *key = "test key: concurrent writers";
    enum { WRITERS = 4, ROUNDS = 60 };
    pid_t pid[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pid[w] = fork();
        if (pid[w] == 0) {
            sleapc_auto_entry e = {0};
            char name[16];
            snprintf(name, sizeof name, "writer%d", w);
            snprintf(e.chosen, sizeof e.chosen, "%s", name);
            sleapc__auto_entry_set(&e, name, 10.0 + w);
            sleapc__auto_entry_set(&e, "other", 99.0);
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++)
                bad += sleapc__auto_cache_store(key, &e) != SLEAPC_OK;
            _exit(bad ? 1 : 0);
        }
    }
    int torn = 0, seen = 0;
    for (int r = 0; r < 4 * ROUNDS; r++) {
        sleapc_auto_entry e;
        if (!sleapc__auto_cache_load(key, &e))
            continue;
        seen++;
        double ms;
        int w = e.chosen[6] - '0';
        if (strncmp(e.chosen, "writer", 6) != 0 || w < 0 || w >= WRITERS ||
            !sleapc__auto_entry_get(&e, e.chosen, &ms) || ms != 10.0 + w || e.n != 2)
            torn++;
    }
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        CHECK(pid[w] > 0 && waitpid(pid[w], &status, 0) == pid[w]);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed to store", w);
    }
    CHECK_MSG(torn == 0, "%d of %d reads saw a torn entry", torn, seen);
    sleapc_auto_entry e;
    CHECK_MSG(sleapc__auto_cache_load(key, &e) && strncmp(e.chosen, "writer", 6) == 0,
              "no valid entry after concurrent writers");
    char path[2048];
    CHECK_MSG(cache_files(path, sizeof path) == 1, "the writers left temporary files");
    clear_cache();
}

int main(void)
{
    /* The suite pins "auto" to one backend for reproducible files, and keeps
     * the cache off; this test is about the measuring and the cache. */
    test_setenv("SLEAPC_BACKEND", NULL);
    test_setenv("SLEAPC_NO_CACHE", NULL);
    test_setenv("SLEAPC_AUTO_MEASURE", NULL);
    /* A folder that does not exist yet, two levels down: it is made. */
    snprintf(cache_dir, sizeof cache_dir, "%s/cache/sleapc", test_tmp_dir());
    test_setenv("SLEAPC_CACHE_DIR", cache_dir);
    check_concurrent_writers();

    sleapc_log_set(capture_log, NULL);
    test_graph t;
    build_graph(&t);
    const char *names[16];
    int n_cand = candidates(names);
    CHECK(n_cand >= 1);
    const int multi = n_cand > 1;

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
    CHECK(n_measured + n_cached + n_unmeasured == 0 &&
          strcmp(sleapc__backend_name(be), names[0]) == 0);

    /* A bad input of a measurable size is refused as such, measuring nothing. */
    sleapc_tensor bad = x;
    bad.shape[1] = 2;
    CHECK(sleapc__backend_forward(be, &bad, &out) == SLEAPC_ERR_INVALID_ARG);
    CHECK(n_measured == 0);

    /* The real shape's warmup (outside a run: no budget) measures every
     * candidate, says so once, keeps one of them and caches what it found. */
    CHECK_OK(sleapc__backend_warmup(be, x.shape));
    CHECK(n_measured == multi);
    const char *chosen = sleapc__backend_name(be);
    bool known = false;
    for (int i = 0; i < n_cand; i++)
        known |= strcmp(chosen, names[i]) == 0;
    CHECK_MSG(known, "chose \"%s\"", chosen);
    char path[2048] = "";
    if (multi) {
        char want[64];
        snprintf(want, sizeof want, "chose %s (measured in ", chosen);
        CHECK_MSG(strstr(last_info, want) && strstr(last_info, "per batch of 2 at 1x96x96") &&
                      strstr(last_info, "cached in ") && strstr(last_info, cache_dir),
                  "info line: %s", last_info);
        for (int i = 0; i < n_cand; i++)
            CHECK_MSG(strstr(last_info, names[i]), "%s not timed: %s", names[i], last_info);
        CHECK_MSG(cache_files(path, sizeof path) == 1, "no cache file in %s", cache_dir);
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
    CHECK(n_measured == multi && strcmp(sleapc__backend_name(be), chosen) == 0);
    CHECK_OK(sleapc__backend_set_n_threads(be, 1));
    sleapc__backend_destroy(be);
    if (!multi) {
        /* One candidate is the backend itself: nothing to measure or cache. */
        CHECK(cache_files(path, sizeof path) == 0);
        free(px);
        sleapc__graph_clear(&t.g);
        sleapc_log_set(NULL, NULL);
        return test_finish();
    }

    /* A second backend for the same graph and shape (as the next run makes):
     * its first forward takes the cached choice, times nothing and leaves
     * the cache file as it was. */
    struct timespec m0 = mtime_of(path);
    CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK_MSG(n_measured == 1 && n_cached == 1, "measured %d, cached %d: %s", n_measured,
              n_cached, last_info);
    CHECK(strcmp(sleapc__backend_name(be), chosen) == 0);
    check_same_as_chosen(&t, be, &x, head_of(&out));
    struct timespec m1 = mtime_of(path);
    CHECK_MSG(m0.tv_sec == m1.tv_sec && m0.tv_nsec == m1.tv_nsec, "cache file rewritten");
    sleapc__backend_destroy(be);

    /* A corrupt cache file is ignored: measured again, replaced by a valid
     * one, which the next backend uses. Likewise a file of another key. */
    static const char *const junk[] = {
        "garbage\n\x01\x02",
        "sleapc auto backend cache 1\nkey another model\nchosen native\ntime native 1\nend\n",
        "sleapc auto backend cache 1\n",
    };
    for (int j = 0; j < 3; j++) {
        CHECK(test_write_file(path, junk[j], strlen(junk[j])));
        int before = n_measured;
        CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        CHECK_MSG(n_measured == before + 1, "junk %d: %s", j, last_info);
        check_same_as_chosen(&t, be, &x, head_of(&out));
        sleapc__backend_destroy(be);
        before = n_cached;
        CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
        CHECK_OK(sleapc__backend_forward(be, &x, &out));
        CHECK_MSG(n_cached == before + 1, "junk %d, then: %s", j, last_info);
        sleapc__backend_destroy(be);
    }

    /* A run too short to repay the timing (8 samples, 3 batches after the
     * first) times nothing and caches nothing; the same backend's next, long
     * run measures. */
    clear_cache();
    int before = n_measured;
    CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
    sleapc__backend_run_begin(8);
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    sleapc__backend_run_end();
    CHECK_MSG(n_unmeasured == 1 && n_measured == before && strstr(last_info, "too short"),
              "short run: %s", last_info);
    CHECK(strcmp(sleapc__backend_name(be), names[0]) == 0 && cache_files(path, sizeof path) == 0);
    check_same_as_chosen(&t, be, &x, head_of(&out));
    sleapc__backend_run_begin(1000000);
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    sleapc__backend_run_end();
    CHECK_MSG(n_measured == before + 1, "long run: %s", last_info);
    CHECK(cache_files(path, sizeof path) == 1);
    check_same_as_chosen(&t, be, &x, head_of(&out));
    sleapc__backend_destroy(be);

    /* SLEAPC_AUTO_MEASURE=off times nothing; SLEAPC_NO_CACHE=1 neither reads
     * nor writes the cache; a cache that cannot be written is said, not
     * fatal. */
    clear_cache();
    test_setenv("SLEAPC_AUTO_MEASURE", "off");
    CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK_MSG(n_unmeasured == 2 && strstr(last_info, "SLEAPC_AUTO_MEASURE=off"), "off: %s",
              last_info);
    sleapc__backend_destroy(be);
    test_setenv("SLEAPC_AUTO_MEASURE", NULL);
    test_setenv("SLEAPC_NO_CACHE", "1");
    before = n_measured;
    CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK_MSG(n_measured == before + 1 && strstr(last_info, "not cached: "), "no cache: %s",
              last_info);
    CHECK(cache_files(path, sizeof path) == 0);
    sleapc__backend_destroy(be);
    test_setenv("SLEAPC_NO_CACHE", NULL);
    test_setenv("SLEAPC_CACHE_DIR", "/dev/null/sleapc");
    CHECK_OK(sleapc__backend_create("auto", &t.g, &opts, &be));
    CHECK_OK(sleapc__backend_forward(be, &x, &out));
    CHECK_MSG(strstr(last_info, "not cached: ") && strstr(last_info, "/dev/null"),
              "unwritable: %s", last_info);
    sleapc__backend_destroy(be);

    free(px);
    sleapc__graph_clear(&t.g);
    sleapc_log_set(NULL, NULL);
    return test_finish();
}
