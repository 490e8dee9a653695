"""sleap-nn 0.3.5's motion trackers from Python (sleapc.track(tracker=..., mot_param=...)):
the tracks sleap-nn made on the same detections (sleapnn-0.3.5/tracking; the C tests check
every instance, this checks the options reach them)."""
import json

import pytest

import sleapc


@pytest.mark.parametrize("case,kw", [("clip_ocsort", {"tracker": "ocsort"}),
                                     ("clip_sort_preset_paper",
                                      {"tracker": "sort", "mot_param": ["preset=paper"]})])
def test_mot_tracks(data, case, kw):
    with open(data(f"sleapnn-0.3.5/tracking/{case}/expected.json")) as f:
        want = json.load(f)
    got = sleapc.track(data("sleapnn-0.3.5/tracking/input.slp"), **kw)
    assert list(got.track_names) == want["tracks_in_output"]


def test_mot_refusals(data):
    with pytest.raises(sleapc.SleapcError, match="re-ID|not yet|appearance|botsort"):
        sleapc.track(data("sleapnn-0.3.5/tracking/input.slp"), tracker="botsort")
    with pytest.raises(sleapc.SleapcError, match="only appl"):
        sleapc.track(data("sleapnn-0.3.5/tracking/input.slp"), track_buffer=10)
