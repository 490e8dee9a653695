"""families/eval/: `sleap-nn eval --match_method bbox` on the box cases' pred.slp.

The labels the box models were trained on hold one frame, so the ground truth
is made from sleap-nn's own top-down predictions on the same 20 frames of the
same video (predict/topdown__centered_pair__video_f0000-0019/pred.slp): each
predicted instance becomes a user instance with the same points. sleap-nn eval
then derives the GT boxes from those user instances (bbox_source auto ->
instances), as it does for the pose labels a detector is trained from.

A second ground truth has user boxes with class names: bbox_ssd__video's boxes
jittered (seeded normal noise, 3 px) and named "mouse" or "fly" at random, the
first 3 of each frame; its predictions are the same boxes named at random too,
so matching is per class (sleap-nn's class_agnostic=None sees two names).

Layout of OUT/families/eval/:
* gt.slp: that ground truth (small: 20 frames, 2 instances of 2 nodes);
* gt_boxes.slp, pred_classes.slp: the user-box ground truth and named predictions;
* <case>/: options.json (the command), metrics.npz and metrics.json as
  `sleap-nn eval --save_metrics` writes them.
"""

import os
import shutil

import numpy as np

import common as C

GT_SOURCE = "predict/topdown__centered_pair__video_f0000-0019/pred.slp"  # under the label folder
# (eval case, box case, extra eval options)
CASES = [
    ("bbox_centernet__video", "bbox_centernet__video", []),
    ("bbox_centernet__video_max2", "bbox_centernet__video_max2", []),
    ("bbox_ssd__video", "bbox_ssd__video", []),
    ("bbox_ssd__video_nms0.2_thr0.1", "bbox_ssd__video_nms0.2_thr0.1", []),
    ("bbox_centernet__video_pad8", "bbox_centernet__video", ["--bbox_padding", "8"]),
    ("userboxes_2class", None, []),  # gt_boxes.slp vs pred_classes.slp
]
BOX_SOURCE = "bbox_ssd__video"


def make_gt(stage, path):
    """The top-down predictions with every instance made a user instance."""
    import sleap_io as sio

    # this run's predict/ when it made one, else the stored data's
    src = stage.out_path(*GT_SOURCE.split("/"))
    if not os.path.exists(src):
        src = os.path.join(stage.data, stage.label, GT_SOURCE)
    with stage.cwd():
        labels = sio.load_slp(src, open_videos=False)
    for lf in labels.labeled_frames:
        lf.instances = [sio.Instance.from_numpy(inst.numpy(), skeleton=inst.skeleton) for inst in lf.instances]
    labels.provenance = {}
    labels.save(path)


def make_class_boxes(root, gt_path, pred_path):
    """User boxes named "mouse" / "fly" near the box case's, and its boxes named likewise."""
    import sleap_io as sio
    from sleap_io.model.bbox import UserBoundingBox

    pred = sio.load_slp(os.path.join(root, "cases", BOX_SOURCE, "pred.slp"), open_videos=False)
    rng = np.random.default_rng(0)
    gt = sio.Labels(videos=pred.videos, skeletons=pred.skeletons)
    for lf in pred:
        boxes = []
        for b in lf.bboxes:
            j = rng.normal(0, 3, 4)
            boxes.append(UserBoundingBox(x1=b.x1 + j[0], y1=b.y1 + j[1], x2=b.x2 + j[2], y2=b.y2 + j[3],
                                         category=str(rng.choice(["mouse", "fly"]))))
        frame = sio.LabeledFrame(video=pred.videos[0], frame_idx=lf.frame_idx)
        frame.bboxes = boxes[:3]
        gt.append(frame)
    gt.provenance = {}
    gt.save(gt_path)
    for lf in pred:
        for b in lf.bboxes:
            b.category = str(rng.choice(["mouse", "fly"]))
    pred.provenance = {}
    pred.save(pred_path)


def run(stage, root, cases_filter=None):
    eval_root = C.ensure_dir(os.path.join(root, "eval"))
    gt = os.path.join(eval_root, "gt.slp")
    make_gt(stage, gt)
    C.relativize_slp(gt, stage)
    make_class_boxes(root, os.path.join(eval_root, "gt_boxes.slp"), os.path.join(eval_root, "pred_classes.slp"))
    done = []
    for name, box_case, extra in CASES:
        if cases_filter and not any(sel in name for sel in cases_filter):
            continue
        C.log("families eval: %s" % name)
        case_dir = os.path.join(eval_root, name)
        shutil.rmtree(case_dir, ignore_errors=True)
        C.ensure_dir(case_dir)
        rel = lambda *p: stage.rel_out("families", *p)  # noqa: E731
        gt_rel, pred_rel = ("eval/gt.slp", "cases/%s/pred.slp" % box_case) if box_case else \
            ("eval/gt_boxes.slp", "eval/pred_classes.slp")
        argv = (["eval", "--ground_truth_path", rel(*gt_rel.split("/")),
                 "--predicted_path", rel(*pred_rel.split("/")),
                 "--match_method", "bbox"] + extra + ["--save_metrics", rel("eval", name, "metrics.npz")])
        with stage.cwd(), C.Timer() as t:
            err, _ = C.run_cli(argv)
        if err is not None:
            raise RuntimeError("%s: sleap-nn eval failed: %r" % (name, err))
        m = np.load(os.path.join(case_dir, "metrics.npz"), allow_pickle=True)["metrics"].item()
        shown = (["sleap-nn", "eval", "--ground_truth_path", gt_rel, "--predicted_path", pred_rel,
                  "--match_method", "bbox"] + extra + ["--save_metrics", "eval/%s/metrics.npz" % name])
        opts = {"case": name, "predictions": pred_rel, "ground_truth": gt_rel,
                "command": " ".join(shown), "cwd": "families/", "env": C.env_short(), "wall_time_s": t.s,
                "bbox_mAP": m["bbox_mAP"], "n_gt": m["n_gt"], "n_pred": m["n_pred"]}
        C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(opts))
        done.append(name)
    return done
