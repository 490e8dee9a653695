/* The backend contract: what every backend provides and every layer relies
 * on. It mirrors sleap-nn's ModelBackend (inference/layers/backends/base.py):
 * a device string, a baked-post-processing flag, a forward pass from
 * (B,C,H,W) to named outputs, and a warmup hook: the core table
 * (sleapc_backend_ops). What a device adds (peaks, PAF scores, inputs cut
 * there, a forward in two steps, maps kept there) is a second table that a
 * backend may offer (sleapc_backend_device_ops), or hand over from the
 * backend it runs on (delegate: "auto"). Callers reach both through the
 * wrappers below. The host references the device ops equal lie below this
 * floor (core/). */
#ifndef SLEAPC_BACKENDS_BACKEND_H
#define SLEAPC_BACKENDS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor_map.h"
#include "model/graph.h"
#include "sleapc/runner.h"
#include "sleapc/sleapc.h"

/* Versions both tables below: 2 split the device ops from the core ones. */
#define SLEAPC_BACKEND_ABI 2

typedef struct sleapc_backend sleapc_backend;

/* One batch's candidate connections for device_paf_scores, with the
 * options of sleapc__paf_score_lines. */
typedef struct sleapc_backend_paf_lines {
    int64_t n;                    /* candidates */
    const int32_t *sample;        /* (n) sample in the last forward's batch */
    const int32_t *edge;          /* (n) edge k: the head's channels 2k (x), 2k + 1 (y) */
    const float (*src)[2];        /* (n) source peak (x, y), input pixels */
    const float (*dst)[2];        /* (n) destination peak (x, y) */
    const float *t;               /* (n_points) the line positions, sleapc__paf_linspace */
    int n_points;                 /* >= 1 */
    int paf_stride;               /* >= 1 */
    float max_edge_length;        /* float32 of sleapc__paf_max_edge_length */
    float dist_penalty_weight;
} sleapc_backend_paf_lines;
/* The network's input cut from uploaded frames on the device
 * (forward_windows). First, optionally, each frame as sleap-nn's uint8
 * preprocessing makes it before the input scale: its channels converted to
 * c (sleapc__channels_coerce_u8, core/channels_u8.h: 1 -> 3 replicated,
 * 4 -> 3 alpha dropped, 3 or 4 -> 1 the luma of sleapc__channels_luma_u8,
 * float32 products and sums unfused, truncated), then sleap-nn's size
 * matcher: resized to match_h x match_w as below and padded with 0 bottom
 * and right to sized_h x sized_w; "the frame" below is that image. Then
 * sample k is the window of frame frame[k] whose top-left pixel is
 * origin[k] = (x, y), win_h x win_w pixels, 0 where it leaves the frame
 * (an integer gather: top-down crops); resized to rs_h x rs_w as
 * sleapc__resize_aa_u8 (core/resize_aa_u8.h) resizes uint8 images, rounding
 * included (equal sizes: no resize); padded with 0 bottom and right to
 * out_h x out_w; then normalised as forward's uint8 input. So a frame
 * scaled by input_scale (the uint8 result of the steps above) goes up at
 * full size, and a top-down batch's frames go up once for all its crops. */
typedef struct sleapc_backend_windows {
    int64_t n;              /* samples */
    const int32_t *frame;   /* (n): each in [0, F) of the last upload */
    const int64_t *origin;  /* (n, 2): x, y; any value (far out: all 0) */
    int64_t win_h, win_w;   /* >= 1 */
    int64_t rs_h, rs_w;     /* >= 1 */
    int64_t out_h, out_w;   /* >= rs_h, rs_w: the model input's size */
    /* Optional, all 0: none. */
    int64_t c;                /* the channels to convert to; 0: the upload's */
    int64_t match_h, match_w; /* the size matcher's resize; 0: none (no pad either) */
    int64_t sized_h, sized_w; /* its pad: >= match_h, match_w */
} sleapc_backend_windows;

/* Device ops: work a backend may do where its forward's outputs are (a
 * GPU), so that less comes back to the host. Every member is optional (NULL:
 * the layer does it on the host); some come in pairs. Each equals a host
 * reference below the backends' floor (core/peaks.h, core/paf.h,
 * core/channels_u8.h, core/resize_aa_u8.h), as stated. */
