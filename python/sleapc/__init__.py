"""sleapc: native inference for SLEAP / sleap-nn pose models, over libsleapc.so.

    import sleapc
    predictor = sleapc.Predictor(["models/centroid", "models/centered_instance"], batch_size=8)
    poses = predictor.predict(frames)          # uint8 (N, H, W, C) -> poses.points (N, I, K, 2)
"""
# predict / track as the command line runs them, their results, and the exceptions raised.
from ._public import *  # noqa: F401,F403
from ._public import __all__ as _public_all

from ._lib import SleapcError, lib
from .predictor import Model, Predictions, Predictor, read_frames
from .evaluate import evaluate, evaluate_tracking  # noqa: F401

__version__ = lib.sleapc_version().decode()
__all__ = sorted(set(_public_all) | {"Model", "Predictor", "Predictions", "SleapcError",
                                      "read_frames", "evaluate", "evaluate_tracking",
                                      "__version__"})
