#!/usr/bin/env python3
"""Network speed on one GPU: sleapc's Vulkan backend (fp32 and fp16) against
PyTorch CUDA eager (fp32 and fp16) on the same training configs, batch sizes
and input sizes, with the same random-weight networks' shapes.

usage: torch_compare.py SLEAPC CONFIG.yaml [CONFIG.yaml ...] [--batch 1,8,32]
                        [--runs 20] [--dry-run]

sleapc's side is `sleapc bench --config CFG --random-weights --json` (median of
--runs forwards after its warm-up). PyTorch's side builds the same network
from the same config as sleap-nn builds it (sleap-nn itself is not installed
on the GPU machine, and its model classes need omegaconf and its config
types): the UNet of "same" kxk conv + ReLU blocks, 2x2 max pools, the middle
block, a bilinear x2 or transposed-conv decoder with the skip concatenated
first, and 1x1 heads at their strides. Both sides count the same GFLOP per
frame (printed: a mismatch says NOT THE SAME NETWORK). PyTorch's time is
the median of --runs forwards, timed with CUDA events, after 5 warm-up
forwards under torch.inference_mode(); fp16 is the model and
input in torch.float16 (.half()). Input: the size sleapc bench reports for the
config; the heads have sleapc bench's default 13 nodes (12 PAF edges).
Prints one line per (config, batch) with the ms of each and the ratios
time(PyTorch) / time(sleapc) at equal precision (> 1: sleapc is faster).

--dry-run (no CUDA needed): sleapc's native backend at batch 1 in place of
Vulkan, PyTorch on the CPU timed with perf_counter, 3 runs: checks the script,
the model building and the parsing, not speed.
"""
import argparse
import json
import math
import statistics
import subprocess
import sys
import time

import yaml

N_NODES = 13  # sleapc bench --nodes default


def sleapc_bench(sleapc, cfg, backend, precisions, batches, runs):
    """{(precision, batch): ms median}, the input (c, h, w) sleapc used and
    its GFLOP per frame."""
    cmd = [sleapc, "bench", "--config", cfg, "--random-weights", "--backend", backend,
           "--precision", ",".join(precisions), "--batch", ",".join(map(str, batches)),
           "--runs", str(runs), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), out.stderr.strip()))
    doc = json.loads(out.stdout)
    doc = doc[0] if isinstance(doc, list) else doc
    ms = {}
    for r in doc["results"]:
        if "ms_median" in r:
            ms[(r["precision"], r["batch"])] = r["ms_median"]
    return ms, tuple(doc["input"]), doc["gflop_per_frame"]


