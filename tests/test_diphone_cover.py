"""The synthetic corpus's broad text selection: a greedy diphone cover (recipes/synthetic/diphone_cover.py)."""

from collections import Counter

from conftest import repo_script

coverage = repo_script("recipes/synthetic/diphone_cover.py", "coverage_recipe")


def test_phones_drop_stress_punctuation_and_boundaries():
    from tts.text import Tokenizer

    assert coverage.phones("The kettle.", Tokenizer()) == ["DH", "AH", "K", "EH", "T", "AH", "L"]
    assert coverage.diphones(["K", "AE", "T", "K", "AE"]) == Counter({("K", "AE"): 2, ("AE", "T"): 1, ("T", "K"): 1})


def test_the_greedy_cover_prefers_new_diphones_per_phone_and_stops_at_the_target():
    d = coverage.diphones
    candidates = {"repeat": d(["AA", "B"] * 6), "broad": d(["K", "AE", "T", "S", "IH", "T"]),
                  "same": d(["K", "AE", "T"]), "other": d(["M", "UW", "N"])}
    lengths = {"repeat": 12, "broad": 6, "same": 3, "other": 3}
    chosen = coverage.greedy_cover(candidates, lengths, size=2, target=1)
    assert chosen == ["broad", "other"]  # 5 new diphones in 6 phones, then 2 in 3; "same" adds nothing new
    report = coverage.coverage_report([candidates[k] for k in chosen], thresholds=(1, 2))
    assert report["diphone_types"] == 7 and report["seen_1x"] == 7 and report["seen_2x"] == 0
    assert report["share_seen_1x"] == round(7 / 39 ** 2, 4)
