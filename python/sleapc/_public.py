"""The package's functions beyond Predictor, exported by __init__ with `import *`."""

from ._embedding import embed
from ._lib import (SleapcError, SleapcFileNotFoundError, SleapcMemoryError, SleapcOSError,
                   SleapcValueError)
from ._predictions import Predictions
from ._run import Interrupted
from ._settings import get_setting, set_cache_dir, set_setting
from ._tracking import track
from .predictor import predict

# Shown as sleapc.X in tracebacks and help(), where users meet them.
for _cls in (Interrupted, Predictions, SleapcError, SleapcFileNotFoundError, SleapcMemoryError,
             SleapcOSError, SleapcValueError):
    _cls.__module__ = "sleapc"

__all__ = ["Interrupted", "Predictions", "SleapcError", "SleapcFileNotFoundError",
           "SleapcMemoryError", "SleapcOSError", "SleapcValueError", "embed", "get_setting", "predict",
           "set_cache_dir", "set_setting", "track"]
