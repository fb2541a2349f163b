"""egs/synthetic/exposure_wer.py: the figures that choose between two voices, paired sentence by
sentence with another run's output, and a clear error for a file that is not one."""

from __future__ import annotations

import json

import pytest
from conftest import repo_script

from tts.errors import TTSError


def _row(text: str, words: int, **errors: int) -> dict:
    return {"text": text, "words": words, **{f"{way}_word_errors": n for way, n in errors.items()}}


def test_pairs_with_the_reference_and_with_a_baseline_matched_by_text():
    exposure = repo_script("egs/synthetic/exposure_wer.py")
    rows = [_row("a b c d", 4, reference=0, free_running=2), _row("e f", 2, reference=1, free_running=1)]
    assert exposure.paired(rows, "free_running") == pytest.approx([0.25, 0.25])  # (0.5 + 0) / 2, sd 0.354 / √2
    baseline = [_row("e f", 2, reference=1, free_running=2), _row("a b c d", 4, reference=0, free_running=2)]
    assert exposure.paired(rows, "free_running", baseline, "free_running") == pytest.approx([-0.25, 0.25])


def test_a_baseline_must_hold_every_text_and_way(tmp_path):
    exposure = repo_script("egs/synthetic/exposure_wer.py")
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"rows": [_row("a b", 2, reference=0, free_running=1)]}))
    assert len(exposure.baseline_rows(str(path), ["a b"], ["free_running"])) == 1
    with pytest.raises(TTSError, match="lacks 1 of these texts"):
        exposure.baseline_rows(str(path), ["a b", "c d"], ["free_running"])
    with pytest.raises(TTSError, match="own_inputs"):
        exposure.baseline_rows(str(path), ["a b"], ["own_inputs"])
    path.write_text("{}")
    with pytest.raises(TTSError, match="not an output of this script"):
        exposure.baseline_rows(str(path), ["a b"], ["free_running"])
