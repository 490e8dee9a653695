"""frames/: frames 0-19 of the two fixture videos as sleap-io decodes them.

Writes, per video, `<video>.sleap_io.f0000-0019.npy` (what `sio.load_video`
returns with its default plugin) and `<video>.ffmpeg_cli.f0000-0019.npz` (the
old reference's ffmpeg command line decode), plus `decode_report.json`.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess

import numpy as np

import common as C

OLD_CMD = (
    "{exe} -v error -i {video} -frames:v {n} -vf scale=in_color_matrix=bt601:flags=bicubic+accurate_rnd "
    "-f rawvideo -pix_fmt rgb24 -"
)
VARIANTS = [
    "{exe} -v error -i {video} -frames:v {n} -f rawvideo -pix_fmt rgb24 -",
    "{exe} -v error -i {video} -frames:v {n} -vf scale=flags=bicubic -f rawvideo -pix_fmt rgb24 -",
    "{exe} -v error -i {video} -frames:v {n} -vf scale=in_color_matrix=bt601:flags=bicubic -f rawvideo -pix_fmt rgb24 -",
]


def find_ffmpeg(requested):
    """The ffmpeg executable: the one asked for, else PATH, else imageio-ffmpeg's."""
    if requested:
        return requested
    exe = shutil.which("ffmpeg")
    if exe:
        return exe
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # noqa: BLE001
        return None


def decode_sleap_io(video, n=C.N_FRAMES, plugin=None):
    import sleap_io as sio

    v = sio.load_video(video) if plugin is None else sio.load_video(video, plugin=plugin)
    frames = np.stack([v[i] for i in range(n)])
    return v, frames


def decode_ffmpeg(exe, cmd_template, video, n, shape_hw):
    cmd = cmd_template.format(exe=exe, video=video, n=n)
    raw = subprocess.run(cmd.split(), capture_output=True, check=True).stdout
    h, w = shape_hw
    frames = np.frombuffer(raw, np.uint8).reshape(n, h, w, 3)
    gray = bool(np.array_equal(frames[0, ..., 0], frames[0, ..., 2]))
    if gray:
        frames = frames[..., :1]
    shown = cmd_template.format(exe="ffmpeg", video=video, n=n)
    return np.ascontiguousarray(frames), gray, shown


def diff_stats(a, b, per_frame=True):
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    out = {
        "max_abs_diff": int(d.max()),
        "mean_abs_diff": float(d.mean()),
    }
    if per_frame:
        out["frac_pixels_differing"] = float((d > 0).mean())
        out["per_frame_max"] = [int(x) for x in d.reshape(len(d), -1).max(1)]
        out["per_frame_mean"] = [round(float(x), 6) for x in d.reshape(len(d), -1).mean(1)]
    return out


def stream_info(video, exe):
    """codec, size, pixel format and frame count, from ffprobe or else PyAV."""
    probe = None
    if exe:
        cand = os.path.join(os.path.dirname(exe), "ffprobe")
        probe = cand if os.path.exists(cand) else shutil.which("ffprobe")
    if probe:
        out = subprocess.run(
            [probe, "-v", "error", "-select_streams", "v:0", "-show_entries",
             "stream=codec_name,width,height,pix_fmt,nb_frames", "-of", "json", video],
            capture_output=True, text=True, check=True).stdout
        s = json.loads(out)["streams"][0]
        return {k: s.get(k) for k in ("codec_name", "width", "height", "pix_fmt", "nb_frames")}
    import av

    with av.open(video) as c:
        s = c.streams.video[0]
        return {
            "codec_name": s.codec_context.name,
            "width": s.codec_context.width,
            "height": s.codec_context.height,
            "pix_fmt": s.codec_context.pix_fmt,
            "nb_frames": str(s.frames),
        }


