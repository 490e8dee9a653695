/* sleapc track end to end: the reference cases' predictions (the untracked
 * clip.predictions.slp), retracked through the command line with each
 * case's sleap-nn flags, must give sleap-nn's tracks (tracking/<case>/
 * expected.json) in its output order; scores within 1e-5 plus the float32
 * rounding of the file (tracking scores are float32 in .slp as sleap-io
 * writes them, and in sleapc's JSON: half an ulp, 6e-8 relative, matters
 * for distance scores of hundreds of pixels). Then the output formats, a
 * filter, and refused options. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "../pipeline/tracking_case.h"

static cJSON *load(const char *path)
{
    return tracking_case_load(path);
}

/* The first visible x of an instance's points (JSON), to pair instances. */
static double first_x(const cJSON *points)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, points) if (cJSON_IsArray(p)) return cJSON_GetArrayItem(p, 0)->valuedouble;
    return NAN;
}

/* Compares a sleapc JSON output with a case's expected.json. */
static void compare(const char *name, const cJSON *out, const cJSON *input, const cJSON *expected)
{
    const cJSON *tracks = cJSON_GetObjectItem(out, "tracks");
    const cJSON *oframes = cJSON_GetObjectItem(out, "frames");
    const cJSON *eframes = cJSON_GetObjectItem(expected, "frames");
    const cJSON *iframes = cJSON_GetObjectItem(input, "frames");
    CHECK_MSG(cJSON_GetArraySize(oframes) == cJSON_GetArraySize(eframes), "%s: frame count", name);
    int bad = 0;
    for (int k = 0; k < cJSON_GetArraySize(oframes) && k < cJSON_GetArraySize(eframes); k++) {
        const cJSON *of = cJSON_GetArrayItem(oframes, k), *ef = cJSON_GetArrayItem(eframes, k);
        const cJSON *inf = cJSON_GetArrayItem(iframes, k);
        const cJSON *eout = cJSON_GetObjectItem(ef, "out");
        const cJSON *insts = cJSON_GetObjectItem(of, "instances");
        bool same = cJSON_GetArraySize(eout) == cJSON_GetArraySize(insts) &&
                    cJSON_GetObjectItem(of, "frame_idx")->valuedouble ==
                        cJSON_GetObjectItem(ef, "frame_idx")->valuedouble;
        for (int j = 0; same && j < cJSON_GetArraySize(eout); j++) {
            const int src = cJSON_GetArrayItem(eout, j)->valueint;
            const cJSON *oi = cJSON_GetArrayItem(insts, j);
            const cJSON *ii = cJSON_GetArrayItem(cJSON_GetObjectItem(inf, "instances"), src);
            const cJSON *et = cJSON_GetArrayItem(cJSON_GetObjectItem(ef, "track"), src);
            const cJSON *es = cJSON_GetArrayItem(cJSON_GetObjectItem(ef, "tracking_score"), src);
            const cJSON *ot = cJSON_GetObjectItem(oi, "track");
            const char *got = cJSON_IsNumber(ot)
                                  ? cJSON_GetArrayItem(tracks, ot->valueint)->valuestring
                                  : NULL;
            same = fabs(first_x(cJSON_GetObjectItem(oi, "points")) -
                        first_x(cJSON_GetObjectItem(ii, "points"))) < 1e-3;
            same = same && (cJSON_IsString(et) ? got && !strcmp(got, et->valuestring) : !got);
            const double want = tracking_case_number(es);
            const cJSON *os = cJSON_GetObjectItem(oi, "tracking_score");
            if (same && isfinite(want))
                same = cJSON_IsNumber(os) &&
                       fabs(os->valuedouble - want) <= 1e-5 + 6e-8 * fabs(want);
        }
        if (!same && bad++ < 5)
            fprintf(stderr, "%s: frame %d differs\n", name, k);
    }
    CHECK_MSG(bad == 0, "%s: %d frames differ from sleap-nn", name, bad);
}