struct sleapc_backend_device_ops {
    /* Optional (NULL: peaks are found on the host). Device peak finding, a
     * step short of baked post-processing: the backend finds the global
     * peaks of head `head` as sleapc__peaks_find_global (core/peaks.h)
     * would on its maps, in map cells, so only they come back. From the call
     * on, forward's out holds "peaks" (B, C, 2) and "peak_vals" (B, C) in
     * place of that head. The backend refuses (SLEAPC_ERR_UNSUPPORTED) what
     * it cannot compute as the host does (a head it hands the host to finish,
     * a patch side out of range); the layer then finds them on the host. */
    sleapc_status (*device_global_peaks)(sleapc_backend *be, const char *head, double threshold,
                                         int refine_k);
    /* Optional, both or neither (NULL: forward only). A forward in two
     * steps, so that the host prepares the next batch and finishes the last
     * while the device runs: submit starts x's forward (x is not kept) and
     * returns; collect waits for the oldest forward submitted and not yet
     * collected and fills out as forward would, valid until the next
     * collect, forward or destroy or the second submit after it (the next
     * batch may run while the host reads them). At most SLEAPC_BACKEND_MAX_IN_FLIGHT are
     * in flight; a steady run of one shape allocates nothing. */
    sleapc_status (*submit)(sleapc_backend *be, const sleapc_tensor *x);
    sleapc_status (*collect)(sleapc_backend *be, sleapc_tensor_map *out);
    /* Optional (NULL: PAF lines are scored on the host). Device PAF line
     * scoring: the backend scores `lines` against head `head`'s maps of the
     * last forward (or collect), where they still are, as sleapc__paf_score_lines
     * (core/paf.h, sleap-nn's scoring, not SLEAP 1.x's) scores them,
     * into scores (lines->n), so only the scores come back. Within a few ulp
     * of the host's: a GPU may round division, square root and fma more
     * loosely than IEEE (Vulkan allows it). The backend refuses (SLEAPC_ERR_UNSUPPORTED) what it
     * cannot compute as the host does (a head it hands the host to finish,
     * too many points per line); the layer then scores on the host. */
    sleapc_status (*device_paf_scores)(sleapc_backend *be, const char *head,
                                       const sleapc_backend_paf_lines *lines, float *scores);
    /* Optional, both or neither (NULL: the layer cuts, resizes and pads its
     * inputs on the host). upload_frames: a batch of uint8 frames
     * (F, C, H, W), kept on the device until the next upload. forward_windows:
     * a forward whose input is cut from them (sleapc_backend_windows above),
     * with forward's outputs; the result equals forward on the host's
     * converted, size-matched, cut, resized, padded uint8 input to the bit
     * where the device rounds every float32 product and sum once and fuses
     * the resize's fmaf taps; a device that does not fuse them moves a
     * resized sum by at most 6 * 2^-15, so a uint8 pixel by 1 only where the
     * sum lies that close to a half (after the size matcher, also where a
     * pixel the resize reads moved so).
     * SLEAPC_ERR_UNSUPPORTED, with no error
     * recorded, for what the backend cannot cut (the layer then does it on
     * the host). */
    sleapc_status (*upload_frames)(sleapc_backend *be, const sleapc_tensor *frames);
    sleapc_status (*forward_windows)(sleapc_backend *be, const sleapc_backend_windows *w,
                                     sleapc_tensor_map *out);
    /* Optional (NULL: local peaks are found on the host). The same for the
     * local peaks of head `head`, as sleapc__peaks_find_local would find
     * them, in its order (sample, row, column, channel), with room for
     * per_map peaks a (sample, channel) map on average. From the call on,
     * forward's out holds, in place of that head, "local_peak_counts" (B)
     * int32 (a sample's peaks), "local_peaks" (n, 2) refined (x, y) in map
     * cells, "local_peak_vals" (n) and "local_peak_inds" (n, 4) int32
     * (sample, channel, grid x, grid y); a batch with more peaks than the
     * room has the head's maps instead, as without the call. Refusals as
     * for device_global_peaks (also: the head's global peaks are asked for). */
    sleapc_status (*device_local_peaks)(sleapc_backend *be, const char *head, double threshold,
                                        int refine_k, int per_map);
    /* Optional, both or neither (NULL: every head comes back). For a head
     * whose every use happens on the device (device_paf_scores):
     * device_keep_head(keep true) keeps head `head`'s maps there from the
     * call on: forward's out still holds the head, with its shape and data
     * NULL (nothing copied down); keep false brings them back again.
     * device_fetch_head brings the last forward's maps of a kept head down
     * on demand (the host's fall-backs), into that tensor of out (the map
     * forward filled), valid as forward's outputs. Refusals as for
     * device_global_peaks (also: the head's peaks are asked for). */
    sleapc_status (*device_keep_head)(sleapc_backend *be, const char *head, bool keep);
    sleapc_status (*device_fetch_head)(sleapc_backend *be, const char *head,
                                       sleapc_tensor_map *out);
    /* Optional (NULL: the layer reads the maps on the host). Head `head`'s
     * maps of the last forward (kept on the device or not) read at n cells
     * (sample, y, x), every channel, as forward hands them out (its sigmoid
     * included), bit for bit: values[i * C + c] = maps[cells[i][0], c,
     * cells[i][1], cells[i][2]] for the head's C channels; so only those
     * values come back (multi-class bottom-up's class maps at the peaks).
     * SLEAPC_ERR_INVALID_ARG for a cell outside the maps; refusals as for
     * device_paf_scores. */
    sleapc_status (*device_sample_head)(sleapc_backend *be, const char *head, int64_t n,
                                        const int32_t (*cells)[3], float *values);
};

