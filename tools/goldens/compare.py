#!/usr/bin/env python3
"""Compare regenerated reference data with a stored copy.

    python3 tools/goldens/compare.py --ref ../shared/data/sleapnn-0.3.5 --new OUTDIR [--only predict,...]

Tolerances (defaults; see --help):
* exact: counts, frame indices, instance counts, the null pattern, track
  names, skeletons, commands, error types and messages, array shapes/dtypes,
  integer and boolean values;
* scores (`score`, `point_scores`, `tracking_score`, `*_vals`, metrics ...):
  |a - b| <= rel * max(|a|, |b|) + abs, with rel 1e-9 and abs 1e-12;
* points / coordinates in predict/: |a - b| <= --point-tol px (default 0: the
  same software must give the same points);
* frames: .npy files byte-equal, .npz arrays equal;
* exports: ORT outputs equal within --ort-rtol (default 0), NaN where NaN.

Values that depend on the machine or the moment (timestamps, wall times,
package versions, sha256 of files that embed them, sleap-nn log lines) are
listed as notes, not failures. Exit status 1 when a failure was found.
Needs only numpy: the .slp files are compared through their expected.json.
"""

import argparse
import json
import math
import os
import re
import sys

import numpy as np

# Paths (as "/key[i]/key") whose values are informational.
INFO_RE = re.compile(
    r"(wall_time_s|timestamp|runtime_s|runtime_seconds|/env(/|$)|/environment(/|$)|/software(/|$)|"
    r"sleap_nn_log|log_summary|/sha256$|/sha256s?(/|$)|/versions?(/|$)|python_version|platform|"
    r"/sleap_nn/version|sleap_nn_version|sleap_io_version|/system_info(/|$)|/format$|^/(sleap_io|opencv|av|"
    r"imageio_ffmpeg|imageio_ffmpeg_binary_version|opencv_videoio_ffmpeg|av_ffmpeg_library_versions|ffmpeg_cli)(/|$)|"
    r"onnxruntime_version|torch_version|onnx_version|producer_version|/note$|"
    # files that embed an export timestamp
    r"/files/(model\.onnx|export_metadata\.json)$)"
)
SCORE_RE = re.compile(r"(score|_vals|vals\b|probs|logits|/metrics|/dists|oks|/mot/|idf1|mota|hota)", re.I)
BASENAME_RE = re.compile(r"video_paths")


class Report:
    def __init__(self, name):
        self.name = name
        self.fail = []
        self.info = []
        self.checked = 0
        self.max_dev = {}

    def bad(self, msg):
        self.fail.append(msg)

    def note(self, msg):
        self.info.append(msg)

    def dev(self, kind, d):
        self.max_dev[kind] = max(self.max_dev.get(kind, 0.0), d)


def _num(x):
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    return None


def cmp_json(a, b, rep, path="", point_tol=0.0, rel=1e-9, abs_=1e-12, max_list=20):
    """Recursive comparison; `a` is new, `b` is the stored reference."""
    info = bool(INFO_RE.search(path))

    def diff(msg):
        (rep.note if info else rep.bad)("%s: %s" % (path or "/", msg))

    rep.checked += 1
    if isinstance(a, dict) and isinstance(b, dict):
        for k in b:
            if k not in a:
                diff("key %r missing" % k)
        for k in a:
            if k not in b:
                diff("extra key %r" % k)
        for k in b:
            if k in a:
                cmp_json(a[k], b[k], rep, "%s/%s" % (path, k), point_tol, rel, abs_)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diff("length %d, stored %d" % (len(a), len(b)))
            return
        for i, (x, y) in enumerate(zip(a, b)):
            cmp_json(x, y, rep, "%s[%d]" % (path, i), point_tol, rel, abs_)
        return
    if BASENAME_RE.search(path) and isinstance(a, str) and isinstance(b, str):
        if os.path.basename(a) != os.path.basename(b):
            diff("%r vs stored %r (basenames)" % (a, b))
        return
    na, nb = _num(a), _num(b)
    if na is not None and nb is not None:
        int_like = isinstance(a, int) and isinstance(b, int)
        if int_like:
            if a != b:
                diff("%r vs stored %r" % (a, b))
            return
        if math.isnan(na) or math.isnan(nb):
            if not (math.isnan(na) and math.isnan(nb)):
                diff("%r vs stored %r (NaN-ness)" % (a, b))
            return
        if math.isinf(na) or math.isinf(nb):
            if na != nb:
                diff("%r vs stored %r" % (a, b))
            return
        d = abs(na - nb)
        if info:
            if d != 0:
                diff("%r vs stored %r" % (a, b))
            return
        if SCORE_RE.search(path):
            tol = rel * max(abs(na), abs(nb)) + abs_
            rep.dev("score_rel", d / max(abs(na), abs(nb), 1e-300))
            if d > tol:
                diff("%r vs stored %r (|d|=%.3g > %.3g)" % (a, b, d, tol))
        else:
            rep.dev("value_abs", d)
            if d > point_tol:
                diff("%r vs stored %r (|d|=%.3g > %.3g)" % (a, b, d, point_tol))
        return
    if a != b:
        diff("%r vs stored %r" % (_short(a), _short(b)))


