"""The benchmarks' plumbing (their numbers are reported by `tts bench`, never asserted here)."""

import json

from tts import cli


def test_attention_benchmark_reports_each_mechanism(capsys):
    cli.main(["bench", "attention", "--kinds", "location_sensitive", "forward", "--max-steps", "2",
              "--threads", "1", "--no-guided"])
    result = json.loads(capsys.readouterr().out)
    assert result["guided_attention"] is False and result["max_steps"] == 2
    assert sorted(result["results"]) == ["forward", "location_sensitive"]
    for row in result["results"].values():
        assert row["steps_to_alignment"] is None  # two steps never align
        assert 0.0 <= row["final_focus_rate"] <= 1.0
