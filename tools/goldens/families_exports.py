"""families/exports/: `sleap-nn export --format onnx` of the family models, and
what sleap-nn computes with those exports (run from families.py).

* exports/<family>/: model.onnx, export_metadata.json and the copied
  training_config.yaml, as `sleap-nn export models/<family> --format onnx -o
  exports/<family>` wrote them (all defaults);
* exports/cases/<family>__video*/: `sleap-nn predict -m exports/<family> ...`
  on the frames of the checkpoint `__video` cases, with options.json and
  expected.json in the box oracle's format, and pred.slp;
* exports/cases/embedding__topdown_slp/: sleap-nn 0.3.5 cannot run an embedding
  export (`_select_export_layer` knows no `embedding`), so the checkpoint
  embed command is rerun with every crop kept (as cut, whole grey levels) and
  onnxruntime runs the export on them, as uint8 (the graph's input type);
  expected.json gives each instance's export vector beside the checkpoint's.
"""

import json
import os
import shutil

import numpy as np

import common as C

FAMILIES = ["bbox_centernet", "bbox_ssd", "embedding"]
# The checkpoint cases again, on the export. sleap-nn's CLI drops
# --peak_threshold for an export (the metadata's 0.2 is used) and builds the
# export's decoder with the default NMS, so only --max_instances is varied.
BOX_CASES = [
    dict(name="bbox_centernet__video", family="bbox_centernet", argv=[]),
    dict(name="bbox_centernet__video_max2", family="bbox_centernet", argv=["--max_instances", "2"]),
    dict(name="bbox_ssd__video", family="bbox_ssd", argv=[]),
]
EMBED_CASE = "embedding__topdown_slp"


def export_family(stage, family):
    rel = stage.rel_out("families", "exports", family)
    out = stage.out_path("families", "exports", family)
    shutil.rmtree(out, ignore_errors=True)
    argv = ["export", stage.rel_out("families", "models", family), "--format", "onnx", "-o", rel]
    with stage.cwd():
        err, lines = C.run_cli(argv)
    if err is not None or not os.path.exists(os.path.join(out, "model.onnx")):
        raise RuntimeError("families export %s failed: %r %s" % (family, err, lines[-5:]))
    # The metadata names the checkpoint it came from: relative to the folder.
    meta_path = os.path.join(out, "export_metadata.json")
    with open(meta_path) as f:
        meta = json.load(f)
    if meta.get("checkpoint_path"):
        meta["checkpoint_path"] = "../../models/%s/best.ckpt" % family
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
    return "sleap-nn export models/%s --format onnx -o exports/%s" % (family, family)


def run_box_case(stage, case, case_dir, boxes_expected):
    import sleap_io as sio

    video = C.VIDEOS["centered_pair_small"]
    frames = "0-%d" % (C.N_FRAMES - 1)
    argv = (["predict", "--data_path", video, "--frames", frames,
             "-m", stage.rel_out("families", "exports", case["family"])] + case["argv"]
            + ["-o", stage.rel_out("families", "exports", "cases", case["name"], "pred.slp"), "--device", "cpu"])
    with stage.cwd(), C.Timer() as t:
        err, _ = C.run_cli(argv)
    if err is not None:
        raise RuntimeError("%s (export): sleap-nn predict failed: %r" % (case["name"], err))
    slp = os.path.join(case_dir, "pred.slp")
    C.relativize_slp(slp, stage)
    with stage.cwd():
        exp = boxes_expected(sio.load_slp(slp), case["name"])
    shown = (["sleap-nn", "predict", "--data_path", video, "--frames", frames, "-m", "exports/" + case["family"]]
             + case["argv"] + ["-o", "pred.slp", "--device", "cpu"])
    opts = {"case": case["name"], "family": case["family"], "input": "cli", "model": "export",
            "command": " ".join(shown), "cwd": "families/ (the data root linked in as in the other kinds)",
            "env": C.env_predict(), "wall_time_s": t.s}
    return exp, opts