def build_torch_model(cfg_path):
    """The network of a training config as a torch.nn.Module returning a
    list of head outputs, built as sleap-nn builds it (architectures.md:
    UNet, encoder_decoder, heads); (module, how it was built)."""
    import torch
    from torch import nn
    import torch.nn.functional as F

    cfg = yaml.safe_load(open(cfg_path))["model_config"]
    u = cfg["backbone_config"]["unet"]
    heads = {k: v for k, v in cfg["head_configs"].items() if v}
    (model_type, hcfg), = heads.items()

    k, filters, rate = u["kernel_size"], u["filters"], u["filters_rate"]
    max_stride, out_stride = u["max_stride"], u["output_stride"]
    cpb, interp, cin = u["convs_per_block"], u["up_interpolate"], u["in_channels"]
    D = int(round(math.log2(max_stride)))
    U = int(round(math.log2(max_stride / out_stride)))
    width = [int(filters * rate ** b) for b in range(D + 1)]

    def convs(c_in, c_out, n):
        layers = []
        for i in range(n):
            layers += [nn.Conv2d(c_in if i == 0 else c_out, c_out, k, padding=k // 2), nn.ReLU()]
        return nn.Sequential(*layers)

    # Head channels and strides, as sleapc's random-weight models make them.
    head_list = []
    for name, sub in hcfg.items():
        n = 1 if model_type == "centroid" else N_NODES
        if name == "pafs":
            n = 2 * (N_NODES - 1)
        head_list.append((n, sub["output_stride"]))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.ModuleList(convs(cin if b == 0 else width[b - 1], width[b], cpb)
                                     for b in range(D))
            mid = [convs(width[D - 1], width[D], cpb - 1)] if cpb > 1 else []
            self.mid = nn.Sequential(*mid, convs(width[D], width[D], 1))
            self.up, self.dec = nn.ModuleList(), nn.ModuleList()
            x_in, self.stride_width = width[D], {max_stride: width[D]}
            for j in range(U):
                g = width[max(0, D - 1 - j)]
                self.up.append(nn.Identity() if interp else nn.Sequential(
                    nn.ConvTranspose2d(x_in, g, 3, stride=2, padding=1, output_padding=1),
                    nn.ReLU()))
                skip = width[D - 1 - j] if j < D else 0
                self.dec.append(convs((x_in if interp else g) + skip, g, cpb))
                x_in = g
                self.stride_width[max_stride >> (j + 1)] = g
            self.heads = nn.ModuleList(nn.Conv2d(self.stride_width[s], n, 1)
                                       for n, s in head_list)
            self.head_strides = [s for _, s in head_list]

        def forward(self, x):
            skips = []
            for b, blk in enumerate(self.enc):
                if b > 0:
                    x = F.max_pool2d(x, 2)
                x = blk(x)
                skips.append(x)
            x = self.mid(F.max_pool2d(x, 2))
            by_stride = {max_stride: x}
            for j in range(U):
                if interp:
                    x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
                else:
                    x = self.up[j](x)
                if j < D:
                    s = skips[D - 1 - j]
                    if x.shape[-2:] != s.shape[-2:]:
                        x = F.interpolate(x, size=s.shape[-2:], mode="bilinear",
                                          align_corners=False)
                    x = torch.cat([s, x], 1)
                x = self.dec[j](x)
                by_stride[max_stride >> (j + 1)] = x
            return [h(by_stride[s]) for h, s in zip(self.heads, self.head_strides)]

    return UNet(), "UNet built from the config"


def torch_gflop(model, shape):
    """Multiply-adds x 2 of the convolutions for one frame, on the CPU: the
    check that both sides run the same network (sleapc bench's
    gflop_per_frame counts the same way)."""
    import torch
    total = [0]

    def hook(mod, inp, out):
        k = mod.weight.shape[2] * mod.weight.shape[3]
        c_in = inp[0].shape[1]
        n_out = out.shape[1] * out.shape[2] * out.shape[3]
        if isinstance(mod, torch.nn.ConvTranspose2d):  # every input pixel x every tap
            n_out = inp[0].shape[2] * inp[0].shape[3] * out.shape[1]
        total[0] += 2 * c_in * k * n_out
    hs = [m.register_forward_hook(hook) for m in model.modules()
          if isinstance(m, (torch.nn.Conv2d, torch.nn.ConvTranspose2d))]
    with torch.inference_mode():
        model.float().cpu()(torch.zeros((1,) + tuple(shape)))
    for h in hs:
        h.remove()
    return total[0] * 1e-9


def torch_ms(model, shape, half, runs, dry):
    import torch
    dev = "cpu" if dry else "cuda"
    dtype = torch.float16 if half else torch.float32
    m = model.to(dev, dtype).eval()
    x = torch.rand(shape, device=dev, dtype=dtype)
    times = []
    with torch.inference_mode():
        for _ in range(1 if dry else 5):
            m(x)
        for _ in range(runs):
            if dry:
                t0 = time.perf_counter()
                m(x)
                times.append((time.perf_counter() - t0) * 1e3)
            else:
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                m(x)
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sleapc")
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--batch", default="1,8,32")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    import torch
    batches = [int(b) for b in a.batch.split(",")]
    runs = a.runs
    backend, precs = "vulkan", ["fp32", "fp16"]
    if a.dry_run:
        batches, runs, backend, precs = [1], 10, "native", ["fp32"]
    elif not torch.cuda.is_available():
        sys.exit("torch_compare: PyTorch sees no CUDA device (--dry-run checks without one)")
    print("torch %s on %s; sleapc backend %s" % (
        torch.__version__, "cpu (dry run)" if a.dry_run else torch.cuda.get_device_name(0),
        backend))
    print("%-46s %5s %11s %11s %11s %11s %8s %8s" % (
        "config", "batch", "sleapc fp32", "sleapc fp16", "torch fp32", "torch fp16",
        "pt/sl 32", "pt/sl 16"))
    for cfg in a.configs:
        ms, (c, h, w), gflop = sleapc_bench(a.sleapc, cfg, backend, precs, batches, runs)
        model, how = build_torch_model(cfg)
        tg = torch_gflop(model, (c, h, w))
        for b in batches:
            t32 = torch_ms(model, (b, c, h, w), False, 3 if a.dry_run else runs, a.dry_run)
            t16 = None if a.dry_run else torch_ms(model, (b, c, h, w), True, runs, False)
            s32, s16 = ms.get(("fp32", b)), ms.get(("fp16", b))

            def f(v):
                return "%11.3f" % v if v else "%11s" % "-"

            def r(p, s):
                return "%8.2f" % (p / s) if p and s else "%8s" % "-"
            name = cfg.rsplit("/", 1)[-1]
            print("%-46s %5d %s %s %s %s %s %s" % (name, b, f(s32), f(s16), f(t32), f(t16),
                                                   r(t32, s32), r(t16, s16)))
        print("  (%s, input %dx%dx%d, GFLOP per frame: sleapc %.3f, torch %.3f%s)" % (
            how, c, h, w, gflop, tg, "" if abs(tg - gflop) <= 0.01 * gflop else
            " -- NOT THE SAME NETWORK"))
        del model
        if not a.dry_run:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
