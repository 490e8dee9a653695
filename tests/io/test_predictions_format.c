/* The predictions formats table (io/predictions): the format of a path by
 * its extension, reads refused for what is written only or unknown, a
 * malformed sleapc JSON refused naming the file, a failed write leaving the
 * existing file untouched, and the reference .slp (written by sleap-io)
 * read, written as .slp through the table and read back unchanged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/predictions/predictions_format.h"
#include "test_util.h"

static bool format_is(const char *path, sleapc_pred_format_id id)
{
    const sleapc_pred_format *f = sleapc__pred_format_of(path);
    return f && f->id == id;
}

static void check_extensions(void)
{
    CHECK(format_is("a/b.slp", SLEAPC_PRED_SLP));
    CHECK(format_is("b.predictions.slp", SLEAPC_PRED_SLP));
    CHECK(format_is("b.h5", SLEAPC_PRED_ANALYSIS_H5));
    CHECK(format_is("b.analysis.hdf5", SLEAPC_PRED_ANALYSIS_H5));
    CHECK(format_is("b.csv", SLEAPC_PRED_CSV));
    CHECK(format_is("b.json", SLEAPC_PRED_JSON));
    CHECK(!sleapc__pred_format_of("b.txt") && !sleapc__pred_format_of("b.slp.bak") &&
          !sleapc__pred_format_of("b.SLP") && !sleapc__pred_format_of(NULL));
    CHECK(sleapc__pred_path_is_slp("x.slp") && !sleapc__pred_path_is_slp("x.mp4"));
    const sleapc_pred_format *f = NULL;
    CHECK(sleapc__pred_format_for_output("out.txt", &f) == SLEAPC_ERR_INVALID_ARG && !f &&
          strstr(sleapc_last_error(), "out.txt"));
    sleapc_predictions pr;
    CHECK(sleapc__predictions_read("x.csv", &pr, NULL) == SLEAPC_ERR_UNSUPPORTED &&
          strstr(sleapc_last_error(), "x.csv"));
    CHECK(sleapc__predictions_read("x.txt", &pr, NULL) == SLEAPC_ERR_INVALID_ARG);
}

static void check_bad_json(void)
{
    static const char *const bad[] = {
        /* two nodes, an instance with one point */
        "{\"format\":\"sleapc-predictions\",\"skeleton\":{\"name\":\"s\",\"nodes\":[\"a\",\"b\"],"
        "\"edges\":[[0,1]],\"symmetries\":[]},\"videos\":[{\"filename\":\"v.mp4\"}],"
        "\"tracks\":[],\"frames\":[{\"video\":0,\"frame_idx\":0,\"instances\":[{\"score\":1,"
        "\"points\":[[1,2]],\"point_scores\":[1]}]}]}",
        /* an edge to a node it lacks */
        "{\"format\":\"sleapc-predictions\",\"skeleton\":{\"name\":\"s\",\"nodes\":[\"a\"],"
        "\"edges\":[[0,3]],\"symmetries\":[]},\"videos\":[{\"filename\":\"v.mp4\"}],"
        "\"tracks\":[],\"frames\":[]}",
        /* a track it lacks */
        "{\"format\":\"sleapc-predictions\",\"skeleton\":{\"name\":\"s\",\"nodes\":[\"a\"],"
        "\"edges\":[],\"symmetries\":[]},\"videos\":[{\"filename\":\"v.mp4\"}],"
        "\"tracks\":[\"t\"],\"frames\":[{\"video\":0,\"frame_idx\":0,\"instances\":[{\"score\":1,"
        "\"track\":4,\"points\":[[1,2]],\"point_scores\":[1]}]}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = test_tmp_path("bad.json");
        CHECK(test_write_file(path, bad[i], strlen(bad[i])));
        sleapc_predictions pr;
        sleapc_status st = sleapc__predictions_read(path, &pr, NULL);
        CHECK_MSG(st == SLEAPC_ERR_FORMAT && strstr(sleapc_last_error(), "bad.json"),
                  "case %zu: %s", i, sleapc_last_error());
    }
}

