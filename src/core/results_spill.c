/* Results spilled to an unlinked temporary file (see results_spill.h). */
#include "core/results_spill.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"

/* Frames read back per block, and the instances that end a block early
 * (a block always holds whole frames). */
#define BLOCK_FRAMES 4096
#define BLOCK_INSTS 16384

/* On disk, per frame: this record, then n instance records, n * n_nodes * 2
 * point coordinates, n * n_nodes point scores, n_boxes box records and
 * n * emb_dim embedding floats (emb_dim 0: the frame's instances have
 * none). Read back by the process that wrote it, so native layouts are
 * fine. */
typedef struct spill_frame {
    int64_t video, frame_idx, n, n_boxes, emb_dim;
} spill_frame;

struct sleapc_results_spill {
    FILE *f;
    int n_nodes;
    int emb_dim; /* the first nonzero emb_dim appended; all must match */
    int64_t n_frames, n_insts, n_boxes;
    bool reading;
    const sleapc_predictions *head;
    sleapc_predictions blk; /* the block read back: header borrowed from head */
};

static sleapc_status io_fail(const char *what, int err)
{
    return sleapc__fail(SLEAPC_ERR_IO, "%s the temporary results: %s", what,
                        err ? strerror(err) : "unexpected end of file");
}

sleapc_status sleapc__spill_open(const char *near_path, int n_nodes, sleapc_results_spill **out)
{
    *out = NULL;
    sleapc_results_spill *s = sleapc__calloc(1, sizeof *s);
    const size_t n = strlen(near_path);
    char *tmp = sleapc__malloc(n + sizeof ".results.XXXXXX");
    if (!s || !tmp) {
        sleapc__free(tmp);
        sleapc__spill_close(s);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    s->n_nodes = n_nodes;
    memcpy(tmp, near_path, n);
    memcpy(tmp + n, ".results.XXXXXX", sizeof ".results.XXXXXX");
    int fd = mkstemp(tmp);
    int err = errno;
    if (fd >= 0) {
        unlink(tmp); /* nothing to clean up later, whatever happens */
        if (!(s->f = fdopen(fd, "w+b"))) {
            err = errno;
            close(fd);
        }
    }
    sleapc__free(tmp);
    if (!s->f) {
        sleapc_status st = io_fail("cannot create", err);
        sleapc__spill_close(s);
        return st;
    }
    *out = s;
    return SLEAPC_OK;
}

sleapc_status sleapc__spill_append(sleapc_results_spill *s, const sleapc_predictions *pr)
{
    if (s->reading || pr->n_nodes != s->n_nodes)
        return sleapc__fail(SLEAPC_ERR_STATE, "results appended out of turn");
    const size_t N = (size_t)s->n_nodes;
    const int D = pr->emb_dim > 0 && pr->embeddings ? pr->emb_dim : 0;
    if (D && s->emb_dim && D != s->emb_dim)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "embedding lengths differ: %d and %d", D,
                            s->emb_dim);
    if (D)
        s->emb_dim = D;
    for (int64_t k = 0; k < pr->n_frames; k++) {
        const sleapc_pred_frame *fr = &pr->frames[k];
        const int64_t n_boxes = fr->n_boxes > 0 ? fr->n_boxes : 0;
        const spill_frame rec = {fr->video, fr->frame_idx, fr->n, n_boxes, D};
        const size_t n = (size_t)fr->n, nb = (size_t)n_boxes;
        errno = 0;
        if (fwrite(&rec, sizeof rec, 1, s->f) != 1 ||
            (n && (fwrite(pr->insts + fr->first, sizeof *pr->insts, n, s->f) != n ||
                   fwrite(pr->points + fr->first * 2 * (int64_t)N, 2 * N * sizeof(float), n,
                          s->f) != n ||
                   fwrite(pr->point_scores + fr->first * (int64_t)N, N * sizeof(float), n,
                          s->f) != n)) ||
            (nb && fwrite(pr->boxes + fr->box_first, sizeof *pr->boxes, nb, s->f) != nb) ||
            (n && D &&
             fwrite(pr->embeddings + fr->first * D, (size_t)D * sizeof(float), n, s->f) != n))
            return io_fail("cannot write", errno ? errno : EIO);
        s->n_frames++;
        s->n_insts += fr->n;
        s->n_boxes += n_boxes;
    }
    return SLEAPC_OK;
}

int64_t sleapc__spill_n_frames(const sleapc_results_spill *s)
{
    return s->n_frames;
}

int64_t sleapc__spill_n_insts(const sleapc_results_spill *s)
{
    return s->n_insts;
}

