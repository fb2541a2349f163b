"""English text normalization: what is written → what is said.

:func:`normalize_text` runs one small function per semiotic class, most specific first: control
characters, Unicode → ASCII, URLs and e-mail addresses, abbreviations (by context: "Dr. Smith"
vs "Elm Dr."), initialisms ("U.S."), scientific notation, money (with pre-decimal British
shillings and pence), measures with units, dates, clock times, phone numbers, percentages,
fractions, decades, ordinals, dotted version numbers, numbers with thousands separators, years,
decimals, negative numbers, cardinals, roman numerals (in names and ordinal positions) and
symbols. The output keeps letter case and the punctuation the tokenizer knows.

Conventions where a reading is ambiguous (the one most speakers would choose):
numeric dates are American (``3/4/2021`` is March fourth); a four-digit number from 1100 to 2099
is read as a year unless a unit or separator says otherwise; ``x/y`` with a denominator up to 16
is a fraction; three dotted groups (``3.14.15``) are a version number; a roman numeral after a
name is a regnal number ("George III" → "George the Third") and after a position word a cardinal
("Chapter IV" → "Chapter four"); single-letter numerals count only after position words.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import Callable

from unidecode import unidecode

from tts.text import numbers

log = logging.getLogger(__name__)

_WHITESPACE_RE = re.compile(r"\s+")
_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"

# ----------------------------------------------------------------------------- characters
_ESCAPE_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SYMBOLS_BEFORE_ASCII = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                         "\u2014": " - ", "\u2026": "...", "\u00a0": " ", "\u00b0": "°", "\u00bd": " 1/2",
                         "\u00bc": " 1/4", "\u00be": " 3/4", "\u2212": "-", "[": "(", "]": ")"}
_KEPT = numbers.CURRENCY_SYMBOLS.replace("\\", "") + "°"


def remove_control(text: str) -> str:
    """Drop terminal escape sequences (``\\x1b[31m``) and control characters, with a warning."""
    without_escapes = _ESCAPE_RE.sub("", text)
    cleaned = _CONTROL_RE.sub("", without_escapes)
    if cleaned != text:
        found = sorted(set(_ESCAPE_RE.findall(text) + _CONTROL_RE.findall(without_escapes)))
        log.warning("removed control characters / escape sequences: %s", " ".join(repr(c) for c in found))
    return cleaned


def _other_script(ch: str) -> bool:
    """A letter of a script other than Latin (Cyrillic, Greek, Han, Arabic, ...)."""
    return ch.isalpha() and ord(ch) >= 128 and not unicodedata.name(ch, "").startswith("LATIN")


def to_ascii(text: str) -> str:
    """Transliterate to ASCII, keeping the currency symbols and ° the normalizer spells out;
    characters with no spelling are dropped with a warning naming them."""
    text = remove_control(text)
    for src, dst in _SYMBOLS_BEFORE_ASCII.items():
        text = text.replace(src, dst)
    spelled = [(ch, ch if ch in _KEPT or ord(ch) < 128 else unidecode(ch)) for ch in text]
    dropped = sorted({ch for ch, ascii in spelled if not ascii.strip() and not ch.isspace()})
    if dropped:
        log.warning("dropping characters with no ASCII spelling: %s", " ".join(repr(ch) for ch in dropped))
    foreign = [word for word in text.split() if any(_other_script(ch) for ch in word)]
    if foreign:
        log.warning("reading words of another script as their Latin transliteration, which this English voice "
                    "may not say as meant: %s", ", ".join(f"{w!r} → {unidecode(w).strip()!r}" for w in foreign[:8]))
    return "".join(ascii for _, ascii in spelled)


# ----------------------------------------------------------------------------- URLs and e-mail
_URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']*[^\s<>\"'.,;:!?)]", re.IGNORECASE)
_EMAIL_RE = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_URL_PARTS = {".": " dot ", "/": " slash ", "-": " dash ", "_": " underscore ", ":": " colon ", "?": " question mark ",
              "=": " equals ", "&": " and ", "#": " hash ", "@": " at ", "+": " plus ", "~": " tilde "}


def _read_address(address: str) -> str:
    spoken = "".join(_URL_PARTS.get(ch, ch) for ch in address)
    return " ".join(spoken.split())


def urls_and_emails(text: str) -> str:
    """``https://www.example.com/a-b`` → ``www dot example dot com slash a dash b`` (the scheme is
    not read); ``jo.doe@example.org`` → ``jo dot doe at example dot org``."""
    text = _URL_RE.sub(lambda m: _read_address(re.sub(r"^https?://", "", m.group(0), flags=re.I)), text)
    return _EMAIL_RE.sub(lambda m: _read_address(m.group(0)), text)


# ----------------------------------------------------------------------------- abbreviations
# always the same, wherever they stand (matched case-insensitively, with their dot)
_ABBREVIATIONS = {
    "mr": "mister", "mrs": "missus", "ms": "miz", "drs": "doctors", "messrs": "messieurs", "prof": "professor",
    "jr": "junior", "sr": "senior",
    "gen": "general", "gov": "governor", "sen": "senator", "rep": "representative", "capt": "captain",
    "col": "colonel", "lt": "lieutenant", "sgt": "sergeant", "maj": "major", "hon": "honorable",
    "rev": "reverend", "esq": "esquire", "co": "company", "corp": "corporation", "inc": "incorporated",
    "ltd": "limited", "vs": "versus", "etc": "et cetera", "ave": "avenue", "blvd": "boulevard", "rd": "road",
    "mt": "mount", "ft": "fort", "approx": "approximately", "dept": "department", "jan": "january",
    "feb": "february", "mar": "march", "apr": "april", "aug": "august", "sept": "september",
    "sep": "september", "oct": "october", "nov": "november", "dec": "december",
}
_ABBREV_RE = re.compile(r"\b(" + "|".join(_ABBREVIATIONS) + r")\.", re.IGNORECASE)
_LATIN = [(re.compile(r"\be\.g\.", re.IGNORECASE), "for example"), (re.compile(r"\bi\.e\.", re.IGNORECASE), "that is")]
# by context: a title before a name, a street type after one
_CONTEXTUAL = {"dr": ("doctor", "drive"), "st": ("saint", "street")}
_CONTEXTUAL_RE = re.compile(r"(?P<before>\b[A-Za-z]+\s+)?\b(?P<abbr>Dr|St|DR|ST|dr|st)\.(?P<after>\s+[A-Z])?")
_NUMBER_SIGN_RE = re.compile(r"\b(no|nos)\.(?=\s*\d)", re.IGNORECASE)


def _ends_text(text: str, end: int) -> bool:
    """Nothing but closing punctuation follows position ``end``: a dot there also ends the sentence."""
    return not text[end:].strip(" \"')]")


def _same_case(original: str, expansion: str) -> str:
    """Capitalize the expansion when the abbreviation was capitalized (keeps sentence starts visible)."""
    return expansion[0].upper() + expansion[1:] if original[:1].isupper() else expansion


def _contextual(match: re.Match) -> str:
    before, abbr, after = match.group("before") or "", match.group("abbr"), match.group("after") or ""
    title, place = _CONTEXTUAL[abbr.lower()]
    # "Elm Dr." / "Baker St." end a name; "Dr. Smith" / "St. Mary" start one
    word = place if before.strip()[:1].isupper() and not after else title
    stop = "." if not after and _ends_text(match.string, match.end()) else ""
    return f"{before}{_same_case(abbr, word)}{stop}{after}"


def _expand(match: re.Match) -> str:
    stop = "." if _ends_text(match.string, match.end()) else ""
    return _same_case(match.group(1), _ABBREVIATIONS[match.group(1).lower()]) + stop


def abbreviations(text: str) -> str:
    """``Dr. Smith`` → ``Doctor Smith`` but ``Elm Dr.`` → ``Elm Drive``; ``St. Mary`` / ``Baker
    St.``; ``No. 5`` → ``number 5`` (a lone ``No.`` stays a no); titles, months, ``e.g.``, ``vs.``…"""
    for pattern, words in _LATIN:
        text = pattern.sub(words, text)
    text = _NUMBER_SIGN_RE.sub(lambda m: "number" if m.group(1).lower() == "no" else "numbers", text)
    text = _CONTEXTUAL_RE.sub(_contextual, text)
    return _ABBREV_RE.sub(_expand, text)


_INITIALISM_RE = re.compile(r"\b(?:[A-Za-z]\.){2,}(?!\w)")


def initialisms(text: str) -> str:
    """``U.S.`` → ``U S``, ``p.m.`` → ``P M`` (letters said one by one, as capitals, so that the G2P
    says the letter "A" and not the article; a final dot at the end of the text also ends the
    sentence and stays)."""
    return _INITIALISM_RE.sub(lambda m: m.group(0).replace(".", " ").strip().upper()
                              + ("." if _ends_text(m.string, m.end()) else ""), text)


# ----------------------------------------------------------------------------- numbers with context
_SCIENTIFIC_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([+-]?\d+)\b")
_MONEY_RE = re.compile(
    rf"([{numbers.CURRENCY_SYMBOLS}])\s?({_NUM})(?:\s?({numbers.SCALE_PATTERN})\b)?", re.IGNORECASE)
_POUNDS_SHILLINGS_RE = re.compile(r"£\s?(\d+)(?:\s+(\d+)s\.)?(?:\s+(\d+)d\.)?")
_SHILLINGS_PENCE_RE = re.compile(r"\b(?:(\d+)s\.\s*)?(\d+)d\.|\b(\d+)s\.(?=\s|$|[,;])")


def scientific(text: str) -> str:
    """``1e5`` → ``one times ten to the fifth``; ``6.02e23``; ``1.5E-3``."""
    return _SCIENTIFIC_RE.sub(lambda m: numbers.power_of_ten(m.group(1), int(m.group(2))), text)


def _pounds(match: re.Match) -> str:
    pounds, shillings, pence = int(match.group(1)), int(match.group(2) or 0), int(match.group(3) or 0)
    words = f"{numbers.cardinal(pounds)} pound{'s' if pounds != 1 else ''}"
    rest = numbers.shillings_and_pence(shillings, pence)
    return f"{words}, {rest}" if rest else words


def money(text: str) -> str:
    """``$3.50`` → ``three dollars, fifty cents``; ``$1.2 million`` → ``one point two million
    dollars``; ``€20``; LJSpeech's pre-decimal ``£5 10s.``, ``1s. 6d.`` → ``one shilling and six pence``."""
    text = _POUNDS_SHILLINGS_RE.sub(lambda m: _pounds(m) if m.group(2) or m.group(3) else m.group(0), text)
    text = _SHILLINGS_PENCE_RE.sub(lambda m: numbers.shillings_and_pence(
        int(m.group(1) or m.group(3) or 0), int(m.group(2) or 0)), text)
    return _MONEY_RE.sub(lambda m: " " + numbers.money(m.group(1), m.group(2), m.group(3)), text)


