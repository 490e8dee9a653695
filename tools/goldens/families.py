"""families/: the model families sleap-nn 0.3.5 added (box detectors, re-ID).

Unlike the other kinds, nothing to compare against exists in the shared data:
this module trains tiny models of each family on the fixture labels, then
records what sleap-nn computes with them. The format matters, not the accuracy:
UNet backbones with 8 filters, a few hundred steps on one labelled frame.

Training is not bitwise reproducible across machines, so the stored models are
the reference. `--reuse-models DIR` runs the cases on an existing `models/`
folder (the stored one) instead of training new ones.

Layout of OUT/families/:
* models/<family>/: best.ckpt (optimizer state dropped) and training_config.yaml;
* cases/<case>/: options.json (the call or command), expected.json (boxes or
  vectors per frame), heads/ (the network's outputs on frames 0-1 as .npy; the
  input is those frames as float32), pred.slp for command-line cases;
* cases/topdown_bbox__*: a detector as stage 1 of top-down (families_topdown.py, which
  also trains models/centered_instance_bbox when the models folder lacks it).
* eval/: `sleap-nn eval --match_method bbox` on the box cases (families_eval.py).
* exports/: the models' ONNX exports and their cases (families_exports.py).
"""

import glob
import json
import os
import shutil

import numpy as np

import common as C
import families_eval
import families_topdown
import families_track

LABELS = "sleap-nn-assets/datasets/minimal_instance.pkg.slp"
VIDEO_KEY = "centered_pair_small"
HEAD_FRAMES = 2


def _unet(max_stride):
    return {"unet": {"in_channels": 1, "filters": 8, "filters_rate": 1.5, "max_stride": max_stride,
                     "output_stride": 4, "convs_per_block": 2, "kernel_size": 3, "up_interpolate": True}}


# Each family: the train() keywords that differ from TRAIN_COMMON.
FAMILIES = {
    "bbox_centernet": dict(backbone_config=_unet(16), head_configs="bbox_centernet", max_epochs=40,
                           geometry_aug=None, max_height=384, max_width=384),
    "bbox_ssd": dict(backbone_config=_unet(32),
                     head_configs={"bbox_ssd": {"ssd": {"output_stride": 8, "num_levels": 3, "head_channels": 16}}},
                     max_epochs=40, geometry_aug=None, max_height=384, max_width=384),
    "embedding": dict(backbone_config=_unet(16),
                      head_configs={"embedding": {"embedding": {
                          "embedding_dim": 16, "num_fc_layers": 1, "num_fc_units": 32,
                          "objective": {"positives": {"scope": "aug_view"}, "sampler": {"kind": "random"}}}}},
                      max_epochs=3, geometry_aug="rotation", crop_size=96),
}
TRAIN_COMMON = dict(use_same_data_for_val=True, batch_size=1, min_train_steps_per_epoch=10,
                    train_steps_per_epoch=10, save_ckpt=True, trainer_accelerator="cpu",
                    learning_rate=3e-3, enable_progress_bar=False, seed=0)

# Cases on the frames/ arrays (Python API) and on the video (command line).
# `kwargs` go to Predictor.from_model_paths; `argv` to `sleap-nn predict`.
CASES = [
    dict(name="bbox_centernet__npy", family="bbox_centernet", input="numpy", kwargs={"peak_threshold": 0.05}),
    dict(name="bbox_centernet__video", family="bbox_centernet", input="cli", argv=["--peak_threshold", "0.05"]),
    dict(name="bbox_centernet__video_max2", family="bbox_centernet", input="cli",
         argv=["--peak_threshold", "0.05", "--max_instances", "2"]),
    dict(name="bbox_ssd__npy", family="bbox_ssd", input="numpy", kwargs={}),
    dict(name="bbox_ssd__video", family="bbox_ssd", input="cli", argv=[]),
    dict(name="bbox_ssd__video_nms0.2_thr0.1", family="bbox_ssd", input="cli",
         argv=["--bbox_nms_iou", "0.2", "--peak_threshold", "0.1"]),
    # A lone embedding model embeds the detections of a .slp: here 0.3.5's own
    # top-down predictions on the same frames.
    dict(name="embedding__topdown_slp", family="embedding", input="embed",
         data_path="sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp"),
]
EMBED_CAPTURE = 4  # crops whose network input and output are stored


