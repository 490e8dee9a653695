/* A whole network in bf16 through the native backend on the software model
 * of the AMX tiles (SLEAPC_AMX_MODEL=1: every bf16 conv on the tile code),
 * judged as test_bf16_heads judges bf16 kernels: each head closer to the
 * exact emulation than bf16 is to float32, and within the bf16 head budget
 * (SLEAPC_BF16_HEAD_BUDGET) of float32. The top-down UNets of a reference
 * case, on their stored stage inputs. */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/bf16_policy.h"
#include "backends/native/native_amx.h"
#include "core/settings.h"
#include "io/npy/npy_file.h"
#include "model/model_impl.h"
#include "test_util.h"

#define CASE "reference/topdown__centered_pair_f0003"
#define MODELS "sleap-nn-assets/model_ckpts/minimal_instance_"

static sleapc_backend *run(const sleapc_model *m, sleapc_precision precision,
                           const sleapc_tensor *x, sleapc_tensor_map *out)
{
    sleapc_backend_opts o = {.n_threads = 2, .precision = precision};
    sleapc_backend *be = NULL;
    CHECK_OK(sleapc__backend_create("native", &m->graph, &o, &be));
    if (be)
        CHECK_OK(sleapc__backend_forward(be, x, out));
    return be;
}

static int check_stage(const char *stage)
{
    char path[4096], model_dir[4096];
    snprintf(path, sizeof path, "%s/%s.input.npy", test_data_path(CASE), stage);
    snprintf(model_dir, sizeof model_dir, "%s%s", test_data_path(MODELS), stage);
    sleapc_tensor x = {0};
    if (sleapc__npy_read(path, &x) != SLEAPC_OK) {
        printf("%s: no stored input here\n", stage);
        return 0;
    }
    /* (1, b, c, h, w) -> (b, c, h, w) */
    for (int d = 1; d < 4; d++)
        x.shape[d] = x.shape[d + 1];
    x.ndim = 4;
    sleapc_model *m = NULL;
    CHECK_OK(sleapc__model_load(model_dir, &m));
    if (!m) {
        free(x.data);
        return 0;
    }
    sleapc_tensor_map o32 = {0}, oem = {0}, oamx = {0};
    sleapc_backend *b32 = run(m, SLEAPC_PRECISION_FP32, &x, &o32);
    sleapc_backend *bem = run(m, SLEAPC_PRECISION_BF16_EMULATED, &x, &oem);
    sleapc_backend *bamx = run(m, SLEAPC_PRECISION_BF16, &x, &oamx);
    for (int k = 0; b32 && bem && bamx && k < m->graph.n_outputs; k++) {
        const char *head = m->graph.outputs[k].name;
        const sleapc_tensor *t32 = sleapc__tensor_map_get(&o32, head);
        const sleapc_tensor *tem = sleapc__tensor_map_get(&oem, head);
        const sleapc_tensor *tamx = sleapc__tensor_map_get(&oamx, head);
        CHECK(t32 && tem && tamx);
        if (!t32 || !tem || !tamx)
            continue;
        int64_t n = sleapc_tensor_numel(t32);
        double e = test_rel_l2(tem->data, t32->data, n);
        double a = test_rel_l2(tamx->data, tem->data, n);
        double f = test_rel_l2(tamx->data, t32->data, n);
        printf("%-20s %-32s bf16 (emulated) vs fp32 %.2e, AMX model vs emulation %.2e, "
               "vs fp32 %.2e\n",
               stage, head, e, a, f);
        CHECK_MSG(a <= e,
                  "%s: the AMX model is %.3g from the emulation, farther than bf16 from "
                  "fp32 (%.3g)",
                  head, a, e);
        CHECK_MSG(f <= SLEAPC_BF16_HEAD_BUDGET, "%s: the AMX model is %.3g from fp32", head, f);
        CHECK_MSG(a > 0, "%s: the AMX model equals the emulation to the bit: was it run?", head);
    }
    sleapc__backend_destroy(b32);
    sleapc__backend_destroy(bem);
    sleapc__backend_destroy(bamx);
    sleapc__tensor_map_clear(&o32);
    sleapc__tensor_map_clear(&oem);
    sleapc__tensor_map_clear(&oamx);
    sleapc__model_destroy(m);
    free(x.data);
    return 1;
}

int main(void)
{
    test_require_data();
    if (!sleapc__settings_dev_build()) {
        printf("skipped: this library ignores the developer switch SLEAPC_AMX_MODEL\n");
        return 77;
    }
    test_setenv("SLEAPC_AMX_MODEL", "1");
    CHECK(sleapc__native_amx_ops() == sleapc__native_amx_model_ops());
    int n = check_stage("centered_instance") + check_stage("centroid");
    test_setenv("SLEAPC_AMX_MODEL", NULL);
    if (n == 0) {
        printf("skipped: no stage input of %s here\n", CASE);
        return 77;
    }
    return test_finish();
}
