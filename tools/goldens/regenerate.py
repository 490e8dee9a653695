#!/usr/bin/env python3
"""Regenerate the sleap-nn reference data the tests read.

    V/bin/python tools/goldens/regenerate.py --data ../shared/data --out OUTDIR \
        [--only frames,exports,predict,tracking,eval,families,appearance] [--cases SUBSTR,...]

OUTDIR gets the layout of `shared/data/sleapnn-<version>/` (frames/, exports/,
predict/, tracking/, eval/) and software.json with every package version.
Paths written into the outputs are relative to the data root, as if OUTDIR
were `<data>/<label>` (label: `--label`, default `sleapnn-<sleap-nn version>`).
See tools/goldens/README.md. Never run by CI.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

KINDS = ["frames", "exports", "predict", "tracking", "eval", "families", "appearance"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="the data root (the repo's ../shared/data)")
    p.add_argument("--out", required=True, help="output folder (created)")
    p.add_argument("--only", default=",".join(KINDS),
                   help="comma-separated kinds to make, in this order: " + ",".join(KINDS))
    p.add_argument("--cases", default="", help="comma-separated substrings; only cases whose name contains one")
    p.add_argument("--label", default=None,
                   help="name of the output folder under the data root, used in written paths "
                        "(default: sleapnn-<installed sleap-nn version>)")
    p.add_argument("--threads", type=int, default=2, help="torch / onnxruntime threads (default 2)")
    p.add_argument("--ffmpeg", default=None, help="ffmpeg executable for the old-reference decode "
                   "(default: ffmpeg on PATH, else imageio-ffmpeg's binary)")
    p.add_argument("--skip-decode-effect", action="store_true",
                   help="frames: do not run the models on both decodes (decode_report effect block)")
    p.add_argument("--reuse-models", default=None,
                   help="families: run the cases on this models/ folder (e.g. the stored one) instead of training")
    a = p.parse_args(argv)
    a.only = [k.strip() for k in a.only.split(",") if k.strip()]
    bad = [k for k in a.only if k not in KINDS]
    if bad:
        p.error("unknown kind(s): %s" % ", ".join(bad))
    a.cases = [c.strip() for c in a.cases.split(",") if c.strip()]
    return a


def main(argv=None):
    args = parse_args(argv)
    import common as C

    C.limit_threads(args.threads)  # before anything imports torch
    data = os.path.abspath(args.data)
    if not os.path.isdir(os.path.join(data, "sleap-nn-assets")):
        sys.exit("%s does not look like the data root (no sleap-nn-assets/)" % data)
    label = args.label or "sleapnn-%s" % C.dist_version("sleap-nn")
    out = os.path.abspath(args.out)
    if os.path.realpath(out) == os.path.realpath(os.path.join(data, label)):
        sys.exit("refusing to write into the stored data folder itself; pick another --out")
    C.ensure_dir(out)
    import frames as frames_mod

    stage = C.Stage(data, out, label)
    summary = {}
    t0 = time.time()
    try:
        for kind in KINDS:
            if kind not in args.only:
                continue
            C.log("== %s" % kind)
            if kind == "frames":
                mod = frames_mod
            elif kind == "exports":
                import exports as mod
            elif kind == "predict":
                import predict as mod
            elif kind == "tracking":
                import tracking as mod
            elif kind == "families":
                import families as mod
            elif kind == "appearance":
                import appearance as mod
            else:
                import eval as mod
            summary.update(mod.run(stage, args))
    finally:
        stage.close()
    sw = C.software(frames_mod.find_ffmpeg(args.ffmpeg))
    sw_path = os.path.join(out, "software.json")
    record = {}
    if os.path.exists(sw_path):
        import json

        with open(sw_path) as f:
            record = json.load(f)
    record.setdefault("runs", [])
    record["software"] = sw
    record["label"] = label
    record["data_root_note"] = "paths in this folder are relative to the data root (shared/data/)"
    record["runs"].append({"only": args.only, "cases": args.cases, "made": summary,
                           "wall_time_s": round(time.time() - t0, 1)})
    C.write_json_indent(sw_path, C.jsonable(record))
    C.log("done in %.0f s -> %s" % (time.time() - t0, out))


if __name__ == "__main__":
    main()