def train_family(stage, family, models_dir):
    """Trains one family into models_dir/<family>; keeps the checkpoint and config only."""
    kw = dict(TRAIN_COMMON)
    kw.update(FAMILIES[family])
    train_model(stage, family, models_dir, kw)


def train_model(stage, family, models_dir, kw):
    """Trains with train() keywords kw into models_dir/<family>."""
    import torch
    from sleap_nn.train import train

    work = os.path.join(models_dir, ".train")
    shutil.rmtree(work, ignore_errors=True)
    with stage.cwd(), C.capture_logs():
        train(train_labels_path=[LABELS], ckpt_dir=work, run_name=family, **kw)
    src = os.path.join(work, family)
    dst = C.ensure_dir(os.path.join(models_dir, family))
    ckpt = torch.load(os.path.join(src, "best.ckpt"), map_location="cpu", weights_only=False)
    for key in ("optimizer_states", "lr_schedulers", "loops", "callbacks"):
        ckpt.pop(key, None)
    torch.save(ckpt, os.path.join(dst, "best.ckpt"))
    # The training folder was temporary: the config names none (as the fixture models do).
    with open(os.path.join(src, "training_config.yaml")) as f:
        text = f.read().replace("ckpt_dir: %s\n" % work, "ckpt_dir: .\n")
    with open(os.path.join(dst, "training_config.yaml"), "w") as f:
        f.write(text)
    shutil.rmtree(work, ignore_errors=True)


def _boxes_expected(labels, case):
    frames = []
    for lf in labels.labeled_frames:
        boxes = []
        for b in lf.bboxes:
            boxes.append({"xyxy": [float(b.x1), float(b.y1), float(b.x2), float(b.y2)],
                          "score": float(b.score),
                          "category": b.category.name if b.category is not None else None})
        frames.append({"frame_idx": int(lf.frame_idx), "boxes": boxes})
    return {"format": "sleap-nn %s box oracle v1" % C.dist_version("sleap-nn"), "case": case,
            "n_labeled_frames": len(labels.labeled_frames), "frames": frames}


def _predictor(model_dir, **kw):
    from sleap_nn.inference.predictor import Predictor

    return Predictor.from_model_paths([model_dir], device="cpu", batch_size=4, **kw)


def record_heads(pred, frames, out_dir):
    """The layer's preprocessed input and raw head outputs on the first frames."""
    import torch

    layer = pred.layer
    with torch.no_grad():
        x, info = layer.preprocess(torch.from_numpy(frames[:HEAD_FRAMES]))
        raw = layer.backend.forward(x) if hasattr(layer.backend, "forward") else layer.backend(x)
    C.ensure_dir(out_dir)
    # The input is the frames themselves (no scale, no padding at 384x384):
    # checked here rather than stored.
    same = np.array_equal(x.numpy().reshape(HEAD_FRAMES, -1),
                          frames[:HEAD_FRAMES].astype(np.float32).transpose(0, 3, 1, 2).reshape(HEAD_FRAMES, -1))
    if not same:
        raise RuntimeError("families: the layer's input is not the raw frames; store it")
    names = []
    for k, v in raw.items():
        if torch.is_tensor(v):
            np.save(os.path.join(out_dir, "%s.npy" % k), v.float().numpy())
            names.append(k)
    return {"input": "frames[0:%d] of the frames/ array as float32 (B, C, H, W)" % HEAD_FRAMES,
            "input_shape": list(x.shape), "heads": sorted(names),
            "processed_size": list(info.processed_size), "eff_scale": C.jsonable(np.asarray(torch.as_tensor(info.eff_scale)).tolist())}


