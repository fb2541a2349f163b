"""English text normalization: what is written → what is said.

Handles Unicode → ASCII, whitespace, abbreviations, currency, percentages, clock times,
ordinals, numbers with thousands separators, decimals, years and cardinals. The output
keeps letter case and the punctuation the tokenizer knows.
"""

from __future__ import annotations

import logging
import re

from unidecode import unidecode

from tts.text import numbers

log = logging.getLogger(__name__)

# Abbreviations that are always expanded the same way (matched case-insensitively, with the dot).
_ABBREVIATIONS = {
    "mr": "mister", "mrs": "misess", "ms": "miz", "dr": "doctor", "prof": "professor",
    "jr": "junior", "sr": "senior", "gen": "general", "gov": "governor", "sen": "senator",
    "rep": "representative", "capt": "captain", "col": "colonel", "lt": "lieutenant",
    "sgt": "sergeant", "maj": "major", "hon": "honorable", "rev": "reverend", "esq": "esquire",
    "co": "company", "corp": "corporation", "inc": "incorporated", "ltd": "limited",
    "no": "number", "vs": "versus", "etc": "et cetera", "ave": "avenue", "mt": "mount",
    "ft": "fort", "jan": "january", "feb": "february", "mar": "march", "apr": "april",
    "aug": "august", "sept": "september", "sep": "september", "oct": "october",
    "nov": "november", "dec": "december",
}
_ABBREV_RE = re.compile(r"\b(" + "|".join(_ABBREVIATIONS) + r")\.", re.IGNORECASE)
_NUMBER_ABBREV_RE = re.compile(r"\bno\.(?=\s*\d)", re.IGNORECASE)
_SAINT_RE = re.compile(r"\bSt\.(?=\s+[A-Z])")
_STREET_RE = re.compile(r"\bSt\.", re.IGNORECASE)
_LATIN_RE = [(re.compile(r"\be\.g\.", re.IGNORECASE), "for example"),
             (re.compile(r"\bi\.e\.", re.IGNORECASE), "that is")]

_SYMBOLS_BEFORE_ASCII = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"',
                         "\u2013": "-", "\u2014": " - ", "\u2026": "...", "\u00a0": " "}

_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
_MONEY_RE = re.compile(
    rf"([{numbers.CURRENCY_SYMBOLS}])\s?({_NUM})(?:\s?({numbers.SCALE_PATTERN})\b)?", re.IGNORECASE)
_PERCENT_RE = re.compile(rf"({_NUM})\s?%")
_TIME_RE = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)(?:\s?([ap])\.?\s?m\b\.?)?", re.IGNORECASE)
_HOUR_AMPM_RE = re.compile(r"\b(1[0-2]|0?[1-9])\s?([ap])\.?\s?m\b\.?", re.IGNORECASE)
_ORDINAL_RE = re.compile(r"\b(\d+)(st|nd|rd|th)\b", re.IGNORECASE)
_THOUSANDS_RE = re.compile(r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b")
_DECIMAL_RE = re.compile(r"(?<![\d.])(\d*\.\d+)\b")
_YEAR_RE = re.compile(r"(?<![\d,.])(1[1-9]\d\d|20\d\d)(?!\d|,\d|\.\d)")
_NEGATIVE_RE = re.compile(r"(?<![\w])-(\d)")
_CARDINAL_RE = re.compile(r"\d+")
_SYMBOL_WORDS = [("&", " and "), ("+", " plus "), ("@", " at "), ("=", " equals ")]
_WHITESPACE_RE = re.compile(r"\s+")


_ESCAPE_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def remove_control(text: str) -> str:
    """Drop terminal escape sequences (``\\x1b[31m``) and control characters, with a warning."""
    without_escapes = _ESCAPE_RE.sub("", text)
    cleaned = _CONTROL_RE.sub("", without_escapes)
    if cleaned != text:
        found = sorted(set(_ESCAPE_RE.findall(text) + _CONTROL_RE.findall(without_escapes)))
        log.warning("removed control characters / escape sequences: %s", " ".join(repr(c) for c in found))
    return cleaned


def to_ascii(text: str) -> str:
    """Transliterate to ASCII, keeping currency symbols the normalizer spells out."""
    text = remove_control(text)
    for src, dst in _SYMBOLS_BEFORE_ASCII.items():
        text = text.replace(src, dst)
    protected = numbers.CURRENCY_SYMBOLS.replace("\\", "")
    spelled = [(ch, ch if ch in protected or ord(ch) < 128 else unidecode(ch)) for ch in text]
    dropped = sorted({ch for ch, ascii in spelled if not ascii.strip() and not ch.isspace()})
    if dropped:
        log.warning("dropping characters with no ASCII spelling: %s", " ".join(repr(ch) for ch in dropped))
    return "".join(ascii for _, ascii in spelled)


def _ampm(letter: str | None) -> str:
    return f" {letter.lower()} m" if letter else ""


def expand_abbreviations(text: str) -> str:
    """Mr. → Mister, St. John → Saint John, Main St. → Main street, No. 5 → number 5."""
    for pattern, words in _LATIN_RE:
        text = pattern.sub(words, text)
    text = _NUMBER_ABBREV_RE.sub("number", text)
    text = _SAINT_RE.sub("Saint", text)
    text = _STREET_RE.sub("street", text)
    return _ABBREV_RE.sub(lambda m: _same_case(m.group(1), _ABBREVIATIONS[m.group(1).lower()]), text)


def _same_case(original: str, expansion: str) -> str:
    """Capitalize the expansion when the abbreviation was capitalized (keeps sentence starts visible)."""
    return expansion[0].upper() + expansion[1:] if original[:1].isupper() else expansion


def expand_numbers(text: str) -> str:
    """Spell out every digit sequence, most specific pattern first."""
    text = _MONEY_RE.sub(lambda m: " " + numbers.money(m.group(1), m.group(2), m.group(3)), text)
    text = _PERCENT_RE.sub(lambda m: _number_words(m.group(1)) + " percent", text)
    text = _TIME_RE.sub(
        lambda m: numbers.clock(int(m.group(1)), int(m.group(2))).replace(" o'clock", "" if m.group(3) else " o'clock")
        + _ampm(m.group(3)), text)
    text = _HOUR_AMPM_RE.sub(lambda m: numbers.cardinal(int(m.group(1))) + _ampm(m.group(2)), text)
    text = _ORDINAL_RE.sub(lambda m: numbers.ordinal(int(m.group(1))), text)
    text = _THOUSANDS_RE.sub(lambda m: _number_words(m.group(0)), text)
    text = _YEAR_RE.sub(lambda m: numbers.year(int(m.group(1))), text)
    text = _DECIMAL_RE.sub(lambda m: numbers.decimal(m.group(1)), text)
    text = _NEGATIVE_RE.sub(r"minus \1", text)
    return _CARDINAL_RE.sub(lambda m: numbers.cardinal(int(m.group(0))), text)


def _number_words(s: str) -> str:
    s = s.replace(",", "")
    return numbers.decimal(s) if "." in s else numbers.cardinal(int(s))


def normalize_text(text: str) -> str:
    """Normalize English text for speech. Keeps case and punctuation; collapses whitespace.

    >>> normalize_text("Dr. Smith paid $3.50 on March 3rd, 1999.")
    'Doctor Smith paid three dollars, fifty cents on March third, nineteen ninety-nine.'
    """
    text = to_ascii(text)
    text = expand_abbreviations(text)
    text = expand_numbers(text)
    for symbol, words in _SYMBOL_WORDS:
        text = text.replace(symbol, words)
    return _WHITESPACE_RE.sub(" ", text).strip()