/* "--flag value" text of a case's sleap-nn options (cli.options). */
static void case_flags(const cJSON *options, char *dst, size_t n)
{
    dst[0] = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(cJSON_GetObjectItem(options, "cli"), "options"))
    {
        size_t len = strlen(dst);
        if (cJSON_IsTrue(o))
            snprintf(dst + len, n - len, " %s", o->string);
        else if (cJSON_IsString(o))
            snprintf(dst + len, n - len, " %s %s", o->string, o->valuestring);
    }
}

int main(void)
{
    test_require_data();
    const char *tmp = test_tmp_dir();
    char slp[1024], dir[1024], args[8192], path[1300];
    snprintf(slp, sizeof slp, "%s", test_data_path("sleap-assets/tracks/clip.predictions.slp"));
    snprintf(dir, sizeof dir, "%s", test_data_path("tracking"));
    char *names[64];
    const int n = test_list_dir(dir, names, 64);
    int cases = 0;
    for (int i = 0; i < n; i++) {
        char base[1200];
        snprintf(base, sizeof base, "%s/%s", dir, names[i]);
        snprintf(path, sizeof path, "%s/options.json", base);
        cJSON *options = load(path);
        snprintf(path, sizeof path, "%s/expected.json", base);
        cJSON *expected = load(path);
        snprintf(path, sizeof path, "%s/input.json", base);
        cJSON *input = load(path);
        const cJSON *cfg = cJSON_GetObjectItem(options, "tracker_config");
        if (options && expected && input && !cJSON_IsTrue(cJSON_GetObjectItem(cfg, "use_flow"))) {
            char flags[2048];
            case_flags(options, flags, sizeof flags);
            snprintf(path, sizeof path, "%s/%s.json", tmp, names[i]);
            snprintf(args, sizeof args, "track --quiet -i '%s' -o '%s'%s", slp, path, flags);
            CHECK_MSG(test_run_cli(args) == 0, "%s: %s", args, test_cli_output());
            cJSON *out = load(path);
            CHECK_MSG(out != NULL, "%s: no output", names[i]);
            if (out)
                compare(names[i], out, input, expected);
            cJSON_Delete(out);
            cases++;
        }
        cJSON_Delete(options);
        cJSON_Delete(expected);
        cJSON_Delete(input);
        free(names[i]);
    }
    CHECK(cases >= 1);

    /* every format at once; the .slp keeps the tracks (read back untouched) */
    char out_slp[1100], back[1100];
    snprintf(out_slp, sizeof out_slp, "%s/t.slp", tmp);
    snprintf(back, sizeof back, "%s/back.json", tmp);
    snprintf(args, sizeof args, "track --quiet -t -i '%s' -o '%s' -o %s/t.h5 -o %s/t.csv", slp,
             out_slp, tmp, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args, "track --quiet --no_tracking -i '%s' -o '%s'", out_slp, back);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(path, sizeof path, "%s/clip_a_default/expected.json", dir);
    cJSON *expected = load(path);
    snprintf(path, sizeof path, "%s/clip_a_default/input.json", dir);
    cJSON *input = load(path);
    cJSON *out = load(back);
    if (expected && input && out)
        compare("clip_a via .slp", out, input, expected);
    cJSON_Delete(out);
    snprintf(path, sizeof path, "%s/t.csv", tmp);
    size_t size = 0;
    char *csv = (char *)test_read_file(path, &size);
    CHECK(csv && strstr(csv, "\ntrack_0,") && strstr(csv, "\ntrack_1,"));
    free(csv);
    snprintf(path, sizeof path, "%s/t.h5", tmp);
    unsigned char *h5 = test_read_file(path, &size);
    CHECK(h5 && size > 0);
    free(h5);

    /* a filter: exactly the instances scoring at least 0.9 remain */
    snprintf(args, sizeof args,
             "track --quiet --no_tracking --filter_min_instance_score 0.9 -i '%s' -o %s/f.json",
             slp, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(path, sizeof path, "%s/f.json", tmp);
    out = load(path);
    int want = 0, got = 0, low = 0;
    const cJSON *f, *in;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(input, "frames"))
        cJSON_ArrayForEach(in, cJSON_GetObjectItem(f, "instances"))
            want += (float)cJSON_GetObjectItem(in, "score")->valuedouble >= 0.9f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(out, "frames"))
        cJSON_ArrayForEach(in, cJSON_GetObjectItem(f, "instances"))
    {
        got++;
        low += cJSON_GetObjectItem(in, "score")->valuedouble < 0.9 - 1e-7;
    }
    CHECK_MSG(got == want && low == 0 && want > 0, "filter kept %d, expected %d", got, want);
    cJSON_Delete(out);
    cJSON_Delete(expected);
    cJSON_Delete(input);

    /* an untracked two-animal file to an analysis .h5, untracked and tracked */
    const char *two = "{\"format\":\"sleapc-predictions\",\"version\":1,\"skeleton\":{\"name\":"
                      "\"s\",\"nodes\":[\"a\",\"b\"],\"edges\":[[0,1]],\"symmetries\":[]},"
                      "\"videos\":[{\"filename\":\"v.mp4\",\"frames\":2,\"height\":64,"
                      "\"width\":64,\"channels\":1}],\"tracks\":[],\"frames\":["
                      "{\"video\":0,\"frame_idx\":0,\"instances\":["
                      "{\"points\":[[1,1],[5,5]],\"point_scores\":[1,1],\"score\":1},"
                      "{\"points\":[[40,40],[45,45]],\"point_scores\":[1,1],\"score\":1}]},"
                      "{\"video\":0,\"frame_idx\":1,\"instances\":["
                      "{\"points\":[[2,1],[6,5]],\"point_scores\":[1,1],\"score\":1},"
                      "{\"points\":[[41,40],[46,45]],\"point_scores\":[1,1],\"score\":1}]}]}";
    snprintf(path, sizeof path, "%s/two.json", tmp);
    CHECK(test_write_file(path, two, strlen(two)));
    snprintf(args, sizeof args, "track --quiet --no_tracking -i %s -o %s/two.h5", path, tmp);
    /* Untracked: both animals kept, in columns track_0 and track_1
     * (sleap-io 0.9.5's analysis layout), so nothing is left out. */
    CHECK(test_run_cli(args) == 0 && !strstr(test_cli_output(), "left out"));
    snprintf(args, sizeof args, "track --quiet -t -i %s -o %s/two.h5 -o %s/two_t.json", path, tmp,
             tmp);
    CHECK(test_run_cli(args) == 0 && !strstr(test_cli_output(), "left out"));
    snprintf(path, sizeof path, "%s/two_t.json", tmp);
    out = load(path);
    const cJSON *fr1 = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "frames"), 1);
    const cJSON *i0 = cJSON_GetArrayItem(cJSON_GetObjectItem(fr1, "instances"), 0);
    const cJSON *i1 = cJSON_GetArrayItem(cJSON_GetObjectItem(fr1, "instances"), 1);
    /* each animal keeps its track across the two frames */
    CHECK(out && cJSON_GetArraySize(cJSON_GetObjectItem(out, "tracks")) == 2 &&
          cJSON_GetObjectItem(i0, "track")->valueint == 0 &&
          cJSON_GetObjectItem(i1, "track")->valueint == 1);
    cJSON_Delete(out);

    /* refused clearly, nothing written */
    snprintf(args, sizeof args, "track -i '%s' -o %s/k.slp --use_kalman", slp, tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "--use_kalman"));
    snprintf(args, sizeof args, "track -i '%s' -o %s/k.slp --features image", slp, tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "--features"));
    snprintf(args, sizeof args, "track -i '%s' -o %s/k.slp --scoring_method iou", slp, tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "bboxes"));
    snprintf(args, sizeof args, "track -i '%s' -o %s/k.slp --post_connect_single_breaks", slp,
             tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "target"));
    snprintf(args, sizeof args, "track -i %s/missing.slp -o %s/k.slp", tmp, tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "missing.slp"));
    snprintf(path, sizeof path, "%s/k.slp", tmp);
    CHECK(test_read_file(path, &size) == NULL);
    return test_finish();
}
