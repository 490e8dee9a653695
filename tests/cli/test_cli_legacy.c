/* The command line on legacy SLEAP 1.x model folders (training_config.json +
 * best_model.h5): `info` describes every one of them, and `forward` on a
 * Keras-exact reference input reproduces the stored head. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy/npy_file.h"
#include "sleapc/model.h"
#include "test_util.h"


/* `sleapc info` prints what the library reports for the folder. */
static int check_info(const char *dir, const char *name)
{
    sleapc_model *m = NULL;
    CHECK_OK(sleapc_model_load(dir, &m));
    if (!m)
        return 0;
    char args[8192], line[512];
    snprintf(args, sizeof args, "info -m '%s'", dir);
    CHECK_MSG(test_run_cli(args) == 0, "%s: %s", name, test_cli_output());
    snprintf(line, sizeof line, "type:           %s\n",
             sleapc_model_type_name(sleapc_model_get_type(m)));
    CHECK_MSG(strstr(test_cli_output(), line) != NULL, "%s: no \"%s\" in: %s", name, line, test_cli_output());
    snprintf(line, sizeof line, "parameters:     %lld\n", (long long)sleapc_model_param_count(m));
    CHECK_MSG(strstr(test_cli_output(), line) != NULL, "%s: no \"%s\" in: %s", name, line, test_cli_output());
    snprintf(line, sizeof line, "input:          %d channel", sleapc_model_in_channels(m));
    CHECK_MSG(strstr(test_cli_output(), line) != NULL, "%s: no \"%s\" in: %s", name, line, test_cli_output());
    for (int h = 0; h < sleapc_model_n_heads(m); h++)
        CHECK_MSG(strstr(test_cli_output(), sleapc_model_head(m, h).name) != NULL, "%s: head %s missing", name,
                  sleapc_model_head(m, h).name);
    CHECK(sleapc_model_n_heads(m) >= 1 && strstr(test_cli_output(), "GFLOPs") != NULL);
    sleapc_model_destroy(m);
    return 1;
}

static void check_forward(void)
{
    char model[4096], case_dir[4096], out_dir[1200], args[12000], path[4200];
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/legacy_models/minimal_instance.UNet.centroid"));
    snprintf(case_dir, sizeof case_dir, "%s",
             test_data_path("reference/legacy_kerasT_centroid__pkg_f0000"));
    snprintf(out_dir, sizeof out_dir, "%s/forward_legacy", test_tmp_dir());
    snprintf(args, sizeof args, "forward -m '%s' -i '%s/centroid.input.npy' -o '%s' --threads 2",
             model, case_dir, out_dir);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    sleapc_tensor ref = {0}, got = {0};
    snprintf(path, sizeof path, "%s/centroid.head.CentroidConfmapsHead.npy", case_dir);
    CHECK_OK(sleapc__npy_read(path, &ref));
    snprintf(path, sizeof path, "%s/CentroidConfmapsHead.npy", out_dir);
    CHECK_OK(sleapc__npy_read(path, &got));
    int64_t n = sleapc_tensor_numel(&ref);
    CHECK(ref.data && got.data && sleapc_tensor_numel(&got) == n);
    if (ref.data && got.data && sleapc_tensor_numel(&got) == n) {
        double num = 0, den = 0;
        for (int64_t i = 0; i < n; i++) {
            double d = (double)((float *)got.data)[i] - ((float *)ref.data)[i];
            num += d * d;
            den += (double)((float *)ref.data)[i] * ((float *)ref.data)[i];
        }
        /* Same tolerance as the forward reference test (float32 summation order). */
        CHECK_MSG(sqrt(num / den) <= 1e-4, "relative L2 %g", sqrt(num / den));
    }
    free(ref.data);
    free(got.data);
}

int main(void)
{
    test_require_data();
    char root[4096];
    snprintf(root, sizeof root, "%s", test_data_path("sleap-nn-assets/legacy_models"));
    DIR *d = opendir(root);
    CHECK(d != NULL);
    int n_models = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char dir[8192];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        n_models += check_info(dir, e->d_name);
    }
    if (d)
        closedir(d);
    /* Six legacy models in the corpus (formats.md C.2). */
    CHECK_MSG(n_models >= 6, "only %d legacy folders described", n_models);
    check_forward();
    return test_finish();
}
