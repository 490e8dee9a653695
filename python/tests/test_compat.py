"""The sleap-nn release reproduced (compat): frames as sleap-io 0.9.5 decodes them by
default, the 0.3.3 reference decoding on request, and --video_index as sleap-nn 0.3.5
reads it (the whole video of a labels file)."""
import os

import numpy as np
import pytest

import sleapc
from conftest import GOLDENS

SI = "sleap-nn-assets/model_ckpts/minimal_instance_single_instance"
SLP = "sleap-nn-assets/datasets/small_robot_minimal.slp"


def test_read_frames_as_sleap_io(data):
    want = np.load(data("sleapnn-0.3.5/frames/small_robot.sleap_io.f0000-0019.npy"))
    got = sleapc.read_frames(data("sleap-nn-assets/datasets/small_robot.mp4"), range(20))
    assert got.shape == want.shape
    assert np.array_equal(got, want)  # the same libswscale conversion: exact


def test_read_frames_0_3_3_differs(data):
    want = np.load(data("sleapnn-0.3.5/frames/small_robot.sleap_io.f0000-0019.npy"))
    old = sleapc.read_frames(data("sleap-nn-assets/datasets/small_robot.mp4"), [0],
                             compat="0.3.3")
    # BT.601 forced on a BT.709 video: tens of grey levels apart (frames/README.md).
    assert np.abs(old[0].astype(int) - want[0].astype(int)).max() > 10
    with pytest.raises(ValueError):
        sleapc.read_frames(data("sleap-nn-assets/datasets/small_robot.mp4"), [0],
                           compat="0.3.4")


@pytest.mark.parametrize("kw,n", [({"video_index": 0}, 166),
                                  ({"video_index": 0, "exclude_user_labeled": True}, 164),
                                  ({}, 2)])
def test_video_index_whole_video(data, kw, n):
    with sleapc.Predictor(data(SI), threads=2) as p:
        r = p.predict_video(data(SLP), **kw)
    assert len(r) == n


def test_frames_on_labels_are_positions(data):
    # sleap-nn 0.3.5's LabelsProvider: positions in the labeled-frame list.
    labeled = [0, 79]  # small_robot_minimal.slp's labeled frames (checked below)
    with sleapc.Predictor(data(SI), threads=2) as p:
        assert list(p.predict_video(data(SLP)).frame_indices) == labeled
        assert list(p.predict_video(data(SLP), frames=[1]).frame_indices) == labeled[1:]
        with pytest.warns(UserWarning, match="past them skipped"):
            assert list(p.predict_video(data(SLP), frames=[1, 5]).frame_indices) == labeled[1:]
        with pytest.warns(UserWarning, match="does not apply"):
            r = p.predict_video(data(SLP), frames=[1], only_labeled_frames=True)
        assert list(r.frame_indices) == labeled
    with sleapc.Predictor(data(SI), threads=2, compat="0.3.3") as p:
        assert list(p.predict_video(data(SLP), frames=[1]).frame_indices) == [1]


def test_video_index_0_3_3(data):
    with sleapc.Predictor(data(SI), threads=2, compat="0.3.3") as p:
        r = p.predict_video(data(SLP), video_index=0)
    assert len(r) == 2  # 0.3.3: the labelled frames of that video


def test_lone_centered_instance_refused(data):
    # As the command line: a centered-instance model alone predicts on crops; whole frames
    # larger than its crop are refused, never run as if they were crops.
    ci = data("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance")
    with sleapc.Predictor(ci, threads=2) as p:
        with pytest.raises(ValueError, match="centered-instance model alone"):
            p.predict_video(data("sleap-nn-assets/datasets/centered_pair_small.mp4"),
                            frames="0-3")


def test_lone_centered_instance_whole_frames_refused(data):
    # Frames given as arrays follow the same rule: no labels, no crops around them.
    ci = data("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance")
    frames = sleapc.read_frames(data("sleap-nn-assets/datasets/small_robot.mp4"), [0])
    with sleapc.Predictor(ci, threads=2) as p:
        with pytest.raises(ValueError, match="centered-instance model alone"):
            p.predict(frames)


def test_lone_centered_instance_on_labels(data):
    # sleap-nn 0.3.5's ground-truth crops: one instance per user instance, score 1
    # (tests/goldens/sleapnn-0.3.5-gt-crops).
    import json

    case = os.path.join(GOLDENS, "sleapnn-0.3.5-gt-crops",
                        "centered_instance__minimal_instance_pkg_slp__gt_crops", "expected.json")
    with open(case) as f:
        want = json.load(f)["frames"][0]["instances"]
    ci = data("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance")
    with sleapc.Predictor(ci, threads=2) as p:
        r = p.predict_video(data("sleap-nn-assets/datasets/minimal_instance.pkg.slp"))
    assert list(r.frame_indices) == [0] and list(r.n_instances) == [2]
    assert np.all(r.instance_scores[0] == 1.0)
    for i, w in enumerate(want):
        assert np.abs(r.points[0, i] - np.asarray(w["points"])).max() < 0.02
