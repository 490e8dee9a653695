"""Python at parity with `sleapc predict` / `sleapc track`: tracking equal to the CLI's to the
bit, several formats in one call, retracking, Ctrl-C, errors as Python exceptions, progress."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sleapc

CKPTS = "sleap-nn-assets/model_ckpts/"
TOPDOWN = [CKPTS + "minimal_instance_centroid", CKPTS + "minimal_instance_centered_instance"]
VIDEO = "sleap-nn-assets/datasets/centered_pair_small.mp4"
N = 8


def cli_json(cli, out, *args):
    subprocess.run([cli, *map(str, args), "--quiet", "-o", str(out)], check=True)
    with open(out) as f:
        return json.load(f)


def same_as_file(pred, doc):
    """pred holds exactly the frames, poses, scores and tracks of the .json doc."""
    assert [f["frame_idx"] for f in doc["frames"]] == pred.frame_indices.tolist()
    assert pred.track_names == doc["tracks"]
    for f, frame in enumerate(doc["frames"]):
        insts = frame["instances"]
        assert pred.n_instances[f] == len(insts)
        for i, inst in enumerate(insts):
            pts = np.array([[np.nan] * 2 if p is None else p for p in inst["points"]], np.float32)
            np.testing.assert_array_equal(pred.points[f, i], pts)
            assert pred.instance_scores[f, i] == np.float32(inst["score"])
            assert pred.tracks[f, i] == (-1 if inst["track"] is None else inst["track"])


def test_tracking_equals_the_cli_to_the_bit(data, cli, tmp_path):
    models = [data(m) for m in TOPDOWN]
    args = ["predict", "-i", data(VIDEO), "--frames", f"0-{N - 1}", "-b", 2, "-t",
            "--max_tracks", 2, "--tracking_window_size", 3]
    for m in models:
        args += ["-m", m]
    doc = cli_json(cli, tmp_path / "cli.json", *args)
    assert {i["track"] for f in doc["frames"] for i in f["instances"]} == {0, 1}
    pred = sleapc.predict(models, data(VIDEO), tmp_path / "py.slp", frames=f"0-{N - 1}",
                          batch_size=2, tracking=True, max_tracks=2, tracking_window_size=3,
                          output_format=["slp", "json", "csv", "analysis_h5"], progress=False)
    for name in ("py.slp", "py.json", "py.csv", "py.analysis.h5"):
        assert (tmp_path / name).stat().st_size > 0, name
    with open(tmp_path / "py.json") as f:
        written = json.load(f)
    assert written["frames"] == doc["frames"] and written["tracks"] == doc["tracks"]
    same_as_file(pred, doc)
    # The .slp holds the same: read back through the library.
    same_as_file(sleapc.Predictions.read(tmp_path / "py.slp"), doc)


def test_track_retracks_files_and_results(data, cli, tmp_path):
    models = [data(m) for m in TOPDOWN]
    with sleapc.Predictor(models, batch_size=2) as p:
        plain = p.predict_video(data(VIDEO), tmp_path / "plain.slp", frames=range(N),
                                progress=False)
    assert (plain.tracks == -1).all()
    doc = cli_json(cli, tmp_path / "cli.json", "track", "-i", tmp_path / "plain.slp", "-t",
                   "--max_tracks", 2)
    from_file = sleapc.track(tmp_path / "plain.slp", tmp_path / "tracked.json", max_tracks=2)
    with open(tmp_path / "tracked.json") as f:
        assert json.load(f)["frames"] == doc["frames"]
    same_as_file(from_file, doc)
    from_result = sleapc.track(plain, max_tracks=2)
    same_as_file(from_result, doc)
    with pytest.raises(ValueError, match="features"):
        sleapc.track(plain, features="nope")
    with pytest.raises(TypeError, match="unknown option 'max_track'"):
        sleapc.track(plain, max_track=2)


def test_returned_frames_equal_the_file(data, tmp_path):
    with sleapc.Predictor([data(m) for m in TOPDOWN], batch_size=4) as p:
        pred = p.predict_video(data(VIDEO), tmp_path / "out.json", frames=range(10),
                               progress=False)  # 10 frames: the last batch is partial
    with open(tmp_path / "out.json") as f:
        same_as_file(pred, json.load(f))
    assert len(pred) == 10


def test_ctrl_c_stops_after_the_batch_and_keeps_the_frames(data, tmp_path):
    """SIGINT from outside, mid-run: sleapc.Interrupted (a KeyboardInterrupt), the output written
    with the frames done, and the returned frames equal to the file's."""
    script = textwrap.dedent(f"""
        import json, sys
        sys.path[:0] = {sys.path!r}
        import sleapc
        def progress(done, total, fps):
            print("batch", done, flush=True)
        try:
            sleapc.predict({[data(m) for m in TOPDOWN]!r}, {data(VIDEO)!r},
                           {str(tmp_path / "out.json")!r}, batch_size=2, progress=progress)
            print("not interrupted")
        except KeyboardInterrupt as e:
            assert isinstance(e, sleapc.Interrupted)
            on_disk = sleapc.Predictions.read({str(tmp_path / "out.json")!r})
            import numpy as np
            same = (e.predictions.frame_indices.tolist() == on_disk.frame_indices.tolist()
                    and np.array_equal(e.predictions.points, on_disk.points, equal_nan=True)
                    and np.array_equal(e.predictions.instance_scores, on_disk.instance_scores,
                                       equal_nan=True))
            print("interrupted", len(e.predictions), same, e.outputs)
        """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env=os.environ)
    first = proc.stdout.readline()
    assert first.startswith("batch"), first
    proc.send_signal(signal.SIGINT)
    rest = proc.stdout.read().splitlines()
    assert proc.wait(timeout=600) == 0
    last = rest[-1].split(" ", 3)
    assert last[0] == "interrupted", rest
    done = int(last[1])
    assert 2 <= done < 1100 and done % 2 == 0  # whole batches, far from the end
    assert last[2] == "True"


