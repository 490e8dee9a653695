"""Predictions -> sleap_io.Labels, for users who have sleap-io (not a dependency)."""

import inspect

import numpy as np


def _video(sio, info):
    filename = info["filename"] if info else ""
    try:
        return sio.Video(filename=filename, open_backend=False)
    except TypeError:  # older sleap-io: no open_backend
        return sio.Video(filename=filename)


def _instance(sio, skeleton, points, scores, score, track):
    params = inspect.signature(sio.PredictedInstance.from_numpy).parameters
    if "points_data" in params:  # sleap-io >= 0.3
        return sio.PredictedInstance.from_numpy(points_data=points, point_scores=scores,
                                                score=float(score), skeleton=skeleton, track=track)
    return sio.PredictedInstance.from_numpy(points=points, point_scores=scores,
                                            instance_score=float(score), skeleton=skeleton,
                                            track=track)


def to_labels(pred):
    import sleap_io as sio

    nodes = [sio.Node(name) for name in pred.node_names]
    skeleton = sio.Skeleton(nodes=nodes, edges=[sio.Edge(nodes[a], nodes[b]) for a, b in pred.edges],
                            name=pred.skeleton_name)
    tracks = [sio.Track(name=name) for name in pred.track_names]
    video = _video(sio, pred.video)
    frames = []
    for f in range(len(pred)):
        instances = []
        for i in range(int(pred.n_instances[f])):
            t = int(pred.tracks[f, i])
            instances.append(_instance(sio, skeleton, np.asarray(pred.points[f, i], np.float64),
                                       np.asarray(pred.point_scores[f, i], np.float64),
                                       pred.instance_scores[f, i],
                                       tracks[t] if 0 <= t < len(tracks) else None))
        frames.append(sio.LabeledFrame(video=video, frame_idx=int(pred.frame_indices[f]),
                                       instances=instances))
    return sio.Labels(labeled_frames=frames, videos=[video], skeletons=[skeleton], tracks=tracks)
