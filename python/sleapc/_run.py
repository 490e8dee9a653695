"""What predict_video needs beyond the predictor: output paths as the CLI names them, frame
selection, progress display, and Ctrl-C that stops after the current batch."""

from __future__ import annotations

import ctypes
import os
import re
import signal
import sys
import threading
import time
import warnings
from typing import Callable, Iterable, List, Optional, Sequence, Union

import numpy as np

from ._lib import ABORT_FN, LOG_FN, check, lib

PathLike = Union[str, os.PathLike]
FORMATS = ("slp", "analysis_h5", "csv", "json")
_KNOWN_EXTS = (".predictions.slp", ".slp", ".analysis.h5", ".h5", ".csv", ".json")
_FORMAT_EXT = {"slp": (".slp", ".slp"), "analysis_h5": (".h5", ".analysis.h5"),
               "csv": (".csv", ".csv"), "json": (".json", ".json")}
_LABEL_FILTERS = ("only_labeled_frames", "only_suggested_frames", "exclude_user_labeled",
                  "only_predicted_frames")  # sleap-nn's priority; C enum values 1..4


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) during a run: the run stopped after its current batch.

    predictions: the frames done, equal to what the outputs hold; outputs: the files written.
    """

    def __init__(self, message: str, predictions=None, outputs: Sequence[str] = ()):
        super().__init__(message)
        self.predictions = predictions
        self.outputs = list(outputs)


def output_paths(source: str, output: Optional[PathLike], output_format, output_dir,
                 scoped_video: Optional[str] = None) -> List[str]:
    """The files of one run, named as `sleapc predict` names them (-o, --output_format,
    --output_dir). No output, format or folder: none (the predictions are only returned)."""
    if output is None and not output_format and output_dir is None:
        return []
    if isinstance(output_format, str):
        output_format = [f for f in re.split(r"[,\s]+", output_format) if f]
    formats = list(output_format or [])
    for f in formats:
        if f not in FORMATS:
            raise ValueError(f"output_format: expected some of {', '.join(FORMATS)}, got {f!r}")
    if output is not None:
        primary = os.fspath(output)
    else:
        stem = source.rstrip("/") or source
        if scoped_video:
            stem = stem[:-4] if stem.endswith(".slp") else stem
            primary = f"{stem}.{scoped_video}.predictions.slp"
        else:
            primary = stem + ".slp"
    if output_dir is not None:
        primary = os.path.join(os.fspath(output_dir), os.path.basename(primary))
    if not formats:
        return [primary]
    base = primary
    for ext in _KNOWN_EXTS:
        if base.endswith(ext) and len(base) > len(ext):
            base = base[:-len(ext)]
            break
    out = []
    for f in formats:
        own, added = _FORMAT_EXT[f]
        out.append(primary if primary.endswith(own) else base + added)
    return out


_VIDEO_EXTS = (".mp4", ".avi", ".mov", ".mkv", ".m4v", ".mpg", ".mpeg", ".webm", ".wmv", ".flv",
               ".h264", ".ts")


def expand_inputs(paths: Sequence[str]) -> List[str]:
    """What -i names, as `sleapc predict` expands it: a folder of videos is each video (sorted;
    a folder of images stays one input), a .txt file lists inputs one per line (relative to its
    folder, '#' starts a comment); anything else is one input."""
    out: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            videos = sorted(n for n in os.listdir(p)
                            if not n.startswith(".") and n.lower().endswith(_VIDEO_EXTS))
            out.extend([os.path.join(p, n) for n in videos] or [p])
        elif p.endswith(".txt") and os.path.isfile(p):
            listed = []
            with open(p) as f:
                for line in f:
                    line = line.split("#", 1)[0].strip()
                    if line:
                        listed.append(os.path.join(os.path.dirname(p), line))
            if not listed:
                raise ValueError(f"{p}: the list names no inputs")
            out.extend(listed)
        else:
            out.append(p)
    return out


def parse_frames(frames, n_frames: int) -> np.ndarray:
    """frames as an int64 array: a list/range/array of indices or a string like "0-99,150"."""
    if isinstance(frames, str):
        picked = []
        for part in frames.split(","):
            part = part.strip()
            m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
            if not m:
                raise ValueError(f"frames: expected indices like 0-99,150, got {frames!r}")
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) else lo
            if hi < lo:
                raise ValueError(f"frames: {part}: the range ends before it starts")
            picked.extend(range(lo, hi + 1))
        frames = picked
    a = np.ascontiguousarray(np.asarray(list(frames) if not hasattr(frames, "__array__")
                                        else frames, dtype=np.int64).reshape(-1))
    bad = a[(a < 0) | (a >= n_frames)] if n_frames > 0 else a[a < 0]
    if len(bad):
        raise ValueError(f"frames: {int(bad[0])} is not a frame of this input "
                         f"(0..{n_frames - 1})")
    return a


def label_filter(path: str, video_index: int, flags: dict) -> Optional[np.ndarray]:
    """The frames of a labels file picked by --only_labeled_frames and the like, or None."""
    chosen = [i for i, name in enumerate(_LABEL_FILTERS) if flags.get(name)]
    if not chosen:
        return None
    if not path.endswith(".slp"):
        warnings.warn(f"{path}: {', '.join(_LABEL_FILTERS)} need a .slp input; predicting every "
                      "frame", stacklevel=4)
        return None
    ptr = ctypes.POINTER(ctypes.c_int64)()
    n = ctypes.c_int64()
    check(lib.sleapc_labels_select_frames(os.fsencode(path), video_index, chosen[0] + 1,
                                          ctypes.byref(ptr), ctypes.byref(n)))
    try:
        return np.ctypeslib.as_array(ptr, (n.value,)).copy() if n.value else np.zeros(0, np.int64)
    finally:
        lib.sleapc_free(ptr)


def label_positions(path: str, video_index: int, positions: np.ndarray) -> np.ndarray:
    """sleap-nn 0.3.5's frames on a labels file: the labeled frames at these positions of the
    file's list (a position past its end skipped with a warning), as frame numbers."""
    pos = np.ascontiguousarray(positions, dtype=np.int64)
    ptr = ctypes.POINTER(ctypes.c_int64)()
    n, beyond = ctypes.c_int64(), ctypes.c_int64()
    check(lib.sleapc_labels_frames_at_positions(
        os.fsencode(path), video_index, pos.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
        len(pos), ctypes.byref(ptr), ctypes.byref(n), ctypes.byref(beyond)))
    try:
        out = np.ctypeslib.as_array(ptr, (n.value,)).copy() if n.value else np.zeros(0, np.int64)
    finally:
        lib.sleapc_free(ptr)
    if beyond.value:
        warnings.warn(f"{path}: frames on a labels file are positions in its labeled frames "
                      f"(sleap-nn 0.3.5); {beyond.value} past them skipped", stacklevel=4)
    return out


