"""Splitting long text into sentence-sized pieces the acoustic model can say in one go."""

from __future__ import annotations

import re

from tts.text.normalize import expand_abbreviations

_SENTENCE_END_RE = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z0-9])")
_CLAUSE_RE = re.compile(r"(?<=[,;:])\s+")


def split_sentences(text: str, max_words: int = 30) -> list[str]:
    """Split a paragraph into sentences; a sentence longer than ``max_words`` is split further
    at clause punctuation (``,;:``), then between words.

    Abbreviations are expanded first, so "Dr. Smith" does not end a sentence.
    """
    text = " ".join(expand_abbreviations(text).split())
    pieces: list[str] = []
    for sentence in filter(None, _SENTENCE_END_RE.split(text)):
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
    return [p for p in (piece.strip() for piece in pieces) if p]