_UNITS = {  # unit → (singular, plural); case matters (m = meters, M = million is not a unit here)
    "km": ("kilometer", "kilometers"), "m": ("meter", "meters"), "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"), "mi": ("mile", "miles"), "ft": ("foot", "feet"), "in": ("inch", "inches"),
    "yd": ("yard", "yards"), "kg": ("kilogram", "kilograms"), "g": ("gram", "grams"), "mg": ("milligram", "milligrams"),
    "lb": ("pound", "pounds"), "lbs": ("pound", "pounds"), "oz": ("ounce", "ounces"), "t": ("ton", "tons"),
    "l": ("liter", "liters"), "ml": ("milliliter", "milliliters"), "mph": ("mile per hour", "miles per hour"),
    "km/h": ("kilometer per hour", "kilometers per hour"), "kph": ("kilometer per hour", "kilometers per hour"),
    "hz": ("hertz", "hertz"), "khz": ("kilohertz", "kilohertz"), "mhz": ("megahertz", "megahertz"),
    "ghz": ("gigahertz", "gigahertz"), "kb": ("kilobyte", "kilobytes"), "mb": ("megabyte", "megabytes"),
    "gb": ("gigabyte", "gigabytes"), "tb": ("terabyte", "terabytes"), "w": ("watt", "watts"),
    "kw": ("kilowatt", "kilowatts"), "v": ("volt", "volts"), "ms": ("millisecond", "milliseconds"),
    "sec": ("second", "seconds"), "min": ("minute", "minutes"), "hr": ("hour", "hours"), "hrs": ("hour", "hours"),
}
_UNIT_RE = re.compile(rf"(?<![\w.])({_NUM})\s?({'|'.join(sorted(map(re.escape, _UNITS), key=len, reverse=True))})"
                      r"(?![\w/])", re.IGNORECASE)
