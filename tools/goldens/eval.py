"""eval/: `sleap-nn eval-tracking` and `sleap-nn eval` cases.

Both commands run in-process through sleap-nn's click command
(`sleap_nn.cli.cli(argv, standalone_mode=False)`), from the staged data root.

* eval-tracking: the tracked outputs of tracking/ (classic, ByteTrack with
  --link_tracklets) are copied as pred.slp; metrics.json is the file sleap-nn
  writes with -s, unchanged.
* eval: `run_evaluation` is observed (its kwargs and the metrics it returns,
  which the CLI discards) together with the Evaluator it builds, so that the
  frame pairs, matched pairs and false negatives / positives can be written.
"""

import contextlib
import os
import shutil

import numpy as np

import common as C

CLIP_GT = "sleap-assets/tracks/clip.slp"
CLIP_GT_2NODE = "sleap-assets/tracks/clip.2node.slp"
CLIP_PRED = "sleap-assets/tracks/clip.predictions.slp"
LEGACY = "sleap-nn-assets/legacy_models"

EVAL_TRACKING = [
    ("evaltracking__clip13gt_classic_default_error", CLIP_GT, "clip_classic_default", []),
    ("evaltracking__clip2node_classic_oks0.5", CLIP_GT_2NODE, "clip_classic_default", ["--oks_stddev", "0.5"]),
    ("evaltracking__clip2node_bytetrack_link_tracklets_oks0.5_mt0.5_ml0.1", CLIP_GT_2NODE,
     "clip_bytetrack_link_tracklets", ["--oks_stddev", "0.5", "--mt_threshold", "0.5", "--ml_threshold", "0.1"]),
]
EVAL = [
    ("eval__legacy_ci_val_bbox",
     LEGACY + "/minimal_instance.UNet.centered_instance/labels_gt.val.slp",
     LEGACY + "/minimal_instance.UNet.centered_instance/labels_pr.val.slp",
     ["--match_method", "bbox", "--bbox_source", "instances"]),
    ("eval__legacy_centroid_val_cm_bbox_center",
     LEGACY + "/minimal_instance.UNet.centroid/labels_gt.val.slp",
     LEGACY + "/minimal_instance.UNet.centroid/labels_pr.val.slp",
     ["--match_method", "centroid", "--centroid_method", "bbox_center"]),
    ("eval__clip13_centroid_head_anchor", CLIP_GT, CLIP_PRED,
     ["--match_method", "centroid", "--anchor_part", "head", "--centroid_method", "anchor"]),
    ("eval__clip13_centroid_bbox_center", CLIP_GT, CLIP_PRED,
     ["--match_method", "centroid", "--centroid_method", "bbox_center"]),
]
EVALUATOR_KWARGS = ["oks_stddev", "oks_scale", "match_threshold", "user_labels_only", "match_method",
                    "anchor_ind", "centroid_method", "centroid_fallback", "exclude_predicted_instance_masks"]


def type_name(v):
    """`float`, `int`, `list[N]`, `numpy.float64`, `ndarray[d0, d1]:dtype`."""
    if isinstance(v, np.ndarray):
        return "ndarray[%s]:%s" % (", ".join(str(d) for d in v.shape), v.dtype)
    if isinstance(v, list):
        return "list[%d]" % len(v)
    t = type(v)
    if t.__module__ == "numpy":
        return "numpy.%s" % t.__name__
    return t.__name__


def metric_types(m):
    if isinstance(m, dict):
        return {k: metric_types(v) for k, v in m.items()}
    return type_name(m)


@contextlib.contextmanager
def observe_evaluation():
    from sleap_nn import evaluation as ev

    seen = {"kwargs": None, "metrics": None, "evaluator": None}
    orig_run = ev.run_evaluation
    orig_init = ev.Evaluator.__init__

    def run_evaluation(*a, **k):
        seen["kwargs"] = dict(k)
        seen["metrics"] = orig_run(*a, **k)
        return seen["metrics"]

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        seen["evaluator"] = self

    ev.run_evaluation = run_evaluation
    ev.Evaluator.__init__ = init
    try:
        yield seen
    finally:
        ev.run_evaluation = orig_run
        ev.Evaluator.__init__ = orig_init


def _index_map(labels):
    """id(instance) -> its position in its labelled frame, as stored."""
    out = {}
    for lf in labels.labeled_frames:
        for k, inst in enumerate(lf.instances):
            out[id(inst)] = k
    return out


def evaluator_record(e, stage):
    gt_idx = _index_map(e.ground_truth_instances)
    pr_idx = _index_map(e.predicted_instances)
    frame_pairs = [[int(g.frame_idx), int(p.frame_idx), len(g.instances), len(p.instances)]
                   for g, p in e.frame_pairs]
    matched = [[int(g.frame_idx), gt_idx.get(id(g.instance)), pr_idx.get(id(p.instance)), float(s)]
               for g, p, s in e.positive_pairs]
    fns = [[int(m.frame_idx), gt_idx.get(id(m.instance))] for m in e.false_negatives]
    fps = [[int(m.frame_idx), pr_idx.get(id(m.instance))] for m in e.false_positives]
    n_gt = sum(r[2] for r in frame_pairs)
    n_pr = sum(r[3] for r in frame_pairs)
    counts = {
        "n_frame_pairs": len(frame_pairs),
        "n_gt_instances_in_frame_pairs": n_gt,
        "n_pred_instances_in_frame_pairs": n_pr,
        "n_matched_pairs": len(matched),
        "n_false_negatives": len(fns),
        "n_false_positives": len(fps),
        "n_unmatched_predictions_derived": n_pr - len(matched),
    }
    kw = {k: getattr(e, k, None) for k in EVALUATOR_KWARGS}
    return kw, counts, frame_pairs, matched, fns, fps


