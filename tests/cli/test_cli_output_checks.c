/* Where the output goes, checked before any work: a missing folder fails at
 * once (not after the whole video), an output that names an input or a
 * special file is refused and left as it was, a symbolic link is written
 * through (the file it points to is replaced, the link stays); a frame
 * listed twice is predicted once. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "test_util.h"

#define MODEL "sleap-nn-assets/model_ckpts/minimal_instance_single_instance"
#define LABELS "sleap-nn-assets/datasets/minimal_instance.pkg.slp"
#define VIDEO "sleap-nn-assets/datasets/small_robot.mp4"

static char model[2048], tmp[1024];

static void expect_refused(const char *args, const char *needle)
{
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 1 && strstr(test_cli_output(), "sleapc: error: ") &&
                  strstr(test_cli_output(), needle),
              "sleapc %s: exit %d: %s", args, rc, test_cli_output());
}

static bool same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *da = test_read_file(a, &na), *db = test_read_file(b, &nb);
    bool same = da && db && na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

static void copy_data(const char *rel, const char *dst)
{
    size_t n = 0;
    unsigned char *d = test_read_file(test_data_path(rel), &n);
    CHECK(d && test_write_file(dst, d, n));
    free(d);
}

/* A JSON output's frame count, -1 when it does not parse. */
static int json_frames(const char *path)
{
    size_t n = 0;
    char *text = (char *)test_read_file(path, &n);
    cJSON *j = text ? cJSON_ParseWithLength(text, n) : NULL;
    int k = j ? cJSON_GetArraySize(cJSON_GetObjectItem(j, "frames")) : -1;
    cJSON_Delete(j);
    free(text);
    return k;
}

static void check_inputs_kept(void)
{
    char labels[1280], video[1280], args[8192], keep[1280];
    snprintf(labels, sizeof labels, "%s/labels.pkg.slp", tmp);
    snprintf(keep, sizeof keep, "%s/labels.orig", tmp);
    copy_data(LABELS, labels);
    copy_data(LABELS, keep);
    /* -o equal to -i would replace the user's labels. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model, labels, labels);
    expect_refused(args, "is the input");
    CHECK(same_bytes(labels, keep));
    /* The same file under another name (a symbolic link). */
    char link[1280];
    snprintf(link, sizeof link, "%s/alias.slp", tmp);
    CHECK(symlink(labels, link) == 0);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model, labels, link);
    expect_refused(args, "is the input");
    CHECK(same_bytes(labels, keep));

    /* render -i X -o X would replace the video. */
    snprintf(video, sizeof video, "%s/clip.mp4", tmp);
    snprintf(keep, sizeof keep, "%s/clip.orig", tmp);
    copy_data(VIDEO, video);
    copy_data(VIDEO, keep);
    snprintf(args, sizeof args, "render '%s' -i '%s' -o '%s' --quiet", labels, video, video);
    expect_refused(args, "is the input");
    CHECK(same_bytes(video, keep));
}

static void check_special_and_links(const char *frame)
{
    char out[1280], args[8192];
    struct stat sb;
    /* A FIFO named like an output is refused and stays a FIFO. */
    snprintf(out, sizeof out, "%s/pipe.json", tmp);
    CHECK(mkfifo(out, 0600) == 0);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model, frame, out);
    expect_refused(args, "not a regular file");
    CHECK(lstat(out, &sb) == 0 && S_ISFIFO(sb.st_mode));
    /* A folder. */
    snprintf(out, sizeof out, "%s/folder.json", tmp);
    CHECK(mkdir(out, 0700) == 0);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model, frame, out);
    expect_refused(args, "is a folder");

    /* A symbolic link to a file: written through, the link stays. */
    char real[1280];
    snprintf(real, sizeof real, "%s/real.json", tmp);
    snprintf(out, sizeof out, "%s/link.json", tmp);
    CHECK(test_write_file(real, "old", 3));
    CHECK(symlink("real.json", out) == 0);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model, frame, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, test_cli_output());
    CHECK(lstat(out, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(json_frames(real) == 1);
    /* A link to nothing is refused. */
    snprintf(out, sizeof out, "%s/dangling.json", tmp);
    CHECK(symlink("nowhere/none.json", out) == 0);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model, frame, out);
    expect_refused(args, "leads to no file");
}

int main(void)
{
    test_require_data();
    snprintf(model, sizeof model, "%s", test_data_path(MODEL));
    snprintf(tmp, sizeof tmp, "%s", test_tmp_dir());
    char frame[2048], args[8192], out[1280];
    snprintf(frame, sizeof frame, "%s", test_data_path("reference/bottomup__pkg_f0000/frame.npy"));

    /* The output folder is checked first: before the model is even read
     * (here it does not exist either), so a typo costs no run. */
    snprintf(args, sizeof args,
             "predict -m '%s/no-model' -i '%s' -o '%s/no-such-folder/x.json' --quiet", tmp, frame,
             tmp);
    expect_refused(args, "no-such-folder");
    snprintf(args, sizeof args, "render '%s' -o '%s/no-such-folder/x.png' --quiet",
             test_data_path(LABELS), tmp);
    expect_refused(args, "no-such-folder");

    /* --frames 0,0,0: frame 0 once. */
    snprintf(out, sizeof out, "%s/repeat.json", tmp);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --frames 0,0,0-0 --quiet", model,
             frame, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, test_cli_output());
    CHECK_MSG(json_frames(out) == 1, "%d frames", json_frames(out));

    check_inputs_kept();
    check_special_and_links(frame);
    return test_finish();
}
