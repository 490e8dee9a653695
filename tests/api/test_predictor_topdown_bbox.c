/* A box detector and a box-scaled centered-instance model (the tiny models of
 * tests/goldens/sleapnn-0.3.5-families) as one top-down predictor through the
 * public API, in both orders: sleap-nn's layer name, the crop model's
 * skeleton, a warm-up (which cuts box crops at the frame centre before any
 * detection), then blank frames, which hold no box and so no instance. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sleapc/predictor.h"
#include "test_util.h"

#define MODELS SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families/models"

static void check_pair(const char *a, const char *b)
{
    const char *paths[2] = {a, b};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.backend = "native";
    o.batch_size = 2;
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 2, &o, &p));
    if (!p)
        return;
    CHECK(strcmp(sleapc_predictor_layer_name(p), "TopDownLayer") == 0);
    sleapc_skeleton sk;
    CHECK_OK(sleapc_predictor_skeleton(p, &sk));
    CHECK(sk.n_nodes == 2 && strcmp(sk.node_names[0], "A") == 0);
    CHECK_OK(sleapc_predictor_warmup(p, 2, 384, 384, 1));
    uint8_t *blank = calloc(2 * 384 * 384, 1);
    sleapc_frame f = {.data = blank, .n_frames = 2, .height = 384, .width = 384,
                      .format = SLEAPC_PIXEL_FORMAT_GRAY8};
    CHECK_OK(sleapc_predictor_run(p, &f));
    for (int k = 0; k < 2; k++) {
        int n = -1;
        CHECK_OK(sleapc_predictor_frame_results(p, k, NULL, &n));
        CHECK_MSG(n == 0, "frame %d: %d instances on a blank frame", k, n);
    }
    free(blank);
    sleapc_predictor_destroy(p);
}

int main(void)
{
    check_pair(MODELS "/bbox_centernet", MODELS "/centered_instance_bbox");
    check_pair(MODELS "/centered_instance_bbox", MODELS "/bbox_ssd");
    return test_finish();
}
