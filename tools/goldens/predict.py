"""predict/: sleap-nn predictions per model type.

Three kinds of case (see the data's predict/README.md):
* `__npy_`: `Predictor.from_model_paths(...).predict(NumpyProvider(frames))` on
  the frames/ arrays;
* `__video_`: `sleap-nn predict -i VIDEO --frames 0-19 ...` (in-process CLI);
* `_slp__`: `sleap-nn predict -i SLP [--video_index 0] [--exclude_user_labeled]`;
  `__gt_crops`: a centered-instance model alone on a labels file (`--data_path SLP`),
  which sleap-nn crops around the labels' user instances (use_gt_centroids). These
  are stored in the repository as tests/goldens/sleapnn-0.3.5-gt-crops/.

Each case folder gets pred.slp (provenance paths made relative), expected.json
(the predictions read back with sleap-io) and options.json. Top-down `__npy_`
cases also record every crop call (crop size rule, #778).
"""

import contextlib
import os

import numpy as np

import common as C

M = {
    "centroid": ["minimal_instance_centroid"],
    "topdown": ["minimal_instance_centroid", "minimal_instance_centered_instance"],
    "bottomup": ["minimal_instance_bottomup"],
    "multiclass_bottomup": ["minimal_instance_multiclass_bottomup"],
    "multiclass_topdown": ["minimal_instance_centroid", "minimal_instance_multiclass_centered_instance"],
    "single_instance": ["minimal_instance_single_instance"],
    "centered_instance": ["minimal_instance_centered_instance"],
}
SLP_INPUT = "sleap-nn-assets/datasets/small_robot_minimal.slp"
PKG_INPUT = "sleap-nn-assets/datasets/minimal_instance.pkg.slp"
TAG = C.FRAME_TAG


def _cases():
    cases = []
    for mt in ("centroid", "topdown", "bottomup", "multiclass_bottomup", "multiclass_topdown"):
        cases.append(dict(name="%s__centered_pair__npy_%s" % (mt, TAG), model_type=mt, input="numpy",
                          video_key="centered_pair_small", kwargs={}))
        cases.append(dict(name="%s__centered_pair__video_%s" % (mt, TAG), model_type=mt, input="cli",
                          argv_in=["-i", C.VIDEOS["centered_pair_small"], "--frames", "0-%d" % (C.N_FRAMES - 1)]))
        if mt == "topdown":
            cases.append(dict(name="topdown__centered_pair__npy_%s_n1_crop778" % TAG, model_type=mt,
                              input="numpy", video_key="centered_pair_small", kwargs={"max_instances": 1}))
    for suffix, extra in (
        ("video_index0", ["--video_index", "0"]),
        ("video_index0_exclude_user_labeled", ["--video_index", "0", "--exclude_user_labeled"]),
        ("no_video_index", []),
    ):
        cases.append(dict(name="single_instance__small_robot_minimal_slp__" + suffix, model_type="single_instance",
                          input="cli", argv_in=["-i", SLP_INPUT] + extra))
    # 1 frame with 2 user instances (embedded 384x384 images), and 2 labelled
    # frames of a 320x560 RGB video (size-matched to the model's 384x384).
    for stem, slp in (("minimal_instance_pkg", PKG_INPUT), ("small_robot_minimal", SLP_INPUT)):
        cases.append(dict(name="centered_instance__%s_slp__gt_crops" % stem, model_type="centered_instance",
                          input="cli", argv_in=["--data_path", slp]))
    # An explicit anchor: crops centred on node B (the config's fallback kept).
    cases.append(dict(name="centered_instance__minimal_instance_pkg_slp__gt_crops_anchor_B",
                      model_type="centered_instance", input="cli",
                      argv_in=["--data_path", PKG_INPUT, "--anchor_part", "B"]))
    return cases


CASES = _cases()


def model_dirs(model_type):
    return ["%s/%s" % (C.CKPTS, m) for m in M[model_type]]


