"""egs/synthetic/paired.py: two evaluations of the same texts compared text by text."""

import json

from conftest import repo_script


def test_paired_differences_count_texts_heard_exactly(tmp_path, capsys):
    for name, wers in (("a", [0.0, 0.0, 1.0, 0.0]), ("b", [1.0, 0.0, 1.0, 2.0])):
        (tmp_path / name).mkdir()
        rows = [{"id": f"w-{i}", "wer": wer, "cer": wer / 4} for i, wer in enumerate(wers)]
        (tmp_path / name / "utterances.json").write_text(json.dumps(rows))
    repo_script("egs/synthetic/paired.py").main([str(tmp_path / "a"), str(tmp_path / "b")])
    result = json.loads(capsys.readouterr().out)
    assert result["utterances"] == 4 and "dnsmos_p808" not in result
    assert result["recognized"] == {"a": 0.75, "b": 0.25, "b_minus_a": -0.5, "standard_error": 0.2887}
    assert result["wer"]["b_minus_a"] == 0.75
