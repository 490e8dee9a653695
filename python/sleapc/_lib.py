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
        ("device", ctypes.c_char_p),
        ("conv", ctypes.c_int),
        ("compat", ctypes.c_int),
        ("bbox_nms_iou", ctypes.c_double),
    ]


class TrackingOpts(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("tracking", ctypes.c_bool),
        ("tracking_window_size", ctypes.c_int),
        ("candidates_method", ctypes.c_char_p),
        ("min_new_track_points", ctypes.c_int),
        ("min_match_points", ctypes.c_int),
        ("features", ctypes.c_char_p),
        ("scoring_method", ctypes.c_char_p),
        ("scoring_reduction", ctypes.c_char_p),
        ("robust_best_instance", ctypes.c_double),
        ("track_matching_method", ctypes.c_char_p),
        ("max_tracks", ctypes.c_int),
        ("oks_stddev", ctypes.c_double),
        ("use_flow", ctypes.c_bool),
        ("of_img_scale", ctypes.c_double),
        ("of_window_size", ctypes.c_int),
        ("of_max_levels", ctypes.c_int),
        ("use_kalman", ctypes.c_bool),
        ("post_connect_single_breaks", ctypes.c_bool),
        ("tracking_target_instance_count", ctypes.c_int),
        ("tracking_pre_cull_to_target", ctypes.c_int),
        ("tracking_pre_cull_iou_threshold", ctypes.c_double),
        ("tracking_clean_instance_count", ctypes.c_int),
        ("tracking_clean_iou_threshold", ctypes.c_double),
        ("max_instances", ctypes.c_int),
        ("compat", ctypes.c_int),
        ("tracker", ctypes.c_char_p),
        ("track_buffer", ctypes.c_int),
        ("min_hits", ctypes.c_int),
        ("track_high_threshold", ctypes.c_double),
        ("track_low_threshold", ctypes.c_double),
        ("new_track_threshold", ctypes.c_double),
        ("min_match_similarity", ctypes.c_double),
        ("link_tracklets", ctypes.c_bool),
        ("mot_params", ctypes.POINTER(ctypes.c_char_p)),
        ("n_mot_params", ctypes.c_int),
        ("appearance_threshold", ctypes.c_char_p),
    ]


class FilterOpts(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("filter_overlapping", ctypes.c_bool),
        ("filter_overlapping_method", ctypes.c_char_p),
        ("filter_overlapping_threshold", ctypes.c_double),
        ("filter_min_visible_nodes", ctypes.c_int),
        ("filter_min_visible_node_fraction", ctypes.c_double),
        ("filter_min_mean_node_score", ctypes.c_double),
        ("filter_min_instance_score", ctypes.c_double),
        ("filter_min_centroid_distance", ctypes.c_double),
    ]


class Skeleton(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("n_nodes", ctypes.c_int),
        ("node_names", ctypes.POINTER(ctypes.c_char_p)),
        ("n_edges", ctypes.c_int),
        ("edges", ctypes.POINTER(ctypes.c_int)),
        ("n_symmetries", ctypes.c_int),
        ("symmetries", ctypes.POINTER(ctypes.c_int)),
        ("n_classes", ctypes.c_int),
        ("class_names", ctypes.POINTER(ctypes.c_char_p)),
    ]

    def as_dict(self):
        """name, node_names, edges, symmetries, class_names as Python values."""
        def pairs(arr, n):
            return [(arr[2 * i], arr[2 * i + 1]) for i in range(n)]
        return {"name": (self.name or b"").decode(),
                "node_names": [self.node_names[i].decode() for i in range(self.n_nodes)],
                "edges": pairs(self.edges, self.n_edges),
                "symmetries": pairs(self.symmetries, self.n_symmetries),
                "class_names": [self.class_names[i].decode() for i in range(self.n_classes)]}


_F = ctypes.POINTER(ctypes.c_float)


class Results(ctypes.Structure):
    _fields_ = [
        ("max_instances", ctypes.c_int),
        ("points", _F),
        ("point_scores", _F),
        ("scores", _F),
        ("tracks", ctypes.POINTER(ctypes.c_int)),
        ("tracking_scores", _F),
        ("centroids", _F),
        ("centroid_scores", _F),
    ]


class VideoInfo(ctypes.Structure):
    _fields_ = [("filename", ctypes.c_char_p), ("n_frames", ctypes.c_int64),
                ("height", ctypes.c_int64), ("width", ctypes.c_int64),
                ("channels", ctypes.c_int64), ("dataset", ctypes.c_char_p),
                ("source_json", ctypes.c_char_p)]


class Frame(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("n_frames", ctypes.c_int64),
                ("height", ctypes.c_int64), ("width", ctypes.c_int64),
                ("row_stride_bytes", ctypes.c_int64), ("format", ctypes.c_int)]


class StreamTiming(ctypes.Structure):
    _fields_ = [("total_ms", ctypes.c_double), ("convert_ms", ctypes.c_double)]


