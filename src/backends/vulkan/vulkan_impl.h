/* Private to the Vulkan backend: the device context (vulkan_device.c),
 * buffers (vulkan_buffer.c), the shader pipelines (vulkan_pipeline.c) and the
 * per-shape plan of recorded commands (vulkan_plan.c) as the executor
 * (vulkan_backend.c) uses them. */
#ifndef SLEAPC_BACKENDS_VULKAN_IMPL_H
#define SLEAPC_BACKENDS_VULKAN_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "backends/backend.h"
#include "model/graph.h"

/* One instance, one physical device chosen by a device string, one logical
 * device with one compute queue. */
typedef struct vk_context {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger; /* VK_NULL_HANDLE without validation */
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem;
    VkDevice dev;
    VkQueue queue;
    uint32_t queue_family;
    VkCommandPool cmd_pool;
    bool storage16;  /* storageBuffer16BitAccess enabled: fp16 storage runs */
    bool float16;    /* shaderFloat16 enabled: fp16 arithmetic can run */
    bool fp16_math;  /* the backend's choice: fp16 pipelines use the
                        convolutions' fp16-arithmetic variants (NAME_f16m) */
    char device[16]; /* the contract's device string: "cuda:0", "mps", "gpu:1", "cpu" */
} vk_context;

/* Which devices a spec may pick. */
typedef struct vk_device_query {
    const char *spec;    /* NULL/"auto", "gpu", "gpu:N", "cuda", "cuda:N", "mps", "cpu" */
    bool allow_software; /* lavapipe, SwiftShader: only when asked by name */
} vk_device_query;

/* Create the instance (with the validation layer under
 * SLEAPC_VULKAN_VALIDATION), pick the device q names and create it.
 * SLEAPC_ERR_UNSUPPORTED when there is no Vulkan or no such device. */
sleapc_status sleapc__vk_context_create(const vk_device_query *q, vk_context *ctx);
/* Accepts a zeroed context. */
void sleapc__vk_context_destroy(vk_context *ctx);

/* The devices Vulkan lists, as the contract names them. */
int sleapc__vk_list_devices(sleapc_device_info *out, int cap);

/* A storage buffer usable as a copy source and destination. Host-visible
 * ones stay mapped (map), in memory the host reads fast where there is some. */
typedef struct vk_buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map;
} vk_buffer;

sleapc_status sleapc__vk_buffer_create(vk_context *ctx, VkDeviceSize size, bool host_visible,
                                       vk_buffer *out);
/* Accepts a zeroed buffer; leaves it zeroed. */
void sleapc__vk_buffer_destroy(vk_context *ctx, vk_buffer *b);
/* Copy bytes into a device buffer (through a staging buffer, waited for). */
sleapc_status sleapc__vk_buffer_upload(vk_context *ctx, vk_buffer *dst, const void *data,
                                       VkDeviceSize size);
/* Submit one recorded command buffer and wait for it (fence reset after). */
sleapc_status sleapc__vk_submit_wait(vk_context *ctx, VkCommandBuffer cmd, VkFence fence);
/* n command buffers in one submission, in order, then as above. */
sleapc_status sleapc__vk_submit_wait_n(vk_context *ctx, const VkCommandBuffer *cmds, uint32_t n,
                                       VkFence fence);
/* Wait for a submission's fence and reset it; under SLEAPC_VULKAN_VALIDATION
 * a validation message is a failure. */
sleapc_status sleapc__vk_fence_wait(vk_context *ctx, VkFence fence);
/* A failed run's error (SLEAPC_ERR_NOMEM when the device ran out). */
sleapc_status sleapc__vk_run_error(const vk_context *ctx, VkResult r);
const char *sleapc__vk_result_str(VkResult r);

/* The shaders, one compute pipeline each, over one descriptor set layout
 * (binding 0 the output, 1-2 the inputs, 3 the weights, 4 the bias) and up
 * to VK_PUSH_BYTES of push constants. */
typedef enum vk_kernel {
    VK_K_CONV2D = 0,
    VK_K_CONVT,
    VK_K_MAXPOOL2,
    VK_K_RESIZE,
    VK_K_GLOBAL_MAXPOOL,
    VK_K_LINEAR,
    VK_K_SOFTMAX,
    VK_K_PATCHES,
    VK_K_DWCONV,
    VK_K_LAYERNORM,
    VK_K_SCALE_ADD,
    VK_K_INPUT_U8,
    VK_K_PEAKS_GLOBAL,
    VK_K_WINDOW_ATTENTION,
    VK_K_PAF_SCORE,
    VK_K_WINDOW_W, /* vulkan_window.h */
    VK_K_WINDOW_H,
    VK_K_FRAMES_MATCH,
    VK_K_PEAKS_LOCAL_COUNT,
    VK_K_PEAKS_LOCAL_SCAN,
    VK_K_PEAKS_LOCAL_WRITE,
    VK_K_SAMPLE_CELLS, /* vulkan_sample.h */
    VK_K_GLOBAL_GEMPOOL,
    VK_K_L2NORM,
    VK_K_COUNT
} vk_kernel;

