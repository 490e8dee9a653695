"""ctypes declarations of the C API (include/sleapc) and loading libsleapc.so."""

import ctypes
import ctypes.util
import os

c_int64_p = ctypes.POINTER(ctypes.c_int64)


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * 6), ("data", ctypes.c_void_p)]


DTYPE_U8 = 1


class PredictorOpts(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("backend", ctypes.c_char_p),
        ("n_threads", ctypes.c_int),
        ("batch_size", ctypes.c_int),
        ("peak_threshold", ctypes.c_double),
        ("centroid_peak_threshold", ctypes.c_double),
        ("integral_refinement", ctypes.c_int),
        ("integral_patch_size", ctypes.c_int),
        ("max_instances", ctypes.c_int),
        ("max_edge_length_ratio", ctypes.c_double),
        ("dist_penalty_weight", ctypes.c_double),
        ("n_points", ctypes.c_int),
        ("min_instance_peaks", ctypes.c_double),
        ("min_line_scores", ctypes.c_double),
        ("crop_size", ctypes.c_int),
        ("max_height", ctypes.c_int),
        ("max_width", ctypes.c_int),
        ("input_scale", ctypes.c_double),
        ("ensure_rgb", ctypes.c_int),
        ("ensure_grayscale", ctypes.c_int),
        ("precision", ctypes.c_int),
        ("anchor_part", ctypes.c_char_p),
        ("conv", ctypes.c_int),
    ]


class Instance(ctypes.Structure):
    _fields_ = [
        ("points", ctypes.POINTER(ctypes.c_float)),
        ("point_scores", ctypes.POINTER(ctypes.c_float)),
        ("score", ctypes.c_float),
        ("track", ctypes.c_int),
        ("tracking_score", ctypes.c_float),
        ("has_centroid", ctypes.c_bool),
        ("centroid", ctypes.c_float * 2),
        ("centroid_score", ctypes.c_float),
    ]


class VideoInfo(ctypes.Structure):
    _fields_ = [("filename", ctypes.c_char_p), ("n_frames", ctypes.c_int64),
                ("height", ctypes.c_int64), ("width", ctypes.c_int64),
                ("channels", ctypes.c_int64), ("dataset", ctypes.c_char_p),
                ("source_json", ctypes.c_char_p)]


class Frame(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("height", ctypes.c_int64), ("width", ctypes.c_int64),
                ("row_stride_bytes", ctypes.c_int64), ("format", ctypes.c_int)]


class StreamTiming(ctypes.Structure):
    _fields_ = [("total_ms", ctypes.c_double), ("convert_ms", ctypes.c_double)]


PIXEL_FORMATS = {"gray": 0, "rgb": 1, "bgr": 2}


class Progress(ctypes.Structure):
    _fields_ = [("done", ctypes.c_int64), ("total", ctypes.c_int64),
                ("elapsed_s", ctypes.c_double), ("fps", ctypes.c_double)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(Progress), ctypes.c_void_p)


class RunOpts(ctypes.Structure):
    _fields_ = [("video", ctypes.c_int), ("queue_depth", ctypes.c_int),
                ("progress", PROGRESS_FN), ("user", ctypes.c_void_p),
                ("stop", ctypes.POINTER(ctypes.c_int))]


STATUS_INTERRUPTED = 8


def _candidates():
    env = os.environ.get("SLEAPC_LIBRARY")
    if env:
        yield env
        return
    try:
        from ._install_path import LIBRARY  # written by `make install`
        yield LIBRARY
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "build", "libsleapc.so")  # a source checkout
    found = ctypes.util.find_library("sleapc")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
    raise ImportError("sleapc: cannot load libsleapc.so (set SLEAPC_LIBRARY to its path); tried: "
                      + ("; ".join(tried) or "nothing found"))


lib = _load()

# The C structs below are those of this ABI level (include/sleapc/sleapc.h).
ABI_VERSION = 3
lib.sleapc_abi_version.restype = ctypes.c_int
if lib.sleapc_abi_version() != ABI_VERSION:
    raise ImportError(f"sleapc: {lib._name} has ABI version {lib.sleapc_abi_version()}; "
                      f"this package is written for {ABI_VERSION}")

