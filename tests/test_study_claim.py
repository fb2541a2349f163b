"""Study lanes started together share one folder: their claims of it are serialized."""

import fcntl
import json
import multiprocessing
import threading

from tts.evaluation import study


def _identity(variant: str) -> dict:
    return {"config": "c", "config_path": "c.yaml", "data": "d", "corpus": "k", "steps": 4, "curve_every": 2,
            "aligned_accuracy": None, "evaluate": "last", "variants": {variant: [f"model.x={variant}"]}}


def test_a_claim_waits_for_the_lane_holding_the_record(tmp_path):
    with open(tmp_path / ".study_settings.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        claim = threading.Thread(target=study._claim, args=(tmp_path, _identity("a")))
        claim.start()
        claim.join(0.5)
        assert claim.is_alive() and not (tmp_path / "study_settings.json").exists()
    claim.join(10)
    assert not claim.is_alive()
    assert json.loads((tmp_path / "study_settings.json").read_text())["variants"] == {"a": ["model.x=a"]}


def test_lanes_claiming_at_once_all_keep_their_variants(tmp_path):
    names = [f"v{k}" for k in range(6)]
    context = multiprocessing.get_context("fork")
    lanes = [context.Process(target=study._claim, args=(tmp_path, _identity(name))) for name in names]
    for lane in lanes:
        lane.start()
    for lane in lanes:
        lane.join(30)
    assert [lane.exitcode for lane in lanes] == [0] * len(names)
    assert sorted(json.loads((tmp_path / "study_settings.json").read_text())["variants"]) == names
