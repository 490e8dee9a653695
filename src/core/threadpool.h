/* A fixed pool of worker threads running parallel-for loops. The calling
 * thread takes part, so a pool of n threads starts n-1 workers. */
#ifndef SLEAPC_CORE_THREADPOOL_H
#define SLEAPC_CORE_THREADPOOL_H

#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_threadpool sleapc_threadpool;

/* Body of a parallel loop: called once per task index in [0, n_tasks), from
 * any thread of the pool. */
typedef void (*sleapc_task_fn)(void *ctx, int64_t task);

/* n_threads <= 0 means the number of online cores; at most
 * SLEAPC_THREADPOOL_MAX_THREADS. Returns SLEAPC_ERR_INVALID_ARG (too many,
 * out NULL) or SLEAPC_ERR_NOMEM (memory or threads unavailable); *out is
 * NULL on failure. destroy(NULL) does nothing. */
#define SLEAPC_THREADPOOL_MAX_THREADS 1024
sleapc_status sleapc__threadpool_create(int n_threads, sleapc_threadpool **out);
void sleapc__threadpool_destroy(sleapc_threadpool *tp);
/* Threads taking part in a run, the caller included; 1 for NULL. */
int sleapc__threadpool_n_threads(const sleapc_threadpool *tp);

/* Run fn(ctx, i) for every i in [0, n_tasks) and return when all are done.
 * tp may be NULL (runs serially). Not re-entrant: do not call from a task. */
void sleapc__threadpool_run(sleapc_threadpool *tp, sleapc_task_fn fn, void *ctx,
                            int64_t n_tasks);

/* Body of a parallel loop that is also told which pool thread runs it:
 * thread is in [0, n_threads), 0 being the caller, so a task can use
 * per-thread scratch. */
typedef void (*sleapc_task_thread_fn)(void *ctx, int64_t task, int thread);

/* sleapc__threadpool_run, passing the thread index. tp NULL: thread 0. */
void sleapc__threadpool_run_indexed(sleapc_threadpool *tp, sleapc_task_thread_fn fn, void *ctx,
                                    int64_t n_tasks);

/* Seconds of CPU the pool's threads have run so far, the calling thread (the
 * one that runs the loops) included, and seconds they have waited for a core
 * while ready to run (Linux's run delay; -1 where the system does not say).
 * Differences between two calls time the runs between them. Each thread's
 * own clock is read: the process's clock adds another thread's running time
 * only at that thread's scheduler ticks, milliseconds late, which is most of
 * a short run. tp NULL: the calling thread. */
void sleapc__threadpool_times(const sleapc_threadpool *tp, double *cpu_s, double *wait_s);

/* Number of online CPU cores (at least 1). */
int sleapc__cpu_count(void);

#endif
