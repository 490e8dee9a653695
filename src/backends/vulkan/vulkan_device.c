/* The Vulkan instance and device: which physical device a device string
 * names, the validation layer under SLEAPC_VULKAN_VALIDATION, and the one
 * compute queue the backend submits to.
 *
 * Device strings follow the contract's names: "cuda:N" is the N-th NVIDIA GPU
 * (vendor 0x10DE), "mps" the Apple GPU (MoltenVK, vendor 0x106B), "gpu:N" the
 * N-th GPU of any vendor, "cpu" a software Vulkan device (lavapipe,
 * SwiftShader: VK_PHYSICAL_DEVICE_TYPE_CPU). "auto" takes the first discrete
 * GPU, else the first integrated or virtual one, and a software device only
 * where the query allows it. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_impl.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/settings.h"

/* Mesa's lavapipe keeps 128 bytes from its one-time LLVM set-up and unloads
 * before exit, so LeakSanitizer reports them in an unknown module that no
 * suppression can name. Allocations the driver makes while it loads are
 * therefore not checked for leaks; sleapc's own never run in between. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define DRIVER_LOAD_BEGIN() __lsan_disable()
#define DRIVER_LOAD_END() __lsan_enable()
#else
#define DRIVER_LOAD_BEGIN() ((void)0)
#define DRIVER_LOAD_END() ((void)0)
#endif

#define VENDOR_NVIDIA 0x10DEu
#define VENDOR_APPLE 0x106Bu
#define MAX_DEVICES 16
#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

static atomic_llong validation_messages;
static atomic_bool validation_used;

void sleapc__vulkan_validation_stats(bool *enabled, int64_t *messages)
{
    if (enabled)
        *enabled = atomic_load(&validation_used);
    if (messages)
        *messages = (int64_t)atomic_load(&validation_messages);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user)
{
    (void)type;
    (void)user;
    atomic_fetch_add(&validation_messages, 1);
    sleapc__log(sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? SLEAPC_LOG_ERROR
                                                                     : SLEAPC_LOG_WARN,
                "vulkan validation: %s", data && data->pMessage ? data->pMessage : "?");
    return VK_FALSE;
}

const char *sleapc__vk_result_str(VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return "success";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "out of host memory";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "out of device memory";
    case VK_ERROR_INITIALIZATION_FAILED: return "initialization failed";
    case VK_ERROR_DEVICE_LOST: return "device lost";
    case VK_ERROR_LAYER_NOT_PRESENT: return "layer not present";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "extension not present";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "no compatible Vulkan driver";
    case VK_ERROR_TOO_MANY_OBJECTS: return "too many objects";
    case VK_TIMEOUT: return "timeout";
    default: return "error";
    }
}

static bool has_instance_ext(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *p = sleapc__malloc(n * sizeof *p);
    bool found = false;
    if (p && vkEnumerateInstanceExtensionProperties(NULL, &n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(p[i].extensionName, name) == 0;
    sleapc__free(p);
    return found;
}

static bool has_layer(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkLayerProperties *p = sleapc__malloc(n * sizeof *p);
    bool found = false;
    if (p && vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(p[i].layerName, name) == 0;
    sleapc__free(p);
    return found;
}

static bool validation_requested(void)
{
    return sleapc__settings_vulkan_validation();
}

static const VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
    .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
    .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
    .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
    .pfnUserCallback = on_message,
};

/* validate: with the layer and a messenger (which then also sees the
 * instance's own creation and destruction). */
static sleapc_status instance_create(bool validate, VkInstance *inst, bool *debug_utils)
{
    const char *exts[2];
    uint32_t n_ext = 0;
    VkInstanceCreateFlags flags = 0;
    /* MoltenVK lists its devices only to instances that ask for portability
     * drivers. */
    if (has_instance_ext("VK_KHR_portability_enumeration")) {
        exts[n_ext++] = "VK_KHR_portability_enumeration";
        flags |= 0x00000001; /* VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR */
    }
    *debug_utils = validate && has_instance_ext(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (*debug_utils)
        exts[n_ext++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    const char *layers[1] = {VALIDATION_LAYER};
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "sleapc",
                             .pEngineName = "sleapc",
                             .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pNext = *debug_utils ? &messenger_info : NULL,
                               .flags = flags,
                               .pApplicationInfo = &app,
                               .enabledLayerCount = validate ? 1 : 0,
                               .ppEnabledLayerNames = layers,
                               .enabledExtensionCount = n_ext,
                               .ppEnabledExtensionNames = exts};
    DRIVER_LOAD_BEGIN();
    VkResult r = vkCreateInstance(&ci, NULL, inst);
    DRIVER_LOAD_END();
    if (r != VK_SUCCESS) {
        *inst = VK_NULL_HANDLE;
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "vulkan: no Vulkan instance (%s)",
                            sleapc__vk_result_str(r));
    }
    return SLEAPC_OK;
}

