"""sleapc.evaluate and sleapc.evaluate_tracking against sleap-nn's own figures (eval/ cases and
the tracking table of tracking/README.md)."""

import json
import math
import os

import numpy as np
import pytest

import sleapc
from conftest import GOLDENS


def _close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12


def _case(data, name):
    with open(data(f"eval/{name}/expected.json")) as f:
        return json.load(f)


def test_evaluate_matches_sleap_nn(data):
    want = _case(data, "legacy_ci_val")["metrics"]
    base = "sleap-nn-assets/legacy_models/minimal_instance.UNet.centered_instance"
    m = sleapc.evaluate(data(f"{base}/labels_gt.val.slp"), data(f"{base}/labels_pr.val.slp"))
    assert list(m) == list(want)
    assert _close(m["voc_metrics"]["oks_voc.mAP"], want["voc_metrics"]["oks_voc.mAP"])
    assert _close(m["mOKS"]["mOKS"], want["mOKS"]["mOKS"])
    assert isinstance(m["voc_metrics"]["oks_voc.precisions"], np.ndarray)
    assert m["voc_metrics"]["oks_voc.precisions"].shape == (10, 101)
    assert np.allclose(m["distance_metrics"]["dists"], want["distance_metrics"]["dists"],
                       rtol=1e-9, atol=1e-12)
    assert m["pck_metrics"]["pcks"].dtype == bool
    assert m["visibility_metrics"]["tp"] == want["visibility_metrics"]["tp"]


def test_evaluate_centroid_nan_and_none(data, tmp_path):
    want = _case(data, "siwm_val")["metrics"]
    base = "sleap-nn-assets/model_ckpts/single_instance_with_metrics"
    npz = tmp_path / "m.npz"
    m = sleapc.evaluate(data(f"{base}/labels_val_gt_0.slp"), data(f"{base}/pred_val_0.slp"),
                        save_metrics=str(npz))
    assert math.isnan(m["distance_metrics"]["dists"][0, 1])
    assert _close(m["distance_metrics"]["p99"], want["distance_metrics"]["p99"])
    # the .npz as sleap-nn saves it: one pickled dict under "metrics"
    saved = np.load(npz, allow_pickle=True)["metrics"].item()
    assert list(saved) == list(want)
    assert _close(float(saved["voc_metrics"]["oks_voc.mAP"]), want["voc_metrics"]["oks_voc.mAP"])
    assert (tmp_path / "m.json").exists()
    empty = data("eval/sleapc_empty_preds/pred.slp")
    gt = data("sleap-nn-assets/model_ckpts/minimal_instance_bottomup/labels_val_gt_0.slp")
    assert sleapc.evaluate(gt, empty) is None


def test_evaluate_errors(data):
    preds = data("sleap-assets/tracks/clip.predictions.slp")
    with pytest.raises(sleapc.SleapcError, match="Empty Frame Pairs"):
        sleapc.evaluate(preds, preds)
    with pytest.raises(sleapc.SleapcError, match="skeletons differ"):
        sleapc.evaluate(data("sleap-assets/tracks/clip.slp"), preds, match_method="oks")


def test_evaluate_tracking_table(data, tmp_path):
    report = tmp_path / "t.html"
    # sleapc's earlier table (compat 0.3.3): mean distance over the shared nodes.
    t = sleapc.evaluate_tracking(data("sleap-assets/tracks/clip.slp"),
                                 data("sleap-assets/tracks/clip.predictions.slp"),
                                 report=str(report), compat="0.3.3")
    assert round(t["idf1"], 4) == 0.9116
    assert t["id_switches"] == 15
    assert t["n_pred_tracks"] == 2
    assert os.path.getsize(report) > 1000


def test_evaluate_bbox_matches_sleap_nn():
    """Box metrics of a box case against sleap-nn's run (tests/goldens/sleapnn-0.3.5-families)."""
    fam = os.path.join(GOLDENS, "sleapnn-0.3.5-families")
    with open(os.path.join(fam, "eval", "bbox_centernet__video_pad8", "metrics.json")) as f:
        want = json.load(f)
    m = sleapc.evaluate(os.path.join(fam, "eval", "gt.slp"),
                        os.path.join(fam, "cases", "bbox_centernet__video", "pred.slp"),
                        bbox_padding=8)
    assert list(m) == list(want)
    assert _close(m["bbox_mAP"], want["bbox_mAP"]) and m["n_gt"] == want["n_gt"] == 40
    assert m["categories"] == ["object"] and m["ap_per_class"].shape == (1, 10)
    assert np.allclose(m["pr_curve"]["precision"], want["pr_curve"]["precision"],
                       rtol=0, atol=1e-9)