def _fix_paths(metrics, stage):
    dm = metrics.get("distance_metrics") if isinstance(metrics, dict) else None
    if isinstance(dm, dict) and "video_paths" in dm:
        dm["video_paths"] = [stage.relativize(os.path.abspath(p)) if os.path.isabs(p) or os.path.exists(p) else p
                             for p in dm["video_paths"]]
    return metrics


def run_eval_case(stage, name, gt, pred, opts):
    case_dir = C.ensure_dir(stage.out_path("eval", name))
    argv = ["eval", "-g", gt, "-p", pred] + opts
    with stage.cwd(), observe_evaluation() as seen:
        err, lines = C.run_cli(argv)
    if err is not None:
        raise RuntimeError("%s: sleap-nn eval failed: %r" % (name, err))
    metrics = seen["metrics"]
    exp = {"case": name}
    if metrics is None:
        exp.update({"evaluator_kwargs": None, "metrics": None, "run_evaluation_returned_none": True,
                    "sleap_nn_log": lines})
    else:
        e = seen["evaluator"]
        kw, counts, frame_pairs, matched, fns, fps = evaluator_record(e, stage)
        exp.update({
            "evaluator_kwargs": kw,
            "match_method_used": e.match_method,
            "metrics": _fix_paths(metrics, stage),
            "metric_types": metric_types(metrics),
            "counts": counts,
            "frame_pairs": frame_pairs,
            "matched_pairs": matched,
            "false_negatives": fns,
            "false_positives": fps,
            "sleap_nn_log": lines,
        })
    version = C.dist_version("sleap-nn")
    run_kwargs = {k: v for k, v in (seen["kwargs"] or {}).items() if k not in ("ground_truth_path", "predicted_path")}
    options = {
        "format": "sleap-nn %s eval oracle case v1" % version,
        "command": ["sleap-nn"] + argv,
        "ground_truth": {"path": gt, "sha256": C.sha256_file(stage.data_path(gt))},
        "predictions": {"path": pred, "sha256": C.sha256_file(stage.data_path(pred))},
        "run_evaluation_kwargs": run_kwargs,
        "sleap_nn": {"version": version,
                     "entry": "sleap_nn.cli.cli(['eval', ...], standalone_mode=False) -> "
                              "sleap_nn.evaluation.run_evaluation"},
        "environment": C.env_short(),
        "paths_note": "paths are relative to shared/data; pred.slp = the file in this case folder",
    }
    C.write_json_compact(os.path.join(case_dir, "expected.json"), C.jsonable(exp))
    C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(options))


def run_eval_tracking_case(stage, name, gt, track_case, opts):
    import tracking

    case_dir = C.ensure_dir(stage.out_path("eval", name))
    pred = os.path.join(case_dir, "pred.slp")
    shutil.copyfile(tracking.tracked_slp(stage, track_case), pred)
    metrics_rel = stage.rel_out("eval", name, "metrics.json")
    pred_rel = stage.rel_out("eval", name, "pred.slp")
    if os.path.exists(stage.out_path("eval", name, "metrics.json")):
        os.remove(stage.out_path("eval", name, "metrics.json"))
    argv = ["eval-tracking", "-g", gt, "-p", pred_rel, "-s", metrics_rel] + opts
    with stage.cwd():
        err, lines = C.run_cli(argv)
    version = C.dist_version("sleap-nn")
    options = {
        "format": "sleap-nn %s eval-tracking oracle case v1" % version,
        "command": ["sleap-nn", "eval-tracking", "-g", gt, "-p", "pred.slp", "-s", "metrics.json"] + opts,
        "ground_truth": {"path": gt, "sha256": C.sha256_file(stage.data_path(gt))},
        "predictions": {"path": "pred.slp", "sha256": C.sha256_file(pred)},
        "sleap_nn": {"version": version, "entry": "sleap_nn.cli.cli(['eval-tracking', ...], standalone_mode=False)"},
        "environment": C.env_short(),
        "error": None if err is None else "%s: %s" % (type(err).__name__, err),
        "sleap_nn_log": [stage.relativize(ln) for ln in lines],
        "paths_note": "paths are relative to shared/data; pred.slp and metrics.json are the files in this case folder",
    }
    if err is not None:
        C.write_json_indent(os.path.join(case_dir, "expected.json"),
                            {"case": name, "error": C.error_dict(err), "metrics": None})
    C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(options))


def run(stage, args):
    done = []
    for name, gt, track_case, opts in EVAL_TRACKING:
        if args.cases and not any(s in name for s in args.cases):
            continue
        C.log("eval: %s" % name)
        run_eval_tracking_case(stage, name, gt, track_case, opts)
        done.append(name)
    for name, gt, pred, opts in EVAL:
        if args.cases and not any(s in name for s in args.cases):
            continue
        C.log("eval: %s" % name)
        run_eval_case(stage, name, gt, pred, opts)
        done.append(name)
    return {"eval": done}
