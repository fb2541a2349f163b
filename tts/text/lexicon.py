"""A user's pronunciation lexicon: one word and its ARPAbet per line, taking precedence over the
CMU dictionary and the neural G2P.

    # comments and blank lines are ignored; words are matched without regard to case
    tomato   T AH0 M AA1 T OW0
    Nguyen   W IH1 N
"""

from __future__ import annotations

from pathlib import Path

from tts.errors import TTSError
from tts.text.symbols import ARPABET_SET


def load_lexicon(path: str | Path) -> dict[str, list[str]]:
    """``word → phonemes`` from a lexicon file; a malformed line is an error naming it."""
    path = Path(path)
    if not path.is_file():
        raise TTSError(f"lexicon {path} does not exist")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise TTSError(f"lexicon {path} is not UTF-8 text") from None
    lexicon: dict[str, list[str]] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        word, phonemes = fields[0].lower(), fields[1:]
        bad = [p for p in phonemes if p not in ARPABET_SET]
        if not phonemes or bad:
            raise TTSError(f"{path}:{number}: expected 'WORD PH ON EMES' in ARPAbet, got {line.strip()[:60]!r}"
                           + (f" (unknown: {', '.join(bad)})" if bad else ""))
        lexicon[word] = phonemes
    return lexicon
