"""The robustness suite's held-out everyday sentences are the project's own: in no text any corpus
recipe draws from (LJSpeech's transcripts, the fortune files), not even as a run of six words."""

import gzip
import re
from pathlib import Path

import pytest
from conftest import repo_script

from tts.evaluation.robustness import load_suite, long_cer, long_clause_orders, recognized, suite_categories
from tts.evaluation.scoring import Scored
from tts.metrics.asr import ErrorCounts

ROOT = Path(__file__).resolve().parents[1]
FORTUNES = Path("/usr/share/games/fortunes")


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def six_word_runs(text: str) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i:i + 6]) for i in range(len(w) - 5)}


def training_sources() -> str:
    with gzip.open(ROOT / "recipes" / "ljspeech" / "nvidia_filelists.tsv.gz", "rt", encoding="utf-8") as fh:
        text = fh.read()
    for path in sorted(FORTUNES.glob("*")):
        if path.is_file() and not path.suffix:
            text += "\n" + path.read_text(encoding="latin-1")
    return text


def test_the_held_out_everyday_sentences_are_in_no_training_source():
    held_out = load_suite("robustness")["categories"]["everyday_heldout"]
    assert len(held_out) >= 100 and len(set(held_out)) == len(held_out)
    if not any(FORTUNES.glob("*")):
        pytest.skip("the fortune files are not installed (make system-deps installs them)")
    sources = " ".join(words(training_sources()))
    runs = set().union(*(six_word_runs(s) for s in held_out))
    found = sorted(" ".join(run) for run in runs if " ".join(run) in sources)
    assert not found, found


def test_the_long_clauses_are_in_no_training_source_and_make_ten_different_orders():
    clauses = load_suite("robustness")["long_clauses"]
    orders = long_clause_orders(clauses, 10)
    assert orders[0] == clauses and len({tuple(order[:3]) for order in orders}) == 10  # ten different openings
    assert orders == long_clause_orders(clauses, 10) and all(sorted(o) == sorted(clauses) for o in orders)
    if not any(FORTUNES.glob("*")):
        pytest.skip("the fortune files are not installed (make system-deps installs them)")
    sources = " ".join(words(training_sources()))
    runs = set().union(*(six_word_runs(c) for c in clauses))
    assert not sorted(" ".join(run) for run in runs if " ".join(run) in sources)


def test_long_cer_pools_the_passages_and_gives_the_ratio_with_its_spread():
    def scored(uid: str, ours: int, reference: int) -> Scored:
        return Scored({"id": uid}, ErrorCounts(char_errors=ours, chars=100), ErrorCounts(char_errors=reference, chars=100))

    errors = {1: [2, 4], 2: [5, 5], 3: [6, 10]}
    rows = [scored(f"long-{m}x-{p:02d}", e, 1) for m, per in errors.items() for p, e in enumerate(per, 1)]
    summary = long_cer(rows)
    assert summary["long_passages"] == 2 and summary["long_cer"] == {"1x": 0.03, "2x": 0.05, "3x": 0.08}
    assert summary["long_reference_cer"] == {"1x": 0.01, "2x": 0.01, "3x": 0.01}
    assert summary["long_cer_ratio"] == round(8 / 3, 3) and summary["long_cer_ratio_standard_error"] > 0
    one = long_cer([r for r in rows if r.row["id"].endswith("-01")])
    assert one["long_cer_ratio"] == 3.0 and one["long_cer_ratio_standard_error"] is None


def test_the_one_word_choice_set_shares_no_word_with_the_reported_one_and_counts_exact_hearings():
    categories = load_suite("robustness")["categories"]
    assert len(set(categories["one_word_choice"])) == len(categories["one_word_choice"]) == 100
    assert len(set(categories["one_word_choice_more"])) == len(categories["one_word_choice_more"]) == 200
    sets = [set(words(" ".join(categories[name]))) for name in ("one_word", "one_word_choice", "one_word_choice_more")]
    assert not sets[0] & sets[1] and not sets[0] & sets[2] and not sets[1] & sets[2]
    assert all(len(words(text)) == 1 for text in categories["one_word_choice_more"])
    heard = [Scored({}, ErrorCounts(substitutions=s, words=1), ErrorCounts(insertions=i, words=1))
             for s, i in [(0, 0), (1, 0), (0, 1), (0, 0)]]
    assert recognized(heard) == {"recognized": 0.75, "reference_recognized": 0.75}
    assert recognized(heard[1:2]) == {"recognized": 0.0, "reference_recognized": 1.0}


def test_the_one_word_choice_sets_change_no_corpus(monkeypatch):
    """The short-utterance corpus leaves out every suite text, so a suite text it could have drawn
    would change it: the choice words must be none of its candidates (everyday_voice.sh's call)."""
    if not any(FORTUNES.glob("*")):
        pytest.skip("the fortune files are not installed (make system-deps installs them)")
    from tts.evaluation import robustness

    prepare = repo_script("recipes/synthetic/prepare.py")
    base = [u.text for u in prepare.fortune_utterances(200, 4321)]
    with_choice = [u.text for u in prepare.short_utterances(600, base, 4321)]
    suite = load_suite("robustness")
    without = {**suite, "categories": {k: v for k, v in suite["categories"].items()
                                       if k not in ("one_word_choice", "one_word_choice_more")}}
    monkeypatch.setattr(robustness, "load_suite", lambda name: without)
    assert [u.text for u in prepare.short_utterances(600, base, 4321)] == with_choice


def test_the_report_sentences_are_fresh_and_in_no_other_text():
    """The 200 sentences kept for reporting share no run of six words with any training source nor
    with the robustness suite (whose everyday sentences have been used to choose checkpoints)."""
    report = load_suite("report")
    sentences = [s for texts in report["categories"].values() for s in texts]
    assert len(sentences) >= 200 and len(set(sentences)) == len(sentences)
    assert suite_categories(report) == ["kitchen", "street", "weather", "numbers", "names"]  # no long category
    robustness = " ".join(words(" ".join(s for texts in load_suite("robustness")["categories"].values()
                                         for s in texts)))
    sources = robustness + (" " + " ".join(words(training_sources())) if any(FORTUNES.glob("*")) else "")
    runs = set().union(*(six_word_runs(s) for s in sentences))
    found = sorted(" ".join(run) for run in runs if " ".join(run) in sources)
    assert not found, found


def test_a_suite_run_can_take_some_categories(tmp_path):
    from tts import cli

    suite = load_suite("robustness")
    assert suite_categories(suite)[-1] == "long" and "everyday_heldout" in suite_categories(suite)
    assert cli.main(["evaluate", "--suite", "robustness", "--categories", "nope", "--out", str(tmp_path)]) == 2
    assert cli.main(["evaluate", "--data", "x", "--categories", "one_word", "--out", str(tmp_path)]) == 2
