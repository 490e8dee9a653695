/* Analysis HDF5 and CSV writers on a small constructed prediction set,
 * against the rules of sleap-io 0.9.5's writers (save_analysis_h5, the
 * "sleap" CSV), which replaced SLEAP 1.x's as the reference: shapes,
 * transposition, the frame axis to the video's end, track selection
 * (untracked instances are left out with tracks; without tracks each
 * frame's instances fill columns track_0, track_1, ... in order; empty
 * columns dropped), stored scores, types, gzip on every array, attributes;
 * the same dataset set and kinds as a real SLEAP analysis export; the
 * exact CSV text; an interrupted write leaves no file. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "slp_fixture.h"
#include "test_util.h"

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int count_prefixed(const char *prefix)
{
    DIR *d = opendir(test_tmp_dir());
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* Instance k's inputs: two nodes, exact binary fractions. */
static void inst_values(int k, float xy[4], float sc[2])
{
    xy[0] = 10.0f * k + 1.0f;
    xy[1] = 10.0f * k + 2.0f;
    xy[2] = 10.0f * k + 3.5f;
    xy[3] = 10.0f * k + 4.25f;
    sc[0] = 0.75f;
    sc[1] = 0.125f * (float)k;
}

/* Tracks a, unused, b. Video 0: frame 0 holds one "b" instance (k=0) and
 * an untracked one (k=1); frame 2 holds two "a" instances (k=2, then k=3
 * with node 1 missing and no tracking score). Video 1: frame 5, "a" (k=4). */
static void make_tracked(sleapc_predictions *pr)
{
    const char *nodes[2] = {"nose", "tail,end"}, *tracks[3] = {"a", "unused", "b"};
    const int edges[1][2] = {{0, 1}};
    fixture_init(pr, "sk", 2, nodes, 1, edges, 3, tracks, "videos/v0.mp4", 4, 5);
    sleapc_pred_video *v = sleapc__realloc(pr->videos, 2 * sizeof *v);
    if (v) {
        pr->videos = v;
        pr->n_videos = 2;
        memset(&v[1], 0, sizeof v[1]);
        v[1].filename = sleapc__strdup("videos/v1.mp4");
    }
    const int track[5] = {2, -1, 0, 0, 0};
    const float score[5] = {0.5f, 0.25f, 1.5f, 2.0f, 3.0f};
    const float ts[5] = {0.875f, NAN, 0.5f, NAN, 0.25f};
    const int frame_of[5] = {0, 0, 2, 2, 5};
    for (int k = 0; k < 5; k++) {
        if (k == 0 || frame_of[k] != frame_of[k - 1])
            fixture_add_frame(pr, k == 4 ? 1 : 0, frame_of[k]);
        float xy[4], sc[2];
        inst_values(k, xy, sc);
        if (k == 3)
            xy[2] = xy[3] = NAN;
        fixture_add_instance(pr, xy, sc, score[k], track[k], ts[k]);
    }
}

static double *read_f64(sleapc_h5 *f, const char *name, sleapc_h5_info *info)
{
    void *d = NULL;
    CHECK_OK(sleapc__h5_read(f, name, SLEAPC_H5_F64, &d, info));
    return d;
}