def run_embed_case(stage, case, case_dir, vectors_expected, threads):
    """Every crop of the checkpoint embed command, then onnxruntime on them."""
    import onnxruntime as ort
    import sleap_io as sio
    from sleap_nn.inference.layers import embedding as emb_layer

    slp = os.path.join(case_dir, "checkpoint_pred.slp")
    argv = ["predict", "--data_path", stage.data_path(case["data_path"]),
            "-m", stage.rel_out("families", "models", "embedding"), "--save_embeddings", "slp",
            "-o", stage.rel_out("families", "exports", "cases", case["name"], "checkpoint_pred.slp"),
            "--device", "cpu"]
    kept = []
    orig = emb_layer._build_embedding_input

    def capture(module, crops, masks, device):
        kept.append(crops.detach().float().cpu().numpy())
        return orig(module, crops, masks, device)

    emb_layer._build_embedding_input = capture
    try:
        with stage.cwd():
            err, _ = C.run_cli(argv)
    finally:
        emb_layer._build_embedding_input = orig
    if err is not None:
        raise RuntimeError("%s: sleap-nn predict failed: %r" % (case["name"], err))
    with stage.cwd():
        ckpt = vectors_expected(sio.load_slp(slp), case["name"])
    os.remove(slp)
    crops = np.concatenate(kept)
    if np.abs(crops - np.round(crops)).max() != 0 or crops.min() < 0 or crops.max() > 255:
        raise RuntimeError("embedding crops are not whole grey levels: uint8 would change them")
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(stage.out_path("families", "exports", "embedding", "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    vecs = sess.run(["embedding"], {name: crops.astype(np.uint8)})[0]
    # Crops go in (frame, instance) order; each export vector sits beside the
    # checkpoint's, which also checks that order.
    k = 0
    worst = 0.0
    for fr in ckpt["frames"]:
        for inst in fr["instances"]:
            if inst["vector"] is None:
                continue
            inst["checkpoint_vector"] = inst["vector"]
            inst["vector"] = [float(v) for v in vecs[k]]
            worst = max(worst, float(np.abs(vecs[k] - np.asarray(inst["checkpoint_vector"])).max()))
            k += 1
    if k != len(vecs) or worst > 1e-4:
        raise RuntimeError("export vectors do not line up with the instances (%d of %d, %g)" % (k, len(vecs), worst))
    ckpt["format"] = ckpt["format"].replace("embedding oracle", "embedding export oracle")
    ckpt["max_abs_vs_checkpoint"] = worst
    ckpt["onnxruntime"] = ort.__version__
    shown = ["sleap-nn", "predict", "--data_path", case["data_path"], "-m", "models/embedding",
             "--save_embeddings", "slp", "-o", "pred.slp", "--device", "cpu"]
    opts = {"case": case["name"], "family": "embedding", "input": "embed", "model": "export",
            "command": " ".join(shown) + "  (every crop kept), then onnxruntime on exports/embedding/model.onnx "
                       "with the crops as uint8 (B, 1, 96, 96)",
            "why": "sleap-nn 0.3.5 cannot predict with an embedding export (_select_export_layer: "
                   "Unrecognized model_type 'embedding')",
            "n_crops": int(len(vecs)), "onnxruntime_threads": threads,
            "cwd": "families/ (the data root linked in as in the other kinds)", "env": C.env_predict()}
    return ckpt, opts


def run(stage, args, boxes_expected, vectors_expected, embed_data_path):
    """The exports and their cases; returns the names made."""
    commands = {f: export_family(stage, f) for f in FAMILIES}
    done = []
    cases = [dict(c, input="cli") for c in BOX_CASES] + [dict(name=EMBED_CASE, input="embed",
                                                              data_path=embed_data_path)]
    for case in cases:
        C.log("families: export %s" % case["name"])
        case_dir = stage.out_path("families", "exports", "cases", case["name"])
        shutil.rmtree(case_dir, ignore_errors=True)
        C.ensure_dir(case_dir)
        if case["input"] == "cli":
            exp, opts = run_box_case(stage, case, case_dir, boxes_expected)
        else:
            exp, opts = run_embed_case(stage, case, case_dir, vectors_expected, getattr(args, "threads", 2) or 2)
        opts["export_command"] = commands[case.get("family", "embedding")]
        C.write_json_compact(os.path.join(case_dir, "expected.json"), C.jsonable(exp, nan_as_string=False))
        C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(opts))
        done.append("exports/" + case["name"])
    return done