/* The physical devices and their properties, in Vulkan's order. */
static int list_physical(VkInstance inst, VkPhysicalDevice *devs,
                         VkPhysicalDeviceProperties *props)
{
    uint32_t n = MAX_DEVICES;
    DRIVER_LOAD_BEGIN();
    VkResult r = vkEnumeratePhysicalDevices(inst, &n, devs);
    DRIVER_LOAD_END();
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        vkGetPhysicalDeviceProperties(devs[i], &props[i]);
    return (int)n;
}

static bool is_gpu(const VkPhysicalDeviceProperties *p)
{
    return p->deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
           p->deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
           p->deviceType == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
}

/* The contract's name for device i of the list. */
static void device_name(const VkPhysicalDeviceProperties *props, int n, int i, char out[16])
{
    const VkPhysicalDeviceProperties *p = &props[i];
    if (!is_gpu(p)) {
        strcpy(out, "cpu");
        return;
    }
    int same_vendor = 0, gpus = 0;
    for (int j = 0; j < i && j < n; j++) {
        same_vendor += is_gpu(&props[j]) && props[j].vendorID == p->vendorID;
        gpus += is_gpu(&props[j]);
    }
    if (p->vendorID == VENDOR_NVIDIA)
        snprintf(out, 16, "cuda:%d", same_vendor);
    else if (p->vendorID == VENDOR_APPLE)
        strcpy(out, "mps");
    else
        snprintf(out, 16, "gpu:%d", gpus);
}

static int type_rank(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

/* Parse "name" or "name:N" into its name and index (-1: none given). */
static bool parse_spec(const char *spec, char name[8], int *index)
{
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len == 0 || len > 7)
        return false;
    memcpy(name, spec, len);
    name[len] = '\0';
    *index = -1;
    if (colon) {
        char *end = NULL;
        long v = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || v < 0 || v >= MAX_DEVICES)
            return false;
        *index = (int)v;
    }
    return true;
}

/* *index: the device of the list that q names. */
static sleapc_status pick(const vk_device_query *q, const VkPhysicalDeviceProperties *props,
                          int n, int *index)
{
    const char *spec = q->spec && *q->spec ? q->spec : "auto";
    char name[8];
    int want = -1;
    if (!parse_spec(spec, name, &want) ||
        (strcmp(name, "auto") != 0 && strcmp(name, "gpu") != 0 && strcmp(name, "cuda") != 0 &&
         strcmp(name, "mps") != 0 && strcmp(name, "cpu") != 0) ||
        (want >= 0 && (strcmp(name, "auto") == 0 || strcmp(name, "cpu") == 0))) {
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "vulkan: device \"%s\": expected auto, cpu, gpu, gpu:N, cuda, "
                            "cuda:N or mps",
                            spec);
    }
    if (strcmp(name, "auto") == 0) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            int r = type_rank(props[i].deviceType);
            if (r > 0 && (is_gpu(&props[i]) || q->allow_software) &&
                (best < 0 || r > type_rank(props[best].deviceType)))
                best = i;
        }
        if (best < 0)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                n ? "vulkan: no GPU (only a software Vulkan device, which runs "
                                    "only when asked for: --backend vulkan)"
                                  : "vulkan: no Vulkan device");
        *index = best;
        return SLEAPC_OK;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        const VkPhysicalDeviceProperties *p = &props[i];
        bool match = strcmp(name, "cpu") == 0 ? p->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                     : !is_gpu(p)             ? false
                     : strcmp(name, "cuda") == 0 ? p->vendorID == VENDOR_NVIDIA
                     : strcmp(name, "mps") == 0  ? p->vendorID == VENDOR_APPLE
                                                 : true;
        if (match && k++ == (want < 0 ? 0 : want)) {
            *index = i;
            return SLEAPC_OK;
        }
    }
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                        "vulkan: device %s: not found (%d Vulkan device%s here%s)", spec, n,
                        n == 1 ? "" : "s", n ? "; sleapc info --devices lists them" : "");
}

