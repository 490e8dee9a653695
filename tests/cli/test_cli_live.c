/* Live sources in `sleapc predict`: a video's bytes written into the
 * command's standard input (-i -) and into a named pipe give, frame for
 * frame, the predictions of the same file read from disk, bit for bit (one
 * backend named for all runs, the same decoder); so does a TCP stream the
 * test serves, which then goes quiet and is taken as ended after the live
 * timeout (SLEAPC_LIVE_TIMEOUT_S, 1 s here). The predictions record the
 * source as given and the frame count seen. A URL that cannot be opened
 * fails at once with a clear error naming it, a server that never sends
 * fails after the timeout; a live source without -o, or with --frames, is
 * refused before any work. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/slp/slp_read.h"
#include "io/video/video_encode.h"
#include "sleapc/video.h"
#include "test_util.h"

#define N_FRAMES 6

static const char *model_dir(void)
{
    static char path[2048];
    snprintf(path, sizeof path, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    return path;
}

/* The first frames of a real video, encoded (lossy, so the decoder's output
 * is what is compared) into a Matroska file, which streams without seeking. */
static bool make_clip(const char *out)
{
    sleapc_video *v = NULL;
    if (sleapc_video_open(test_data_path("sleap-nn-assets/datasets/small_robot.mp4"), &v))
        return false;
    int64_t h, w, c;
    sleapc_video_shape(v, &h, &w, &c);
    uint8_t *frame = malloc((size_t)(h * w * c));
    sleapc_video_writer *vw = NULL;
    sleapc_status st = frame ? sleapc__video_writer_open(out, h, w, c, 15.0, false, &vw)
                             : SLEAPC_ERR_NOMEM;
    for (int64_t k = 0; !st && k < N_FRAMES; k++) {
        st = sleapc_video_read(v, k, frame);
        if (!st)
            st = sleapc__video_writer_write(vw, frame);
    }
    if (!st)
        st = sleapc__video_writer_close(vw);
    else
        sleapc__video_writer_discard(vw);
    free(frame);
    sleapc_video_close(v);
    return st == SLEAPC_OK;
}

/* Run `sleapc predict -i <input> -o <out>` with the clip's bytes written into
 * its standard input (stdin_pipe) or into the named pipe fifo by a second
 * process. Returns the exit status. */
static int predict_fed(const char *input, const char *out, const unsigned char *bytes, size_t n,
                       const char *fifo)
{
    int fds[2] = {-1, -1};
    if (!fifo && pipe(fds) != 0)
        return -1;
    pid_t cli = fork();
    if (cli == 0) {
        if (!fifo) {
            dup2(fds[0], 0);
            close(fds[0]);
            close(fds[1]);
        }
        execl(SLEAPC_CLI_PATH, "sleapc", "predict", "-m", model_dir(), "-i", input, "-o", out,
              "--batch_size", "2", "--backend", "native", "--quiet", (char *)NULL);
        _exit(127);
    }
    pid_t feeder = fork();
    if (feeder == 0) {
        signal(SIGPIPE, SIG_IGN);
        int fd = fifo ? open(fifo, O_WRONLY) : fds[1];
        if (fifo && fds[0] >= 0)
            close(fds[0]);
        for (size_t done = 0; fd >= 0 && done < n;) {
            ssize_t k = write(fd, bytes + done, n - done);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            done += (size_t)k;
        }
        _exit(0);
    }
    if (!fifo) {
        close(fds[0]);
        close(fds[1]);
    }
    int status = 0, ignored = 0;
    waitpid(cli, &status, 0);
    waitpid(feeder, &ignored, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Same frames, same instances, same bits. */
static void check_same(const char *want_path, const char *got_path, const char *source)
{
    sleapc_slp *want = NULL, *got = NULL;
    CHECK_OK(sleapc__slp_open(want_path, &want));
    CHECK_OK(sleapc__slp_open(got_path, &got));
    if (!want || !got)
        goto done;
    CHECK_MSG(want->n_frames == N_FRAMES && got->n_frames == N_FRAMES, "%lld and %lld frames",
              (long long)want->n_frames, (long long)got->n_frames);
    CHECK(want->n_instances == got->n_instances && want->n_points == got->n_points);
    for (int64_t k = 0; k < want->n_frames && k < got->n_frames; k++)
        CHECK(want->frames[k].frame_idx == got->frames[k].frame_idx &&
              want->frames[k].n_instances == got->frames[k].n_instances);
    int64_t n_pts = want->n_points < got->n_points ? want->n_points : got->n_points;
    int64_t differ = 0;
    for (int64_t i = 0; i < n_pts; i++) {
        const sleapc_slp_point *a = &want->points[i], *b = &got->points[i];
        bool same = (memcmp(&a->x, &b->x, sizeof a->x) == 0 || (isnan(a->x) && isnan(b->x))) &&
                    (memcmp(&a->y, &b->y, sizeof a->y) == 0 || (isnan(a->y) && isnan(b->y))) &&
                    (memcmp(&a->score, &b->score, sizeof a->score) == 0 ||
                     (isnan(a->score) && isnan(b->score)));
        differ += !same;
    }
    CHECK_MSG(differ == 0, "%s: %lld of %lld points differ from the file's", source,
              (long long)differ, (long long)n_pts);
    for (int64_t i = 0; i < want->n_instances && i < got->n_instances; i++)
        CHECK(memcmp(&want->instances[i].score, &got->instances[i].score, sizeof(float)) == 0);
    /* The source as given, and the frames seen as its length. */
    CHECK(got->n_videos == 1);
    if (got->n_videos == 1) {
        CHECK_MSG(strcmp(got->videos[0].filename, source) == 0, "recorded \"%s\"",
                  got->videos[0].filename);
        CHECK_MSG(got->videos[0].n_frames == N_FRAMES, "recorded %lld frames",
                  (long long)got->videos[0].n_frames);
        CHECK(got->videos[0].height == want->videos[0].height &&
              got->videos[0].width == want->videos[0].width);
    }
done:
    sleapc__slp_close(want);
    sleapc__slp_close(got);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void expect_error(const char *args, const char *needle, const char *out)
{
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 1, "%s: exit %d", args, rc);
    CHECK_MSG(strstr(test_cli_output(), "sleapc: error:") && strstr(test_cli_output(), needle),
              "%s: output lacks \"%s\": %s", args, needle, test_cli_output());
    struct stat sb;
    CHECK_MSG(!out || stat(out, &sb) != 0, "%s left %s behind", args, out);
}

static void check_errors(const char *clip)
{
    char args[8192], out[1024];
    snprintf(out, sizeof out, "%s/never.slp", test_tmp_dir());
    /* Nothing listens on port 1: refused at once, not after a timeout. */
    const char *urls[] = {"tcp://127.0.0.1:1", "http://127.0.0.1:1/camera.mp4",
                          "rtsp://127.0.0.1:1/stream"};
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model_dir(),
                 urls[i], out);
        double t0 = now_s();
        expect_error(args, urls[i], out);
        CHECK_MSG(now_s() - t0 < 8.0, "%s: the error took %.1f s", urls[i], now_s() - t0);
    }
    snprintf(args, sizeof args, "predict -m '%s' -i - < '%s'", model_dir(), clip);
    expect_error(args, "give -o", NULL);
    snprintf(args, sizeof args, "predict -m '%s' -i - -o '%s' --frames 0-2 < '%s'", model_dir(),
             out, clip);
    expect_error(args, "--frames", out);
    /* Not a video at all, through a pipe. */
    snprintf(args, sizeof args, "predict -m '%s' -i - -o '%s' --quiet < /dev/null", model_dir(),
             out);
    expect_error(args, "-:", out);
}