def run_numpy_case(stage, case, case_dir, models_dir, frames, video):
    import sleap_io as sio
    from sleap_nn.inference.providers import NumpyProvider

    model_rel = stage.rel_out("families", "models", case["family"])
    with stage.cwd(), C.Timer() as t:
        pred = _predictor(model_rel, **case["kwargs"])
        labels = pred.predict(NumpyProvider(frames, batch_size=4), videos=[sio.load_video(video)])
        heads = record_heads(pred, frames, os.path.join(case_dir, "heads"))
    exp = _boxes_expected(labels, case["name"])
    exp["heads"] = heads
    opts = {"case": case["name"], "family": case["family"], "input": "numpy",
            "frames": [0, C.N_FRAMES - 1], "batch_size": 4, "kwargs": case["kwargs"],
            "env": C.env_predict(), "wall_time_s": t.s}
    return exp, opts


def run_cli_case(stage, case, case_dir, models_dir, video):
    import sleap_io as sio

    model_rel = stage.rel_out("families", "models", case["family"])
    slp = os.path.join(case_dir, "pred.slp")
    argv = (["predict", "--data_path", video, "--frames", "0-%d" % (C.N_FRAMES - 1), "-m", model_rel]
            + case["argv"] + ["-o", stage.rel_out("families", "cases", case["name"], "pred.slp"), "--device", "cpu"])
    with stage.cwd(), C.Timer() as t:
        err, _ = C.run_cli(argv)
    if err is not None:
        raise RuntimeError("%s: sleap-nn predict failed: %r" % (case["name"], err))
    C.relativize_slp(slp, stage)
    with stage.cwd():
        exp = _boxes_expected(sio.load_slp(slp), case["name"])
    shown = (["sleap-nn", "predict", "--data_path", video, "--frames", "0-%d" % (C.N_FRAMES - 1),
              "-m", "models/" + case["family"]] + case["argv"] + ["-o", "pred.slp", "--device", "cpu"])
    opts = {"case": case["name"], "family": case["family"], "input": "cli", "command": " ".join(shown),
            "cwd": "families/ (the data root linked in as in the other kinds)", "env": C.env_predict(), "wall_time_s": t.s}
    return exp, opts


def _vectors_expected(labels, case):
    frames = []
    for lf in labels.labeled_frames:
        insts = []
        for inst in lf.instances:
            emb = getattr(inst, "identity_embedding", None)
            vec = None if emb is None else [float(v) for v in np.asarray(emb.vector if hasattr(emb, "vector") else emb,
                                                                            dtype=np.float64).ravel()]
            insts.append({"score": float(inst.score), "vector": vec})
        frames.append({"frame_idx": int(lf.frame_idx), "instances": insts})
    return {"format": "sleap-nn %s embedding oracle v1" % C.dist_version("sleap-nn"), "case": case,
            "n_labeled_frames": len(labels.labeled_frames), "frames": frames}


def run_embed_case(stage, case, case_dir, models_dir):
    """`sleap-nn predict --data_path SLP -m embedding --save_embeddings slp`, with the
    first crops (as cut) and their network input (after the per-crop standardize)
    kept; their vectors are the first ones of expected.json."""
    import sleap_io as sio
    from sleap_nn.inference.layers import embedding as emb_layer

    model_rel = stage.rel_out("families", "models", case["family"])
    slp = os.path.join(case_dir, "pred.slp")
    # The stored predictions (the label of this run maps to OUT, not to them).
    argv = ["predict", "--data_path", stage.data_path(case["data_path"]), "-m", model_rel, "--save_embeddings", "slp",
            "-o", stage.rel_out("families", "cases", case["name"], "pred.slp"), "--device", "cpu"]
    kept = {}
    orig = emb_layer._build_embedding_input

    def capture(module, crops, masks, device):
        inp = orig(module, crops, masks, device)
        if "input" not in kept:
            kept["crops"] = crops[:EMBED_CAPTURE].detach().float().cpu().numpy()
            kept["input"] = inp[:EMBED_CAPTURE].detach().float().cpu().numpy()
        return inp

    emb_layer._build_embedding_input = capture
    try:
        with stage.cwd(), C.Timer() as t:
            err, _ = C.run_cli(argv)
    finally:
        emb_layer._build_embedding_input = orig
    if err is not None:
        raise RuntimeError("%s: sleap-nn predict failed: %r" % (case["name"], err))
    C.relativize_slp(slp, stage)
    with stage.cwd():
        exp = _vectors_expected(sio.load_slp(slp), case["name"])
    heads = C.ensure_dir(os.path.join(case_dir, "heads"))
    for k, v in kept.items():
        np.save(os.path.join(heads, "%s.npy" % k), v.astype(np.float32))
    exp["captured"] = {k: list(v.shape) for k, v in kept.items()}
    shown = ["sleap-nn", "predict", "--data_path", case["data_path"], "-m", "models/" + case["family"],
             "--save_embeddings", "slp", "-o", "pred.slp", "--device", "cpu"]
    opts = {"case": case["name"], "family": case["family"], "input": "embed", "command": " ".join(shown),
            "cwd": "families/ (the data root linked in as in the other kinds)", "env": C.env_predict(),
            "wall_time_s": t.s}
    return exp, opts


