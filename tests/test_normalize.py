import pytest

from tts.text import normalize_text
from tts.text.numbers import cardinal, ordinal, year

CASES = [
    ("Dr. Smith paid $3.50 for 2 books on March 3rd, 1999.",
     "Doctor Smith paid three dollars, fifty cents for two books on March third, nineteen ninety-nine."),
    ("Mr. and Mrs. Jones", "Mister and Misess Jones"),
    ("St. Patrick lived on Main St.", "Saint Patrick lived on Main street"),
    ("It cost $1.2 million.", "It cost one point two million dollars."),
    ("It cost $1.", "It cost one dollar."),
    ("Only $0.05 left", "Only five cents left"),
    ("Prices rose 15% and then 2.5%.", "Prices rose fifteen percent and then two point five percent."),
    ("Meet at 10:45 or 3 p.m.", "Meet at ten forty-five or three p m"),
    ("The train left at 10:00.", "The train left at ten o'clock."),
    ("at 9:05 a.m. sharp", "at nine oh five a m sharp"),
    ("He came 1st, she came 22nd, they were 103rd.", "He came first, she came twenty-second, they were one hundred third."),
    ("In 1999, 2000, 2008, 2019, 1905 and 1900.",
     "In nineteen ninety-nine, two thousand, two thousand eight, twenty nineteen, nineteen oh five and nineteen hundred."),
    ("1,234,567 people", "one million two hundred thirty-four thousand five hundred sixty-seven people"),
    ("pi is 3.14", "pi is three point one four"),
    ("It was -5 outside", "It was minus five outside"),
    ("Tom & Jerry", "Tom and Jerry"),
    ("caf\u00e9 na\u00efve \u201cquoted\u201d \u2014 done", 'cafe naive "quoted" - done'),
    ("  lots   of\t\nspace  ", "lots of space"),
    ("e.g. this, i.e. that", "for example this, that is that"),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_normalization_table(text, expected):
    assert normalize_text(text) == expected


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


def test_sentence_splitting():
    from tts.text.sentences import split_sentences

    text = 'Dr. Smith went home. He said "Hi!" Then he left at 3 p.m. and it was 1999. Mr. Jones stayed.'
    assert split_sentences(text) == ["Dr. Smith went home.", 'He said "Hi!"',
                                     "Then he left at 3 p.m. and it was 1999.", "Mr. Jones stayed."]
    long = "one, " * 40 + "end."
    pieces = split_sentences(long, max_words=30)
    assert all(len(p.split()) <= 30 for p in pieces) and " ".join(pieces).split() == long.split()
