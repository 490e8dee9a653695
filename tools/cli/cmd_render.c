/* sleapc render: a predictions file's poses drawn on the video's frames, as
 * one PNG or as a video. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sleapc/input.h"
#include "sleapc/render.h"
#include "sleapc/video.h"
#include "sleapc/writer.h"

static int usage(void)
{
    printf("usage: sleapc render PREDICTIONS [-i VIDEO] -o OUTPUT [options]\n"
           "\n"
           "Draws the instances of predictions (a .slp file, sleapc's .json or an analysis\n"
           ".h5; edges as lines, nodes as dots, one colour per track or instance) on the\n"
           "frames of its video (give it with -i for .json and .h5).\n"
           "\n"
           "  -i, --video VIDEO       the frames (default: the video the .slp file names)\n"
           "  -o, --output OUTPUT     .png: one frame; .mp4/.mov: a video (H.264);\n"
           "                          .mkv/.avi: a lossless video (FFV1)\n"
           "  --frames LIST           frames to draw, e.g. 0-99,150 (default: the labeled\n"
           "                          frames; a .png shows the first)\n"
           "  --video_index N         which video of the .slp file (0)\n"
           "  --fps X                 frame rate of a video output (that of the source)\n"
           "  --node_radius PX        node dot radius (from the frame size)\n"
           "  --line_width PX         edge thickness (from the frame size)\n"
           "  --quiet                 no summary line\n"
           "\n"
           "Ctrl-C (SIGINT) or SIGTERM stops after the current frame; a video keeps the frames\n"
           "drawn so far (exit 130 or 143).\n");
    return 0;
}

/* The signal that asked for a stop (SIGINT or SIGTERM), 0 while drawing. */
static volatile sig_atomic_t render_stop;

static void on_render_stop(int sig)
{
    render_stop = sig;
}

/* The library's abort callback: the flag the handler above sets. */
static bool render_stop_requested(void *user)
{
    (void)user;
    return render_stop != 0;
}

static bool parse_positive(const char *s, double hi, double *out)
{
    char *end = NULL;
    double v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || *end || !(v > 0 && v <= hi))
        return false;
    *out = v;
    return true;
}

/* Frames in the video the frames come from, so --frames can be checked
 * before anything is drawn. 0 after printing an error. */
static int64_t count_frames(const char *labels, const char *video, int video_index)
{
    int64_t n = 0;
    if (video) {
        sleapc_video *v = NULL;
        if (sleapc_video_open(video, &v)) {
            cli_lib_error();
            return 0;
        }
        n = sleapc_video_n_frames(v);
        sleapc_video_close(v);
    } else {
        sleapc_input *in = NULL;
        if (sleapc_input_open(labels, video_index, &in)) {
            cli_lib_error();
            return 0;
        }
        n = sleapc_input_n_frames(in);
        sleapc_input_close(in);
    }
    return n;
}

int cmd_render(int argc, char **argv)
{
    const char *labels = NULL, *video = NULL, *out = NULL, *frames_spec = NULL;
    bool quiet = false;
    sleapc_render_opts o = sleapc_render_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        double d;
        long n;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return usage();
        if (cli_is_option(a, "video", "-i") || cli_is_option(a, "input", NULL)) {
            if (!(video = cli_option_value(argc, argv, &i, "video")))
                return 1;
        } else if (cli_is_option(a, "output", "-o")) {
            if (!(out = cli_option_value(argc, argv, &i, "output")))
                return 1;
        } else if (cli_is_option(a, "frames", NULL)) {
            if (!(frames_spec = cli_option_value(argc, argv, &i, "frames")))
                return 1;
        } else if (cli_is_option(a, "video_index", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "video_index")))
                return 1;
            if (!cli_parse_int(v, 0, 100000, &n))
                return cli_error("--video_index: expected 0..100000, got \"%s\"", v);
            o.video_index = (int)n;
        } else if (cli_is_option(a, "fps", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "fps")))
                return 1;
            if (!parse_positive(v, 1000, &d))
                return cli_error("--fps: expected a number in (0, 1000], got \"%s\"", v);
            o.fps = d;
        } else if (cli_is_option(a, "node_radius", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "node_radius")))
                return 1;
            if (!parse_positive(v, 1000, &d))
                return cli_error("--node_radius: expected a number in (0, 1000], got \"%s\"", v);
            o.node_radius_px = d;
        } else if (cli_is_option(a, "line_width", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "line_width")))
                return 1;
            if (!parse_positive(v, 1000, &d))
                return cli_error("--line_width: expected a number in (0, 1000], got \"%s\"", v);
            o.line_width_px = d;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_unknown_option("render", a,
                                      (const char *const[]){"video", "input", "output", "frames",
                                                            "video_index", "fps", "node_radius",
                                                            "line_width", "quiet", "help"},
                                      10);
        } else if (labels) {
            return cli_error("render: one predictions file only (got \"%s\" and \"%s\")", labels,
                             a);
        } else {
            labels = a;
        }
    }
    if (!labels || !out)
        return cli_error("render: a PREDICTIONS.slp file and -o OUTPUT are required "
                         "(see sleapc render --help)");
    const char *inputs[] = {labels, video};
    if (cli_check_output(out, inputs, 2))
        return 1;

    /* Ctrl-C or SIGTERM: the video so far is closed and kept (exit 130/143). */
    signal(SIGINT, on_render_stop);
    signal(SIGTERM, on_render_stop);
    sleapc_abort_set(render_stop_requested, NULL);
    int64_t *idx = NULL, n_idx = 0;
    if (frames_spec) {
        int64_t n_frames = count_frames(labels, video, o.video_index);
        if (n_frames < 1 || cli_parse_frames(frames_spec, n_frames, &idx, &n_idx))
            return 1;
    }
    /* JSON and analysis HDF5 predictions are drawn from a temporary .slp copy. */
    char tmp[4096] = "";
    const char *drawn = labels;
    size_t len = strlen(labels);
    bool json = len > 5 && strcmp(labels + len - 5, ".json") == 0;
    bool h5 = (len > 3 && strcmp(labels + len - 3, ".h5") == 0) ||
              (len > 5 && strcmp(labels + len - 5, ".hdf5") == 0);
    if (json || h5) {
        if (!video) {
            free(idx);
            return cli_error("render %s: give the video with -i (the video path in a %s file "
                             "may be relative to where it was predicted)", labels,
                             json ? "JSON" : "analysis HDF5");
        }
        snprintf(tmp, sizeof tmp, "%s.render-%ld.slp", out, (long)getpid());
        if (sleapc_predictions_convert(labels, tmp)) {
            free(idx);
            return cli_lib_error();
        }
        drawn = tmp;
    }
    int rc = 0;
    bool drawn_tmp = tmp[0] != 0;
    sleapc_status st = sleapc_render(drawn, video, out, idx, n_idx, &o);
    sleapc_abort_set(NULL, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (tmp[0])
        remove(tmp);
    if (st == SLEAPC_ERR_INTERRUPTED) {
        fprintf(stderr, "\nsleapc: interrupted: %s\n", sleapc_last_error());
        rc = 128 + (render_stop ? (int)render_stop : SIGINT);
    } else if (st) {
        rc = cli_lib_error();
    } else if (!quiet && !drawn_tmp) {
        fprintf(stderr, "sleapc: rendered %s -> %s\n", labels, out);
    }
    free(idx);
    return rc;
}
