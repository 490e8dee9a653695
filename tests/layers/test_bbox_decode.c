/* The box decoders against sleap-nn 0.3.5 (tests/goldens/sleapnn-0.3.5-families,
 * the __npy cases: its heads on frames 0 and 1 in, its boxes out), then on
 * made-up maps: class-wise NMS, ties, IoU at the threshold, plateaus,
 * zero-area boxes, clipping to the frame. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/npy/npy_file.h"
#include "layers/ops/bbox_decode.h"
#include "test_util.h"

#define FAM SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define MAXB 100

typedef struct ref_box {
    double xyxy[4], score;
} ref_box;

static double worst_px, worst_score;

static char *slurp(const char *path)
{
    size_t n = 0;
    unsigned char *b = test_read_file(path, &n);
    if (!b)
        return NULL;
    char *s = realloc(b, n + 1);
    if (!s) {
        free(b);
        return NULL;
    }
    s[n] = 0;
    return s;
}

/* Frame f's boxes of an expected.json (its own fixed layout). */
static int ref_frame(const char *json, int f, ref_box *out)
{
    char key[64];
    snprintf(key, sizeof key, "{\"frame_idx\":%d,\"boxes\":[", f);
    const char *p = strstr(json, key);
    if (!p)
        return -1;
    p += strlen(key);
    int n = 0;
    while (*p == '{' && n < MAXB) {
        p = strstr(p, "\"xyxy\":[");
        if (!p)
            return -1;
        p += 8;
        for (int k = 0; k < 4; k++) {
            char *e;
            out[n].xyxy[k] = strtod(p, &e);
            p = e + 1;
        }
        p = strstr(p, "\"score\":");
        if (!p)
            return -1;
        out[n].score = strtod(p + 8, NULL);
        p = strchr(p, '}');
        if (!p)
            return -1;
        p++;
        n++;
        if (*p == ',')
            p++;
    }
    return n;
}

/* The numbers of a "key:" list in a training_config.yaml ("- v" lines). */
static int yaml_list(const char *yaml, const char *key, double *v, int max)
{
    const char *p = strstr(yaml, key);
    if (!p)
        return 0;
    p = strchr(p, '\n');
    int n = 0;
    while (p && n < max) {
        p++;
        while (*p == ' ')
            p++;
        if (*p != '-')
            break;
        v[n++] = strtod(p + 1, NULL);
        p = strchr(p, '\n');
    }
    return n;
}