_DEGREES_RE = re.compile(rf"(-?{_NUM})\s?°(?:\s?([CFK])\b)?")
_FEET_INCHES_RE = re.compile(r"\b(\d+)'\s?(\d+)(?:\"|'')")
_DEGREE_SCALES = {"C": "Celsius", "F": "Fahrenheit", "K": "kelvin"}


def _number_words(s: str) -> str:
    s = s.replace(",", "")
    negative = s.startswith("-")
    s = s.lstrip("-")
    words = numbers.decimal(s) if "." in s else numbers.cardinal(int(s))
    return ("minus " if negative else "") + words


def measures(text: str) -> str:
    """``10km`` → ``ten kilometers``; ``1 kg`` → ``one kilogram``; ``60 mph``; ``72°F`` → ``seventy-two
    degrees Fahrenheit``; ``5'10"`` → ``five feet ten inches``. Units are matched only right after a number."""
    def unit(match: re.Match) -> str:
        value, name = match.group(1), match.group(2)
        singular, plural = _UNITS[name.lower()]
        if name == "M" or (name.lower() == "in" and " " in match.group(0)):  # "5 in the box" is not inches
            return match.group(0)
        return f"{_number_words(value)} {singular if value == '1' else plural}"

    text = _DEGREES_RE.sub(lambda m: f"{_number_words(m.group(1))} degree{'s' if m.group(1) != '1' else ''}"
                           + (f" {_DEGREE_SCALES[m.group(2)]}" if m.group(2) else ""), text)
    text = _FEET_INCHES_RE.sub(lambda m: f"{_number_words(m.group(1))} {'foot' if m.group(1) == '1' else 'feet'} "
                               f"{_number_words(m.group(2))} {'inch' if m.group(2) == '1' else 'inches'}", text)
    return _UNIT_RE.sub(unit, text)


