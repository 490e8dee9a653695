"""exports/: `sleap-nn export --format onnx` of every fixture model type, with
onnxruntime outputs on inputs built from frames/.

Per folder: sleap-nn's own export command (in-process CLI, all defaults), then
`cases/<case>/{input.npy, ort_outputs.npz, manifest.json}`. Also
export_report.json (opset, IR, inputs/outputs, op counts with If subgraphs,
metadata keys, sha256 of each file) and onnx_vs_pytorch_summary.json (ORT
keypoints against the predict/ `__npy_` cases).

The single-instance export needs onnxscript (torch's dynamo exporter).
"""

import json
import os

import numpy as np

import common as C

CP = "centered_pair_small"
SR = "small_robot"
# folder -> (checkpoints, kind of input, video, crop pipeline checkpoints)
FOLDERS = [
    ("single_instance", ["minimal_instance_single_instance"], "full", SR, None),
    ("centroid", ["minimal_instance_centroid"], "full", CP, None),
    ("centered_instance", ["minimal_instance_centered_instance"], "crops", CP,
     ["minimal_instance_centroid", "minimal_instance_centered_instance"]),
    ("topdown", ["minimal_instance_centroid", "minimal_instance_centered_instance"], "full", CP, None),
    ("bottomup", ["minimal_instance_bottomup"], "full", CP, None),
    ("multi_class_bottomup", ["minimal_instance_multiclass_bottomup"], "full", CP, None),
    ("multi_class_topdown", ["minimal_instance_multiclass_centered_instance"], "crops", CP,
     ["minimal_instance_centroid", "minimal_instance_multiclass_centered_instance"]),
    ("multi_class_topdown_combined", ["minimal_instance_centroid", "minimal_instance_multiclass_centered_instance"],
     "full", CP, None),
]
FRAME_SETS = {CP: [[0], [16, 17]], SR: [[0], [10, 11]]}
SHORT = {CP: "centered_pair", SR: "small_robot"}
NOTES = {
    "exporter": "sleap-nn {v} export CLI with its defaults: opset 17, --max-instances 20, --max-batch-size 8, "
                "--max-peaks-per-node 20, --n-line-points 10, --max-edge-length-ratio 0.25, --dist-penalty-weight "
                "1.0, --peak-threshold 0.2, --verify (onnx.checker)",
}


def case_name(video_key, frames, crops):
    tag = "f%04d" % frames[0] if len(frames) == 1 else "f%04d-%04d" % (frames[0], frames[-1])
    return "%s_%s%s" % (SHORT[video_key], tag, "_crops" if crops else "")


def _ort_info(v):
    return {"name": v.name, "type": v.type, "shape": list(v.shape)}


def _count_ops(graph, counts):
    for node in graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
        for attr in node.attribute:
            if attr.g is not None and attr.HasField("g"):
                _count_ops(attr.g, counts)
            for g in attr.graphs:
                _count_ops(g, counts)
    return counts


def _graphs(graph):
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from _graphs(attr.g)
            for g in attr.graphs:
                yield from _graphs(g)


def scrub_onnx(path, stage):
    """Hide this machine's paths in node metadata (the dynamo exporter's stack
    traces): the folder above the venv becomes `<path>`, data paths become
    relative. Weights in external data are not touched."""
    import sys

    import onnx

    venv_parent = os.path.dirname(os.path.realpath(sys.prefix))
    model = onnx.load(path, load_external_data=False)
    changed = False
    for g in _graphs(model.graph):
        for node in g.node:
            for prop in node.metadata_props:
                new = stage.relativize(prop.value)
                if venv_parent not in ("", os.sep):
                    new = new.replace(venv_parent + os.sep, "<path>" + os.sep)
                if new != prop.value:
                    prop.value = new
                    changed = True
    if changed:
        onnx.save(model, path)
    return changed


