/* Threads and a bounded queue of pointers, for the decode -> infer -> write
 * pipeline. */
#ifndef SLEAPC_CORE_THREAD_H
#define SLEAPC_CORE_THREAD_H

#include <stdbool.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_thread sleapc_thread;

/* Start fn(arg) on a new thread. */
sleapc_status sleapc__thread_start(void (*fn)(void *arg), void *arg, sleapc_thread **out);
/* Wait for it to finish and free it. Accepts NULL. */
void sleapc__thread_join(sleapc_thread *t);

/* A FIFO of at most `cap` pointers. push blocks while full, pop while empty;
 * after close, push fails and pop drains what is left, then returns false. */
typedef struct sleapc_queue sleapc_queue;

sleapc_status sleapc__queue_create(int cap, sleapc_queue **out);
void sleapc__queue_destroy(sleapc_queue *q);
bool sleapc__queue_push(sleapc_queue *q, void *item);
bool sleapc__queue_pop(sleapc_queue *q, void **item);
void sleapc__queue_close(sleapc_queue *q);

#endif