_P = ctypes.c_void_p
_S = ctypes.c_int
_protos = {
    "sleapc_version": (ctypes.c_char_p, []),
    "sleapc_status_str": (ctypes.c_char_p, [_S]),
    "sleapc_last_error": (ctypes.c_char_p, []),
    "sleapc_predictor_opts_default": (PredictorOpts, []),
    "sleapc_predictor_create": (_S, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                     ctypes.POINTER(PredictorOpts), ctypes.POINTER(_P)]),
    "sleapc_predictor_destroy": (None, [_P]),
    "sleapc_predictor_create_from_models": (_S, [ctypes.POINTER(_P), ctypes.c_int,
                                                 ctypes.POINTER(PredictorOpts),
                                                 ctypes.POINTER(_P)]),
    "sleapc_predictor_warmup": (_S, [_P, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                     ctypes.c_int64]),
    "sleapc_model_load": (_S, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "sleapc_model_destroy": (None, [_P]),
    "sleapc_model_get_type": (ctypes.c_int, [_P]),
    "sleapc_model_type_name": (ctypes.c_char_p, [ctypes.c_int]),
    "sleapc_model_n_nodes": (ctypes.c_int, [_P]),
    "sleapc_predictor_layer_name": (ctypes.c_char_p, [_P]),
    "sleapc_predictor_skeleton_name": (ctypes.c_char_p, [_P]),
    "sleapc_predictor_n_nodes": (ctypes.c_int, [_P]),
    "sleapc_predictor_node_name": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "sleapc_predictor_n_edges": (ctypes.c_int, [_P]),
    "sleapc_predictor_edge": (None, [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                     ctypes.POINTER(ctypes.c_int)]),
    "sleapc_predictor_n_symmetries": (ctypes.c_int, [_P]),
    "sleapc_predictor_symmetry": (None, [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                         ctypes.POINTER(ctypes.c_int)]),
    "sleapc_predictor_n_classes": (ctypes.c_int, [_P]),
    "sleapc_predictor_class_name": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "sleapc_predictor_batch_size": (ctypes.c_int, [_P]),
    "sleapc_predictor_run": (_S, [_P, ctypes.POINTER(Tensor)]),
    "sleapc_predictor_n_frames": (ctypes.c_int, [_P]),
    "sleapc_predictor_n_instances": (ctypes.c_int, [_P, ctypes.c_int]),
    "sleapc_predictor_instance": (_S, [_P, ctypes.c_int, ctypes.c_int, ctypes.POINTER(Instance)]),
    "sleapc_predictor_frame_results": (_S, [_P, ctypes.c_int, ctypes.c_int,
                                            ctypes.POINTER(ctypes.c_float),
                                            ctypes.POINTER(ctypes.c_float),
                                            ctypes.POINTER(ctypes.c_float),
                                            ctypes.POINTER(ctypes.c_int),
                                            ctypes.POINTER(ctypes.c_int)]),
    "sleapc_stream_create": (_S, [_P, ctypes.POINTER(_P)]),
    "sleapc_stream_destroy": (None, [_P]),
    "sleapc_stream_predict": (_S, [_P, ctypes.POINTER(Frame), ctypes.POINTER(ctypes.c_int)]),
    "sleapc_stream_last_timing": (StreamTiming, [_P]),
    "sleapc_input_open": (_S, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_P)]),
    "sleapc_input_close": (None, [_P]),
    "sleapc_input_is_live": (ctypes.c_bool, [_P]),
    "sleapc_input_n_frames": (ctypes.c_int64, [_P]),
    "sleapc_input_n_default_frames": (ctypes.c_int64, [_P]),
    "sleapc_input_default_frames": (c_int64_p, [_P]),
    "sleapc_input_video_info": (VideoInfo, [_P]),
    "sleapc_predict_input": (_S, [_P, _P, c_int64_p, ctypes.c_int64, _P,
                                  ctypes.POINTER(RunOpts)]),
    "sleapc_writer_open": (_S, [ctypes.c_char_p, _P, ctypes.POINTER(VideoInfo), ctypes.c_int,
                                ctypes.POINTER(_P)]),
    "sleapc_writer_close": (_S, [_P]),
    "sleapc_writer_discard": (None, [_P]),
    "sleapc_video_open": (_S, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "sleapc_video_n_frames": (ctypes.c_int64, [_P]),
    "sleapc_video_shape": (None, [_P, c_int64_p, c_int64_p, c_int64_p]),
    "sleapc_video_read": (_S, [_P, ctypes.c_int64, ctypes.c_void_p]),
    "sleapc_video_close": (None, [_P]),
}
for _name, (_res, _args) in _protos.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


class SleapcError(RuntimeError):
    """A failed sleapc call: `status` is the C status name, the message says what and where."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def check(status):
    if status != 0:
        name = lib.sleapc_status_str(status).decode()
        raise SleapcError(name, lib.sleapc_last_error().decode(errors="replace"))
