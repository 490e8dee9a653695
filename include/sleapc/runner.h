/* Running one model's network on one backend: the forward pass alone, from a
 * preprocessed (B,C,H,W) input to sleap-nn's named head outputs. */
#ifndef SLEAPC_RUNNER_H
#define SLEAPC_RUNNER_H

#include "sleapc/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sleapc_runner sleapc_runner;

/* Arithmetic a backend computes in. A backend that cannot honour a precision
 * refuses it with SLEAPC_ERR_UNSUPPORTED at creation. */
typedef enum sleapc_precision {
    SLEAPC_PRECISION_FP32 = 0,
    SLEAPC_PRECISION_BF16,   /* bfloat16 weights/activations, fp32 accumulation */
    SLEAPC_PRECISION_FP16,
    /* bf16's rounding computed in fp32 on any CPU (native backend): the
     * results bf16 would give, at fp32 speed or slower; for checking a
     * model's bf16 accuracy on a machine without bf16 */
    SLEAPC_PRECISION_BF16_EMULATED
} sleapc_precision;

/* How the native backend computes its 3x3 stride-1 float32 convolutions;
 * other backends ignore it. */
typedef enum sleapc_conv_method {
    /* the packed direct method everywhere */
    SLEAPC_CONV_DIRECT = 0,
    /* per layer, the faster of the accurate Winograd tile sizes (timed) */
    SLEAPC_CONV_WINOGRAD,
    /* the default: per layer, the faster of the direct method and the
     * Winograd tile sizes accurate enough for it, timed when a shape is first
     * planned and kept in the cache (README "Winograd convolutions"), so later
     * runs repeat the choice and the results bit for bit; where no cache is
     * kept (SLEAPC_NO_CACHE) each run times again. SLEAPC_CONV=direct or
     * winograd pins what auto means. */
    SLEAPC_CONV_AUTO
} sleapc_conv_method;

/* Start from sleapc_runner_opts_default(), which sets struct_size (see
 * sleapc_predictor_opts). */
typedef struct sleapc_runner_opts {
    uint32_t struct_size;        /* sizeof(sleapc_runner_opts) */
    const char *backend;         /* "native", "onednn", "xnnpack", or "auto"/NULL: the best
                                    available */
    int n_threads;               /* <= 0: one per core */
    sleapc_precision precision;  /* FP32 */
    const char *device;          /* as sleapc_predictor_opts.device; NULL: "auto" */
    sleapc_conv_method conv;     /* AUTO */
} sleapc_runner_opts;

/* Backends compiled into this build, by index: name ("native", ...) and
 * whether it can run on this machine. */
SLEAPC_API int sleapc_backend_count(void);
SLEAPC_API const char *sleapc_backend_name(int i);
SLEAPC_API bool sleapc_backend_available(int i);

/* A device a backend can run on, as the contract names it. */
typedef struct sleapc_device_info {
    char device[16];  /* "cuda:0" (NVIDIA), "mps" (Apple), "gpu:1" (other GPUs), "cpu" */
    char backend[16]; /* the backend that drives it: "vulkan" */
    char kind[24];    /* "discrete GPU", "integrated GPU", "virtual GPU", "software" */
    char name[256];   /* the driver's name for it */
} sleapc_device_info;

/* The accelerator devices the compiled-in backends find on this machine (the
 * CPU, which every build runs on, is not listed): fills out[0..cap) and
 * returns how many there are (0 without an accelerator backend). */
SLEAPC_API int sleapc_devices_list(sleapc_device_info *out, int cap);

/* Defaults: backend "auto", n_threads 0, fp32. */
SLEAPC_API sleapc_runner_opts sleapc_runner_opts_default(void);

/* model is borrowed and must outlive the runner. Returns SLEAPC_OK,
 * SLEAPC_ERR_INVALID_ARG (unknown backend), SLEAPC_ERR_UNSUPPORTED (backend
 * cannot run here or cannot run a node), SLEAPC_ERR_BACKEND (the backend does
 * not conform to the contract) or SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_runner_create(const sleapc_model *model,
                                              const sleapc_runner_opts *opts,
                                              sleapc_runner **out);
SLEAPC_API void sleapc_runner_destroy(sleapc_runner *runner);

SLEAPC_API const char *sleapc_runner_backend_name(const sleapc_runner *runner);
SLEAPC_API const char *sleapc_runner_device(const sleapc_runner *runner);

/* Plan for input shape (B,C,H,W): later forwards of that shape allocate
 * nothing. */
SLEAPC_API sleapc_status sleapc_runner_warmup(sleapc_runner *runner, const int64_t shape[4]);

/* One forward pass. x: (B,C,H,W) uint8 (divided by 255) or float32 (divided
 * by 255 when its max exceeds 1), with C = the model's channels or 1/3
 * (converted as sleap-nn does). Not kept. */
SLEAPC_API sleapc_status sleapc_runner_forward(sleapc_runner *runner, const sleapc_tensor *x);

/* Outputs of the last forward: float32, NCHW maps or (B, n_classes) vectors,
 * named as sleap-nn names its heads. name and data are owned by the runner
 * and valid until the next forward or destroy. */
SLEAPC_API int sleapc_runner_n_outputs(const sleapc_runner *runner);
/* Floating-point operations of one forward pass of the model on a (B,C,H,W)
 * input, in GFLOP (2 per multiply-add). */
SLEAPC_API double sleapc_runner_gflops(const sleapc_runner *runner, const int64_t shape[4]);
SLEAPC_API sleapc_status sleapc_runner_output(const sleapc_runner *runner, int i,
                                              const char **name, sleapc_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
