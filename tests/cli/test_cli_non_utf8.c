/* A file name that is not UTF-8 (here "caf\xe9", Latin-1): the .json output
 * stays valid UTF-8 JSON, the byte written as \udce9 (Python's
 * surrogateescape, as json.dumps writes such a name; json.loads and
 * os.fsencode give the bytes back), and the .slp keeps the name so the
 * video is found again (it used to store U+FFFD, a path that does not
 * exist, and the .json held the raw byte). */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/slp/slp_read.h"
#include "test_util.h"

#define MODEL "sleap-nn-assets/model_ckpts/minimal_instance_single_instance"
#define FRAME "reference/bottomup__pkg_f0000/frame.npy"

static bool valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t len = c < 0x80                 ? 1
                     : c >= 0xc2 && c < 0xe0  ? 2
                     : c >= 0xe0 && c < 0xf0  ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4
                                              : 0;
        if (len == 0 || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
        i += len;
    }
    return true;
}

int main(void)
{
    test_require_data();
    char input[1024], args[8192], out[1024];
    snprintf(input, sizeof input, "%s/caf\xe9.npy", test_tmp_dir());
    size_t n = 0;
    unsigned char *frame = test_read_file(test_data_path(FRAME), &n);
    CHECK(frame && test_write_file(input, frame, n));
    free(frame);

    snprintf(out, sizeof out, "%s/out.json", test_tmp_dir());
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", test_data_path(MODEL),
             input, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, test_cli_output());
    unsigned char *json = test_read_file(out, &n);
    CHECK(json != NULL);
    if (json) {
        CHECK_MSG(valid_utf8(json, n), "the .json is not UTF-8");
        bool found = false;
        for (size_t i = 0; i + 13 <= n && !found; i++)
            found = memcmp(json + i, "caf\\udce9.npy", 13) == 0;
        CHECK_MSG(found, "no caf\\udce9.npy in the .json");
    }
    free(json);

    snprintf(out, sizeof out, "%s/out.slp", test_tmp_dir());
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", test_data_path(MODEL),
             input, out);
    rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, test_cli_output());
    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(out, &r));
    if (r) {
        CHECK(r->n_videos == 1 && strcmp(r->videos[0].filename, input) == 0);
        char *found = NULL;
        CHECK_OK(sleapc__slp_video_path(r, 0, &found));
        CHECK(found && strcmp(found, input) == 0);
        sleapc__free(found);
        sleapc__slp_close(r);
    }
    return test_finish();
}
