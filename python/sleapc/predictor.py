"""sleapc.Predictor: pose prediction on numpy frames and on videos."""

from __future__ import annotations

import ctypes
import math
import os
import warnings
from typing import Any, Callable, List, Optional, Sequence, Union

import numpy as np

from . import _run
from ._lib import (PIXEL_FORMATS, PROGRESS_FN, STATUS_INTERRUPTED, Frame, Results,
                   Skeleton, SleapcFileNotFoundError, check, error, lib)
from ._predictions import Predictions
from ._tracking import FILTER_OPTIONS, TRACKING_OPTIONS, tracking_opts

PathLike = Union[str, os.PathLike]
ProgressArg = Union[bool, None, Callable[[int, int, float], Any]]

# The CLI's option names (`sleapc predict --NAME`) -> the C field and a converter.
_PRECISIONS = {"fp32": 0, "bf16": 1, "fp16": 2, "bf16-emulated": 3, "bf16_emulated": 3}


def _refinement(v):
    if isinstance(v, str):
        if v not in ("integral", "none"):
            raise ValueError(f"integral_refinement: expected 'integral' or 'none', got {v!r}")
        return int(v == "integral")
    return int(bool(v))


def _precision(v):
    if v not in _PRECISIONS:
        raise ValueError(f"precision: expected one of {sorted(_PRECISIONS)}, got {v!r}")
    return _PRECISIONS[v]


def _device(v):
    """None/"auto": the fastest device measured; "cpu", "gpu[:N]", "cuda[:N]", "mps" as
    `sleapc predict --device` (a device that is not there is refused when the models load)."""
    if v in (None, "auto"):
        return None
    if not isinstance(v, str):
        raise ValueError(f"device: expected 'auto', 'cpu', 'gpu[:N]', 'cuda[:N]' or 'mps', got {v!r}")
    return v.encode()


# Which sleap-nn release to reproduce where releases differ (sleapc_compat).
_COMPATS = {None: 0, "0.3.5": 1, "0.3.3": 2}


def _compat(v):
    v = None if v is None else str(v).replace("sleap-nn==", "").replace("sleap-nn-", "")
    if v not in _COMPATS:
        raise ValueError(f"compat: expected '0.3.5' (the default) or '0.3.3', got {v!r}")
    return _COMPATS[v]


_OPTIONS = {
    "backend": ("backend", lambda v: str(v).encode()),
    "threads": ("n_threads", int),
    "batch_size": ("batch_size", int),
    "peak_threshold": ("peak_threshold", float),
    "centroid_peak_threshold": ("centroid_peak_threshold",
                                lambda v: math.nan if v is None else float(v)),
    "integral_refinement": ("integral_refinement", _refinement),
    "integral_patch_size": ("integral_patch_size", int),
    "max_instances": ("max_instances", lambda v: 0 if v is None else int(v)),
    "max_edge_length_ratio": ("max_edge_length_ratio", float),
    "dist_penalty_weight": ("dist_penalty_weight", float),
    "n_points": ("n_points", int),
    "min_instance_peaks": ("min_instance_peaks", float),
    "min_line_scores": ("min_line_scores", float),
    "crop_size": ("crop_size", lambda v: 0 if v is None else int(v)),
    "max_height": ("max_height", lambda v: 0 if v is None else int(v)),
    "max_width": ("max_width", lambda v: 0 if v is None else int(v)),
    "input_scale": ("input_scale", lambda v: 0.0 if v is None else float(v)),
    "ensure_rgb": ("ensure_rgb", lambda v: -1 if v is None else int(bool(v))),
    "ensure_grayscale": ("ensure_grayscale", lambda v: -1 if v is None else int(bool(v))),
    "precision": ("precision", _precision),
    "anchor_part": ("anchor_part", lambda v: None if v is None else str(v).encode()),
    "device": ("device", _device),
    "compat": ("compat", _compat),
}


def _runtime(v):
    if v not in (None, "auto", "onnx"):
        raise ValueError(f"runtime={v!r}: sleapc runs exported models with its own ONNX "
                         "interpreter; use 'auto' or 'onnx'")


# Accepted for parity with `sleapc predict`; it chooses nothing else in sleapc.
_CHECKED = {"runtime": _runtime}


