/* One network stage of a layer: a model, its backend, and the preprocessing
 * chain in front of it, which the model's convention (convention.h) runs:
 * sleap-nn's (inference/layers/base.py, uint8 model input) or SLEAP 1.x's
 * (preprocess_tf.h, float32 model input). Frames of a batch share one size,
 * so one preprocessing plan serves the whole batch. */
#ifndef SLEAPC_LAYERS_STAGE_H
#define SLEAPC_LAYERS_STAGE_H

#include "backends/backend.h"
#include "layers/convention.h"
#include "layers/ops/preprocess.h"
#include "model/model_impl.h"
#include "sleapc/predictor.h"

typedef struct sleapc_stage {
    const sleapc_model *model;      /* borrowed */
    sleapc_backend *be;
    sleapc_preprocess_opts pp;
    const sleapc_convention *convention; /* the model's, picked at init */
    sleapc_preprocess_plan plan;    /* for the last frame size seen */
    bool have_plan;
    void *input;                    /* (B, C, H, W) model input of convention->input_dtype */
    size_t input_cap;               /* bytes */
    void *scratch;
    size_t scratch_cap;
    sleapc_tensor_map out;          /* the last forward's outputs (backend-owned) */
    sleapc_precision precision;
    sleapc_conv_method conv;        /* the predictor's, for a backend made later */
    double bf16_error;              /* bf16 or fp16: worst head's relative L2 from float32
                                       on the first batch; < 0 until measured */
    double bf16_moved;              /* bf16 or fp16: expected share of keypoints it moves
                                       by a grid cell, or drops (bf16_fragility.h);
                                       < 0 until measured */
    float peak_threshold;           /* the layer's, for that estimate */
    int n_threads;                  /* the predictor's, for a backend made later */
    bool flat_tops;                 /* local peaks as sleap-nn 0.3.5 finds them (peaks.h);
                                       false under compat 0.3.3 */
} sleapc_stage;

/* Create the backend for m (o: backend, threads, precision), warm it up on a small input and check it returns
 * every head the model type needs (a mismatch fails here, not at frame 10,000).
 * The convention is the model's (sleapc__convention_of). */
sleapc_status sleapc__stage_init(sleapc_stage *s, const sleapc_model *m,
                                 const sleapc_predictor_opts *o, const sleapc_preprocess_opts *pp);
void sleapc__stage_free(sleapc_stage *s);

/* Preprocess b frames (b, c, h, w) uint8 and run the network. */
sleapc_status sleapc__stage_run(sleapc_stage *s, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w);

/* ---- Overlap: the next batch's forward on the device while the host
 * finishes this one (layer.h's collect and finish; the predictor drives
 * them). ----
 * Whether the stage may overlap at all: its backend has submit/collect and
 * the overlap is on (SLEAPC_OVERLAP=0 or 1; unset: on unless the device is
 * the CPU, where a software device shares the host's cores). */
bool sleapc__stage_overlap_on(const sleapc_stage *s);
/* Whether a batch of (c, h, w) frames may be begun now: overlap on, a
 * reduced precision's first-batch check done, and the plan for that size
 * (made here) preprocesses on the host (a batch cut on the device runs
 * forward_windows, which waits). */
bool sleapc__stage_async(sleapc_stage *s, int64_t c, int64_t h, int64_t w);
/* Preprocess b frames as stage_run does on the host and submit them; the
 * frames are not kept. */
sleapc_status sleapc__stage_begin(sleapc_stage *s, const uint8_t *frames, int64_t b, int64_t c,
                                  int64_t h, int64_t w);
/* Wait for the oldest begun batch: its outputs in s->out, as stage_run
 * leaves them, until the second begin after it. */
sleapc_status sleapc__stage_collect(sleapc_stage *s);
/* Drop every begun batch not yet collected (an error or a stop ends the
 * run); the current error message is kept. */
void sleapc__stage_drain(sleapc_stage *s);

/* For layers that build the model input themselves (tiles): the input
 * buffer for b uint8 inputs of (c, h, w), grown as needed, then a forward on
 * it. Only for a convention whose model input is uint8. */
sleapc_status sleapc__stage_input_u8(sleapc_stage *s, int64_t b, int64_t c, int64_t h, int64_t w,
                                     uint8_t **out);
