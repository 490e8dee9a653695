/* Readers refuse FIFOs and devices before reading them: a named pipe given
 * as a labels file, a .npy or render's input used to hang the open forever.
 * A watchdog unblocks any reader still waiting (by opening the pipe's other
 * end) and records the hang as a failure, so the test ends either way. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy/npy_file.h"
#include "io/slp/slp_read.h"
#include "sleapc/input.h"
#include "test_util.h"

#define WATCHDOG_S 10

static char fifo_slp[512], fifo_npy[512];
static volatile sig_atomic_t hung;

static void unblock(int sig)
{
    (void)sig;
    hung = 1;
    const char *paths[2] = {fifo_slp, fifo_npy};
    for (int i = 0; i < 2; i++) {
        int fd = open(paths[i], O_WRONLY | O_NONBLOCK);
        if (fd >= 0)
            close(fd);
    }
    alarm(1);
}

static void expect_refused(sleapc_status st, const char *path, const char *what)
{
    CHECK_MSG(st != SLEAPC_OK && strstr(sleapc_last_error(), path) &&
                  strstr(sleapc_last_error(), "not a regular file"),
              "%s: %s", what, sleapc_last_error());
    CHECK_MSG(!hung, "%s hung on a FIFO", what);
    hung = 0;
}

int main(void)
{
    const char *dir = test_tmp_dir();
    snprintf(fifo_slp, sizeof fifo_slp, "%s/labels.slp", dir);
    snprintf(fifo_npy, sizeof fifo_npy, "%s/frames.npy", dir);
    CHECK(mkfifo(fifo_slp, 0600) == 0 && mkfifo(fifo_npy, 0600) == 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = unblock;
    sigaction(SIGALRM, &sa, NULL);
    alarm(WATCHDOG_S);

    sleapc_tensor t;
    expect_refused(sleapc__npy_read(fifo_npy, &t), fifo_npy, "npy reader");
    expect_refused(sleapc__npy_read("/dev/zero", &t), "/dev/zero", "npy reader (device)");

    sleapc_slp *slp = NULL;
    expect_refused(sleapc__slp_open(fifo_slp, &slp), fifo_slp, "labels reader");
    CHECK(slp == NULL);
    sleapc_input *in = NULL;
    expect_refused(sleapc_input_open(fifo_slp, 0, &in), fifo_slp, "labels input");
    CHECK(in == NULL);

    /* The command line: render names the file and fails. */
    char args[2048];
    snprintf(args, sizeof args, "render '%s' -o '%s/out.png'", fifo_slp, dir);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 1 && strstr(test_cli_output(), "sleapc: error:") &&
                  strstr(test_cli_output(), "not a regular file"),
              "render: exit %d: %s", rc, test_cli_output());
    CHECK_MSG(!hung, "render hung on a FIFO");
    hung = 0;
    alarm(0);
    return test_finish();
}
