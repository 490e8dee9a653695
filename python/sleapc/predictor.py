"""sleapc.Predictor: pose prediction on numpy frames and on videos."""

import ctypes
import math
import os

import numpy as np

from ._lib import (DTYPE_U8, PIXEL_FORMATS, PROGRESS_FN, STATUS_INTERRUPTED, Frame, RunOpts, Tensor,
                   check, lib)

# The CLI's option names (`sleapc predict --NAME`) -> the C field and a converter.
_PRECISIONS = {"fp32": 0, "bf16": 1}


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
}


class Predictions:
    """Poses of predicted frames, padded to the most instances in any frame.

    points          (n_frames, n_instances, n_nodes, 2) float32, (x, y); NaN = missing
    point_scores    (n_frames, n_instances, n_nodes) float32
    instance_scores (n_frames, n_instances) float32; NaN where a frame has fewer instances
    tracks          (n_frames, n_instances) int32: class / track index, -1 = none
    frame_indices   (n_frames,) int64: which frame of the source each row is
    n_instances     (n_frames,) int32: instances found in each frame
    """

    def __init__(self, predictor, rows, frame_indices, video=None):
        self.node_names = predictor.node_names
        self.edges = predictor.edges
        self.symmetries = predictor.symmetries
        self.track_names = predictor.class_names
        self.skeleton_name = predictor.skeleton_name
        self.video = video
        n_nodes = len(self.node_names)
        n_frames = len(rows)
        width = max((len(r) for r in rows), default=0)
        self.frame_indices = np.asarray(frame_indices, dtype=np.int64)
        self.n_instances = np.array([len(r) for r in rows], dtype=np.int32)
        self.points = np.full((n_frames, width, n_nodes, 2), np.nan, dtype=np.float32)
        self.point_scores = np.full((n_frames, width, n_nodes), np.nan, dtype=np.float32)
        self.instance_scores = np.full((n_frames, width), np.nan, dtype=np.float32)
        self.tracks = np.full((n_frames, width), -1, dtype=np.int32)
        for f, row in enumerate(rows):
            for i, (pts, scores, score, track) in enumerate(row):
                self.points[f, i] = pts
                self.point_scores[f, i] = scores
                self.instance_scores[f, i] = score
                self.tracks[f, i] = track

    def __len__(self):
        return len(self.frame_indices)

    def to_labels(self):
        """The predictions as a sleap_io.Labels (needs the sleap_io package)."""
        from ._labels import to_labels
        return to_labels(self)


