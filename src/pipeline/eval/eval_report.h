/* The HTML report of eval and eval-tracking: one self-contained page (inline
 * SVG charts, frames as embedded PNG, no script, nothing fetched). */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_REPORT_H
#define SLEAPC_PIPELINE_EVAL_EVAL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/eval/eval_tracking.h"
#include "pipeline/eval/evaluation.h"

/* A growing text. */
typedef struct sleapc_rtext {
    char *s;
    size_t n, cap;
    bool failed; /* out of memory: later puts do nothing */
} sleapc_rtext;

void sleapc__rtext_put(sleapc_rtext *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s with &, <, >, " escaped. */
void sleapc__rtext_escaped(sleapc_rtext *t, const char *s);

/* The page's head (title, style) and tail. */
void sleapc__report_begin(sleapc_rtext *t, const char *title);
void sleapc__report_end(sleapc_rtext *t);

/* Charts (eval_report_svg.c). */
void sleapc__svg_curve(sleapc_rtext *t, const char *title, const double *x, const double *y, int n,
                       const char *x_label, const char *y_label, double y_max);
void sleapc__svg_histogram(sleapc_rtext *t, const char *title, const double *v, int64_t n,
                           double lo, double hi, int bins, const char *x_label);
/* One box (quartiles, whiskers at p5 / p95) per group; values: NaN skipped. */
void sleapc__svg_boxes(sleapc_rtext *t, const char *title, const char *const *names,
                       const double *values, int64_t n_rows, int n_groups, const char *y_label);

/* Frames of a labels file's video, for pictures (eval_report_frames.c). */
typedef struct sleapc_report_frames sleapc_report_frames;

/* Open the frames of video `video` of labels_path (found as SLEAP finds
 * them). NULL when unavailable; *why (static or thread-local text) says why. */
sleapc_report_frames *sleapc__report_frames_open(const char *labels_path, int video,
                                                 const char **why);
void sleapc__report_frames_close(sleapc_report_frames *f);

/* Frame idx as RGB into a new buffer (sleapc__free). */
sleapc_status sleapc__report_frame_rgb(sleapc_report_frames *f, int64_t idx, uint8_t **rgb,
                                       int64_t *height, int64_t *width);

/* The picture of a region of an RGB image, downscaled to at most max_side
 * px, as an <img> with a base64 PNG. */
void sleapc__report_image(sleapc_rtext *t, const uint8_t *rgb, int64_t height, int64_t width,
                          int64_t x0, int64_t y0, int64_t x1, int64_t y1, int max_side,
                          const char *caption);

/* The pages (eval_report.c, eval_report_tracking.c); written atomically. */
sleapc_status sleapc__ev_report(const sleapc_ev_result *r, const char *path);
sleapc_status sleapc__et_report(const sleapc_et_result *r, const char *path);

/* Write text to path atomically (eval_report_svg.c). */
sleapc_status sleapc__report_write(const sleapc_rtext *t, const char *path);

#endif
