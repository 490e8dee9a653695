"""sleap-nn's MOT trackers timed on the detections bench_mot tracks: the
reference input (tracking/input.slp of the sleap-nn test data, or a file
whose detections carry re-ID vectors, for the appearance trackers) repeated
--repeat times as one video, frame indices continued (each instance keeps
its vector). The tracker runs as sleap-nn's apply_tracking runs it (one
tracker, prepare() over every frame, then track() frame by frame); only
the tracker is timed, not building the instances, in CPU time of the
process (as bench_mot), steadier than wall time on a shared machine.

usage: python mot_sleapnn.py INPUT_SLP [--repeat N] [--trackers sort,bytetrack,ocsort,...]
Prints one JSON line per tracker. With --save OUT.slp it writes the long run
instead (for `sleapc track` on a long file) and times nothing.
"""

import argparse
import json
import resource
import time

import numpy as np
import sleap_io as sio
from sleap_nn.tracking.mot import build_mot_tracker
from sleap_nn.tracking.mot.params import MOTParams


def long_run(labels, repeat):
    """(frame_idx, instances) per frame: the input in frame order, repeated."""
    skel = labels.skeletons[0]
    lfs = sorted(labels.labeled_frames, key=lambda lf: lf.frame_idx)
    span = lfs[-1].frame_idx + 1
    frames = []
    for r in range(repeat):
        for lf in lfs:
            objs = []
            for inst in lf.predicted_instances:
                new = sio.PredictedInstance.from_numpy(
                    points_data=inst.numpy(),
                    point_scores=np.asarray(inst.numpy(scores=True))[:, 2],
                    score=inst.score,
                    skeleton=skel,
                )
                new.identity_embedding = inst.identity_embedding
                objs.append(new)
            frames.append((lf.frame_idx + r * span, objs))
    return frames, len(skel.nodes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--trackers", default="sort,bytetrack,ocsort")
    ap.add_argument("--save")
    args = ap.parse_args()
    labels = sio.load_slp(args.input)
    if args.save:
        frames, _ = long_run(labels, args.repeat)
        video = labels.videos[0]
        lfs = [sio.LabeledFrame(video=video, frame_idx=fi, instances=objs) for fi, objs in frames]
        sio.save_slp(sio.Labels(labeled_frames=lfs, videos=[video], skeletons=labels.skeletons), args.save)
        return
    for name in args.trackers.split(","):
        frames, n_nodes = long_run(labels, args.repeat)
        tracker = build_mot_tracker(
            MOTParams.for_tracker(name), carrier="pose", n_nodes=n_nodes
        )
        t0 = time.process_time()
        tracker.prepare(frames)
        t1 = time.process_time()
        for fi, objs in frames:
            tracker.track(objs, fi, image=None)
        t2 = time.process_time()
        tracker.finalize()
        n = len(frames)
        tracked = sum(
            1 for _, objs in frames for o in objs if getattr(o, "track", None) is not None
        )
        print(
            json.dumps(
                {
                    "tracker": name,
                    "frames": n,
                    "instances": sum(len(o) for _, o in frames),
                    "tracked": tracked,
                    "tracks": int(tracker._next_public_id),
                    "prepare_ms_per_frame": (t1 - t0) * 1e3 / n,
                    "track_ms_per_frame": (t2 - t1) * 1e3 / n,
                    "total_ms_per_frame": (t2 - t0) * 1e3 / n,
                    "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
