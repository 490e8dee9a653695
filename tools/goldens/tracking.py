"""tracking/: tracking-only runs of sleap-nn on fixed untracked predictions.

input.json is rebuilt from `sleap-assets/tracks/clip.predictions.slp` (its
predicted instances in stored order, tracks dropped), input.slp is that JSON
written with sleap-io, and each case runs

    sleap-nn predict --data_path input.slp --tracking --tracker NAME [OPTIONS] -o tracked.slp

in-process through sleap-nn's click command, with two observers that change
nothing: the order in which `sio.Track`s are created, and the Labels that
`Predictor.retrack` returns (float64 tracking scores before saving).

tracked.slp is not part of the layout; it is kept in OUTDIR/.work/ for eval/.
"""

import contextlib
import os

import numpy as np

import common as C

SOURCE = "sleap-assets/tracks/clip.predictions.slp"
CASES = [
    ("clip_classic_default", ["--tracker", "classic"]),
    ("clip_ocsort", ["--tracker", "ocsort"]),
    ("clip_bytetrack_link_tracklets", ["--tracker", "bytetrack", "--link_tracklets"]),
    ("clip_sort_preset_paper", ["--tracker", "sort", "--mot_param", "preset=paper"]),
    ("clip_botsort_refused_no_embeddings", ["--tracker", "botsort"]),
]
BOTSORT_NOTE = (
    "BoT-SORT is an appearance tracker in sleap-nn %s (requires_vectors); with no re-ID vectors in the input it "
    "refuses before tracking. No motion-only BoT-SORT mode exists, so this case records the refusal."
)


def _f(x):
    x = float(x)
    return None if np.isnan(x) else x


def build_input_json(stage):
    import sleap_io as sio

    labels = sio.load_slp(stage.data_path(SOURCE))
    skel = labels.skeletons[0]
    video = labels.videos[0]
    vid_rel = stage.relativize(os.path.realpath(video.filename))
    frames = []
    for lf in labels.labeled_frames:
        insts = []
        for inst in lf.instances:
            if not isinstance(inst, sio.PredictedInstance):
                continue
            xy = np.asarray(inst.points["xy"], dtype=np.float64)
            vis = np.asarray(inst.points["visible"], dtype=bool)
            insts.append({
                "points": [[float(p[0]), float(p[1])] if (v and np.isfinite(p).all()) else None
                           for p, v in zip(xy, vis)],
                "point_scores": [_f(s) for s in np.asarray(inst.points["score"], dtype=np.float64)],
                "score": _f(inst.score),
            })
        frames.append({"frame_idx": int(lf.frame_idx), "instances": insts})
    return {
        "format": "sleapc tracking oracle input v1",
        "source": {
            "file": "shared/data/" + SOURCE,
            "sha256": C.sha256_file(stage.data_path(SOURCE)),
            "note": "predicted instances in stored order; tracks and tracking scores dropped",
        },
        "video": {"file": "shared/data/" + vid_rel},
        "skeleton": {"name": skel.name, "nodes": [n.name for n in skel.nodes]},
        "frames": frames,
    }


def write_input_slp(inp, path):
    """input.json as a .slp: one PredictedInstance.from_numpy per instance."""
    import sleap_io as sio

    skel = sio.Skeleton(nodes=inp["skeleton"]["nodes"], name=inp["skeleton"]["name"])
    vfile = inp["video"]["file"]
    if vfile.startswith("shared/data/"):
        vfile = vfile[len("shared/data/"):]
    video = sio.Video(filename=vfile, open_backend=False)
    lfs = []
    for fr in inp["frames"]:
        insts = []
        for d in fr["instances"]:
            pts = np.array([[np.nan, np.nan] if p is None else p for p in d["points"]], dtype=np.float64)
            sc = np.array([np.nan if s is None else s for s in d["point_scores"]], dtype=np.float64)
            score = np.nan if d["score"] is None else d["score"]
            insts.append(sio.PredictedInstance.from_numpy(pts, skeleton=skel, point_scores=sc, score=score))
        lfs.append(sio.LabeledFrame(video=video, frame_idx=fr["frame_idx"], instances=insts))
    sio.save_slp(sio.Labels(labeled_frames=lfs, videos=[video], skeletons=[skel]), path)


@contextlib.contextmanager
def observers():
    import sleap_io as sio
    from sleap_nn.inference.predictor import Predictor

    seen = {"created": [], "before": None, "labels": None}
    orig_track_init = sio.Track.__init__
    orig_retrack = Predictor.__dict__["retrack"]

    def track_init(self, *a, **k):
        orig_track_init(self, *a, **k)
        seen["created"].append(self.name)

    def retrack(labels, *a, **k):
        seen["before"] = [(lf.frame_idx, [id(i) for i in lf.instances]) for lf in labels.labeled_frames]
        seen["created"].clear()
        out = orig_retrack.__func__(labels, *a, **k)
        seen["labels"] = out
        return out

    sio.Track.__init__ = track_init
    Predictor.retrack = staticmethod(retrack)
    try:
        yield seen
    finally:
        sio.Track.__init__ = orig_track_init
        Predictor.retrack = orig_retrack


