/* Ctrl-C (SIGINT) or SIGTERM during `sleapc predict`: the current batch
 * finishes, a valid .slp with the frames done so far is written, no
 * temporary file is left, and the exit status is 130 or 143 (128 + signal).
 * The same for `sleapc render` to a video (it used to leave its 5-7 MB
 * temporary file behind): the video keeps the frames drawn so far. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/slp/slp_read.h"
#include "sleapc/video.h"
#include "test_util.h"

static int count_tmp_files(const char *dir)
{
    char *names[64];
    int n = test_list_dir(dir, names, 64), k = 0;
    for (int i = 0; i < n; i++) {
        k += strstr(names[i], ".tmp.") != NULL;
        free(names[i]);
    }
    return k;
}

static void interrupt_predict(int sig, const char *m1, const char *m2, const char *video)
{
    char out[1024];
    snprintf(out, sizeof out, "%s/interrupted_%d.slp", test_tmp_dir(), sig);
    pid_t pid = fork();
    if (pid == 0) {
        execl(SLEAPC_CLI_PATH, "sleapc", "predict", "-m", m1, "-m", m2, "-i", video, "-o", out,
              "--batch_size", "1", "--threads", "1", "--quiet", (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0);
    /* Long enough to be inside the run (1100 frames take far longer). */
    struct timespec wait = {.tv_sec = 3, .tv_nsec = 0};
    nanosleep(&wait, NULL);
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig, "signal %d: exit status %d",
              sig, WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(out, &r));
    if (r) {
        /* Some frames, not all: the run stopped early and the file is whole. */
        CHECK_MSG(r->n_frames >= 1 && r->n_frames < 1100, "%lld frames", (long long)r->n_frames);
        CHECK(r->n_instances >= 1);
        sleapc__slp_close(r);
    }
    CHECK(count_tmp_files(test_tmp_dir()) == 0);
}

static void interrupt_render(int sig, const char *labels, const char *video)
{
    char out[1024];
    snprintf(out, sizeof out, "%s/rendered_%d.mkv", test_tmp_dir(), sig);
    pid_t pid = fork();
    if (pid == 0) {
        execl(SLEAPC_CLI_PATH, "sleapc", "render", labels, "-i", video, "-o", out, "--frames",
              "0-1099", "--quiet", (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0);
    /* Inside the drawing: its temporary video exists (at most a minute on
     * a loaded machine), and a few frames are in it. */
    struct timespec tick = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
    for (int i = 0; i < 600 && count_tmp_files(test_tmp_dir()) == 0; i++)
        nanosleep(&tick, NULL);
    struct timespec wait = {.tv_sec = 1, .tv_nsec = 0};
    nanosleep(&wait, NULL);
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig,
              "render, signal %d: exit status %d", sig,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(out, &v));
    if (v) {
        int64_t n = sleapc_video_n_frames(v);
        CHECK_MSG(n >= 1 && n < 1100, "%lld frames rendered", (long long)n);
        sleapc_video_close(v);
    }
    CHECK(count_tmp_files(test_tmp_dir()) == 0);
}

int main(void)
{
    test_require_data();
    char m1[2048], m2[2048], video[2048];
    snprintf(m1, sizeof m1, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(m2, sizeof m2, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));
    interrupt_predict(SIGINT, m1, m2, video);
    interrupt_predict(SIGTERM, m1, m2, video);
    char labels[1024];
    snprintf(labels, sizeof labels, "%s/interrupted_%d.slp", test_tmp_dir(), SIGTERM);
    interrupt_render(SIGINT, labels, video);
    interrupt_render(SIGTERM, labels, video);
    return test_finish();
}