static bool has_device_ext(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *p = sleapc__malloc(n * sizeof *p);
    bool found = false;
    if (p && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(p[i].extensionName, name) == 0;
    sleapc__free(p);
    return found;
}

static sleapc_status device_create(vk_context *ctx)
{
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, NULL);
    VkQueueFamilyProperties qf[16];
    nq = nq > 16 ? 16 : nq;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, qf);
    uint32_t fam = UINT32_MAX;
    for (uint32_t i = 0; i < nq && fam == UINT32_MAX; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            fam = i;
    if (fam == UINT32_MAX)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "vulkan: %s has no compute queue",
                            ctx->props.deviceName);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = fam,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    /* A portability driver (MoltenVK) must be told its subset is in use. */
    const char *exts[2];
    uint32_t n_exts = 0;
    if (has_device_ext(ctx->phys, "VK_KHR_portability_subset"))
        exts[n_exts++] = "VK_KHR_portability_subset";
    /* fp16 arithmetic (shaderFloat16, an extension under Vulkan 1.1) where
     * the device has it. */
    bool has_f16 = has_device_ext(ctx->phys, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
    /* 16-bit storage buffers (--precision fp16) where the device has them. */
    VkPhysicalDevice16BitStorageFeatures s16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
        .pNext = has_f16 ? &f16 : NULL};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &s16};
    vkGetPhysicalDeviceFeatures2(ctx->phys, &f2);
    ctx->storage16 = s16.storageBuffer16BitAccess == VK_TRUE;
    ctx->float16 = has_f16 && f16.shaderFloat16 == VK_TRUE;
    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR want_f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR,
        .shaderFloat16 = VK_TRUE};
    if (ctx->float16)
        exts[n_exts++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
    VkPhysicalDevice16BitStorageFeatures want16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
        .pNext = ctx->float16 ? &want_f16 : NULL,
        .storageBuffer16BitAccess = ctx->storage16 ? VK_TRUE : VK_FALSE};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &want16,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = n_exts,
                              .ppEnabledExtensionNames = exts};
    DRIVER_LOAD_BEGIN();
    VkResult r = vkCreateDevice(ctx->phys, &dci, NULL, &ctx->dev);
    DRIVER_LOAD_END();
    if (r != VK_SUCCESS) {
        ctx->dev = VK_NULL_HANDLE;
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "vulkan: create device %s: %s",
                            ctx->props.deviceName, sleapc__vk_result_str(r));
    }
    ctx->queue_family = fam;
    vkGetDeviceQueue(ctx->dev, fam, 0, &ctx->queue);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = fam};
    r = vkCreateCommandPool(ctx->dev, &pci, NULL, &ctx->cmd_pool);
    if (r != VK_SUCCESS) {
        ctx->cmd_pool = VK_NULL_HANDLE;
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: create command pool: %s",
                            sleapc__vk_result_str(r));
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__vk_context_create(const vk_device_query *q, vk_context *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    bool validate = validation_requested();
    if (validate && !has_layer(VALIDATION_LAYER))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "vulkan: SLEAPC_VULKAN_VALIDATION is set but the layer %s is not "
                            "installed (Debian: vulkan-validationlayers)",
                            VALIDATION_LAYER);
    bool debug_utils = false;
    sleapc_status st = instance_create(validate, &ctx->instance, &debug_utils);
    if (st)
        return st;
    if (debug_utils) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                ctx->instance, "vkCreateDebugUtilsMessengerEXT");
        if (create && create(ctx->instance, &messenger_info, NULL, &ctx->messenger) == VK_SUCCESS)
            atomic_store(&validation_used, true);
        else
            ctx->messenger = VK_NULL_HANDLE;
    }
    VkPhysicalDevice devs[MAX_DEVICES];
    VkPhysicalDeviceProperties props[MAX_DEVICES];
    int n = list_physical(ctx->instance, devs, props);
    int i = -1;
    st = pick(q, props, n, &i);
    if (st) {
        sleapc__vk_context_destroy(ctx);
        return st;
    }
    ctx->phys = devs[i];
    ctx->props = props[i];
    device_name(props, n, i, ctx->device);
    vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->mem);
    st = device_create(ctx);
    if (st)
        sleapc__vk_context_destroy(ctx);
    return st;
}

void sleapc__vk_context_destroy(vk_context *ctx)
{
    if (ctx->cmd_pool)
        vkDestroyCommandPool(ctx->dev, ctx->cmd_pool, NULL);
    if (ctx->dev)
        vkDestroyDevice(ctx->dev, NULL);
    if (ctx->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                ctx->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy)
            destroy(ctx->instance, ctx->messenger, NULL);
    }
    if (ctx->instance)
        vkDestroyInstance(ctx->instance, NULL);
    memset(ctx, 0, sizeof *ctx);
}

static const char *kind_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "software";
    default: return "other";
    }
}

int sleapc__vk_list_devices(sleapc_device_info *out, int cap)
{
    VkInstance inst = VK_NULL_HANDLE;
    bool debug_utils = false;
    if (instance_create(false, &inst, &debug_utils) != SLEAPC_OK) {
        sleapc__clear_error();
        return 0;
    }
    VkPhysicalDevice devs[MAX_DEVICES];
    VkPhysicalDeviceProperties props[MAX_DEVICES];
    int n = list_physical(inst, devs, props);
    for (int i = 0; i < n && i < cap; i++) {
        sleapc_device_info *d = &out[i];
        memset(d, 0, sizeof *d);
        device_name(props, n, i, d->device);
        snprintf(d->backend, sizeof d->backend, "vulkan");
        snprintf(d->kind, sizeof d->kind, "%s", kind_name(props[i].deviceType));
        snprintf(d->name, sizeof d->name, "%s", props[i].deviceName);
    }
    vkDestroyInstance(inst, NULL);
    return n;
}
