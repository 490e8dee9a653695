/* `sleapc predict` with sleap-nn 0.3.5's box detectors, as a user runs them:
 * the command of each `__video` case of tests/goldens/sleapnn-0.3.5-families
 * (frames 0-19 of the fixture video, decoded here as sleap-io decodes), its
 * .slp's bboxes/ group against the case's pred.slp written by sleap-nn: the
 * same boxes on the same frames in the same order, corners within 0.02 px and
 * scores within 1e-5 (the data README's tolerances), the same categories.
 * The same for the exports' cases (exports/cases/, `-m exports/<family>`:
 * sleap-nn's ONNX export run by sleapc's ONNX backend, decoded on the host).
 * On native, then on every other CPU backend built and usable here; with
 * SLEAPC_TEST_BACKEND=vulkan on the Vulkan backend alone, the boxes of frames
 * 0-1 (a software device takes seconds per frame). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "sleapc/runner.h"
#include "test_util.h"

#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define VIDEO "sleap-nn-assets/datasets/centered_pair_small.mp4"
#define PX_TOL 0.02
#define SCORE_TOL 1e-5

/* where: "" for the checkpoint cases (models/, cases/), "exports/" for the
 * exports' (exports/<family>, exports/cases/). */
static const struct {
    const char *where, *name, *model, *args;
} cases[] = {
    {"", "bbox_centernet__video", "bbox_centernet", "--peak_threshold 0.05"},
    {"", "bbox_centernet__video_max2", "bbox_centernet", "--peak_threshold 0.05 --max_instances 2"},
    {"", "bbox_ssd__video", "bbox_ssd", ""},
    {"", "bbox_ssd__video_nms0.2_thr0.1", "bbox_ssd", "--bbox_nms_iou 0.2 --peak_threshold 0.1"},
    {"exports/", "bbox_centernet__video", "bbox_centernet", ""},
    {"exports/", "bbox_centernet__video_max2", "bbox_centernet", "--max_instances 2"},
    {"exports/", "bbox_ssd__video", "bbox_ssd", ""},
};

static double *read_f64(sleapc_h5 *f, const char *name, int64_t *n)
{
    void *d = NULL;
    sleapc_h5_info info = {0};
    CHECK_OK(sleapc__h5_read(f, name, SLEAPC_H5_F64, &d, &info));
    *n = d ? info.n_elems : -1;
    return d;
}

/* Column col of the first rows boxes of each file (rows: the boxes of the
 * frames compared; -1: all). */
static void compare_column(sleapc_h5 *want, sleapc_h5 *got, const char *col, double tol,
                           int64_t rows, const char *case_name)
{
    char name[64];
    snprintf(name, sizeof name, "bboxes/%s", col);
    int64_t nw = 0, ng = 0;
    double *w = read_f64(want, name, &nw), *g = read_f64(got, name, &ng);
    if (rows >= 0) {
        nw = nw < rows ? nw : rows;
        ng = ng < rows ? ng : rows;
    }
    CHECK_MSG(nw == ng, "%s: %s has %lld values, sleap-nn's %lld", case_name, name, (long long)ng,
              (long long)nw);
    double worst = 0;
    for (int64_t i = 0; w && g && i < nw && i < ng; i++) {
        double d = fabs(w[i] - g[i]);
        worst = d > worst ? d : worst;
    }
    CHECK_MSG(worst <= tol, "%s: %s differs by %.3g (tolerance %.3g)", case_name, name, worst, tol);
    if (strcmp(col, "x1") == 0 || strcmp(col, "score") == 0)
        printf("%s: %lld boxes, %s within %.3g\n", case_name, (long long)ng, col, worst);
    sleapc__free(w);
    sleapc__free(g);
}

