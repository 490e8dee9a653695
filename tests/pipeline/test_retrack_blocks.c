/* `sleapc track` reads a .slp a block of frames at a time and tracks the
 * blocks as they come (tracking carries across blocks). With blocks of a
 * few frames in a short file, its outputs must be, byte for byte, what the
 * file read whole and tracked whole gives (the whole-run tracker is the one
 * checked against sleap-nn by test_tracking_reference), with and without
 * filters, and for a file whose frames are out of order (tracked whole). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/retrack.h"
#include "pipeline/tracking/tracking_config.h"
#include "test_util.h"

static const char *tmp_path(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", test_tmp_dir(), name);
    return buf;
}

static bool same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *x = test_read_file(a, &na), *y = test_read_file(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* in tracked (and filtered) whole, as the reference, and block by block. */
static void check_case(const char *name, const char *in, const sleapc_tracking_opts *t,
                       const sleapc_filter_opts *f, int64_t block)
{
    static const char *const exts[] = {".slp", ".json", ".csv", ".h5"};
    char want[4][512], got[4][512], base[256];
    const char *outs[4];
    sleapc_predictions pr;
    sleapc_filter_config fc;
    sleapc_tracker_opts to;
    CHECK_OK(sleapc__predictions_read(in, &pr, NULL));
    CHECK_OK(sleapc__filters_resolve(f, &fc));
    if (t->tracking)
        CHECK_OK(sleapc__tracking_resolve(t, pr.n_nodes, &to));
    CHECK_OK(sleapc__predictions_postprocess(&pr, &fc, t->tracking ? &to : NULL, in));
    for (int i = 0; i < 4; i++) {
        snprintf(base, sizeof base, "%s.want%s", name, exts[i]);
        tmp_path(base, want[i], sizeof want[i]);
        CHECK_OK(sleapc__predictions_write_path(&pr, want[i]));
        snprintf(base, sizeof base, "%s.got%s", name, exts[i]);
        tmp_path(base, got[i], sizeof got[i]);
        outs[i] = got[i];
    }
    sleapc__predictions_free(&pr);
    CHECK_OK(sleapc__retrack_blocks(in, outs, 4, t, f, block));
    for (int i = 0; i < 4; i++)
        if (!same_file(want[i], got[i]))
            CHECK_MSG(false, "%s: %s differs from the whole-file result", name, got[i]);
}

int main(void)
{
    if (!test_data_dir())
        return test_finish();
    const char *ref = test_data_path("sleap-assets/tracks/clip.predictions.slp");
    sleapc_tracking_opts t = sleapc_tracking_opts_default();
    t.tracking = true;
    sleapc_filter_opts f = sleapc_filter_opts_default();
    check_case("tracked", ref, &t, &f, 7);
    check_case("tracked_one", ref, &t, &f, 1);

    sleapc_filter_opts ff = f;
    ff.filter_min_instance_score = 0.5;
    ff.filter_overlapping = true;
    check_case("filtered_tracked", ref, &t, &ff, 5);
    sleapc_tracking_opts off = t;
    off.tracking = false;
    check_case("filtered", ref, &off, &ff, 5);

    /* Frames out of order: sleap-nn tracks in (video, frame) order and
     * writes in the file's, so the file is tracked whole. */
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(ref, &pr, NULL));
    for (int64_t a = 0, b = pr.n_frames - 1; a < b; a++, b--) {
        sleapc_pred_frame x = pr.frames[a];
        pr.frames[a] = pr.frames[b];
        pr.frames[b] = x;
    }
    char rev[512];
    CHECK_OK(sleapc__predictions_write_path(&pr, tmp_path("reversed.slp", rev, sizeof rev)));
    sleapc__predictions_free(&pr);
    check_case("reversed", rev, &t, &f, 7);
    return test_finish();
}
