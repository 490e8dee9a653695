/* sleapc eval: predictions scored against ground-truth labels, with
 * sleap-nn eval's options, defaults and metrics. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sleapc/eval.h"

static int usage(void)
{
    printf("usage: sleapc eval -g GT -p PRED [options]\n"
           "\n"
           "Scores the predictions in PRED against the labels in GT (.slp, .pkg.slp,\n"
           "sleapc's predictions .json, or analysis .h5) as sleap-nn eval does, and prints\n"
           "a summary.\n"
           "\n"
           "  -g, --ground_truth_path GT   ground-truth labels (user instances)\n"
           "  -p, --predicted_path PRED    predictions\n"
           "  -s, --save_metrics PATH      write the metrics: PATH.json, or PATH.npz as\n"
           "                               sleap-nn saves them (plus a .json beside it)\n"
           "  --oks_stddev S               OKS spread per node (0.025)\n"
           "  --oks_scale A                OKS scale in px^2 (default: each GT instance's\n"
           "                               bounding-box area)\n"
           "  --match_threshold T          OKS (oks) or px (centroid; 0 means 50) (0)\n"
           "  --user_labels_only / --no-user_labels_only\n"
           "                               GT: user instances only (default) or all\n"
           "  --match_method M             auto (default), oks, centroid or bbox; auto is\n"
           "                               bbox for box-only predictions, centroid when the\n"
           "                               prediction skeleton has one node; bbox: COCO box AP\n"
           "                               of the predicted boxes\n"
           "  --anchor_part NODE           centroid mode: the GT node used as centroid\n"
           "                               (default: the mean of the visible nodes)\n"
           "  --centroid_method M          centroid mode: center_of_mass, bbox_center,\n"
           "                               geometric_median or anchor (default: anchor with\n"
           "                               --anchor_part, else center_of_mass)\n"
           "  --centroid_fallback M        where the anchor is not visible: center_of_mass\n"
           "                               (default), bbox_center or geometric_median\n"
           "  --bbox_source S              bbox mode: GT boxes from auto, bboxes or instances\n"
           "                               (auto: user boxes, else user instances; sleapc\n"
           "                               reads no masks)\n"
           "  --bbox_padding PX            bbox mode: padding on derived GT boxes (0)\n"
           "  --compat V                   0.3.5 | 0.3.3 (0.3.5); 0.3.5 scores a GT instance\n"
           "                               whose visible box has no area by mean distance\n"
           "                               (1 - d / 50 px) instead of OKS\n"
           "  --report REPORT.html         write a page with the metrics, charts and the\n"
           "                               worst frames drawn\n"
           "  -q, --quiet                  no summary\n");
    return 0;
}

static bool parse_double(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v))
        return false;
    *out = v;
    return true;
}

int cmd_eval(int argc, char **argv)
{
    static const char *const names[] = {"ground_truth_path",
                                        "predicted_path",
                                        "save_metrics",
                                        "oks_stddev",
                                        "oks_scale",
                                        "match_threshold",
                                        "user_labels_only",
                                        "no-user_labels_only",
                                        "match_method",
                                        "report",
                                        "anchor_part",
                                        "quiet",
                                        "help",
                                        "centroid_method",
                                        "centroid_fallback",
                                        "bbox_source",
                                        "bbox_padding",
                                        "compat"};
    sleapc_eval_opts o = sleapc_eval_opts_default();
    const char *gt = NULL, *pred = NULL, *save = NULL, *report = NULL;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return usage();
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--user_labels_only")) {
            o.user_labels_only = true;
        } else if (!strcmp(a, "--no-user_labels_only")) {
            o.user_labels_only = false;
        } else if (cli_is_option(a, "ground_truth_path", "-g")) {
            if (!(gt = cli_option_value(argc, argv, &i, "ground_truth_path")))
                return 1;
        } else if (cli_is_option(a, "predicted_path", "-p")) {
            if (!(pred = cli_option_value(argc, argv, &i, "predicted_path")))
                return 1;
        } else if (cli_is_option(a, "save_metrics", "-s")) {
            if (!(save = cli_option_value(argc, argv, &i, "save_metrics")))
                return 1;
        } else if (cli_is_option(a, "report", NULL)) {
            if (!(report = cli_option_value(argc, argv, &i, "report")))
                return 1;
        } else if (cli_is_option(a, "match_method", NULL)) {
            if (!(o.match_method = cli_option_value(argc, argv, &i, "match_method")))
                return 1;
            if (strcmp(o.match_method, "auto") && strcmp(o.match_method, "oks") &&
                strcmp(o.match_method, "centroid") && strcmp(o.match_method, "bbox"))
                return cli_error(
                    "eval: --match_method \"%s\": expected auto, oks, centroid or bbox",
                    o.match_method);
        } else if (cli_is_option(a, "centroid_method", NULL)) {
            if (!(o.centroid_method = cli_option_value(argc, argv, &i, "centroid_method")))
                return 1;
        } else if (cli_is_option(a, "centroid_fallback", NULL)) {
            if (!(o.centroid_fallback = cli_option_value(argc, argv, &i, "centroid_fallback")))
                return 1;
        } else if (cli_is_option(a, "bbox_source", NULL)) {
            if (!(o.bbox_source = cli_option_value(argc, argv, &i, "bbox_source")))
                return 1;
        } else if (cli_is_option(a, "bbox_padding", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "bbox_padding")))
                return 1;
            if (!parse_double(v, &o.bbox_padding))
                return cli_error("eval: --bbox_padding \"%s\": expected a number", v);
        } else if (cli_is_option(a, "compat", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "compat")))
                return 1;
            if (sleapc_compat_parse(v, &o.compat))
                return cli_error("eval: --compat: %s", sleapc_last_error());
        } else if (cli_is_option(a, "anchor_part", NULL)) {
            if (!(o.anchor_part = cli_option_value(argc, argv, &i, "anchor_part")))
                return 1;
        } else if (cli_is_option(a, "oks_stddev", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "oks_stddev")))
                return 1;
            if (!parse_double(v, &o.oks_stddev) || !(o.oks_stddev > 0))
                return cli_error("eval: --oks_stddev \"%s\": expected a number > 0", v);
        } else if (cli_is_option(a, "oks_scale", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "oks_scale")))
                return 1;
            if (!parse_double(v, &o.oks_scale))
                return cli_error("eval: --oks_scale \"%s\": expected a number", v);
        } else if (cli_is_option(a, "match_threshold", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "match_threshold")))
                return 1;
            if (!parse_double(v, &o.match_threshold))
                return cli_error("eval: --match_threshold \"%s\": expected a number", v);
        } else {
            return cli_unknown_option("eval", a, names, (int)(sizeof names / sizeof names[0]));
        }
    }
    if (!gt || !pred)
        return cli_error("eval: -g GT and -p PRED are required (see sleapc eval --help)");
    sleapc_eval *ev = NULL;
    if (sleapc_eval_run(gt, pred, &o, &ev))
        return cli_lib_error();
    int rc = 0;
    if (!quiet) {
        const char *summary = sleapc_eval_summary(ev);
        if (summary)
            fputs(summary, stdout);
    }
    if (save && sleapc_eval_has_metrics(ev)) {
        if (sleapc_eval_save(ev, save))
            rc = cli_lib_error();
        else if (!quiet)
            fprintf(stderr, "sleapc: metrics saved to %s\n", save);
    }
    if (!rc && report) {
        if (sleapc_eval_report(ev, report))
            rc = cli_lib_error();
        else if (!quiet)
            fprintf(stderr, "sleapc: report written to %s\n", report);
    }
    sleapc_eval_destroy(ev);
    return rc;
}

static int usage_tracking(void)
{
    printf("usage: sleapc eval-tracking -g GT -p PRED [options]\n"
           "\n"
           "Scores the tracks in PRED against the tracks in GT as sleap-nn 0.3.5's\n"
           "eval-tracking does: per frame, poses pair up by OKS (the GT box as scale; by\n"
           "centroid distance for one-node skeletons) by minimum-cost assignment; then\n"
           "sleap-nn's identity block (ID switches, IDF1, MT/PT/ML, fragmentation, purity)\n"
           "and the TrackEval-faithful `mot` block (CLEAR-MOT, IDF1, HOTA).\n"
           "\n"
           "  -g, --ground_truth_path GT   labels with tracks\n"
           "  -p, --predicted_path PRED    tracked predictions\n"
           "  -s, --save_metrics OUT.json  write the metrics\n"
           "  --carrier auto|pose|mask     what carries identity (auto); sleapc reads no\n"
           "                               masks\n"
           "  --match_threshold T          OKS >= T (0.5); one-node skeletons: at most T px (50)\n"
           "  --oks_stddev S               OKS spread per node (0.025)\n"
           "  --mt_threshold C             legacy block: coverage >= C is mostly tracked (0.8)\n"
           "  --ml_threshold C             legacy block: coverage < C is mostly lost (0.2)\n"
           "  --user_labels_only / --no-user_labels_only\n"
           "                               drop every prediction from the GT side (off)\n"
           "  --global_identity / --per_video_identity\n"
           "                               a trajectory is a track name across videos, or\n"
           "                               (video, track name) (default)\n"
           "  --compat V                   0.3.5 | 0.3.3 (0.3.5); 0.3.3: sleapc's earlier\n"
           "                               table, pairing by the mean distance over the nodes\n"
           "                               both skeletons name (--match oks: OKS over them)\n"
           "  --match distance|oks         0.3.3 only: how instances pair up\n"
           "  --report REPORT.html         write a page with the figures and a timeline of\n"
           "                               identities and ID switches\n"
           "  -q, --quiet                  no summary\n");
    return 0;
}

int cmd_eval_tracking(int argc, char **argv)
{
    static const char *const names[] = {"ground_truth_path",
                                        "predicted_path",
                                        "save_metrics",
                                        "match",
                                        "match_threshold",
                                        "oks_stddev",
                                        "report",
                                        "quiet",
                                        "help",
                                        "carrier",
                                        "mt_threshold",
                                        "ml_threshold",
                                        "user_labels_only",
                                        "no-user_labels_only",
                                        "global_identity",
                                        "per_video_identity",
                                        "compat"};
    sleapc_eval_tracking_opts o = sleapc_eval_tracking_opts_default();
    const char *gt = NULL, *pred = NULL, *save = NULL, *report = NULL;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return usage_tracking();
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--user_labels_only") || !strcmp(a, "--no-user_labels_only")) {
            o.user_labels_only = !strcmp(a, "--user_labels_only");
        } else if (!strcmp(a, "--global_identity") || !strcmp(a, "--per_video_identity")) {
            o.global_identity = !strcmp(a, "--global_identity");
        } else if (cli_is_option(a, "compat", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "compat")))
                return 1;
            if (sleapc_compat_parse(v, &o.compat))
                return cli_error("eval-tracking: --compat: %s", sleapc_last_error());
        } else if (cli_is_option(a, "carrier", NULL)) {
            if (!(o.carrier = cli_option_value(argc, argv, &i, "carrier")))
                return 1;
            if (strcmp(o.carrier, "auto") && strcmp(o.carrier, "pose") && strcmp(o.carrier, "mask"))
                return cli_error("eval-tracking: --carrier \"%s\": expected auto, pose or mask",
                                 o.carrier);
        } else if (cli_is_option(a, "mt_threshold", NULL) ||
                   cli_is_option(a, "ml_threshold", NULL)) {
            const bool mt = cli_is_option(a, "mt_threshold", NULL);
            const char *name = mt ? "mt_threshold" : "ml_threshold";
            if (!(v = cli_option_value(argc, argv, &i, name)))
                return 1;
            if (!parse_double(v, mt ? &o.mt_threshold : &o.ml_threshold))
                return cli_error("eval-tracking: --%s \"%s\": expected a number", name, v);
        } else if (cli_is_option(a, "ground_truth_path", "-g")) {
            if (!(gt = cli_option_value(argc, argv, &i, "ground_truth_path")))
                return 1;
        } else if (cli_is_option(a, "predicted_path", "-p")) {
            if (!(pred = cli_option_value(argc, argv, &i, "predicted_path")))
                return 1;
        } else if (cli_is_option(a, "save_metrics", "-s")) {
            if (!(save = cli_option_value(argc, argv, &i, "save_metrics")))
                return 1;
        } else if (cli_is_option(a, "report", NULL)) {
            if (!(report = cli_option_value(argc, argv, &i, "report")))
                return 1;
        } else if (cli_is_option(a, "match_threshold", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "match_threshold")))
                return 1;
            if (!parse_double(v, &o.match_threshold))
                return cli_error("eval-tracking: --match_threshold \"%s\": expected a number", v);
        } else if (cli_is_option(a, "match", NULL)) {
            if (!(o.match = cli_option_value(argc, argv, &i, "match")))
                return 1;
            if (strcmp(o.match, "distance") && strcmp(o.match, "oks"))
                return cli_error("eval-tracking: --match \"%s\": expected distance or oks",
                                 o.match);
        } else if (cli_is_option(a, "oks_stddev", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "oks_stddev")))
                return 1;
            if (!parse_double(v, &o.oks_stddev) || !(o.oks_stddev > 0))
                return cli_error("eval-tracking: --oks_stddev \"%s\": expected a number > 0", v);
        } else {
            return cli_unknown_option("eval-tracking", a, names,
                                      (int)(sizeof names / sizeof names[0]));
        }
    }
    if (!gt || !pred)
        return cli_error("eval-tracking: -g GT and -p PRED are required (see sleapc "
                         "eval-tracking --help)");
    sleapc_eval_tracking *et = NULL;
    if (sleapc_eval_tracking_run(gt, pred, &o, &et))
        return cli_lib_error();
    int rc = 0;
    if (!quiet) {
        const char *summary = sleapc_eval_tracking_summary(et);
        if (summary)
            fputs(summary, stdout);
    }
    if (save && sleapc_eval_tracking_save(et, save))
        rc = cli_lib_error();
    if (!rc && report && sleapc_eval_tracking_report(et, report))
        rc = cli_lib_error();
    sleapc_eval_tracking_destroy(et);
    return rc;
}
