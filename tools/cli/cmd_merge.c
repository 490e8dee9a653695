/* sleapc merge: join the outputs of shards (predict --shard K/N on one
 * video) into one file, as one run over all their frames writes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sleapc/tracking.h"

static int usage(void)
{
    printf("usage: sleapc merge OUT IN... [--tracking [options] | --no_tracking] [-q]\n"
           "\n"
           "Joins predictions of the same videos and skeleton that hold different frames\n"
           "(the outputs of sleapc predict --shard K/N on one video: a.mp4.shard-00-of-N.slp,\n"
           "...) into OUT, every frame once in order, as one run over all the frames writes\n"
           "it. IN: .slp, sleapc .json or analysis .h5; OUT: .slp, .h5, .csv or .json. Inputs\n"
           "with other skeletons or videos, or a frame in common, are refused.\n"
           "Tracks end at each shard's seam: tracked inputs are tracked again over the joined\n"
           "frames (default options unless given); -t/--tracking and the tracking options\n"
           "below track the joined frames; --no_tracking drops the shards' tracks.\n\n");
    cli_tracking_usage();
    return 0;
}

int cmd_merge(int argc, char **argv)
{
    const char **files = calloc((size_t)argc, sizeof *files);
    if (!files)
        return cli_error("out of memory");
    int n = 0, rc = 1;
    bool quiet = false, no_tracking = false, asked = false;
    sleapc_tracking_opts t = sleapc_tracking_opts_default();
    sleapc_filter_opts f = sleapc_filter_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            free(files);
            return usage();
        }
        if (a[0] == '-' && a[1] != '\0') {
            const int r = cli_tracking_option(argc, argv, &i, &t, &f);
            if (r < 0)
                goto done;
            if (r > 0) {
                asked = asked || strncmp(a, "--filter", 8) != 0;
                continue;
            }
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
            quiet = true;
        else if (strcmp(a, "--no_tracking") == 0 || strcmp(a, "--no-tracking") == 0)
            no_tracking = true;
        else if (a[0] == '-' && a[1] != '\0') {
            rc = cli_error("merge: unknown option \"%s\" (see sleapc merge --help)", a);
            goto done;
        } else
            files[n++] = a;
    }
    if (n < 2) {
        rc = cli_error("merge: expected OUT IN... (see sleapc merge --help)");
        goto done;
    }
    if (asked && no_tracking) {
        rc = cli_error("merge: --no_tracking contradicts the tracking options given");
        goto done;
    }
    t.tracking = asked;
    if (cli_check_output(files[0], files + 1, n - 1))
        goto done;
    if (sleapc_tracking_opts_check(&t, &f, 0) ||
        sleapc_predictions_merge(files + 1, n - 1, files[0], asked || no_tracking ? &t : NULL,
                                 &f)) {
        rc = cli_lib_error();
        goto done;
    }
    if (!quiet)
        fprintf(stderr, "sleapc: merged %d files -> %s\n", n - 1, files[0]);
    rc = 0;
done:
    free(files);
    return rc;
}
