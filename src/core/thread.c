#include "core/thread.h"

#include <pthread.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

struct sleapc_thread {
    pthread_t id;
    void (*fn)(void *arg);
    void *arg;
};

static void *trampoline(void *p)
{
    sleapc_thread *t = p;
    t->fn(t->arg);
    return NULL;
}

sleapc_status sleapc__thread_start(void (*fn)(void *arg), void *arg, sleapc_thread **out)
{
    *out = NULL;
    sleapc_thread *t = sleapc__calloc(1, sizeof *t);
    if (!t)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "start thread: out of memory");
    t->fn = fn;
    t->arg = arg;
    int rc = pthread_create(&t->id, NULL, trampoline, t);
    if (rc != 0) {
        sleapc__free(t);
        return sleapc__fail(SLEAPC_ERR_STATE, "start thread: cannot create a thread (%s)",
                            strerror(rc));
    }
    *out = t;
    return SLEAPC_OK;
}

void sleapc__thread_join(sleapc_thread *t)
{
    if (!t)
        return;
    pthread_join(t->id, NULL);
    sleapc__free(t);
}

struct sleapc_queue {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    void **items;
    int cap, head, count;
    bool closed;
};

sleapc_status sleapc__queue_create(int cap, sleapc_queue **out)
{
    *out = NULL;
    if (cap < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "queue capacity %d", cap);
    sleapc_queue *q = sleapc__calloc(1, sizeof *q);
    void **items = sleapc__calloc((size_t)cap, sizeof *items);
    if (!q || !items) {
        sleapc__free(q);
        sleapc__free(items);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create queue: out of memory");
    }
    q->items = items;
    q->cap = cap;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    pthread_cond_init(&q->not_full, NULL);
    *out = q;
    return SLEAPC_OK;
}

void sleapc__queue_destroy(sleapc_queue *q)
{
    if (!q)
        return;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
    sleapc__free(q->items);
    sleapc__free(q);
}

bool sleapc__queue_push(sleapc_queue *q, void *item)
{
    pthread_mutex_lock(&q->mu);
    while (q->count == q->cap && !q->closed)
        pthread_cond_wait(&q->not_full, &q->mu);
    bool ok = !q->closed;
    if (ok) {
        q->items[(q->head + q->count) % q->cap] = item;
        q->count++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->mu);
    return ok;
}

bool sleapc__queue_pop(sleapc_queue *q, void **item)
{
    pthread_mutex_lock(&q->mu);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->mu);
    bool ok = q->count > 0;
    if (ok) {
        *item = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->mu);
    return ok;
}

void sleapc__queue_close(sleapc_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = true;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->mu);
}
