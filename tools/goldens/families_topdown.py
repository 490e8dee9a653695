"""families/ top-down cases: a box detector as stage 1 of top-down.

sleap-nn 0.3.5 seeds a centered-instance model with a detector's boxes
(inference/predictor.py `_attach_bbox_stage`): crops of the model's fixed size
on the box centres (`crop_mode: fixed`), or each box resized to the crop
(`crop_mode: bbox`, data/instance_cropping.py `BBoxCropSpec`). This module
trains the one tiny box-scaled centered-instance model the cases need (when
the models folder lacks it) and records `sleap-nn predict -m DETECTOR -m CI`
on the video: keypoints and scores per frame and instance, in sleap-nn's order.
"""

import os
import shutil

import common as C

# The box-scaled centered-instance model: the fixture labels, as the families.
CI_BBOX = "centered_instance_bbox"
CI_BBOX_TRAIN = dict(
    backbone_config={"unet": {"in_channels": 1, "filters": 8, "filters_rate": 1.5, "max_stride": 16,
                              "output_stride": 2, "convs_per_block": 2, "kernel_size": 3,
                              "up_interpolate": True}},
    head_configs="centered_instance", max_epochs=8, geometry_aug=None, crop_size=64)
# preprocessing fields train() has no keyword for.
CI_BBOX_PREPROCESSING = {"crop_mode": "bbox", "crop_bbox_aspect": "square",
                         "crop_bbox_padding": 0.15, "crop_bbox_min_size": 24.0}
FIXED_CI = "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"

# `models` are relative to families/ (models/...) or to the data root.
CASES = [
    dict(name="topdown_bbox__centernet_bboxcrop", models=["models/bbox_centernet", "models/" + CI_BBOX],
         argv=["--peak_threshold", "0.05"]),
    dict(name="topdown_bbox__centernet_fixedcrop", models=["models/bbox_centernet", FIXED_CI],
         argv=["--peak_threshold", "0.05"]),
    # The other order on the command line, and the SSD detector.
    dict(name="topdown_bbox__ssd_bboxcrop", models=["models/" + CI_BBOX, "models/bbox_ssd"],
         argv=["--peak_threshold", "0.1"]),
]


def train_ci_bbox(stage, models_dir, common, train_family_dir):
    """Trains the box-scaled centered-instance model into models_dir/CI_BBOX."""
    import sleap_nn.train as T

    run_training = T.run_training

    def with_crop_mode(cfg, *a, **k):
        for key, value in CI_BBOX_PREPROCESSING.items():
            cfg.data_config.preprocessing[key] = value
        return run_training(cfg, *a, **k)

    T.run_training = with_crop_mode
    try:
        kw = dict(common)
        kw.update(CI_BBOX_TRAIN)
        train_family_dir(stage, CI_BBOX, models_dir, kw)
    finally:
        T.run_training = run_training


def train_record():
    """The models' train() keywords and config fields, for families.json."""
    return {CI_BBOX: dict(CI_BBOX_TRAIN, preprocessing=CI_BBOX_PREPROCESSING)}


def _model_arg(stage, rel):
    return stage.rel_out("families", rel) if rel.startswith("models/") else rel


def _keypoints_expected(labels, case):
    frames = []
    for lf in labels.labeled_frames:
        insts = []
        for inst in lf.instances:
            pts = inst.numpy(scores=True) if hasattr(inst, "numpy") else None
            insts.append({"points": [[float(p[0]), float(p[1])] for p in pts],
                          "point_scores": [float(p[2]) for p in pts],
                          "score": float(inst.score)})
        frames.append({"frame_idx": int(lf.frame_idx), "instances": insts})
    return {"format": "sleap-nn %s top-down keypoint oracle v1" % C.dist_version("sleap-nn"),
            "case": case, "n_labeled_frames": len(labels.labeled_frames), "frames": frames}


def run_case(stage, case, case_dir, video):
    import sleap_io as sio

    slp = os.path.join(case_dir, "pred.slp")
    models = []
    for m in case["models"]:
        models += ["-m", _model_arg(stage, m)]
    argv = (["predict", "--data_path", video, "--frames", "0-%d" % (C.N_FRAMES - 1)] + models
            + case["argv"] + ["-o", stage.rel_out("families", "cases", case["name"], "pred.slp"),
                              "--device", "cpu"])
    with stage.cwd(), C.Timer() as t:
        err, logs = C.run_cli(argv)
    if err is not None:
        raise RuntimeError("%s: sleap-nn predict failed: %r" % (case["name"], err))
    C.relativize_slp(slp, stage)
    with stage.cwd():
        exp = _keypoints_expected(sio.load_slp(slp), case["name"])
    shown_models = []
    for m in case["models"]:
        shown_models += ["-m", m]
    shown = (["sleap-nn", "predict", "--data_path", video, "--frames", "0-%d" % (C.N_FRAMES - 1)]
             + shown_models + case["argv"] + ["-o", "pred.slp", "--device", "cpu"])
    warnings = [line for line in logs if line.startswith("WARNING")]
    opts = {"case": case["name"], "input": "cli", "command": " ".join(shown), "models": case["models"],
            "cwd": "families/ (the data root linked in as in the other kinds)", "env": C.env_predict(),
            "wall_time_s": t.s, "warnings": warnings}
    return exp, opts


def run(stage, root, models_dir, video, args, common, train_family_dir):
    if not os.path.isdir(os.path.join(models_dir, CI_BBOX)) or not args.reuse_models:
        C.log("families: training %s" % CI_BBOX)
        train_ci_bbox(stage, models_dir, common, train_family_dir)
    done = []
    for case in CASES:
        if args.cases and not any(sel in case["name"] for sel in args.cases):
            continue
        C.log("families: %s" % case["name"])
        case_dir = os.path.join(root, "cases", case["name"])
        shutil.rmtree(case_dir, ignore_errors=True)
        C.ensure_dir(case_dir)
        exp, opts = run_case(stage, case, case_dir, video)
        C.write_json_compact(os.path.join(case_dir, "expected.json"), C.jsonable(exp, nan_as_string=False))
        C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(opts))
        done.append(case["name"])
    return done
