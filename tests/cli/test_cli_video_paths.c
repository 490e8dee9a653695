/* Predictions name their video so that they open it from any folder:
 * `predict -i clip.mp4 -o out/rel.slp` run from the clip's folder records
 * the clip's absolute path (it used to record "clip.mp4", relative to where
 * predict ran, so `cd out && sleapc render rel.slp` found no video); render
 * from inside out/ then draws. When the recorded path is gone (the folder
 * moved), a video of the same name beside the labels is still found, as
 * sleap-io finds it. Live sources stay as given (test_cli_live). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/slp/slp_read.h"
#include "test_util.h"

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Run sleapc with argv in folder dir; the exit status (-1: no exit). */
static int run_in(const char *dir, const char *const *argv)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 2);
        if (chdir(dir) != 0)
            _exit(126);
        execv(SLEAPC_CLI_PATH, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool copy_file(const char *src, const char *dst)
{
    size_t n = 0;
    unsigned char *bytes = test_read_file(src, &n);
    bool ok = bytes && test_write_file(dst, bytes, n);
    free(bytes);
    return ok;
}

int main(void)
{
    test_require_data();
    const char *tmp = test_tmp_dir();
    char work[1100], out_dir[1200], clip[1200], model[2048];
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    snprintf(work, sizeof work, "%s/work", tmp);
    snprintf(out_dir, sizeof out_dir, "%s/out", work);
    CHECK(mkdir(work, 0777) == 0 && mkdir(out_dir, 0777) == 0);
    snprintf(clip, sizeof clip, "%s/clip.mp4", work);
    CHECK(copy_file(test_data_path("sleap-nn-assets/datasets/small_robot.mp4"), clip));

    const char *predict[] = {"sleapc", "predict", "-m", model, "-i", "clip.mp4", "--frames",
                             "0-1", "-o", "out/rel.slp", "-q", NULL};
    CHECK(run_in(work, predict) == 0);
    char labels[1300];
    snprintf(labels, sizeof labels, "%s/rel.slp", out_dir);
    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(labels, &r));
    if (r) {
        char want[1300];
        char *real = realpath(clip, NULL);
        snprintf(want, sizeof want, "%s", real ? real : clip);
        free(real);
        CHECK_MSG(r->n_videos == 1 && strcmp(r->videos[0].filename, want) == 0,
                  "recorded video \"%s\", want \"%s\"", r->n_videos ? r->videos[0].filename : "",
                  want);
        sleapc__slp_close(r);
    }
    const char *render[] = {"sleapc", "render", "rel.slp", "-o", "frame.png", "-q", NULL};
    CHECK_MSG(run_in(out_dir, render) == 0, "render from the labels' folder failed");
    char png[1300];
    snprintf(png, sizeof png, "%s/frame.png", out_dir);
    CHECK(exists(png));

    /* The recorded path gone, the video beside the labels: still found. */
    char moved[1300];
    snprintf(moved, sizeof moved, "%s/clip.mp4", out_dir);
    CHECK(rename(clip, moved) == 0);
    unlink(png);
    CHECK_MSG(run_in(out_dir, render) == 0, "render with the video beside the labels failed");
    CHECK(exists(png));
    return test_finish();
}
