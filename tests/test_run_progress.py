"""egs/synthetic/run_progress.py: a committable snapshot of a training run under way."""

import json

from conftest import repo_script


def test_snapshot_keeps_validations_sessions_and_the_resumed_records(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    records = [{"step": 1, "loss": 0.9}, {"step": 25, "loss": 0.8}, {"step": 30, "loss": 0.7},
               {"step": 50, "loss": 0.6}, {"step": 50, "split": "val", "mel": 0.3},
               {"step": 75, "loss": 0.5},                            # logged, then the run stopped
               {"step": 75, "loss": 0.45}]                           # the same step after the resume
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (run / "sessions.jsonl").write_text(json.dumps({"step": 0, "cpu_instructions": ["avx2"]}) + "\n")
    (run / "checkpoint_00000050.pt").write_bytes(b"")
    out = tmp_path / "progress.json"
    assert repo_script("egs/synthetic/run_progress.py").main(
        [str(run), "--status", "under way", "--command", "bash x.sh", "--out", str(out)]) == 0
    snapshot = json.loads(out.read_text())
    assert snapshot["status"] == "under way" and snapshot["command"] == "bash x.sh"
    assert snapshot["sessions"] == [{"step": 0, "cpu_instructions": ["avx2"]}]
    assert snapshot["checkpoints_saved"] == ["checkpoint_00000050.pt"]
    assert snapshot["validations"] == [{"step": 50, "split": "val", "mel": 0.3}]
    assert [(r["step"], r["loss"]) for r in snapshot["train_records"]] == [(1, 0.9), (25, 0.8), (50, 0.6), (75, 0.45)]
    assert snapshot["last_logged_step"] == 75


def test_a_folder_without_metrics_is_one_error_line(tmp_path, capsys):
    out = tmp_path / "progress.json"
    assert repo_script("egs/synthetic/run_progress.py").main(
        [str(tmp_path), "--status", "s", "--command", "c", "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith("error: ") and not out.exists()
