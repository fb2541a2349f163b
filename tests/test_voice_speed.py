"""egs/bench/voice_speed_targets.py: the speed benchmarks' figures beside their targets."""

import json
import subprocess
from pathlib import Path

import pytest
from conftest import repo_script

ROOT = Path(__file__).resolve().parents[1]

BENCHMARKS = {
    "onnx": {"rtf": {"torch": 0.062, "onnx": 0.051, "onnx_int8": 0.038}},
    "serve": {"rounds": [{"latency_p95_s": 3.1}, {"latency_p95_s": 5.4}]},
    "streaming": {"first_audio_seconds_streamed": 0.129},
    "model": {"synthesis": {"vocoder": "vocos-student", "fp32_batch1": {"realtime_factor": 0.064},
                            "fp32_batch16": {"realtime_factor": 0.0156}}},
    "vocoder": {"clip_seconds": 10.0, "griffin-lim": {"iterations": 64, "rtf": 0.03}, "vocos_student": {"rtf": 0.005}},
}


def test_each_figure_is_read_against_its_target(tmp_path, capsys):
    for name, content in BENCHMARKS.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(content))
    repo_script("egs/bench/voice_speed_targets.py").main([str(tmp_path)])
    summary = json.loads((tmp_path / "targets.json").read_text())
    met = {name: (entry["figure"], entry["met"]) for name, entry in summary["targets"].items()}
    assert met == {"rtf_batch1_torch": (0.062, False), "rtf_batch1_onnx": (0.051, False),
                   "rtf_batch1_onnx_int8": (0.038, True), "serve_p95_s": (5.4, False),
                   "first_audio_s": (0.129, True)}   # the worse serve round
    assert summary["bench_model_rtf"] == {"fp32_batch1": 0.064, "fp32_batch16": 0.0156}
    assert summary["vocoder_rtf"] == {"griffin-lim": 0.03, "vocos_student": 0.005}
    assert "| 0.038 | ≤ 0.05 | yes |" in (tmp_path / "targets.md").read_text()
    assert "**no**" in capsys.readouterr().out


def test_a_missing_benchmark_is_one_error_line(tmp_path, capsys):
    (tmp_path / "onnx.json").write_text(json.dumps(BENCHMARKS["onnx"]))
    with pytest.raises(SystemExit) as stop:
        repo_script("egs/bench/voice_speed_targets.py").main([str(tmp_path)])
    error = capsys.readouterr().err
    assert stop.value.code == 2 and error.startswith("error: ") and error.count("\n") == 1
    assert "serve.json is missing" in error
    assert not (tmp_path / "targets.json").exists()


def _state(pid: int) -> str:
    """The process state letter from /proc (``T`` when stopped)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_benchmarks_stop_the_paused_groups_and_continue_them_at_exit(tmp_path):
    """egs/bench/pause_groups.sh: each given group is stopped while the script runs, continued when it exits."""
    groups = [subprocess.Popen(["sleep", "60"], start_new_session=True) for _ in range(2)]
    try:
        script = (f"source {ROOT / 'egs/bench/pause_groups.sh'}; trap resume_groups EXIT; "
                  f"pause_groups {groups[0].pid} {groups[1].pid}; "
                  f"cut -d' ' -f3 /proc/{groups[0].pid}/stat /proc/{groups[1].pid}/stat")
        during = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.split()
        assert during == ["T", "T"]
        assert "T" not in [_state(group.pid) for group in groups]
    finally:
        for group in groups:
            group.kill()
            group.wait()
