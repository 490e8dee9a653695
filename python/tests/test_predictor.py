"""The Python package against the command line on real videos and models.

The package and `sleapc predict` run the same library code on the same frames with the same
batches, so the poses must be identical (the CLI's .json round-trips float32 exactly)."""

import json
import subprocess

import numpy as np
import pytest

import sleapc

CKPTS = "sleap-nn-assets/model_ckpts/"
CASES = {
    "topdown": (["minimal_instance_centroid", "minimal_instance_centered_instance"],
                "sleap-nn-assets/datasets/centered_pair_small.mp4"),
    "single_instance": (["minimal_instance_single_instance"],
                        "sleap-nn-assets/datasets/small_robot.mp4"),
}
N_FRAMES = 4


def models_of(data, case):
    return [data(CKPTS + m) for m in CASES[case][0]]


def run_cli(cli, models, source, out, *options):
    args = [cli, "predict", "-i", str(source), "-o", str(out), "--quiet"]
    for m in models:
        args += ["-m", m]
    subprocess.run(args + [str(o) for o in options], check=True)
    with open(out) as f:
        return json.load(f)


def assert_same(pred, doc, frame_indices):
    """pred (sleapc.Predictions) holds exactly the CLI's .json frames."""
    frames = doc["frames"]
    assert [f["frame_idx"] for f in frames] == list(frame_indices)
    assert list(pred.frame_indices) == list(frame_indices)
    assert pred.node_names == doc["skeleton"]["nodes"]
    for f, frame in enumerate(frames):
        insts = frame["instances"]
        assert pred.n_instances[f] == len(insts)
        for i, inst in enumerate(insts):
            want = np.array([[np.nan, np.nan] if p is None else p for p in inst["points"]],
                            dtype=np.float32)
            np.testing.assert_array_equal(pred.points[f, i], want)
            scores = np.array([np.nan if s is None else s for s in inst["point_scores"]],
                              dtype=np.float32)
            np.testing.assert_array_equal(pred.point_scores[f, i], scores)
            assert pred.instance_scores[f, i] == np.float32(inst["score"])
            assert pred.tracks[f, i] == (-1 if inst["track"] is None else inst["track"])
        assert np.isnan(pred.points[f, len(insts):]).all()


@pytest.mark.parametrize("case", sorted(CASES))
def test_predict_arrays_match_cli(data, cli, tmp_path, case):
    video = data(CASES[case][1])
    frames = sleapc.read_frames(video, range(N_FRAMES))
    assert frames.dtype == np.uint8 and frames.ndim == 4 and frames.shape[0] == N_FRAMES
    np.save(tmp_path / "frames.npy", frames)
    doc = run_cli(cli, models_of(data, case), tmp_path / "frames.npy", tmp_path / "cli.json",
                  "--batch_size", 2)
    with sleapc.Predictor(models_of(data, case), batch_size=2) as predictor:
        pred = predictor.predict(frames)
    assert pred.points.shape[0] == N_FRAMES and pred.points.shape[2:] == (len(pred.node_names), 2)
    assert pred.n_instances.sum() >= N_FRAMES  # an animal in every frame of these clips
    assert_same(pred, doc, range(N_FRAMES))


def test_predict_video_matches_cli(data, cli, tmp_path):
    models = models_of(data, "topdown")
    video = data(CASES["topdown"][1])
    doc = run_cli(cli, models, video, tmp_path / "cli.json", "--frames", f"0-{N_FRAMES - 1}",
                  "--batch_size", 2, "--peak_threshold", 0.3)
    seen = []
    predictor = sleapc.Predictor(models, batch_size=2, peak_threshold=0.3)
    pred = predictor.predict_video(video, output=tmp_path / "py.json", frames=range(N_FRAMES),
                                   progress=lambda done, total, fps: seen.append((done, total)))
    assert seen == [(2, N_FRAMES), (4, N_FRAMES)]
    assert pred.video["n_frames"] > N_FRAMES
    assert_same(pred, doc, range(N_FRAMES))
    # The file it wrote is the CLI's, up to the provenance.
    with open(tmp_path / "py.json") as f:
        written = json.load(f)
    assert written["frames"] == doc["frames"]
    assert written["skeleton"] == doc["skeleton"]


def test_options_take_the_cli_names(data, cli, tmp_path):
    models = models_of(data, "topdown")
    video = data(CASES["topdown"][1])
    doc = run_cli(cli, models, video, tmp_path / "cli.json", "--frames", "0-3", "--max_instances",
                  1, "--integral_refinement", "none", "--backend", "native", "--threads", 1)
    predictor = sleapc.Predictor(models, max_instances=1, integral_refinement="none",
                                 backend="native", threads=1)
    pred = predictor.predict_video(video, frames=range(4))
    assert pred.n_instances.tolist() == [1, 1, 1, 1]
    assert_same(pred, doc, range(4))


def test_bad_calls_raise_clear_errors(data, tmp_path):
    models = models_of(data, "single_instance")
    with pytest.raises(TypeError, match="unknown option 'batchsize'"):
        sleapc.Predictor(models, batchsize=4)
    with pytest.raises(sleapc.SleapcError, match="batch_size 0"):
        sleapc.Predictor(models, batch_size=0)
    with pytest.raises(sleapc.SleapcError) as e:
        sleapc.Predictor([str(tmp_path / "missing")])
    assert "missing" in str(e.value)
    predictor = sleapc.Predictor(models)
    with pytest.raises(TypeError, match="uint8"):
        predictor.predict(np.zeros((1, 64, 64, 1), dtype=np.float32))
    with pytest.raises(ValueError, match="channels"):
        predictor.predict(np.zeros((1, 64, 64, 4), dtype=np.uint8))
    with pytest.raises(sleapc.SleapcError):
        predictor.predict_video(str(tmp_path / "missing.mp4"))