def _short(x):
    s = repr(x)
    return s if len(s) < 160 else s[:160] + "..."


def load_json(p):
    with open(p) as f:
        return json.load(f)


def cmp_file_json(new, ref, rep, rel_path, **kw):
    a_p, b_p = os.path.join(new, rel_path), os.path.join(ref, rel_path)
    if not os.path.exists(a_p):
        rep.bad("%s: not made" % rel_path)
        return
    sub = Report(rel_path)
    cmp_json(load_json(a_p), load_json(b_p), sub, **kw)
    rep.checked += sub.checked
    for k, v in sub.max_dev.items():
        rep.dev(k, v)
    rep.fail += ["%s %s" % (rel_path, m) for m in sub.fail]
    rep.info += ["%s %s" % (rel_path, m) for m in sub.info]


# --------------------------------------------------------------------------


def cmp_frames(ref, new, rep, args):
    d_ref, d_new = os.path.join(ref, "frames"), os.path.join(new, "frames")
    for name in sorted(os.listdir(d_ref)):
        a, b = os.path.join(d_new, name), os.path.join(d_ref, name)
        if name.endswith(".md"):
            continue
        if not os.path.exists(a):
            rep.bad("frames/%s: not made" % name)
            continue
        if name.endswith(".npy"):
            with open(a, "rb") as fa, open(b, "rb") as fb:
                same = fa.read() == fb.read()
            rep.checked += 1
            if not same:
                x, y = np.load(a), np.load(b)
                rep.bad("frames/%s: bytes differ (shape %s vs %s, max |d| %s)" % (
                    name, x.shape, y.shape, np.abs(x.astype(int) - y).max() if x.shape == y.shape else "-"))
        elif name.endswith(".npz"):
            x, y = np.load(a), np.load(b)
            for k in y.files:
                rep.checked += 1
                if k not in x.files or x[k].shape != y[k].shape or x[k].dtype != y[k].dtype \
                        or not np.array_equal(x[k], y[k]):
                    rep.bad("frames/%s[%s]: arrays differ" % (name, k))
        elif name.endswith(".json"):
            cmp_file_json(new, ref, rep, "frames/" + name, point_tol=0.0)


def _case_dirs(root, kind):
    d = os.path.join(root, kind)
    if not os.path.isdir(d):
        return []
    return sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n)))


def cmp_predict(ref, new, rep, args):
    for case in _case_dirs(ref, "predict"):
        if args.cases and not any(s in case for s in args.cases):
            continue
        for fn in ("expected.json", "options.json"):
            cmp_file_json(new, ref, rep, "predict/%s/%s" % (case, fn), point_tol=args.point_tol,
                          rel=args.rel, abs_=args.abs)
        if not os.path.exists(os.path.join(new, "predict", case, "pred.slp")):
            rep.bad("predict/%s/pred.slp: not made" % case)


def cmp_tracking(ref, new, rep, args):
    for case in _case_dirs(ref, "tracking"):
        if args.cases and not any(s in case for s in args.cases):
            continue
        for fn in ("expected.json", "options.json", "input.json"):
            if os.path.exists(os.path.join(ref, "tracking", case, fn)):
                cmp_file_json(new, ref, rep, "tracking/%s/%s" % (case, fn), point_tol=0.0,
                              rel=args.rel, abs_=args.abs)


def cmp_eval(ref, new, rep, args):
    for case in _case_dirs(ref, "eval"):
        if args.cases and not any(s in case for s in args.cases):
            continue
        for fn in ("expected.json", "options.json", "metrics.json"):
            if os.path.exists(os.path.join(ref, "eval", case, fn)):
                cmp_file_json(new, ref, rep, "eval/%s/%s" % (case, fn), point_tol=0.0,
                              rel=args.rel, abs_=args.abs)


