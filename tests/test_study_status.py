"""egs/synthetic/study_status.py: where the attention study's runs stand."""

import json

from conftest import repo_script

status_module = repo_script("egs/synthetic/study_status.py")


def _tree(tmp_path):
    results = tmp_path / "docs/attention_study/v2_results"
    results.mkdir(parents=True)
    (results / "gmm-s1.json").write_text(json.dumps({"test": {"cer": 0.0512}, "seconds_per_update": 1.2}))
    (results / "forward-s1.json").write_text(json.dumps({"test": {"cer": 0.061}, "seconds_per_update": 1.0}))
    hard = tmp_path / "exp/attention_study_v2/hard-s1"
    hard.mkdir(parents=True)
    for step in (4288, 4424):
        (hard / f"checkpoint_{step:08d}.pt").write_bytes(b"")
    records = [{"step": 2144, "split": "val", "true_tracking_accuracy": 0.64},
               {"step": 4288, "split": "val", "true_tracking_accuracy": 0.75}, {"step": 4300, "loss": 2.5}]
    (hard / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n{\"step\": 43")  # cut short
    trained = tmp_path / "exp/attention_study_v2/location-s2"
    trained.mkdir(parents=True)
    (trained / "checkpoint_00010720.pt").write_bytes(b"")
    return tmp_path


def test_finished_under_way_and_not_started_runs_and_the_hours_left(tmp_path):
    arms = status_module.status(_tree(tmp_path), [1, 2])
    by_name = {f"{s.variant}-s{s.seed}": s for s in arms["v2"]}
    assert "luong_dot-s1" not in by_name and "luong_concat-s1" not in by_name   # identities are not trained
    assert len(arms["v2"]) == 12 * 2 and len(arms["v2_transformer"]) == 2 * 2
    assert by_name["gmm-s1"].cell(10720) == "CER 0.051"
    assert by_name["hard-s1"].cell(10720) == "at 4,424, tracking 0.75"
    assert by_name["location-s2"].cell(10720) == "trained, evaluating"
    assert by_name["gmm-s2"].cell(10720) == "–"
    everything = arms["v2"] + arms["v2_transformer"]
    hours, per_update = status_module.lane_hours_left(everything, 10720)
    assert per_update == 1.1                                   # the median of 1.2 and 1.0
    unfinished_updates = (28 - 2 - 2) * 10720 + (10720 - 4424)   # 28 runs: 2 finished, hard part-way, location trained
    assert abs(hours - unfinished_updates * 1.1 / 3600) < 1e-9


def test_the_table_names_every_variant_and_the_totals(tmp_path, capsys):
    assert status_module.main(["--root", str(_tree(tmp_path)), "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "| hard | at 4,424, tracking 0.75 |" in out and "| alpha_fixed | – |" in out
    assert "2 of 14 runs finished, 1 under way on this machine" in out
