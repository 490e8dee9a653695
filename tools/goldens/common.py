"""Shared helpers for the reference-data regenerator.

Paths, package versions, JSON writing, torch thread settings, the staging
folder that lets sleap-nn run with the same relative paths as the stored data,
and the rewrite of absolute provenance paths in the .slp files sleap-nn saves.
"""

import contextlib
import hashlib
import importlib.metadata
import io
import json
import logging
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

# Frames every case uses: 0-19 of the two fixture videos.
N_FRAMES = 20
FRAME_TAG = "f0000-0019"
VIDEOS = {
    "centered_pair_small": "sleap-nn-assets/datasets/centered_pair_small.mp4",
    "small_robot": "sleap-nn-assets/datasets/small_robot.mp4",
}
CKPTS = "sleap-nn-assets/model_ckpts"


def frames_npy_name(video_key):
    return "%s.sleap_io.%s.npy" % (video_key, FRAME_TAG)


def ffmpeg_npz_name(video_key):
    return "%s.ffmpeg_cli.%s.npz" % (video_key, FRAME_TAG)


# --------------------------------------------------------------------------
# Threads: set before torch is imported anywhere.


def limit_threads(n):
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(n)
    try:
        import torch

        torch.set_num_threads(n)
        try:
            torch.set_num_interop_threads(n)
        except RuntimeError:
            pass  # already set once in this process
    except ImportError:
        pass


def torch_threads():
    try:
        import torch

        return torch.get_num_threads()
    except ImportError:
        return None


# --------------------------------------------------------------------------
# Versions.

# distribution name -> key used in the written JSON
_DISTS = [
    ("sleap-nn", "sleap_nn"),
    ("torch", "torch"),
    ("torchvision", "torchvision"),
    ("sleap-io", "sleap_io"),
    ("numpy", "numpy"),
    ("scipy", "scipy"),
    ("h5py", "h5py"),
    ("opencv-python", "opencv_python"),
    ("opencv-python-headless", "opencv_python_headless"),
    ("av", "av"),
    ("imageio-ffmpeg", "imageio_ffmpeg"),
    ("onnxruntime", "onnxruntime"),
    ("onnx", "onnx"),
    ("onnxscript", "onnxscript"),
    ("onnx-ir", "onnx_ir"),
    ("lightning", "lightning"),
    ("click", "click"),
]


def dist_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def ffmpeg_cli_version(exe):
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return out.stdout.splitlines()[0] if out.stdout else None


def software(ffmpeg_exe=None):
    """Every package version that can matter, for software.json."""
    sw = {}
    for dist, key in _DISTS:
        sw[key] = dist_version(dist)
    try:
        import cv2

        sw["cv2"] = cv2.__version__
    except ImportError:
        sw["cv2"] = None
    sw["torch"] = torch_version()
    sw["python"] = platform.python_version()
    sw["platform"] = platform.platform()
    sw["machine"] = platform.machine()
    sw["cpu_count"] = os.cpu_count()
    sw["torch_num_threads"] = torch_threads()
    sw["ffmpeg_cli"] = ffmpeg_cli_version(ffmpeg_exe)
    try:
        import torch

        sw["torch_cuda_available"] = bool(torch.cuda.is_available())
    except ImportError:
        pass
    return sw


def torch_version():
    """torch.__version__ (with its local tag, e.g. +cu132), else the wheel's."""
    try:
        import torch

        return torch.__version__
    except ImportError:
        return dist_version("torch")


def env_predict(device="cpu"):
    """The `env` block of predict/*/options.json."""
    import cv2

    return {
        "sleap_nn": dist_version("sleap-nn"),
        "torch": torch_version(),
        "sleap_io": dist_version("sleap-io"),
        "numpy": dist_version("numpy"),
        "python": platform.python_version(),
        "torch_num_threads": torch_threads(),
        "device": device,
        "opencv": cv2.__version__,
        "av": dist_version("av"),
    }


def env_short():
    """The `env` / `environment` block of tracking and eval cases."""
    return {
        "sleap_nn": dist_version("sleap-nn"),
        "sleap_io": dist_version("sleap-io"),
        "numpy": dist_version("numpy"),
        "scipy": dist_version("scipy"),
        "python": platform.python_version(),
    }