def cmp_exports(ref, new, rep, args):
    root = os.path.join(ref, "exports")
    for folder in _case_dirs(ref, "exports"):
        for fn in sorted(os.listdir(os.path.join(root, folder))):
            if fn == "export_metadata.json":
                cmp_file_json(new, ref, rep, "exports/%s/%s" % (folder, fn))
            elif fn.endswith((".onnx", ".data", ".yaml")):
                if not os.path.exists(os.path.join(new, "exports", folder, fn)):
                    rep.bad("exports/%s/%s: not made" % (folder, fn))
        for case in _case_dirs(os.path.join(ref, "exports"), folder + "/cases"):
            base = "exports/%s/cases/%s" % (folder, case)
            cmp_file_json(new, ref, rep, base + "/manifest.json", rel=args.ort_rtol or 1e-9)
            a_p, b_p = os.path.join(new, base, "input.npy"), os.path.join(ref, base, "input.npy")
            if os.path.exists(a_p):
                rep.checked += 1
                if not np.array_equal(np.load(a_p), np.load(b_p)):
                    rep.bad(base + "/input.npy: differs")
            else:
                rep.bad(base + "/input.npy: not made")
            a_p, b_p = os.path.join(new, base, "ort_outputs.npz"), os.path.join(ref, base, "ort_outputs.npz")
            if not os.path.exists(a_p):
                rep.bad(base + "/ort_outputs.npz: not made")
                continue
            x, y = np.load(a_p), np.load(b_p)
            if sorted(x.files) != sorted(y.files):
                rep.bad(base + "/ort_outputs.npz: keys %s vs %s" % (sorted(x.files), sorted(y.files)))
            for k in y.files:
                if k not in x.files:
                    continue
                rep.checked += 1
                u, v = x[k], y[k]
                if u.shape != v.shape or u.dtype != v.dtype:
                    rep.bad("%s[%s]: shape/dtype %s %s vs %s %s" % (base, k, u.shape, u.dtype, v.shape, v.dtype))
                    continue
                if u.dtype.kind == "f":
                    if not np.array_equal(np.isnan(u), np.isnan(v)):
                        rep.bad("%s[%s]: NaN pattern differs" % (base, k))
                        continue
                    m = ~np.isnan(u)
                    d = np.abs(u[m].astype(np.float64) - v[m]) if m.any() else np.zeros(1)
                    scale = np.maximum(np.abs(u[m]), np.abs(v[m])) if m.any() else np.ones(1)
                    rep.dev("ort_abs", float(d.max()))
                    if (d > args.ort_rtol * scale).any():
                        rep.bad("%s[%s]: max |d| %.3g" % (base, k, float(d.max())))
                elif not np.array_equal(u, v):
                    rep.bad("%s[%s]: values differ" % (base, k))
    for fn in ("export_report.json", "onnx_vs_pytorch_summary.json"):
        if os.path.exists(os.path.join(ref, "exports", fn)):
            cmp_file_json(new, ref, rep, "exports/" + fn, rel=1e-6)


KINDS = {"frames": cmp_frames, "exports": cmp_exports, "predict": cmp_predict,
         "tracking": cmp_tracking, "eval": cmp_eval}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ref", required=True, help="stored data folder, e.g. ../shared/data/sleapnn-0.3.5")
    p.add_argument("--new", required=True, help="regenerated folder")
    p.add_argument("--only", default=",".join(KINDS))
    p.add_argument("--cases", default="")
    p.add_argument("--point-tol", type=float, default=0.0, help="px, predict/ coordinates (default 0)")
    p.add_argument("--rel", type=float, default=1e-9, help="relative tolerance for scores/metrics")
    p.add_argument("--abs", type=float, default=1e-12, help="absolute floor for scores/metrics")
    p.add_argument("--ort-rtol", type=float, default=0.0, help="relative tolerance for ORT outputs")
    p.add_argument("-v", "--verbose", action="store_true", help="print every note, not only a count")
    args = p.parse_args(argv)
    args.cases = [c for c in args.cases.split(",") if c]
    status = 0
    for kind in [k for k in args.only.split(",") if k]:
        if not os.path.isdir(os.path.join(args.new, kind)):
            print("%-9s not made, skipped" % kind)
            continue
        rep = Report(kind)
        KINDS[kind](args.ref, args.new, rep, args)
        devs = ", ".join("max %s %.3g" % kv for kv in sorted(rep.max_dev.items()))
        print("%-9s %s: %d values checked, %d failures, %d notes%s" % (
            kind, "OK" if not rep.fail else "DIFFERS", rep.checked, len(rep.fail), len(rep.info),
            ("; " + devs) if devs else ""))
        for m in rep.fail[:args.verbose and 10 ** 9 or 40]:
            print("  FAIL " + m)
        if len(rep.fail) > 40 and not args.verbose:
            print("  ... %d more" % (len(rep.fail) - 40))
        if args.verbose:
            for m in rep.info:
                print("  note " + m)
        if rep.fail:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
