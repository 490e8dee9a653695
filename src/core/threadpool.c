#include "core/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"

/* One parallel loop. Published under the mutex; the task counter is the only
 * thing threads touch without it. */
typedef struct job {
    sleapc_task_fn fn;
    sleapc_task_thread_fn fn_indexed;
    void *ctx;
    int64_t n_tasks;
} job;

typedef struct worker {
    pthread_t thread;
    struct sleapc_threadpool *tp;
    int index;               /* thread index passed to tasks, >= 1 */
    atomic_int tid;          /* the kernel's id of the thread (0: unknown yet) */
} worker;

struct sleapc_threadpool {
    int n_threads;           /* caller + workers */
    int n_started;           /* workers actually running (for cleanup) */
    worker *workers;         /* n_threads - 1 */
    pthread_mutex_t mu;
    pthread_cond_t wake;     /* workers: a new generation (or stop) */
    pthread_cond_t done;     /* caller: n_busy reached 0 */
    /* Written under mu; read without it only while spinning (a thread that
     * sees a change takes mu before it acts on it). */
    atomic_uint_least64_t generation; /* bumped once per parallel run */
    job cur;
    atomic_int n_busy;       /* workers that have not finished the current run */
    bool stop;
    atomic_llong next_task;
};

/* How long a thread polls for the next run, or the caller for the end of
 * this one, before it sleeps on a condition. A network runs one parallel
 * loop per layer, a few microseconds apart; a futex wake-up costs tens of
 * microseconds on a virtual machine and the loser of a late start idles for
 * up to a task. 50 us is far below a frame, so between frames, or on a
 * loaded machine, threads still sleep rather than spin. */
#define SPIN_NS 50000

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Polls until stop() or SPIN_NS have passed; returns stop()'s last value. */
static bool spin_until(bool (*stop)(sleapc_threadpool *, uint64_t), sleapc_threadpool *tp,
                       uint64_t arg)
{
    int64_t end = now_ns() + SPIN_NS;
    for (int i = 0;; i++) {
        if (stop(tp, arg))
            return true;
        cpu_relax();
        if ((i & 63) == 63 && now_ns() > end)
            return false;
    }
}

static bool new_generation(sleapc_threadpool *tp, uint64_t seen)
{
    return atomic_load_explicit(&tp->generation, memory_order_acquire) != seen;
}

static bool all_done(sleapc_threadpool *tp, uint64_t unused)
{
    (void)unused;
    return atomic_load_explicit(&tp->n_busy, memory_order_acquire) == 0;
}

/* Take task indices from the shared counter until none is left. One fetch per
 * task is enough: kernels hand out coarse tasks (rows, channel blocks). */
static void drain(sleapc_threadpool *tp, const job *j, int thread)
{
    for (;;) {
        int64_t i = atomic_fetch_add_explicit(&tp->next_task, 1, memory_order_relaxed);
        if (i >= j->n_tasks)
            return;
        if (j->fn_indexed)
            j->fn_indexed(j->ctx, i, thread);
        else
            j->fn(j->ctx, i);
    }
}

/* The calling thread's kernel id, from /proc/thread-self ("PID/task/TID");
 * 0 where there is none. */
static int own_tid(void)
{
    char link[64];
    ssize_t n = readlink("/proc/thread-self", link, sizeof link - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    const char *t = strrchr(link, '/');
    return t ? atoi(t + 1) : 0;
}

static void *worker_main(void *p)
{
    atomic_store(&((worker *)p)->tid, own_tid());
    sleapc_threadpool *tp = ((worker *)p)->tp;
    int index = ((worker *)p)->index;
    uint64_t seen = 0;

    pthread_mutex_lock(&tp->mu);
    for (;;) {
        if (!tp->stop && atomic_load(&tp->generation) == seen) {
            pthread_mutex_unlock(&tp->mu);
            spin_until(new_generation, tp, seen);
            pthread_mutex_lock(&tp->mu);
        }
        while (!tp->stop && atomic_load(&tp->generation) == seen)
            pthread_cond_wait(&tp->wake, &tp->mu);
        if (tp->stop)
            break;
        seen = atomic_load(&tp->generation);
        job j = tp->cur;
        pthread_mutex_unlock(&tp->mu);

        drain(tp, &j, index);

        /* The mutex also publishes this worker's writes to the caller. */
        pthread_mutex_lock(&tp->mu);
        if (atomic_fetch_sub(&tp->n_busy, 1) == 1)
            pthread_cond_signal(&tp->done);
    }
    pthread_mutex_unlock(&tp->mu);
    return NULL;
}

int sleapc__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > SLEAPC_THREADPOOL_MAX_THREADS ? SLEAPC_THREADPOOL_MAX_THREADS : (int)n;
}