def test_progress_exception_stops_and_keeps_the_file(data, tmp_path):
    models = models_of(data, "single_instance")
    video = data(CASES["single_instance"][1])
    predictor = sleapc.Predictor(models, batch_size=2)

    def stop_after_first_batch(done, total, fps):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        predictor.predict_video(video, output=tmp_path / "part.json", frames=range(N_FRAMES),
                                progress=stop_after_first_batch)
    with open(tmp_path / "part.json") as f:
        written = json.load(f)
    assert [fr["frame_idx"] for fr in written["frames"]] == [0, 1]


def test_predict_frame_takes_camera_layouts(data):
    """One frame at a time, from a padded BGR buffer and as gray: the poses of predict();
    predict() of BGR frames too."""
    video = data(CASES["single_instance"][1])
    rgb = sleapc.read_frames(video, [3])[0]
    predictor = sleapc.Predictor(models_of(data, "single_instance"))
    want = predictor.predict(rgb)
    buffer = np.zeros((rgb.shape[0], rgb.shape[1] + 5, 3), np.uint8)
    buffer[:, :rgb.shape[1]] = rgb[:, :, ::-1]
    got = predictor.predict_frame(buffer[:, :rgb.shape[1]], pixel_format="bgr")
    assert got.n_instances[0] == want.n_instances[0] >= 1
    np.testing.assert_array_equal(got.points, want.points)
    np.testing.assert_array_equal(got.instance_scores, want.instance_scores)
    assert predictor.last_timing["total_ms"] > 0
    gray = np.ascontiguousarray(rgb[:, :, 1])
    np.testing.assert_array_equal(predictor.predict_frame(gray).points,
                                  predictor.predict(gray).points)
    with pytest.raises(ValueError, match="pixel_format"):
        predictor.predict_frame(rgb, pixel_format="gray")
    bgr = predictor.predict(np.stack([rgb[:, :, ::-1]] * 2), pixel_format="bgr")
    np.testing.assert_array_equal(bgr.points, np.concatenate([want.points] * 2))


def test_shared_model_on_two_threads_matches_own_loads(data):
    """One load of the models serves two predictors running at once, bit for bit."""
    import threading

    models = models_of(data, "topdown")
    frames = sleapc.read_frames(data(CASES["topdown"][1]), list(range(N_FRAMES)))
    opts = dict(batch_size=2, backend="native", threads=1)
    with sleapc.Predictor(models, **opts) as own:
        want = own.predict(frames)
    shared = [sleapc.Model(m) for m in models]
    assert [m.type for m in shared] == ["centroid", "centered_instance"]
    predictors = [sleapc.Predictor(shared, **opts) for _ in range(2)]
    got = [None, None]

    def run(i):
        got[i] = predictors[i].predict(frames)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g in got:
        np.testing.assert_array_equal(g.points, want.points)
        np.testing.assert_array_equal(g.point_scores, want.point_scores)
    for p in predictors:
        p.close()
    for m in shared:
        m.close()
    with pytest.raises(TypeError, match="not both"):
        sleapc.Predictor([sleapc.Model(models[0]), models[1]])


def test_warmup_leaves_results_alone(data):
    models = models_of(data, "topdown")
    frame = sleapc.read_frames(data(CASES["topdown"][1]), [1])[0]
    with sleapc.Predictor(models, batch_size=1, backend="native") as cold, \
            sleapc.Predictor(models, batch_size=1, backend="native") as warm:
        warm.warmup(*frame.shape[:2], frame.shape[2] if frame.ndim == 3 else 1, n_frames=1)
        a, b = cold.predict_frame(frame), warm.predict_frame(frame)
        np.testing.assert_array_equal(a.points, b.points)
        with pytest.raises(sleapc.SleapcError, match="warm up"):
            warm.warmup(10, 10, channels=2)


def test_predict_video_reads_a_named_pipe_like_the_file(data, tmp_path):
    """A live source: the clip's bytes through a named pipe, frames as they come."""
    import ctypes
    import os
    import threading

    from sleapc._lib import DTYPE_U8, Tensor, check, lib

    frames = np.ascontiguousarray(sleapc.read_frames(data(CASES["single_instance"][1]),
                                                     range(N_FRAMES)))
    clip = tmp_path / "clip.mkv"
    t = Tensor(DTYPE_U8, 4, (ctypes.c_int64 * 6)(*frames.shape),
               frames.ctypes.data_as(ctypes.c_void_p))
    lib.sleapc_video_write.restype = ctypes.c_int
    lib.sleapc_video_write.argtypes = [ctypes.c_char_p, ctypes.POINTER(Tensor), ctypes.c_double,
                                       ctypes.c_bool]
    check(lib.sleapc_video_write(os.fsencode(clip), ctypes.byref(t), 15.0, False))
    fifo = tmp_path / "camera.fifo"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as f:
            f.write(clip.read_bytes())

    models = models_of(data, "single_instance")
    with sleapc.Predictor(models, batch_size=2, backend="native") as predictor:
        want = predictor.predict_video(clip)
        feeder = threading.Thread(target=feed)
        feeder.start()
        totals = []
        got = predictor.predict_video(fifo, output=tmp_path / "live.json",
                                      progress=lambda done, total, fps: totals.append(total))
        feeder.join()
    assert list(got.frame_indices) == list(range(N_FRAMES)) == list(want.frame_indices)
    np.testing.assert_array_equal(got.points, want.points)
    assert set(totals) == {0}  # no frame count for a live source
    with open(tmp_path / "live.json") as f:
        doc = json.load(f)
    assert len(doc["frames"]) == N_FRAMES