struct sleapc_backend_ops {
    uint32_t abi;      /* SLEAPC_BACKEND_ABI; checked at construction */
    const char *name;  /* "native", "onednn", "xnnpack", ... */
    /* Required. x: (B,C,H,W) host tensor, uint8 or float32, not kept. out:
     * cleared, then filled with float32 NCHW host tensors (vectors (B,C))
     * named as sleap-nn names its heads, owned by the backend and valid until
     * the next forward or destroy. */
    sleapc_status (*forward)(sleapc_backend *be, const sleapc_tensor *x, sleapc_tensor_map *out);
    /* Required. Plan (allocate, pack) for input shape (B,C,H,W) and run once,
     * so that later forwards of that shape allocate nothing. */
    sleapc_status (*warmup)(sleapc_backend *be, const int64_t shape[4]);
    /* Required. Frees be itself. */
    void (*destroy)(sleapc_backend *be);
    /* Optional (NULL: the thread count is fixed at creation). */
    sleapc_status (*set_n_threads)(sleapc_backend *be, int n_threads);
    /* Optional (NULL: be runs its own forwards). A backend that runs its
     * forwards on another one ("auto") names the one whose device ops serve
     * be's callers now, NULL while it has chosen none: the wrappers below then
     * reach that backend's device table, and be has none of its own. */
    sleapc_backend *(*delegate)(sleapc_backend *be);
    /* Optional (NULL: forward only): what the backend's device adds. */
    const struct sleapc_backend_device_ops *device;
};

#define SLEAPC_BACKEND_MAX_IN_FLIGHT 2

struct sleapc_backend {
    const struct sleapc_backend_ops *ops;  /* first member */
    char device[16];                       /* "cpu", "cuda", "cuda:0"; fixed at creation */
    bool baked_postproc;                   /* outputs are "peaks"/"peak_vals", not maps */
    void *impl;                            /* the backend's own state */
    /* Set by sleapc__backend_create: the graph it runs, and the last input
     * shape whose memory was checked against what the process may take (a
     * smaller batch of that size needs no new check). */
    const sleapc_graph *graph;
    int64_t mem_checked[4];
    char device_name[64];                  /* the accelerator's name; "" on the CPU */
    int in_flight;                         /* submitted, not yet collected (the wrappers count) */
    bool fp16_math;                        /* fp16: products in binary16 too (Vulkan
                                              shaderFloat16), not only storage */
};

