"""appearance/: sleap-nn's appearance (re-ID) trackers on detections that carry vectors.

The input is tracking/input.slp (the untracked SLEAP 1.4 predictions of
`sleap-assets/tracks/clip.predictions.slp`, 1500 frames, 2948 instances) with one
re-ID vector per instance, saved by sleap-io with `save_embedding_vectors=True`
(the `embeddings/` group). No embedding model is trained for the clip's flies, so the
vectors are synthetic and seeded: each instance's vector is the unit-normalised sum of
its animal's base vector (one standard-normal draw per track of the SLEAP 1.4 file:
"female", "male") and standard-normal noise times NOISE. That is the kind of vector
an embedding model gives two animals it tells apart imperfectly: sleap-nn's
calibration finds appearance usable for association and linking (rank-1 about 0.99)
while a same-frame pair still looks alike now and then (the noise).

Each case then runs, as the tracking kind does (same observers, same expected.json),

    sleap-nn predict --data_path appearance/input.slp --tracking --tracker NAME [OPTIONS] -o tracked.slp

The clip's flies hardly overlap, so no crossing there exercises identity linking's swap
correction. `bounce/` is a synthetic scene that does (write_bounce): pairs of 2-node
animals on separate lanes meet and bounce off each other (the tracker follows them),
and at two meetings of lane 0 the vectors follow the other animal, as if the tracker
had swapped them there: swap correction relabels the tracks after those events.
"""

import os

import numpy as np

import common as C
import tracking as T

DIM = 16
NOISE = 0.8
SEED = 0
CASES = [
    ("clip_deepsort", ["--tracker", "deepsort"]),
    ("clip_strongsort", ["--tracker", "strongsort"]),
    ("clip_botsort", ["--tracker", "botsort"]),
    ("clip_deepocsort", ["--tracker", "deepocsort"]),
    # the classic tracker by appearance alone (local queues, cosine_sim on the vectors)
    ("clip_classic_embeddings", ["--features", "embeddings"]),
    ("clip_bytetrack_link_appearance", ["--tracker", "bytetrack", "--link_tracklets"]),
    # the closed set with appearance tiers: 13 tracklets forced onto 2 animals
    ("clip_bytetrack_link_appearance_max2",
     ["--tracker", "bytetrack", "--link_tracklets", "--mot_param", "max_tracks=2"]),
    # OC-SORT's 31 tracks: 22 links, then 14 tracklets forced onto 2 animals
    ("clip_ocsort_link_appearance_max2",
     ["--tracker", "ocsort", "--link_tracklets", "--mot_param", "max_tracks=2"]),
]


def write_input(stage, path):
    """tracking/input.slp with a seeded synthetic vector per instance (see the module doc)."""
    import sleap_io as sio

    _, rel = T.ensure_input(stage)
    src = sio.load_slp(stage.data_path(T.SOURCE), lazy=False)
    with stage.cwd():
        labels = sio.load_slp(rel, lazy=False)
    rng = np.random.default_rng(SEED)
    base = {}
    for lf_src, lf in zip(src.labeled_frames, labels.labeled_frames):
        preds = [i for i in lf_src.instances if isinstance(i, sio.PredictedInstance)]
        if lf_src.frame_idx != lf.frame_idx or len(preds) != len(lf.instances):
            raise RuntimeError("frame %d: the input does not follow %s" % (lf.frame_idx, T.SOURCE))
        for p, inst in zip(preds, lf.instances):
            name = p.track.name if p.track is not None else None
            if name not in base:
                base[name] = rng.normal(size=DIM)
            v = base[name] + NOISE * rng.normal(size=DIM)
            inst.identity_embedding = sio.Embedding((v / np.linalg.norm(v)).astype(np.float32))
    sio.save_slp(labels, path, save_embedding_vectors=True)
    return sorted(k for k in base if k is not None)


# The synthetic bounce scene (write_bounce) and its cases.
BOUNCE_FRAMES = 1000
BOUNCE_LANES = 5
BOUNCE_NOISE = 0.6
BOUNCE_SEED = 1
BOUNCE_SWAPS = (4, 8)
BOUNCE_CASES = [
    ("bounce_bytetrack_link_swaps", ["--tracker", "bytetrack", "--link_tracklets"]),
    # SORT breaks the tracks at the meetings: 2 swaps, 26 links, and a closed set of 8
    # for 10 animals that untracks two of them
    ("bounce_sort_link_max8",
     ["--tracker", "sort", "--link_tracklets", "--mot_param", "max_tracks=8"]),
]


