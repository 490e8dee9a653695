"""Tracking and post-inference filters with sleap-nn's option names, and sleapc.track()."""

from __future__ import annotations

import ctypes
import os
import tempfile
from typing import Any, Dict, Sequence, Tuple, Union

from ._lib import FilterOpts, TrackingOpts, check, lib
from ._predictions import Predictions

# sleap-nn's names (`sleap-nn predict --NAME`, `sleapc track --NAME`) -> the C struct and kind.
TRACKING_OPTIONS = {
    "tracking": bool, "tracking_window_size": int, "candidates_method": str,
    "min_new_track_points": int, "min_match_points": int, "features": str, "scoring_method": str,
    "scoring_reduction": str, "robust_best_instance": float, "oks_stddev": float,
    "track_matching_method": str, "max_tracks": int, "tracking_target_instance_count": int,
    "tracking_pre_cull_to_target": int, "tracking_pre_cull_iou_threshold": float,
    "tracking_clean_instance_count": int, "tracking_clean_iou_threshold": float,
    "post_connect_single_breaks": bool, "use_flow": bool, "of_img_scale": float,
    "of_window_size": int, "of_max_levels": int, "use_kalman": bool,
    # sleap-nn 0.3.5's motion trackers (tracker="sort" | "bytetrack" | "ocsort").
    "tracker": str, "track_buffer": int, "min_hits": int, "track_high_threshold": float,
    "track_low_threshold": float, "new_track_threshold": float, "min_match_similarity": float,
    "link_tracklets": bool, "appearance_threshold": str,
}
FILTER_OPTIONS = {
    "filter_overlapping": bool, "filter_overlapping_method": str,
    "filter_overlapping_threshold": float, "filter_min_visible_nodes": int,
    "filter_min_visible_node_fraction": float, "filter_min_mean_node_score": float,
    "filter_min_instance_score": float, "filter_min_centroid_distance": float,
}
# "None" means sleap-nn's unset value for these.
_UNSET = {"max_tracks": -1, "tracking_target_instance_count": -1, "oks_stddev": float("nan"),
          "track_buffer": -1, "min_hits": -1, "track_high_threshold": float("nan"),
          "track_low_threshold": float("nan"), "new_track_threshold": float("nan"),
          "min_match_similarity": float("nan")}

Opts = Tuple[TrackingOpts, FilterOpts, list]


def _convert(name: str, kind: type, value: Any) -> Any:
    if value is None:
        if name in _UNSET:
            return _UNSET[name]
        if kind is str:
            return None
        raise ValueError(f"{name}: None is not a value for this option")
    if kind is bool:
        if not isinstance(value, (bool, int)):
            raise ValueError(f"{name}: expected True or False, got {value!r}")
        return bool(value)
    if kind is str:
        if not isinstance(value, str):
            raise ValueError(f"{name}: expected a string, got {value!r}")
        return value.encode()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name}: expected {'an integer' if kind is int else 'a number'}, "
                         f"got {value!r}")
    if kind is int and value != int(value):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    return kind(value)


def tracking_opts(options: Dict[str, Any], max_instances: int = 0) -> Opts:
    """TrackingOpts and FilterOpts from sleap-nn's option names; options are consumed.

    Returns (tracking, filters, keep): keep holds the bytes the structs point into.
    """
    t = lib.sleapc_tracking_opts_default()
    f = lib.sleapc_filter_opts_default()
    keep = []
    for table, struct in ((TRACKING_OPTIONS, t), (FILTER_OPTIONS, f)):
        for name, kind in table.items():
            if name in options:
                value = _convert(name, kind, options.pop(name))
                if isinstance(value, bytes):
                    keep.append(value)
                setattr(struct, name, value)
    # mot_param=["preset=paper", "kalman=xyah"] (or one "K=V" string): --mot_param.
    mot = options.pop("mot_param", None)
    if mot is not None:
        items = [mot] if isinstance(mot, str) else list(mot)
        arr = (ctypes.c_char_p * max(len(items), 1))(*[str(v).encode() for v in items])
        keep.append(arr)
        t.mot_params = arr
        t.n_mot_params = len(items)
    t.max_instances = max_instances or 0
    check(lib.sleapc_tracking_opts_check(ctypes.byref(t), ctypes.byref(f), 0))
    return t, f, keep


def track(source: Union[str, os.PathLike, Predictions],
          output: Union[None, str, os.PathLike, Sequence[Union[str, os.PathLike]]] = None,
          *, max_instances: int = 0, **options: Any) -> Predictions:
    """Track (and filter) predictions again, as `sleapc track` / `sleap-nn track` do.

    source:  a predictions file (.slp from any producer, sleapc's .json) or a Predictions.
    output:  a file, or a list of files (.slp, .h5, .csv, .json by extension), written
             atomically; None: only returned.
    options: sleap-nn's tracking and filter options (tracking_window_size=, features=,
             scoring_method=, max_tracks=, filter_min_instance_score=, ...); tracking=True is
             implied unless tracking=False is given (filters only).
    Returns the tracked predictions, equal to what the files hold.
    """
    options.setdefault("tracking", True)
    t, f, keep = tracking_opts(options, max_instances)
    if options:
        raise TypeError(f"track: unknown option {sorted(options)[0]!r} (options: "
                        f"{', '.join(sorted({**TRACKING_OPTIONS, **FILTER_OPTIONS}))})")
    if output is None:
        outputs = []
    elif isinstance(output, (str, os.PathLike)):
        outputs = [os.fspath(output)]
    else:
        outputs = [os.fspath(o) for o in output]
    with tempfile.TemporaryDirectory(prefix="sleapc-") as tmp:
        if isinstance(source, Predictions):
            src = os.path.join(tmp, "input.json")
            source.write(src)
        else:
            src = os.fspath(source)
            if not os.path.exists(src):
                raise FileNotFoundError(2, "No such file", src)
        readback = next((o for o in outputs if o.endswith(".json")), None)
        paths = list(outputs)
        if readback is None:
            readback = os.path.join(tmp, "tracked.json")
            paths.append(readback)
        c_paths = [os.fsencode(p) for p in paths]
        arr = (ctypes.c_char_p * len(c_paths))(*c_paths)
        check(lib.sleapc_retrack(os.fsencode(src), arr, len(c_paths), ctypes.byref(t),
                                 ctypes.byref(f)))
        del keep
        return Predictions.read(readback)
