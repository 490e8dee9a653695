/* A run too large for the memory the process may take is refused with a
 * message before the network plans, never ended by a signal:
 * - `--input_scale 16` on the centroid model asks for a 6144x6144 network
 *   input (about 9 GiB of activations for two frames); under an 8 GiB
 *   address-space limit (RLIMIT_AS, set in the child before exec) `predict`
 *   used to die of SIGSEGV inside XNNPACK. Now: a clear error, exit 1, no
 *   output file, for the default backend and for XNNPACK alone (whose own
 *   planner does not check its allocations). The same limit lets a normal
 *   run through.
 * - SLEAPC_MEMORY_LIMIT caps the budget the same way (this part also runs
 *   under AddressSanitizer, which reserves terabytes of address space and so
 *   cannot run under RLIMIT_AS). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(SLEAPC_SANITIZED)
#define UNDER_ASAN 1
#else
#define UNDER_ASAN 0
#endif

static char err_text[8192];

/* Run sleapc with argv under an address-space limit (0: none) and an
 * environment variable (NULL: none); its stderr goes to err_text. Returns the
 * wait status. */
static int run_limited(const char *const *args, rlim_t as_bytes, const char *env)
{
    char err_path[1024];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", test_tmp_dir());
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 2);
            close(fd);
        }
        if (as_bytes) {
            struct rlimit rl = {.rlim_cur = as_bytes, .rlim_max = as_bytes};
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                _exit(126);
        }
        if (env) {
            char name[64];
            const char *eq = strchr(env, '=');
            snprintf(name, sizeof name, "%.*s", (int)(eq - env), env);
            setenv(name, eq + 1, 1);
        }
        execv(SLEAPC_CLI_PATH, (char *const *)args);
        _exit(127);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    size_t n = 0;
    unsigned char *text = test_read_file(err_path, &n);
    snprintf(err_text, sizeof err_text, "%.*s", (int)(n < sizeof err_text ? n : sizeof err_text - 1),
             text ? (const char *)text : "");
    free(text);
    return status;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Refused: exited (no signal) with status 1, said why, wrote nothing. */
static void check_refused(int status, const char *out, const char *label)
{
    CHECK_MSG(WIFEXITED(status), "%s: ended by signal %d", label,
              WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: exit %d", label,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    CHECK_MSG(strstr(err_text, "needs about") && strstr(err_text, "GiB of memory"),
              "%s: stderr: %s", label, err_text);
    CHECK_MSG(!exists(out), "%s: %s was written", label, out);
}

int main(void)
{
    test_require_data();
    char model[1024], video[1024], out[1024];
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));
    snprintf(out, sizeof out, "%s/big.slp", test_tmp_dir());

    /* The budget from SLEAPC_MEMORY_LIMIT: 64 MiB cannot hold the
     * centroid network on two frames at 384x384 (about 0.1 GiB). */
    const char *small[] = {"sleapc", "predict", "-m", model, "-i", video, "--frames", "0-1",
                           "-o", out, "--quiet", NULL};
    check_refused(run_limited(small, 0, "SLEAPC_MEMORY_LIMIT=64M"), out, "SLEAPC_MEMORY_LIMIT");
    CHECK_MSG(strstr(err_text, "SLEAPC_MEMORY_LIMIT") != NULL, "%s", err_text);

    if (UNDER_ASAN) {
        fprintf(stderr, "address-space limit cases skipped under AddressSanitizer\n");
        return test_finish();
    }
    const rlim_t eight_gib = (rlim_t)8 << 30;
    const char *big[] = {"sleapc", "predict", "-m", model, "-i", video, "--frames", "0-1",
                         "--input_scale", "16", "-o", out, "--backend", "auto", "--quiet", NULL};
    check_refused(run_limited(big, eight_gib, "SLEAPC_BACKEND=auto"), out, "auto, 8 GiB");
    CHECK_MSG(strstr(err_text, "address-space limit") != NULL, "%s", err_text);

    /* One frame (4.5 GiB of activations) passes the network's check;
     * XNNPACK's own plan is larger and is refused before XNNPACK runs. */
    const char *xnn[] = {"sleapc", "predict", "-m", model, "-i", video, "--frames", "0",
                         "--input_scale", "16", "-o", out, "--backend", "xnnpack", "--quiet",
                         NULL};
    int st = run_limited(xnn, eight_gib, NULL);
    if (strstr(err_text, "unknown backend") || strstr(err_text, "cannot run on this machine"))
        fprintf(stderr, "xnnpack case skipped: %s", err_text);
    else
        check_refused(st, out, "xnnpack, 8 GiB");

    /* The same limit runs the model at its own scale. */
    st = run_limited(small, eight_gib, NULL);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "normal run under 8 GiB: %s", err_text);
    CHECK(exists(out));
    return test_finish();
}
