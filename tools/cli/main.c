/* sleapc: run SLEAP / sleap-nn pose models without Python. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sleapc/sleapc.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sleapc <command> [options]\n"
            "\n"
            "commands:\n"
            "  info     MODEL_DIR [--size HxW]          describe a model\n"
            "  forward  -m MODEL_DIR -i INPUT.npy -o OUT_DIR [--backend NAME] [--threads N]\n"
            "                                           run the network on a preprocessed input\n"
            "  predict  -m MODEL_DIR [-m MODEL_DIR] -i INPUT [-i INPUT...] [-o OUTPUT] [options]\n"
            "                                           predict poses (sleap-nn predict)\n"
            "  track    -i PREDICTIONS -o OUTPUT [options]\n"
            "                                           retrack predictions (no model); with\n"
            "                                           -m: predict, as sleap-nn's legacy track\n"
            "  render   PREDICTIONS [-i VIDEO] -o OUT.png|OUT.mp4 [--frames LIST]\n"
            "                                           draw predicted poses on the frames\n"
            "  convert  IN OUT                          predictions from one format to another\n"
            "                                           (.slp, .h5, .json, .csv)\n"
            "  merge    OUT IN...                       join the outputs of --shard runs into one\n"
            "  eval     -g GT -p PRED [options]         score predictions against labels\n"
            "                                           (sleap-nn eval)\n"
            "  eval-tracking -g GT -p PRED [options]    ID switches, IDF1, MOTA of tracks\n"
            "  demo     [OUT_DIR]                       end-to-end check on a synthetic sample\n"
            "  bench    -m MODEL_DIR | --config C --random-weights | --peak | --video V\n"
            "                                           speed per backend, batch and precision\n"
            "  version                                  print the version (also -v, --version)\n"
            "  help     [COMMAND]                       this, or the options of a command\n"
            "\n"
            "Run 'sleapc help <command>' or 'sleapc <command> --help' for the options of a\n"
            "command.\n");
}

/* The library's warnings and errors, on stderr like the CLI's own; its
 * information too with -v. */
static void log_to_stderr(sleapc_log_level level, const char *msg, void *user)
{
    (void)user;
    if (strncmp(msg, "backend: ", 9) == 0)
        cli_note_backend(msg + 9);
    else if (strncmp(msg, "backend auto: chose ", 20) == 0) {
        char name[32];
        if (sscanf(msg + 20, "%31[a-z0-9_]", name) == 1)
            cli_note_backend(name);
    }
    if (level >= SLEAPC_LOG_WARN)
        fprintf(stderr, "sleapc: %s: %s\n", level == SLEAPC_LOG_WARN ? "warning" : "error", msg);
    else if (level == SLEAPC_LOG_INFO &&
             (cli_verbose || (!cli_quiet && strncmp(msg, "backend auto: ", 14) == 0)))
        /* What "auto" runs, and whether it measured or found it cached, is
         * said without -v: it explains the first batch's time. */
        fprintf(stderr, "sleapc: %s\n", msg);
}

/* The command running, until it returns. A library that gives up by calling
 * exit() itself (libgomp when it cannot create a thread, under oneDNN)
 * prints only its own line; this adds the usual error line. */
static const char *running_command;

static void on_unexpected_exit(void)
{
    if (running_command)
        fprintf(stderr,
                "sleapc: error: %s: stopped by a library before finishing (its message is "
                "above: usually no thread or memory could be had); no output was written\n",
                running_command);
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    sleapc_log_set(log_to_stderr, NULL);
    if (argc >= 2) {
        running_command = argv[1];
        atexit(on_unexpected_exit);
    }
    int rc = dispatch(argc, argv);
    running_command = NULL;
    return rc;
}

static const char *const commands[] = {"info",   "forward", "predict", "track", "render",
                                       "convert", "demo",   "bench",   "version", "help"};
#define N_COMMANDS (int)(sizeof commands / sizeof commands[0])

/* sleapc help CMD: CMD's own --help. */
static int help_for(const char *cmd)
{
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "version") == 0) {
        usage(stdout);
        return 0;
    }
    char *argv[] = {"sleapc", (char *)cmd, "--help", NULL};
    return dispatch(3, argv);
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return cli_error("no command given (see usage above)");
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "demo") == 0)
        return cmd_demo(argc - 1, argv + 1);
    if (strcmp(cmd, "predict") == 0)
        return cmd_predict(argc - 1, argv + 1);
    if (strcmp(cmd, "track") == 0)
        return cmd_track(argc - 1, argv + 1);
    if (strcmp(cmd, "render") == 0)
        return cmd_render(argc - 1, argv + 1);
    if (strcmp(cmd, "convert") == 0)
        return cmd_convert(argc - 1, argv + 1);
    if (strcmp(cmd, "merge") == 0)
        return cmd_merge(argc - 1, argv + 1);
    if (strcmp(cmd, "eval") == 0)
        return cmd_eval(argc - 1, argv + 1);
    if (strcmp(cmd, "eval-tracking") == 0)
        return cmd_eval_tracking(argc - 1, argv + 1);
    if (strcmp(cmd, "forward") == 0)
        return cmd_forward(argc - 1, argv + 1);
    /* As sleap-nn prints its own: "sleap-nn 0.1.0". */
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0 || strcmp(cmd, "-v") == 0) {
        printf("sleapc %s\n", sleapc_version());
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc >= 3 && strcmp(cmd, "help") == 0) {
            for (int i = 0; i < N_COMMANDS; i++)
                if (strcmp(argv[2], commands[i]) == 0)
                    return help_for(argv[2]);
            const char *near = cli_nearest_name(argv[2], commands, N_COMMANDS);
            return near ? cli_error("help: no command \"%s\"; did you mean %s?", argv[2], near)
                        : cli_error("help: no command \"%s\" (see sleapc help)", argv[2]);
        }
        usage(stdout);
        return 0;
    }
    const char *near = cmd[0] != '-' ? cli_nearest_name(cmd, commands, N_COMMANDS) : NULL;
    if (near)
        return cli_error("unknown command \"%s\"; did you mean \"sleapc %s\"? (see sleapc help)",
                         cmd, near);
    usage(stderr);
    return cli_error("unknown command \"%s\"", cmd);
}
