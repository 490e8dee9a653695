#!/usr/bin/env python3
"""sleapc's native backend (direct and Winograd 3x3 convs) against ONNX Runtime, in one run.

For each network and batch: ORT (CPU execution provider) is timed in this process, then
`sleapc bench --json --conv direct,winograd,auto` on the same network (random weights, same
input, threads and batch), then ORT again; the ratio uses the mean of the two ORT medians, so
load from elsewhere falls on both sides. Prints a Markdown table: median times,
time(ORT) / time(sleapc) per conv method, and sleapc's effective GFLOP/s (the direct method's
FLOPs / time) against the FMA peak `sleapc bench` measured in the same run.

ONNX Runtime is a baseline, never a dependency of sleapc: run this with a Python that has
onnxruntime and numpy installed outside the tree (see ../shared/tools/ort/README.md).

python3 bench/ort_compare.py [--sleapc build/sleapc] [--data ../shared/data/bench_configs]
                             [--batch 1,8] [--threads 2] [--runs 10]
                             [--nets centroid,centered_instance,single_instance]
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
CONVS = ["direct", "winograd", "auto"]


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


def time_sleapc(o, config, size, batch):
    args = [o.sleapc, "bench", "--config", os.path.join(o.data, config), "--random-weights",
            "--size", f"{size}x{size}", "--backend", "native", "--batch", str(batch),
            "--threads", str(o.threads), "--runs", str(max(o.runs, 10)), "--conv",
            ",".join(CONVS), "--json"]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    j = json.loads(r.stdout)
    return {res["conv"]: res for res in j["results"]}, j["peak_gflops"]["fp32"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sleapc", default="build/sleapc")
    p.add_argument("--data", default="../shared/data/bench_configs")
    p.add_argument("--batch", default="1,8")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--nets", default=",".join(NETS))
    o = p.parse_args()
    so = ort.SessionOptions()
    so.intra_op_num_threads = o.threads
    so.inter_op_num_threads = 1
    print(f"ONNX Runtime {ort.__version__}, {o.threads} threads, median of {o.runs} runs\n")
    print("| network (input) | batch | ORT | direct | winograd | auto | ORT / direct | "
          "ORT / winograd | ORT / auto | auto GFLOP/s (% peak) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in o.nets.split(","):
        config, onnx, size = NETS[name]
        session = ort.InferenceSession(os.path.join(o.data, "onnx", onnx), so,
                                       providers=["CPUExecutionProvider"])
        for batch in (int(b) for b in o.batch.split(",")):
            t_ort = time_ort(session, batch, size, o.runs)
            res, peak = time_sleapc(o, config, size, batch)
            t_ort = 0.5 * (t_ort + time_ort(session, batch, size, o.runs))
            ms = {c: res[c]["ms_median"] for c in CONVS}
            a = res["auto"]
            print(f"| {name} ({size}²) | {batch} | {t_ort:.1f} ms | "
                  + " | ".join(f"{ms[c]:.1f} ms" for c in CONVS) + " | "
                  + " | ".join(f"{t_ort / ms[c]:.2f}" for c in CONVS)
                  + f" | {a['gflops_per_s']:.1f} ({100 * a['peak_fraction']:.0f}% of {peak:.0f}) |",
                  flush=True)


if __name__ == "__main__":
    main()
