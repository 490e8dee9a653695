#!/usr/bin/env python3
"""sleap-nn (in-process, frames decoded beforehand) against `sleapc predict` (the whole
process: loading, decoding, writing), on the same video frames, in interleaved rounds.

Run it with the Python of a venv that has sleap-nn from PyPI (`python3 -m venv V &&
V/bin/pip install sleap-nn`): sleap-nn's own Predictor is timed as its users call it, and
the frames come from sleap-io, as sleap-nn decodes them.

    V/bin/python bench/sleapnn_compare.py --sleapc build/sleapc --video VIDEO --frames 200 \\
        --threads 2 --batch 4 --rounds 3 -m CENTROID_DIR -m CENTERED_INSTANCE_DIR \\
        [--variant default: --variant native:--backend native]

Each --variant NAME:ARGS is a `sleapc predict` run with extra arguments; "fresh" in its name
gives it an empty auto cache each round (SLEAPC_CACHE_DIR in a new folder), otherwise the
cache is the one the variant's first round filled. Prints one JSON line per timing and a
summary: the median seconds of each, and time(sleap-nn)/time(variant) pair by pair.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time


def sleapnn_seconds(models, frames, threads, batch):
    import torch
    from sleap_nn.inference.predictor import Predictor
    from sleap_nn.inference.providers import NumpyProvider

    torch.set_num_threads(threads)
    pred = Predictor.from_model_paths(models, device="cpu", batch_size=batch)
    pred.predict(NumpyProvider(frames[:batch], batch_size=batch), make_labels=False)  # warm-up
    t0 = time.perf_counter()
    pred.predict(NumpyProvider(frames, batch_size=batch), make_labels=False)
    return time.perf_counter() - t0


def sleapc_seconds(cli, video, n, models, threads, batch, extra, cache_dir, out_dir):
    cmd = [cli, "predict", "-i", video, "--frames", f"0-{n - 1}", "-o",
           os.path.join(out_dir, "pred.slp"), "--threads", str(threads), "-b", str(batch), "-q"]
    for m in models:
        cmd += ["-m", m]
    cmd += extra
    env = dict(os.environ, SLEAPC_CACHE_DIR=cache_dir)
    env.pop("SLEAPC_NO_CACHE", None)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sleapc", required=True)
    ap.add_argument("--video", required=True)
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-m", dest="models", action="append", required=True)
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME:EXTRA ARGS for sleapc predict (default: 'default:')")
    a = ap.parse_args()
    variants = [v.split(":", 1) for v in (a.variant or ["default:"])]

    import numpy as np
    import sleap_io as sio

    video = sio.load_video(a.video)
    frames = np.stack([video[i] for i in range(a.frames)])
    work = tempfile.mkdtemp(prefix="sleapnn_compare_")
    warm_cache = {name: tempfile.mkdtemp(dir=work) for name, _ in variants}
    times = {"sleap-nn": []}
    times.update({name: [] for name, _ in variants})
    for r in range(a.rounds):
        t = sleapnn_seconds(a.models, frames, a.threads, a.batch)
        times["sleap-nn"].append(t)
        print(json.dumps({"round": r, "run": "sleap-nn", "seconds": t}), flush=True)
        for name, extra in variants:
            cache = tempfile.mkdtemp(dir=work) if "fresh" in name else warm_cache[name]
            t = sleapc_seconds(a.sleapc, a.video, a.frames, a.models, a.threads, a.batch,
                               shlex.split(extra), cache, work)
            times[name].append(t)
            print(json.dumps({"round": r, "run": name, "seconds": t}), flush=True)
    summary = {"frames": a.frames, "threads": a.threads, "batch": a.batch,
               "median_s": {k: statistics.median(v) for k, v in times.items()}}
    base = times["sleap-nn"]
    summary["sleapnn_over"] = {name: statistics.median(b / x for b, x in zip(base, times[name]))
                               for name, _ in variants}
    import sleap_nn
    import torch
    summary["versions"] = {"sleap_nn": sleap_nn.__version__, "torch": torch.__version__}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
