"""egs/synthetic/paired.py: two evaluations of the same texts compared text by text."""

import json

import pytest
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


def test_paired_split_by_whether_the_reference_recording_is_heard(tmp_path, capsys):
    reference_wers = [0.0, 1.0, 0.0, 1.0]
    for name, wers in (("a", [0.0, 0.0, 1.0, 1.0]), ("b", [0.0, 1.0, 0.0, 1.0])):
        (tmp_path / name).mkdir()
        rows = [{"id": f"w-{i}", "wer": wer, "reference_wer": ref} for i, (wer, ref) in enumerate(zip(wers, reference_wers))]
        (tmp_path / name / "utterances.json").write_text(json.dumps(rows))
    repo_script("egs/synthetic/paired.py").main([str(tmp_path / "a"), str(tmp_path / "b"), "--by-reference"])
    result = json.loads(capsys.readouterr().out)
    assert result["recognized"]["b_minus_a"] == 0.0
    assert result["reference_heard"]["utterances"] == 2
    assert result["reference_heard"]["recognized"]["b_minus_a"] == 0.5   # w-2 gained
    assert result["reference_misheard"]["recognized"]["b_minus_a"] == -0.5   # w-1 lost, as its reference is


def test_paired_split_needs_reference_transcripts(tmp_path, capsys):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "utterances.json").write_text(json.dumps([{"id": "w-0", "wer": 0.0}]))
    with pytest.raises(SystemExit) as stop:
        repo_script("egs/synthetic/paired.py").main([str(tmp_path / "a"), str(tmp_path / "b"), "--by-reference"])
    assert stop.value.code == 2 and "holds no reference transcripts" in capsys.readouterr().err


def test_paired_pools_the_evaluations_of_other_texts_and_refuses_one_text_twice(tmp_path, capsys):
    for name, category, wers in (("a", "c1", [0.0, 0.0]), ("b", "c1", [1.0, 0.0]),
                                 ("a2", "c2", [0.0, 1.0, 1.0]), ("b2", "c2", [0.0, 0.0, 1.0])):
        (tmp_path / name).mkdir()
        rows = [{"id": f"{category}-{i}", "wer": wer} for i, wer in enumerate(wers)]
        (tmp_path / name / "utterances.json").write_text(json.dumps(rows))
    paired = repo_script("egs/synthetic/paired.py")
    paired.main([str(tmp_path / "a"), str(tmp_path / "b"), "--with", str(tmp_path / "a2"), str(tmp_path / "b2")])
    result = json.loads(capsys.readouterr().out)
    assert result["utterances"] == 5 and result["recognized"]["a"] == 0.6 and result["recognized"]["b"] == 0.6
    assert result["recognized"]["b_minus_a"] == 0.0 and result["b"] == f"{tmp_path / 'b'}, {tmp_path / 'b2'}"
    with pytest.raises(SystemExit) as stop:
        paired.main([str(tmp_path / "a"), str(tmp_path / "b"), "--with", str(tmp_path / "a"), str(tmp_path / "b2")])
    assert stop.value.code == 2 and "utterance c1-0 is in two of" in capsys.readouterr().err