def test_errors_are_python_exceptions(data, tmp_path):
    models = [data(m) for m in TOPDOWN]
    with pytest.raises(FileNotFoundError, match="missing_model"):
        sleapc.Predictor([str(tmp_path / "missing_model")])
    with pytest.raises(ValueError, match="batch_size"):
        sleapc.Predictor(models, batch_size=0)
    with pytest.raises(sleapc.SleapcError, match="banana"):
        sleapc.Predictor(models, device="banana")
    with pytest.raises(ValueError, match="device"):
        sleapc.Predictor(models, device=3)
    with pytest.raises(ValueError, match="precision"):
        sleapc.Predictor(models, precision="fp8")
    p = sleapc.Predictor(models)
    with pytest.raises(FileNotFoundError, match="missing.mp4"):
        p.predict_video(tmp_path / "missing.mp4")
    with pytest.raises(ValueError, match="output_format"):
        p.predict_video(data(VIDEO), tmp_path / "x.slp", output_format="xml", frames=[0])
    with pytest.raises(ValueError, match="frames"):
        p.predict_video(data(VIDEO), frames="5-2")
    with pytest.raises(ValueError, match="tracking_window_size"):
        p.predict_video(data(VIDEO), frames=[0], tracking=True, tracking_window_size="x")
    with pytest.raises(sleapc.SleapcError):  # also a sleapc error
        p.predict_video(tmp_path / "missing.mp4")


def test_options_of_the_cli_are_accepted(data, cli, tmp_path):
    models = [data(m) for m in TOPDOWN]
    doc = cli_json(cli, tmp_path / "cli.json", "predict", "-m", models[0], "-m", models[1],
                   "-i", data(VIDEO), "--frames", "0-3", "--anchor_part", "B",
                   "--precision", "bf16-emulated", "--device", "cpu", "--no_empty_frames",
                   "--queue_maxsize", 4)
    pred = sleapc.predict(models, data(VIDEO), frames=range(4), anchor_part="B",
                          precision="bf16-emulated", device="cpu", no_empty_frames=True,
                          queue_maxsize=4, quiet=True)
    same_as_file(pred, doc)


def test_progress_is_shown_by_default(data, capsys):
    with sleapc.Predictor([data(m) for m in TOPDOWN], batch_size=2) as p:
        p.predict_video(data(VIDEO), frames=range(2))
    err = capsys.readouterr().err
    assert "2/2 frames" in err or "frame" in err


def test_folders_and_lists_expand_as_the_cli_does(data, tmp_path):
    video = data(VIDEO)
    (tmp_path / "videos").mkdir()
    for name in ("b.mp4", "a.mp4"):
        os.symlink(video, tmp_path / "videos" / name)
    (tmp_path / "videos" / "notes.txt").write_text("not a video\n")
    (tmp_path / "list.txt").write_text("# sessions\nvideos/a.mp4\n\nvideos/b.mp4  # second\n")
    models = [data(m) for m in TOPDOWN]
    got = sleapc.predict(models, tmp_path / "videos", frames=[0], progress=False)
    assert [p.video["filename"].endswith(n) for p, n in zip(got, ("a.mp4", "b.mp4"))] == [True] * 2
    listed = sleapc.predict(models, tmp_path / "list.txt", frames=[0], progress=False)
    assert len(listed) == 2
    np.testing.assert_array_equal(listed[0].points, got[0].points)
    with pytest.raises(ValueError, match="output_path names one file"):
        sleapc.predict(models, tmp_path / "videos", tmp_path / "out.slp", frames=[0])


def test_verbose_reports_what_the_library_says(data, capsys):
    sleapc.predict([data(m) for m in TOPDOWN], data(VIDEO), frames=[0], verbose=True, quiet=True,
                   backend="native")
    assert "backend" in capsys.readouterr().err


def test_ctrl_c_stops_predict_on_arrays_after_a_batch(data):
    """SIGINT during Predictor.predict on many frames: sleapc.Interrupted with whole batches."""
    script = textwrap.dedent(f"""
        import os, signal, sys, threading
        sys.path[:0] = {sys.path!r}
        import numpy as np
        import sleapc
        p = sleapc.Predictor({[data(m) for m in TOPDOWN]!r}, batch_size=2)
        frames = np.tile(sleapc.read_frames({data(VIDEO)!r}, range(2)), (200, 1, 1, 1))
        want = p.predict(frames[:2])
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            p.predict(frames)
            print("not interrupted")
        except KeyboardInterrupt as e:
            got = e.predictions
            same = np.array_equal(got.points[:2], want.points, equal_nan=True)
            print("interrupted", len(got), same)
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, env=os.environ)
    assert out.returncode == 0, out.stderr
    last = out.stdout.split()
    assert last[0] == "interrupted", out.stdout
    assert 0 < int(last[1]) < 400 and int(last[1]) % 2 == 0 and last[2] == "True"