_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_MONTH_RE = "|".join(_MONTHS)
_NUMERIC_DATE_RE = re.compile(r"\b(1[0-2]|0?[1-9])/(3[01]|[12]\d|0?[1-9])/(\d{4}|\d{2})\b")
_ISO_DATE_RE = re.compile(r"\b(\d{4})-(1[0-2]|0[1-9])-(3[01]|[12]\d|0[1-9])\b")
_MONTH_DAY_RE = re.compile(rf"\b({_MONTH_RE})\s+(3[01]|[12]\d|[1-9])(?:st|nd|rd|th)?\b(?!:)")
_DAY_MONTH_RE = re.compile(rf"\b(?P<the>the\s+)?(?P<day>3[01]|[12]\d|[1-9])(?:st|nd|rd|th)?\s+(?P<of>of\s+)?"
                           rf"(?P<month>{_MONTH_RE})\b")


def _date(month: int, day: int, year: str | None) -> str:
    words = f"{_MONTHS[month - 1]} {numbers.ordinal(day)}"
    if year:
        y = int(year) if len(year) == 4 else 2000 + int(year)
        words += f", {numbers.year(y)}"
    return words


def dates(text: str) -> str:
    """``March 3, 1999`` → ``March third, 1999``; ``3/4/2021`` → ``March fourth, twenty twenty-one``
    (month first); ``2021-03-04``; ``3 March`` → ``the third of March``."""
    text = _ISO_DATE_RE.sub(lambda m: _date(int(m.group(2)), int(m.group(3)), m.group(1)), text)
    text = _NUMERIC_DATE_RE.sub(lambda m: _date(int(m.group(1)), int(m.group(2)), m.group(3)), text)
    text = _MONTH_DAY_RE.sub(lambda m: f"{m.group(1)} {numbers.ordinal(int(m.group(2)))}", text)
    def day_month(match: re.Match) -> str:  # "3 March" → "the third of March"; "4th of July" stays without "the"
        the = match.group("the") or ("" if match.group("of") else "the ")
        return f"{the}{numbers.ordinal(int(match.group('day')))} of {match.group('month')}"

    return _DAY_MONTH_RE.sub(day_month, text)


_TIME_RE = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?:\s?([ap])\.?\s?m\b\.?)?", re.IGNORECASE)
_HOUR_AMPM_RE = re.compile(r"\b(1[0-2]|0?[1-9])\s?([ap])\.?\s?m\b\.?", re.IGNORECASE)


def _ampm(letter: str | None, match: re.Match) -> str:
    """`` A M`` / `` P M`` (capitals: letters said by name, see :func:`initialisms`); the dot of
    ``p.m.`` also ends a sentence at the end of the text."""
    if not letter:
        return ""
    return f" {letter.upper()} M" + ("." if match.group(0).endswith(".") and _ends_text(match.string, match.end())
                                     else "")