def library_versions():
    import cv2
    import sleap_io as sio

    rep = {"sleap_io": sio.__version__, "opencv": cv2.__version__}
    try:
        import av

        rep["av"] = av.__version__
        libs = {k: "%d.%d.%d" % tuple(v) for k, v in av.library_versions.items()}
    except ImportError:
        rep["av"] = None
        libs = None
    try:
        import imageio_ffmpeg

        rep["imageio_ffmpeg"] = imageio_ffmpeg.__version__
        rep["imageio_ffmpeg_binary_version"] = imageio_ffmpeg.get_ffmpeg_version()
    except Exception:  # noqa: BLE001
        rep["imageio_ffmpeg"] = rep["imageio_ffmpeg_binary_version"] = None
    build = cv2.getBuildInformation().splitlines()
    keep = []
    on = False
    for line in build:
        s = line.strip()
        if s.startswith("FFMPEG:"):
            on = True
        elif on and not re.match(r"^(avcodec|avformat|avutil|swscale|avresample|swresample):", s):
            on = False
        if on:
            keep.append(s)
    rep["opencv_videoio_ffmpeg"] = [k for k in keep if not k.startswith(("avutil", "swresample"))]
    rep["av_ffmpeg_library_versions"] = libs
    return rep


def old_reference_checks(data_root, video_key, sio_frames, cli_frames):
    """Compare the old reference's frame.npy files (0.3.3) with both decodes."""
    ref = os.path.join(data_root, "reference")
    short = {"centered_pair_small": "centered_pair", "small_robot": "small_robot"}[video_key]
    pat = re.compile(r"^(.+)__%s_f(\d{4})$" % short)
    out = {}
    if not os.path.isdir(ref):
        return out
    for case in sorted(os.listdir(ref)):
        m = pat.match(case)
        if not m:
            continue
        idx = int(m.group(2))
        fpath = os.path.join(ref, case, "frame.npy")
        if idx >= len(sio_frames) or not os.path.exists(fpath):
            continue
        old = np.load(fpath).reshape(sio_frames[idx].shape)
        out[case] = {
            "frame_idx": idx,
            "ffmpeg_cli_equal": bool(np.array_equal(old, cli_frames[idx])),
            "sleap_io_max_abs_diff": int(np.abs(old.astype(np.int16) - sio_frames[idx].astype(np.int16)).max()),
        }
    return out


def _greedy_match(a_list, b_list):
    """Greedy pairs of instances (arrays (N, 2)) by mean keypoint distance."""
    pairs = []
    cand = []
    for i, a in enumerate(a_list):
        for j, b in enumerate(b_list):
            d = np.linalg.norm(a - b, axis=1)
            if np.isfinite(d).any():
                cand.append((float(np.nanmean(d)), i, j))
    used_a, used_b = set(), set()
    for _, i, j in sorted(cand):
        if i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        pairs.append((i, j))
    return pairs


def effect_on_predictions(stage, sio_arrays, cli_arrays, batch_size=4):
    """sleap-nn's default predictions on both decodes; keypoint distances."""
    import predict as P

    models = {
        "topdown": ("centered_pair_small", ["minimal_instance_centroid", "minimal_instance_centered_instance"]),
        "bottomup": ("centered_pair_small", ["minimal_instance_bottomup"]),
        "single_instance": ("small_robot", ["minimal_instance_single_instance"]),
    }
    results = {}
    for name, (vkey, ckpts) in models.items():
        dirs = ["%s/%s" % (C.CKPTS, c) for c in ckpts]
        C.log("frames: effect on predictions, %s" % name)
        la = P.predict_arrays(dirs, sio_arrays[vkey], C.VIDEOS[vkey], batch_size=batch_size)
        lb = P.predict_arrays(dirs, cli_arrays[vkey], C.VIDEOS[vkey], batch_size=batch_size)
        fa = {lf.frame_idx: [i.numpy() for i in lf.instances] for lf in la.labeled_frames}
        fb = {lf.frame_idx: [i.numpy() for i in lf.instances] for lf in lb.labeled_frames}
        dists = []
        ndiff = 0
        for k in sorted(set(fa) | set(fb)):
            ia, ib = fa.get(k, []), fb.get(k, [])
            if len(ia) != len(ib):
                ndiff += 1
            for i, j in _greedy_match(ia, ib):
                d = np.linalg.norm(ia[i] - ib[j], axis=1)
                dists.extend(float(x) for x in d[np.isfinite(d)])
        results[name] = {
            "frames": len(set(fa) | set(fb)),
            "frames_with_different_instance_count": ndiff,
            "max_px": round(max(dists), 4) if dists else None,
            "median_px": round(float(np.median(dists)), 4) if dists else None,
            "points": len(dists),
        }
    return {
        "what": "sleap-nn %s Predictor (defaults, batch %d) on the sleap-io frames vs on the old ffmpeg-CLI "
        "frames of this folder; keypoint distance of matched instances (greedy, mean distance)"
        % (C.dist_version("sleap-nn"), batch_size),
        "results": results,
    }


