"""egs/synthetic/stop_study.py: stopping the study's lanes and snapshotting the runs they leave."""

import json
import re
import subprocess
import time

from conftest import repo_script

stop_study = repo_script("egs/synthetic/stop_study.py")


def test_a_lane_command_line_gives_its_runs_in_order():
    assert stop_study.lane_runs(["bash", "egs/synthetic/attention_study_v2.sh", "--seed", "1", "hard", "--seed", "2",
                                 "gmm", "forward"]) == [("v2", "hard", 1), ("v2", "gmm", 2), ("v2", "forward", 2)]
    assert stop_study.lane_runs(["bash", "/x/attention_study_v2.sh", "--transformer", "--seed", "3", "alpha_fixed"]) \
        == [("v2_transformer", "alpha_fixed", 3)]


def _study_tree(root):
    """A repository stand-in: one finished run, one under way, and a lane script that waits."""
    (root / "docs/attention_study/v2_results").mkdir(parents=True)
    (root / "docs/attention_study/v2_results/gmm-s1.json").write_text(json.dumps({"test": {"cer": 0.05}}))
    hard = root / "exp/attention_study_v2/hard-s1"
    hard.mkdir(parents=True)
    (hard / "checkpoint_00004424.pt").write_bytes(b"")
    (hard / "metrics.jsonl").write_text(json.dumps({"step": 4288, "split": "val", "true_tracking_accuracy": 0.75}) + "\n")
    (hard / "sessions.jsonl").write_text(json.dumps({"step": 0, "cpu_instructions": ["avx2"]}) + "\n")
    script = root / "egs/synthetic/attention_study_v2.sh"
    script.parent.mkdir(parents=True)
    script.write_text('cd "$(dirname "$0")/../.."\nsleep 60 & wait\n')
    return script


def test_stop_ends_the_lanes_of_its_checkout_and_snapshots_what_they_left(tmp_path, capsys):
    script = _study_tree(tmp_path)
    lane = subprocess.Popen(["bash", str(script), "--seed", "1", "gmm", "hard", "stepwise_monotonic"],
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not stop_study.find_lanes(tmp_path.resolve()) and time.monotonic() < deadline:
            time.sleep(0.1)   # until the lane has moved to its checkout
        assert stop_study.main(["--root", str(tmp_path), "--wait", "20"]) == 0
        assert lane.wait(timeout=5) is not None
    finally:
        lane.kill()
    out = capsys.readouterr().out
    assert f"stopping process group {lane.pid}" in out
    snapshots = list((tmp_path / "docs/attention_study/v2_progress").glob("*.json"))
    assert [p.name.split("_")[0] for p in snapshots] == ["hard-s1"]   # gmm finished, stepwise not started
    record = json.loads(snapshots[0].read_text())
    assert snapshots[0].name == f"hard-s1_{record['date']}T{record['time_utc'].replace(':', '')}Z.json"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", record["date"]) and re.fullmatch(r"\d{2}:\d{2}", record["time_utc"])
    assert record["status"].endswith("at 4,424, tracking 0.75")
    assert record["command"] == "bash egs/synthetic/attention_study_v2.sh --seed 1 hard"
    assert record["checkpoints_saved"] == ["checkpoint_00004424.pt"]
    assert stop_study.main(["--root", str(tmp_path)]) == 0 and "no lane" in capsys.readouterr().out
