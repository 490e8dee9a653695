/* A full disk while the output is written: `sleapc predict` ends with one
 * clean error line naming the file, exit 1, no output and no temporary file
 * left behind (a .slp or .h5 used to end in a segfault, libhdf5 crashing at
 * exit on the file whose close had failed, after dumping its error stack).
 * The full disk is a file-size limit (RLIMIT_FSIZE with SIGXFSZ ignored):
 * writes past it fail with EFBIG exactly as they fail with ENOSPC on a full
 * disk, and it needs no privileges or mounts. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define MODEL "sleap-nn-assets/model_ckpts/minimal_instance_bottomup"
#define FRAME "reference/bottomup__pkg_f0000/frame.npy"

static char output[65536];

/* Run predict with writes limited to limit bytes per file; the exit status
 * (-1 for a signal), its stderr in output. */
static int predict_limited(const char *out, rlim_t limit)
{
    /* stderr goes to a pipe: the limit applies to every file the child
     * writes, a log file included. */
    int fds[2];
    if (pipe(fds) != 0)
        return -1000;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        close(fds[1]);
        struct rlimit rl = {limit, limit};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(126);
        char model[2048], frame[2048];
        snprintf(model, sizeof model, "%s", test_data_path(MODEL));
        snprintf(frame, sizeof frame, "%s", test_data_path(FRAME));
        execl(SLEAPC_CLI_PATH, "sleapc", "predict", "-m", model, "-i", frame, "-o", out, "--quiet",
              (char *)NULL);
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
    if (WIFSIGNALED(status))
        return -WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1000;
}

static int count_leftovers(const char *dir, const char *base)
{
    char *names[64];
    int n = test_list_dir(dir, names, 64), k = 0;
    for (int i = 0; i < n; i++) {
        k += strncmp(names[i], base, strlen(base)) == 0;
        free(names[i]);
    }
    return k;
}

static void check_format(const char *ext)
{
    char dir[1024], out[1024], base[64];
    snprintf(base, sizeof base, "out.%s", ext);
    snprintf(dir, sizeof dir, "%s/full_%s", test_tmp_dir(), ext);
    mkdir(dir, 0700);
    snprintf(out, sizeof out, "%s/%s", dir, base);

    /* Unlimited first: the run itself works. */
    int rc = predict_limited(out, RLIM_INFINITY);
    CHECK_MSG(rc == 0, "%s without a limit: exit %d: %s", ext, rc, output);
    struct stat sb;
    CHECK(stat(out, &sb) == 0 && sb.st_size > 2);
    off_t full = sb.st_size;
    unlink(out);

    /* Limits that cut the file at its start, middle and last byte. */
    rlim_t limits[] = {1, (rlim_t)full / 2, (rlim_t)full - 1};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        rc = predict_limited(out, limits[i]);
        CHECK_MSG(rc == 1, "%s cut at %llu bytes: exit %d: %s", ext, (unsigned long long)limits[i],
                  rc, output);
        CHECK_MSG(strstr(output, "sleapc: error: ") && strstr(output, out) &&
                      strstr(output, "File too large"),
                  "%s: the error does not name the file and the cause: %s", ext, output);
        CHECK_MSG(!strstr(output, "HDF5-DIAG") && !strstr(output, "#000"),
                  "%s: libhdf5's error stack printed: %s", ext, output);
        /* Warnings about the predictions may come first (an untracked
         * multi-animal .h5); then one line: the error, naming the path once
         * (libhdf5 used to name it three times), and nothing else. */
        const char *err = strstr(output, "sleapc: error: ");
        for (const char *l = output; err && l < err; l = strchr(l, '\n') + 1)
            CHECK_MSG(strncmp(l, "sleapc: warning: ", 17) == 0, "%s: not a warning: %s", ext, l);
        const char *first = err ? strstr(err, out) : NULL;
        CHECK_MSG(first && !strstr(first + strlen(out), out), "%s: the path more than once: %s",
                  ext, output);
        const char *nl = err ? strchr(err, '\n') : NULL;
        CHECK_MSG(nl && nl[1] == '\0', "%s: more than one line: %s", ext, output);
        CHECK_MSG(count_leftovers(dir, base) == 0, "%s: output or temporary file left", ext);
    }
}

int main(void)
{
    test_require_data();
    const char *exts[] = {"slp", "h5", "json", "csv"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        check_format(exts[i]);
    return test_finish();
}
