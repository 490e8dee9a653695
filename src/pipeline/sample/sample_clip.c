/* The sample's clip: an animal (head, thorax, tail) walking on an ellipse and
 * turning as it goes. The body is a faint grey ellipse; each body part is a
 * Gaussian spot in its own colour channel (head red, thorax green, tail blue)
 * centred on its true, sub-pixel position. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/npy/npy.h"
#include "pipeline/sample/sample_internal.h"

#define N_NODES 3
#define SPOT_SIGMA 1.6
#define BODY_GREY 20.0
#define PI 3.14159265358979323846

sleapc_sample_opts sleapc__sample_opts_default(void)
{
    sleapc_sample_opts o = {.n_frames = 60, .height = 192, .width = 256, .seed = 1};
    return o;
}

/* Small deterministic generator, so a seed gives the same clip anywhere. */
static double rand01(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / 16777216.0;
}

static void pose_at(const sleapc_sample_opts *o, int t, unsigned *rng, float *xy)
{
    double cx = o->width / 2.0, cy = o->height / 2.0;
    double rx = o->width * 0.28, ry = o->height * 0.25;
    double phase = 2 * PI * t / (o->n_frames > 1 ? o->n_frames : 1);
    double x = cx + rx * cos(phase), y = cy + ry * sin(phase);
    /* Heading: along the path, with a little wobble. */
    double heading = atan2(ry * cos(phase), -rx * sin(phase)) + 0.15 * sin(3 * phase);
    double seg = 14.0 + 2.0 * rand01(rng);
    for (int n = 0; n < N_NODES; n++) {
        double d = seg * (1 - n);  /* head ahead of the thorax, tail behind */
        xy[2 * n] = (float)(x + d * cos(heading));
        xy[2 * n + 1] = (float)(y + d * sin(heading));
    }
}

static void draw_frame(const sleapc_sample_opts *o, const float *xy, uint8_t *img)
{
    int h = o->height, w = o->width;
    double bx = xy[2], by = xy[3];
    double ang = atan2(xy[1] - xy[5], xy[0] - xy[4]);
    double half_len = 0.5 * hypot(xy[0] - xy[4], xy[1] - xy[5]) + 4.0;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            /* Body: an ellipse along the head-tail axis. */
            double dx = x - bx, dy = y - by;
            double u = dx * cos(ang) + dy * sin(ang), v = -dx * sin(ang) + dy * cos(ang);
            double body = (u * u) / (half_len * half_len) + (v * v) / 36.0 <= 1.0 ? BODY_GREY : 0.0;
            for (int c = 0; c < 3; c++) {
                double sx = x - xy[2 * c], sy = y - xy[2 * c + 1];
                double spot = 235.0 * exp(-(sx * sx + sy * sy) / (2 * SPOT_SIGMA * SPOT_SIGMA));
                double v8 = body + spot;
                img[((size_t)y * w + x) * 3 + c] = (uint8_t)(v8 > 255 ? 255 : v8 + 0.5);
            }
        }
    }
}

sleapc_status sleapc__sample_write(const char *dir, const sleapc_sample_opts *opts)
{
    sleapc_sample_opts o = opts ? *opts : sleapc__sample_opts_default();
    if (!dir || o.n_frames < 1 || o.n_frames > 100000 || o.height < 64 || o.width < 64 ||
        o.height > 4096 || o.width > 4096)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "write sample: a folder, 1..100000 frames and 64..4096 pixel sides are required");
    char path[4096];
    snprintf(path, sizeof path, "%s/model", dir);
    mkdir(dir, 0777);
    if (mkdir(path, 0777) != 0) {
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            return sleapc__fail(SLEAPC_ERR_IO, "write sample: cannot create %s", path);
    }
    sleapc_status st = sleapc__sample_write_model(path);
    if (st)
        return sleapc__wrap(st, "write sample");

    size_t frame_bytes = (size_t)o.height * o.width * 3;
    uint8_t *frames = sleapc__malloc(frame_bytes * (size_t)o.n_frames);
    float *truth = sleapc__malloc((size_t)o.n_frames * N_NODES * 2 * sizeof(float));
    if (!frames || !truth) {
        sleapc__free(frames);
        sleapc__free(truth);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write sample: out of memory");
    }
    unsigned rng = o.seed;
    for (int t = 0; t < o.n_frames; t++) {
        pose_at(&o, t, &rng, truth + (size_t)t * N_NODES * 2);
        draw_frame(&o, truth + (size_t)t * N_NODES * 2, frames + (size_t)t * frame_bytes);
    }
    sleapc_tensor clip = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4,
                          .shape = {o.n_frames, o.height, o.width, 3}, .data = frames};
    sleapc_tensor gt = {.dtype = SLEAPC_DTYPE_F32, .ndim = 3, .shape = {o.n_frames, N_NODES, 2},
                        .data = truth};
    snprintf(path, sizeof path, "%s/clip.npy", dir);
    st = sleapc__npy_write(path, &clip);
    snprintf(path, sizeof path, "%s/truth.npy", dir);
    if (!st)
        st = sleapc__npy_write(path, &gt);
    sleapc__free(frames);
    sleapc__free(truth);
    return st ? sleapc__wrap(st, "write sample") : SLEAPC_OK;
}
