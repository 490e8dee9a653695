/* Predictions conversion: a file opened in the format of its extension
 * (io/predictions) and written, block by block, in the format of the
 * output's. */
#include <string.h>

#include "core/error.h"
#include "io/predictions/predictions_format.h"
#include "pipeline/convert.h"

sleapc_status sleapc__predictions_convert(const char *in_path, const char *out_path)
{
    if (strcmp(in_path, out_path) == 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "convert %s: input and output are the same file", in_path);
    sleapc_predictions_reader r;
    sleapc_status st = sleapc__predictions_open(in_path, &r);
    if (!st)
        st = sleapc__predictions_write(&r.pr, &r.src, out_path, NULL);
    sleapc__predictions_reader_close(&r);
    if (st)
        st = sleapc__wrap(st, "convert %s to %s", in_path, out_path);
    return st;
}