static sleapc_status spill_rewind(void *ctx)
{
    sleapc_results_spill *s = ctx;
    errno = 0;
    if (fflush(s->f) != 0 || fseeko(s->f, 0, SEEK_SET) != 0)
        return io_fail("cannot write", errno ? errno : EIO);
    s->reading = true;
    return SLEAPC_OK;
}

static sleapc_status spill_next(void *ctx, const sleapc_predictions **out)
{
    sleapc_results_spill *s = ctx;
    sleapc_predictions *b = &s->blk;
    const size_t N = (size_t)s->n_nodes;
    b->n_frames = b->n_insts = b->n_boxes = 0;
    *out = b;
    sleapc_status est = sleapc__results_set_emb_dim(b, s->emb_dim);
    if (est)
        return est;
    while (b->n_frames < BLOCK_FRAMES && b->n_insts < BLOCK_INSTS) {
        spill_frame rec;
        errno = 0;
        if (fread(&rec, sizeof rec, 1, s->f) != 1) {
            if (feof(s->f))
                return SLEAPC_OK;
            return io_fail("cannot read", errno ? errno : EIO);
        }
        if (rec.n < 0 || rec.n > INT32_MAX || rec.n_boxes < 0 || rec.n_boxes > INT32_MAX ||
            (rec.emb_dim != 0 && rec.emb_dim != s->emb_dim))
            return io_fail("cannot read", 0);
        sleapc_status st = sleapc__results_reserve(b, b->n_frames + 1, b->n_insts + rec.n);
        if (!st)
            st = sleapc__results_reserve_boxes(b, b->n_boxes + rec.n_boxes);
        if (st)
            return st;
        const int64_t at = b->n_insts;
        const size_t n = (size_t)rec.n;
        errno = 0;
        if (n && (fread(b->insts + at, sizeof *b->insts, n, s->f) != n ||
                  fread(b->points + at * 2 * (int64_t)N, 2 * N * sizeof(float), n, s->f) != n ||
                  fread(b->point_scores + at * (int64_t)N, N * sizeof(float), n, s->f) != n))
            return io_fail("cannot read", errno);
        const size_t nb = (size_t)rec.n_boxes;
        if (nb && fread(b->boxes + b->n_boxes, sizeof *b->boxes, nb, s->f) != nb)
            return io_fail("cannot read", errno);
        const size_t D = (size_t)b->emb_dim;
        if (n && rec.emb_dim &&
            fread(b->embeddings + (size_t)at * D, D * sizeof(float), n, s->f) != n)
            return io_fail("cannot read", errno);
        for (size_t i = 0; !rec.emb_dim && i < n * D; i++)
            b->embeddings[(size_t)at * D + i] = NAN; /* rows reused from the last block */
        b->frames[b->n_frames++] =
            (sleapc_pred_frame){(int)rec.video, rec.frame_idx, at, rec.n, b->n_boxes, rec.n_boxes};
        b->n_insts += rec.n;
        b->n_boxes += rec.n_boxes;
    }
    return SLEAPC_OK;
}

void sleapc__spill_source(sleapc_results_spill *s, const sleapc_predictions *head,
                          sleapc_results_source *out)
{
    /* The block shows head's header; its own arrays stay its own. */
    sleapc_predictions *b = &s->blk;
    sleapc_pred_frame *frames = b->frames;
    sleapc_pred_instance *insts = b->insts;
    float *points = b->points, *scores = b->point_scores;
    sleapc_pred_box *boxes = b->boxes;
    float *emb = b->embeddings;
    const int emb_dim = b->emb_dim;
    const int64_t fcap = b->frames_cap, icap = b->insts_cap, bcap = b->boxes_cap;
    *b = *head;
    b->frames = frames;
    b->insts = insts;
    b->points = points;
    b->point_scores = scores;
    b->boxes = boxes;
    b->embeddings = emb; /* spill_next sizes them to the spill's emb_dim */
    b->emb_dim = emb_dim;
    b->frames_cap = fcap;
    b->insts_cap = icap;
    b->boxes_cap = bcap;
    b->n_frames = b->n_insts = b->n_boxes = 0;
    b->n_nodes = s->n_nodes;
    s->head = head;
    *out = (sleapc_results_source){s,          s->n_frames, s->n_insts, spill_rewind,
                                   spill_next, s->n_boxes};
}

void sleapc__spill_close(sleapc_results_spill *s)
{
    if (!s)
        return;
    if (s->f)
        fclose(s->f);
    sleapc__free(s->blk.frames);
    sleapc__free(s->blk.insts);
    sleapc__free(s->blk.points);
    sleapc__free(s->blk.point_scores);
    sleapc__free(s->blk.boxes);
    sleapc__free(s->blk.embeddings);
    sleapc__free(s);
}