# --------------------------------------------------------------------------
# JSON.


def jsonable(x, nan_as_string=True):
    """Convert numpy values, tuples and non-finite floats for JSON.

    Non-finite floats become "nan" / "inf" / "-inf" (the convention of the
    stored data) unless nan_as_string is False, in which case they are None.
    """
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if isinstance(x, dict):
        return {str(k): jsonable(v, nan_as_string) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v, nan_as_string) for v in x]
    if np is not None:
        if isinstance(x, np.ndarray):
            return jsonable(x.tolist(), nan_as_string)
        if isinstance(x, np.bool_):
            return bool(x)
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.floating):
            x = float(x)
    if isinstance(x, float) and not math.isfinite(x):
        if not nan_as_string:
            return None
        if math.isnan(x):
            return "nan"
        return "inf" if x > 0 else "-inf"
    return x


def write_json_compact(path, obj):
    """expected.json style: no spaces, no trailing newline."""
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"), allow_nan=False)


def write_json_indent(path, obj, indent=1):
    """options.json / manifest.json style."""
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, allow_nan=False)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


# --------------------------------------------------------------------------
# The staging root.


class Stage:
    """A folder that looks like the data root, with the output folder in it.

    sleap-nn is run from this folder with paths relative to it, exactly as the
    stored data was made from `shared/data/`: every top-level entry of the data
    root is linked in, and `label` (e.g. `sleapnn-0.3.5`) points at the output
    folder. Paths written into outputs are therefore relative to the data root.
    """

    def __init__(self, data_root, out_root, label):
        self.data = os.path.realpath(data_root)
        self.out = os.path.realpath(out_root)
        self.label = label
        self.dir = tempfile.mkdtemp(prefix="goldens-stage-")
        for name in os.listdir(self.data):
            if name == label:
                continue
            os.symlink(os.path.join(self.data, name), os.path.join(self.dir, name))
        os.symlink(self.out, os.path.join(self.dir, label))
        self.root = self.dir

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def rel_out(self, *parts):
        """Path of an output file as written into the data (label/...)."""
        return "/".join((self.label,) + parts)

    def out_path(self, *parts):
        return os.path.join(self.out, *parts)

    def data_path(self, rel):
        return os.path.join(self.data, rel)

    @contextlib.contextmanager
    def cwd(self, sub=None):
        old = os.getcwd()
        os.chdir(os.path.join(self.root, sub) if sub else self.root)
        try:
            yield
        finally:
            os.chdir(old)

    def relativize(self, s):
        """Rewrite an absolute path string to one relative to the data root."""
        if not isinstance(s, str) or not s:
            return s
        prefixes = [
            (self.out + os.sep, self.label + "/"),
            (self.root + os.sep + self.label + os.sep, self.label + "/"),
            (self.root + os.sep, ""),
            (self.data + os.sep, ""),
        ]
        real_root = os.path.realpath(self.root)
        if real_root != self.root:
            prefixes.append((real_root + os.sep, ""))
        for pre, rep in prefixes:
            if pre in s:
                s = s.replace(pre, rep)
        return s


def relativize_tree(obj, stage):
    if isinstance(obj, dict):
        return {k: relativize_tree(v, stage) for k, v in obj.items()}
    if isinstance(obj, list):
        return [relativize_tree(v, stage) for v in obj]
    if isinstance(obj, str):
        return stage.relativize(obj)
    return obj


# --------------------------------------------------------------------------
# .slp provenance rewrite.


def _rewrite_attr(value, stage):
    if isinstance(value, bytes):
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return value, False
        new = stage.relativize(text)
        return (new.encode("utf-8"), new != text)
    if isinstance(value, str):
        new = stage.relativize(value)
        return new, new != value
    return value, False