def run(stage, args):
    out_dir = C.ensure_dir(stage.out_path("frames"))
    exe = find_ffmpeg(args.ffmpeg)
    import sleap_io as sio

    report = library_versions()
    report["ffmpeg_cli"] = C.ffmpeg_cli_version(exe)
    try:
        report["sleap_io_default_video_plugin_setting"] = sio.get_default_video_plugin()
    except AttributeError:
        report["sleap_io_default_video_plugin_setting"] = None
    report["videos"] = {}
    sio_arrays, cli_arrays = {}, {}
    n = C.N_FRAMES
    with stage.cwd():
        for key, video in C.VIDEOS.items():
            C.log("frames: decoding %s" % video)
            v, frames = decode_sleap_io(video, n)
            npy = C.frames_npy_name(key)
            np.save(os.path.join(out_dir, npy), frames)
            sio_arrays[key] = frames
            backend = v.backend
            rec = {
                "file": video,
                "frames": [0, n - 1],
                "stream": stream_info(video, exe),
                "sleap_io_default": {
                    "plugin": getattr(backend, "plugin", None),
                    "backend": type(backend).__name__,
                    "shape": list(v.shape),
                    "grayscale": bool(getattr(backend, "grayscale", frames.shape[-1] == 1)),
                },
                "sleap_io_file": npy,
                "sleap_io_shape": list(frames.shape),
                "sleap_io_sha256": C.sha256_bytes(np.ascontiguousarray(frames).tobytes()),  # of the array data
                "sleap_io_md5_per_frame": [hashlib.md5(f.tobytes()).hexdigest() for f in frames],
            }
            others = {}
            for plugin in ("pyav", "FFMPEG"):
                try:
                    _, fo = decode_sleap_io(video, n, plugin=plugin)
                    others[plugin] = fo
                except Exception as e:  # noqa: BLE001
                    others[plugin] = e
            rec["other_plugins_vs_default"] = {
                p: (diff_stats(fo, frames) if isinstance(fo, np.ndarray) and fo.shape == frames.shape
                    else {"error": repr(fo) if not isinstance(fo, np.ndarray) else "shape %s" % (fo.shape,)})
                for p, fo in others.items()
            }
            if exe:
                hw = frames.shape[1:3]
                cli, gray, shown = decode_ffmpeg(exe, OLD_CMD, video, n, hw)
                cli_arrays[key] = cli
                np.savez_compressed(os.path.join(out_dir, C.ffmpeg_npz_name(key)), frames=cli)
                rec["ffmpeg_cli_command"] = shown
                rec["ffmpeg_cli_grayscale_rule_applied"] = gray
                rec["ffmpeg_cli_file"] = C.ffmpeg_npz_name(key)
                rec["sleap_io_default_vs_ffmpeg_cli"] = diff_stats(frames, cli)
                rec["other_plugins_vs_ffmpeg_cli"] = {
                    p: diff_stats(fo, cli) for p, fo in others.items()
                    if isinstance(fo, np.ndarray) and fo.shape == cli.shape
                }
                rec["old_reference_frame_check"] = old_reference_checks(stage.data, key, frames, cli)
                var = {}
                for tmpl in VARIANTS:
                    fv, _, shown_v = decode_ffmpeg(exe, tmpl, video, n, hw)
                    var[shown_v] = diff_stats(fv, frames, per_frame=False) if fv.shape == frames.shape else {
                        "error": "shape %s" % (fv.shape,)}
                rec["ffmpeg_cli_variants_vs_sleap_io_default"] = var
            report["videos"][key] = rec
        if exe and not args.skip_decode_effect:
            report["effect_on_sleap_nn_predictions"] = effect_on_predictions(stage, sio_arrays, cli_arrays)
    C.write_json_indent(os.path.join(out_dir, "decode_report.json"), C.jsonable(report))
    return {"frames": list(sio_arrays)}
