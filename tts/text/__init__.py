"""Text frontend: normalization, offline G2P, symbol inventories and the tokenizer."""

from tts.text.normalize import normalize_text
from tts.text.symbols import SymbolInventory
from tts.text.tokenizer import FRONTEND_REVISION, MODES, TokenizedText, Tokenizer

__all__ = ["FRONTEND_REVISION", "MODES", "SymbolInventory", "TokenizedText", "Tokenizer", "normalize_text"]
