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
    ("clip_bytetrack_link_appearance", ["--tracker", "bytetrack", "--link_tracklets"]),
    # the closed set with appearance tiers: 13 tracklets forced onto 2 animals
    ("clip_bytetrack_link_appearance_max2",
     ["--tracker", "bytetrack", "--link_tracklets", "--mot_param", "max_tracks=2"]),
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
    return {"appearance": done}