#define VK_N_BINDINGS 5
#define VK_PUSH_BYTES 64

typedef struct vk_pipelines {
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipe[VK_K_COUNT];
} vk_pipelines;

/* fp16: the shaders' fp16-storage variants (every buffer binary16), and
 * with ctx->fp16_math the convolutions' fp16-arithmetic ones. */
sleapc_status sleapc__vk_pipelines_create(vk_context *ctx, bool fp16, vk_pipelines *out);
void sleapc__vk_pipelines_destroy(vk_context *ctx, vk_pipelines *p);
/* A range of a buffer: a node's value in the plan's arena (size
 * VK_WHOLE_SIZE: from off to the end). */
typedef struct vk_view {
    VkBuffer buf;
    VkDeviceSize off, size;
} vk_view;

/* Point a descriptor set's VK_N_BINDINGS bindings at bufs, whole. */
void sleapc__vk_set_write(vk_context *ctx, VkDescriptorSet set, const VkBuffer bufs[VK_N_BINDINGS]);
/* The same at ranges (offsets aligned to minStorageBufferOffsetAlignment). */
void sleapc__vk_set_write_views(vk_context *ctx, VkDescriptorSet set,
                                const vk_view views[VK_N_BINDINGS]);
/* A device op of one dispatch outside the plan (vulkan_oneshot.c): its
 * descriptor pool with one set of pl's layout, command buffer and fence,
 * made once (nothing to do when *fence is set); what names the op in
 * errors, and what was made before a failure is left to the op's destroy. */
sleapc_status sleapc__vk_oneshot_init(vk_context *ctx, const vk_pipelines *pl, const char *what,
                                      VkDescriptorPool *pool, VkDescriptorSet *set,
                                      VkCommandBuffer *cmd, VkFence *fence);

/* conv2d.comp's tiling: output tile side and output channels per workgroup,
 * and the largest kernel its shared memory holds. */
#define VK_CONV_TILE 16
#define VK_CONV_CO 8
#define VK_CONV_MAX_K 7

/* Whether the backend runs every node of g: SLEAPC_ERR_UNSUPPORTED naming
 * the first node and op it lacks. */
sleapc_status sleapc__vk_check_graph(const sleapc_graph *g);

/* Weights uploaded once at create: per node, the weight (PyTorch layout)
 * and the bias (zeros without one); unused nodes hold the dummy buffer. */
typedef struct vk_weights {
    vk_buffer *w, *b; /* per node; buf VK_NULL_HANDLE where the node has none */
    vk_buffer dummy;  /* bound where a shader reads nothing */
} vk_weights;

/* fp16: stored as binary16 (rounded to nearest). */
sleapc_status sleapc__vk_weights_create(vk_context *ctx, const sleapc_graph *g, bool fp16,
                                        vk_weights *out);
void sleapc__vk_weights_destroy(vk_context *ctx, const sleapc_graph *g, vk_weights *w);

/* Device peak finding (the contract's device_global_peaks): output `output`
 * (-1: none) becomes its global peaks, computed by shaders/peaks_global.comp
 * into a host-visible buffer of (B, C, 2) peaks then (B, C) values, in place
 * of the maps (vulkan_peaks.c). */
#define VK_PEAKS_MAX_PATCH 22 /* SLEAPC_PEAKS_MAX_PATCH: Torch's summation order holds */

typedef struct vk_peaks {
    int output;
    float threshold;
    int refine_k;
    vk_buffer buf;
    VkDescriptorSet set;
} vk_peaks;

/* Device local peak finding (the contract's device_local_peaks): output
 * `output` (-1: none) becomes its local peaks, found by the three
 * shaders/peaks_local_*.comp passes into a host-visible buffer (words: the
 * total, a count per sample, then room for `cap` peaks: (cap, 2) refined
 * x, y, (cap) values, (cap, 4) sample, channel, grid x, grid y), in place of
 * the maps; beyond the room the maps come down after all (maps_cmd copies
 * them from the head's buffer, which still holds them). vulkan_local_peaks.c. */
typedef struct vk_local_peaks {
    int output;
    float threshold;
    int refine_k;
    int per_map;              /* room: per_map peaks a map on average */
    int64_t cap;              /* the room, in peaks, of this plan */
    vk_buffer buf;            /* host-visible result */
    vk_buffer rows;           /* device: each row's count, then its offset */
    VkDescriptorSet set;
    uint32_t grid[2];         /* workgroups of the row passes: one per row */
    VkCommandBuffer maps_cmd; /* the head's maps into its output staging */
    bool told;                /* the overflow was logged for this plan */
} vk_local_peaks;