class Progress:
    """Progress of a long call: a tqdm bar when tqdm is importable, else a line on stderr
    (rewritten in place on a terminal, every 10 s otherwise); or the caller's function."""

    def __init__(self, progress: Union[bool, None, Callable], label: str):
        self.fn = progress if callable(progress) else None
        self.show = progress is True
        self.label = label
        self.bar = None
        self.last = 0.0
        self.tty = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()

    def update(self, done: int, total: int, fps: float) -> None:
        if self.fn is not None:
            self.fn(done, total, fps)
        if not self.show:
            return
        if self.bar is None:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total or None, desc=self.label, unit="frame")
            except ImportError:
                self.bar = False
        if self.bar:
            self.bar.update(done - self.bar.n)
            return
        now = time.monotonic()
        if self.tty or now - self.last >= 10 or done == total:
            self.last = now
            of = f"/{total}" if total else ""
            end = "\r" if self.tty and done != total else "\n"
            print(f"sleapc: {self.label}: {done}{of} frames, {fps:.1f} FPS", end=end,
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar:
            self.bar.close()
        elif self.show and self.tty and self.last:
            print(file=sys.stderr)


class StopOnSigint:
    """While active (main thread only), Ctrl-C sets `stop` instead of raising: the C run
    finishes its batch and returns; `hit` says whether it came."""

    def __init__(self, stop: ctypes.c_int):
        self.stop = stop
        self.hit = False
        self.old = None

    def _handler(self, signum, frame):
        self.hit = True
        self.stop.value = 1

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            try:
                self.old = signal.signal(signal.SIGINT, self._handler)
            except ValueError:  # not the main interpreter
                self.old = None
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)


_stops = {}  # thread id -> the stop flag of the run on that thread
_stops_lock = threading.Lock()


def _abort_requested(user):
    stop = _stops.get(threading.get_ident())
    return bool(stop is not None and stop.value)


# The library's one abort callback (sleapc_abort_set, process-wide), installed while a run is
# active: it is polled between batches on the thread of the run, and a Python callback there
# also lets Ctrl-C's handler run.
_ABORT = ABORT_FN(_abort_requested)


class AbortOn:
    """While active, a run on this thread stops after its current batch once `stop` is set."""

    def __init__(self, stop: ctypes.c_int):
        self.stop = stop

    def __enter__(self):
        with _stops_lock:
            if not _stops:
                lib.sleapc_abort_set(_ABORT, None)
            _stops[threading.get_ident()] = self.stop
        return self

    def __exit__(self, *exc):
        with _stops_lock:
            _stops.pop(threading.get_ident(), None)
            if not _stops:
                lib.sleapc_abort_set(ABORT_FN(), None)


def shard_frames(frames: np.ndarray, shard: Optional[Iterable[int]]) -> np.ndarray:
    """shard=(k, n): the k-th of n equal contiguous ranges (0-based), as --shard K/N."""
    if shard is None:
        return frames
    k, n = (int(x) for x in shard)
    if n < 1 or not 0 <= k < n:
        raise ValueError(f"shard: expected (k, n) with 0 <= k < n, got {shard!r}")
    lo, hi = len(frames) * k // n, len(frames) * (k + 1) // n
    return frames[lo:hi]


class LibraryLog:
    """While active and on, the library's messages go to stderr (`sleapc predict -v`)."""

    LEVELS = ("debug", "info", "warning", "error")

    def __init__(self, on: bool):
        self.on = bool(on)
        self.fn = LOG_FN(self._log) if self.on else None

    def _log(self, level, msg, user):
        name = self.LEVELS[level] if 0 <= level < len(self.LEVELS) else str(level)
        print(f"sleapc: {name}: {msg.decode(errors='replace')}", file=sys.stderr, flush=True)

    def __enter__(self):
        if self.on:
            lib.sleapc_log_set(self.fn, None)
        return self

    def __exit__(self, *exc):
        if self.on:
            lib.sleapc_log_set(LOG_FN(), None)