# --------------------------------------------------------------------------
# Python-API prediction on arrays, with optional crop-call recording.


class CropRecorder:
    """Records every crop call of the top-down layer, per provider batch.

    `override` (optional) maps (bboxes, crop_size) -> crop_size to patch in
    another size rule (0.3.3's truncation) for a re-run.
    """

    def __init__(self, override=None):
        self.calls = []
        self.override = override
        self._batch = None

    @contextlib.contextmanager
    def installed(self):
        from sleap_nn.inference import providers
        from sleap_nn.inference.layers import topdown as td_layer

        orig_crop = td_layer.crop_bboxes
        orig_iter = providers.NumpyProvider.__iter__
        rec = self

        def iter_batches(provider):
            for batch in orig_iter(provider):
                rec._batch = [int(x) for x in np.asarray(batch.frame_indices)]
                yield batch

        def crop(images, bboxes, sample_inds, crop_size=None):
            rec.record(bboxes, crop_size)
            if rec.override is not None:
                crop_size = rec.override(bboxes, crop_size)
            return orig_crop(images, bboxes, sample_inds, crop_size=crop_size)

        td_layer.crop_bboxes = crop
        providers.NumpyProvider.__iter__ = iter_batches
        try:
            yield self
        finally:
            td_layer.crop_bboxes = orig_crop
            providers.NumpyProvider.__iter__ = orig_iter

    def record(self, bboxes, crop_size):
        b = bboxes.detach().cpu().to(dtype=bboxes.dtype)
        trunc = [truncated_size(b[i]) for i in range(b.shape[0])]
        self.calls.append({
            "batch_frames": list(self._batch) if self._batch is not None else None,
            "crop_size_0_3_5": [int(crop_size[0]), int(crop_size[1])] if crop_size is not None else None,
            "crop_size_0_3_3_rule": trunc[0] if trunc else None,
            "per_box_truncated_size": trunc,
            "first_box_top_left": [float(b[0, 0, 0]), float(b[0, 0, 1])] if trunc else None,
        })


def truncated_size(box):
    """0.3.3's crop size from one box: int(|span|) + 1 in float32, (h, w)."""
    h = int(abs(float(box[3, 1] - box[0, 1]))) + 1
    w = int(abs(float(box[1, 0] - box[0, 0]))) + 1
    return [h, w]


def predict_arrays(dirs, frames, video, batch_size=4, recorder=None, **kw):
    import sleap_io as sio
    from sleap_nn.inference.predictor import Predictor
    from sleap_nn.inference.providers import NumpyProvider

    pred = Predictor.from_model_paths(list(dirs), device="cpu", batch_size=batch_size, **kw)
    ctx = recorder.installed() if recorder is not None else contextlib.nullcontext()
    with ctx:
        return pred.predict(NumpyProvider(frames, batch_size=batch_size), videos=[sio.load_video(video)])


def python_call(dirs, npy_rel, video, batch_size, kwargs):
    kw = "".join(", %s=%r" % (k, v) for k, v in kwargs.items())
    return (
        "Predictor.from_model_paths(%r, device='cpu', batch_size=%d%s).predict(NumpyProvider(np.load(%r), "
        "batch_size=%d), videos=[sio.load_video(%r)]); sio.save_slp(labels, 'pred.slp')"
        % (list(dirs), batch_size, kw, npy_rel, batch_size, video)
    )


# --------------------------------------------------------------------------
# expected.json from a .slp.


def _f(x):
    x = float(x)
    return None if not np.isfinite(x) else x