/* Heads kept on the device (the contract's device_keep_head): the plan
 * does not copy their maps down; fetch[o], recorded with the plan, copies
 * output o's maps into its staging on demand (vulkan_keep.c). */
typedef struct vk_kept {
    uint32_t mask;                                   /* bit o: output o is kept */
    VkCommandBuffer fetch[SLEAPC_GRAPH_MAX_OUTPUTS];
    bool fetched[SLEAPC_GRAPH_MAX_OUTPUTS];          /* in staging for the last run */
} vk_kept;

/* Everything for one input shape: one arena for every node's value, placed
 * by the shared planner (model/graph_plan.h), staging for the input and
 * each output, one descriptor set per node and one command buffer that
 * normalises the input, runs every node and copies the outputs down. */
typedef struct vk_plan {
    int64_t shape[4]; /* (B, C, H, W); all zero: no plan */
    size_t elem;      /* bytes per element of the node values: 4, or 2 in fp16 */
    int64_t (*shapes)[4];
    vk_buffer arena;  /* device memory of the activations: the planner's peak */
    vk_view *node;    /* per node: its value's range of the arena */
    vk_buffer in;     /* host-visible input (vulkan_input.h) */
    vk_buffer out[SLEAPC_GRAPH_MAX_OUTPUTS]; /* host-visible outputs */
    VkDescriptorPool desc_pool;
    VkDescriptorSet *sets;
    VkCommandBuffer cmd;
    VkFence fence;
    vk_peaks peaks;   /* the request, copied in at create */
    vk_local_peaks lpeaks; /* the local peaks request, copied in at create */
    vk_kept kept;     /* the heads kept on the device, mask copied in at create */
} vk_plan;

/* The alignment of the values' offsets in a plan's arena: the device's
 * minStorageBufferOffsetAlignment (at least 4). */
int64_t sleapc__vk_plan_align(const vk_context *ctx);

/* elem: 4 (float32) or 2 (fp16 storage: the output staging buffers keep
 * float32's size, the host widens in place, sleapc__vk_half_*); peaks: the
 * device peak finding to record (NULL or output -1: none). */
sleapc_status sleapc__vk_plan_create(vk_context *ctx, const vk_pipelines *pl,
                                     const vk_weights *w, const sleapc_graph *g,
                                     const int64_t shape[4], size_t elem, const vk_peaks *peaks,
                                     const vk_local_peaks *lpeaks, uint32_t kept,
                                     vk_plan *out);

/* vulkan_peaks.c: the peaks buffer and its descriptor set (one more set in
 * the plan's pool), and the dispatch that fills it from head's buffer. */
sleapc_status sleapc__vk_peaks_alloc(vk_context *ctx, const vk_pipelines *pl,
                                     const sleapc_graph *g, vk_plan *p);
void sleapc__vk_peaks_record(VkCommandBuffer cmd, const vk_pipelines *pl,
                             const sleapc_graph *g, const vk_plan *p);
void sleapc__vk_plan_destroy(vk_context *ctx, const sleapc_graph *g, vk_plan *p);

/* vulkan_local_peaks.c: the local peaks' buffers, descriptor set (one more
 * set in the plan's pool) and maps copy; the three dispatches; after a
 * submission, the peaks as forward's outputs ("local_peaks" (n, 2) refined
 * map cells, "local_peak_vals" (n), "local_peak_inds" (n, 4) int32 sample,
 * channel, grid x, grid y, "local_peak_counts" (B) int32), or, beyond the
 * room, *fits false and the head's maps copied into its output staging. */
sleapc_status sleapc__vk_local_peaks_alloc(vk_context *ctx, const vk_pipelines *pl,
                                           const sleapc_graph *g, vk_plan *p);
void sleapc__vk_local_peaks_record(VkCommandBuffer cmd, const vk_pipelines *pl,
                                   const sleapc_graph *g, const vk_plan *p);
sleapc_status sleapc__vk_local_peaks_outputs(vk_context *ctx, vk_plan *p, sleapc_tensor_map *out,
                                             bool *fits);
void sleapc__vk_local_peaks_destroy(vk_context *ctx, vk_plan *p);

/* vulkan_keep.c: the kept heads' fetch commands; a kept output's maps of
 * the plan's last run into its staging (once per run; widened from fp16). */
sleapc_status sleapc__vk_kept_alloc(vk_context *ctx, const sleapc_graph *g, vk_plan *p);
sleapc_status sleapc__vk_kept_fetch(vk_context *ctx, const sleapc_graph *g, vk_plan *p, int o);
void sleapc__vk_kept_destroy(vk_context *ctx, vk_plan *p);

/* IEEE binary16 <-> float32 on the host, in place in a buffer of n floats:
 * to_half packs the first 2n bytes (nearest, ties to even; overflow to inf),
 * to_float widens them back into all 4n. */
void sleapc__vk_half_from_float(void *buf, int64_t n);
void sleapc__vk_half_to_float(void *buf, int64_t n);

#endif
