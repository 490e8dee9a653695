/* Predictions -> CSV in SLEAP's "analysis CSV" columns (write_tracking_h5
 * write_csv_file; sleap-io csv "sleap" format, which it detects by the
 * frame_idx and instance.score columns): track, frame_idx, instance.score,
 * then x, y, score per node in skeleton order. One row per instance, every
 * instance (untracked ones too), frames in the predictions' order. Missing
 * values are empty fields, as pandas writes NaN. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/results.h"
#include "io/csv/predictions_csv.h"
#include "io/slp/pred_check.h"

/* A field, quoted only when it must be (pandas QUOTE_MINIMAL). */
static void put_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A float32 as the shortest decimal that reads back to the same float
 * (integral values keep a ".0", as pandas prints floats); empty if NaN. */
static void put_float(FILE *f, float v)
{
    fputc(',', f);
    if (isnan(v))
        return;
    if (isinf(v)) {
        fputs(v > 0 ? "inf" : "-inf", f);
        return;
    }
    char buf[32];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
    if (!strpbrk(buf, ".e"))
        fputs(".0", f);
}

static void put_header(FILE *f, const sleapc_predictions *pr)
{
    static const char *const axis[3] = {".x", ".y", ".score"};
    fputs("track,frame_idx,instance.score", f);
    for (int n = 0; n < pr->n_nodes; n++)
        for (int a = 0; a < 3; a++) {
            /* Quote the whole column name when the node name needs it. */
            char name[512];
            snprintf(name, sizeof name, "%s%s", pr->node_names[n], axis[a]);
            fputc(',', f);
            put_field(f, name);
        }
    fputc('\n', f);
}

static void put_rows(FILE *f, const sleapc_predictions *pr)
{
    int64_t N = pr->n_nodes;
    for (int64_t k = 0; k < pr->n_frames; k++) {
        const sleapc_pred_frame *fr = &pr->frames[k];
        for (int64_t i = 0; i < fr->n; i++) {
            int64_t src = fr->first + i;
            const sleapc_pred_instance *in = &pr->insts[src];
            const float *xy = pr->points + src * N * 2;
            const float *sc = pr->point_scores + src * N;
            if (in->track >= 0)
                put_field(f, pr->track_names[in->track]);
            fprintf(f, ",%lld", (long long)fr->frame_idx);
            put_float(f, in->score);
            for (int64_t n = 0; n < N; n++) {
                bool miss = sleapc__pred_point_missing(xy[2 * n], xy[2 * n + 1]);
                put_float(f, miss ? NAN : xy[2 * n]);
                put_float(f, miss ? NAN : xy[2 * n + 1]);
                put_float(f, miss ? NAN : sc[n]);
            }
            fputc('\n', f);
        }
    }
}

sleapc_status sleapc__predictions_write_csv(const sleapc_predictions *pr, FILE *f)
{
    sleapc_status st = sleapc__predictions_check(pr, "write CSV");
    if (st)
        return st;
    sleapc_results_memory m;
    sleapc_results_source src;
    sleapc__results_source_memory(pr, &m, &src);
    return sleapc__predictions_write_csv_from(pr, &src, f);
}

sleapc_status sleapc__predictions_write_csv_from(const sleapc_predictions *head,
                                                 sleapc_results_source *src, FILE *f)
{
    if (!f)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write CSV: no stream");
    sleapc_status st = sleapc__predictions_check_header(head, "write CSV");
    const sleapc_predictions *b = NULL;
    if (!st)
        st = src->rewind(src->ctx);
    if (!st)
        st = src->next(src->ctx, &b);
    if (st)
        return st;
    put_header(f, head);
    while (b->n_frames > 0) {
        if ((st = sleapc__predictions_check(b, "write CSV")))
            return st;
        put_rows(f, b);
        if (ferror(f))
            return sleapc__fail(SLEAPC_ERR_IO, "write CSV: cannot write the rows");
        if ((st = src->next(src->ctx, &b)))
            return st;
    }
    if (ferror(f))
        return sleapc__fail(SLEAPC_ERR_IO, "write CSV: cannot write the rows");
    return SLEAPC_OK;
}
