"""Long-form robustness (``tts evaluate --long-form``): passages built to length, where an alignment
is lost, and the command end to end on a tiny model."""

import json
import shutil

import numpy as np
import pytest
from conftest import make_tiny_corpus, tiny_config_dict

from tts.errors import TTSError
from tts.evaluation.long_form import make_passages
from tts.metrics import attention_report

SENTENCES = [f"sentence number {i} has some words." for i in range(12)]


def count_words(text: str) -> int:
    return len(text.split())


def test_passages_reach_each_multiple_without_repeating_a_sentence():
    passages = make_passages(SENTENCES, count_words, longest=6, multiples=[1, 2, 4], per_multiple=3, seed=1)
    assert [p.id for p in passages[:4]] == ["long-1x-01", "long-1x-02", "long-1x-03", "long-2x-01"]
    for p in passages:
        assert p.tokens == count_words(p.text) >= 6 * p.multiple
        said = [s for s in SENTENCES if s in p.text]
        assert len(said) == p.text.count("sentence number")  # no sentence twice
        assert count_words(p.text) - 6 < 6 * p.multiple  # the last sentence was the one that got there
    assert len({p.text for p in passages if p.multiple == 4}) == 3  # different passages at one length
    assert passages == make_passages(SENTENCES, count_words, 6, [1, 2, 4], 3, seed=1)  # seeded
    assert passages != make_passages(SENTENCES, count_words, 6, [1, 2, 4], 3, seed=2)


def test_a_pool_too_small_for_the_longest_passage_is_refused():
    with pytest.raises(TTSError, match=r"12 sentences make 72 tokens, fewer than a 16x passage needs \(96\)"):
        make_passages(SENTENCES, count_words, longest=6, multiples=[16])
    with pytest.raises(TTSError, match="test split has none"):
        make_passages([" "], count_words, longest=6)


def diagonal(steps=60, n=20):
    a = np.zeros((steps, n))
    a[np.arange(steps), np.minimum(np.arange(steps) * n // steps, n - 1)] = 1.0
    return a


def test_where_the_alignment_is_lost():
    assert attention_report(diagonal()).lost_at is None
    assert attention_report(diagonal()[:30]).lost_at == pytest.approx(9 / 19)  # stopped on token 9 of 0..19
    skipping = diagonal()
    skipping[:, 5] = 0.0
    skipping[skipping.sum(axis=1) == 0, 6] = 1.0
    assert attention_report(skipping).lost_at == pytest.approx(5 / 19)
    back = np.zeros((10, 20))
    back[np.arange(10), np.arange(10) // 2 + 3] = 1.0  # after token 13, back to 3..7
    repeating = np.concatenate([diagonal()[:42], back, diagonal()[42:]])
    assert attention_report(repeating).lost_at == pytest.approx(13 / 19)
    stuck = np.concatenate([diagonal()[:30], np.tile(diagonal()[29], (40, 1))])  # parked on token 9 to the limit
    assert attention_report(stuck, step_limit_hit=True).lost_at == pytest.approx(9 / 19)


@pytest.mark.skipif(shutil.which("text2wave") is None, reason="Festival not installed (make system-deps)")
def test_long_form_end_to_end(tiny_experiment, tmp_path):
    from tts import cli
    from tts.config import config_from_dict
    from tts.data import compute_features

    corpus = make_tiny_corpus(tmp_path / "corpus", val=1, test=6)
    compute_features(corpus, config_from_dict(tiny_config_dict()), num_workers=1, progress=False)
    out = tmp_path / "long"
    args = ["evaluate", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--data", str(corpus),
            "--long-form", "1", "2", "--passages", "2", "--no-asr", "--no-mos", "--out", str(out)]
    assert cli.main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["multiples"]) == ["1x", "2x"] and summary["passages_per_multiple"] == 2
    longest = summary["longest_training_tokens"]
    rows = json.loads((out / "utterances.json").read_text())
    assert [r["id"] for r in rows] == ["long-1x-01", "long-1x-02", "long-2x-01", "long-2x-02"]
    assert all(r["tokens"] >= longest * int(r["category"][0]) for r in rows)
    for multiple, s in summary["multiples"].items():
        assert s["utterances"] == 2 and 0 <= s["lost"] <= 2
        assert s["lost"] == sum(r["lost_at"] is not None for r in rows if r["category"] == multiple)
    assert (out / "wavs" / "long-2x-02.wav").is_file()
    assert "| 2x | 2 |" in (out / "long_form.md").read_text()


def test_long_form_needs_a_corpus_and_no_suite(tmp_path, capsys):
    from tts import cli

    out = tmp_path / "out"
    for data in ([], ["--data", "d"]):
        assert cli.main(["evaluate", "--checkpoint", "x.pt", *data, "--suite", "robustness", "--long-form",
                         "--out", str(out)]) == 2
        assert capsys.readouterr().err.strip() == ("error: --long-form draws its passages from a corpus's test "
                                                   "split: give --data and no --suite")
    assert not out.exists()
