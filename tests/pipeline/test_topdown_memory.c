/* Top-down memory follows the options, not the data: crops go through the
 * centered-instance network at most --batch_size at a time, so a frame with
 * many centroids (a centroid threshold of 0 finds one at every local
 * maximum of the map's noise) needs no larger buffers than a frame with two.
 * All crops of a batch used to go through the network at once (a 1x1-pixel
 * video: 1756 crops a frame, 10.7 GB). Measured as the largest single block
 * sleapc asks for (native backend, whose buffers all come from sleapc's
 * allocator), which neither the allocator nor the sanitizers change. */
#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "sleapc/tools.h"
#include "sleapc/predictor.h"
#include "test_util.h"

#define CENTROID "sleap-nn-assets/model_ckpts/minimal_instance_centroid"
#define CENTERED "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"
#define FRAME "reference/centroid__centered_pair_f0000/frame.npy"

/* Run on the frame; the largest block asked for while creating and running,
 * and in *n the instances found. */
static int64_t largest_block(const sleapc_tensor *frame, double centroid_threshold,
                             int max_instances, int *n)
{
    char a[2048], b[2048];
    snprintf(a, sizeof a, "%s", test_data_path(CENTROID));
    snprintf(b, sizeof b, "%s", test_data_path(CENTERED));
    const char *paths[2] = {a, b};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.backend = "native";
    o.n_threads = 1;
    o.batch_size = 2;
    o.centroid_peak_threshold = centroid_threshold;
    o.max_instances = max_instances;
    sleapc_predictor *p = NULL;
    sleapc__alloc_largest_reset();
    CHECK_OK(sleapc_predictor_create(paths, 2, &o, &p));
    *n = 0;
    if (p) {
        CHECK_OK(test_run_array(p, frame));
        *n = test_n_instances(p, 0);
    }
    int64_t largest = sleapc__alloc_largest();
    sleapc_predictor_destroy(p);
    return largest;
}

int main(void)
{
    test_require_data();
    sleapc_tensor frame;
    CHECK_OK(sleapc_npy_read(test_data_path(FRAME), &frame));
    int n_normal = 0, n_many = 0;
    int64_t normal = largest_block(&frame, NAN, 0, &n_normal);
    int64_t many = largest_block(&frame, 0.0, 200, &n_many);
    printf("%d instances: largest block %lld bytes; %d instances: %lld bytes\n", n_normal,
           (long long)normal, n_many, (long long)many);
    CHECK_MSG(n_normal >= 1 && n_normal <= 4, "%d instances at the default threshold", n_normal);
    /* Enough crops that whole-batch buffers would be many times larger. */
    CHECK_MSG(n_many >= 20, "only %d instances at threshold 0", n_many);
    /* The same buffers either way; the per-crop lists (a few floats a crop)
     * are far below the network's. */
    CHECK_MSG(many <= normal + normal / 4, "largest block %lld bytes with %d crops, %lld with %d",
              (long long)many, n_many, (long long)normal, n_normal);
    sleapc_tensor_free(&frame);
    return test_finish();
}
