"""The normalizer against a table of cases by semiotic class (tests/data/normalization.tsv)."""

from pathlib import Path

import pytest

from tts.text import normalize_text
from tts.text.numbers import cardinal, ordinal, year

TABLE = Path(__file__).parent / "data" / "normalization.tsv"
_ESCAPES = {"\\t": "\t", "\\n": "\n", "\\x07": "\x07", "\\x1b": "\x1b"}


def read_table() -> list[tuple[str, str, str]]:
    rows = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            category, text, expected = line.split("\t")
            for escape, char in _ESCAPES.items():
                text = text.replace(escape, char)
            rows.append((category, text, expected))
    return rows


CASES = read_table()


def test_the_table_covers_every_class():
    classes = {c for c, _, _ in CASES}
    assert len(CASES) >= 250
    assert {"cardinal", "decimal", "ordinal", "year", "decade", "date", "time", "money", "percent", "fraction",
            "phone", "measure", "scientific", "roman", "abbreviation", "initialism", "url", "email", "control",
            "ljspeech"} <= classes


@pytest.mark.parametrize("category, text, expected", CASES, ids=[f"{c}:{t[:30]}" for c, t, _ in CASES])
def test_normalization_table(category, text, expected):
    assert normalize_text(text) == expected, f"class {category}"


def test_number_words():
    assert cardinal(0) == "zero"
    assert cardinal(115) == "one hundred fifteen"
    assert cardinal(2_000_000_001) == "two billion one"
    assert ordinal(12) == "twelfth" and ordinal(40) == "fortieth" and ordinal(101) == "one hundred first"
    assert year(2010) == "twenty ten" and year(1066) == "ten sixty-six"


def test_emoji_and_long_text_are_handled():
    assert normalize_text("hello \U0001F600 world") == "hello world"
    long = "The year 1999 was long. " * 420  # > 10,000 characters
    out = normalize_text(long)
    assert len(long) > 10_000
    assert out.count("nineteen ninety-nine") == 420 and "1" not in out


def test_a_thousand_digits_are_read_digit_by_digit():
    out = normalize_text("9" * 1000)
    assert out.split() == ["nine"] * 1000


def test_sentence_splitting():
    from tts.text.sentences import split_sentences

    text = 'Dr. Smith went home. He said "Hi!" Then he left at 3 p.m. and it was 1999. Mr. Jones stayed.'
    assert split_sentences(text) == ["Dr. Smith went home.", 'He said "Hi!"',
                                     "Then he left at 3 p.m. and it was 1999.", "Mr. Jones stayed."]
    long = "one, " * 40 + "end."
    pieces = split_sentences(long, max_words=30)
    assert all(len(p.split()) <= 30 for p in pieces) and " ".join(pieces).split() == long.split()
