"""Process-wide settings from Python: set_cache_dir, set_setting, get_setting. Each test puts
back what it set (None: the environment's value again), as the settings outlive the test."""
import os

import numpy as np
import pytest

import sleapc

SI = "sleap-nn-assets/model_ckpts/minimal_instance_single_instance"


def test_set_and_get_win_over_the_environment(tmp_path):
    try:
        sleapc.set_cache_dir(tmp_path)
        assert sleapc.get_setting("cache_dir") == str(tmp_path)
        sleapc.set_cache_dir(None)
        assert sleapc.get_setting("cache_dir") == ""
        sleapc.set_setting("backend", "auto")
        assert sleapc.get_setting("backend") == "auto"
        sleapc.set_setting("memory_limit", "8G")
        assert sleapc.get_setting("memory_limit") == "8G"
        sleapc.set_setting("overlap", False)
        assert sleapc.get_setting("overlap") == "0"
        sleapc.set_setting("live_timeout_s", 2.5)
        assert sleapc.get_setting("live_timeout_s") == "2.5"
    finally:
        for name in ("cache_dir", "backend", "memory_limit", "overlap", "live_timeout_s"):
            sleapc.set_setting(name, None)
    backend = os.environ.get("SLEAPC_BACKEND") or "auto"
    assert sleapc.get_setting("backend") == backend


@pytest.mark.parametrize("name,value,says", [
    ("no_such", "1", "no such setting"),
    ("bf16_force", "1", "developer switch"),
    ("conv", "fast", "auto, direct, winograd"),
    ("memory_limit", "lots", "bytes"),
    ("live_timeout_s", 0, "seconds"),
])
def test_refused_values_raise_value_error(name, value, says):
    with pytest.raises(ValueError, match=says):
        sleapc.set_setting(name, value)
    with pytest.raises(ValueError):
        sleapc.get_setting("no_such")


def test_cache_dir_none_writes_nothing(data, tmp_path):
    """A timed choice goes to the folder set, and with none set nowhere."""
    frames = np.zeros((1, 384, 384, 1), np.uint8)
    kept = tmp_path / "kept"
    try:
        sleapc.set_setting("conv", "auto")  # the suite pins it to direct: time it here
        sleapc.set_cache_dir(kept)
        with sleapc.Predictor(data(SI), backend="native", threads=1) as p:
            p.predict(frames)
        assert kept.is_dir() and len(os.listdir(kept)) > 0
        n_kept = len(os.listdir(kept))
        # Another thread count is another key: timed again, and kept nowhere.
        sleapc.set_cache_dir(None)
        with sleapc.Predictor(data(SI), backend="native", threads=2) as p:
            p.predict(frames)
        assert sorted(os.listdir(tmp_path)) == ["kept"]
        assert len(os.listdir(kept)) == n_kept
    finally:
        sleapc.set_setting("conv", None)
        sleapc.set_setting("cache_dir", None)
