#!/usr/bin/env python3
"""sleapc's native backend (direct and Winograd 3x3 convs) against ONNX Runtime, in one run.

For each network and batch, in interleaved rounds: ORT (CPU execution provider) is timed in
this process, then `sleapc bench --json --conv ...` on the same network (random weights, same
input, threads and batch). Each round's ratio time(ORT) / time(sleapc) compares two medians
measured seconds apart, so a host that slows down for a while (other guests on a shared
machine) slows both sides of it; the table gives the median of the rounds' ratios and their
range. The first round's `sleapc bench` makes auto's plan-time choices and keeps them in the
auto cache, as a user's first run does, so every round runs the same choices. `sleapc bench`
times at least 10 runs a round. Prints a Markdown table: median times, ratios per conv
method, and sleapc's effective GFLOP/s (the direct method's FLOPs / time) against the FMA peak
`sleapc bench` measured in the same run.

ONNX Runtime is a baseline, never a dependency of sleapc: run this with a Python that has
onnxruntime and numpy installed outside the tree (see ../shared/tools/ort/README.md).

python3 bench/ort_compare.py [--sleapc build/sleapc] [--data ../shared/data/bench_configs]
                             [--batch 1,8] [--threads 2] [--runs 5] [--rounds 5]
                             [--convs auto] [--nets centroid,centered_instance,single_instance]
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np
import onnxruntime as ort

NETS = {
    "centroid": ("config_centroid_unet.yaml", "centroid_unet.onnx", 512),
    "centered_instance": ("config_topdown_centered_instance_unet_medium_rf.yaml",
                          "centered_instance_unet_medium_rf.onnx", 192),
    "single_instance": ("config_single_instance_unet_medium_rf.yaml",
                        "single_instance_unet_medium_rf.onnx", 1024),
}


def time_ort(session, batch, size, runs):
    x = (np.arange(batch * size * size, dtype=np.uint64) * 2654435761 >> 24 & 255)
    x = (x.astype(np.float32) / 255).reshape(batch, 1, size, size)
    for _ in range(2):
        session.run(None, {"input": x})
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter()
        session.run(None, {"input": x})
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def time_sleapc(o, config, size, batch, convs, runs):
    args = [o.sleapc, "bench", "--config", os.path.join(o.data, config), "--random-weights",
            "--size", f"{size}x{size}", "--backend", "native", "--batch", str(batch),
            "--threads", str(o.threads), "--runs", str(runs), "--conv", ",".join(convs),
            "--json"]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    j = json.loads(r.stdout)
    return {res["conv"]: res for res in j["results"]}, j["peak_gflops"]["fp32"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sleapc", default="build/sleapc")
    p.add_argument("--data", default="../shared/data/bench_configs")
    p.add_argument("--batch", default="1,8")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=5, help="timed ORT runs per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--convs", default="auto", help="of direct, winograd, auto")
    p.add_argument("--nets", default=",".join(NETS))
    o = p.parse_args()
    convs = o.convs.split(",")
    so = ort.SessionOptions()
    so.intra_op_num_threads = o.threads
    so.inter_op_num_threads = 1
    print(f"ONNX Runtime {ort.__version__}, {o.threads} threads, {o.rounds} rounds of "
          f"{o.runs} runs a side (medians)\n")
    print("| network (input) | batch | ORT | " + " | ".join(convs) + " | "
          + " | ".join(f"ORT / {c} (range)" for c in convs) + " | "
          + f"{convs[-1]} GFLOP/s (% peak) |")
    print("|---|---|---|" + "---|" * (2 * len(convs) + 1))
    med = statistics.median
    for name in o.nets.split(","):
        config, onnx, size = NETS[name]
        session = ort.InferenceSession(os.path.join(o.data, "onnx", onnx), so,
                                       providers=["CPUExecutionProvider"])
        for batch in (int(b) for b in o.batch.split(",")):
            t_ort, ms, ratio, last = [], {c: [] for c in convs}, {c: [] for c in convs}, None
            for _ in range(o.rounds):
                t_ort.append(time_ort(session, batch, size, o.runs))
                res, peak = time_sleapc(o, config, size, batch, convs, max(o.runs, 10))
                for c in convs:
                    ms[c].append(res[c]["ms_median"])
                    ratio[c].append(t_ort[-1] / ms[c][-1])
                last = (res[convs[-1]], peak)
            a, peak = last
            print(f"| {name} ({size}²) | {batch} | {med(t_ort):.1f} ms | "
                  + " | ".join(f"{med(ms[c]):.1f} ms" for c in convs) + " | "
                  + " | ".join(f"**{med(ratio[c]):.2f}** ({min(ratio[c]):.2f}-{max(ratio[c]):.2f})"
                               for c in convs)
                  + f" | {a['gflops_per_s']:.1f} ({100 * a['peak_fraction']:.0f}% of {peak:.0f}) |",
                  flush=True)


if __name__ == "__main__":
    main()