static bool same(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static void check_string(sleapc_h5 *f, const char *name, const char *want)
{
    char **s = NULL;
    int64_t n = 0;
    CHECK_OK(sleapc__h5_read_strings(f, name, &s, &n));
    CHECK_MSG(n == 1 && strcmp(s[0], want) == 0, "%s = %s", name, n ? s[0] : "-");
    sleapc__h5_free_strings(s, n);
}

static void test_tracked(void)
{
    sleapc_predictions pr;
    make_tracked(&pr);
    pr.videos[0].n_frames = 6; /* the frame axis spans the whole video */
    const char *path = test_tmp_path("tracked.analysis.h5");
    CHECK_OK(sleapc__predictions_write_analysis_h5(&pr, path));
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    if (!f) {
        fixture_free(&pr);
        return;
    }
    /* Frames 0..5 of video 0 (its length); tracks a and b ("unused"
     * dropped). */
    const int64_t F = 6, T = 2, N = 2;
    const int col_input[2] = {0, 2}; /* kept columns -> input track index */
    sleapc_h5_info info;
    double *tr = read_f64(f, "tracks", &info);
    CHECK(info.ndim == 4 && info.shape[0] == T && info.shape[1] == 2 && info.shape[2] == N &&
          info.shape[3] == F);
    CHECK_OK(sleapc__h5_dataset_info(f, "tracks", &info));
    CHECK(info.cls == SLEAPC_H5_CLASS_FLOAT && info.elem_size == 8 && info.chunked &&
          info.gzip == 9);
    double *ps = read_f64(f, "point_scores", &info);
    CHECK(info.ndim == 3 && info.shape[0] == T && info.shape[1] == N && info.shape[2] == F);
    double *is = read_f64(f, "instance_scores", &info);
    CHECK(info.ndim == 2 && info.shape[0] == T && info.shape[1] == F);
    double *ts = read_f64(f, "tracking_scores", &info);
    CHECK(info.ndim == 2 && info.shape[0] == T && info.shape[1] == F);
    uint8_t *occ = NULL;
    CHECK_OK(sleapc__h5_read(f, "track_occupancy", SLEAPC_H5_U8, (void **)&occ, &info));
    /* SLEAP's quirk: occupancy is (frames, tracks), the others tracks-first. */
    CHECK(info.ndim == 2 && info.shape[0] == F && info.shape[1] == T);
    CHECK_OK(sleapc__h5_dataset_info(f, "track_occupancy", &info));
    CHECK(info.cls == SLEAPC_H5_CLASS_INT && info.elem_size == 1 && !info.is_signed);

    /* Expected cell by cell from the inputs: for each (frame, column) the
     * last instance of that track in the frame; untracked ones nowhere.
     * Scores as stored in a .slp: 0 for an absent point, NaN for an absent
     * tracking score. */
    for (int64_t t = 0; tr && ps && is && ts && occ && t < T; t++)
        for (int64_t fr = 0; fr < F; fr++) {
            int src = -1;
            for (int64_t k = 0; k < pr.n_insts; k++) {
                const sleapc_pred_frame *pf = NULL;
                for (int64_t j = 0; j < pr.n_frames; j++)
                    if (k >= pr.frames[j].first && k < pr.frames[j].first + pr.frames[j].n)
                        pf = &pr.frames[j];
                if (pf && pf->video == 0 && pf->frame_idx == fr &&
                    pr.insts[k].track == col_input[t])
                    src = (int)k;
            }
            CHECK_MSG(occ[fr * T + t] == (src >= 0), "occupancy f%lld t%lld", (long long)fr,
                      (long long)t);
            for (int64_t n = 0; n < N; n++)
                for (int c = 0; c < 2; c++) {
                    double want = src < 0 ? NAN : pr.points[(src * N + n) * 2 + c];
                    CHECK_MSG(same(tr[((t * 2 + c) * N + n) * F + fr], want),
                              "tracks t%lld c%d n%lld f%lld", (long long)t, c, (long long)n,
                              (long long)fr);
                }
            for (int64_t n = 0; n < N; n++) {
                double want = src < 0                               ? NAN
                              : isnan(pr.points[(src * N + n) * 2]) ? 0.0
                                                                    : pr.point_scores[src * N + n];
                CHECK(same(ps[(t * N + n) * F + fr], want));
            }
            double want_is = src < 0 ? NAN : pr.insts[src].score;
            double want_ts = src < 0 ? NAN : pr.insts[src].tracking_score;
            CHECK(same(is[t * F + fr], want_is) && same(ts[t * F + fr], want_ts));
        }
    sleapc__free(tr);
    sleapc__free(ps);
    sleapc__free(is);
    sleapc__free(ts);
    sleapc__free(occ);

    char **s = NULL;
    int64_t n = 0;
    CHECK_OK(sleapc__h5_read_strings(f, "track_names", &s, &n));
    CHECK(n == 2 && strcmp(s[0], "a") == 0 && strcmp(s[1], "b") == 0);
    sleapc__h5_free_strings(s, n);
    CHECK_OK(sleapc__h5_read_strings(f, "node_names", &s, &n));
    CHECK(n == 2 && strcmp(s[0], "nose") == 0 && strcmp(s[1], "tail,end") == 0);
    sleapc__h5_free_strings(s, n);
    CHECK_OK(sleapc__h5_read_strings(f, "edge_names", &s, &n));
    CHECK(n == 2 && strcmp(s[0], "nose") == 0 && strcmp(s[1], "tail,end") == 0);
    sleapc__h5_free_strings(s, n);
    int64_t *ei = NULL;
    CHECK_OK(sleapc__h5_read(f, "edge_inds", SLEAPC_H5_I64, (void **)&ei, &info));
    CHECK(info.ndim == 2 && info.shape[0] == 1 && info.shape[1] == 2 && ei && ei[0] == 0 &&
          ei[1] == 1);
    sleapc__free(ei);
    check_string(f, "labels_path", "");
    check_string(f, "video_path", "videos/v0.mp4");
    check_string(f, "provenance", "{}");
    int64_t vi = -1;
    CHECK_OK(sleapc__h5_read_into(f, "video_ind", SLEAPC_H5_I64, &vi, 1));
    CHECK(vi == 0);
    /* sleap-io's dimension names and file attributes. */
    char *a = NULL;
    CHECK_OK(sleapc__h5_attr_string(f, "tracks", "dims", &a));
    CHECK(a && strcmp(a, "[\"track\", \"xy\", \"node\", \"frame\"]") == 0);
    sleapc__free(a);
    CHECK_OK(sleapc__h5_attr_string(f, "track_occupancy", "dims", &a));
    CHECK(a && strcmp(a, "[\"frame\", \"track\"]") == 0);
    sleapc__free(a);
    CHECK_OK(sleapc__h5_attr_string(f, "/", "preset", &a));
    CHECK(a && strcmp(a, "matlab") == 0);
    sleapc__free(a);
    CHECK_OK(sleapc__h5_attr_string(f, "/", "video_backend_metadata", &a));
    CHECK(a && strstr(a, "\"filename\": \"videos/v0.mp4\"") != NULL);
    sleapc__free(a);
    /* sleap-io stamps its release under this key (analysis_h5.py); here the
     * release whose layout the file follows. Which program wrote the file
     * has a key of its own. */
    CHECK_OK(sleapc__h5_attr_string(f, "/", "sleap_io_version", &a));
    CHECK(a && strcmp(a, "0.9.5") == 0);
    sleapc__free(a);
    CHECK_OK(sleapc__h5_attr_string(f, "/", "sleapc_version", &a));
    CHECK(a && strcmp(a, SLEAPC_VERSION_STRING) == 0);
    sleapc__free(a);
    sleapc__h5_close(f);
    fixture_free(&pr);
}

static void test_untracked(void)
{
    const char *nodes[2] = {"head", "tail"};
    const int edges[1][2] = {{0, 1}};
    sleapc_predictions pr;
    fixture_init(&pr, "sk", 2, nodes, 1, edges, 0, NULL, "v.mp4", 2, 3);
    float xy[4], sc[2];
    fixture_add_frame(&pr, 0, 1);
    for (int k = 0; k < 2; k++) {
        inst_values(k, xy, sc);
        fixture_add_instance(&pr, xy, sc, 1.0f + k, -1, NAN);
    }
    const char *path = test_tmp_path("untracked.analysis.h5");
    CHECK_OK(sleapc__predictions_write_analysis_h5(&pr, path));
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    if (f) {
        /* Two columns, track_0 and track_1: instance i of the frame in
         * column i (sleap-io 0.9.5; SLEAP 1.x kept one column). */
        sleapc_h5_info info;
        double *tr = read_f64(f, "tracks", &info);
        CHECK(info.ndim == 4 && info.shape[0] == 2 && info.shape[3] == 2);
        for (int t = 0; tr && t < 2; t++)
            for (int n = 0; n < 2; n++)
                for (int c = 0; c < 2; c++) {
                    double *col = tr + ((t * 2 + c) * 2 + n) * 2;
                    CHECK(isnan(col[0]) && col[1] == pr.points[(t * 2 + n) * 2 + c]);
                }
        sleapc__free(tr);
        double *ts = read_f64(f, "tracking_scores", &info);
        CHECK(ts && isnan(ts[1]) && isnan(ts[3]));
        sleapc__free(ts);
        char **s = NULL;
        int64_t n = 0;
        CHECK_OK(sleapc__h5_read_strings(f, "track_names", &s, &n));
        CHECK(n == 2 && strcmp(s[0], "track_0") == 0 && strcmp(s[1], "track_1") == 0);
        sleapc__h5_free_strings(s, n);
        /* sleap-io compresses every array, the name lists included. */
        static const char *const lists[] = {"track_names", "node_names", "edge_names",
                                            "edge_inds"};
        for (int i = 0; i < 4; i++) {
            CHECK_OK(sleapc__h5_dataset_info(f, lists[i], &info));
            CHECK_MSG(info.chunked && info.gzip == 9, "%s: gzip %d", lists[i], info.gzip);
        }

        /* The same datasets, classes and ranks as SLEAP's own export (whose
         * name lists are not compressed). */
        if (test_data_dir()) {
            sleapc_h5 *g = NULL;
            CHECK_OK(sleapc__h5_open(test_data_path("sleap-assets/hdf5_format_v1/"
                                                    "small_robot.000_small_robot_3_frame."
                                                    "analysis.h5"),
                                     &g));
            char **na = NULL, **nb = NULL;
            int64_t ca = 0, cb = 0;
            CHECK_OK(sleapc__h5_list(f, "/", &na, &ca));
            CHECK_OK(sleapc__h5_list(g, "/", &nb, &cb));
            CHECK_MSG(ca == cb, "%lld vs %lld datasets", (long long)ca, (long long)cb);
            for (int64_t i = 0; i < ca && i < cb; i++) {
                CHECK_MSG(strcmp(na[i], nb[i]) == 0, "dataset %s vs %s", na[i], nb[i]);
                sleapc_h5_info ia, ib;
                CHECK_OK(sleapc__h5_dataset_info(f, na[i], &ia));
                CHECK_OK(sleapc__h5_dataset_info(g, nb[i], &ib));
                /* SLEAP's untracked export has an empty (float64) name list. */
                bool names = strcmp(na[i], "track_names") == 0;
                CHECK_MSG((ia.cls == ib.cls || names) && ia.ndim == ib.ndim &&
                              ia.vlen_string == ib.vlen_string &&
                              (ia.gzip == ib.gzip || ia.ndim > 0),
                          "%s: class %d/%d rank %d/%d gzip %d/%d", na[i], ia.cls, ib.cls, ia.ndim,
                          ib.ndim, ia.gzip, ib.gzip);
            }
            sleapc__h5_free_strings(na, ca);
            sleapc__h5_free_strings(nb, cb);
            sleapc__h5_close(g);
        }
        sleapc__h5_close(f);
    }
    fixture_free(&pr);
}

static void test_csv(void)
{
    sleapc_predictions pr;
    make_tracked(&pr);
    pr.insts[1].score = 0.1f; /* not exact in binary */
    const char *path = test_tmp_path("pred.csv");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) {
        fixture_free(&pr);
        return;
    }
    CHECK_OK(sleapc__predictions_write_csv(&pr, f));
    fclose(f);
    size_t n = 0;
    char *text = (char *)test_read_file(path, &n);
    /* sleap-io 0.9.5: node columns sorted by name; numbers as Python
     * prints the float64 a .slp gives back (0.1f is 0.10000000149011612);
     * an absent point's x and y empty, its score the stored 0. */
    const char *want =
        "track,frame_idx,instance.score,nose.score,nose.x,nose.y,\"tail,end.score\","
        "\"tail,end.x\",\"tail,end.y\"\n"
        "b,0,0.5,0.75,1.0,2.0,0.0,3.5,4.25\n"
        ",0,0.10000000149011612,0.75,11.0,12.0,0.125,13.5,14.25\n"
        "a,2,1.5,0.75,21.0,22.0,0.25,23.5,24.25\n"
        "a,2,2.0,0.75,31.0,32.0,0.0,,\n"
        "a,5,3.0,0.75,41.0,42.0,0.5,43.5,44.25\n";
    CHECK_MSG(text && n == strlen(want) && memcmp(text, want, n) == 0, "CSV:\n%.*s", (int)n,
              text ? text : "");
    free(text);
    fixture_free(&pr);
}

static void test_errors(void)
{
    sleapc_predictions pr;
    make_tracked(&pr);
    const char *path = test_tmp_path("cut.analysis.h5");
    int n_fail = 0;
    for (int64_t k = 1; k < 300; k++) {
        sleapc__alloc_fail_after(k);
        sleapc_status st = sleapc__predictions_write_analysis_h5(&pr, path);
        sleapc__alloc_fail_after(0);
        if (!st)
            break;
        n_fail++;
        CHECK_MSG(st == SLEAPC_ERR_NOMEM, "allocation %lld: %s", (long long)k, sleapc_last_error());
        CHECK(!exists(path) && count_prefixed("cut.analysis.h5") == 0);
    }
    CHECK(n_fail > 3 && exists(path));
    pr.frames[0].video = 7;
    CHECK(sleapc__predictions_write_analysis_h5(&pr, test_tmp_path("bad.h5")) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__predictions_write_csv(&pr, stdout) == SLEAPC_ERR_INVALID_ARG);
    CHECK(!exists(test_tmp_path("bad.h5")));
    fixture_free(&pr);
}

int main(void)
{
    test_tracked();
    test_untracked();
    test_csv();
    test_errors();
    return test_finish();
}
