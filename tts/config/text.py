"""Frontend settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TextMode = Literal["phoneme", "char", "mixed"]


@dataclass
class TextConfig:
    """``mode`` is ``phoneme`` (G2P), ``char`` or ``mixed``; ``add_bos`` / ``add_eos`` put a start /
    end symbol around every utterance's ids; ``lexicon`` names a file of pronunciations
    (``WORD AH0 B AW1 T`` per line) that take precedence over the dictionary."""

    mode: TextMode = "phoneme"
    add_eos: bool = True
    add_bos: bool = False
    lexicon: str = ""
