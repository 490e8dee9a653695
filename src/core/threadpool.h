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

/* n_threads <= 0 means the number of online cores. */
sleapc_status sleapc__threadpool_create(int n_threads, sleapc_threadpool **out);
void sleapc__threadpool_destroy(sleapc_threadpool *tp);
int sleapc__threadpool_n_threads(const sleapc_threadpool *tp);

/* Run fn(ctx, i) for every i in [0, n_tasks) and return when all are done.
 * tp may be NULL (runs serially). Not re-entrant: do not call from a task. */
void sleapc__threadpool_run(sleapc_threadpool *tp, sleapc_task_fn fn, void *ctx,
                            int64_t n_tasks);

/* Number of online CPU cores (at least 1). */
int sleapc__cpu_count(void);

#endif
