"""The library's process-wide settings (docs/library.md, "Settings"): set from Python, they win
over the environment variables of the same meaning for the rest of the process."""
import ctypes
import os

from ._lib import check, lib


def _text(value):
    if isinstance(value, bool):
        return b"1" if value else b"0"
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsencode(value)
    return str(value).encode()


def set_setting(name, value):
    """Set one setting by name ("backend", "conv", "auto_measure", "cache_dir", "memory_limit",
    "live_timeout_s", "overlap"), e.g. set_setting("memory_limit", "8G"). "" is the setting's
    none; None drops an earlier set, so the environment's value applies again. A name or value
    the library does not take raises ValueError. Set before creating the Predictors it should
    affect."""
    check(lib.sleapc_setting_set(str(name).encode(), None if value is None else _text(value)))


def get_setting(name):
    """The value in force, as a str ("auto" for an unpinned backend, the cache folder in use or ""
    for none)."""
    buf = ctypes.create_string_buffer(4096)
    check(lib.sleapc_setting_get(str(name).encode(), buf, len(buf)))
    return os.fsdecode(buf.value)


def set_cache_dir(path):
    """Where backend and conv "auto" keep their choices: a folder, or None / "" for no cache on
    disk (nothing is written; each run measures again). Overrides SLEAPC_CACHE_DIR,
    SLEAPC_NO_CACHE and the default ~/.cache/sleapc; set_setting("cache_dir", None) restores
    them."""
    set_setting("cache_dir", "" if path is None else path)