def times(text: str) -> str:
    """``10:45`` → ``ten forty-five``; ``10:00`` → ``ten o'clock``; ``9:05 a.m.`` → ``nine oh five A M``."""
    def clock(match: re.Match) -> str:
        words = numbers.clock(int(match.group(1)), int(match.group(2)))
        if match.group(4):
            words = words.replace(" o'clock", "")
        if match.group(3):
            words += f" and {numbers.cardinal(int(match.group(3)))} seconds"
        return words + _ampm(match.group(4), match)

    text = _TIME_RE.sub(clock, text)
    return _HOUR_AMPM_RE.sub(lambda m: numbers.cardinal(int(m.group(1))) + _ampm(m.group(2), m), text)


_PHONE_RE = re.compile(r"(?<![\w-])(?:\+?(\d{1,2})[\s.-])?(?:\((\d{3})\)\s?|(\d{3})[\s.-])?(\d{3})-(\d{4})(?![\w-])")


#: three-digit service numbers (N11 codes): 911 always, the others after "call" or "dial"
_SERVICE_RE = re.compile(r"(?<![\w.,$£€-])911(?![\w,%-]|\.\d)|(?<=\b(?:call|dial|Call|Dial|CALL|DIAL) )[2-8]11\b(?![.,]\d)")


def phone_numbers(text: str) -> str:
    """``555-1234`` → ``five five five, one two three four``; ``(555) 123-4567``;
    ``1-800-555-0199``: digits one by one, a pause between groups. Service numbers too: ``Call 911``
    → ``Call nine one one`` (``dial 411``; other three-digit numbers stay cardinals)."""
    def read(match: re.Match) -> str:
        groups = [g for g in match.groups() if g]
        return ", ".join(numbers.digits(g) for g in groups)
    return _SERVICE_RE.sub(lambda m: numbers.digits(m.group(0)), _PHONE_RE.sub(read, text))


_PERCENT_RE = re.compile(rf"(-?{_NUM})\s?%")
_MIXED_FRACTION_RE = re.compile(r"\b(\d+)\s+(\d+)/(\d+)\b")
_FRACTION_RE = re.compile(r"(?<![\d/])(\d+)/(\d+)(?![\d/])")


def percentages(text: str) -> str:
    """``15%`` → ``fifteen percent``; ``2.5%``."""
    return _PERCENT_RE.sub(lambda m: _number_words(m.group(1)) + " percent", text)


def fractions(text: str) -> str:
    """``1/2`` → ``one half``; ``3/4`` → ``three quarters``; ``5 1/2`` → ``five and a half``;
    denominators above 16 are read as "x over y"."""
    def fraction(n: int, d: int) -> str:
        return numbers.fraction(n, d) if 2 <= d <= 16 else f"{numbers.cardinal(n)} over {numbers.cardinal(d)}"

    def mixed(match: re.Match) -> str:
        whole, n, d = int(match.group(1)), int(match.group(2)), int(match.group(3))
        if not 0 < n < d:
            return match.group(0)
        part = "a half" if (n, d) == (1, 2) else "a quarter" if (n, d) == (1, 4) else fraction(n, d)
        return f"{numbers.cardinal(whole)} and {part}"

    text = _MIXED_FRACTION_RE.sub(mixed, text)
    return _FRACTION_RE.sub(lambda m: fraction(int(m.group(1)), int(m.group(2))), text)


_DECADE_RE = re.compile(r"(?:\b(1[0-9]\d0|20\d0)|(?<![\w'])'(\d0)|\b([1-9]0))'?s\b")


def decades(text: str) -> str:
    """``1990s`` → ``nineteen nineties``; ``the '90s`` / ``the 90s`` → ``the nineties``."""
    return _DECADE_RE.sub(lambda m: numbers.decade(int(m.group(1) or m.group(2) or m.group(3))), text)


