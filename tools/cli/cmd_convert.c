/* sleapc convert: predictions from one file format to another. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sleapc/writer.h"

static int usage(void)
{
    printf("usage: sleapc convert IN OUT\n"
           "\n"
           "Reads the predictions in IN (.slp: its predicted instances; .json: sleapc's JSON;\n"
           ".h5: SLEAP analysis HDF5, its occupied frames) and writes them to OUT in the\n"
           "format of its extension: .slp (SLEAP labels), .h5 (SLEAP analysis HDF5), .csv or\n"
           ".json. OUT appears only when complete.\n");
    return 0;
}

int cmd_convert(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL};
    int n = 0;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return usage();
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
            quiet = true;
        else if (a[0] == '-' && a[1] != '\0')
            return cli_unknown_option("convert", a, (const char *const[]){"quiet", "help"}, 2);
        else if (n == 2)
            return cli_error("convert: one input and one output (got \"%s\" too)", a);
        else
            files[n++] = a;
    }
    if (n != 2)
        return cli_error("convert: expected IN OUT (see sleapc convert --help)");
    if (sleapc_predictions_convert(files[0], files[1]))
        return cli_lib_error();
    if (!quiet)
        fprintf(stderr, "sleapc: converted %s -> %s\n", files[0], files[1]);
    return 0;
}