def write_bounce(path):
    """The bounce scene: per lane two animals (head, thorax; 16 px long) moving
    towards each other; where they meet they exchange velocities (a bounce), and
    at the BOUNCE_SWAPS-th meetings of lane 0 their vectors are exchanged from then
    on (each animal's vector: its identity's base vector plus BOUNCE_NOISE times
    standard-normal noise, unit-normalised; keypoints jittered by 0.3 px and
    rounded to float32; point and instance scores 0.875)."""
    import sleap_io as sio

    rng = np.random.default_rng(BOUNCE_SEED)
    skel = sio.Skeleton(nodes=["head", "thorax"], edges=[("head", "thorax")])
    video = sio.Video(filename="bounce.mp4", open_backend=False)
    n = 2 * BOUNCE_LANES
    base = [rng.normal(size=DIM) for _ in range(n)]
    x = np.array([100.0, 500.0] * BOUNCE_LANES) + rng.uniform(-40, 40, size=n)
    v = np.array([4.0, -3.0] * BOUNCE_LANES) * rng.uniform(0.8, 1.2, size=n)
    y = np.repeat(200.0 + 150.0 * np.arange(BOUNCE_LANES), 2) + np.tile([0.0, 6.0], BOUNCE_LANES)
    owner = list(range(n))  # the base vector each animal shows
    meetings = [0] * BOUNCE_LANES
    frames = []
    for f in range(BOUNCE_FRAMES):
        insts = []
        for a in range(n):
            d = 1.0 if v[a] >= 0 else -1.0
            pts = np.array([[x[a] + 8 * d, y[a] + 4], [x[a] - 8 * d, y[a] - 4]])
            # float32 values, as predictions hold them (and sleapc reads them)
            pts = (pts + rng.normal(scale=0.3, size=2)).astype(np.float32).astype(np.float64)
            inst = sio.PredictedInstance.from_numpy(
                points_data=pts, skeleton=skel, point_scores=np.array([0.875, 0.875]),
                score=0.875)
            e = base[owner[a]] + BOUNCE_NOISE * rng.normal(size=DIM)
            inst.identity_embedding = sio.Embedding((e / np.linalg.norm(e)).astype(np.float32))
            insts.append(inst)
        frames.append(sio.LabeledFrame(video=video, frame_idx=f, instances=insts))
        nx = x + v
        for lane in range(BOUNCE_LANES):
            a, b = 2 * lane, 2 * lane + 1
            if (x[a] - x[b]) * (nx[a] - nx[b]) <= 0:  # they meet: exchange velocities
                v[a], v[b] = v[b], v[a]
                nx[a], nx[b] = x[a] + v[a], x[b] + v[b]
                meetings[lane] += 1
                if lane == 0 and meetings[lane] in BOUNCE_SWAPS:
                    owner[a], owner[b] = owner[b], owner[a]
        for a in range(n):
            if nx[a] < 50 or nx[a] > 550:  # walls
                v[a] = -v[a]
                nx[a] = x[a] + v[a]
        x = nx
    labels = sio.Labels(labeled_frames=frames, videos=[video], skeletons=[skel])
    sio.save_slp(labels, path, save_embedding_vectors=True)


def run_bounce(stage, args, done):
    root = C.ensure_dir(stage.out_path("appearance", "bounce"))
    write_bounce(os.path.join(root, "input.slp"))
    rel = stage.rel_out("appearance", "bounce", "input.slp")
    C.write_json_indent(os.path.join(root, "input.json"), {
        "format": "sleapc appearance bounce input v1", "frames": BOUNCE_FRAMES,
        "lanes": BOUNCE_LANES, "dim": DIM, "noise": BOUNCE_NOISE, "seed": BOUNCE_SEED,
        "vectors_swapped_at_meetings_of_lane_0": list(BOUNCE_SWAPS),
    })
    for name, opts in BOUNCE_CASES:
        if args.cases and not any(s in name for s in args.cases):
            continue
        C.log("appearance: %s" % name)
        case_dir, exp, options = T.run_case(stage, name, opts, rel)
        options["cwd"] = "the case folder, with input.slp = %s (the bounce scene)" % rel
        dst = C.ensure_dir(os.path.join(root, name))
        C.write_json_compact(os.path.join(dst, "expected.json"), C.jsonable(exp))
        C.write_json_indent(os.path.join(dst, "options.json"), C.jsonable(options))
        done.append("bounce/" + name)


def run(stage, args):
    root = C.ensure_dir(stage.out_path("appearance"))
    slp = os.path.join(root, "input.slp")
    animals = write_input(stage, slp)
    rel = stage.rel_out("appearance", "input.slp")
    C.write_json_indent(os.path.join(root, "input.json"), {
        "format": "sleapc appearance input v1", "source": "tracking/input.slp + " + T.SOURCE,
        "dim": DIM, "noise": NOISE, "seed": SEED, "animals": animals,
    })
    done = []
    for name, opts in CASES:
        if args.cases and not any(s in name for s in args.cases):
            continue
        C.log("appearance: %s" % name)
        case_dir, exp, options = T.run_case(stage, name, opts, rel)
        options["cwd"] = "the case folder, with input.slp = %s (tracking/input.slp with vectors)" % rel
        dst = C.ensure_dir(os.path.join(root, name))
        C.write_json_compact(os.path.join(dst, "expected.json"), C.jsonable(exp))
        C.write_json_indent(os.path.join(dst, "options.json"), C.jsonable(options))
        done.append(name)
    run_bounce(stage, args, done)
    return {"appearance": done}