PIXEL_FORMATS = {"gray": 0, "rgb": 1, "bgr": 2}


class Progress(ctypes.Structure):
    _fields_ = [("done", ctypes.c_int64), ("total", ctypes.c_int64),
                ("elapsed_s", ctypes.c_double), ("fps", ctypes.c_double)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(Progress), ctypes.c_void_p)
LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
ABORT_FN = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p)


class RunOpts(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("video", ctypes.c_int),
                ("queue_depth", ctypes.c_int), ("progress", PROGRESS_FN),
                ("user", ctypes.c_void_p)]


class FieldLayout(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("offset", ctypes.c_size_t), ("size", ctypes.c_size_t)]


STATUS_INTERRUPTED = 8


def _candidates():
    env = os.environ.get("SLEAPC_LIBRARY")  # an explicit choice wins (the build's tests)
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libsleapc.so")  # a wheel: the library beside the package
    try:
        from ._install_path import LIBRARY  # written by `make install`
        yield LIBRARY
    except ImportError:
        pass
    yield os.path.join(here, "..", "..", "build", "libsleapc.so")  # a source checkout
    found = ctypes.util.find_library("sleapc")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(f"{path}: not there")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
    raise ImportError("sleapc: cannot load libsleapc.so (reinstall the package, or set "
                      "SLEAPC_LIBRARY to its path); tried: "
                      + ("; ".join(tried) or "nothing found"))


lib = _load()

# The C structs below are those of this ABI level (include/sleapc/sleapc.h).
ABI_VERSION = 4
lib.sleapc_abi_version.restype = ctypes.c_int
if lib.sleapc_abi_version() != ABI_VERSION:
    raise ImportError(f"sleapc: {lib._name} has ABI version {lib.sleapc_abi_version()}; "
                      f"this package is written for {ABI_VERSION}")

lib.sleapc_struct_layout.restype = ctypes.c_int
lib.sleapc_struct_layout.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t),
                                     ctypes.POINTER(ctypes.c_int),
                                     ctypes.POINTER(ctypes.POINTER(FieldLayout))]


def layout_problems(cls, c_name):
    """How the ctypes struct cls differs from the library's c_name (empty when they agree)."""
    size, n = ctypes.c_size_t(), ctypes.c_int()
    fields = ctypes.POINTER(FieldLayout)()
    if lib.sleapc_struct_layout(c_name.encode(), ctypes.byref(size), ctypes.byref(n),
                                ctypes.byref(fields)) != 0:
        return [f"{lib._name} does not describe {c_name}"]
    c_fields = {fields[i].name.decode(): (fields[i].offset, fields[i].size) for i in range(n.value)}
    py_fields = {name: (getattr(cls, name).offset, getattr(cls, name).size)
                 for name, *_ in cls._fields_}
    problems = [f"field {f} missing in Python" for f in c_fields if f not in py_fields]
    problems += [f"field {f} not in C" for f in py_fields if f not in c_fields]
    problems += [f"field {f} at offset {py_fields[f][0]} size {py_fields[f][1]} in Python, "
                 f"{c_fields[f][0]} size {c_fields[f][1]} in C"
                 for f in py_fields if f in c_fields and py_fields[f] != c_fields[f]]
    if ctypes.sizeof(cls) != size.value:
        problems.append(f"{ctypes.sizeof(cls)} bytes in Python, {size.value} in C")
    return problems


def check_layout(cls, c_name):
    """Raise ImportError when the ctypes mirror cls does not match the library's struct."""
    problems = layout_problems(cls, c_name)
    if problems:
        raise ImportError(f"sleapc: the Python mirror of {c_name} does not match {lib._name}: "
                          + "; ".join(problems))


# Every struct the package passes to or gets from the library, checked once here: a field added
# to a header and not to this file fails the import instead of corrupting memory.
STRUCTS = {"sleapc_field_layout": FieldLayout, "sleapc_tensor": Tensor,
           "sleapc_predictor_opts": PredictorOpts, "sleapc_tracking_opts": TrackingOpts,
           "sleapc_filter_opts": FilterOpts, "sleapc_skeleton": Skeleton,
           "sleapc_results": Results,
           "sleapc_video_info": VideoInfo, "sleapc_frame": Frame,
           "sleapc_stream_timing": StreamTiming, "sleapc_progress": Progress,
           "sleapc_run_opts": RunOpts}
