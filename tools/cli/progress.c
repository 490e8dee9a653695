/* Progress of a run: a bar on a terminal, a line every few seconds in logs
 * (stderr not a terminal), or sleap-nn's JSON lines on stdout for --gui. */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

bool cli_progress_wanted(bool quiet)
{
    return !quiet && isatty(fileno(stderr));
}

void cli_progress_show(const sleapc_progress *p, void *user)
{
    (void)user;
    if (p->total <= 0) {
        /* A live source: no end to measure against. */
        fprintf(stderr, "\r%lld frames  %.1f FPS ", (long long)p->done, p->fps);
        fflush(stderr);
        return;
    }
    const int width = 30;
    double frac = p->total > 0 ? (double)p->done / (double)p->total : 1.0;
    int fill = (int)(frac * width + 0.5);
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[width] = '\0';
    double eta = p->fps > 0 ? (double)(p->total - p->done) / p->fps : 0.0;
    fprintf(stderr, "\r[%s] %lld/%lld frames  %.1f FPS  ETA %02d:%02d ", bar, (long long)p->done,
            (long long)p->total, p->fps, (int)(eta / 60), (int)eta % 60);
    if (p->done >= p->total)
        fputc('\n', stderr);
    fflush(stderr);
}

void cli_progress_init(cli_progress_state *s, cli_progress_mode mode, double interval_s,
                       const char *label)
{
    s->mode = mode;
    s->interval_s = interval_s;
    s->last_s = -1e9;
    s->label = label;
}

static void eta_text(double eta, char *buf, size_t n)
{
    long t = (long)(eta + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%02ld:%02ld", t / 60, t % 60);
}

void cli_progress_update(cli_progress_state *s, const sleapc_progress *p)
{
    bool last = p->total > 0 && p->done >= p->total;
    double eta = p->fps > 0 ? (double)(p->total - p->done) / p->fps : 0.0;
    switch (s->mode) {
    case CLI_PROGRESS_NONE:
        return;
    case CLI_PROGRESS_BAR:
        cli_progress_show(p, NULL);
        return;
    case CLI_PROGRESS_GUI:
        /* sleap-nn's _gui_progress_callback: at most 4 lines a second, and
         * always the last one. */
        if (!last && p->elapsed_s - s->last_s < 0.25)
            return;
        if (p->total <= 0) {
            printf("{\"n_processed\": %lld, \"rate\": %.1f}\n", (long long)p->done, p->fps);
            fflush(stdout);
            s->last_s = p->elapsed_s;
            return;
        }
        printf("{\"n_processed\": %lld, \"n_total\": %lld, \"rate\": %.1f, \"eta\": %.1f}\n",
               (long long)p->done, (long long)p->total, p->fps, eta);
        fflush(stdout);
        s->last_s = p->elapsed_s;
        return;
    case CLI_PROGRESS_LOG:
        if (last || p->elapsed_s - s->last_s < s->interval_s)
            return;  /* the summary line reports the end */
        if (s->last_s < 0 && p->elapsed_s < s->interval_s)
            return;
        if (p->total <= 0) {
            fprintf(stderr, "sleapc: %s: %lld frames, %.1f FPS\n", s->label, (long long)p->done,
                    p->fps);
            fflush(stderr);
        } else {
            char e[32];
            eta_text(eta, e, sizeof e);
            fprintf(stderr, "sleapc: %s: %lld/%lld frames (%.0f%%), %.1f FPS, ETA %s\n", s->label,
                    (long long)p->done, (long long)p->total,
                    p->total > 0 ? 100.0 * (double)p->done / (double)p->total : 100.0, p->fps, e);
            fflush(stderr);
        }
        s->last_s = p->elapsed_s;
        return;
    }
}
