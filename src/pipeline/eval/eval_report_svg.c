/* The report's text and its charts as inline SVG (see eval_report.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "pipeline/eval/eval_report.h"

void sleapc__rtext_put(sleapc_rtext *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = true;
            return;
        }
        if (t->s && t->n + (size_t)k < t->cap) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 1 << 16;
        while (cap < t->n + (size_t)k + 1)
            cap *= 2;
        char *s = sleapc__realloc(t->s, cap);
        if (!s) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

void sleapc__rtext_escaped(sleapc_rtext *t, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            sleapc__rtext_put(t, "&amp;");
        else if (*s == '<')
            sleapc__rtext_put(t, "&lt;");
        else if (*s == '>')
            sleapc__rtext_put(t, "&gt;");
        else if (*s == '"')
            sleapc__rtext_put(t, "&quot;");
        else
            sleapc__rtext_put(t, "%c", *s);
    }
}

void sleapc__report_begin(sleapc_rtext *t, const char *title)
{
    sleapc__rtext_put(t, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                         "<title>");
    sleapc__rtext_escaped(t, title);
    sleapc__rtext_put(
        t, "</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222;max-width:1520px}"
           "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px "
           "8px;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}"
           "svg{background:#fafafa;border:1px solid #ddd;margin:6px 12px 6px 0}"
           "figure{display:inline-block;margin:6px 12px 6px 0;vertical-align:top}"
           "figcaption{font-size:12px;max-width:480px}h2{margin-top:28px}"
           ".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px}"
           ".row{display:flex;flex-wrap:wrap;align-items:flex-start}</style>"
           "</head><body>\n<h1>");
    sleapc__rtext_escaped(t, title);
    sleapc__rtext_put(t, "</h1>\n");
}

void sleapc__report_end(sleapc_rtext *t)
{
    sleapc__rtext_put(t, "<p style=\"color:#888;font-size:12px\">Written by sleapc.</p>\n"
                         "</body></html>\n");
}

enum { W = 480, H = 300, L = 64, R = 16, T = 30, B = 44 };

static void frame(sleapc_rtext *t, const char *title, const char *x_label, const char *y_label)
{
    sleapc__rtext_put(t,
                      "<svg width=\"%d\" height=\"%d\" "
                      "viewBox=\"0 0 %d %d\" font-size=\"11\">",
                      W, H, W, H);
    sleapc__rtext_put(t, "<text x=\"%d\" y=\"18\" font-size=\"13\" font-weight=\"bold\">", L);
    sleapc__rtext_escaped(t, title);
    sleapc__rtext_put(t,
                      "</text><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>"
                      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>",
                      L, H - B, W - R, H - B, L, T, L, H - B);
    sleapc__rtext_put(t, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (L + W - R) / 2, H - 8);
    sleapc__rtext_escaped(t, x_label);
    sleapc__rtext_put(t,
                      "</text><text x=\"14\" y=\"%d\" text-anchor=\"middle\" "
                      "transform=\"rotate(-90 14 %d)\">",
                      (T + H - B) / 2, (T + H - B) / 2);
    sleapc__rtext_escaped(t, y_label);
    sleapc__rtext_put(t, "</text>");
}

static double px(double v, double lo, double hi)
{
    return L + (hi > lo ? (v - lo) / (hi - lo) : 0) * (W - L - R);
}

static double py(double v, double lo, double hi)
{
    return (H - B) - (hi > lo ? (v - lo) / (hi - lo) : 0) * (H - B - T);
}

static void y_ticks(sleapc_rtext *t, double hi)
{
    for (int k = 0; k <= 4; k++) {
        const double v = hi * k / 4;
        sleapc__rtext_put(t, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>", L - 4,
                          py(v, 0, hi) + 4, v);
        sleapc__rtext_put(t,
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>",
                          L + 1, W - R, py(v, 0, hi), py(v, 0, hi));
    }
}

void sleapc__svg_curve(sleapc_rtext *t, const char *title, const double *x, const double *y, int n,
                       const char *x_label, const char *y_label, double y_max)
{
    frame(t, title, x_label, y_label);
    y_ticks(t, y_max);
    const double lo = n ? x[0] : 0, hi = n ? x[n - 1] : 1;
    for (int k = 0; k < n; k++)
        sleapc__rtext_put(t, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>",
                          px(x[k], lo, hi), H - B + 14, x[k]);
    sleapc__rtext_put(t, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
    for (int k = 0; k < n; k++)
        if (isfinite(y[k]))
            sleapc__rtext_put(t, "%.1f,%.1f ", px(x[k], lo, hi), py(y[k], 0, y_max));
    sleapc__rtext_put(t, "\"/>");
    for (int k = 0; k < n; k++)
        if (isfinite(y[k]))
            sleapc__rtext_put(t, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f77b4\"/>",
                              px(x[k], lo, hi), py(y[k], 0, y_max));
    sleapc__rtext_put(t, "</svg>\n");
}

void sleapc__svg_histogram(sleapc_rtext *t, const char *title, const double *v, int64_t n,
                           double lo, double hi, int bins, const char *x_label)
{
    int64_t counts[64] = {0}, top = 1;
    bins = bins < 1 ? 1 : bins > 64 ? 64 : bins;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        int b = hi > lo ? (int)floor((v[i] - lo) / (hi - lo) * bins) : 0;
        b = b < 0 ? 0 : b >= bins ? bins - 1 : b;
        if (++counts[b] > top)
            top = counts[b];
    }
    frame(t, title, x_label, "count");
    y_ticks(t, (double)top);
    const double bw = (double)(W - L - R) / bins;
    for (int b = 0; b < bins; b++) {
        const double h = (double)counts[b] / (double)top * (H - B - T);
        sleapc__rtext_put(t,
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                          "fill=\"#4c9be8\"><title>%lld</title></rect>",
                          L + b * bw + 1, H - B - h, bw - 2, h, (long long)counts[b]);
    }
    for (int k = 0; k <= 4; k++)
        sleapc__rtext_put(t, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3g</text>",
                          L + k * (W - L - R) / 4.0, H - B + 14, lo + (hi - lo) * k / 4);
    sleapc__rtext_put(t, "</svg>\n");
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *s, int64_t n, double q)
{
    const double pos = q * (double)(n - 1);
    const int64_t i = (int64_t)floor(pos);
    return i + 1 < n ? s[i] + (s[i + 1] - s[i]) * (pos - (double)i) : s[n - 1];
}

void sleapc__svg_boxes(sleapc_rtext *t, const char *title, const char *const *names,
                       const double *values, int64_t n_rows, int n_groups, const char *y_label)
{
    double *col = sleapc__malloc(sizeof(double) * (size_t)(n_rows + 1));
    double *stats = sleapc__malloc(sizeof(double) * 5 * (size_t)(n_groups + 1));
    if (!col || !stats) {
        t->failed = true;
        sleapc__free(col);
        sleapc__free(stats);
        return;
    }
    double top = 1e-9;
    for (int g = 0; g < n_groups; g++) {
        int64_t k = 0;
        for (int64_t r = 0; r < n_rows; r++)
            if (isfinite(values[r * n_groups + g]))
                col[k++] = values[r * n_groups + g];
        qsort(col, (size_t)k, sizeof(double), cmp_double);
        static const double qs[5] = {0.05, 0.25, 0.5, 0.75, 0.95};
        for (int q = 0; q < 5; q++)
            stats[g * 5 + q] = k ? quantile(col, k, qs[q]) : NAN;
        if (k && stats[g * 5 + 4] > top)
            top = stats[g * 5 + 4];
    }
    frame(t, title, "node (box: quartiles, whiskers: 5th and 95th percentiles)", y_label);
    y_ticks(t, top);
    const double bw = (double)(W - L - R) / (n_groups ? n_groups : 1);
    for (int g = 0; g < n_groups; g++) {
        const double cx = L + (g + 0.5) * bw, half = fmin(bw * 0.3, 14);
        const double *s = stats + g * 5;
        if (isfinite(s[2])) {
            sleapc__rtext_put(t,
                              "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"#555\"/>",
                              cx, cx, py(s[0], 0, top), py(s[4], 0, top));
            sleapc__rtext_put(t,
                              "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                              "fill=\"#9ecae1\" stroke=\"#333\"><title>",
                              cx - half, py(s[3], 0, top), 2 * half,
                              fmax(py(s[1], 0, top) - py(s[3], 0, top), 1));
            sleapc__rtext_escaped(t, names[g]);
            sleapc__rtext_put(t, ": median %.3g</title></rect>", s[2]);
            sleapc__rtext_put(t,
                              "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"#d62728\" stroke-width=\"2\"/>",
                              cx - half, cx + half, py(s[2], 0, top), py(s[2], 0, top));
        }
        sleapc__rtext_put(t,
                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" "
                          "transform=\"rotate(-40 %.1f %d)\">",
                          cx, H - B + 12, cx, H - B + 12);
        sleapc__rtext_escaped(t, names[g]);
        sleapc__rtext_put(t, "</text>");
    }
    sleapc__rtext_put(t, "</svg>\n");
    sleapc__free(col);
    sleapc__free(stats);
}

sleapc_status sleapc__report_write(const sleapc_rtext *t, const char *path)
{
    if (t->failed || !t->s)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "report: %s: out of memory", path);
    sleapc_atomic_file af;
    sleapc_status st = sleapc__atomic_open(path, &af);
    if (st)
        return st;
    if (fwrite(t->s, 1, t->n, af.f) != t->n) {
        sleapc__atomic_abort(&af);
        return sleapc__fail(SLEAPC_ERR_IO, "report: %s: write failed", path);
    }
    return sleapc__atomic_commit(&af);
}