static bool same_predictions(const sleapc_predictions *a, const sleapc_predictions *b)
{
    if (a->n_frames != b->n_frames || a->n_insts != b->n_insts || a->n_nodes != b->n_nodes ||
        a->n_tracks != b->n_tracks || a->n_videos != b->n_videos)
        return false;
    for (int64_t k = 0; k < a->n_frames; k++)
        if (a->frames[k].video != b->frames[k].video ||
            a->frames[k].frame_idx != b->frames[k].frame_idx || a->frames[k].n != b->frames[k].n)
            return false;
    for (int64_t i = 0; i < a->n_insts; i++) {
        if (a->insts[i].track != b->insts[i].track || a->insts[i].score != b->insts[i].score)
            return false;
        for (int n = 0; n < a->n_nodes * 2; n++) {
            float x = a->points[i * a->n_nodes * 2 + n], y = b->points[i * b->n_nodes * 2 + n];
            if (!(x == y || (isnan(x) && isnan(y))))
                return false;
        }
    }
    return true;
}

/* Whether two files hold the same bytes. */
static bool same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *x = test_read_file(a, &na), *y = test_read_file(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* A .slp read 7 frames at a time (many blocks in a short file) writes
 * the same bytes as the file read whole, in every format. */
static void check_blocks(const char *ref, const sleapc_predictions *whole)
{
    static const char *const names[] = {"whole.slp", "whole.json", "whole.csv", "whole.h5"};
    for (int i = 0; i < 4; i++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "%s", test_tmp_path(names[i]));
        snprintf(b, sizeof b, "%s.blocks%s", a, strrchr(names[i], '.'));
        CHECK_OK(sleapc__predictions_write_path(whole, a));
        sleapc_predictions_reader r;
        CHECK_OK(sleapc__predictions_open_blocks(ref, 7, &r));
        CHECK(r.blocks && r.pr.n_frames == 0 && r.in_order);
        CHECK(r.src.n_frames == whole->n_frames && r.src.n_insts == whole->n_insts);
        CHECK_OK(sleapc__predictions_write(&r.pr, &r.src, b, NULL));
        CHECK(same_file(a, b));
        sleapc__predictions_reader_close(&r);
    }
}

static void check_round_trip(void)
{
    sleapc_predictions_reader r;
    const char *ref = test_data_path("sleap-assets/tracks/clip.predictions.slp");
    sleapc_predictions whole;
    CHECK_OK(sleapc__predictions_read(ref, &whole, NULL));
    CHECK_OK(sleapc__predictions_open(ref, &r));
    CHECK(whole.n_frames > 0 && whole.n_insts > 0 && r.src.n_frames == whole.n_frames);
    char out[512];
    snprintf(out, sizeof out, "%s", test_tmp_path("round.slp"));
    int64_t left_out = -1;
    CHECK_OK(sleapc__predictions_write(&r.pr, &r.src, out, &left_out));
    CHECK(left_out == 0);
    sleapc__predictions_reader_close(&r);
    sleapc_predictions back;
    CHECK_OK(sleapc__predictions_read(out, &back, NULL));
    CHECK(same_predictions(&whole, &back));
    sleapc__predictions_free(&back);
    check_blocks(ref, &whole);

    /* A write that fails (a frame naming a video the file lacks) leaves the
     * file that was there as it was. */
    size_t n_before = 0, n_after = 0;
    unsigned char *before = test_read_file(out, &n_before);
    int saved = whole.frames[0].video;
    whole.frames[0].video = whole.n_videos;
    CHECK(sleapc__predictions_write_path(&whole, out) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__predictions_write_path(&whole, test_tmp_path("round.csv")) == SLEAPC_ERR_INVALID_ARG);
    whole.frames[0].video = saved;
    unsigned char *after = test_read_file(out, &n_after);
    CHECK(before && after && n_before == n_after && memcmp(before, after, n_before) == 0);
    free(before);
    free(after);
    struct stat none;
    CHECK(stat(test_tmp_path("round.csv"), &none) != 0);
    sleapc__predictions_free(&whole);
}

int main(void)
{
    check_extensions();
    check_bad_json();
    if (!test_data_dir())
        return test_finish();
    check_round_trip();
    return test_finish();
}
