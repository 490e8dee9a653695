/* predict's embedding route: a lone re-ID embedding model with
 * --save_embeddings slp embeds the detections of a .slp (sleap-nn 0.3.5's
 * cli.py _run_embeddings). The output defaults to "<input>.embeddings.slp"
 * as sleap-nn names it; the crops go 64 to a forward unless -b is given. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "predict_run.h"
#include "sleapc/embedding.h"

/* sleap-nn's _EMBEDDING_DEFAULT_CROP_BATCH. */
#define CROP_BATCH 64

static const char *embed_input_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int output_for(const cli_predict_args *a, const char *input, char *out, size_t cap)
{
    int n;
    if (a->output)
        n = snprintf(out, cap, "%s", a->output);
    else if (a->output_dir)
        n = snprintf(out, cap, "%s/%s.embeddings.slp", a->output_dir, embed_input_name(input));
    else
        n = snprintf(out, cap, "%s.embeddings.slp", input);
    return n < 0 || (size_t)n >= cap ? cli_error("output path too long for %s", input) : 0;
}

static int check_route(const cli_predict_args *a, const sleapc_model *m)
{
    if (sleapc_model_get_type(m) != SLEAPC_MODEL_TYPE_EMBEDDING)
        return cli_error("--save_embeddings slp needs an embedding (re-ID) model; %s is a %s "
                         "model",
                         a->models[0], sleapc_model_type_name(sleapc_model_get_type(m)));
    if (a->tracking.tracking)
        return cli_error("--tracking with an embedding model: sleapc does not embed and track in "
                         "one command; embed with --save_embeddings slp, then track that .slp "
                         "with `sleapc track` (e.g. --tracker deepsort)");
    return 0;
}

int cli_predict_embed(const cli_predict_args *a, const cli_input_list *inputs)
{
    if (a->n_models != 1)
        return cli_error("--save_embeddings slp: give the embedding model alone (-m MODEL); "
                         "detecting and embedding in one command is not supported by sleapc "
                         "yet: predict the detections first, then embed that .slp");
    if (inputs->n > 1 && a->output)
        return cli_error("predict: -o names one file but there are %d inputs", inputs->n);
    sleapc_model *m = NULL;
    if (sleapc_model_load(a->models[0], &m))
        return cli_lib_error();
    int rc = check_route(a, m);
    sleapc_predictor_opts o = a->o;
    if (!cli_predict_given(a, "batch_size"))
        o.batch_size = CROP_BATCH;
    for (int i = 0; !rc && i < inputs->n; i++) {
        char out[4096];
        const char *in = inputs->paths[i];
        if ((rc = output_for(a, in, out, sizeof out)) ||
            (rc = cli_check_output(out, (const char *const *)inputs->paths, inputs->n)))
            break;
        int64_t n = 0;
        if (sleapc_embed_detections(m, in, out, &o, &n)) {
            rc = cli_lib_error();
            break;
        }
        if (!cli_quiet)
            fprintf(stderr, "sleapc: %s: %lld detections embedded; wrote embeddings to %s\n", in,
                    (long long)n, out);
    }
    sleapc_model_destroy(m);
    return rc;
}
