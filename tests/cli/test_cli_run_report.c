/* What a run says matches what it did: the summary line counts the
 * instances the file holds (after --max_tracks culled them, not before); a
 * conversion of untracked multi-animal predictions to an analysis .h5 warns
 * of the instances it leaves out, as predict -o x.h5 does; `sleapc bench`
 * with the default thread count says how many threads that is; the analysis
 * .h5 names the sleapc that wrote it. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "test_util.h"

static char dir[1024], model[2048], video[2048], args[8192];

static long summary_instances(const char *text)
{
    const char *e = strstr(text, " frames, ");
    long n = -1;
    return e && sscanf(e + 9, "%ld instances", &n) == 1 ? n : -1;
}

/* Rows of a .csv, its header left out. */
static long csv_rows(const char *path)
{
    size_t size = 0;
    char *text = (char *)test_read_file(path, &size);
    long rows = -1;
    for (size_t i = 0; text && i < size; i++)
        rows += text[i] == '\n';
    free(text);
    return rows;
}

int main(void)
{
    test_require_data();
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));

    /* Two animals a frame; tracked with at most one track, half are culled.
     * The summary must say what the file holds. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' --frames 0-7 -o '%s/all.slp'", model,
             video, dir);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    long all = summary_instances(test_cli_output());
    snprintf(args, sizeof args,
             "predict -m '%s' -i '%s' --frames 0-7 --tracking --max_tracks 1 -o '%s/one.csv'",
             model, video, dir);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    long said = summary_instances(test_cli_output());
    char path[1200];
    snprintf(path, sizeof path, "%s/one.csv", dir);
    long held = csv_rows(path);
    CHECK_MSG(said == held && held > 0, "summary says %ld instances, the file holds %ld: %s",
              said, held, test_cli_output());
    CHECK_MSG(all > held, "culling removed nothing (%ld before, %ld after): the case tests nothing",
              all, held);

    /* Untracked multi-animal predictions to an analysis .h5: sleap-io
     * 0.9.5's layout gives each frame's instances their own columns, so
     * nothing is left out and there is nothing to say. */
    snprintf(args, sizeof args, "convert '%s/all.slp' '%s/all.h5'", dir, dir);
    CHECK_MSG(test_run_cli(args) == 0 && !strstr(test_cli_output(), "warning: "), "convert: %s",
              test_cli_output());
    /* The sleap-io release whose layout the file follows, and who wrote
     * the file. */
    snprintf(path, sizeof path, "%s/all.h5", dir);
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    char *a = NULL;
    if (f) {
        CHECK_OK(sleapc__h5_attr_string(f, "/", "sleap_io_version", &a));
        CHECK(a && strcmp(a, "0.9.5") == 0);
        sleapc__free(a);
        a = NULL;
        CHECK_OK(sleapc__h5_attr_string(f, "/", "sleapc_version", &a));
        CHECK_MSG(a && strcmp(a, SLEAPC_VERSION_STRING) == 0, "sleapc_version %s", a ? a : "-");
        sleapc__free(a);
        sleapc__h5_close(f);
    }
    /* A .slp output holds them all: nothing to say. */
    snprintf(args, sizeof args, "convert '%s/all.slp' '%s/again.slp'", dir, dir);
    CHECK_MSG(test_run_cli(args) == 0 && !strstr(test_cli_output(), "warning"), "convert: %s",
              test_cli_output());

    /* The default thread count is one per core: a number, not 0. */
    snprintf(args, sizeof args,
             "bench -m '%s' --size 64x64 --batch 1,4 --runs 10 --backend native", model);
    CHECK_MSG(test_run_cli_stdout(args) == 0, "bench: %s", test_cli_output());
    CHECK_MSG(!strstr(test_cli_output(), " 0 threads") &&
                  strstr(test_cli_output(), " threads (one per core)"),
              "bench: %s", test_cli_output());
    return test_finish();
}
