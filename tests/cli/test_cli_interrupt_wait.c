/* SIGINT or SIGTERM ends any wait of `sleapc predict` on a live source
 * within a second, with exit status 128 + signal and no output file:
 * - a named pipe that no writer opens (the wait used to last for ever);
 * - a named pipe whose writer sent the start of a video and went quiet;
 * - a TCP server that accepts and never sends (the live timeout set to a
 *   minute, so only the signal can end it).
 * Each signal is sent once the command waits (it holds the pipe open, or
 * the server has its connection), plus 0.3 s. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_s(double s)
{
    struct timespec t = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Whether process pid has path open (one of /proc/pid/fd links to it). */
static bool holds_open(pid_t pid, const char *path)
{
    char dir[64], link[1100], target[1100];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        snprintf(link, sizeof link, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            found = strcmp(target, path) == 0;
        }
    }
    closedir(d);
    return found;
}

static pid_t start_predict(const char *input, const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        setenv("SLEAPC_LIVE_TIMEOUT_S", "60", 1);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 2);
        execl(SLEAPC_CLI_PATH, "sleapc", "predict", "-m",
              test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"), "-i",
              input, "-o", out, "--quiet", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Signal pid 0.3 s after it is waiting; it must exit within a second with
 * 128 + sig and leave no output. */
static void stop_and_check(pid_t pid, int sig, const char *out, const char *label)
{
    sleep_s(0.3);
    double t0 = now_s();
    kill(pid, sig);
    int status = -1;
    pid_t r = 0;
    while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_s() - t0 < 10.0)
        sleep_s(0.01);
    double took = now_s() - t0;
    if (r == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    CHECK_MSG(took < 1.0, "%s: took %.2f s to end", label, took);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig, "%s: status %d%s", label,
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
              WIFEXITED(status) ? "" : " (killed by that signal)");
    CHECK_MSG(!exists(out), "%s: %s was written", label, out);
}

/* Wait (at most 60 s) until cond(pid, arg) holds. */
static bool wait_until(bool (*cond)(pid_t, const char *), pid_t pid, const char *arg)
{
    for (int i = 0; i < 6000; i++) {
        if (cond(pid, arg))
            return true;
        sleep_s(0.01);
    }
    return false;
}

static void fifo_cases(void)
{
    char fifo[1100], out[1100], video[1100];
    snprintf(fifo, sizeof fifo, "%s/in.fifo", test_tmp_dir());
    snprintf(out, sizeof out, "%s/fifo.slp", test_tmp_dir());
    snprintf(video, sizeof video, "%s", test_data_path("sleap-nn-assets/datasets/small_robot.mp4"));
    CHECK(mkfifo(fifo, 0600) == 0);
    char real[1100];
    if (!realpath(fifo, real))
        snprintf(real, sizeof real, "%s", fifo);
    /* No writer at all. */
    pid_t pid = start_predict(fifo, out);
    CHECK_MSG(wait_until(holds_open, pid, real), "predict never opened %s", fifo);
    stop_and_check(pid, SIGINT, out, "named pipe, no writer, SIGINT");
    /* A writer that sends the start of a video and stalls. */
    pid = start_predict(fifo, out);
    int w = open(fifo, O_WRONLY); /* blocks until predict opens the pipe */
    size_t n = 0;
    unsigned char *bytes = test_read_file(video, &n);
    CHECK(w >= 0 && bytes && n > 4096);
    if (w >= 0 && bytes)
        CHECK(write(w, bytes, 4096) == 4096);
    free(bytes);
    stop_and_check(pid, SIGTERM, out, "named pipe, stalled writer, SIGTERM");
    if (w >= 0)
        close(w);
}

static void tcp_case(void)
{
    char out[1100], url[128];
    snprintf(out, sizeof out, "%s/tcp.slp", test_tmp_dir());
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    CHECK(srv >= 0 && bind(srv, (struct sockaddr *)&addr, sizeof addr) == 0 &&
          listen(srv, 1) == 0 && getsockname(srv, (struct sockaddr *)&addr, &len) == 0);
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", (int)ntohs(addr.sin_port));
    pid_t pid = start_predict(url, out);
    /* Accept its connection (it then waits for bytes that never come). */
    int conn = -1;
    for (int i = 0; i < 6000 && conn < 0; i++) {
        struct pollfd p = {.fd = srv, .events = POLLIN};
        if (poll(&p, 1, 10) > 0)
            conn = accept(srv, NULL, NULL);
    }
    CHECK_MSG(conn >= 0, "predict never connected");
    stop_and_check(pid, SIGINT, out, "TCP, silent server, SIGINT");
    if (conn >= 0)
        close(conn);
    close(srv);
}

int main(void)
{
    test_require_data();
    fifo_cases();
    tcp_case();
    return test_finish();
}
