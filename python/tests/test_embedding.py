"""sleapc.embed: sleap-nn 0.3.5's --save_embeddings slp route from Python, on the golden case
(tests/goldens/sleapnn-0.3.5-families/cases/embedding__topdown_slp): the vectors sleap-nn
wrote, within 1e-5 (float32 convolutions summed in another order)."""
import os

import numpy as np
import pytest

import sleapc
from conftest import GOLDENS

FAMILIES = os.path.join(GOLDENS, "sleapnn-0.3.5-families")


def test_embed_matches_sleap_nn(data, tmp_path, monkeypatch):
    h5py = pytest.importorskip("h5py")
    monkeypatch.chdir(data(""))  # the detections name their video relative to the data root
    out = sleapc.embed(os.path.join(FAMILIES, "models", "embedding"),
                       "sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp",
                       tmp_path / "embedded.slp", backend="native")
    with h5py.File(out, "r") as got, \
            h5py.File(os.path.join(FAMILIES, "cases", "embedding__topdown_slp", "pred.slp")) as want:
        assert np.array_equal(got["embeddings/owner_id"][:], want["embeddings/owner_id"][:])
        assert np.abs(got["embeddings/vectors"][:] - want["embeddings/vectors"][:]).max() <= 1e-5


def test_embed_refusals(data, tmp_path):
    with pytest.raises(TypeError, match="unknown option"):
        sleapc.embed(os.path.join(FAMILIES, "models", "embedding"), "x.slp", peak_threshold=0.2)
    with pytest.raises(sleapc.SleapcError, match="not an embedding"):
        sleapc.embed(os.path.join(FAMILIES, "models", "bbox_ssd"),
                     data("sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp"),
                     tmp_path / "x.slp")
