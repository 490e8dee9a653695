/* sleap-nn 0.3.5's box detectors (tests/goldens/sleapnn-0.3.5-families): each
 * model loaded through the normal path, run on frames 0-1 of the shared
 * frames array with every compiled-in backend, and its heads compared with
 * those sleap-nn handed its decoder (cases/FAMILY__npy/heads/HEAD.npy):
 * relative L2 <= 1e-4 per head (float32 sums in another order).
 *
 * CenterNet: BBoxCenterHead (after the sigmoid), BBoxSizeHead,
 * BBoxOffsetHead as they are. SSD: the per-level outputs gathered into
 * SSDHead's (B, A, n_logits + 4) tensor by the layer's own gather.
 *
 * SLEAPC_TEST_BACKEND=NAME runs that backend only; a backend on a software
 * device (the Vulkan backend on lavapipe) runs only when named so (the
 * _vulkan re-run of this test). */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "io/npy/npy_file.h"
#include "layers/bbox.h"
#include "model/model_impl.h"
#include "test_util.h"

#define REL_L2_TOL 1e-4
#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define FRAMES "sleapnn-0.3.5/frames/centered_pair_small.sleap_io.f0000-0019.npy"
#define N_FRAMES 2

static int n_compared;

static bool selected(const char *name)
{
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    return !only || !*only || strcmp(only, name) == 0;
}

static void compare(const char *family, const char *head, const char *label, const float *got,
                    const int64_t *shape, int ndim)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/cases/%s__npy/heads/%s.npy", FAMILIES, family, head);
    sleapc_tensor ref = {0};
    CHECK_OK(sleapc__npy_read(path, &ref));
    if (!ref.data)
        return;
    bool same = ref.ndim == ndim;
    for (int d = 0; same && d < ndim; d++)
        same = ref.shape[d] == shape[d];
    CHECK_MSG(same, "%s %s [%s]: shape differs from the reference", family, head, label);
    if (same) {
        double err = test_rel_l2(got, ref.data, sleapc_tensor_numel(&ref));
        CHECK_MSG(err <= REL_L2_TOL, "%s %s [%s]: relative L2 %.3g > %.0e", family, head, label,
                  err, REL_L2_TOL);
        printf("%-16s %-16s %-10s rel L2 %.2e\n", family, head, label, err);
        n_compared++;
    }
    free(ref.data);
}

/* SSDHead: the levels' maps gathered frame by frame, as the layer does. */
static void compare_ssd(const sleapc_model *m, const sleapc_tensor_map *out, const char *label)
{
    const sleapc_tensor *cls[SLEAPC_BBOX_LIST_MAX], *box[SLEAPC_BBOX_LIST_MAX];
    int levels = m->n_heads / 2;
    for (int l = 0; l < levels; l++) {
        cls[l] = sleapc__tensor_map_get(out, m->heads[2 * l].name);
        box[l] = sleapc__tensor_map_get(out, m->heads[2 * l + 1].name);
        CHECK_MSG(cls[l] && box[l], "bbox_ssd [%s]: no level %d output", label, l);
        if (!cls[l] || !box[l])
            return;
    }
    int n_logits = m->cfg.bbox.n_categories + 1;
    int64_t a = sleapc__bbox_ssd_gather(cls, box, levels, n_logits, 0, NULL, 0);
    CHECK(a > 0);
    if (a <= 0)
        return;
    float *raw = malloc((size_t)(N_FRAMES * a * (n_logits + 4)) * sizeof *raw);
    CHECK(raw != NULL);
    for (int64_t k = 0; raw && k < N_FRAMES; k++)
        CHECK(sleapc__bbox_ssd_gather(cls, box, levels, n_logits, k,
                                      raw + k * a * (n_logits + 4), a) == a);
    int64_t shape[3] = {N_FRAMES, a, n_logits + 4};
    if (raw)
        compare("bbox_ssd", "SSDHead", label, raw, shape, 3);
    free(raw);
}

static void check_family(const char *family, const sleapc_tensor *x)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models/%s", FAMILIES, family);
    sleapc_model *m = NULL;
    CHECK_OK(sleapc__model_load(dir, &m));
    if (!m)
        return;
    bool ssd = m->cfg.model_type == SLEAPC_MODEL_TYPE_BBOX_SSD;
    for (int bi = 0; bi < sleapc__backend_count(); bi++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(bi);
        if (f->score() <= 0 || !selected(f->name))
            continue;
        if (!getenv("SLEAPC_TEST_BACKEND") && test_backend_software_only(f->name))
            continue;
        sleapc_backend_opts opts = {.n_threads = 2, .precision = SLEAPC_PRECISION_FP32,
                                    .conv = SLEAPC_CONV_DIRECT};
        sleapc_backend *be = NULL;
        sleapc_status st = sleapc__backend_create_from(f, &m->graph, &opts, &be);
        CHECK_MSG(st == SLEAPC_OK, "%s [%s]: %s", family, f->name, sleapc_last_error());
        if (!be)
            continue;
        sleapc_tensor_map out = {0};
        CHECK_OK(sleapc__backend_forward(be, x, &out));
        if (ssd) {
            compare_ssd(m, &out, f->name);
        } else {
            for (int h = 0; h < m->n_heads; h++) {
                const sleapc_tensor *got = sleapc__tensor_map_get(&out, m->heads[h].name);
                CHECK_MSG(got != NULL, "%s [%s]: no %s", family, f->name, m->heads[h].name);
                if (got)
                    compare(family, m->heads[h].name, f->name, got->data, got->shape, got->ndim);
            }
        }
        sleapc__backend_destroy(be);
    }
    sleapc__model_destroy(m);
}

int main(void)
{
    test_require_data();
    sleapc_tensor frames = {0};
    CHECK_OK(sleapc__npy_read(test_data_path(FRAMES), &frames));
    if (!frames.data)
        return test_finish();
    CHECK(frames.dtype == SLEAPC_DTYPE_U8 && frames.ndim == 4 && frames.shape[0] >= N_FRAMES &&
          frames.shape[3] == 1);
    /* (N, H, W, 1) -> the first frames as (B, 1, H, W): the same bytes. */
    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4,
                       .shape = {N_FRAMES, 1, frames.shape[1], frames.shape[2]},
                       .data = frames.data};
    check_family("bbox_centernet", &x);
    check_family("bbox_ssd", &x);
    /* Native at least: 3 CenterNet heads and the SSD head. */
    CHECK_MSG(n_compared >= 4, "only %d heads compared", n_compared);
    free(frames.data);
    return test_finish();
}