sleapc_status sleapc__stage_forward_input(sleapc_stage *s, int64_t b, int64_t c, int64_t h,
                                          int64_t w);

/* A forward on a float32 input (b, c, h, w) the caller built and keeps
 * (an embedding model's standardized crops: its graph takes its input as
 * it is). No reduced-precision check. */
sleapc_status sleapc__stage_forward_f32(sleapc_stage *s, const float *x, int64_t b, int64_t c,
                                        int64_t h, int64_t w);

/* A head output of the last run, checked to be a 4-D map (or a 2-D vector
 * when vector is true) with b samples. */
sleapc_status sleapc__stage_head(const sleapc_stage *s, const char *name, bool vector,
                                 const sleapc_tensor **out);

/* Ask the stage's backend to find head's global peaks itself, as
 * sleapc__peaks_find_global would (backend.h's device_global_peaks): true
 * when it will (the head's maps then stay on the device), false when the
 * layer finds them on the host. Legacy stages never ask (SLEAP 1.x refines
 * otherwise). */
bool sleapc__stage_device_global_peaks(sleapc_stage *s, const char *head, double threshold,
                                       int refine_k);

/* The peaks the backend found in the last run of b samples of n channels:
 * (b, n, 2) map cells and (b, n) values, as sleapc__peaks_find_global writes
 * them. SLEAPC_ERR_BACKEND when it returned none of that shape. */
sleapc_status sleapc__stage_device_peaks(const sleapc_stage *s, int64_t b, int64_t n,
                                         const float **peaks, const float **vals);

/* ---- Inputs cut on the device (stage_windows.c; backend.h's windows) ----
 * Whether the stage's inputs can be cut, resized and padded on its
 * backend's device now: its convention's preprocessing is the one the
 * windows repeat, its backend has them, and no first-batch precision check
 * needs the host's input. */
bool sleapc__stage_windows(const sleapc_stage *s);
/* Whether plan p resizes (size matcher or input scale) by the uint8 kernel,
 * which the windows do not repeat. */
bool sleapc__plan_int_resize(const sleapc_preprocess_plan *p);
/* Whether stage_run cuts frames of s->plan's size on the device
 * (run_windows_frames below) rather than preprocessing them on the host. */
bool sleapc__stage_windows_due(const sleapc_stage *s);
/* stage_run's device path: when the plan for these frames does anything
 * (channels, size matcher, scale, stride pad), the frames go up as they are
 * and the device preprocesses them; *done false: the host must. */
sleapc_status sleapc__stage_run_windows_frames(sleapc_stage *s, const uint8_t *frames, int64_t b,
                                               int64_t c, int64_t h, int64_t w, bool *done);
/* Top-down stage 2: the batch's frames (b, c, h, w) go up once, then each
 * run takes m crops of (crop_h, crop_w) at origins (m, 2) of frame[m]
 * through the stage's own channels, scale and stride pad (not its size
 * matcher), as stage_run on the host's crops would. source: NULL, the
 * frames uploaded are the crop source (c channels); else they are the
 * frames that preprocess plan (a size matcher, sleap-nn's crop source)
 * makes it of on the device first. SLEAPC_ERR_UNSUPPORTED (no error
 * recorded) when the backend cannot: the layer cuts them on the host. */
sleapc_status sleapc__stage_upload_frames(sleapc_stage *s, const uint8_t *frames, int64_t b,
                                          int64_t c, int64_t h, int64_t w);
sleapc_status sleapc__stage_run_crops(sleapc_stage *s, int64_t m, const int32_t *frame,
                                      const int64_t *origins, int64_t c, int64_t crop_h,
                                      int64_t crop_w, const sleapc_preprocess_plan *source);
/* The plan for (c, h, w) inputs in s->plan, remade only when the size changes. */
sleapc_status sleapc__stage_plan(sleapc_stage *s, int64_t c, int64_t h, int64_t w);

/* What the stage runs on now (the layers' stages op). */
sleapc_stage_info sleapc__stage_info(const sleapc_stage *s);

/* Stride of the named head (from the model). */
int sleapc__stage_head_stride(const sleapc_stage *s, const char *name);

#endif
