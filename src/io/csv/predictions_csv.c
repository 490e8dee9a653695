/* Predictions -> CSV as sleap-io 0.9.5 writes its "sleap" format (io/csv.py
 * _write_sleap, which it detects by the frame_idx and instance.score
 * columns): track, frame_idx, instance.score, then the node columns
 * "<node>.x/.y/.score" sorted by name. One row per instance, every instance
 * (untracked ones with an empty track), frames in the predictions' order.
 * Missing values are empty fields, as pandas writes NaN. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
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

/* A float32 value as pandas prints the float64 sleap-io reads from a .slp:
 * Python's repr, the shortest decimal that reads back to the same double,
 * in positional notation for exponents -4 .. 15 (with a ".0" when
 * integral) and as d.ddde+XX otherwise; empty if NaN. */
static void put_float(FILE *f, float v)
{
    fputc(',', f);
    if (isnan(v))
        return;
    if (isinf(v)) {
        fputs(v > 0 ? "inf" : "-inf", f);
        return;
    }
    double d = v;
    char buf[40];
    for (int prec = 0; prec <= 16; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    /* buf is [-]D[.DDD]e(+|-)XX: split into sign, digits and exponent. */
    char *e = strchr(buf, 'e');
    int exp10 = atoi(e + 1);
    *e = '\0';
    const char *m = buf;
    if (*m == '-') {
        fputc('-', f);
        m++;
    }
    char digits[24];
    size_t nd = 0;
    for (; *m && nd + 1 < sizeof digits; m++)
        if (*m != '.')
            digits[nd++] = *m;
    digits[nd] = '\0';
    if (exp10 < -4 || exp10 >= 16) {
        fprintf(f, "%c%s%se%c%02d", digits[0], nd > 1 ? "." : "", digits + 1,
                exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    } else if (exp10 < 0) {
        fputs("0.", f);
        for (int i = -1; i > exp10; i--)
            fputc('0', f);
        fputs(digits, f);
    } else {
        for (int i = 0; i <= exp10; i++)
            fputc(i < (int)nd ? digits[i] : '0', f);
        fputc('.', f);
        fputs((int)nd > exp10 + 1 ? digits + exp10 + 1 : "0", f);
    }
}

static const char *const axis[3] = {".x", ".y", ".score"};

/* The node columns in sleap-io's order: sorted by column name. */
typedef struct column {
    const char *node;
    int axis;
} column;

/* Byte pos of the column name "<node><axis>", 0 past its end. */
static unsigned char name_at(const column *c, size_t pos, size_t node_len)
{
    return (unsigned char)(pos < node_len ? c->node[pos] : axis[c->axis][pos - node_len]);
}

/* Python's str order (code points, which UTF-8 bytes keep). */
static int column_cmp(const void *pa, const void *pb)
{
    const column *a = pa, *b = pb;
    size_t la = strlen(a->node), lb = strlen(b->node);
    size_t na = la + strlen(axis[a->axis]), nb = lb + strlen(axis[b->axis]);
    for (size_t i = 0;; i++) {
        unsigned ca = i < na ? name_at(a, i, la) : 0, cb = i < nb ? name_at(b, i, lb) : 0;
        if (ca != cb || !ca)
            return (ca > cb) - (ca < cb);
    }
}

static column *sorted_columns(const sleapc_predictions *pr)
{
    size_t n = (size_t)pr->n_nodes * 3;
    column *c = sleapc__calloc(n + 1, sizeof *c);
    for (size_t k = 0; c && k < n; k++)
        c[k] = (column){pr->node_names[k / 3], (int)(k % 3)};
    if (c)
        qsort(c, n, sizeof *c, column_cmp);
    return c;
}

static int node_index(const sleapc_predictions *pr, const column *c)
{
    for (int n = 0; n < pr->n_nodes; n++)
        if (pr->node_names[n] == c->node)
            return n;
    return 0;
}

static void put_header(FILE *f, const sleapc_predictions *pr, const column *cols)
{
    fputs("track,frame_idx,instance.score", f);
    for (int k = 0; k < pr->n_nodes * 3; k++) {
        /* Quote the whole column name when the node name needs it. */
        char name[512];
        snprintf(name, sizeof name, "%s%s", cols[k].node, axis[cols[k].axis]);
        fputc(',', f);
        put_field(f, name);
    }
    fputc('\n', f);
}

/* An absent point: x and y empty, its score the 0 the .slp stores. */
static void put_rows(FILE *f, const sleapc_predictions *pr, const column *cols, const int *node)
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
            for (int64_t c = 0; c < N * 3; c++) {
                int n = node[c];
                bool miss = sleapc__pred_point_missing(xy[2 * n], xy[2 * n + 1]);
                int a = cols[c].axis;
                put_float(f, a == 2 ? (miss ? 0.0f : sc[n]) : miss ? NAN : xy[2 * n + a]);
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
    column *cols = sorted_columns(head);
    int *node = sleapc__calloc((size_t)head->n_nodes * 3 + 1, sizeof *node);
    if (!cols || !node) {
        sleapc__free(cols);
        sleapc__free(node);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write CSV: out of memory");
    }
    for (int c = 0; c < head->n_nodes * 3; c++)
        node[c] = node_index(head, &cols[c]);
    put_header(f, head, cols);
    while (!st && b->n_frames > 0) {
        if ((st = sleapc__predictions_check(b, "write CSV")))
            break;
        put_rows(f, b, cols, node);
        if (ferror(f))
            st = sleapc__fail(SLEAPC_ERR_IO, "write CSV: cannot write the rows");
        else
            st = src->next(src->ctx, &b);
    }
    sleapc__free(cols);
    sleapc__free(node);
    if (!st && ferror(f))
        return sleapc__fail(SLEAPC_ERR_IO, "write CSV: cannot write the rows");
    return st;
}
