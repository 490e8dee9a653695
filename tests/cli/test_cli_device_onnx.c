/* --device on an ONNX export's model.onnx means what it means for the
 * checkpoint it was exported from: its networks run where the checkpoint's
 * would (the host steps stay on the CPU). For --device gpu, cuda and mps,
 * with and without --backend vulkan, the export and the checkpoint both run
 * or are both refused, and the export's refusal gives the checkpoint's
 * reason (no such device here), never "the CPU only". Where Vulkan lists a
 * device, --backend vulkan runs the export and names it in the summary. */
#include <stdlib.h>
#include <string.h>

#include "sleapc/predictor.h"
#include "sleapc/sleapc.h"
#include "test_util.h"

static char video[2048], tmp[1024];

/* The error's last clause: the reason under the wrappers. */
static void reason_of(const char *output, char *out, size_t cap)
{
    out[0] = '\0';
    const char *e = strstr(output, "sleapc: error: ");
    if (!e)
        return;
    const char *end = strchr(e, '\n');
    size_t n = end ? (size_t)(end - e) : strlen(e);
    /* "... create backend vulkan: vulkan: device gpu: not found (...)": from
     * the last "create backend " on (the backend that refused). */
    const char *r = e;
    for (const char *p = strstr(e, "create backend "); p && p < e + n;
         p = strstr(p + 1, "create backend "))
        r = p;
    n -= (size_t)(r - e);
    snprintf(out, cap, "%.*s", (int)n, r);
}

static void check_same_fate(const char *flags)
{
    char args[8192], onnx_out[8192], ckpt_reason[1024], onnx_reason[1024];
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/onnx.json' --frames 0 -q %s",
             test_data_path("onnx/single_instance"), video, tmp, flags);
    int rc_onnx = test_run_cli(args);
    snprintf(onnx_out, sizeof onnx_out, "%s", test_cli_output());
    reason_of(onnx_out, onnx_reason, sizeof onnx_reason);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/ckpt.json' --frames 0 -q %s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"),
             video, tmp, flags);
    int rc_ckpt = test_run_cli(args);
    reason_of(test_cli_output(), ckpt_reason, sizeof ckpt_reason);
    CHECK_MSG(rc_onnx == rc_ckpt, "%s: the export exits %d, the checkpoint %d: %s / %s", flags,
              rc_onnx, rc_ckpt, onnx_out, test_cli_output());
    CHECK_MSG(!strstr(onnx_out, "CPU only"), "%s: %s", flags, onnx_out);
    if (rc_onnx != 0 && rc_ckpt != 0)
        CHECK_MSG(ckpt_reason[0] && strcmp(onnx_reason, ckpt_reason) == 0,
                  "%s: the export is refused for \"%s\", the checkpoint for \"%s\"", flags,
                  onnx_reason, ckpt_reason);
    printf("%s: export exit %d (%s), checkpoint exit %d\n", flags, rc_onnx,
           onnx_reason[0] ? onnx_reason : "ran", rc_ckpt);
}

static bool vulkan_listed(void)
{
    sleapc_device_info devs[16];
    int n = sleapc_devices_list(devs, 16);
    for (int i = 0; i < n && i < 16; i++)
        if (strcmp(devs[i].backend, "vulkan") == 0)
            return true;
    return false;
}

int main(void)
{
    test_require_data();
    /* "auto" must mean auto here, not the suite's pinned backend. */
    unsetenv("SLEAPC_BACKEND");
    snprintf(tmp, sizeof tmp, "%s", test_tmp_dir());
    snprintf(video, sizeof video, "%s", test_data_path("sleap-nn-assets/datasets/small_robot.mp4"));
    const char *flags[] = {"--device gpu", "--device cuda", "--device mps",
                           "--device gpu:7", "--backend vulkan --device gpu"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        check_same_fate(flags[i]);
    /* --backend native --device gpu: refused for both, for the same reason. */
    check_same_fate("--backend native --device cuda");
    if (vulkan_listed()) {
        char args[8192];
        snprintf(args, sizeof args,
                 "predict -m '%s' -i '%s' -o '%s/onnx_vk.json' --frames 0 --backend vulkan",
                 test_data_path("onnx/single_instance"), video, tmp);
        CHECK_MSG(test_run_cli(args) == 0 && strstr(test_cli_output(), "(ONNX export) model on vulkan"),
                  "%s", test_cli_output());
    } else {
        printf("Vulkan lists no device: the run on it is left out\n");
    }
    return test_finish();
}
