"""Part-of-speech tags for the G2P's homographs: the CRF model that ``gruut-lang-en`` ships, run
through ``python-crfsuite`` directly (the ``gruut`` package itself costs half a second to import).

The model was trained on gruut's word features, so :func:`word_features` reproduces them key for
key (``tests/test_g2p.py`` checks them against gruut's own code): the word (base64, as crfsuite
wants ASCII), its length, whether it is punctuation or digits, its first and last 2–3 letters,
the same for the two words either side, and sentence-start / sentence-end marks.
"""

from __future__ import annotations

import base64
import string
from pathlib import Path
from typing import Sequence, Union

Feature = Union[str, bool, int, float]

#: words of context either side, and the prefix / suffix lengths the model was trained with
CONTEXT_WORDS = 2
AFFIX_LENGTHS = (2, 3)


def model_path() -> Path:
    """The English CRF tagger inside the ``gruut-lang-en`` wheel."""
    import gruut_lang_en

    return Path(gruut_lang_en.get_lang_dir()) / "pos" / "model.crf"


def _local_features(word: str, prefix: str = "") -> dict[str, Feature]:
    features: dict[str, Feature] = {
        f"{prefix}bias": 1.0,
        f"{prefix}word": base64.b64encode(word.encode()).decode("ascii"),
        f"{prefix}len(word)": len(word),
        f"{prefix}word.ispunctuation": word in string.punctuation,  # a substring test, as trained
        f"{prefix}word.isdigit()": word.isdigit(),
    }
    features.update({f"{prefix}word[:{n}]": word[:n] for n in AFFIX_LENGTHS})
    features.update({f"{prefix}word[-{n}:]": word[-n:] for n in AFFIX_LENGTHS})
    return features


def word_features(words: Sequence[str], i: int) -> dict[str, Feature]:
    """The CRF features of ``words[i]`` in its sentence."""
    features = _local_features(words[i])
    if i == 0:
        features["BOS"] = True
    if i == len(words) - 1:
        features["EOS"] = True
    for offset in range(1, CONTEXT_WORDS + 1):
        if i >= offset:
            features.update(_local_features(words[i - offset], prefix=f"-{offset}:"))
    for offset in range(1, CONTEXT_WORDS + 1):
        if i + offset < len(words):
            features.update(_local_features(words[i + offset], prefix=f"+{offset}:"))
    return features


class PosTagger:
    """Tokens of one sentence → Penn Treebank tags, e.g. ``["They", "refuse", "."]`` →
    ``["PRP", "VBP", "."]``."""

    def __init__(self, path: Path | None = None) -> None:
        import pycrfsuite

        self._tagger = pycrfsuite.Tagger()
        self._tagger.open(str(path or model_path()))

    def __call__(self, words: Sequence[str]) -> list[str]:
        return list(self._tagger.tag([word_features(words, i) for i in range(len(words))]))
