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


def test_embed_and_track_matches_sleap_nn(data, tmp_path, monkeypatch):
    """tracking=True: the lone route with --tracking --tracker deepsort (case
    embed_track__deepsort_keep): sleap-nn's tracks, vectors kept."""
    import json

    monkeypatch.chdir(data(""))
    out = sleapc.embed(os.path.join(FAMILIES, "models", "embedding"),
                       "sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp",
                       tmp_path / "tracked.slp", tracking=True, tracker="deepsort",
                       backend="native")
    with open(os.path.join(FAMILIES, "cases", "embed_track__deepsort_keep", "expected.json")) as f:
        want = json.load(f)
    got = sleapc.Predictions.read(out)
    names = [[i["track"] for i in fr["instances"]] for fr in want["frames"]]
    def name(t):
        return got.track_names[t] if t >= 0 else None

    assert [[name(got.tracks[f, i]) for i in range(got.n_instances[f])]
            for f in range(len(got.frame_indices))] == names
    with pytest.raises(ValueError, match="writes nothing"):
        sleapc.embed(os.path.join(FAMILIES, "models", "embedding"), "x.slp",
                     save_embeddings=False)