static void compare_categories(sleapc_h5 *want, sleapc_h5 *got, int64_t rows, const char *case_name)
{
    char **sw = NULL, **sg = NULL;
    int64_t nw = 0, ng = 0;
    CHECK_OK(sleapc__h5_read_strings(want, "bboxes/category", &sw, &nw));
    CHECK_OK(sleapc__h5_read_strings(got, "bboxes/category", &sg, &ng));
    const int64_t n = rows >= 0 && rows < nw ? rows : nw;
    CHECK(rows >= 0 ? ng >= n : nw == ng);
    for (int64_t i = 0; i < n && i < ng; i++)
        CHECK_MSG(strcmp(sw[i], sg[i]) == 0, "%s: category of box %lld", case_name, (long long)i);
    for (int64_t i = 0; i < nw; i++)
        sleapc__free(sw[i]);
    for (int64_t i = 0; i < ng; i++)
        sleapc__free(sg[i]);
    sleapc__free(sw);
    sleapc__free(sg);
}

/* The boxes of sleap-nn's file on frames up to last_frame. */
static int64_t rows_through(sleapc_h5 *want, int last_frame)
{
    int64_t n = 0, rows = 0;
    double *f = read_f64(want, "bboxes/frame_idx", &n);
    while (f && rows < n && f[rows] <= last_frame)
        rows++;
    sleapc__free(f);
    return rows;
}

static void check_case(int k, const char *backend, int last_frame)
{
    char out[1024], args[4096], ref[1024], label[160];
    const bool exp = cases[k].where[0] != '\0';
    snprintf(label, sizeof label, "%s%s (%s)", cases[k].where, cases[k].name, backend);
    snprintf(out, sizeof out, "%s/%s%s_%s.slp", test_tmp_dir(), exp ? "export_" : "", cases[k].name,
             backend);
    snprintf(args, sizeof args,
             "predict -i '%s' --frames 0-%d -m '%s/%s/%s' %s --backend %s -o '%s' -q",
             test_data_path(VIDEO), last_frame, FAMILIES, exp ? "exports" : "models",
             cases[k].model, cases[k].args, backend, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "%s: %s", label, test_cli_output());
    if (rc)
        return;
    snprintf(ref, sizeof ref, "%s/%scases/%s/pred.slp", FAMILIES, cases[k].where, cases[k].name);
    sleapc_h5 *want = NULL, *got = NULL;
    CHECK_OK(sleapc__h5_open(ref, &want));
    CHECK_OK(sleapc__h5_open(out, &got));
    if (want && got) {
        /* the whole file when every frame ran (its size checked too) */
        const int64_t rows = last_frame >= 19 ? -1 : rows_through(want, last_frame);
        compare_column(want, got, "frame_idx", 0, rows, label);
        compare_column(want, got, "video", 0, rows, label);
        compare_column(want, got, "instance", 0, rows, label);
        const char *xs[] = {"x1", "y1", "x2", "y2"};
        for (int i = 0; i < 4; i++)
            compare_column(want, got, xs[i], PX_TOL, rows, label);
        compare_column(want, got, "score", SCORE_TOL, rows, label);
        compare_categories(want, got, rows, label);
    }
    sleapc__h5_close(want);
    sleapc__h5_close(got);
}

int main(void)
{
    test_require_data();
    const size_t n_cases = sizeof cases / sizeof cases[0];
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    if (only && strcmp(only, "vulkan") == 0) {
        bool found = false;
        for (int i = 0; i < sleapc_backend_count(); i++)
            found |= strcmp(sleapc_backend_name(i), "vulkan") == 0 && sleapc_backend_available(i);
        if (!found) {
            printf("skipped: no usable Vulkan device\n");
            return 77;
        }
        for (size_t k = 0; k < n_cases; k++)
            check_case((int)k, "vulkan", 1);
        return test_finish();
    }
    for (size_t k = 0; k < n_cases; k++)
        check_case((int)k, "native", 19);
    for (int i = 0; i < sleapc_backend_count(); i++) {
        const char *name = sleapc_backend_name(i);
        if (strcmp(name, "native") == 0 || strcmp(name, "vulkan") == 0 ||
            !sleapc_backend_available(i))
            continue;
        for (size_t k = 0; k < n_cases; k++)
            check_case((int)k, name, 19);
    }
    return test_finish();
}