def report_for(folder_path, command):
    import onnx

    import onnxruntime as ort

    model = onnx.load(os.path.join(folder_path, "model.onnx"), load_external_data=False)
    # Input and output types and shapes as onnxruntime reports them (it
    # resolves some of the exporter's symbolic dims to numbers).
    sess = ort.InferenceSession(os.path.join(folder_path, "model.onnx"), providers=["CPUExecutionProvider"])
    opset = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    meta_keys = [p.key for p in model.metadata_props]
    model_type = None
    for p in model.metadata_props:
        if p.key == "sleap_nn_metadata":
            try:
                model_type = json.loads(p.value).get("model_type")
            except ValueError:
                pass
    if model_type is None and os.path.exists(os.path.join(folder_path, "export_metadata.json")):
        with open(os.path.join(folder_path, "export_metadata.json")) as f:
            model_type = json.load(f).get("model_type")
    files = {}
    for fn in sorted(os.listdir(folder_path)):
        p = os.path.join(folder_path, fn)
        if os.path.isfile(p):
            files[fn] = C.sha256_file(p)
    return {
        "command": command,
        "cwd": "shared/data",
        "model_type (metadata)": model_type,
        "opset": opset[0] if opset else None,
        "ir_version": model.ir_version,
        "inputs": [_ort_info(v) for v in sess.get_inputs()],
        "outputs": [_ort_info(v) for v in sess.get_outputs()],
        "ops": dict(sorted(_count_ops(model.graph, {}).items())),
        "metadata_props_keys": meta_keys,
        "files": files,
    }


def crops_from_pipeline(stage, ckpts, frames_arr, frame_ids):
    """Crops cut by sleap-nn's own top-down pipeline, valid instances only."""
    import torch
    from sleap_nn.inference.predictor import Predictor
    from sleap_nn.inference.providers import NumpyProvider

    dirs = ["%s/%s" % (C.CKPTS, c) for c in ckpts]
    with stage.cwd():
        pred = Predictor.from_model_paths(dirs)
        outs = pred.predict(NumpyProvider(frames_arr[frame_ids]), make_labels=False, return_crops=True)
    crops, where = [], []
    for out in outs:
        c = out.crops
        cents = out.pred_centroids
        c = c.cpu().numpy() if isinstance(c, torch.Tensor) else np.asarray(c)
        cents = cents.cpu().numpy() if isinstance(cents, torch.Tensor) else np.asarray(cents)
        fidx = np.asarray(out.frame_indices if getattr(out, "frame_indices", None) is not None else [])
        for b in range(c.shape[0]):
            for i in range(c.shape[1]):
                if np.isfinite(cents[b, i]).all():
                    crops.append(c[b, i])
                    where.append([int(frame_ids[int(fidx[b])] if len(fidx) else frame_ids[b]), i])
    arr = np.stack(crops)
    if arr.dtype != np.uint8:
        arr = np.clip(np.round(arr), 0, 255).astype(np.uint8)
    source = (
        "crops cut by sleap-nn %s's own top-down pipeline (Predictor.from_model_paths(%r).predict(NumpyProvider("
        "frames[%r]), make_labels=False, return_crops=True).crops, valid instances only) from %s frames %r; crop k = "
        "(frame, instance): %r" % (C.dist_version("sleap-nn"), dirs, list(frame_ids), CP, list(frame_ids), where)
    )
    return np.ascontiguousarray(arr), source


def output_stats(v):
    if v.dtype == np.bool_:
        return {"shape": list(v.shape), "dtype": "bool", "n_true": int(v.sum())}
    rec = {"shape": list(v.shape), "dtype": str(v.dtype)}
    if v.dtype.kind == "f":
        finite = v[~np.isnan(v)]
        rec["n_nan"] = int(np.isnan(v).sum())
        rec["min"] = float(finite.min()) if finite.size else None
        rec["max"] = float(finite.max()) if finite.size else None
    else:
        rec["min"] = int(v.min()) if v.size else None
        rec["max"] = int(v.max()) if v.size else None
    return rec


