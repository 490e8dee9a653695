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
    sleapc_skeleton sk = {0};
    if (!rc && sleapc_predictor_skeleton(p, &sk) != SLEAPC_OK)
        rc = fail("skeleton");
    int n_nodes = sk.n_nodes;
    enum { MAX_INST = 64 };
    float *points = malloc(sizeof(float) * MAX_INST * 2 * (size_t)(n_nodes > 0 ? n_nodes : 1));
    float scores[MAX_INST];
    if (!points)
        rc = 1;
    for (int first = 0; !rc && first < n_frames; first += batch) {
        int n = n_frames - first < batch ? n_frames - first : batch;
        for (int k = 0; !rc && k < n; k++)
            if (sleapc_video_read(v, first + k, pixels + (size_t)k * frame_bytes) != SLEAPC_OK)
                rc = fail("read frame");
        sleapc_frame frames = {
            pixels, n, h, w, 0, c == 3 ? SLEAPC_PIXEL_FORMAT_RGB24 : SLEAPC_PIXEL_FORMAT_GRAY8};
        if (!rc && sleapc_predictor_run(p, &frames) != SLEAPC_OK)
            rc = fail("predict");
        for (int k = 0; !rc && k < sleapc_predictor_n_frames(p); k++) {
            int n_inst = 0;
            if (sleapc_predictor_frame_results(p, k,
                                               &(sleapc_results){.max_instances = MAX_INST,
                                                                 .points = points,
                                                                 .scores = scores},
                                               &n_inst) != SLEAPC_OK) {
                rc = fail("read results");
                break;
            }
            for (int i = 0; i < n_inst && i < MAX_INST; i++) {
                printf("%d %d %.9g", first + k, i, scores[i]);
                for (int j = 0; j < 2 * n_nodes; j++)
                    printf(" %.9g", points[(size_t)i * 2 * (size_t)n_nodes + (size_t)j]);
                printf("\n");
            }
        }
    }
    free(points);
    free(pixels);
    sleapc_predictor_destroy(p);
    sleapc_video_close(v);
    return rc;
}
