"""Symbol inventories: the list of token strings a model's embedding is indexed by.

One inventory holds pad, EOS, word boundary, punctuation, lower-case letters and
ARPAbet phonemes (with and without stress), plus BOS at the end when the text config asks
for it (so the other ids, and models trained without it, stay as they were), so a model trained in any text mode
can be described by the same structure. It serializes to a plain dict that every
checkpoint carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tts.config import TextConfig
from tts.errors import TTSError

PAD = "_"
EOS = "~"
BOS = "^"
SPACE = " "
PUNCTUATION = list("!'\"(),-.:;?")
LETTERS = list("abcdefghijklmnopqrstuvwxyz")
# Symbols that need not take any time in speech (word boundaries, punctuation, pad, BOS, EOS): an
# alignment that never visits them has not skipped anything audible.
SILENT_SYMBOLS = frozenset([PAD, BOS, EOS, SPACE, *PUNCTUATION])
_ARPABET_BASE = [
    "AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G",
    "HH", "IH", "IY", "JH", "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T",
    "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH",
]
_VOWELS = {"AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"}
ARPABET = sorted(
    _ARPABET_BASE + [f"{p}{stress}" for p in _VOWELS for stress in "012"]
)


@dataclass
class SymbolInventory:
    """An ordered list of symbols; a symbol's id is its index. ``symbols[0]`` is padding."""

    symbols: list[str] = field(default_factory=lambda: [PAD, EOS, SPACE] + PUNCTUATION + LETTERS + ARPABET)
    version: int = 1

    def __post_init__(self) -> None:
        if len(set(self.symbols)) != len(self.symbols):
            raise TTSError("symbol inventory has duplicate symbols")
        if self.symbols[0] != PAD or EOS not in self.symbols:
            raise TTSError(f"symbol inventory must start with pad '{PAD}' and contain EOS '{EOS}'")
        self._index = {s: i for i, s in enumerate(self.symbols)}

    def __len__(self) -> int:
        return len(self.symbols)

    def __contains__(self, symbol: str) -> bool:
        return symbol in self._index

    def id(self, symbol: str) -> int:
        """Id of a symbol (KeyError if absent; callers filter unknown symbols first)."""
        return self._index[symbol]

    @property
    def pad_id(self) -> int:
        return 0

    @property
    def eos_id(self) -> int:
        return self._index[EOS]

    @property
    def bos_id(self) -> int:
        if BOS not in self._index:
            raise TTSError(f"this symbol inventory has no BOS symbol '{BOS}' (it predates text.add_bos)")
        return self._index[BOS]

    def is_phoneme(self, symbol: str) -> bool:
        return symbol in ARPABET_SET

    @classmethod
    def for_text(cls, text: TextConfig) -> "SymbolInventory":
        """The inventory a text config needs: the default one, with BOS appended for ``add_bos``."""
        inventory = cls()
        return cls(inventory.symbols + [BOS]) if text.add_bos else inventory

    def to_dict(self) -> dict[str, Any]:
        return {"symbols": list(self.symbols), "version": self.version}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SymbolInventory":
        try:
            return cls(symbols=list(data["symbols"]), version=int(data.get("version", 1)))
        except (KeyError, TypeError) as exc:
            raise TTSError(f"malformed symbol inventory ({exc}); the checkpoint may be corrupt") from None


ARPABET_SET = frozenset(ARPABET)
