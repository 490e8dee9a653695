"""Re-ID vectors for the detections of a .slp (sleap-nn 0.3.5's embedding models)."""
import ctypes
import os
from typing import Any, Union

from ._lib import check, lib
from .predictor import _OPTIONS, Model

PathLike = Union[str, os.PathLike]

# The predictor options this route reads.
_EMBED_OPTIONS = ("backend", "threads", "batch_size", "device", "compat")


def embed(model: Union[PathLike, Model], data_path: PathLike, output: Union[None, PathLike] = None,
          *, tracking: bool = False, save_embeddings: bool = True, **options: Any) -> str:
    """Embed every predicted instance of a .slp, as `sleap-nn predict --data_path X.slp
    -m MODEL --save_embeddings slp` does, and write the predictions with their vectors.

    model:     an `embedding` model folder, or a sleapc.Model of one.
    data_path: a .slp of detections (its videos are found as predict finds them).
    output:    the .slp to write (atomically); None: "<data_path>.embeddings.slp", or
               "<data_path>.tracked.slp" when tracking.
    tracking:  track the embedded detections too, as `sleap-nn predict ... --tracking` does
               (tracker="deepsort" and sleap-nn's other tracking options, as sleapc.track
               takes them); save_embeddings=False then writes the tracks without the vectors.
    options:   backend=, threads=, device=, compat=, batch_size= (crops a forward; 64), and the
               tracking options when tracking.
    Returns the output path.
    """
    if tracking:
        from ._tracking import tracking_opts

        tracked = {k: options.pop(k) for k in list(options) if k not in _EMBED_OPTIONS}
        tracked["tracking"] = True
        t, _, keep_t = tracking_opts(tracked)
        if tracked:
            raise TypeError(f"embed: unknown option {sorted(tracked)[0]!r}")
    elif not save_embeddings:
        raise ValueError("embed: save_embeddings=False without tracking writes nothing")
    opts = lib.sleapc_predictor_opts_default()
    opts.batch_size = 64
    keep = []
    for name, value in options.items():
        if name not in _EMBED_OPTIONS:
            raise TypeError(f"embed: unknown option {name!r} (options: "
                            f"{', '.join(_EMBED_OPTIONS)})")
        field, convert = _OPTIONS[name]
        converted = convert(value)
        keep.append(converted)
        setattr(opts, field, converted)
    m = model if isinstance(model, Model) else Model(model)
    kind = ".tracked.slp" if tracking else ".embeddings.slp"
    out = os.fspath(output) if output is not None else os.fspath(data_path) + kind
    n = ctypes.c_int64()
    if tracking:
        check(lib.sleapc_embed_and_track(m._m, os.fsencode(os.fspath(data_path)),
                                         os.fsencode(out), ctypes.byref(opts), ctypes.byref(t),
                                         bool(save_embeddings), ctypes.byref(n)))
        del keep_t
    else:
        check(lib.sleapc_embed_detections(m._m, os.fsencode(os.fspath(data_path)),
                                          os.fsencode(out), ctypes.byref(opts), ctypes.byref(n)))
    del keep
    return out