for _c_name, _cls in STRUCTS.items():
    check_layout(_cls, _c_name)

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
    "sleapc_model_skeleton": (_S, [_P, ctypes.POINTER(Skeleton)]),
    "sleapc_predictor_layer_name": (ctypes.c_char_p, [_P]),
    "sleapc_predictor_skeleton": (_S, [_P, ctypes.POINTER(Skeleton)]),
    "sleapc_predictor_batch_size": (ctypes.c_int, [_P]),
    "sleapc_predictor_run": (_S, [_P, ctypes.POINTER(Frame)]),
    "sleapc_predictor_n_frames": (ctypes.c_int, [_P]),
    "sleapc_predictor_frame_results": (_S, [_P, ctypes.c_int, ctypes.POINTER(Results),
                                            ctypes.POINTER(ctypes.c_int)]),
    "sleapc_stream_create": (_S, [_P, ctypes.POINTER(_P)]),
    "sleapc_stream_destroy": (None, [_P]),
    "sleapc_stream_predict": (_S, [_P, ctypes.POINTER(Frame), ctypes.POINTER(ctypes.c_int)]),
    "sleapc_stream_last_timing": (StreamTiming, [_P]),
    "sleapc_input_open": (_S, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_P)]),
    "sleapc_input_open_compat": (_S, [ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                      ctypes.POINTER(_P)]),
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
    "sleapc_writer_close": (_S, [_P, c_int64_p]),
    "sleapc_run_opts_default": (RunOpts, []),
    "sleapc_writer_add": (_S, [_P, _P, ctypes.c_int, c_int64_p]),
    "sleapc_input_path_is_live": (ctypes.c_bool, [ctypes.c_char_p]),
    "sleapc_writer_set_drop_empty": (_S, [_P, ctypes.c_bool]),
    "sleapc_writer_set_tracking": (_S, [_P, ctypes.POINTER(TrackingOpts),
                                        ctypes.POINTER(FilterOpts)]),
    "sleapc_tracking_opts_default": (TrackingOpts, []),
    "sleapc_filter_opts_default": (FilterOpts, []),
    "sleapc_tracking_opts_check": (_S, [ctypes.POINTER(TrackingOpts), ctypes.POINTER(FilterOpts),
                                        ctypes.c_int]),
    "sleapc_embed_detections": (_S, [_P, ctypes.c_char_p, ctypes.c_char_p,
                                     ctypes.POINTER(PredictorOpts), c_int64_p]),
    "sleapc_embed_and_track": (_S, [_P, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.POINTER(PredictorOpts), ctypes.POINTER(TrackingOpts),
                                    ctypes.c_bool, c_int64_p]),
    "sleapc_retrack": (_S, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                            ctypes.POINTER(TrackingOpts), ctypes.POINTER(FilterOpts)]),
    "sleapc_labels_select_frames": (_S, [ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                         ctypes.POINTER(c_int64_p), c_int64_p]),
    "sleapc_labels_frames_at_positions": (_S, [ctypes.c_char_p, ctypes.c_int, c_int64_p,
                                               ctypes.c_int64, ctypes.POINTER(c_int64_p),
                                               c_int64_p, c_int64_p]),
    "sleapc_free": (None, [ctypes.c_void_p]),
    "sleapc_setting_set": (_S, [ctypes.c_char_p, ctypes.c_char_p]),
    "sleapc_setting_get": (_S, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]),
    "sleapc_log_set": (None, [LOG_FN, ctypes.c_void_p]),
    "sleapc_abort_set": (None, [ABORT_FN, ctypes.c_void_p]),
    "sleapc_writer_discard": (None, [_P]),
    "sleapc_video_open": (_S, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "sleapc_video_open_compat": (_S, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_P)]),
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
    """A failed sleapc call: `status` is the C status name, the message says what and where.

    Each failure is also the matching built-in exception (see ERRORS): a bad argument or a
    corrupt file is a ValueError, a missing file a FileNotFoundError, other I/O an OSError, ...
    """

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status

    def __str__(self):
        return self.args[0] if self.args else ""


class SleapcValueError(SleapcError, ValueError):
    """SLEAPC_ERR_INVALID_ARG, SLEAPC_ERR_FORMAT or SLEAPC_ERR_UNSUPPORTED."""


class SleapcOSError(SleapcError, OSError):
    """SLEAPC_ERR_IO: a file that cannot be opened, read or written."""

    def __init__(self, status, message):
        SleapcError.__init__(self, status, message)


class SleapcFileNotFoundError(SleapcOSError, FileNotFoundError):
    """SLEAPC_ERR_IO on a file or folder that does not exist."""


class SleapcMemoryError(SleapcError, MemoryError):
    """SLEAPC_ERR_NOMEM."""


# C status -> the exception class raised for it (the rest: SleapcError, a RuntimeError).
ERRORS = {1: SleapcValueError, 3: SleapcOSError, 4: SleapcValueError, 5: SleapcValueError,
          6: SleapcMemoryError}
_NOT_FOUND = ("No such file or directory", "not found", "does not exist")


def error(status):
    """The exception for a failed call's status and this thread's last error message."""
    name = lib.sleapc_status_str(status).decode()
    message = lib.sleapc_last_error().decode(errors="replace")
    cls = ERRORS.get(status, SleapcError)
    if cls is SleapcOSError and any(s in message for s in _NOT_FOUND):
        cls = SleapcFileNotFoundError
    return cls(name, message)


def check(status):
    if status != 0:
        raise error(status)