def expected_from_result(seen, saved):
    """The tracking expected.json from the in-memory result, checked against the saved file."""
    before = dict(seen["before"])
    labels = seen["labels"]
    frames = []
    n_in = n_tracked = n_untracked = n_dropped = 0
    saved_by_idx = {lf.frame_idx: lf for lf in saved.labeled_frames}
    for lf in labels.labeled_frames:
        ids = before.get(lf.frame_idx, [])
        pos = {iid: k for k, iid in enumerate(ids)}
        track = [None] * len(ids)
        score = [None] * len(ids)
        out = []
        for inst in lf.instances:
            k = pos[id(inst)]
            out.append(k)
            if inst.track is not None:
                track[k] = inst.track.name
                score[k] = float(inst.tracking_score)
        n_in += len(ids)
        n_tracked += sum(t is not None for t in track)
        n_untracked += sum(1 for k in out if track[k] is None)
        n_dropped += len(ids) - len(out)
        frames.append({"frame_idx": int(lf.frame_idx), "track": track, "tracking_score": score, "out": out})
        s = saved_by_idx.get(lf.frame_idx)
        s_insts = list(s.instances) if s is not None else []
        if [i.track.name if i.track else None for i in s_insts] != [track[k] for k in out]:
            raise RuntimeError("frame %d: saved tracks differ from the in-memory result" % lf.frame_idx)
        for i, k in zip(s_insts, out):
            if score[k] is not None and np.float32(score[k]) != np.float32(i.tracking_score):
                raise RuntimeError("frame %d: saved tracking score differs after float32 rounding" % lf.frame_idx)
    result = {
        "instances_in": n_in,
        "tracked": n_tracked,
        "untracked_in_output": n_untracked,
        "dropped": n_dropped,
        "tracks_created": len(seen["created"]),
        "tracks_in_output": len(saved.tracks),
    }
    exp = {
        "format": "sleapc tracking oracle expected v1",
        "sleap_nn_version": C.dist_version("sleap-nn"),
        "tracks_created": list(seen["created"]),
        "tracks_in_output": [t.name for t in saved.tracks],
        "frames": frames,
    }
    return exp, result


def work_dir(stage, case):
    return C.ensure_dir(stage.out_path(".work", "tracking", case))


def run_case(stage, name, opts, input_rel):
    import sleap_io as sio

    case_dir = C.ensure_dir(stage.out_path("tracking", name))
    tracked = os.path.join(work_dir(stage, name), "tracked.slp")
    if os.path.exists(tracked):
        os.remove(tracked)
    argv = ["predict", "--data_path", input_rel, "--tracking"] + opts + ["-o", tracked]
    command = " ".join(["sleap-nn", "predict", "--data_path", "input.slp", "--tracking"] + opts + ["-o", "tracked.slp"])
    base = {
        "case": name,
        "command": command,
        "cwd": "the case folder, with input.slp = %s (built from input.json)" % stage.rel_out("tracking", "input.slp"),
        "options": opts,
        "entry": "sleap_nn.cli.cli(argv, standalone_mode=False) in-process (the same click command as the sleap-nn "
                 "executable)",
    }
    with stage.cwd(), observers() as seen, C.Timer() as t:
        err, _ = C.run_cli(argv)
    if err is not None or seen["labels"] is None:
        if err is None:
            raise RuntimeError("%s: sleap-nn did not run the tracker" % name)
        exp = {"format": "sleapc tracking oracle expected v1", "error": C.error_dict(err),
               "frames": None, "tracks_created": None}
        if "botsort" in opts:
            base["note"] = BOTSORT_NOTE % C.dist_version("sleap-nn")
        return case_dir, exp, base
    saved = sio.load_slp(tracked)
    exp, result = expected_from_result(seen, saved)
    prov = dict(saved.provenance)
    keep = {k: prov[k] for k in ("tracking_start_timestamp", "tracking_end_timestamp", "tracking_runtime_seconds",
                                 "tracking_config", "tracking") if k in prov}
    base["tracking_provenance_in_output"] = C.relativize_tree(keep, stage)
    base["provenance_keys"] = sorted(prov)
    base["result"] = result
    base["env"] = C.env_short()
    base["wall_time_s"] = t.s
    C.relativize_slp(tracked, stage)
    return case_dir, exp, base


def ensure_input(stage):
    """input.json (rebuilt) and input.slp in OUTDIR/tracking/."""
    root = C.ensure_dir(stage.out_path("tracking"))
    inp_json = os.path.join(C.ensure_dir(stage.out_path(".work", "tracking")), "input.json")
    if not os.path.exists(inp_json):
        C.write_json_compact(inp_json, build_input_json(stage))
    import json

    with open(inp_json) as f:
        inp = json.load(f)
    slp = os.path.join(root, "input.slp")
    if not os.path.exists(slp):
        with stage.cwd():
            write_input_slp(inp, slp)
    return inp_json, stage.rel_out("tracking", "input.slp")


def tracked_slp(stage, name):
    """The tracked .slp of a case (made now if this run has not made it)."""
    path = os.path.join(work_dir(stage, name), "tracked.slp")
    if not os.path.exists(path):
        _, rel = ensure_input(stage)
        opts = dict(CASES)[name]
        run_case(stage, name, opts, rel)
    return path


def run(stage, args):
    inp_json, input_rel = ensure_input(stage)
    done = []
    for name, opts in CASES:
        if args.cases and not any(s in name for s in args.cases):
            continue
        C.log("tracking: %s" % name)
        case_dir, exp, options = run_case(stage, name, opts, input_rel)
        write = C.write_json_indent if "error" in exp else C.write_json_compact  # as in the stored data
        write(os.path.join(case_dir, "expected.json"), C.jsonable(exp))
        C.write_json_indent(os.path.join(case_dir, "options.json"), C.jsonable(options))
        # input.json: one file, hard-linked into every case folder.
        link = os.path.join(case_dir, "input.json")
        if os.path.exists(link):
            os.remove(link)
        try:
            os.link(inp_json, link)
        except OSError:
            import shutil

            shutil.copyfile(inp_json, link)
        done.append(name)
    return {"tracking": done}
