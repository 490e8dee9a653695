/* No thread to be had: `sleapc predict` ends with a `sleapc: error:` line
 * and exit 1, whether sleapc's own pool fails to start a worker or a library
 * gives up by itself (libgomp under oneDNN printed only its own line and
 * exited). Threads are made impossible by a 1 GiB default thread stack
 * (RLIMIT_STACK) under a 4 GiB address-space limit (RLIMIT_AS), so the
 * fourth or so worker cannot get its stack. The sanitizers reserve far more
 * address space than that, so the sanitizer build skips this test. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define MODEL "sleap-nn-assets/model_ckpts/minimal_instance_bottomup"
#define FRAME "reference/bottomup__pkg_f0000/frame.npy"

static char output[16384];

static int predict_starved(const char *backend)
{
    char out[1024];
    snprintf(out, sizeof out, "%s/starved.json", test_tmp_dir());
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[1]);
        char model[2048], frame[2048];
        snprintf(model, sizeof model, "%s", test_data_path(MODEL));
        snprintf(frame, sizeof frame, "%s", test_data_path(FRAME));
        struct rlimit stack = {1ull << 30, 1ull << 30}, as = {4ull << 30, 4ull << 30};
        if (setrlimit(RLIMIT_STACK, &stack) != 0 || setrlimit(RLIMIT_AS, &as) != 0)
            _exit(126);
        execl(SLEAPC_CLI_PATH, "sleapc", "predict", "-m", model, "-i", frame, "-o", out,
              "--threads", "8", "--backend", backend, "--quiet", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof output && (r = read(fds[0], output + got, sizeof output - 1 - got)) > 0)
        got += (size_t)r;
    output[got] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(void)
{
#ifdef SLEAPC_SANITIZED
    printf("skipped: the sanitizers need more address space than the limit leaves\n");
    return 77;
#endif
    test_require_data();
    int rc = predict_starved("native");
    CHECK_MSG(rc == 1 && strstr(output, "sleapc: error: ") &&
                  strstr(output, "cannot create a thread"),
              "native: exit %d: %s", rc, output);
    /* Whichever gives up (sleapc's pool or libgomp; or oneDNN is not built
     * here), the error line. */
    rc = predict_starved("onednn");
    CHECK_MSG(rc == 1 && strstr(output, "sleapc: error: "), "onednn: exit %d: %s", rc, output);
    return test_finish();
}
