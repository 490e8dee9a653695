#include "pipeline/predict_stream.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/thread.h"
#include "pipeline/predictor_impl.h"
#include "pipeline/writer_impl.h"

typedef struct batch_slot {
    uint8_t *pixels;      /* (batch, c, h, w): the network's input layout */
    int64_t *indices;     /* frame index of each */
    int64_t n;            /* frames filled */
} batch_slot;

typedef struct stream {
    const sleapc_frame_reader *reader;
    const int64_t *frames;
    int64_t n_frames;
    int64_t batch;
    size_t frame_bytes;
    sleapc_queue *free_q, *full_q;
    atomic_bool aborted; /* the abort callback said stop between batches */
    /* The decode thread's failure, carried to the caller's thread. */
    sleapc_status decode_status;
    char decode_error[1024];
} stream;

static bool stopped(const stream *s)
{
    return atomic_load(&s->aborted);
}

static void decode_failed(stream *s, sleapc_status st)
{
    s->decode_status = st;
    snprintf(s->decode_error, sizeof s->decode_error, "%s", sleapc__last_error());
    sleapc__queue_close(s->full_q);
}

/* Decode thread of a live source: frames in order until its end. */
static void decode_live(stream *s)
{
    int64_t next_idx = 0;
    for (bool end = false; !end && !stopped(s);) {
        void *item;
        if (!sleapc__queue_pop(s->free_q, &item))
            break;
        batch_slot *slot = item;
        int64_t n = 0;
        while (n < s->batch) {
            sleapc_status st = s->reader->next(s->reader->ctx, slot->pixels + n * s->frame_bytes, &end);
            if (st) {
                decode_failed(s, st);
                return;
            }
            if (end)
                break;
            slot->indices[n++] = next_idx++;
        }
        slot->n = n;
        if (n > 0 && !sleapc__queue_push(s->full_q, slot))
            break;
    }
    sleapc__queue_close(s->full_q);
}