typedef struct sleapc_backend_opts {
    int n_threads;               /* <= 0: one per core */
    sleapc_precision precision;  /* a backend that cannot honour it returns
                                    SLEAPC_ERR_UNSUPPORTED from create */
    unsigned bf16_keep;          /* bf16: the nodes kept in float32
                                    (bf16_policy.h bits); 0: the default */
    const char *device;          /* NULL/"auto": the backend's choice; "cpu",
                                    "gpu[:N]", "cuda[:N]", "mps": see README */
    bool from_auto;              /* created by "auto", not asked for by name: a
                                    software GPU emulation refuses */
    sleapc_conv_method conv;     /* native: 3x3 convs direct or Winograd */
    int winograd_tile;           /* native, conv WINOGRAD: F(m) on every 3x3 conv,
                                    accurate or not (tests); 0: chosen per layer */
    bool pick_bf16_direct;       /* native bf16, conv auto (tests): every 3x3 conv
                                    with an AVX512-BF16 direct twin runs it, untimed */
    bool input_as_is;            /* onnx-baked: the export's networks take their
                                    inputs as they are (an embedding export's
                                    standardized crop), never divided by 255 */
} sleapc_backend_opts;

struct sleapc_backend_factory {
    const char *name;
    /* 0: cannot run on this machine; higher is tried first by "auto" and
     * serves the shapes too small for it to measure. */
    int (*score)(void);
    sleapc_status (*create)(const sleapc_graph *g, const sleapc_backend_opts *opts,
                            sleapc_backend **out);
    /* Optional: the version of the library it runs on ("3.5.3"), which keys
     * what "auto" measured (an upgraded library is measured again). */
    void (*version)(char *out, size_t cap);
    /* Optional (NULL: runs on the CPU only): the accelerators it can drive,
     * into out[0..cap); returns how many there are. */
    int (*list_devices)(sleapc_device_info *out, int cap);
};

/* Find the factory by name ("auto": measure the backends that can run g and
 * keep the fastest, see backend_auto.h), create the backend and
 * check it conforms; a non-conforming backend is destroyed and refused with
 * SLEAPC_ERR_BACKEND naming it and what is wrong. */
sleapc_status sleapc__backend_create(const char *name, const sleapc_graph *g,
                                     const sleapc_backend_opts *opts, sleapc_backend **out);

/* Create through an explicit factory (used by the registry and by tests). */
sleapc_status sleapc__backend_create_from(const struct sleapc_backend_factory *f,
                                          const sleapc_graph *g, const sleapc_backend_opts *opts,
                                          sleapc_backend **out);

/* The conformance check run at construction: ABI, name, required functions,
 * device string. */
sleapc_status sleapc__backend_check(const sleapc_backend *be);

/* Wrappers layers call (never be->ops directly): argument checks, defaults. */

/* The device table that serves be's callers and, into *target (may be
 * NULL), the backend it belongs to: be's own, or its delegate's (for
 * "auto", the backend it chose once it has chosen); NULL when none. The
 * device wrappers below call it; callers ask them, not the table. */
const struct sleapc_backend_device_ops *sleapc__backend_device_ops(sleapc_backend *be,
                                                                   sleapc_backend **target);
sleapc_status sleapc__backend_forward(sleapc_backend *be, const sleapc_tensor *x,
                                      sleapc_tensor_map *out);
sleapc_status sleapc__backend_warmup(sleapc_backend *be, const int64_t shape[4]);
/* The memory a backend's plan for input shape (B,C,H,W) of g takes: the
 * arena of the shared memory planner (model/graph_plan.h) plus an eighth; -1 when the shape does not
 * fit g, -2 out of memory. The wrappers check it against the process's budget before a
 * backend plans a new shape. */
int64_t sleapc__backend_mem_need(const sleapc_graph *g, const int64_t shape[4]);
/* Nanoseconds this thread has spent in sleapc__backend_forward so far, less
 * what "auto" spent there measuring (sleapc__backend_setup_ns). */
int64_t sleapc__backend_forward_ns(void);
/* Nanoseconds this thread has spent choosing backends ("auto" measuring):
 * one-time costs a rate or an estimate of time left must leave out. */
int64_t sleapc__backend_setup_ns(void);
void sleapc__backend_add_setup_ns(int64_t ns);

/* The run starting on this thread will put about `samples` inputs through
 * its networks (frames; 0: not known, e.g. a live source): "auto" spends on
 * measuring no more than such a run can repay. run_end forgets it (a forward
 * outside a run is not budgeted). Each run_begin starts a new run id. */
void sleapc__backend_run_begin(int64_t samples);
void sleapc__backend_run_end(void);
int64_t sleapc__backend_run_samples(void);
uint64_t sleapc__backend_run_id(void);
sleapc_status sleapc__backend_set_n_threads(sleapc_backend *be, int n_threads);
/* Ask be to find head's global peaks itself (device_global_peaks above);
 * SLEAPC_ERR_UNSUPPORTED, with no error recorded, when it cannot. */
