"""Spelling out numbers: cardinals, ordinals, decimals, fractions, years and decades, roman
numerals, money (with British shillings and pence) and clock times."""

from __future__ import annotations

import re

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ("thousand", "million", "billion", "trillion", "quadrillion")
_ORDINAL_IRREGULAR = {"one": "first", "two": "second", "three": "third", "five": "fifth",
                      "eight": "eighth", "nine": "ninth", "twelve": "twelfth"}


def _below_thousand(n: int) -> list[str]:
    words = []
    hundreds, rest = divmod(n, 100)
    if hundreds:
        words += [_ONES[hundreds], "hundred"]
    if rest >= 20:
        tens, ones = divmod(rest, 10)
        words.append(_TENS[tens] + (f"-{_ONES[ones]}" if ones else ""))
    elif rest:
        words.append(_ONES[rest])
    return words


def cardinal(n: int) -> str:
    """``1234`` → ``one thousand two hundred thirty-four`` (no "and", no commas)."""
    if n < 0:
        return "minus " + cardinal(-n)
    if n == 0:
        return "zero"
    if n >= 1000 ** (len(_SCALES) + 1):
        return digits(str(n))
    words: list[str] = []
    for power in range(len(_SCALES), -1, -1):
        group, n = divmod(n, 1000 ** power)
        if group:
            words += _below_thousand(group) + ([_SCALES[power - 1]] if power else [])
    return " ".join(words)


def ordinal(n: int) -> str:
    """``22`` → ``twenty-second``; ``100`` → ``one hundredth``."""
    words = cardinal(n)
    head, sep, last = words.rpartition(" ")
    prefix, hyphen, unit = last.rpartition("-")
    if unit in _ORDINAL_IRREGULAR:
        unit = _ORDINAL_IRREGULAR[unit]
    elif unit.endswith("y"):
        unit = unit[:-1] + "ieth"
    else:
        unit += "th"
    return f"{head}{sep}{prefix}{hyphen}{unit}"


def plural_ordinal(n: int) -> str:
    """Fraction denominators: ``4`` → ``quarters``, ``3`` → ``thirds``, ``16`` → ``sixteenths``."""
    return "halves" if n == 2 else "quarters" if n == 4 else ordinal(n) + "s"


def fraction(numerator: int, denominator: int) -> str:
    """``(1, 2)`` → ``one half``; ``(3, 4)`` → ``three quarters``; ``(7, 16)`` → ``seven sixteenths``."""
    if numerator == 1:
        return "one " + ("half" if denominator == 2 else "quarter" if denominator == 4 else ordinal(denominator))
    return f"{cardinal(numerator)} {plural_ordinal(denominator)}"


def decade(n: int) -> str:
    """A year ending in 0 said as a decade: ``1990`` → ``nineteen nineties``, ``1800`` → ``eighteen
    hundreds``, ``2000`` → ``two thousands``, ``90`` → ``nineties``."""
    words = year(n) if n >= 100 else cardinal(n)
    head, _, last = words.rpartition(" ")
    plural = last[:-1] + "ies" if last.endswith("y") else last + "s"
    return f"{head} {plural}".strip()


_ROMAN = {"M": 1000, "CM": 900, "D": 500, "CD": 400, "C": 100, "XC": 90, "L": 50, "XL": 40, "X": 10, "IX": 9,
          "V": 5, "IV": 4, "I": 1}
ROMAN_PATTERN = r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"


def roman(numeral: str) -> int:
    """``"XIV"`` → 14 (a valid numeral, as :data:`ROMAN_PATTERN` matches it)."""
    value, i = 0, 0
    while i < len(numeral):
        pair = numeral[i:i + 2]
        if pair in _ROMAN:
            value, i = value + _ROMAN[pair], i + 2
        else:
            value, i = value + _ROMAN[numeral[i]], i + 1
    return value


def digits(s: str) -> str:
    """``"0314"`` → ``zero three one four`` (used after a decimal point)."""
    return " ".join(cardinal(int(c)) for c in s)


def decimal(s: str) -> str:
    """``"3.14"`` → ``three point one four``; ``"2.0"`` → ``two point zero``."""
    whole, _, frac = s.partition(".")
    if not whole:  # ".5" is said "point five"
        return f"point {digits(frac)}"
    words = cardinal(int(whole))
    return f"{words} point {digits(frac)}" if frac else words


def year(n: int) -> str:
    """Read a year as people say it: 1999 → nineteen ninety-nine, 1905 → nineteen oh five,
    1900 → nineteen hundred, 2000 → two thousand, 2008 → two thousand eight, 2019 → twenty nineteen."""
    if 2000 <= n <= 2009 or n % 1000 == 0:
        return cardinal(n)
    high, low = divmod(n, 100)
    if low == 0:
        return f"{cardinal(high)} hundred"
    if low < 10:
        return f"{cardinal(high)} oh {cardinal(low)}"
    return f"{cardinal(high)} {cardinal(low)}"


def power_of_ten(mantissa: str, exponent: int) -> str:
    """Scientific notation: ``("6.02", 23)`` → ``six point zero two times ten to the twenty-third``."""
    sign = "minus " if exponent < 0 else ""
    return f"{decimal(mantissa)} times ten to the {sign}{ordinal(abs(exponent))}"


def shillings_and_pence(shillings: int, pence: int) -> str:
    """Pre-decimal British money: ``(1, 6)`` → ``one shilling and six pence``."""
    parts = []
    if shillings:
        parts.append(f"{cardinal(shillings)} shilling{'s' if shillings != 1 else ''}")
    if pence:
        parts.append(f"{cardinal(pence)} {'penny' if pence == 1 else 'pence'}")
    return " and ".join(parts)


_CURRENCIES = {"$": ("dollar", "dollars", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence"),
               "€": ("euro", "euros", "cent", "cents"), "¥": ("yen", "yen", "sen", "sen")}


def money(symbol: str, amount: str, scale: str | None = None) -> str:
    """``("$", "3.50")`` → ``three dollars, fifty cents``; with ``scale="million"``:
    ``("$", "1.2", "million")`` → ``one point two million dollars``."""
    one, many, sub_one, sub_many = _CURRENCIES[symbol]
    amount = amount.replace(",", "")
    if scale:
        return f"{decimal(amount)} {scale.lower()} {many}"
    whole_s, _, frac_s = amount.partition(".")
    whole = int(whole_s or "0")
    cents = int((frac_s + "00")[:2]) if frac_s else 0
    parts = []
    if whole or not cents:
        parts.append(f"{cardinal(whole)} {one if whole == 1 else many}")
    if cents:
        parts.append(f"{cardinal(cents)} {sub_one if cents == 1 else sub_many}")
    return ", ".join(parts)


def clock(hours: int, minutes: int) -> str:
    """``(10, 45)`` → ``ten forty-five``; ``(10, 0)`` → ``ten o'clock``; ``(9, 5)`` → ``nine oh five``."""
    if minutes == 0:
        return f"{cardinal(hours)} o'clock"
    if minutes < 10:
        return f"{cardinal(hours)} oh {cardinal(minutes)}"
    return f"{cardinal(hours)} {cardinal(minutes)}"


SCALE_PATTERN = "|".join(_SCALES)
CURRENCY_SYMBOLS = re.escape("".join(_CURRENCIES))
