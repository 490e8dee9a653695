/* A one-line progress bar on stderr (only when it is a terminal). */
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