def _ptr(a, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def _as_frames(frames):
    a = np.asarray(frames)
    if a.dtype != np.uint8:
        raise TypeError(f"frames must be uint8, got {a.dtype}")
    if a.ndim not in (2, 3, 4):
        raise ValueError(f"frames must be (H,W), (H,W,C) or (N,H,W,C), got shape {a.shape}")
    return np.ascontiguousarray(a)


class Model:
    """A model folder loaded once; any number of Predictors (on any threads) share it.

    Its weights are held once and only read. It is kept alive by the Predictors made from it.
    """

    def __init__(self, path):
        self._m = ctypes.c_void_p()
        check(lib.sleapc_model_load(os.fsencode(path), ctypes.byref(self._m)))
        self.path = os.fspath(path)
        self.type = lib.sleapc_model_type_name(lib.sleapc_model_get_type(self._m)).decode()
        self.n_nodes = lib.sleapc_model_n_nodes(self._m)

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
    ensure_rgb=, ensure_grayscale=, backend=, threads=, precision= ('fp32' or 'bf16').
    """

    def __init__(self, model_paths, **options):
        if isinstance(model_paths, (str, os.PathLike)):
            model_paths = [model_paths]
        opts = lib.sleapc_predictor_opts_default()
        # Kept for the predictor's lifetime: the C struct points into them.
        self._keep = []
        for name, value in options.items():
            if name not in _OPTIONS:
                raise TypeError(f"Predictor: unknown option {name!r} (options: "
                                f"{', '.join(sorted(_OPTIONS))})")
            field, convert = _OPTIONS[name]
            converted = convert(value)
            if isinstance(converted, bytes):
                self._keep.append(converted)
            setattr(opts, field, converted)
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
            paths = [os.fsencode(p) for p in model_paths]
            self._keep.extend(paths)
            c_paths = (ctypes.c_char_p * len(paths))(*paths)
            check(lib.sleapc_predictor_create(c_paths, len(paths), ctypes.byref(opts),
                                              ctypes.byref(self._p)))
        p = self._p
        self.layer_name = lib.sleapc_predictor_layer_name(p).decode()
        self.skeleton_name = lib.sleapc_predictor_skeleton_name(p).decode()
        self.node_names = [lib.sleapc_predictor_node_name(p, i).decode()
                           for i in range(lib.sleapc_predictor_n_nodes(p))]
        self.edges = [self._pair(lib.sleapc_predictor_edge, i)
                      for i in range(lib.sleapc_predictor_n_edges(p))]
        self.symmetries = [self._pair(lib.sleapc_predictor_symmetry, i)
                           for i in range(lib.sleapc_predictor_n_symmetries(p))]
        self.class_names = [lib.sleapc_predictor_class_name(p, i).decode()
                            for i in range(lib.sleapc_predictor_n_classes(p))]
        self.batch_size = lib.sleapc_predictor_batch_size(p)

    def _pair(self, fn, i):
        a, b = ctypes.c_int(), ctypes.c_int()
        fn(self._p, i, ctypes.byref(a), ctypes.byref(b))
        return (a.value, b.value)

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
            n = lib.sleapc_predictor_n_instances(self._p, f)
            pts = np.empty((n, n_nodes, 2), np.float32)
            scores = np.empty((n, n_nodes), np.float32)
            inst_scores = np.empty(n, np.float32)
            tracks = np.empty(n, np.int32)
            check(lib.sleapc_predictor_frame_results(
                self._p, f, n, _ptr(pts, ctypes.c_float), _ptr(scores, ctypes.c_float),
                _ptr(inst_scores, ctypes.c_float), _ptr(tracks, ctypes.c_int), ctypes.byref(got)))
            rows.append([(pts[i], scores[i], inst_scores[i], tracks[i]) for i in range(n)])
        return rows

    def predict(self, frames):
        """Predict uint8 frames (N,H,W,C), (H,W,C) or (H,W), C 1 or 3 (RGB) -> Predictions."""
        if not self._p:
            raise ValueError("Predictor is closed")
        a = _as_frames(frames)
        t = Tensor(DTYPE_U8, a.ndim, (ctypes.c_int64 * 6)(*a.shape),
                   a.ctypes.data_as(ctypes.c_void_p))
        check(lib.sleapc_predictor_run(self._p, ctypes.byref(t)))
        n = a.shape[0] if a.ndim == 4 else 1
        return Predictions(self, self._collect(), np.arange(n))

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
        f = Frame(a.ctypes.data, a.shape[0], a.shape[1], max(a.strides[0], a.shape[1] * pixel_bytes),
                  PIXEL_FORMATS[fmt])
        check(lib.sleapc_stream_predict(self._stream, ctypes.byref(f), None))
        t = lib.sleapc_stream_last_timing(self._stream)
        self.last_timing = {"total_ms": t.total_ms, "convert_ms": t.convert_ms}
        return Predictions(self, self._collect(), np.arange(1))

    def predict_video(self, path, output=None, frames=None, progress=None, video_index=0):
        """Predict a video (or any input `sleapc predict -i` takes) -> Predictions.

        output:   a predictions file written as the CLI writes it (.slp, .h5, .csv, .json).
        path may also be a live source: "-" (standard input), a stream URL (rtsp://, http://,
        udp://, ...), a named pipe or a camera; its frames are read once as they come (total 0).
        frames:   frame indices (default: every frame; a labels file's labeled frames).
        progress: called as progress(done, total, fps) after every batch; an exception raised
                  in it stops the run after that batch (output keeps the frames done) and is
                  raised again here.
        Ctrl-C stops after the current batch; output then holds the frames done so far.
        """
        if not self._p:
            raise ValueError("Predictor is closed")
        inp = ctypes.c_void_p()
        check(lib.sleapc_input_open(os.fsencode(path), video_index, ctypes.byref(inp)))
        writer = ctypes.c_void_p()
        try:
            live = lib.sleapc_input_is_live(inp)
            if live:
                if frames is not None:
                    raise ValueError(f"{path}: a live source is read once in order; frames "
                                     "cannot be picked")
                indices = None
            elif frames is None:
                n = lib.sleapc_input_n_default_frames(inp)
                ptr = lib.sleapc_input_default_frames(inp)
                indices = np.ctypeslib.as_array(ptr, (n,)).copy() if n else np.zeros(0, np.int64)
            else:
                indices = np.ascontiguousarray(frames, dtype=np.int64).reshape(-1)
            info = lib.sleapc_input_video_info(inp)
            video = {"filename": info.filename.decode(errors="replace"),
                     "n_frames": info.n_frames, "height": info.height, "width": info.width,
                     "channels": info.channels}
            if output is not None:
                check(lib.sleapc_writer_open(os.fsencode(output), self._p, ctypes.byref(info), 1,
                                             ctypes.byref(writer)))
            rows = []
            stop = ctypes.c_int(0)
            raised = []

            def on_batch(pr, user):
                try:
                    rows.extend(self._collect())
                    if progress is not None:
                        progress(pr.contents.done, pr.contents.total, pr.contents.fps)
                except BaseException as e:  # noqa: B902 - re-raised below, after the C call
                    raised.append(e)
                    stop.value = 1

            callback = PROGRESS_FN(on_batch)
            run = RunOpts(0, 0, callback, None, ctypes.pointer(stop))
            if live:
                st = lib.sleapc_predict_input(self._p, inp, None, 0, writer, ctypes.byref(run))
                indices = np.arange(len(rows), dtype=np.int64)
            else:
                st = lib.sleapc_predict_input(self._p, inp, indices.ctypes.data_as(
                    ctypes.POINTER(ctypes.c_int64)), len(indices), writer, ctypes.byref(run))
            if st not in (0, STATUS_INTERRUPTED):
                check(st)
            if writer:
                w, writer = writer, ctypes.c_void_p()
                check(lib.sleapc_writer_close(w))
            if raised:
                raise raised[0]
            return Predictions(self, rows, indices[:len(rows)], video)
        finally:
            if writer:
                lib.sleapc_writer_discard(writer)
            lib.sleapc_input_close(inp)


def read_frames(path, indices=None):
    """Frames of a video (or an image, a folder of images, a .npy) as uint8 (N,H,W,C)."""
    v = ctypes.c_void_p()
    check(lib.sleapc_video_open(os.fsencode(path), ctypes.byref(v)))
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
