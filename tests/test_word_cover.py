"""Carrier sentences for the common words a corpus seldom says (recipes/synthetic/word_cover.py)."""

import subprocess
import sys
from collections import Counter
from pathlib import Path

from conftest import repo_script

ROOT = Path(__file__).resolve().parents[1]
word_cover = repo_script("recipes/synthetic/word_cover.py", "word_cover_recipe")


def test_each_word_reaches_its_count_three_distinct_words_a_sentence():
    words = ["kettle", "coins", "attic", "water", "fog", "lettuce", "queue"]
    counts = Counter({"water": 5, "fog": 1})
    sentences = word_cover.carrier_sentences(words, counts, min_count=2, seed=7)
    said = word_cover.word_counts(sentences)
    template_words = word_cover.word_counts(t.format(a="", b="", c="") for t in word_cover.TEMPLATES)
    for word in words:
        if word not in template_words:
            assert counts[word] + said[word] >= 2, word
    assert said["water"] == 0  # already said often enough
    # 5 words short by two and fog by one: 11 slots, four sentences (the last filled with frequent words)
    assert len(sentences) == 4
    for sentence in sentences:
        mentioned = [w for w in words if w in word_cover.word_counts([sentence])]
        assert len(mentioned) == 3 and sentence[0].isupper() and sentence[-1] in ".?"
    assert sentences == word_cover.carrier_sentences(words, counts, min_count=2, seed=7)
    assert sentences != word_cover.carrier_sentences(words, counts, min_count=2, seed=8)


def test_common_words_are_dictionary_words_of_three_letters_or_more_and_never_profanity():
    words = word_cover.common_words(3000)
    from tts.text.g2p import cmu_dictionary

    known = cmu_dictionary()
    assert 2500 < len(words) < 3000 and words[:3] == ["the", "and", "for"]
    assert all(len(w) >= 3 and w.isalpha() and w.islower() and w in known for w in words)
    assert not word_cover.BLOCKED & set(words)
    assert "water" in words and "dont" not in words


def test_the_recipe_refuses_words_without_a_corpus_to_count(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "recipes/synthetic/prepare.py"), "--texts", "words", "--out",
                          str(tmp_path / "w")], capture_output=True, text=True)
    assert out.returncode == 2 and "--texts words needs --words-from CORPUS" in out.stderr
