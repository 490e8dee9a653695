"""families/cases/embed_track__*: sleap-nn's "embed and track in one command" routes
with the tiny embedding model of families/models/embedding (run by families.py).

* lone (cli.py `_run_embeddings` without a detection model):
  `sleap-nn predict --data_path DETECTIONS.slp -m EMBEDDING --tracking --tracker T`
  embeds every detection of the .slp (0.3.5's own top-down predictions), then
  tracks them; the vectors stay in the output only with `--save_embeddings slp`.
* fused (a detection stack beside the embedding model): the video is detected
  without tracking, the detections embedded, then tracked.

expected.json lists each output frame's instances in the saved order: points, score,
track name, tracking score and (when kept) the vector. With 20 frames sleap-nn's
appearance calibration may find appearance insufficient and fall back to motion; its
log lines are kept in options.json.
"""

import os

import numpy as np

import common as C

TOPDOWN_SLP = "sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp"
VIDEO = "sleap-nn-assets/datasets/centered_pair_small.mp4"
CENTROID = "sleap-nn-assets/model_ckpts/minimal_instance_centroid"
CENTERED = "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"

# (name, fused, options after `-m EMBEDDING`)
CASES = [
    ("embed_track__deepsort", False, ["--tracking", "--tracker", "deepsort"]),
    ("embed_track__deepsort_keep", False, ["--tracking", "--tracker", "deepsort", "--save_embeddings", "slp"]),
    ("embed_track__bytetrack_link", False, ["--tracking", "--tracker", "bytetrack", "--link_tracklets"]),
    ("embed_track__botsort", False, ["--tracking", "--tracker", "botsort"]),
    # the classic tracker (the default): by appearance alone, --features embeddings and
    # cosine_sim, as sleap-nn sets them with an embedding model
    ("embed_track__classic", False, ["--tracking"]),
    # the classic tracker on geometry, vectors kept: sleap-nn scores by cosine_sim here
    ("embed_track__classic_keypoints_keep", False,
     ["--tracking", "--features", "keypoints", "--save_embeddings", "slp"]),
    ("embed_track__fused_deepsort", True, ["--tracking", "--tracker", "deepsort"]),
    ("embed_track__fused_deepsort_keep", True, ["--tracking", "--tracker", "deepsort", "--save_embeddings", "slp"]),
]


def _expected(labels, name):
    frames = []
    for lf in labels.labeled_frames:
        insts = []
        for inst in lf.instances:
            emb = getattr(inst, "identity_embedding", None)
            vec = None if emb is None else [float(v) for v in np.asarray(
                emb.vector if hasattr(emb, "vector") else emb, dtype=np.float64).ravel()]
            pts = np.asarray(inst.numpy(), dtype=np.float64)
            insts.append({
                "points": [[None if np.isnan(v) else float(v) for v in p] for p in pts],
                "score": float(inst.score),
                "track": inst.track.name if inst.track is not None else None,
                "tracking_score": float(inst.tracking_score) if inst.track is not None else None,
                "vector": vec,
            })
        frames.append({"video": labels.videos.index(lf.video), "frame_idx": int(lf.frame_idx),
                       "instances": insts})
    return {"format": "sleap-nn %s embed and track oracle v1" % C.dist_version("sleap-nn"), "case": name,
            "n_labeled_frames": len(labels.labeled_frames), "tracks_in_output": [t.name for t in labels.tracks],
            "frames": frames}


def run(stage, root, args):
    import sleap_io as sio

    done = []
    model_rel = stage.rel_out("families", "models", "embedding")
    for name, fused, opts in CASES:
        if args.cases and not any(sel in name for sel in args.cases):
            continue
        C.log("families: %s" % name)
        case_dir = C.ensure_dir(os.path.join(root, "cases", name))
        out = os.path.join(case_dir, "tracked.slp")  # removed once recorded
        if os.path.exists(out):
            os.remove(out)
        if fused:
            src = ["--data_path", VIDEO, "--frames", "0-19", "-m", CENTROID, "-m", CENTERED]
        else:
            src = ["--data_path", TOPDOWN_SLP]
        # The stored predictions (the label of this run maps to OUT, not to them).
        run_src = src if fused else ["--data_path", stage.data_path(TOPDOWN_SLP)]
        argv = ["predict"] + run_src + ["-m", model_rel] + opts + ["-o", out, "--device", "cpu"]
        with stage.cwd(), C.Timer() as t:
            err, log = C.run_cli(argv)
        if err is not None:
            raise RuntimeError("%s: sleap-nn predict failed: %r" % (name, err))
        C.relativize_slp(out, stage)
        with stage.cwd():
            exp = _expected(sio.load_slp(out), name)
        shown = ["sleap-nn", "predict"] + src + ["-m", "models/embedding"] + opts + ["-o", "tracked.slp",
                                                                                   "--device", "cpu"]
        options = {"case": name, "fused": fused, "command": " ".join(shown),
                   "cwd": "the data root (families/ linked in as in the other kinds)", "env": C.env_predict(),
                   "sleap_nn_log": C.relativize_tree([line for line in log if "alibrat" in line
                                                      or "ppearance" in line or "Attached" in line
                                                      or "track" in line.lower()][:40], stage),
                   "wall_time_s": t.s}
        C.write_json_compact(os.path.join(case_dir, "expected.json"), C.jsonable(exp, nan_as_string=False))
        C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(options))
        os.remove(out)  # expected.json holds what the tests read
        done.append(name)
    return done
