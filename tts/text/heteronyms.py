"""Heteronyms: words spelled alike and said differently by part of speech ("they live" / "a
live show"). g2p-en's own table gets several backwards (past-tense "read" as R IY1 D, the verb
"object" with the noun's stress) and lacks others ("lead", "live", "wind", "tear"), so this one
(``heteronyms.tsv`` beside this file) comes first. A word's rules map Penn tags (the exact tag,
then its first two letters, then ``*``) to ARPAbet.
"""

from __future__ import annotations

import functools
from pathlib import Path

TABLE = Path(__file__).with_name("heteronyms.tsv")


@functools.lru_cache(maxsize=1)
def heteronyms() -> dict[str, dict[str, list[str]]]:
    """``word → {tag: phonemes}`` from :data:`TABLE`."""
    table: dict[str, dict[str, list[str]]] = {}
    for line in TABLE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            word, tag, pron = line.split("\t")
            table.setdefault(word, {})[tag] = pron.split()
    return table


def heteronym(word: str, tag: str) -> list[str] | None:
    """The pronunciation of ``word`` for the Penn ``tag``, or None when it is not a heteronym here."""
    rules = heteronyms().get(word.lower())
    if rules is None:
        return None
    return list(rules.get(tag) or rules.get(tag[:2]) or rules["*"])
