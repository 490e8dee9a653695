/* Ctrl-C during `sleapc predict`: the current batch finishes, a valid .slp
 * with the frames done so far is written, and the exit status is 130. */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/slp/slp_read.h"
#include "test_util.h"

int main(void)
{
    test_require_data();
    char m1[2048], m2[2048], video[2048], out[1024];
    snprintf(m1, sizeof m1, "%s", test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(m2, sizeof m2, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    snprintf(video, sizeof video, "%s", test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));
    snprintf(out, sizeof out, "%s/interrupted.slp", test_tmp_dir());

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
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 130, "exit status %d",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(out, &r));
    if (r) {
        /* Some frames, not all: the run stopped early and the file is whole. */
        CHECK_MSG(r->n_frames >= 1 && r->n_frames < 1100, "%lld frames", (long long)r->n_frames);
        CHECK(r->n_instances >= 1);
        sleapc__slp_close(r);
    }
    return test_finish();
}