def labels_to_expected(labels, case):
    import sleap_io as sio

    skel = labels.skeletons[0] if labels.skeletons else None
    node_names = [n.name for n in skel.nodes] if skel else []
    edges = [[node_names.index(e.source.name), node_names.index(e.destination.name)] for e in skel.edges] if skel else []
    videos = list(labels.videos)
    tracks = list(labels.tracks)
    frames = []
    n_pred = 0
    n_with = 0
    for lf in labels.labeled_frames:
        insts = []
        for inst in lf.instances:
            predicted = isinstance(inst, sio.PredictedInstance)
            pts = inst.points
            xy = np.asarray(pts["xy"], dtype=np.float64)
            vis = np.asarray(pts["visible"], dtype=bool)
            points = [None if (not vis[k] or not np.isfinite(xy[k]).all()) else [float(xy[k, 0]), float(xy[k, 1])]
                      for k in range(len(xy))]
            rec = {"type": "predicted" if predicted else "user", "points": points}
            if predicted:
                rec["point_scores"] = [_f(s) for s in np.asarray(pts["score"], dtype=np.float64)]
                rec["score"] = _f(inst.score)
                n_pred += 1
            rec["tracking_score"] = _f(inst.tracking_score) if (predicted and inst.track is not None) else None
            rec["track"] = inst.track.name if inst.track is not None else None
            insts.append(rec)
        if any(i["type"] == "predicted" for i in insts):
            n_with += 1
        frames.append({"frame_idx": int(lf.frame_idx), "video": videos.index(lf.video), "instances": insts})
    return {
        "format": "sleap-nn %s prediction oracle v1" % C.dist_version("sleap-nn"),
        "case": case,
        "source_slp": "pred.slp",
        "skeleton": {"name": skel.name if skel else None, "nodes": node_names, "edges": edges},
        "videos": [v.filename for v in videos],
        "tracks": [t.name for t in tracks],
        "n_labeled_frames": len(labels.labeled_frames),
        "n_frames_with_predictions": n_with,
        "n_predicted_instances": n_pred,
        "frames": frames,
    }


# --------------------------------------------------------------------------
# Cases.


def crop_778_block(dirs, frames, video, kwargs, calls, labels):
    """Batches where 0.3.3's first-box truncation differs from 0.3.5's size,
    and (only then) a re-run with the truncated size patched in."""
    differs = [c["batch_frames"] for c in calls if c["crop_size_0_3_3_rule"] != c["crop_size_0_3_5"]]
    block = {"batches_where_0_3_3_rule_differs": differs}
    if not differs:
        return block

    def override(bboxes, crop_size):
        return tuple(truncated_size(bboxes[0].detach().cpu()))

    patched = predict_arrays(dirs, frames, video, recorder=CropRecorder(override=override), **kwargs)
    ref = {lf.frame_idx: lf for lf in labels.labeled_frames}
    rows = []
    for lf in patched.labeled_frames:
        a = [np.asarray(i.points["xy"], dtype=np.float64) for i in lf.instances]
        b = [np.asarray(i.points["xy"], dtype=np.float64) for i in ref[lf.frame_idx].instances] if lf.frame_idx in ref else []
        shift = 0.0
        for pa, pb in zip(a, b):
            d = np.linalg.norm(pa - pb, axis=1)
            if np.isfinite(d).any():
                shift = max(shift, float(np.nanmax(d)))
        rows.append({
            "frame_idx": int(lf.frame_idx),
            "n_instances_0_3_3_rule": len(a),
            "n_instances_0_3_5": len(b),
            "max_keypoint_shift_px": shift,
            "points_0_3_3_rule": [[[_f(v) for v in p] for p in pa] for pa in a],
        })
    block["with_0_3_3_truncation_patched_in"] = rows
    block["note"] = (
        "0.3.3 took the crop size of every crop in a batch from the FIRST box of the batch as "
        "int(|x_tr-x_tl|)+1 (float32 span, truncated); 0.3.5 uses the configured crop_size (rounded span). "
        "'with_0_3_3_truncation_patched_in' re-runs the same frames with 0.3.5 but with the truncated size "
        "passed to crop_bboxes."
    )
    return block


def frames_source(stage, video_key):
    """The frames/ array: the one made in this run, else the stored one."""
    name = C.frames_npy_name(video_key)
    for p in (stage.out_path("frames", name), os.path.join(stage.data, stage.label, "frames", name)):
        if os.path.exists(p):
            return p
    raise FileNotFoundError("frames/%s: run with --only frames first" % name)


