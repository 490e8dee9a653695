#!/usr/bin/env python3
"""Held-out check: pose models trained now by the installed sleap-nn, run by
`sleap-nn predict` and by `sleapc predict` on the fixture videos, compared.

    V/bin/python tools/goldens/heldout.py --data ../shared/data --sleapc build/sleapc \
        --work WORKDIR [--models NAME,...] [--frames 0-19]

Nothing here is stored or read by the tests: the models are trained in
WORKDIR/models (reused when present, so a second run only predicts), both
programs write WORKDIR/<model>/{sleapnn,sleapc}.slp with the user's command
(the video decoded by each program itself), and the table compares them as
a user would: the same frames, the same instances in the same order, points
within --point-tol px (default 0.02, the issue's bound) and scores within
--score-tol (default 1e-4: float32 networks against PyTorch's). The models
span the model types (multi-class ones on a copy of the labels with a track
per instance), backbones (UNet, ConvNeXt, SwinT) and input scales (0.5
resizes the uint8 frame with PyTorch's kernel). Exit status 1 when a
model differs. Never run by CI (it needs a sleap-nn venv and minutes).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common as C  # noqa: E402

MULTI = "sleap-nn-assets/datasets/minimal_instance.pkg.slp"
ROBOT = "sleap-nn-assets/datasets/small_robot_minimal.slp"
PAIR_VIDEO = "sleap-nn-assets/datasets/centered_pair_small.mp4"
ROBOT_VIDEO = "sleap-nn-assets/datasets/small_robot.mp4"
# MULTI with a track per instance, written into WORKDIR: the fixture labels
# have no tracks, and the multi-class heads learn one class per track.
TRACKED = "tracked:" + MULTI


def _unet(max_stride=16, filters=8):
    return {"unet": {"in_channels": 1, "filters": filters, "filters_rate": 1.5, "max_stride": max_stride,
                     "output_stride": 2, "convs_per_block": 2, "kernel_size": 3, "up_interpolate": True}}


def _convnext():
    return {"convnext": {"model_type": "tiny", "arch": {"depths": [1, 1, 1, 1], "channels": [8, 16, 32, 64]},
                         "in_channels": 1, "max_stride": 32, "output_stride": 2, "filters_rate": 1.5,
                         "stem_patch_kernel": 4, "stem_patch_stride": 2}}


def _swint():
    return {"swint": {"model_type": "tiny", "arch": {"embed": 16, "depths": [1, 1, 1, 1],
                                                     "num_heads": [1, 2, 4, 8]},
                      "in_channels": 1, "max_stride": 32, "output_stride": 2, "filters_rate": 1.5,
                      "patch_size": 4, "stem_patch_stride": 2, "window_size": 7}}


def _rgb_convnext():
    cfg = _convnext()
    cfg["convnext"]["in_channels"] = 3
    return cfg


# Each model: its labels, train() keywords over TRAIN_COMMON.
MODELS = {
    "single_instance_unet_s05": dict(labels=ROBOT, backbone_config=_unet(16), head_configs="single_instance",
                                     scale=0.5, ensure_rgb=False, ensure_grayscale=True),
    "single_instance_convnext": dict(labels=ROBOT, backbone_config=_rgb_convnext(), head_configs="single_instance",
                                     scale=0.5, ensure_rgb=True),
    "centroid_unet_s05": dict(labels=MULTI, backbone_config=_unet(16), head_configs="centroid", scale=0.5),
    "centroid_convnext": dict(labels=MULTI, backbone_config=_convnext(), head_configs="centroid", scale=0.75),
    "centered_instance_unet": dict(labels=MULTI, backbone_config=_unet(16), head_configs="centered_instance",
                                   crop_size=128),
    "centered_instance_swint": dict(labels=MULTI, backbone_config=_swint(), head_configs="centered_instance",
                                    crop_size=160),
    # Bottom-up needs PAFs good enough to group: more epochs.
    "bottomup_unet_s05": dict(labels=MULTI, backbone_config=_unet(16), head_configs="bottomup", scale=0.5,
                              max_epochs=40),
    "bottomup_convnext": dict(labels=MULTI, backbone_config=_convnext(), head_configs="bottomup",
                              max_epochs=40),
    "bottomup_multiclass_unet": dict(labels=TRACKED, backbone_config=_unet(16), head_configs="multi_class_bottomup",
                                     max_epochs=40),
    "centered_instance_multiclass_unet": dict(labels=TRACKED, backbone_config=_unet(16),
                                              head_configs="multi_class_topdown", crop_size=128),
}
TRAIN_COMMON = dict(use_same_data_for_val=True, batch_size=1, min_train_steps_per_epoch=10,
                    train_steps_per_epoch=10, save_ckpt=True, trainer_accelerator="cpu",
                    learning_rate=3e-3, enable_progress_bar=False, seed=0, max_epochs=12,
                    geometry_aug=None)

# Each check: the models of one `predict` command, its video and options.
CHECKS = [
    ("single_instance_unet_s05", ["single_instance_unet_s05"], ROBOT_VIDEO, []),
    ("single_instance_convnext", ["single_instance_convnext"], ROBOT_VIDEO, []),
    ("topdown_unet", ["centroid_unet_s05", "centered_instance_unet"], PAIR_VIDEO, []),
    # Under-trained, the ConvNeXt centroid stage finds hundreds of low peaks
    # a frame at the low threshold (sleap-nn then took 26 min): the two
    # animals' best peaks are what matters.
    ("topdown_convnext_swint", ["centroid_convnext", "centered_instance_swint"], PAIR_VIDEO,
     ["--max_instances", "2"]),
    ("bottomup_unet_s05", ["bottomup_unet_s05"], PAIR_VIDEO, []),
    ("bottomup_convnext", ["bottomup_convnext"], PAIR_VIDEO, []),
    ("topdown_unet_tracked", ["centroid_unet_s05", "centered_instance_unet"], PAIR_VIDEO,
     ["--tracking", "--tracker", "bytetrack"]),
    ("bottomup_multiclass_unet", ["bottomup_multiclass_unet"], PAIR_VIDEO, []),
    ("topdown_multiclass_unet", ["centroid_unet_s05", "centered_instance_multiclass_unet"], PAIR_VIDEO, []),
]


def tracked_labels(data, models_dir, labels):
    """A copy of `labels` (relative to data) whose instances each get their own
    track, written beside the models; its absolute path."""
    import sleap_io as sio

    out = os.path.join(models_dir, "labels", os.path.basename(labels).replace(".slp", ".tracked.slp"))
    if os.path.exists(out):
        return out
    lab = sio.load_slp(os.path.join(data, labels))
    n = max(len(lf.instances) for lf in lab)
    tracks = [sio.Track(name="animal_%d" % k) for k in range(n)]
    for lf in lab:
        for k, inst in enumerate(lf.instances):
            inst.track = tracks[k]
    lab.tracks = tracks
    C.ensure_dir(os.path.dirname(out))
    sio.save_slp(lab, out, embed="user")
    return out


def train_model(data, models_dir, name):
    """Trains MODELS[name] into models_dir/name (checkpoint and config only)."""
    import torch
    from sleap_nn.train import train

    kw = dict(TRAIN_COMMON)
    kw.update(MODELS[name])
    labels = kw.pop("labels")
    if labels.startswith("tracked:"):
        labels = tracked_labels(data, models_dir, labels[len("tracked:"):])
    work = os.path.join(models_dir, ".train")
    shutil.rmtree(work, ignore_errors=True)
    old = os.getcwd()
    os.chdir(data)
    try:
        with C.capture_logs():
            train(train_labels_path=[labels], ckpt_dir=work, run_name=name, **kw)
    finally:
        os.chdir(old)
    src, dst = os.path.join(work, name), C.ensure_dir(os.path.join(models_dir, name))
    ckpt = torch.load(os.path.join(src, "best.ckpt"), map_location="cpu", weights_only=False)
    for key in ("optimizer_states", "lr_schedulers", "loops", "callbacks"):
        ckpt.pop(key, None)
    torch.save(ckpt, os.path.join(dst, "best.ckpt"))
    shutil.copy(os.path.join(src, "training_config.yaml"), os.path.join(dst, "training_config.yaml"))
    shutil.rmtree(work, ignore_errors=True)


def run(cmd, cwd):
    t0 = time.time()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.stderr.write(p.stdout[-4000:])
        raise SystemExit("failed (%d): %s" % (p.returncode, " ".join(cmd)))
    return time.time() - t0


def frames_of(path):
    """{frame_idx: [(points (n, 2), point scores, score, track name)]} of a .slp."""
    import numpy as np
    import sleap_io as sio

    out = {}
    for lf in sio.load_slp(path):
        insts = [i for i in lf.instances if isinstance(i, sio.PredictedInstance)]
        rows = [np.asarray(i.numpy(scores=True), float) for i in insts]
        out[lf.frame_idx] = [(r[:, :2], r[:, 2], float(i.score), i.track.name if i.track else None)
                             for r, i in zip(rows, insts)]
    return {k: v for k, v in out.items() if v}


def compare(want_path, got_path, point_tol, score_tol):
    import numpy as np

    want, got = frames_of(want_path), frames_of(got_path)
    res = dict(frames=len(want), instances=sum(len(v) for v in want.values()), worst_px=0.0,
               worst_score=0.0, problems=[])
    if sorted(want) != sorted(got):
        res["problems"].append("frames differ: %s only in sleap-nn, %s only in sleapc" % (
            sorted(set(want) - set(got))[:5], sorted(set(got) - set(want))[:5]))
    for f in sorted(set(want) & set(got)):
        w, g = want[f], got[f]
        if len(w) != len(g):
            res["problems"].append("frame %d: %d instances, sleap-nn %d" % (f, len(g), len(w)))
            continue
        for k, (a, b) in enumerate(zip(w, g)):
            if not np.array_equal(np.isnan(a[0]), np.isnan(b[0])):
                res["problems"].append("frame %d instance %d: a point found by one side only" % (f, k))
                continue
            ok = ~np.isnan(a[0])
            if ok.any():
                res["worst_px"] = max(res["worst_px"], float(np.abs(a[0][ok] - b[0][ok]).max()))
                vis = ok.all(axis=1)
                if vis.any():
                    res["worst_score"] = max(res["worst_score"], float(np.abs(a[1][vis] - b[1][vis]).max()))
            res["worst_score"] = max(res["worst_score"], abs(a[2] - b[2]))
            if a[3] != b[3]:
                res["problems"].append("frame %d instance %d: track %s, sleap-nn %s" % (f, k, b[3], a[3]))
    if not want:
        res["problems"].append("sleap-nn found no instance: nothing compared (train longer)")
    if res["worst_px"] > point_tol:
        res["problems"].append("points differ by %.3g px" % res["worst_px"])
    if res["worst_score"] > score_tol:
        res["problems"].append("scores differ by %.3g" % res["worst_score"])
    return res


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="the data root (the repo's ../shared/data)")
    p.add_argument("--sleapc", required=True, help="the sleapc executable")
    p.add_argument("--work", required=True, help="working folder (models kept there for the next run)")
    p.add_argument("--checks", default="", help="comma-separated check names (default: all)")
    p.add_argument("--frames", default="0-19")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--peak_threshold", type=float, default=0.05,
                   help="for both programs (tiny models' peaks are low)")
    p.add_argument("--point-tol", type=float, default=0.02)
    p.add_argument("--score-tol", type=float, default=1e-4)
    a = p.parse_args(argv)
    C.limit_threads(a.threads)
    data, work = os.path.abspath(a.data), C.ensure_dir(os.path.abspath(a.work))
    sleapc = os.path.abspath(a.sleapc)
    sleapnn = os.path.join(os.path.dirname(sys.executable), "sleap-nn")
    models_dir = C.ensure_dir(os.path.join(work, "models"))
    only = [c for c in a.checks.split(",") if c]
    checks = [c for c in CHECKS if not only or c[0] in only]
    report, failed = [], False
    for name, models, video, opts in checks:
        for m in models:
            if not os.path.exists(os.path.join(models_dir, m, "best.ckpt")):
                print("training %s" % m, flush=True)
                train_model(data, models_dir, m)
        out = C.ensure_dir(os.path.join(work, name))
        margs = sum((["-m", os.path.join(models_dir, m)] for m in models), [])
        want, got = os.path.join(out, "sleapnn.slp"), os.path.join(out, "sleapc.slp")
        opts = ["--peak_threshold", str(a.peak_threshold), *opts]
        t_snn = run([sleapnn, "predict", "--data_path", video, "--frames", a.frames, *margs, *opts,
                     "--device", "cpu", "-o", want], data)
        t_sc = run([sleapc, "predict", "--data_path", video, "--frames", a.frames, *margs, *opts,
                    "-o", got, "-q"], data)
        r = compare(want, got, a.point_tol, a.score_tol)
        r.update(check=name, models=models, video=video, options=opts, sleapnn_s=round(t_snn, 2),
                 sleapc_s=round(t_sc, 2))
        failed |= bool(r["problems"])
        report.append(r)
        print("%-28s %3d frames %4d instances  points within %.3g px  scores within %.3g  %s" % (
            name, r["frames"], r["instances"], r["worst_px"], r["worst_score"],
            "OK" if not r["problems"] else "DIFFERS: " + "; ".join(r["problems"][:3])), flush=True)
    with open(os.path.join(work, "heldout.json"), "w") as f:
        json.dump(dict(software=C.env_short(), checks=report), f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
