"""The package's functions beyond Predictor, exported by __init__ with `import *`."""

from ._lib import (SleapcError, SleapcFileNotFoundError, SleapcMemoryError, SleapcOSError,
                   SleapcValueError)
from ._predictions import Predictions
from ._run import Interrupted
from ._tracking import track
from .predictor import predict

__all__ = ["Interrupted", "Predictions", "SleapcError", "SleapcFileNotFoundError",
           "SleapcMemoryError", "SleapcOSError", "SleapcValueError", "predict", "track"]