def run(stage, args):
    root = C.ensure_dir(stage.out_path("families"))
    models_dir = os.path.join(root, "models")
    if args.reuse_models:
        if os.path.abspath(args.reuse_models) != os.path.abspath(models_dir):
            shutil.rmtree(models_dir, ignore_errors=True)
            shutil.copytree(args.reuse_models, models_dir)
    else:
        for family in FAMILIES:
            C.log("families: training %s" % family)
            train_family(stage, family, C.ensure_dir(models_dir))
    video = C.VIDEOS[VIDEO_KEY]
    npy = os.path.join(stage.data, stage.label, "frames", C.frames_npy_name(VIDEO_KEY))
    frames = np.load(npy)
    done = []
    for case in CASES:
        if args.cases and not any(sel in case["name"] for sel in args.cases):
            continue
        C.log("families: %s" % case["name"])
        case_dir = os.path.join(root, "cases", case["name"])
        shutil.rmtree(case_dir, ignore_errors=True)
        C.ensure_dir(case_dir)
        if case["input"] == "numpy":
            exp, opts = run_numpy_case(stage, case, case_dir, models_dir, frames, video)
        elif case["input"] == "embed":
            exp, opts = run_embed_case(stage, case, case_dir, models_dir)
        else:
            exp, opts = run_cli_case(stage, case, case_dir, models_dir, video)
        C.write_json_compact(os.path.join(case_dir, "expected.json"), C.jsonable(exp, nan_as_string=False))
        C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(opts))
        done.append(case["name"])
    # A detector as stage 1 of top-down (families_topdown.py).
    done += families_topdown.run(stage, root, models_dir, video, args, TRAIN_COMMON, train_model)
    # The embedding model's one-command embed and track routes (families_track.py).
    done += families_track.run(stage, root, args)
    # The box cases scored by `sleap-nn eval --match_method bbox` (families_eval.py);
    # it reads the box cases' pred.slp, so not when only the top-down or the
    # embed and track cases were run.
    if not args.cases or not all(sel.startswith(("topdown_bbox", "embed_track")) for sel in args.cases):
        done += families_eval.run(stage, root, args.cases)
    # The exports of the same models, and what sleap-nn computes with them.
    if not args.cases or any("export" in sel for sel in args.cases):
        import families_exports

        embed = next(c for c in CASES if c["input"] == "embed")
        done += families_exports.run(stage, args, _boxes_expected, _vectors_expected, embed["data_path"])
    for leftover in glob.glob(os.path.join(root, "**", "*.tmp"), recursive=True):
        os.remove(leftover)
    with open(os.path.join(root, "families.json"), "w") as f:
        json.dump({"families": {k: C.jsonable(v) for k, v in FAMILIES.items()},
                   "topdown_models": families_topdown.train_record(),
                   "train_common": TRAIN_COMMON, "labels": LABELS}, f, indent=1)
    return {"families": done}