static double yaml_num(const char *yaml, const char *after, const char *key)
{
    const char *p = strstr(yaml, after);
    p = p ? strstr(p, key) : NULL;
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

static void compare(const char *what, int f, const sleapc_box *b, int n, const ref_box *r, int nr)
{
    CHECK_MSG(n == nr, "%s frame %d: %d boxes, sleap-nn %d", what, f, n, nr);
    for (int i = 0; i < n && i < nr; i++) {
        const float got[4] = {b[i].x1, b[i].y1, b[i].x2, b[i].y2};
        for (int k = 0; k < 4; k++) {
            const double d = fabs(got[k] - r[i].xyxy[k]);
            worst_px = d > worst_px ? d : worst_px;
            CHECK_MSG(d <= 0.02, "%s frame %d box %d coord %d: %g vs %g", what, f, i, k, got[k],
                      r[i].xyxy[k]);
        }
        const double ds = fabs(b[i].score - r[i].score);
        worst_score = ds > worst_score ? ds : worst_score;
        CHECK_MSG(ds <= 1e-5, "%s frame %d box %d score %g vs %g", what, f, i, b[i].score,
                  r[i].score);
        CHECK(b[i].category == 0);
    }
}

static void test_centernet_ref(void)
{
    sleapc_tensor heat = {0}, size = {0}, off = {0};
    char *json = slurp(FAM "/cases/bbox_centernet__npy/expected.json");
    CHECK_OK(sleapc__npy_read(FAM "/cases/bbox_centernet__npy/heads/BBoxCenterHead.npy", &heat));
    CHECK_OK(sleapc__npy_read(FAM "/cases/bbox_centernet__npy/heads/BBoxSizeHead.npy", &size));
    CHECK_OK(sleapc__npy_read(FAM "/cases/bbox_centernet__npy/heads/BBoxOffsetHead.npy", &off));
    CHECK(json != NULL);
    if (json && heat.data && size.data && off.data) {
        CHECK(heat.ndim == 4 && heat.shape[1] == 1 && heat.shape[2] == 96);
        const int h = (int)heat.shape[2], w = (int)heat.shape[3];
        const sleapc_bbox_decode_opts o = {0.05f, 100, -1.0f, 384, 384};
        for (int f = 0; f < 2; f++) {
            sleapc_box b[MAXB];
            ref_box r[MAXB];
            int n = -1;
            const float *hd = (const float *)heat.data + (int64_t)f * h * w;
            const float *sd = (const float *)size.data + (int64_t)f * 2 * h * w;
            const float *od = (const float *)off.data + (int64_t)f * 2 * h * w;
            CHECK_OK(sleapc__bbox_decode_centernet(hd, 1, sd, od, h, w, 4, &o, b, &n));
            sleapc__bbox_clip_to_frame(b, &n, 384, 384);
            compare("centernet", f, b, n, r, ref_frame(json, f, r));
        }
    }
    sleapc__free(heat.data);
    sleapc__free(size.data);
    sleapc__free(off.data);
    free(json);
}

static void test_ssd_ref(void)
{
    sleapc_tensor raw = {0};
    char *json = slurp(FAM "/cases/bbox_ssd__npy/expected.json");
    char *yaml = slurp(FAM "/models/bbox_ssd/training_config.yaml");
    CHECK_OK(sleapc__npy_read(FAM "/cases/bbox_ssd__npy/heads/SSDHead.npy", &raw));
    CHECK(json && yaml);
    if (!json || !yaml || !raw.data)
        goto done;
    sleapc_ssd_anchors a = {0};
    double v[8];
    const char *ssd = strstr(yaml, "bbox_ssd:\n");
    ssd = ssd ? ssd : yaml;
    a.n_levels = (int)yaml_num(ssd, "ssd:", "num_levels:");
    const int s0 = (int)yaml_num(ssd, "ssd:", "output_stride:");
    for (int l = 0; l < a.n_levels && l < 8; l++)
        a.strides[l] = s0 << l;
    CHECK(yaml_list(ssd, "anchor_sizes:", a.sizes, 8) == a.n_levels);
    a.n_scales = yaml_list(ssd, "anchor_scales:", a.scales, 8);
    a.n_ratios = yaml_list(ssd, "aspect_ratios:", a.ratios, 8);
    CHECK(yaml_list(ssd, "box_variances:", v, 4) == 4);
    for (int k = 0; k < 4; k++)
        a.variances[k] = (float)v[k];
    CHECK(sleapc__ssd_anchors_per_cell(&a) == 9);
    CHECK(sleapc__ssd_anchor_count(&a, 384, 384) == 27216);
    CHECK(raw.ndim == 3 && raw.shape[1] == 27216 && raw.shape[2] == 6);
    const sleapc_bbox_decode_opts o = {0.2f, 100, 0.45f, 384, 384};
    for (int f = 0; f < 2; f++) {
        sleapc_box b[MAXB];
        ref_box r[MAXB];
        int n = -1;
        const float *rd = (const float *)raw.data + (int64_t)f * 27216 * 6;
        CHECK_OK(sleapc__bbox_decode_ssd(rd, 27216, 2, &a, &o, b, &n));
        sleapc__bbox_clip_to_frame(b, &n, 384, 384);
        compare("ssd", f, b, n, r, ref_frame(json, f, r));
    }
    /* A head that does not fit the anchors is refused. */
    sleapc_box b[MAXB];
    int n = -1;
    CHECK(sleapc__bbox_decode_ssd(raw.data, 27215, 2, &a, &o, b, &n) != SLEAPC_OK && n == 0);
done:
    sleapc__free(raw.data);
    free(json);
    free(yaml);
}

/* A 16 x 16 grid at stride 1 into a 100 x 100 input, C channels. */
enum { G = 16, GG = G * G };

static void put(float *heat, float *size, int c, int y, int x, float s, float bw, float bh)
{
    heat[c * GG + y * G + x] = s;
    size[y * G + x] = bw;
    size[GG + y * G + x] = bh;
}

static int decode(const float *heat, int c, const float *size, const float *off, float thr, int max,
                  float iou, sleapc_box *b)
{
    const sleapc_bbox_decode_opts o = {thr, max, iou, 100, 100};
    int n = -1;
    CHECK_OK(sleapc__bbox_decode_centernet(heat, c, size, off, G, G, 1, &o, b, &n));
    return n;
}

static void test_nms(void)
{
    float heat[2 * GG] = {0}, size[2 * GG] = {0};
    sleapc_box b[MAXB];
    /* A (2,2,8,8) and B (4,2,10,8): IoU exactly 0.5. C, class 1, overlaps A
     * more but never suppresses across classes. */
    put(heat, size, 0, 5, 5, 0.9f, 6, 6);
    put(heat, size, 0, 5, 7, 0.8f, 6, 6);
    put(heat, size, 1, 5, 6, 0.85f, 6, 6);
    int n = decode(heat, 2, size, NULL, 0.1f, 100, 0.5f, b);
    CHECK(n == 3 && b[0].score == 0.9f && b[1].category == 1 && b[2].score == 0.8f);
    CHECK(n == 3 && b[0].x1 == 2.0f && b[0].y2 == 8.0f && b[2].x1 == 4.0f && b[2].x2 == 10.0f);
    n = decode(heat, 2, size, NULL, 0.1f, 100, 0.49f, b);
    CHECK(n == 2 && b[0].score == 0.9f && b[1].category == 1);
    /* No IoU-NMS: all three; max_detections keeps the best. */
    CHECK(decode(heat, 2, size, NULL, 0.1f, 100, -1.0f, b) == 3);
    n = decode(heat, 2, size, NULL, 0.1f, 2, -1.0f, b);
    CHECK(n == 2 && b[0].score == 0.9f && b[1].score == 0.85f);
    /* The threshold keeps scores equal to it. */
    n = decode(heat, 2, size, NULL, 0.85f, 100, -1.0f, b);
    CHECK(n == 2 && b[1].score == 0.85f);
}

static void test_ties_plateau(void)
{
    float heat[GG] = {0}, size[2 * GG] = {0}, off[2 * GG] = {0};
    sleapc_box b[MAXB];
    /* Equal scores rank by index: (1,12), (12,2), (12,12). */
    put(heat, size, 0, 12, 12, 0.7f, 2, 2);
    put(heat, size, 0, 12, 2, 0.7f, 2, 2);
    put(heat, size, 0, 1, 12, 0.7f, 2, 2);
    /* A plateau: equal neighbours are both peaks; a lower neighbour is not. */
    put(heat, size, 0, 6, 6, 0.6f, 2, 2);
    put(heat, size, 0, 6, 7, 0.6f, 2, 2);
    put(heat, size, 0, 7, 7, 0.5f, 2, 2);
    int n = decode(heat, 1, size, off, 0.1f, 100, -1.0f, b);
    CHECK(n == 5);
    if (n == 5) {
        CHECK(b[0].x1 == 11.0f && b[0].y1 == 0.0f);
        CHECK(b[1].x1 == 1.0f && b[1].y1 == 11.0f);
        CHECK(b[2].x1 == 11.0f && b[2].y1 == 11.0f);
        CHECK(b[3].x1 == 5.0f && b[4].x1 == 6.0f && b[3].score == 0.6f);
    }
    /* Tied and overlapping under NMS: the lower index stays. */
    n = decode(heat, 1, size, off, 0.55f, 100, 0.1f, b);
    CHECK(n == 4 && b[3].x1 == 5.0f);
}

static void test_zero_area_and_clip(void)
{
    float heat[GG] = {0}, size[2 * GG] = {0}, off[2 * GG] = {0};
    sleapc_box b[MAXB];
    put(heat, size, 0, 3, 3, 0.9f, 0, 4);  /* no width: dropped */
    put(heat, size, 0, 3, 9, 0.8f, -3, 4); /* negative size clamps to 0 */
    put(heat, size, 0, 10, 3, 0.7f, 2, 2); /* pushed off the input: nothing left */
    off[10 * G + 3] = -50.0f;
    put(heat, size, 0, 10, 10, 0.6f, 4, 4); /* clipped to the input's last pixel */
    off[10 * G + 10] = 90.0f;
    int n = decode(heat, 1, size, off, 0.1f, 100, -1.0f, b);
    CHECK(n == 1 && b[0].score == 0.6f && b[0].x1 == 98.0f && b[0].x2 == 99.0f);

    sleapc_box f[4] = {{-5, -5, 10, 10, 0.9f, 0},
                       {50, 50, 60, 60, 0.8f, 0},
                       {20, 20, 30, 30, NAN, 0},
                       {10, 45, 30, 49, 0.5f, 0}};
    n = 4;
    sleapc__bbox_clip_to_frame(f, &n, 40, 40);
    CHECK(n == 1 && f[0].x1 == 0.0f && f[0].y1 == 0.0f && f[0].x2 == 10.0f);
    n = 4;
    sleapc_box g[2] = {{-5, -5, 50, 50, 0.9f, 0}, {1, 2, 3, 4, 0.8f, 0}};
    n = 2;
    sleapc__bbox_clip_to_frame(g, &n, 40, 30);
    CHECK(n == 2 && g[0].x2 == 29.0f && g[0].y2 == 39.0f && g[1].score == 0.8f);
    /* Bad arguments fail without writing. */
    CHECK(sleapc__bbox_decode_centernet(NULL, 1, size, off, G, G, 1, NULL, b, &n) != SLEAPC_OK);
}

int main(void)
{
    test_centernet_ref();
    test_ssd_ref();
    test_nms();
    test_ties_plateau();
    test_zero_area_and_clip();
    printf("worst box %.3g px, worst score %.3g\n", worst_px, worst_score);
    return test_finish();
}
