"""The ctypes mirrors of the C structs are checked against the library (sleapc_struct_layout)."""

import ctypes

import pytest

from sleapc import _lib


def test_every_mirror_matches_the_library():
    for c_name, cls in _lib.STRUCTS.items():
        assert _lib.layout_problems(cls, c_name) == [], c_name
        assert ctypes.sizeof(cls) > 0


def test_a_shortened_struct_is_refused():
    # PredictorOpts as it was before anchor_part: 8 bytes short of the C struct.
    fields = [f for f in _lib.PredictorOpts._fields_ if f[0] != "anchor_part"]
    Short = type("Short", (ctypes.Structure,), {"_fields_": fields})
    problems = _lib.layout_problems(Short, "sleapc_predictor_opts")
    assert "field anchor_part missing in Python" in problems
    with pytest.raises(ImportError, match="anchor_part"):
        _lib.check_layout(Short, "sleapc_predictor_opts")


def test_a_moved_field_is_refused():
    fields = list(_lib.Progress._fields_)
    fields[0], fields[1] = fields[1], fields[0]
    Swapped = type("Swapped", (ctypes.Structure,), {"_fields_": fields})
    assert _lib.layout_problems(Swapped, "sleapc_progress") == [
        "field total at offset 0 size 8 in Python, 8 size 8 in C",
        "field done at offset 8 size 8 in Python, 0 size 8 in C"]


def test_opts_default_fills_the_whole_struct():
    opts = _lib.lib.sleapc_predictor_opts_default()
    assert opts.struct_size == ctypes.sizeof(_lib.PredictorOpts)
    assert opts.anchor_part is None