def run_numpy_case(stage, case, case_dir):
    import sleap_io as sio

    dirs = model_dirs(case["model_type"])
    vkey = case["video_key"]
    video = C.VIDEOS[vkey]
    npy_rel = stage.rel_out("frames", C.frames_npy_name(vkey))
    frames = np.load(frames_source(stage, vkey))
    topdown = case["model_type"] in ("topdown", "multiclass_topdown")
    rec = CropRecorder() if topdown else None
    with stage.cwd(), C.Timer() as t:
        labels = predict_arrays(dirs, frames, video, recorder=rec, **case["kwargs"])
        slp = os.path.join(case_dir, "pred.slp")
        sio.save_slp(labels, slp)
    C.relativize_slp(slp, stage)
    with stage.cwd():
        exp = labels_to_expected(sio.load_slp(slp), case["name"])
        if topdown:
            exp["topdown_crop_calls"] = rec.calls
            exp["crop_778"] = crop_778_block(dirs, frames, video, case["kwargs"], rec.calls, labels)
    opts = {
        "case": case["name"],
        "model_type": case["model_type"],
        "input": "numpy",
        "frames_npy": npy_rel,
        "frames": [0, C.N_FRAMES - 1],
        "video_for_slp": video,
        "model_dirs": dirs,
        "python_call": python_call(dirs, npy_rel, video, 4, case["kwargs"]),
        "batch_size": 4,
        "kwargs": case["kwargs"],
        "env": C.env_predict(),
        "wall_time_s": t.s,
    }
    return exp, opts


def run_cli_case(stage, case, case_dir):
    import sleap_io as sio

    dirs = model_dirs(case["model_type"])
    margs = []
    for d in dirs:
        margs += ["-m", d]
    out_rel = stage.rel_out("predict", case["name"], "pred.slp")
    argv = ["predict"] + case["argv_in"] + margs + ["-o", out_rel, "--device", "cpu"]
    shown = ["sleap-nn", "predict"] + case["argv_in"] + margs + ["-o", "pred.slp", "--device", "cpu"]
    with stage.cwd(), C.Timer() as t:
        err, lines = C.run_cli(argv)
    if err is not None:
        raise RuntimeError("%s: sleap-nn predict failed: %r" % (case["name"], err))
    slp = os.path.join(case_dir, "pred.slp")
    C.relativize_slp(slp, stage)
    with stage.cwd():
        exp = labels_to_expected(sio.load_slp(slp), case["name"])
    # sleap-nn's two summary lines, without their "Starting inference | " /
    # "Inference complete | " prefixes.
    summary = []
    for ln in lines:
        msg = ln.split(" | ", 1)[-1]
        if msg.startswith(("Starting inference | ", "Inference complete | ")):
            summary.append(msg.split(" | ", 1)[1])
    opts = {
        "case": case["name"],
        "model_type": case["model_type"],
        "input": "cli",
        "command": " ".join(shown),
        "cwd": "shared/data",
        "model_dirs": dirs,
        "env": C.env_predict(),
        "wall_time_s": t.s,
        "sleap_nn_log_summary": [stage.relativize(s) for s in summary],
    }
    return exp, opts


def run(stage, args):
    root = C.ensure_dir(stage.out_path("predict"))
    done = []
    for case in CASES:
        if args.cases and not any(sel in case["name"] for sel in args.cases):
            continue
        C.log("predict: %s" % case["name"])
        case_dir = C.ensure_dir(os.path.join(root, case["name"]))
        if case["input"] == "numpy":
            exp, opts = run_numpy_case(stage, case, case_dir)
        else:
            exp, opts = run_cli_case(stage, case, case_dir)
        C.write_json_compact(os.path.join(case_dir, "expected.json"), C.jsonable(exp, nan_as_string=False))
        C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(opts))
        done.append(case["name"])
    return {"predict": done}
