/* Thread pool: every task index runs exactly once, on a valid thread index,
 * for any task count and pool size; NULL pools run serially; bad arguments
 * and failed allocations are reported without leaks; the pool's CPU clock
 * counts what its tasks ran. */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

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

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Each task spins for SPIN_S of its own thread's CPU time and adds what it
 * measured, in nanoseconds. */
#define SPIN_S 0.004
static atomic_llong spun_ns;

static void spin_task(void *p, int64_t task)
{
    (void)p;
    (void)task;
    double t0 = thread_cpu_s(), t;
    while ((t = thread_cpu_s()) - t0 < SPIN_S) {
    }
    atomic_fetch_add(&spun_ns, (long long)((t - t0) * 1e9));
}

/* sleapc__threadpool_times reads every thread's own clock: its CPU time
 * grows by at least what the tasks measured on theirs, at once (the process
 * clock lags by up to a scheduler tick per other thread), and by not much
 * more (the polls between runs); the run delay never goes back. */
static void test_times(void)
{
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        sleapc_threadpool *tp = NULL;
        CHECK_OK(sleapc__threadpool_create(n_threads, &tp));
        sleapc__threadpool_run(tp, spin_task, NULL, n_threads); /* workers started */
        atomic_store(&spun_ns, 0);
        double c0, q0, c1, q1;
        sleapc__threadpool_times(tp, &c0, &q0);
        for (int r = 0; r < 5; r++)
            sleapc__threadpool_run(tp, spin_task, NULL, 4 * n_threads);
        sleapc__threadpool_times(tp, &c1, &q1);
        double spun = 1e-9 * (double)atomic_load(&spun_ns);
        CHECK_MSG(c1 - c0 >= spun - 1e-6, "%d threads: pool CPU %.6f s < tasks' %.6f s",
                  n_threads, c1 - c0, spun);
        /* Polls: at most 50 us per thread and run, a margin of 20x. */
        CHECK_MSG(c1 - c0 <= spun + 5 * n_threads * 1e-3, "%d threads: pool CPU %.6f s, tasks' "
                  "%.6f s", n_threads, c1 - c0, spun);
        CHECK((q0 < 0 && q1 < 0) || (q0 >= 0 && q1 >= q0));
        sleapc__threadpool_destroy(tp);
    }
    double c, q;
    sleapc__threadpool_times(NULL, &c, &q);
    CHECK(c > 0);
}

int main(void)
{
    test_every_index_once();
    test_create_args();
    test_alloc_failure();
    test_times();
    return test_finish();
}