sleapc_status sleapc__backend_device_global_peaks(sleapc_backend *be, const char *head,
                                                  double threshold, int refine_k);
/* The two-step forward (submit/collect above). Whether be has it: a caller
 * without it calls forward. submit refuses (SLEAPC_ERR_STATE) a third
 * forward in flight, collect one with none; forward, warmup,
 * device_global_peaks and device_paf_scores refuse while any is in flight. */
bool sleapc__backend_can_submit(sleapc_backend *be);
sleapc_status sleapc__backend_submit(sleapc_backend *be, const sleapc_tensor *x);
sleapc_status sleapc__backend_collect(sleapc_backend *be, sleapc_tensor_map *out);
/* Score PAF lines on the device (device_paf_scores above); SLEAPC_ERR_UNSUPPORTED,
 * with no error recorded, when be cannot. */
sleapc_status sleapc__backend_device_paf_scores(sleapc_backend *be, const char *head,
                                                const sleapc_backend_paf_lines *lines,
                                                float *scores);
/* upload_frames and forward_windows above: SLEAPC_ERR_UNSUPPORTED, with no
 * error recorded, when be has no such ops or cannot cut these windows. */
bool sleapc__backend_has_windows(sleapc_backend *be);
sleapc_status sleapc__backend_upload_frames(sleapc_backend *be, const sleapc_tensor *frames);
sleapc_status sleapc__backend_forward_windows(sleapc_backend *be, const sleapc_backend_windows *w,
                                              sleapc_tensor_map *out);
/* Ask be to find head's local peaks itself (device_local_peaks above);
 * SLEAPC_ERR_UNSUPPORTED, with no error recorded, when it cannot. */
sleapc_status sleapc__backend_device_local_peaks(sleapc_backend *be, const char *head,
                                                 double threshold, int refine_k, int per_map);
/* Keep head's maps on be's device, or bring them back (device_keep_head
 * above); SLEAPC_ERR_UNSUPPORTED, with no error recorded, when be cannot.
 * Both refuse (SLEAPC_ERR_STATE) while a forward is in flight. */
sleapc_status sleapc__backend_device_keep_head(sleapc_backend *be, const char *head, bool keep);
/* Head's maps of the last forward (out: the map it filled) on the host: a
 * head that came back is left as it is, a kept one is fetched
 * (device_fetch_head above). */
sleapc_status sleapc__backend_device_fetch_head(sleapc_backend *be, const char *head,
                                                sleapc_tensor_map *out);
/* Read head's maps on the device at cells (device_sample_head above);
 * SLEAPC_ERR_UNSUPPORTED, with no error recorded, when be cannot. */
sleapc_status sleapc__backend_device_sample_head(sleapc_backend *be, const char *head, int64_t n,
                                                 const int32_t (*cells)[3], float *values);
void sleapc__backend_destroy(sleapc_backend *be);
/* The name of the backend that runs be's forwards: be's own, or for "auto"
 * the one it chose (the best-scoring one until it has measured). */
const char *sleapc__backend_name(const sleapc_backend *be);

/* The device string and accelerator name of the backend that runs be's
 * forwards (for "auto", the one it chose). */
const char *sleapc__backend_device(const sleapc_backend *be);
const char *sleapc__backend_device_name(const sleapc_backend *be);
/* Whether be (for "auto", the backend it chose) computes fp16 products in
 * binary16 (fp16 arithmetic), not only stores binary16. */
bool sleapc__backend_fp16_math(const sleapc_backend *be);

/* "fp32", "bf16", "fp16", "bf16-emulated" ("?" for another value). */
const char *sleapc__precision_name(sleapc_precision precision);

/* Whether f may serve a device request: NULL, "" and "auto" let every
 * backend; "cpu" the CPU backends (and, asked for by name, an accelerator
 * backend on a software device); any other request the accelerator backends
 * (those that list devices). by_name: f was named, not chosen by "auto". */
bool sleapc__backend_serves_device(const struct sleapc_backend_factory *f, const char *device,
                                   bool by_name);

/* Compiled-in factories (registry.c). */
int sleapc__backend_count(void);
const struct sleapc_backend_factory *sleapc__backend_factory(int i);

#endif
