/* The eval-tracking report: the figures and a timeline of identities, one
 * row per ground-truth track, coloured by the predicted track it matched
 * in each frame, with its ID switches marked. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_report.h"
#include "pipeline/render/render_draw.h"

static double num(const sleapc_pyobj *m, const char *key)
{
    const sleapc_pyobj *v = sleapc__pyobj_get(m, key);
    if (!v)
        return NAN;
    return v->kind == SLEAPC_PYOBJ_INT ? (double)v->i : v->kind == SLEAPC_PYOBJ_FLOAT ? v->f : NAN;
}

static void table(sleapc_rtext *t, const sleapc_et_result *r)
{
    static const struct {
        const char *key, *name, *fmt;
    } rows[] = {
        {"idf1", "IDF1", "%.4f"},
        {"idp", "IDP", "%.4f"},
        {"idr", "IDR", "%.4f"},
        {"id_switches", "ID switches", "%.0f"},
        {"fragmentations", "fragmentations", "%.0f"},
        {"mota", "MOTA", "%.4f"},
        {"motp", "MOTP", "%.4f"},
        {"n_matches", "matches", "%.0f"},
        {"n_misses", "misses (ground truth unmatched)", "%.0f"},
        {"n_false_positives", "false positives", "%.0f"},
        {"mostly_tracked", "mostly tracked (matched >= 80% of its frames)", "%.0f"},
        {"partly_tracked", "partly tracked", "%.0f"},
        {"mostly_lost", "mostly lost (matched <= 20%)", "%.0f"},
        {"n_gt_tracks", "ground-truth tracks", "%.0f"},
        {"n_pred_tracks", "predicted tracks", "%.0f"},
    };
    sleapc__rtext_put(t, "<h2>Metrics</h2><table><tr><th>metric</th><th>value</th></tr>\n");
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        sleapc__rtext_put(t, "<tr><td>%s</td><td class=\"n\">", rows[k].name);
        sleapc__rtext_put(t, rows[k].fmt, num(r->metrics, rows[k].key));
        sleapc__rtext_put(t, "</td></tr>\n");
    }
    sleapc__rtext_put(t, "</table>\n");
}

static void color_hex(int k, char out[8])
{
    uint8_t c[3];
    sleapc__draw_color(k, c);
    snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void timeline(sleapc_rtext *t, const sleapc_et_result *r)
{
    const int T = r->gt->n_tracks;
    const int64_t F = r->n_frames;
    const int left = 110, width = 960, row_h = 28, top = 20;
    const int height = top + T * (row_h + 10) + 40;
    sleapc__rtext_put(t, "<h2>Identities over time</h2><p class=\"key\">predicted track:");
    for (int p = 0; p < r->pr->n_tracks; p++) {
        char hex[8];
        color_hex(p, hex);
        sleapc__rtext_put(t, "<span style=\"background:%s\"></span>", hex);
        sleapc__rtext_escaped(t, r->pr->track_names[p]);
    }
    sleapc__rtext_put(t, "<span style=\"background:#ccc\"></span>unmatched"
                         "<span style=\"background:#d62728;width:3px\"></span>ID switch</p>\n");
    sleapc__rtext_put(t, "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-size=\"11\">",
                      left + width + 20, height, left + width + 20, height);
    const double fw = F ? (double)width / (double)F : 1;
    for (int g = 0; g < T; g++) {
        const int y = top + g * (row_h + 10);
        sleapc__rtext_put(t, "<text x=\"4\" y=\"%d\">", y + row_h / 2 + 4);
        sleapc__rtext_escaped(t, r->gt->track_names[g]);
        sleapc__rtext_put(t, "</text>");
        /* runs of equal state */
        int64_t start = 0;
        for (int64_t k = 1; k <= F; k++) {
            const int a = r->assigned[start * T + g];
            if (k < F && r->assigned[k * T + g] == a)
                continue;
            if (a != -2) {
                char hex[8] = "#cccccc";
                if (a >= 0)
                    color_hex(a, hex);
                sleapc__rtext_put(t,
                                  "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
                                  "fill=\"%s\"><title>frames %lld-%lld</title></rect>",
                                  left + start * fw, y, (double)(k - start) * fw, row_h, hex,
                                  (long long)r->frame_idx[start], (long long)r->frame_idx[k - 1]);
            }
            start = k;
        }
    }
    for (int64_t s = 0; s < r->n_switches; s++) {
        const sleapc_et_switch *w = &r->switches[s];
        int64_t k = 0;
        while (k < F && r->frame_idx[k] != w->frame_idx)
            k++;
        const int y = top + w->gt_track * (row_h + 10);
        sleapc__rtext_put(t,
                          "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%d\" y2=\"%d\" stroke=\"#d62728\" "
                          "stroke-width=\"2\"><title>frame %lld: ",
                          left + k * fw, left + k * fw, y - 4, y + row_h + 4,
                          (long long)w->frame_idx);
        sleapc__rtext_escaped(t, r->pr->track_names[w->from]);
        sleapc__rtext_put(t, " to ");
        sleapc__rtext_escaped(t, r->pr->track_names[w->to]);
        sleapc__rtext_put(t, "</title></line>");
    }
    const int ya = top + T * (row_h + 10) + 8;
    for (int k = 0; k <= 4 && F > 0; k++) {
        const int64_t i = (F - 1) * k / 4;
        sleapc__rtext_put(t, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%lld</text>",
                          left + (i + 0.5) * fw, ya + 12, (long long)r->frame_idx[i]);
    }
    sleapc__rtext_put(t, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">frame</text></svg>\n",
                      left + width / 2, ya + 28);
}

sleapc_status sleapc__et_report(const sleapc_et_result *r, const char *path)
{
    sleapc_rtext t = {0};
    sleapc__report_begin(&t, "sleapc eval-tracking report");
    sleapc__rtext_put(&t, "<table><tr><td>ground truth</td><td>");
    sleapc__rtext_escaped(&t, r->gt->path);
    sleapc__rtext_put(&t, "</td></tr><tr><td>predictions</td><td>");
    sleapc__rtext_escaped(&t, r->pr->path);
    sleapc__rtext_put(&t,
                      "</td></tr><tr><td>matching per frame</td><td>%s %g%s</td></tr>"
                      "<tr><td>frames</td><td>%lld</td></tr></table>\n",
                      r->oks ? "Hungarian on 1 - OKS, OKS at least"
                             : "Hungarian on the mean distance of the shared nodes, at most",
                      r->threshold, r->oks ? "" : " px", (long long)r->n_frames);
    table(&t, r);
    timeline(&t, r);
    sleapc__report_end(&t);
    const sleapc_status st = sleapc__report_write(&t, path);
    sleapc__free(t.s);
    return st;
}