sleapc_status sleapc__threadpool_create(int n_threads, sleapc_threadpool **out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "create thread pool: out is required");
    *out = NULL;
    if (n_threads <= 0)
        n_threads = sleapc__cpu_count();
    if (n_threads > SLEAPC_THREADPOOL_MAX_THREADS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "create thread pool: %d threads: more than the limit of %d",
                            n_threads, SLEAPC_THREADPOOL_MAX_THREADS);

    sleapc_threadpool *tp = sleapc__calloc(1, sizeof *tp);
    if (!tp)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create thread pool: %d threads: out of memory",
                            n_threads);
    tp->n_threads = n_threads;
    atomic_init(&tp->next_task, 0);
    atomic_init(&tp->generation, 0);
    atomic_init(&tp->n_busy, 0);
    tp->workers = sleapc__calloc((size_t)(n_threads - 1), sizeof *tp->workers);
    if (!tp->workers) {
        sleapc__free(tp);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create thread pool: %d threads: out of memory",
                            n_threads);
    }
    if (pthread_mutex_init(&tp->mu, NULL) != 0) {
        sleapc__free(tp->workers);
        sleapc__free(tp);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create thread pool: mutex: init failed");
    }
    if (pthread_cond_init(&tp->wake, NULL) != 0) {
        pthread_mutex_destroy(&tp->mu);
        sleapc__free(tp->workers);
        sleapc__free(tp);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create thread pool: condition: init failed");
    }
    if (pthread_cond_init(&tp->done, NULL) != 0) {
        pthread_cond_destroy(&tp->wake);
        pthread_mutex_destroy(&tp->mu);
        sleapc__free(tp->workers);
        sleapc__free(tp);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create thread pool: condition: init failed");
    }

    for (int i = 0; i < n_threads - 1; i++) {
        worker *wk = &tp->workers[i];
        wk->tp = tp;
        wk->index = i + 1;
        atomic_init(&wk->tid, 0);
        int rc = pthread_create(&wk->thread, NULL, worker_main, wk);
        if (rc != 0) {
            sleapc__threadpool_destroy(tp);
            return sleapc__fail(SLEAPC_ERR_NOMEM,
                                "create thread pool: worker %d of %d: cannot create a thread "
                                "(%s); try fewer --threads",
                                i + 1, n_threads - 1, strerror(rc));
        }
        tp->n_started++;
    }
    *out = tp;
    return SLEAPC_OK;
}

void sleapc__threadpool_destroy(sleapc_threadpool *tp)
{
    if (!tp)
        return;
    pthread_mutex_lock(&tp->mu);
    tp->stop = true;
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 0; i < tp->n_started; i++)
        pthread_join(tp->workers[i].thread, NULL);
    pthread_cond_destroy(&tp->done);
    pthread_cond_destroy(&tp->wake);
    pthread_mutex_destroy(&tp->mu);
    sleapc__free(tp->workers);
    sleapc__free(tp);
}

int sleapc__threadpool_n_threads(const sleapc_threadpool *tp)
{
    return tp ? tp->n_threads : 1;
}

static void run_job(sleapc_threadpool *tp, const job *j)
{
    if (j->n_tasks <= 0)
        return;
    /* Serial when there is nobody to share with: no wake-up cost. */
    if (!tp || tp->n_threads == 1 || j->n_tasks == 1) {
        for (int64_t i = 0; i < j->n_tasks; i++) {
            if (j->fn_indexed)
                j->fn_indexed(j->ctx, i, 0);
            else
                j->fn(j->ctx, i);
        }
        return;
    }
    pthread_mutex_lock(&tp->mu);
    tp->cur = *j;
    atomic_store_explicit(&tp->next_task, 0, memory_order_relaxed);
    atomic_store(&tp->n_busy, tp->n_threads - 1);
    atomic_fetch_add(&tp->generation, 1);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);

    drain(tp, j, 0);

    /* Every worker checks in once per generation, so none can still be
     * reading this job when the next one is published. */
    spin_until(all_done, tp, 0);
    pthread_mutex_lock(&tp->mu);
    while (atomic_load(&tp->n_busy) > 0)
        pthread_cond_wait(&tp->done, &tp->mu);
    pthread_mutex_unlock(&tp->mu);
}

void sleapc__threadpool_run(sleapc_threadpool *tp, sleapc_task_fn fn, void *ctx, int64_t n_tasks)
{
    job j = {.fn = fn, .ctx = ctx, .n_tasks = n_tasks};
    run_job(tp, &j);
}

void sleapc__threadpool_run_indexed(sleapc_threadpool *tp, sleapc_task_thread_fn fn, void *ctx,
                                    int64_t n_tasks)
{
    job j = {.fn_indexed = fn, .ctx = ctx, .n_tasks = n_tasks};
    run_job(tp, &j);
}

/* Seconds thread tid has waited for a core (schedstat's run delay), or -1. */
static double run_delay_s(int tid)
{
    if (tid <= 0)
        return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long run_ns, wait_ns;
    int got = fscanf(f, "%llu %llu", &run_ns, &wait_ns);
    fclose(f);
    return got == 2 ? 1e-9 * (double)wait_ns : -1;
}

static double clock_of_s(clockid_t id)
{
    struct timespec t;
    if (clock_gettime(id, &t) != 0)
        return 0;
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void sleapc__threadpool_times(const sleapc_threadpool *tp, double *cpu_s, double *wait_s)
{
    double wait = run_delay_s(own_tid());
    int n_workers = tp ? tp->n_started : 0;
    for (int i = 0; i < n_workers; i++) {
        double w = wait < 0 ? -1 : run_delay_s(atomic_load(&tp->workers[i].tid));
        wait = w < 0 ? -1 : wait + w;
    }
    *wait_s = wait;
#if defined(_POSIX_THREAD_CPUTIME) && _POSIX_THREAD_CPUTIME >= 0
    double cpu = clock_of_s(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < n_workers; i++) {
        clockid_t id;
        if (pthread_getcpuclockid(tp->workers[i].thread, &id) == 0)
            cpu += clock_of_s(id);
    }
    *cpu_s = cpu;
#else
    /* No per-thread clocks: the process's, late as it is. */
    *cpu_s = clock_of_s(CLOCK_PROCESS_CPUTIME_ID);
#endif
}
