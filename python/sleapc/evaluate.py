"""Evaluation against ground-truth labels, as `sleapc eval` and `sleapc eval-tracking` do.

    import sleapc
    m = sleapc.evaluate("labels.slp", "predictions.slp")      # sleap-nn eval's metrics dict
    m["voc_metrics"]["oks_voc.mAP"], m["mOKS"]["mOKS"]
    t = sleapc.evaluate_tracking("labels.slp", "tracked.slp")  # IDF1, ID switches, MOTA, ...
"""

import ctypes
import json
import math

from ._lib import check, check_layout, lib

try:
    import numpy as _np
except ImportError:  # dicts then hold plain lists
    _np = None


class EvalOpts(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32),
                ("oks_stddev", ctypes.c_double), ("oks_scale", ctypes.c_double),
                ("match_threshold", ctypes.c_double), ("user_labels_only", ctypes.c_bool),
                ("match_method", ctypes.c_char_p), ("anchor_part", ctypes.c_char_p),
                ("compat", ctypes.c_int), ("centroid_method", ctypes.c_char_p),
                ("centroid_fallback", ctypes.c_char_p), ("bbox_source", ctypes.c_char_p),
                ("bbox_padding", ctypes.c_double)]


class EvalTrackingOpts(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32),
                ("match", ctypes.c_char_p), ("match_threshold", ctypes.c_double),
                ("oks_stddev", ctypes.c_double), ("compat", ctypes.c_int),
                ("carrier", ctypes.c_char_p), ("mt_threshold", ctypes.c_double),
                ("ml_threshold", ctypes.c_double), ("user_labels_only", ctypes.c_bool),
                ("global_identity", ctypes.c_bool)]


check_layout(EvalOpts, "sleapc_eval_opts")
check_layout(EvalTrackingOpts, "sleapc_eval_tracking_opts")


_P = ctypes.c_void_p
for _name, (_res, _args) in {
    "sleapc_eval_opts_default": (EvalOpts, []),
    "sleapc_eval_run": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.POINTER(EvalOpts), ctypes.POINTER(_P)]),
    "sleapc_eval_has_metrics": (ctypes.c_bool, [_P]),
    "sleapc_eval_metrics_json": (ctypes.c_char_p, [_P]),
    "sleapc_eval_save": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "sleapc_eval_report": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "sleapc_eval_destroy": (None, [_P]),
    "sleapc_eval_tracking_opts_default": (EvalTrackingOpts, []),
    "sleapc_eval_tracking_run": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p,
                                                ctypes.POINTER(EvalTrackingOpts),
                                                ctypes.POINTER(_P)]),
    "sleapc_eval_tracking_json": (ctypes.c_char_p, [_P]),
    "sleapc_eval_tracking_save": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "sleapc_eval_tracking_report": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "sleapc_eval_tracking_destroy": (None, [_P]),
}.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args

# sleap-nn keeps these as Python lists; every other list is a numpy array there.
_LISTS = {"frame_idxs", "video_paths", "categories"}
_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _value(key, v):
    if isinstance(v, dict):
        return {k: _value(k, x) for k, x in v.items()}
    if isinstance(v, list):
        items = _plain(v)
        if key in _LISTS or _np is None:
            return items
        return _np.array(items, dtype=bool if items and _all_bool(items) else float)
    return _plain(v)


def _plain(v):
    """Nested lists with "nan" / "inf" / "-inf" read back as floats."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, str) and v in _SPECIAL:
        return _SPECIAL[v]
    return v


def _all_bool(items):
    for x in items:
        if isinstance(x, list):
            if not _all_bool(x):
                return False
        elif not isinstance(x, bool):
            return False
    return True


def _path(p):
    return p.encode() if isinstance(p, str) else bytes(p)


def evaluate(ground_truth, predictions, *, oks_stddev=0.025, oks_scale=None, match_threshold=0.0,
             user_labels_only=True, match_method="auto", anchor_part=None, save_metrics=None,
             report=None, bbox_source="auto", bbox_padding=0.0):
    """sleap-nn eval's metrics of `predictions` against `ground_truth` (label files: .slp,
    .pkg.slp, or sleapc's predictions .json), with sleap-nn's options and defaults.

    Returns sleap-nn's metrics dict (voc_metrics, mOKS, distance_metrics, pck_metrics,
    visibility_metrics; in centroid mode detection_metrics and distance_metrics; in bbox mode,
    for box detectors' predictions, bbox_mAP, bbox_AP50, ... and pr_curve, GT boxes from
    bbox_source with bbox_padding), arrays as numpy arrays, or None when the predictions hold
    no instance (bbox mode: no box; sleap-nn computes nothing then). save_metrics: also
    write them (.json, or .npz as sleap-nn saves them); report: an HTML page. Raises
    SleapcError (e.g. "Empty Frame Pairs") on bad input."""
    o = lib.sleapc_eval_opts_default()
    o.oks_stddev = oks_stddev
    o.oks_scale = math.nan if oks_scale is None else float(oks_scale)
    o.match_threshold = match_threshold
    o.user_labels_only = bool(user_labels_only)
    o.match_method = match_method.encode()
    o.anchor_part = anchor_part.encode() if anchor_part else None
    o.bbox_source = bbox_source.encode()
    o.bbox_padding = float(bbox_padding)
    ev = _P()
    check(lib.sleapc_eval_run(_path(ground_truth), _path(predictions), ctypes.byref(o),
                              ctypes.byref(ev)))
    try:
        if save_metrics:
            check(lib.sleapc_eval_save(ev, _path(save_metrics)))
        if report:
            check(lib.sleapc_eval_report(ev, _path(report)))
        if not lib.sleapc_eval_has_metrics(ev):
            return None
        text = lib.sleapc_eval_metrics_json(ev)
        if text is None:
            raise MemoryError("sleapc: out of memory")
        return _value(None, json.loads(text.decode()))
    finally:
        lib.sleapc_eval_destroy(ev)


def evaluate_tracking(ground_truth, predictions, *, match=None, match_threshold=None,
                      oks_stddev=0.025, save_metrics=None, report=None, compat=None):
    """Identity quality of the tracks in `predictions` against those of `ground_truth`.

    By default (compat None or "0.3.5") as sleap-nn 0.3.5's eval-tracking scores them:
    instances pair up per frame by OKS (at least match_threshold, 0.5 by default; centroid
    distance for one-node skeletons); the dict holds the identity block (idf1, id_switches,
    ...) and the TrackEval-style "mot" block (MOTA, HOTA, DetA, AssA, ...).
    compat="0.3.3" gives sleapc's earlier table: the mean distance over the nodes both
    skeletons name (match="distance", at most match_threshold px, 50 by default) or OKS
    (match="oks"), against the ground truth's user instances."""
    from .predictor import _compat

    o = lib.sleapc_eval_tracking_opts_default()
    o.compat = _compat(compat)
    if match is not None:
        o.match = match.encode()
    o.match_threshold = math.nan if match_threshold is None else float(match_threshold)
    o.oks_stddev = oks_stddev
    et = _P()
    check(lib.sleapc_eval_tracking_run(_path(ground_truth), _path(predictions), ctypes.byref(o),
                                       ctypes.byref(et)))
    try:
        if save_metrics:
            check(lib.sleapc_eval_tracking_save(et, _path(save_metrics)))
        if report:
            check(lib.sleapc_eval_tracking_report(et, _path(report)))
        text = lib.sleapc_eval_tracking_json(et)
        if text is None:
            raise MemoryError("sleapc: out of memory")
        return _value(None, json.loads(text.decode()))
    finally:
        lib.sleapc_eval_tracking_destroy(et)