def run_ort(model_path, x, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model_path, sess_options=so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    names = [o.name for o in sess.get_outputs()]
    outs = dict(zip(names, sess.run(None, {name: x})))
    again = dict(zip(names, sess.run(None, {name: x})))
    same = all(np.array_equal(outs[k], again[k], equal_nan=outs[k].dtype.kind == "f") for k in names)
    return name, outs, same


def _match_max(a_list, b_list):
    """Greedy match by mean distance; max node distance over matched pairs."""
    cand = []
    for i, a in enumerate(a_list):
        for j, b in enumerate(b_list):
            d = np.linalg.norm(a - b, axis=1)
            if np.isfinite(d).any():
                cand.append((float(np.nanmean(d)), i, j, float(np.nanmax(d))))
    ua, ub, worst = set(), set(), 0.0
    for _, i, j, m in sorted(cand):
        if i in ua or j in ub:
            continue
        ua.add(i)
        ub.add(j)
        worst = max(worst, m)
    return round(worst, 4)


def _predict_points(stage, case):
    for root in (stage.out_path("predict"), os.path.join(stage.data, stage.label, "predict")):
        p = os.path.join(root, case, "expected.json")
        if os.path.exists(p):
            with open(p) as f:
                exp = json.load(f)
            return {fr["frame_idx"]: [np.array([[np.nan, np.nan] if q is None else q for q in i["points"]], float)
                                      for i in fr["instances"]] for fr in exp["frames"]}
    return None


def onnx_vs_pytorch(stage, ort_results):
    """ORT keypoints vs sleap-nn's Predictor (predict/ cases) on the same frames."""
    what = ("max distance (px, original-frame pixels) between keypoints of the ONNX graph (onnxruntime, "
            "ort_outputs.npz) and sleap-nn %s's PyTorch Predictor on the same frames (predict/*__npy_* cases), "
            "instances matched greedily by mean distance. Not listed: the multi-class top-down graphs (their baked "
            "0.2 keypoint threshold leaves every keypoint of this checkpoint empty, as in the PyTorch default case) "
            "and the bottom-up graphs (no grouping in the graph)." % C.dist_version("sleap-nn"))
    spec = {
        "topdown": ("topdown__centered_pair__npy_" + C.FRAME_TAG, "peaks"),
        "centroid": ("centroid__centered_pair__npy_" + C.FRAME_TAG, "centroids"),
        "single_instance": ("single_instance__small_robot_minimal_slp__video_index0", "peaks"),
    }
    results = {}
    for folder, (case, key) in spec.items():
        ref = _predict_points(stage, case)
        if ref is None or folder not in ort_results:
            continue
        rows = {}
        for frames, outs in ort_results[folder]:
            for b, fidx in enumerate(frames):
                p = outs[key][b]
                if folder == "centroid":
                    valid = outs["instance_valid"][b]
                    onnx_insts = [p[i][None, :] for i in range(len(p)) if valid[i]]
                elif folder == "topdown":
                    valid = outs["instance_valid"][b]
                    onnx_insts = [p[i] for i in range(len(p)) if valid[i]]
                else:
                    onnx_insts = [p]
                rows[fidx] = {"frame": int(fidx), "n_pytorch": len(ref.get(fidx, [])), "n_onnx": len(onnx_insts),
                              "max_px": _match_max(onnx_insts, ref.get(fidx, []))}
        results[folder] = [rows[k] for k in sorted(rows)]
    return {"what": what, "results": results}


def run(stage, args):
    import onnxruntime as ort

    root = C.ensure_dir(stage.out_path("exports"))
    report = {}
    ort_results = {}
    frames_cache = {}
    import predict as P

    for folder, ckpts, kind, vkey, crop_ckpts in FOLDERS:
        if args.cases and not any(s in folder for s in args.cases):
            continue
        C.log("exports: %s" % folder)
        dirs = ["%s/%s" % (C.CKPTS, c) for c in ckpts]
        out_rel = stage.rel_out("exports", folder)
        fdir = stage.out_path("exports", folder)
        if os.path.isdir(fdir):
            for fn in os.listdir(fdir):
                if os.path.isfile(os.path.join(fdir, fn)):
                    os.remove(os.path.join(fdir, fn))
        argv = ["export"] + dirs + ["-o", out_rel, "--format", "onnx"]
        with stage.cwd():
            err, lines = C.run_cli(argv)
        if err is not None or not os.path.exists(os.path.join(fdir, "model.onnx")):
            report[folder] = {"command": "sleap-nn " + " ".join(argv), "cwd": "shared/data",
                              "error": None if err is None else C.error_dict(err),
                              "sleap_nn_log_tail": lines[-10:]}
            C.log("exports: %s failed: %r" % (folder, err))
            continue
        scrub_onnx(os.path.join(fdir, "model.onnx"), stage)
        report[folder] = report_for(fdir, "sleap-nn " + " ".join(argv))
        if vkey not in frames_cache:
            frames_cache[vkey] = np.load(P.frames_source(stage, vkey))
        arr = frames_cache[vkey]
        ort_results[folder] = []
        for fr in FRAME_SETS[vkey]:
            crops = kind == "crops"
            name = case_name(vkey, fr, crops)
            cdir = C.ensure_dir(os.path.join(fdir, "cases", name))
            if crops:
                x, source = crops_from_pipeline(stage, crop_ckpts, arr, fr)
            else:
                x = np.ascontiguousarray(arr[fr].transpose(0, 3, 1, 2))
                # (the stored data names the frames file for the one-frame cases only)
                where = " (%s)" % stage.rel_out("frames", C.frames_npy_name(vkey)) if len(fr) == 1 else ""
                source = "%s frames %r%s, NHWC->NCHW" % (vkey, fr, where)
            np.save(os.path.join(cdir, "input.npy"), x)
            in_name, outs, same = run_ort(os.path.join(fdir, "model.onnx"), x, args.threads)
            np.savez(os.path.join(cdir, "ort_outputs.npz"), **outs)
            ort_results[folder].append((fr, outs))
            manifest = {
                "model": stage.rel_out("exports", folder, "model.onnx"),
                "input_name": in_name,
                "input_file": "input.npy",
                "input_shape": list(x.shape),
                "input_dtype": str(x.dtype),
                "input_source": source,
                "input_sha256": C.sha256_bytes(x.tobytes()),
                "outputs": {k: output_stats(v) for k, v in outs.items()},
                "onnxruntime": ort.__version__,
                "execution_provider": "CPUExecutionProvider",
                "session_options": {"intra_op_num_threads": args.threads,
                                    "graph_optimization_level": "ORT_ENABLE_ALL"},
                "rerun_identical": bool(same),
                "paths_note": "paths are relative to shared/data",
            }
            C.write_json_indent(os.path.join(cdir, "manifest.json"), C.jsonable(manifest))
    report["_notes"] = {"exporter": NOTES["exporter"].format(v=C.dist_version("sleap-nn"))}
    if report.get("single_instance", {}).get("opset") == 18:
        report["_notes"]["single_instance"] = (
            "The TorchScript exporter (opset 17) raised UnsupportedOperatorError for aten::_upsample_bilinear2d_aa "
            "(antialiased input-scale resize); sleap-nn then re-exported with torch.onnx.export(dynamo=True, "
            "opset_version=18), which needs onnxscript, and which writes the weights to model.onnx.data "
            "(external data).")
    rp = os.path.join(root, "export_report.json")
    if args.cases and os.path.exists(rp):
        with open(rp) as f:
            old = json.load(f)
        old.update(report)
        report = old
    C.write_json_indent(rp, C.jsonable(report))
    summary = onnx_vs_pytorch(stage, ort_results)
    sp = os.path.join(root, "onnx_vs_pytorch_summary.json")
    if args.cases and os.path.exists(sp):  # keep the rows of folders not remade now
        with open(sp) as f:
            old = json.load(f)
        old["results"].update(summary["results"])
        summary["results"] = old["results"]
    C.write_json_indent(sp, C.jsonable(summary))
    return {"exports": [k for k in report if not k.startswith("_")]}
