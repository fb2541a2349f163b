"""The one place that turns text into token ids (and back).

Modes:
  * ``phoneme`` (default): normalize → G2P → ARPAbet symbols, word boundaries and punctuation kept;
  * ``char``: normalize → lower-case letters, spaces and punctuation;
  * ``mixed``: like ``char``, but ``{HH AH0 L OW1}`` inserts ARPAbet directly (NVIDIA/tacotron2 style).
Curly-brace ARPAbet escapes are honoured in ``phoneme`` mode too, so
``encode(decode(ids)) == ids`` holds in every mode.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from tts.config import TextConfig
from tts.errors import TTSError
from tts.text.g2p import WORD_RE, get_g2p
from tts.text.lexicon import load_lexicon
from tts.text.normalize import normalize_text
from tts.text.symbols import BOS, EOS, PAD, SILENT_SYMBOLS, SPACE, SymbolInventory

log = logging.getLogger(__name__)

#: raised whenever the same text and settings get other ids (normalizer, G2P or symbol rules), so
#: that feature caches made before the change are made again: 2, a capital "A" before punctuation is
#: the letter ("A. No", "Plan A,")
FRONTEND_REVISION = 2

MODES = ("phoneme", "char", "mixed")
#: longer "words" are dropped with a warning (the longest English dictionary words have about 30 letters)
MAX_WORD_LETTERS = 45
_SEGMENT_RE = re.compile(r"(\{[^}]*\})")
_TOKEN_RE = re.compile(rf"{WORD_RE.pattern}|\s+|\S")


@dataclass
class TokenizedText:
    """The stages of the frontend for one text."""

    text: str
    normalized: str
    symbols: list[str]
    ids: list[int]


class Tokenizer:
    """Text ↔ ids for one :class:`SymbolInventory` and mode."""

    def __init__(self, inventory: SymbolInventory | None = None, mode: str = "phoneme", add_eos: bool = True,
                 add_bos: bool = False, lexicon: dict[str, list[str]] | None = None):
        if mode not in MODES:
            raise TTSError(f"unknown text mode '{mode}' (choose one of {', '.join(MODES)})")
        self.inventory = inventory or SymbolInventory()
        self.mode = mode
        self.add_eos, self.add_bos = add_eos, add_bos
        self.lexicon = lexicon or {}
        if add_bos:
            self.inventory.bos_id  # noqa: B018 - fails now, naming the problem, if the inventory lacks BOS

    @classmethod
    def for_config(cls, text: TextConfig, inventory: SymbolInventory | None = None) -> "Tokenizer":
        """The tokenizer a config's ``text`` section describes (with a checkpoint's inventory, if given)."""
        return cls(inventory or SymbolInventory.for_text(text), text.mode, text.add_eos, text.add_bos,
                   load_lexicon(text.lexicon) if text.lexicon else None)

    # ---------------------------------------------------------------- encode
    def _plain_symbols(self, text: str) -> list[str]:
        """Symbols of text outside curly braces."""
        tokens = _TOKEN_RE.findall(text)
        if self.mode != "phoneme":
            return [SPACE if t.isspace() else c for t in tokens for c in ([t] if t.isspace() else t.lower())]
        # a hyphen joining two words ("forty-two") is a word boundary, not a pause
        tokens = [
            SPACE if t == "-" and 0 < i < len(tokens) - 1 and WORD_RE.fullmatch(tokens[i - 1])
            and WORD_RE.fullmatch(tokens[i + 1]) else t
            for i, t in enumerate(tokens)
        ]
        too_long = [t for t in tokens if len(t) > MAX_WORD_LETTERS and WORD_RE.fullmatch(t)]
        if too_long:
            log.warning("dropping %d word(s) longer than %d letters (not words anyone says): %s", len(too_long),
                        MAX_WORD_LETTERS, ", ".join(repr(t[:20] + "...") for t in too_long))
            tokens = [t for t in tokens if t not in too_long]
        content = [t for t in tokens if not t.isspace()]
        prons = iter(get_g2p()(content, self.lexicon))
        symbols: list[str] = []
        for t in tokens:
            symbols.extend([SPACE] if t.isspace() else next(prons))
        return symbols

    def _escaped_symbols(self, segment: str) -> list[str]:
        phonemes = segment[1:-1].split()
        bad = [p for p in phonemes if not self.inventory.is_phoneme(p)]
        if bad:
            raise TTSError(f"unknown ARPAbet symbol(s) {', '.join(bad)} in '{segment}'")
        return phonemes

    def text_to_symbols(self, text: str) -> tuple[str, list[str]]:
        """Normalize and convert to symbols; returns ``(normalized_text, symbols)``."""
        if self.mode == "char":
            segments = [text]
        else:
            segments = _SEGMENT_RE.split(text)
        normalized_parts, symbols = [], []
        for segment in segments:
            if _SEGMENT_RE.fullmatch(segment):
                normalized_parts.append(segment)
                symbols.extend(self._escaped_symbols(segment))
            elif segment:
                # normalizing strips the edges; keep the spaces around escapes as boundaries
                lead = SPACE if segment[:1].isspace() and symbols else ""
                trail = SPACE if segment[-1:].isspace() else ""
                norm = normalize_text(segment)
                normalized_parts.append(lead + norm + trail)
                symbols.extend(([SPACE] if lead else []) + self._plain_symbols(norm) + ([SPACE] if trail and norm else []))
        while symbols and symbols[-1] == SPACE:
            symbols.pop()
        while symbols and symbols[0] == SPACE:
            symbols.pop(0)
        return "".join(normalized_parts).strip(), symbols

    def encode_verbose(self, text: str) -> TokenizedText:
        """Text → :class:`TokenizedText`. Raises :class:`TTSError` when nothing speakable remains."""
        if not text or not text.strip():
            raise TTSError("text is empty: give at least one word to speak")
        normalized, symbols = self.text_to_symbols(text)
        unknown = sorted({s for s in symbols if s not in self.inventory})
        if unknown:
            log.warning("dropping characters the symbol inventory lacks: %s", " ".join(repr(s) for s in unknown))
            symbols = [s for s in symbols if s in self.inventory]
        if all(s in SILENT_SYMBOLS for s in symbols):  # "I" is the single symbol AY1, which is spoken
            raise TTSError(f"text has nothing to speak after normalization: {text[:80]!r}")
        ids = [self.inventory.id(s) for s in symbols]
        if self.add_bos:
            ids.insert(0, self.inventory.bos_id)
        if self.add_eos:
            ids.append(self.inventory.eos_id)
        return TokenizedText(text=text, normalized=normalized, symbols=symbols, ids=ids)

    def encode(self, text: str) -> list[int]:
        """Text → ids (BOS prepended when ``add_bos``, EOS appended when ``add_eos``)."""
        return self.encode_verbose(text).ids

    # ---------------------------------------------------------------- decode
    def ids_to_symbols(self, ids: list[int]) -> list[str]:
        n = len(self.inventory)
        bad = [i for i in ids if not 0 <= int(i) < n]
        if bad:
            raise TTSError(f"token id(s) {bad[:5]} outside the inventory (size {n})")
        return [self.inventory.symbols[int(i)] for i in ids]

    def decode(self, ids: list[int]) -> str:
        """Ids → text; ARPAbet runs are wrapped in braces, pad, BOS and EOS are dropped.

        ``encode(decode(ids)) == ids`` for ids that ``encode`` produced.
        """
        out: list[str] = []
        run: list[str] = []
        for symbol in self.ids_to_symbols(ids):
            if symbol in (PAD, BOS, EOS):
                continue
            if self.inventory.is_phoneme(symbol):
                run.append(symbol)
                continue
            if run:
                out.append("{" + " ".join(run) + "}")
                run = []
            out.append(symbol)
        if run:
            out.append("{" + " ".join(run) + "}")
        return "".join(out)
