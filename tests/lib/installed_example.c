/* A program as a user of the installed library writes it: public headers
 * only, built with `pkg-config --cflags --libs sleapc`. It predicts frames
 * 0..n_frames-1 of a video, batch_size frames per run, and prints one line per
 * instance: "frame instance score x0 y0 x1 y1 ..." ("nan" for a missing point).
 *   installed_example VIDEO N_FRAMES BATCH_SIZE MODEL [MODEL] */
#include <stdio.h>
#include <stdlib.h>

#include <sleapc/predictor.h>
#include <sleapc/video.h>

static int fail(const char *what)
{
    fprintf(stderr, "installed_example: %s: %s\n", what, sleapc_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: installed_example VIDEO N_FRAMES BATCH_SIZE MODEL [MODEL]\n");
        return 2;
    }
    int n_frames = atoi(argv[2]);
    int batch = atoi(argv[3]);
    sleapc_video *v = NULL;
    if (sleapc_video_open(argv[1], &v) != SLEAPC_OK)
        return fail("open video");
    sleapc_predictor_opts opts = sleapc_predictor_opts_default();
    opts.batch_size = batch;
    sleapc_predictor *p = NULL;
    if (sleapc_predictor_create((const char *const *)argv + 4, argc - 4, &opts, &p) != SLEAPC_OK) {
        sleapc_video_close(v);
        return fail("create predictor");
    }
    int64_t h, w, c;
    sleapc_video_shape(v, &h, &w, &c);
    size_t frame_bytes = (size_t)(h * w * c);
    uint8_t *pixels = malloc(frame_bytes * (size_t)batch);
    int rc = pixels ? 0 : 1;
    int n_nodes = sleapc_predictor_n_nodes(p);
    for (int first = 0; !rc && first < n_frames; first += batch) {
        int n = n_frames - first < batch ? n_frames - first : batch;
        for (int k = 0; !rc && k < n; k++)
            if (sleapc_video_read(v, first + k, pixels + (size_t)k * frame_bytes) != SLEAPC_OK)
                rc = fail("read frame");
        sleapc_tensor frames = {SLEAPC_DTYPE_U8, 4, {n, h, w, c}, pixels};
        if (!rc && sleapc_predictor_run(p, &frames) != SLEAPC_OK)
            rc = fail("predict");
        for (int k = 0; !rc && k < sleapc_predictor_n_frames(p); k++) {
            for (int i = 0; i < sleapc_predictor_n_instances(p, k); i++) {
                sleapc_instance in;
                if (sleapc_predictor_instance(p, k, i, &in) != SLEAPC_OK) {
                    rc = fail("read instance");
                    break;
                }
                printf("%d %d %.9g", first + k, i, in.score);
                for (int j = 0; j < 2 * n_nodes; j++)
                    printf(" %.9g", in.points[j]);
                printf("\n");
            }
        }
    }
    free(pixels);
    sleapc_predictor_destroy(p);
    sleapc_video_close(v);
    return rc;
}