_ORDINAL_RE = re.compile(r"\b(\d+)(st|nd|rd|th)\b", re.IGNORECASE)
_VERSION_RE = re.compile(r"\b\d+(?:\.\d+){2,}\b")
_THOUSANDS_RE = re.compile(r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b")
_YEAR_RE = re.compile(r"(?<![\d,.])(1[1-9]\d\d|20\d\d)(?!\d|,\d|\.\d)")
_EARLY_YEAR_RE = re.compile(r"\b(in|since|of|by|from|until|till|to|circa|year|before|after)\s+(10\d\d)\b(?!,\d|\.\d)",
                            re.IGNORECASE)
_DECIMAL_RE = re.compile(r"(?<![\d.])(\d*\.\d+)\b")
_NEGATIVE_RE = re.compile(r"(?<![\w.])-(\.?\d)")
_CARDINAL_RE = re.compile(r"\d+")
_LEADING_ZERO_RE = re.compile(r"\b0\d+\b")


def plain_numbers(text: str) -> str:
    """Ordinals, version numbers (``3.14.15`` → ``three point fourteen point fifteen``), thousands
    separators, years, decimals, negatives, numbers with leading zeros (``007`` → digit by digit)
    and cardinals."""
    text = _ORDINAL_RE.sub(lambda m: numbers.ordinal(int(m.group(1))), text)
    text = _VERSION_RE.sub(lambda m: " point ".join(numbers.cardinal(int(g)) for g in m.group(0).split(".")), text)
    text = _NEGATIVE_RE.sub(r"minus \1", text)
    text = _THOUSANDS_RE.sub(lambda m: _number_words(m.group(0)), text)
    text = _EARLY_YEAR_RE.sub(lambda m: f"{m.group(1)} {numbers.year(int(m.group(2)))}", text)
    text = _YEAR_RE.sub(lambda m: numbers.year(int(m.group(1))), text)
    text = _DECIMAL_RE.sub(lambda m: numbers.decimal(m.group(1)), text)
    text = _LEADING_ZERO_RE.sub(lambda m: numbers.digits(m.group(0)), text)
    return _CARDINAL_RE.sub(lambda m: numbers.cardinal(int(m.group(0))), text)


_POSITION_WORDS = ("chapter", "part", "volume", "vol", "book", "act", "scene", "war", "phase", "section", "article",
                   "appendix", "title", "class", "type", "level", "grade", "stage", "bowl", "psalm", "canto",
                   "series", "round", "lesson", "unit", "step", "figure", "table", "plate", "number")
_ROMAN_AFTER_POSITION_RE = re.compile(rf"\b({'|'.join(_POSITION_WORDS)})\s+({numbers.ROMAN_PATTERN})\b",
                                      re.IGNORECASE)
_ROMAN_AFTER_NAME_RE = re.compile(rf"\b([A-Z][a-z]+)\s+(?=[MDCLXVI]{{2,}}\b)({numbers.ROMAN_PATTERN})\b")
_NOT_NAMES = frozenset("The A An In On At Of And Or But If When Then So As By For To From With I We He She It "
                       "They You My Our His Her Its Their This That These Those".split())


def roman_numerals(text: str) -> str:
    """``Chapter IV`` → ``Chapter four``; ``World War II`` → ``World War two``; ``George III`` →
    ``George the Third``; ``Henry VIII`` → ``Henry the Eighth``."""
    def position(match: re.Match) -> str:
        numeral = match.group(2)
        if not numeral or numeral != numeral.upper():
            return match.group(0)
        return f"{match.group(1)} {numbers.cardinal(numbers.roman(numeral))}"

    def regnal(match: re.Match) -> str:
        name, numeral = match.group(1), match.group(2)
        if not numeral or name in _NOT_NAMES:
            return match.group(0)
        word = numbers.ordinal(numbers.roman(numeral))
        return f"{name} the {word[0].upper()}{word[1:]}"

    text = _ROMAN_AFTER_POSITION_RE.sub(position, text)
    return _ROMAN_AFTER_NAME_RE.sub(regnal, text)


_SYMBOL_WORDS = [("&", " and "), ("+", " plus "), ("@", " at "), ("=", " equals "), ("%", " percent "),
                 ("°", " degrees ")]
_NUMBER_SIGN_BEFORE_DIGITS_RE = re.compile(r"#(?=\s?\d)")


def symbols(text: str) -> str:
    """``&`` → ``and``, ``+``, ``@``, ``=``, ``#1`` → ``number one`` and leftovers of the classes above."""
    text = _NUMBER_SIGN_BEFORE_DIGITS_RE.sub(" number ", text)
    for symbol, words in _SYMBOL_WORDS:
        text = text.replace(symbol, words)
    return text


#: the semiotic classes in the order they run (more specific patterns first)
PIPELINE: list[Callable[[str], str]] = [
    urls_and_emails, abbreviations, initialisms, scientific, money, measures, dates, times, phone_numbers,
    percentages, fractions, decades, symbols, plain_numbers, roman_numerals,
]


def normalize_text(text: str) -> str:
    """Normalize English text for speech. Keeps case and punctuation; collapses whitespace.

    >>> normalize_text("Dr. Smith paid $3.50 on March 3rd, 1999.")
    'Doctor Smith paid three dollars, fifty cents on March third, nineteen ninety-nine.'
    """
    text = to_ascii(text)
    for step in PIPELINE:
        text = step(text)
    return _WHITESPACE_RE.sub(" ", text).strip()
