"""Splitting text into sentences, and long sentences into pieces the acoustic model can say in
one go, and closing a text that ends on a word. Shared by synthesis and the corpus recipes.

A period ends a sentence unless it closes a title or abbreviation that stands before a name or
number ("Dr. Smith", "St. Mary", "No. 5", "vs. them") or an initial or initialism ("John F.
Kennedy", "The U.S. Army"): those are followed by a capital too, so only knowing them tells the
cases apart. "No." holds only before a number; "St." after a capitalized word is a street and
may end a sentence. Decimal points and the dots inside "e.g." have no space after them and never
split. An initialism that really ends a sentence ("in the U.S. It") stays with the next one.
The text of each sentence is returned as written (normalization comes later).
"""

from __future__ import annotations

import re

# a boundary candidate: sentence punctuation (and closing quotes/brackets), space, then a capital,
# digit or opening quote/bracket
_BOUNDARY_RE = re.compile(r"[.!?]+[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_LAST_WORD_RE = re.compile(r"(?:(\S+)\s+)?(\S+)\.[\"')\]]*\s+$")
_INITIALISM_RE = re.compile(r"(?:[A-Za-z]\.)*[A-Za-z]")
# abbreviations that stand before a name or number, so a capital after them does not start a sentence
NON_FINAL_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st gen gov sen rep capt col lt sgt maj hon rev mt ft vs messrs mme mlle".split())
# abbreviations that stand before a number only ("No. 5"; "No. Go away." ends a sentence)
BEFORE_NUMBER_ABBREVIATIONS = frozenset(["no", "nos"])
_CLAUSE_RE = re.compile(r"(?<=[,;:])\s+")
# the end of a text that stops on a word (closing quotes and brackets aside)
_ENDS_ON_A_WORD_RE = re.compile(r"\w[\"')\]]*$")


def _ends_sentence(text: str, end: int) -> bool:
    """Whether the boundary candidate ``text[:end]`` (punctuation and space included) ends a sentence."""
    match = _LAST_WORD_RE.search(text[:end])
    if match is None:  # "!" or "?"
        return True
    previous, word = match.group(1) or "", match.group(2).lstrip("\"'([")
    if word.endswith("."):  # an ellipsis "..." ends a sentence when a capital follows
        return True
    if word.lower() == "st" and previous[:1].isupper():  # "Baker St." is a street, "at St. Mary's" a saint
        return True
    if word.lower() in BEFORE_NUMBER_ABBREVIATIONS:
        return not text[end:end + 1].isdigit()
    return word.lower() not in NON_FINAL_ABBREVIATIONS and not _INITIALISM_RE.fullmatch(word)


def sentences(text: str) -> list[str]:
    """Split text into sentences (whitespace collapsed), each as written."""
    text = " ".join(text.split())
    pieces, start = [], 0
    for match in _BOUNDARY_RE.finditer(text):
        if _ends_sentence(text, match.end()):
            pieces.append(text[start:match.end()].strip())
            start = match.end()
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


def with_end_mark(text: str) -> str:
    """``text`` with a full stop after its last word when it has no closing punctuation.

    Corpus utterances end with one (2,994 of the synthetic corpus's 2,997), and models learn to
    stop after it: the bundled model read "I" to the step limit, "I." it ends.
    """
    text = text.rstrip()
    return text + "." if _ENDS_ON_A_WORD_RE.search(text) else text


def split_sentences(text: str, max_words: int = 30) -> list[str]:
    """:func:`sentences`, with a sentence longer than ``max_words`` split further at clause
    punctuation (``,;:``), then between words."""
    pieces: list[str] = []
    for sentence in sentences(text):
        if len(sentence.split()) <= max_words:
            pieces.append(sentence)
            continue
        current: list[str] = []
        for clause in _CLAUSE_RE.split(sentence):
            words = clause.split()
            if current and len(current) + len(words) > max_words:
                pieces.append(" ".join(current))
                current = []
            while len(words) > max_words:
                pieces.append(" ".join(words[:max_words]))
                words = words[max_words:]
            current.extend(words)
        if current:
            pieces.append(" ".join(current))
    return pieces
