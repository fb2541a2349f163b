"""The one sentence splitter (synthesis and the corpus recipes)."""

import pytest

from tts.text.sentences import sentences, split_sentences, with_end_mark


@pytest.mark.parametrize("text, expected", [
    ("The U.S. Army won! Then they left.", ["The U.S. Army won!", "Then they left."]),
    ("Dr. Smith paid $3.50. Mr. Jones did not.", ["Dr. Smith paid $3.50.", "Mr. Jones did not."]),
    ("It was 3.14 exactly. Wait... What?", ["It was 3.14 exactly.", "Wait...", "What?"]),
    ('John F. Kennedy spoke. "Go home!" he said.', ["John F. Kennedy spoke.", '"Go home!" he said.']),
    ("Meet me at No. 5 Baker St. Then we go.", ["Meet me at No. 5 Baker St.", "Then we go."]),
    ("We prayed at St. Mary's. No. Never again.", ["We prayed at St. Mary's.", "No.", "Never again."]),
    ("He left at 10:45 p.m. with bags, e.g. two.", ["He left at 10:45 p.m. with bags, e.g. two."]),
    ("  one   line\nbroken  ", ["one line broken"]),
])
def test_sentence_boundaries(text, expected):
    assert sentences(text) == expected


def test_long_sentences_are_cut_at_clauses_then_words():
    long = "We walked, " + " ".join(["far"] * 35) + ", and then we rested."
    pieces = split_sentences(long, max_words=30)
    assert all(len(p.split()) <= 30 for p in pieces) and " ".join(pieces).split() == long.split()
    assert pieces[0] == "We walked," and split_sentences("Short one. Another.") == ["Short one.", "Another."]


@pytest.mark.parametrize("text, expected", [
    ("I", "I."), ("Hello world  ", "Hello world."), ("costs $5", "costs $5."), ('he said "go"', 'he said "go".'),
    ("(see below)", "(see below)."), ("Go.", "Go."), ("Why?", "Why?"), ("Wait...", "Wait..."), ("We walked,", "We walked,"),
    ('"Stop!"', '"Stop!"'), ("", ""),
])
def test_a_text_that_ends_on_a_word_gets_a_full_stop(text, expected):
    assert with_end_mark(text) == expected
