"""sleapc.Predictions: poses as numpy arrays, read from and written to predictions files."""

from __future__ import annotations

import ctypes
import json
import os
import tempfile
from typing import Any, Optional, Sequence

import numpy as np

from ._lib import check, lib


def _nan(v: Any) -> float:
    return np.nan if v is None else v


class Predictions:
    """Poses of predicted frames, padded to the most instances in any frame.

    points          (n_frames, n_instances, n_nodes, 2) float32, (x, y); NaN = missing
    point_scores    (n_frames, n_instances, n_nodes) float32
    instance_scores (n_frames, n_instances) float32; NaN where a frame has fewer instances
    tracks          (n_frames, n_instances) int32: class / track index into track_names, -1 = none
    tracking_scores (n_frames, n_instances) float32; NaN = none
    frame_indices   (n_frames,) int64: which frame of the source each row is
    n_instances     (n_frames,) int32: instances found in each frame
    """

    def __init__(self, node_names: Sequence[str], edges, symmetries, track_names: Sequence[str],
                 skeleton_name: str, rows, frame_indices, video: Optional[dict] = None):
        self.node_names = list(node_names)
        self.edges = [tuple(e) for e in edges]
        self.symmetries = [tuple(s) for s in symmetries]
        self.track_names = list(track_names)
        self.skeleton_name = skeleton_name
        self.video = video
        n_nodes = len(self.node_names)
        n_frames = len(rows)
        width = max((len(r) for r in rows), default=0)
        self.frame_indices = np.asarray(frame_indices, dtype=np.int64).reshape(-1)
        self.n_instances = np.array([len(r) for r in rows], dtype=np.int32)
        self.points = np.full((n_frames, width, n_nodes, 2), np.nan, dtype=np.float32)
        self.point_scores = np.full((n_frames, width, n_nodes), np.nan, dtype=np.float32)
        self.instance_scores = np.full((n_frames, width), np.nan, dtype=np.float32)
        self.tracks = np.full((n_frames, width), -1, dtype=np.int32)
        self.tracking_scores = np.full((n_frames, width), np.nan, dtype=np.float32)
        for f, row in enumerate(rows):
            for i, inst in enumerate(row):
                self.points[f, i] = inst[0]
                self.point_scores[f, i] = inst[1]
                self.instance_scores[f, i] = inst[2]
                self.tracks[f, i] = inst[3]
                if len(inst) > 4:
                    self.tracking_scores[f, i] = inst[4]

    @classmethod
    def from_predictor(cls, predictor, rows, frame_indices, video=None) -> "Predictions":
        return cls(predictor.node_names, predictor.edges, predictor.symmetries,
                   predictor.class_names, predictor.skeleton_name, rows, frame_indices, video)

    def __len__(self) -> int:
        return len(self.frame_indices)

    def __repr__(self) -> str:
        return (f"<sleapc.Predictions: {len(self)} frames, {int(self.n_instances.sum())} "
                f"instances, {len(self.node_names)} nodes, {len(self.track_names)} tracks>")

    # --- files --------------------------------------------------------------------------------

    @classmethod
    def read(cls, path: "str | os.PathLike") -> "Predictions":
        """Read a predictions file: sleapc's .json, a .slp or an analysis .h5."""
        path = os.fspath(path)
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file", path)
        if path.endswith(".json"):
            return cls._read_json(path)
        with tempfile.TemporaryDirectory(prefix="sleapc-") as tmp:
            out = os.path.join(tmp, "predictions.json")
            check(lib.sleapc_predictions_convert(os.fsencode(path), os.fsencode(out)))
            return cls._read_json(out)

    @classmethod
    def _read_json(cls, path: str) -> "Predictions":
        with open(path, "rb") as f:
            doc = json.load(f)
        skel = doc["skeleton"]
        n_nodes = len(skel["nodes"])
        rows, indices = [], []
        for frame in doc["frames"]:
            row = []
            for inst in frame["instances"]:
                pts = np.array([[np.nan, np.nan] if p is None else p for p in inst["points"]],
                               dtype=np.float32).reshape(n_nodes, 2)
                scores = np.array([_nan(s) for s in inst["point_scores"]], dtype=np.float32)
                track = inst.get("track")
                row.append((pts, scores, _nan(inst.get("score")), -1 if track is None else track,
                            _nan(inst.get("tracking_score"))))
            rows.append(row)
            indices.append(frame["frame_idx"])
        videos = doc.get("videos") or [None]
        video = videos[0]
        if video is not None:
            video = {"filename": video.get("filename", ""), "n_frames": video.get("frames", 0),
                     "height": video.get("height", 0), "width": video.get("width", 0),
                     "channels": video.get("channels", 0)}
        return cls(skel["nodes"], skel.get("edges", []), skel.get("symmetries", []),
                   doc.get("tracks", []), skel.get("name", ""), rows, indices, video)

    def _json_doc(self) -> dict:
        def num(v):
            return None if np.isnan(v) else float(v)

        frames = []
        for f in range(len(self)):
            insts = []
            for i in range(int(self.n_instances[f])):
                t = int(self.tracks[f, i])
                insts.append({
                    "points": [None if np.isnan(p).any() else [float(p[0]), float(p[1])]
                               for p in self.points[f, i]],
                    "point_scores": [num(s) for s in self.point_scores[f, i]],
                    "score": num(self.instance_scores[f, i]),
                    "track": None if t < 0 else t,
                    "tracking_score": num(self.tracking_scores[f, i])})
            frames.append({"video": 0, "frame_idx": int(self.frame_indices[f]), "instances": insts})
        v = self.video or {}
        return {"format": "sleapc-predictions", "version": 1,
                "skeleton": {"name": self.skeleton_name, "nodes": self.node_names,
                             "edges": [list(e) for e in self.edges],
                             "symmetries": [list(s) for s in self.symmetries]},
                "videos": [{"filename": v.get("filename", ""), "frames": int(v.get("n_frames", 0)),
                            "height": int(v.get("height", 0)), "width": int(v.get("width", 0)),
                            "channels": int(v.get("channels", 0))}],
                "tracks": self.track_names, "frames": frames}

    def write(self, path: "str | os.PathLike") -> None:
        """Write the predictions to path: .slp, .h5 (analysis), .csv or .json, by extension."""
        path = os.fspath(path)
        with tempfile.TemporaryDirectory(prefix="sleapc-") as tmp:
            src = os.path.join(tmp, "predictions.json")
            with open(src, "w") as f:
                json.dump(self._json_doc(), f)  # float32 -> float64 -> text: exact
            if path.endswith(".json"):
                _copy(src, path)
            else:
                check(lib.sleapc_predictions_convert(os.fsencode(src), os.fsencode(path)))

    def to_labels(self):
        """The predictions as a sleap_io.Labels (needs the sleap_io package)."""
        from ._labels import to_labels
        return to_labels(self)


def _copy(src: str, dst: str) -> None:
    tmp = dst + ".tmp"
    with open(src, "rb") as f, open(tmp, "wb") as g:
        g.write(f.read())
    os.replace(tmp, dst)


lib.sleapc_predictions_convert.restype = ctypes.c_int
lib.sleapc_predictions_convert.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
