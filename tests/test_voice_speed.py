"""egs/bench/voice_speed_targets.py: the speed benchmarks' figures beside their targets."""

import json

import pytest
from conftest import repo_script

BENCHMARKS = {
    "onnx": {"rtf": {"torch": 0.062, "onnx": 0.038}},
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
    assert met == {"rtf_batch1_torch": (0.062, False), "rtf_batch1_onnx": (0.038, True),
                   "serve_p95_s": (5.4, False), "first_audio_s": (0.129, True)}   # the worse serve round
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