/* A TCP server on 127.0.0.1 (a free port) in a child process: it accepts one
 * connection, sends bytes (n may be 0), then holds the connection open. */
static pid_t serve_tcp(const unsigned char *bytes, size_t n, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        int c = accept(fd, NULL, NULL);
        for (size_t done = 0; c >= 0 && done < n;) {
            ssize_t k = write(c, bytes + done, n - done);
            if (k <= 0)
                break;
            done += (size_t)k;
        }
        struct timespec hold = {.tv_sec = 60, .tv_nsec = 0};
        nanosleep(&hold, NULL);
        _exit(0);
    }
    close(fd);
    return pid;
}

static void stop_server(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
}

static void check_tcp(const unsigned char *bytes, size_t n, const char *from_file)
{
    char url[64], out[1024], args[8192];
    int port = 0;
    setenv("SLEAPC_LIVE_TIMEOUT_S", "1", 1);
    /* The clip, then silence: taken as the end after 1 s, all frames kept. */
    pid_t server = serve_tcp(bytes, n, &port);
    CHECK(server > 0);
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", port);
    snprintf(out, sizeof out, "%s/tcp.slp", test_tmp_dir());
    snprintf(args, sizeof args,
             "predict -m '%s' -i '%s' -o '%s' --batch_size 2 --backend native --quiet",
             model_dir(), url, out);
    int rc = server > 0 ? test_run_cli(args) : -1;
    stop_server(server);
    CHECK_MSG(rc == 0, "%s: exit %d: %s", url, rc, test_cli_output());
    CHECK_MSG(strstr(test_cli_output(), "taking it as the end") != NULL, "no warning: %s",
              test_cli_output());
    if (rc == 0)
        check_same(from_file, out, url);
    /* A server that accepts and never sends: an error after the timeout. */
    server = serve_tcp(bytes, 0, &port);
    CHECK(server > 0);
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", port);
    snprintf(out, sizeof out, "%s/silent.slp", test_tmp_dir());
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model_dir(), url, out);
    double t0 = now_s();
    if (server > 0)
        expect_error(args, url, out);
    CHECK_MSG(now_s() - t0 < 10.0, "%s: the error took %.1f s", url, now_s() - t0);
    stop_server(server);
    unsetenv("SLEAPC_LIVE_TIMEOUT_S");
}

int main(void)
{
    test_require_data();
    char clip[1024], from_file[1024], from_stdin[1024], from_fifo[1024], fifo[1024], args[8192];
    snprintf(clip, sizeof clip, "%s/clip.mkv", test_tmp_dir());
    snprintf(from_file, sizeof from_file, "%s/file.slp", test_tmp_dir());
    snprintf(from_stdin, sizeof from_stdin, "%s/stdin.slp", test_tmp_dir());
    snprintf(from_fifo, sizeof from_fifo, "%s/fifo.slp", test_tmp_dir());
    snprintf(fifo, sizeof fifo, "%s/camera.fifo", test_tmp_dir());
    CHECK(make_clip(clip));
    size_t n = 0;
    unsigned char *bytes = test_read_file(clip, &n);
    CHECK(bytes != NULL && n > 0);
    if (!bytes)
        return test_finish();

    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --batch_size 2 --backend native --quiet",
             model_dir(), clip, from_file);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());

    CHECK(predict_fed("-", from_stdin, bytes, n, NULL) == 0);
    check_same(from_file, from_stdin, "-");

    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(predict_fed(fifo, from_fifo, bytes, n, fifo) == 0);
    check_same(from_file, from_fifo, fifo);

    check_tcp(bytes, n, from_file);
    check_errors(clip);
    free(bytes);
    return test_finish();
}
