/* The sleapc command line: info and forward on a real model, and clear errors
 * (exit 1, "sleapc: error: ...") for wrong flags and broken inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy/npy_file.h"
#include "test_util.h"


static void expect_error(const char *args, const char *msg_part)
{
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 1, "sleapc %s: exit %d", args, rc);
    CHECK_MSG(strstr(test_cli_output(), "sleapc: error: ") != NULL, "sleapc %s: no error line in: %s", args,
              test_cli_output());
    CHECK_MSG(strstr(test_cli_output(), msg_part) != NULL, "sleapc %s: \"%s\" not in: %s", args, msg_part,
              test_cli_output());
}

int main(void)
{
    test_require_data();
    char model[2048], args[8192], out_dir[1200], ref_path[4096], got_path[2048];
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));

    CHECK(test_run_cli("version") == 0 && strstr(test_cli_output(), "sleapc ") != NULL);
    CHECK(test_run_cli("--help") == 0 && strstr(test_cli_output(), "forward") != NULL);

    snprintf(args, sizeof args, "info -m '%s'", model);
    CHECK(test_run_cli(args) == 0);
    CHECK(strstr(test_cli_output(), "type:           centroid") != NULL);
    CHECK(strstr(test_cli_output(), "CentroidConfmapsHead") != NULL);
    CHECK(strstr(test_cli_output(), "parameters:     127161") != NULL);  /* formats.md A.2 */
    CHECK(strstr(test_cli_output(), "GFLOPs") != NULL);

    /* forward on the reference case input reproduces sleap-nn's head. */
    const char *case_dir = "reference/centroid__pkg_f0000";
    snprintf(out_dir, sizeof out_dir, "%s/forward_out", test_tmp_dir());
    char in_path[4096];
    snprintf(in_path, sizeof in_path, "%s", test_data_path(case_dir));
    snprintf(args, sizeof args, "forward -m '%s' -i '%s/centroid.input.npy' -o '%s' --threads 2",
             model, in_path, out_dir);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(ref_path, sizeof ref_path, "%s/centroid.head.CentroidConfmapsHead.npy", in_path);
    snprintf(got_path, sizeof got_path, "%s/CentroidConfmapsHead.npy", out_dir);
    sleapc_tensor ref = {0}, got = {0};
    CHECK_OK(sleapc__npy_read(ref_path, &ref));
    CHECK_OK(sleapc__npy_read(got_path, &got));
    if (ref.data && got.data) {
        int64_t n = sleapc_tensor_numel(&ref);
        CHECK(sleapc_tensor_numel(&got) == n && got.ndim == 4);
        double num = 0, den = 0;
        for (int64_t i = 0; n == sleapc_tensor_numel(&got) && i < n; i++) {
            double d = ((float *)got.data)[i] - ((float *)ref.data)[i];
            num += d * d;
            den += (double)((float *)ref.data)[i] * ((float *)ref.data)[i];
        }
        /* Same tolerance as the forward reference test (float32 summation order). */
        CHECK_MSG(sqrt(num / den) <= 1e-4, "relative L2 %g", sqrt(num / den));
    }
    free(ref.data);
    free(got.data);

    /* Errors: named, exit 1, never a crash. */
    expect_error("", "usage");
    expect_error("frobnicate", "unknown command");
    expect_error("info", "-m MODEL_DIR");
    expect_error("info -m /nonexistent/model", "/nonexistent/model");
    snprintf(args, sizeof args, "info -m '%s' --bogus", model);
    expect_error(args, "--bogus");
    snprintf(args, sizeof args, "info -m '%s' --size 12by3", model);
    expect_error(args, "--size");
    snprintf(args, sizeof args, "forward -m '%s' -i '%s/nope.npy' -o '%s'", model, in_path,
             out_dir);
    expect_error(args, "nope.npy");
    snprintf(args, sizeof args, "forward -m '%s' -i '%s/centroid.input.npy' -o '%s' --backend warp",
             model, in_path, out_dir);
    expect_error(args, "warp");
    snprintf(args, sizeof args, "forward -m '%s' -i '%s/centroid.input.npy' -o '%s' --threads 0",
             model, in_path, out_dir);
    expect_error(args, "--threads");
    snprintf(args, sizeof args, "forward -m '%s' -i '%s/frame.npy' -o '%s'", model, in_path,
             out_dir);
    expect_error(args, "frame.npy");
    snprintf(args, sizeof args, "forward -m '%s' -i '%s/manifest.json' -o '%s'", model, in_path,
             out_dir);
    expect_error(args, "manifest.json");
    return test_finish();
}
