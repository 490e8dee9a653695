/* Thread pool: every task index runs exactly once, on a valid thread index,
 * for any task count and pool size; NULL pools run serially; bad arguments
 * and failed allocations are reported without leaks. */
#include <stdatomic.h>
#include <string.h>

#include "core/alloc.h"
#include "core/threadpool.h"
#include "test_util.h"

#define MAX_TASKS 1000

typedef struct visit_ctx {
    atomic_int count[MAX_TASKS];
    atomic_int bad_thread;
    int n_threads;
} visit_ctx;

static void visit(void *p, int64_t task)
{
    visit_ctx *c = p;
    atomic_fetch_add(&c->count[task], 1);
}

static void visit_indexed(void *p, int64_t task, int thread)
{
    visit_ctx *c = p;
    if (thread < 0 || thread >= c->n_threads)
        atomic_fetch_add(&c->bad_thread, 1);
    atomic_fetch_add(&c->count[task], 1);
}

static visit_ctx ctx;

/* Runs n tasks and returns how many indices were not visited exactly once. */
static int run_and_count(sleapc_threadpool *tp, int64_t n, bool indexed)
{
    for (int i = 0; i < MAX_TASKS; i++)
        atomic_store(&ctx.count[i], 0);
    atomic_store(&ctx.bad_thread, 0);
    ctx.n_threads = sleapc__threadpool_n_threads(tp);
    if (indexed)
        sleapc__threadpool_run_indexed(tp, visit_indexed, &ctx, n);
    else
        sleapc__threadpool_run(tp, visit, &ctx, n);
    int wrong = 0;
    for (int64_t i = 0; i < MAX_TASKS; i++)
        wrong += atomic_load(&ctx.count[i]) != (i < n ? 1 : 0);
    return wrong + atomic_load(&ctx.bad_thread);
}

static void test_every_index_once(void)
{
    for (int nt = 0; nt <= 4; nt++) {
        sleapc_threadpool *tp = NULL;
        if (nt > 0)
            CHECK_OK(sleapc__threadpool_create(nt, &tp));
        CHECK(sleapc__threadpool_n_threads(tp) == (nt > 0 ? nt : 1));
        int bad_runs = 0;
        /* Every count 0..1000, alternating both entry points; the pool is
         * reused, so this also exercises many wake/finish generations. */
        for (int64_t n = 0; n <= MAX_TASKS; n++)
            bad_runs += run_and_count(tp, n, n % 2 == 1) != 0;
        CHECK_MSG(bad_runs == 0, "%d threads: %d runs visited an index not exactly once", nt,
                  bad_runs);
        sleapc__threadpool_destroy(tp);
    }
}

static void test_create_args(void)
{
    sleapc__threadpool_destroy(NULL);
    CHECK(sleapc__cpu_count() >= 1);

    sleapc_threadpool *tp = NULL;
    CHECK_OK(sleapc__threadpool_create(0, &tp));
    CHECK(sleapc__threadpool_n_threads(tp) == sleapc__cpu_count());
    CHECK(run_and_count(tp, 37, true) == 0);
    sleapc__threadpool_destroy(tp);

    tp = (sleapc_threadpool *)&ctx;
    CHECK(sleapc__threadpool_create(SLEAPC_THREADPOOL_MAX_THREADS + 1, &tp) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(tp == NULL);
    CHECK(strstr(sleapc_last_error(), "create thread pool") != NULL);
    CHECK(sleapc__threadpool_create(2, NULL) == SLEAPC_ERR_INVALID_ARG);
}

/* Each allocation of create fails in turn: NOMEM, NULL out, nothing leaked
 * (the sanitizer build checks leaks). */
static void test_alloc_failure(void)
{
    for (int k = 1; k <= 2; k++) {
        sleapc_threadpool *tp = (sleapc_threadpool *)&ctx;
        sleapc__alloc_fail_after(k);
        sleapc_status st = sleapc__threadpool_create(3, &tp);
        sleapc__alloc_fail_after(0);
        CHECK_MSG(st == SLEAPC_ERR_NOMEM, "allocation %d failing: status %d", k, (int)st);
        CHECK(tp == NULL);
    }
}

int main(void)
{
    test_every_index_once();
    test_create_args();
    test_alloc_failure();
    return test_finish();
}