/* Decode thread: fill free slots with consecutive batches of frames. */
static void decode_main(void *arg)
{
    stream *s = arg;
    if (!s->frames) {
        decode_live(s);
        return;
    }
    for (int64_t start = 0; start < s->n_frames && !stopped(s); start += s->batch) {
        void *item;
        if (!sleapc__queue_pop(s->free_q, &item))
            break;
        batch_slot *slot = item;
        int64_t n = s->n_frames - start < s->batch ? s->n_frames - start : s->batch;
        for (int64_t k = 0; k < n; k++) {
            int64_t idx = s->frames[start + k];
            sleapc_status st = s->reader->read(s->reader->ctx, idx, slot->pixels + k * s->frame_bytes);
            if (st) {
                decode_failed(s, st);
                return;
            }
            slot->indices[k] = idx;
        }
        slot->n = n;
        if (!sleapc__queue_push(s->full_q, slot))
            break;
    }
    sleapc__queue_close(s->full_q);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What the loop keeps for progress reports. */
typedef struct progress_state {
    sleapc_predictor *p;
    sleapc_writer *w;
    const sleapc_run_opts *o;
    stream *s;
    double t0;
    sleapc_progress pr;
    /* The rate leaves out one-time costs: what "auto" spends measuring, and
     * from the second batch on the whole first batch (plans, warm caches). */
    int64_t setup0, first_n;
    double first_s;
} progress_state;

/* The frames of slot, whose instances are p's last results: to the writer,
 * then progress and the abort check. */
static sleapc_status deliver(progress_state *ps, const batch_slot *slot)
{
    sleapc_status st = ps->w ? sleapc__writer_add(ps->w, ps->p, ps->o->video, slot->indices)
                             : SLEAPC_OK;
    sleapc_progress *pr = &ps->pr;
    pr->done += slot->n;
    pr->elapsed_s = now_s() - ps->t0;
    if (ps->first_n == 0) {
        ps->first_n = pr->done;
        ps->first_s = pr->elapsed_s;
    }
    double setup_s = (double)(sleapc__backend_setup_ns() - ps->setup0) * 1e-9;
    if (pr->done > ps->first_n && pr->elapsed_s > ps->first_s)
        pr->fps = (double)(pr->done - ps->first_n) / (pr->elapsed_s - ps->first_s);
    else
        pr->fps = pr->elapsed_s > setup_s ? (double)pr->done / (pr->elapsed_s - setup_s) : 0.0;
    if (!st && ps->o->progress)
        ps->o->progress(pr, ps->o->user);
    if (!st && sleapc__predictor_should_abort(ps->p))
        atomic_store(&ps->s->aborted, true);
    return st;
}

sleapc_status sleapc__predict_stream(sleapc_predictor *p, const sleapc_frame_reader *reader,
                                     const int64_t *frame_indices, int64_t n_frames,
                                     sleapc_writer *w, const sleapc_run_opts *opts)
{
    sleapc_run_opts o = opts ? *opts : (sleapc_run_opts){0};
    if (!frame_indices) {
        if (!reader->next)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: no frames given");
        n_frames = 0;
    }
    int depth = o.queue_depth > 0 ? o.queue_depth : 2;
    /* One more while the overlap holds a begun batch's slot. */
    int n_slots = depth + 1 + (sleapc__predictor_can_overlap(p) ? 1 : 0);
    stream s = {.reader = reader,
                .frames = frame_indices,
                .n_frames = n_frames,
                .batch = sleapc__predictor_batch_size(p)};
    atomic_init(&s.aborted, false);
    s.frame_bytes = (size_t)(reader->height * reader->width * reader->channels);
    batch_slot *slots = sleapc__calloc((size_t)n_slots, sizeof *slots);
    sleapc_thread *decoder = NULL;
    sleapc_status st = slots ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory");
    if (!st)
        st = sleapc__queue_create(n_slots, &s.free_q);
    if (!st)
        st = sleapc__queue_create(n_slots, &s.full_q);
    for (int i = 0; !st && i < n_slots; i++) {
        slots[i].pixels = sleapc__aligned_alloc(s.frame_bytes * (size_t)s.batch);
        slots[i].indices = sleapc__malloc((size_t)s.batch * sizeof(int64_t));
        if (!slots[i].pixels || !slots[i].indices)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "predict: out of memory for frame buffers");
        else
            sleapc__queue_push(s.free_q, &slots[i]);
    }
    if (!st)
        st = sleapc__thread_start(decode_main, &s, &decoder);

    progress_state ps = {.p = p, .w = w, .o = &o, .s = &s, .t0 = now_s(),
                         .pr = {.total = n_frames},
                         .setup0 = sleapc__backend_setup_ns()};
    /* "auto" budgets its measuring by the run's length (0: a live source). */
    sleapc__backend_run_begin(frame_indices ? n_frames : 0);
    /* pending: a batch begun on the device, finished after the next one is
     * begun (predictor_impl.h's overlap), or run alone when the next cannot
     * be begun: the frames reach the writer in order either way. */
    batch_slot *pending = NULL;
    bool more = true;
    while (!st && more) {
        void *item = NULL;
        more = sleapc__queue_pop(s.full_q, &item);
        batch_slot *next = more ? item : NULL;
        if (next && reader->before)
            st = reader->before(reader->ctx, next->indices, next->n);
        bool begin = !st && next &&
                     sleapc__predictor_can_begin(p, next->n, reader->height, reader->width,
                                                 reader->channels);
        if (begin)
            st = sleapc__predictor_begin(p, next->pixels, next->n, reader->height,
                                         reader->width, reader->channels);
        if (!st && pending) {
            st = sleapc__predictor_finish(p);
            if (!st)
                st = deliver(&ps, pending);
            sleapc__queue_push(s.free_q, pending);
            pending = NULL;
        }
        if (next && begin && !st) {
            pending = next;
            next = NULL;
        } else if (next && !st) {
            st = sleapc__predictor_run(p, next->pixels, true, next->n, reader->height,
                                       reader->width, reader->channels);
            if (!st)
                st = deliver(&ps, next);
        }
        if (next)
            sleapc__queue_push(s.free_q, next);
        if (!st && stopped(&s))
            break;
    }
    /* An error or a stop leaves a begun batch: dropped, as the sequential
     * path never runs the batch after the one that failed or stopped. */
    sleapc__predictor_drop(p);
    if (pending)
        sleapc__queue_push(s.free_q, pending);
    sleapc_progress pr = ps.pr;
    sleapc__backend_run_end();
    /* Unblock and finish the decoder whatever happened. */
    if (s.free_q)
        sleapc__queue_close(s.free_q);
    if (s.full_q)
        sleapc__queue_close(s.full_q);
    sleapc__thread_join(decoder);
    if (!st && s.decode_status)
        st = sleapc__fail(s.decode_status, "%s", s.decode_error);
    /* A live source's wait ends on the abort callback too (io polls it): ask
     * once more here whether that is why the frames ended. */
    if (!st && (pr.done < n_frames || !frame_indices) &&
        (stopped(&s) || sleapc__predictor_should_abort(p)))
        st = frame_indices ? sleapc__fail(SLEAPC_ERR_INTERRUPTED,
                                          "predict: interrupted after %lld of %lld frames",
                                          (long long)pr.done, (long long)n_frames)
                           : sleapc__fail(SLEAPC_ERR_INTERRUPTED,
                                          "predict: interrupted after %lld frames",
                                          (long long)pr.done);
    for (int i = 0; slots && i < n_slots; i++) {
        sleapc__aligned_free(slots[i].pixels);
        sleapc__free(slots[i].indices);
    }
    sleapc__free(slots);
    sleapc__queue_destroy(s.free_q);
    sleapc__queue_destroy(s.full_q);
    return st;
}
