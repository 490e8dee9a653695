/* The eval and eval-tracking reports: one self-contained page each, which
 * loads nothing from the network (no URL, no script, no external style),
 * holds its charts as inline SVG and its frames as embedded PNG, and which
 * headless Chromium renders to a screenshot that is not blank and shows
 * the charts' colours. Skipped (77) without chromium. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io/video/frame_source.h"
#include "pipeline/render/render_draw.h"
#include "test_util.h"

static const char *chromium(void)
{
    static const char *const names[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                                        "/usr/bin/google-chrome"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (access(names[k], X_OK) == 0)
            return names[k];
    return NULL;
}

/* The page references nothing outside itself. */
static void check_self_contained(const char *html, const char *name)
{
    static const char *const banned[] = {"http:", "https:", "<script", "<link",  "@import",
                                         "url(",  "href=",  "<iframe", "<object"};
    for (size_t k = 0; k < sizeof banned / sizeof banned[0]; k++)
        CHECK_MSG(!strstr(html, banned[k]), "%s: the page holds \"%s\"", name, banned[k]);
    /* every src is a data: URL */
    for (const char *p = strstr(html, "src=\""); p; p = strstr(p + 5, "src=\""))
        CHECK_MSG(!strncmp(p + 5, "data:image/png;base64,", 22), "%s: src not embedded", name);
}

/* Screenshot the page and count pixels: non-white, and near a chart colour. */
static void check_screenshot(const char *browser, const char *html, const char *name,
                             const unsigned char rgb[3], int64_t min_colored)
{
    char png[1024], cmd[4096];
    snprintf(png, sizeof png, "%s/%s.png", test_tmp_dir(), name);
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' --headless --no-sandbox --disable-gpu --hide-scrollbars "
             "--no-first-run --disable-extensions --window-size=1200,2200 --screenshot='%s' "
             "'file://%s' >/dev/null 2>&1",
             browser, png, html);
    const int rc = system(cmd);
    size_t n = 0;
    unsigned char *bytes = test_read_file(png, &n);
    CHECK_MSG(rc == 0 && bytes && n > 1000, "%s: no screenshot (rc %d)", name, rc);
    if (!bytes)
        return;
    sleapc_image_decoder *dec = NULL;
    sleapc_decoded_image img;
    CHECK_OK(sleapc__image_decoder_create(&dec));
    if (dec && !sleapc__image_decoder_decode(dec, bytes, n, png, &img)) {
        int64_t ink = 0, colored = 0;
        const int64_t n_px = img.height * img.width;
        for (int64_t k = 0; k < n_px; k++) {
            const unsigned char *p = img.rgb + 3 * k;
            ink += p[0] < 200 || p[1] < 200 || p[2] < 200;
            colored +=
                abs(p[0] - rgb[0]) < 24 && abs(p[1] - rgb[1]) < 24 && abs(p[2] - rgb[2]) < 24;
        }
        printf("%s: %lldx%lld, %lld pixels drawn, %lld in the chart colour\n", name,
               (long long)img.width, (long long)img.height, (long long)ink, (long long)colored);
        CHECK_MSG(ink > n_px / 50, "%s: the screenshot is (nearly) blank", name);
        CHECK_MSG(colored >= min_colored, "%s: the charts did not render (%lld pixels)", name,
                  (long long)colored);
    } else {
        CHECK_MSG(0, "%s: screenshot not decodable", name);
    }
    sleapc__image_decoder_destroy(dec);
    free(bytes);
}

int main(void)
{
    test_require_data();
    char gt[1024], gt2[1024], preds[1024], eval_html[1024], track_html[1024], args[4096];
    snprintf(gt, sizeof gt, "%s", test_data_path("sleap-assets/tracks/clip.slp"));
    snprintf(gt2, sizeof gt2, "%s", test_data_path("sleap-assets/tracks/clip.2node.slp"));
    snprintf(preds, sizeof preds, "%s", test_data_path("sleap-assets/tracks/clip.predictions.slp"));
    snprintf(eval_html, sizeof eval_html, "%s/eval.html", test_tmp_dir());
    snprintf(track_html, sizeof track_html, "%s/tracking.html", test_tmp_dir());

    snprintf(args, sizeof args, "eval -q -g '%s' -p '%s' --report '%s'", gt2, preds, eval_html);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args, "eval-tracking --compat 0.3.3 -q -g '%s' -p '%s' --report '%s'", gt, preds,
             track_html);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());

    size_t n = 0;
    char *page = (char *)test_read_file(eval_html, &n);
    CHECK(page != NULL);
    if (page) {
        page = realloc(page, n + 1);
        page[n] = '\0';
        check_self_contained(page, "eval");
        CHECK_MSG(strstr(page, "PCK curve") && strstr(page, "OKS of matched pairs") &&
                      strstr(page, "Error per node"),
                  "eval: a chart is missing");
        int n_svg = 0, n_img = 0;
        for (const char *p = strstr(page, "<svg"); p; p = strstr(p + 1, "<svg"))
            n_svg++;
        for (const char *p = strstr(page, "data:image/png"); p; p = strstr(p + 1, "data:image/png"))
            n_img++;
        CHECK_MSG(n_svg == 3 && n_img == 6, "eval: %d charts, %d frames", n_svg, n_img);
        free(page);
    }
    page = (char *)test_read_file(track_html, &n);
    CHECK(page != NULL);
    if (page) {
        page = realloc(page, n + 1);
        page[n] = '\0';
        check_self_contained(page, "eval-tracking");
        CHECK_MSG(strstr(page, "Identities over time") && strstr(page, "ID switch"),
                  "eval-tracking: no timeline");
        free(page);
    }

    const char *browser = chromium();
    if (!browser) {
        test_finish();
        fprintf(stderr, "SKIP: chromium is not installed: the pages were not rendered\n");
        return 77;
    }
    /* the PCK curve's blue (#1f77b4) and the timeline's first track colour */
    check_screenshot(browser, eval_html, "eval", (const unsigned char[]){0x1f, 0x77, 0xb4}, 200);
    unsigned char c0[3];
    sleapc__draw_color(0, c0);
    check_screenshot(browser, track_html, "eval-tracking", c0, 5000);
    return test_finish();
}
