/* Options as a binding passes them. Every string is copied: a predictor
 * created from strings that are then overwritten and freed (as a binding's
 * temporaries are) still predicts, and its writer records the backend that
 * was asked for. Options structs not started from their defaults (no
 * struct_size) are refused with a message that says so. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "io/slp/slp_read.h"
#include "sleapc/predictor.h"
#include "sleapc/writer.h"
#include "test_util.h"

static char *heap_string(const char *s)
{
    char *c = malloc(strlen(s) + 1);
    strcpy(c, s);
    return c;
}

static void scribble_free(char *s)
{
    memset(s, 'X', strlen(s));
    free(s);
}

int main(void)
{
    test_require_data();
    char *model = heap_string(test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    char *backend = heap_string("native");
    const char *models[1] = {model};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.backend = backend;
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(models, 1, &o, &p));
    scribble_free(backend);
    scribble_free(model);
    if (!p)
        return test_finish();

    uint8_t px[64 * 64 * 3] = {0};
    sleapc_frame frames = {
        .data = px, .height = 64, .width = 64, .format = SLEAPC_PIXEL_FORMAT_RGB24};
    CHECK_OK(sleapc_predictor_run(p, &frames));

    char path[1024];
    snprintf(path, sizeof path, "%s/out.slp", test_tmp_dir());
    char *video_name = heap_string("clip.mp4");
    sleapc_video_info info = {video_name, 1, 64, 64, 3, NULL, NULL};
    sleapc_writer *w = NULL;
    CHECK_OK(sleapc_writer_open(path, p, &info, 1, &w));
    scribble_free(video_name);
    int64_t idx = 0;
    CHECK_OK(sleapc_writer_add(w, p, 0, &idx));
    CHECK_OK(sleapc_writer_close(w, NULL));

    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(path, &r));
    if (r) {
        CHECK(r->n_videos == 1 && strcmp(r->videos[0].filename, "clip.mp4") == 0);
        CHECK_MSG(strstr(r->provenance, "\"backend\":\"native\"") != NULL, "provenance: %s",
                  r->provenance);
        sleapc__slp_close(r);
    }
    sleapc_predictor_destroy(p);

    char *path2 = heap_string(test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    const char *models2[1] = {path2};
    sleapc_predictor_opts zero = sleapc_predictor_opts_default();
    zero.struct_size = 0;
    p = (sleapc_predictor *)1;
    CHECK(sleapc_predictor_create(models2, 1, &zero, &p) == SLEAPC_ERR_INVALID_ARG && p == NULL);
    CHECK_MSG(strstr(sleapc_last_error(), "struct_size") != NULL, "%s", sleapc_last_error());
    sleapc_model *m = NULL;
    CHECK_OK(sleapc_model_load(path2, &m));
    sleapc_runner_opts ro = sleapc_runner_opts_default();
    CHECK(ro.struct_size == sizeof ro);
    ro.struct_size = sizeof ro + 8; /* newer headers than this library */
    sleapc_runner *run = NULL;
    CHECK(sleapc_runner_create(m, &ro, &run) == SLEAPC_ERR_INVALID_ARG && run == NULL);
    CHECK_MSG(strstr(sleapc_last_error(), "struct_size") != NULL &&
                  strstr(sleapc_last_error(), "larger") != NULL,
              "%s", sleapc_last_error());
    /* An older, smaller struct: the fields it lacks take their defaults (a
     * bogus backend past its end is never read). */
    ro = sleapc_runner_opts_default();
    ro.struct_size = (uint32_t)offsetof(sleapc_runner_opts, backend);
    ro.backend = "no-such-backend";
    CHECK_OK(sleapc_runner_create(m, &ro, &run));
    sleapc_runner_destroy(run);
    sleapc_model_destroy(m);
    free(path2);
    return test_finish();
}