def _existing(path) -> str:
    """path, or a FileNotFoundError (also a sleapc.SleapcError) naming it."""
    p = os.fspath(path)
    if not os.path.exists(p):
        e = SleapcFileNotFoundError("I/O error", f"{p}: No such file or directory")
        e.errno, e.filename = 2, p
        raise e
    return p


def _ptr(a, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def _as_frames(frames):
    """uint8 (N,H,W,C), (H,W,C) or (H,W) -> a packed (N,H,W,C) array, C 1 or 3."""
    a = np.asarray(frames)
    if a.dtype != np.uint8:
        raise TypeError(f"frames must be uint8, got {a.dtype}")
    if a.ndim not in (2, 3, 4):
        raise ValueError(f"frames must be (H,W), (H,W,C) or (N,H,W,C), got shape {a.shape}")
    a = a.reshape((1,) * (4 - a.ndim) + a.shape if a.ndim > 2 else (1,) + a.shape + (1,))
    if a.shape[3] not in (1, 3):
        raise ValueError(f"frames must have 1 or 3 channels, got {a.shape[3]}")
    return np.ascontiguousarray(a)


def _frame(a, fmt, row_stride=0):
    """The sleapc_frame describing (N,H,W,C) or (H,W[,C]) array a (rows at row_stride)."""
    n, h, w = (a.shape[0], a.shape[1], a.shape[2]) if a.ndim == 4 else (1, a.shape[0], a.shape[1])
    return Frame(a.ctypes.data, n, h, w, row_stride, PIXEL_FORMATS[fmt])


class Model:
    """A model folder loaded once; any number of Predictors (on any threads) share it.

    Its weights are held once and only read. It is kept alive by the Predictors made from it.
    """

    def __init__(self, path: PathLike):
        self._m = ctypes.c_void_p()
        check(lib.sleapc_model_load(os.fsencode(_existing(path)), ctypes.byref(self._m)))
        self.path = os.fspath(path)
        self.type = lib.sleapc_model_type_name(lib.sleapc_model_get_type(self._m)).decode()
        sk = Skeleton()
        check(lib.sleapc_model_skeleton(self._m, ctypes.byref(sk)))
        self.n_nodes = sk.n_nodes

    def close(self):
        """Free the model; Predictors made from it keep it until they are closed too."""
        if getattr(self, "_m", None) and not getattr(self, "_users", 0):
            lib.sleapc_model_destroy(self._m)
            self._m = None

    def __del__(self):
        self.close()


class Predictor:
    """A sleap-nn / SLEAP model (one folder, or two for top-down) ready to predict.

    model_paths: folders, or sleapc.Model objects loaded once and shared between predictors.

    Options take the names of `sleapc predict`'s options: batch_size=, peak_threshold=,
    centroid_peak_threshold=, integral_refinement= ('integral' or 'none'), integral_patch_size=,
    max_instances=, max_edge_length_ratio=, dist_penalty_weight=, n_points=,
    min_instance_peaks=, min_line_scores=, crop_size=, max_height=, max_width=, input_scale=,
    ensure_rgb=, ensure_grayscale=, anchor_part=, backend=, threads=, precision= ('fp32',
    'bf16' or 'bf16-emulated'), device= ('cpu' or 'auto'), runtime= ('auto' or 'onnx'),
    centroid_only= (with both top-down folders: the centroid model alone).
    Errors are ValueError (bad options, unreadable models), FileNotFoundError, ...
    """

    def __init__(self, model_paths: Union[PathLike, "Model", Sequence[Union[PathLike, "Model"]]],
                 centroid_only: bool = False, **options: Any):
        if isinstance(model_paths, (str, os.PathLike, Model)):
            model_paths = [model_paths]
        model_paths = list(model_paths)
        if centroid_only:
            model_paths = _centroid_model(model_paths)
        opts = lib.sleapc_predictor_opts_default()
        # Kept for the predictor's lifetime: the C struct points into them.
        self._keep = []
        self.max_instances = 0
        for name, value in options.items():
            if name in _CHECKED:
                _CHECKED[name](value)
                continue
            if name not in _OPTIONS:
                hint = (" (a tracking option: give it to predict_video or sleapc.predict)"
                        if name in TRACKING_OPTIONS or name in FILTER_OPTIONS else "")
                raise TypeError(f"Predictor: unknown option {name!r}{hint} (options: "
                                f"{', '.join(sorted([*_OPTIONS, *_CHECKED]))})")
            field, convert = _OPTIONS[name]
            converted = convert(value)
            if isinstance(converted, bytes):
                self._keep.append(converted)
            setattr(opts, field, converted)
        self.max_instances = opts.max_instances
        self._compat = opts.compat
        self._p = ctypes.c_void_p()
        self._models = [m for m in model_paths if isinstance(m, Model)]
        if self._models:
            if len(self._models) != len(model_paths):
                raise TypeError("Predictor: give model folders or sleapc.Model objects, not both")
            if any(not m._m for m in self._models):
                raise ValueError("Predictor: a sleapc.Model is closed")
            c_models = (ctypes.c_void_p * len(self._models))(*[m._m for m in self._models])
            check(lib.sleapc_predictor_create_from_models(c_models, len(self._models),
                                                          ctypes.byref(opts),
                                                          ctypes.byref(self._p)))
            for m in self._models:
                m._users = getattr(m, "_users", 0) + 1
        else:
            paths = [os.fsencode(_existing(p)) for p in model_paths]
            self._keep.extend(paths)
            c_paths = (ctypes.c_char_p * len(paths))(*paths)
            check(lib.sleapc_predictor_create(c_paths, len(paths), ctypes.byref(opts),
                                              ctypes.byref(self._p)))
        p = self._p
        self.layer_name = lib.sleapc_predictor_layer_name(p).decode()
        sk = Skeleton()
        check(lib.sleapc_predictor_skeleton(p, ctypes.byref(sk)))
        sk = sk.as_dict()
        self.skeleton_name = sk["name"]
        self.node_names = sk["node_names"]
        self.edges = sk["edges"]
        self.symmetries = sk["symmetries"]
        self.class_names = sk["class_names"]
        self.batch_size = lib.sleapc_predictor_batch_size(p)

    def close(self):
        if getattr(self, "_stream", None):
            lib.sleapc_stream_destroy(self._stream)
            self._stream = None
        if getattr(self, "_p", None):
            lib.sleapc_predictor_destroy(self._p)
            self._p = None
            for m in getattr(self, "_models", []):
                m._users -= 1
            self._models = []

    def warmup(self, height, width, channels=1, n_frames=0):
        """Build plans and buffers for frames of this size so the first real one is not slow.

        n_frames: frames a call will carry (0: the batch size; 1 for predict_frame).
        Nothing of the warm-up pass is kept in the results.
        """
        if not self._p:
            raise ValueError("Predictor is closed")
        check(lib.sleapc_predictor_warmup(self._p, n_frames, height, width, channels))

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _collect(self):
        """The instances of the predictor's last run, one list per frame."""
        n_nodes = len(self.node_names)
        rows = []
        got = ctypes.c_int()
        for f in range(lib.sleapc_predictor_n_frames(self._p)):
            check(lib.sleapc_predictor_frame_results(self._p, f, None, ctypes.byref(got)))
            n = got.value
            pts = np.empty((n, n_nodes, 2), np.float32)
            scores = np.empty((n, n_nodes), np.float32)
            inst_scores = np.empty(n, np.float32)
            tracks = np.empty(n, np.int32)
            out = Results(max_instances=n, points=_ptr(pts, ctypes.c_float),
                          point_scores=_ptr(scores, ctypes.c_float),
                          scores=_ptr(inst_scores, ctypes.c_float),
                          tracks=_ptr(tracks, ctypes.c_int))
            check(lib.sleapc_predictor_frame_results(self._p, f, ctypes.byref(out),
                                                     ctypes.byref(got)))
            rows.append([(pts[i], scores[i], inst_scores[i], tracks[i]) for i in range(n)])
        return rows

    def predict(self, frames, pixel_format=None) -> Predictions:
        """Predict uint8 frames (N,H,W,C), (H,W,C) or (H,W), C 1 or 3 -> Predictions.

        pixel_format: "rgb" (default for 3 channels), "bgr" (OpenCV) or "gray".
        Ctrl-C stops after the current batch and raises sleapc.Interrupted with the frames done.
        """
        if not self._p:
            raise ValueError("Predictor is closed")
        a = _as_frames(frames)
        fmt = pixel_format or ("gray" if a.shape[3] == 1 else "rgb")
        if fmt not in PIXEL_FORMATS or (fmt == "gray") != (a.shape[3] == 1):
            raise ValueError(f"pixel_format {fmt!r} does not fit frames of shape {a.shape}")
        f = _frame(a, fmt)
        stop = ctypes.c_int(0)
        with _run.StopOnSigint(stop) as sigint, _run.AbortOn(stop):
            st = lib.sleapc_predictor_run(self._p, ctypes.byref(f))
        if st not in (0, STATUS_INTERRUPTED):
            raise error(st)
        rows = self._collect()
        pred = Predictions.from_predictor(self, rows, np.arange(len(rows)))
        if st == STATUS_INTERRUPTED or sigint.hit:
            raise _run.Interrupted(f"interrupted after {len(rows)} frames", pred)
        return pred

    def predict_frame(self, frame, pixel_format=None):
        """Predict one camera frame for real-time use -> Predictions of one frame.

        frame: uint8 (H, W) gray or (H, W, 3), rows may be padded (e.g. a view into a larger
        buffer); pixel_format: "rgb" (default for 3 channels), "bgr" (OpenCV) or "gray".
        The call's duration in ms is in `last_timing` afterwards (total_ms, convert_ms).
        """
        if not self._p:
            raise ValueError("Predictor is closed")
        a = np.asarray(frame)
        if a.dtype != np.uint8:
            raise TypeError(f"frame must be uint8, got {a.dtype}")
        if a.ndim == 3 and a.shape[2] == 1:
            a = a[:, :, 0]
        if a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] != 3):
            raise ValueError(f"frame must be (H,W) or (H,W,3), got shape {a.shape}")
        fmt = pixel_format or ("gray" if a.ndim == 2 else "rgb")
        if fmt not in PIXEL_FORMATS or (fmt == "gray") != (a.ndim == 2):
            raise ValueError(f"pixel_format {fmt!r} does not fit a frame of shape {a.shape}")
        pixel_bytes = 1 if a.ndim == 2 else 3
        if a.strides[-1] != 1 or (a.ndim == 3 and a.strides[1] != 3) or a.strides[0] < 0:
            a = np.ascontiguousarray(a)  # only rows may be strided
        if not getattr(self, "_stream", None):
            self._stream = ctypes.c_void_p()
            check(lib.sleapc_stream_create(self._p, ctypes.byref(self._stream)))
        f = _frame(a, fmt, max(a.strides[0], a.shape[1] * pixel_bytes))
        check(lib.sleapc_stream_predict(self._stream, ctypes.byref(f), None))
        t = lib.sleapc_stream_last_timing(self._stream)
        self.last_timing = {"total_ms": t.total_ms, "convert_ms": t.convert_ms}
        return Predictions.from_predictor(self, self._collect(), np.arange(1))

    def predict_video(self, path: PathLike, output: Optional[PathLike] = None, frames=None,
                      progress: ProgressArg = True, video_index: Optional[int] = None, *,
                      output_format: Union[None, str, Sequence[str]] = None,
                      output_dir: Optional[PathLike] = None, no_empty_frames: bool = False,
                      only_labeled_frames: bool = False, only_suggested_frames: bool = False,
                      exclude_user_labeled: bool = False, only_predicted_frames: bool = False,
                      queue_maxsize: Optional[int] = None, shard=None,
                      **tracking: Any) -> Predictions:
        """Predict a video (or any input `sleapc predict -i` takes) -> Predictions.

        output:   a predictions file written as the CLI writes it (.slp, .h5, .csv, .json).
        output_format: "slp", "analysis_h5", "csv", "json" (a list or comma-separated): several
                  files in one run, named after output (or the input) as the CLI names them;
                  output_dir: put them there. Without output, output_format and output_dir
                  nothing is written (the CLI would write INPUT.slp).
        path may also be a live source: "-" (standard input), a stream URL (rtsp://, http://,
        udp://, ...), a named pipe or a camera; its frames are read once as they come (total 0).
        frames:   frame indices, or a string like "0-99,150" (default: every frame; a labels
                  file's labeled frames); only_labeled_frames= and the like pick frames of a
                  .slp as sleap-nn does; shard=(k, n): the k-th of n equal ranges.
        tracking: tracking=True and sleap-nn's tracking and filter options (tracking_window_size=,
                  max_tracks=, filter_min_instance_score=, ...): the returned predictions and
                  the files are tracked alike, as `sleapc predict -t` tracks them.
        progress: True (default): a tqdm bar if tqdm is importable, else a line on stderr;
                  False: none; a function: called as progress(done, total, fps) after every
                  batch, and an exception raised in it stops the run after that batch (the
                  outputs keep the frames done) and is raised again here.
        Ctrl-C stops after the current batch: the outputs are written with the frames done and
        sleapc.Interrupted (a KeyboardInterrupt) is raised, its .predictions equal to them.
        """
        if not self._p:
            raise ValueError("Predictor is closed")
        path = os.fspath(path)
        t, f, keep = tracking_opts(tracking, self.max_instances)
        t.compat = self._compat
        if tracking:
            raise TypeError(f"predict_video: unknown option {sorted(tracking)[0]!r}")
        filtered = any(getattr(f, n) != getattr(lib.sleapc_filter_opts_default(), n)
                       for n, _ in f._fields_)
        if not lib.sleapc_input_path_is_live(os.fsencode(path)):
            _existing(path)
        inp = ctypes.c_void_p()
        check(lib.sleapc_input_open_compat(os.fsencode(path), video_index or 0, self._compat,
                                           ctypes.byref(inp)))
        writers: List[ctypes.c_void_p] = []
        try:
            return self._predict_input(path, inp, writers, output, frames, progress, video_index,
                                       output_format, output_dir, no_empty_frames,
                                       {"only_labeled_frames": only_labeled_frames,
                                        "only_suggested_frames": only_suggested_frames,
                                        "exclude_user_labeled": exclude_user_labeled,
                                        "only_predicted_frames": only_predicted_frames},
                                       queue_maxsize, shard, t, f, t.tracking or filtered)
        finally:
            for w in writers:
                if w:
                    lib.sleapc_writer_discard(w)
            lib.sleapc_input_close(inp)
            del keep

    def _predict_input(self, path, inp, writers, output, frames, progress, video_index,
                       output_format, output_dir, no_empty_frames, label_flags, queue_maxsize,
                       shard, t, f, postprocess):
        live = lib.sleapc_input_is_live(inp)
        info = lib.sleapc_input_video_info(inp)
        video = {"filename": info.filename.decode(errors="replace"),
                 "n_frames": info.n_frames, "height": info.height, "width": info.width,
                 "channels": info.channels}
        if live:
            if frames is not None or shard is not None:
                raise ValueError(f"{path}: a live source is read once in order; frames "
                                 "cannot be picked")
            indices = None
        else:
            indices = self._pick_frames(path, inp, frames, video_index, label_flags)
            indices = _run.shard_frames(indices, shard)
        scoped = None
        if video_index is not None and path.endswith(".slp"):
            base = os.path.basename(video["filename"] or "video")
            scoped = base.rsplit(".", 1)[0] if "." in base[1:] else base
        outputs = _run.output_paths(path, output, output_format, output_dir, scoped)
        if live and not outputs and postprocess:
            raise ValueError(f"{path}: tracking a live source needs an output file")
        # Tracked or filtered results are read back from the JSON the library writes, so that
        # what is returned is what the files hold.
        readback = None
        tmpdir = None
        if postprocess:
            readback = next((o for o in outputs if o.endswith(".json")), None)
            if readback is None:
                import tempfile
                tmpdir = tempfile.TemporaryDirectory(prefix="sleapc-")
                readback = os.path.join(tmpdir.name, "predictions.json")
        try:
            paths = outputs + ([readback] if readback and readback not in outputs else [])
            for out in paths:
                w = ctypes.c_void_p()
                check(lib.sleapc_writer_open(os.fsencode(out), self._p, ctypes.byref(info), 1,
                                             ctypes.byref(w)))
                writers.append(w)
                check(lib.sleapc_writer_set_tracking(w, ctypes.byref(t), ctypes.byref(f)))
                if no_empty_frames:
                    check(lib.sleapc_writer_set_drop_empty(w, True))
            rows, st, raised, hit = self._run(path, inp, indices, writers, progress,
                                              queue_maxsize)
            done = len(rows)
            if st not in (0, STATUS_INTERRUPTED):
                raise error(st)
            for i, w in enumerate(writers):
                writers[i] = ctypes.c_void_p()
                check(lib.sleapc_writer_close(w, None))
            if readback:
                pred = Predictions.read(readback)
                pred.video = video
            else:
                got = np.arange(done, dtype=np.int64) if live else indices[:done]
                if no_empty_frames:
                    keep = [k for k, r in enumerate(rows) if r]
                    rows, got = [rows[k] for k in keep], got[keep]
                pred = Predictions.from_predictor(self, rows, got, video)
        finally:
            if tmpdir is not None:
                tmpdir.cleanup()
        if raised:
            raise raised[0]
        if hit or st == STATUS_INTERRUPTED:
            where = f"; they are in {', '.join(outputs)}" if outputs else ""
            raise _run.Interrupted(f"interrupted after {done} frames{where}", pred, outputs)
        return pred

    def _pick_frames(self, path, inp, frames, video_index, label_flags):
        n_all = lib.sleapc_input_n_frames(inp)
        if (video_index is not None and path.endswith(".slp")
                and self._compat != _COMPATS["0.3.3"]):
            # sleap-nn 0.3.5 (#762): the whole video (or frames), less the user-labelled
            # frames with exclude_user_labeled; the other label filters do not apply.
            picked = (_run.parse_frames(frames, n_all) if frames is not None
                      else np.arange(n_all, dtype=np.int64))
            if label_flags.get("exclude_user_labeled"):
                user = _run.label_filter(path, video_index, {"only_labeled_frames": True})
                picked = picked[~np.isin(picked, user)]
            return np.ascontiguousarray(picked, dtype=np.int64)
        video_index = video_index or 0
        sel = _run.label_filter(path, video_index, label_flags)
        if (frames is not None and path.endswith(".slp")
                and self._compat != _COMPATS["0.3.3"]):
            # sleap-nn 0.3.5: positions in the labeled-frame list, ignored beside a filter.
            if sel is not None:
                warnings.warn(f"{path}: frames does not apply together with a frame filter "
                              "(sleap-nn 0.3.5 ignores it)", stacklevel=3)
                return sel
            return _run.label_positions(path, video_index, _run.parse_frames(frames, 0))
        if frames is not None:
            picked = _run.parse_frames(frames, n_all)
            if sel is not None:
                picked = picked[np.isin(picked, sel)]
            return np.ascontiguousarray(picked)
        if sel is not None:
            return sel
        n = lib.sleapc_input_n_default_frames(inp)
        ptr = lib.sleapc_input_default_frames(inp)
        return np.ctypeslib.as_array(ptr, (n,)).copy() if n else np.zeros(0, np.int64)

    def _run(self, path, inp, indices, writers, progress, queue_maxsize):
        """Predict, batch by batch into rows and every writer; Ctrl-C stops after a batch."""
        rows = []
        stop = ctypes.c_int(0)
        raised = []
        shown = _run.Progress(progress, os.path.basename(path.rstrip("/")) or path)
        state = {"done": 0}

        def on_batch(pr, user):
            try:
                batch = self._collect()
                done = state["done"]
                if indices is None:
                    numbers = np.arange(done, done + len(batch), dtype=np.int64)
                else:
                    numbers = np.ascontiguousarray(indices[done:done + len(batch)])
                for w in writers:
                    check(lib.sleapc_writer_add(w, self._p, 0, numbers.ctypes.data_as(
                        ctypes.POINTER(ctypes.c_int64))))
                rows.extend(batch)
                state["done"] = done + len(batch)
                shown.update(pr.contents.done, pr.contents.total, pr.contents.fps)
            except BaseException as e:  # noqa: B902 - re-raised after the C call
                raised.append(e)
                stop.value = 1

        callback = PROGRESS_FN(on_batch)
        run = lib.sleapc_run_opts_default()
        run.progress = callback
        if queue_maxsize:
            run.queue_depth = max(1, -(-int(queue_maxsize) // max(1, self.batch_size)))
        with _run.StopOnSigint(stop) as sigint, _run.AbortOn(stop):
            try:
                if indices is None:
                    st = lib.sleapc_predict_input(self._p, inp, None, 0, None, ctypes.byref(run))
                else:
                    st = lib.sleapc_predict_input(self._p, inp, indices.ctypes.data_as(
                        ctypes.POINTER(ctypes.c_int64)), len(indices), None, ctypes.byref(run))
            finally:
                shown.close()
        return rows, st, raised, sigint.hit


def _centroid_model(model_paths):
    """centroid_only: the centroid model of the folders given, as `--centroid_only` keeps it."""
    for m in model_paths:
        model = m if isinstance(m, Model) else Model(m)
        if model.type == "centroid":
            return [m]
    raise ValueError("centroid_only: none of the models is a centroid model")


def predict(model_paths, data_path: Union[PathLike, Sequence[PathLike]],
            output_path: Optional[PathLike] = None, **options: Any):
    """`sleapc predict` from Python: every option of the command, by its name.

    model_paths: one or two model folders (or sleapc.Model objects).
    data_path:   an input (video, images, .npy, .slp, live source, a folder of videos, a .txt
                 list of inputs) or a list of them; several inputs return a list of
                 Predictions, one per input.
    output_path: as -o; output_format=, output_dir=, frames=, tracking=True, the tracking
                 options, batch_size=, backend=, precision=, device=, ... as predict's options;
                 quiet=True: no progress; verbose=True: what the library reports (the backends
                 it chose, ...) on stderr.
    """
    run_names = {"output_format", "output_dir", "no_empty_frames", "only_labeled_frames",
                 "only_suggested_frames", "exclude_user_labeled", "only_predicted_frames",
                 "queue_maxsize", "shard", "frames", "progress", "video_index",
                 *TRACKING_OPTIONS, *FILTER_OPTIONS}
    run_opts = {k: options.pop(k) for k in list(options) if k in run_names}
    if options.pop("quiet", False):
        run_opts["progress"] = False
    with _run.LibraryLog(options.pop("verbose", False)):
        return _predict(model_paths, data_path, output_path, options, run_opts)


def _predict(model_paths, data_path, output_path, options, run_opts):
    single = isinstance(data_path, (str, os.PathLike))
    given = [data_path] if single else list(data_path)
    inputs = _run.expand_inputs([os.fspath(p) for p in given])
    several = not single or inputs != [os.fspath(data_path)]
    if several and output_path is not None and len(inputs) > 1:
        raise ValueError(f"predict: output_path names one file but there are {len(inputs)} "
                         "inputs; leave it out (each output goes next to its input) or use "
                         "output_dir")
    with Predictor(model_paths, **options) as predictor:
        results = [predictor.predict_video(p, output_path, **run_opts) for p in inputs]
    return results if several else results[0]


def read_frames(path, indices=None, compat=None):
    """Frames of a video (or an image, a folder of images, a .npy) as uint8 (N,H,W,C).

    compat: None or "0.3.5" decodes as sleap-io 0.9.5 does; "0.3.3" as the sleap-nn
    0.3.3 reference frames were decoded (BT.601 forced)."""
    v = ctypes.c_void_p()
    check(lib.sleapc_video_open_compat(os.fsencode(path), _compat(compat), ctypes.byref(v)))
    try:
        h, w, c = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        lib.sleapc_video_shape(v, ctypes.byref(h), ctypes.byref(w), ctypes.byref(c))
        if indices is None:
            indices = range(lib.sleapc_video_n_frames(v))
        indices = list(indices)
        out = np.empty((len(indices), h.value, w.value, c.value), dtype=np.uint8)
        for k, idx in enumerate(indices):
            check(lib.sleapc_video_read(v, int(idx), out[k].ctypes.data_as(ctypes.c_void_p)))
        return out
    finally:
        lib.sleapc_video_close(v)
