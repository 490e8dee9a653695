/* A test program's temporary directory is gone after it exits, with what it
 * held (a full suite run used to leave one folder per test program behind). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

int main(void)
{
    const char *keep = getenv("SLEAPC_KEEP_TEMP");
    if (keep && *keep && strcmp(keep, "0") != 0) {
        printf("SLEAPC_KEEP_TEMP is set: nothing to check\n");
        return 77;
    }
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        /* A test program of its own: a directory with a file and a folder. */
        close(fds[0]);
        const char *dir = test_tmp_dir();
        char path[512];
        snprintf(path, sizeof path, "%s/sub", dir);
        int ok = mkdir(path, 0700) == 0;
        snprintf(path, sizeof path, "%s/sub/file.bin", dir);
        ok = ok && test_write_file(path, "x", 1);
        snprintf(path, sizeof path, "%s/top.txt", dir);
        ok = ok && test_write_file(path, "y", 1);
        ok = ok && write(fds[1], dir, strlen(dir) + 1) == (ssize_t)(strlen(dir) + 1);
        close(fds[1]);
        exit(ok ? 0 : 1);
    }
    close(fds[1]);
    char dir[512] = {0};
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof dir && (r = read(fds[0], dir + got, sizeof dir - 1 - got)) > 0)
        got += (size_t)r;
    close(fds[0]);
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(strstr(dir, "sleapc_test_") != NULL);
    struct stat sb;
    CHECK_MSG(stat(dir, &sb) != 0 && errno == ENOENT, "%s is still there", dir);
    return test_finish();
}