def relativize_slp(path, stage):
    """Make absolute paths in a .slp's strings relative, then repack.

    sleap-io keeps provenance (model_paths, source_file, ...) as JSON in the
    `metadata` attributes and the `provenance_json` dataset. Only strings
    (attributes and string datasets) are rewritten; every other dataset
    (instances, points, tracks, video references) is copied unchanged, object
    by object, into a fresh file so no stale bytes of the old strings remain.
    """
    import h5py
    import numpy as np

    def rewrite_dataset(dg, name, ds):
        if ds.dtype.kind not in ("S", "O"):
            return
        vals = ds[()]
        if ds.shape == ():
            new = _rewrite_attr(vals, stage)[0]
            if new == vals:
                return
            attrs = dict(ds.attrs)
            del dg[name]
            dg.create_dataset(name, data=np.bytes_(new) if isinstance(new, bytes) else new)
        else:
            flat = [_rewrite_attr(v, stage)[0] for v in vals.reshape(-1)]
            if all(a == b for a, b in zip(flat, vals.reshape(-1))):
                return
            attrs = dict(ds.attrs)
            del dg[name]
            if ds.dtype.kind == "O":
                arr = np.array(flat, dtype=object).reshape(vals.shape)
                dg.create_dataset(name, data=arr, dtype=h5py.string_dtype(encoding="utf-8") if not isinstance(flat[0], bytes) else h5py.special_dtype(vlen=bytes), maxshape=ds.maxshape)
            else:
                dg.create_dataset(name, data=np.array(flat).reshape(vals.shape))
        for k, v in attrs.items():
            dg[name].attrs[k] = v

    tmp = path + ".repack"
    with h5py.File(path, "r") as src, h5py.File(tmp, "w") as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = _rewrite_attr(v, stage)[0]

        def copy_group(sg, dg):
            for name in sg:
                link = sg.get(name, getlink=True)
                if isinstance(link, h5py.SoftLink):
                    dg[name] = h5py.SoftLink(link.path)
                    continue
                obj = sg[name]
                if isinstance(obj, h5py.Group):
                    ng = dg.create_group(name)
                    for k, v in obj.attrs.items():
                        ng.attrs[k] = _rewrite_attr(v, stage)[0]
                    copy_group(obj, ng)
                else:
                    sg.copy(obj, dg, name=name)
                    for k, v in obj.attrs.items():
                        nv, changed = _rewrite_attr(v, stage)
                        if changed:
                            dg[name].attrs[k] = nv
                    rewrite_dataset(dg, name, dg[name])

        copy_group(src, dst)
    # A second, plain copy: the rewrite above deletes and recreates objects,
    # which leaves the old bytes in the file's free space.
    tmp2 = path + ".repack2"
    with h5py.File(tmp, "r") as src, h5py.File(tmp2, "w") as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        for name in src:
            src.copy(src[name], dst, name=name)
    os.remove(tmp)
    os.replace(tmp2, path)


# --------------------------------------------------------------------------
# Running sleap-nn's CLI in-process.


class LogCapture(logging.Handler):
    """Collect `LEVEL | message` lines from every logger (sleap-nn uses loguru
    in some versions and logging in others; both are caught)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append("%s | %s" % (record.levelname, record.getMessage()))


@contextlib.contextmanager
def capture_logs(level="INFO"):
    cap = LogCapture()
    cap.setLevel(getattr(logging, level))
    root = logging.getLogger()
    root.addHandler(cap)
    loguru_id = None
    try:
        from loguru import logger as _lg

        def sink(msg):
            rec = msg.record
            cap.lines.append("%s | %s" % (rec["level"].name, rec["message"]))

        loguru_id = _lg.add(sink, level=level)
    except ImportError:
        pass
    try:
        yield cap
    finally:
        root.removeHandler(cap)
        if loguru_id is not None:
            from loguru import logger as _lg

            _lg.remove(loguru_id)


def run_cli(argv):
    """Run `sleap-nn ARGV` in-process. Returns (exception or None, log lines)."""
    from sleap_nn import cli as snn_cli

    with capture_logs() as cap:
        err = None
        try:
            snn_cli.cli(list(argv), standalone_mode=False)
        except SystemExit as e:
            if e.code not in (0, None):
                err = e
        except Exception as e:  # noqa: BLE001 - recorded in the output
            err = e
    return err, cap.lines


def error_dict(e):
    return {"type": type(e).__name__, "message": str(e)}


class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *a):
        self.s = round(time.perf_counter() - self.t0, 1)


def log(msg):
    print("[goldens] " + msg, file=sys.stderr, flush=True)


def ensure_dir(path):
    os.makedirs(path, exist_ok=True)
    return path
