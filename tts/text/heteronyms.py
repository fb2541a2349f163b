"""Heteronyms: words spelled alike and said differently by part of speech ("they live" / "a
live show"). g2p-en's own table gets several backwards (past-tense "read" as R IY1 D, the verb
"object" with the noun's stress) and lacks others ("lead", "live", "wind", "tear"), so this one
comes first. Each word maps Penn tags (exact tag, then its two-letter prefix, then ``*``) to
ARPAbet.
"""

from __future__ import annotations

HETERONYMS: dict[str, dict[str, str]] = {
    "read": {"VBD": "R EH1 D", "VBN": "R EH1 D", "*": "R IY1 D"},
    "lead": {"VB": "L IY1 D", "*": "L EH1 D"},
    "live": {"VB": "L IH1 V", "*": "L AY1 V"},
    "lives": {"VB": "L IH1 V Z", "*": "L AY1 V Z"},
    "record": {"VB": "R IH0 K AO1 R D", "*": "R EH1 K ER0 D"},
    "records": {"VB": "R IH0 K AO1 R D Z", "*": "R EH1 K ER0 D Z"},
    "present": {"VB": "P R IY0 Z EH1 N T", "*": "P R EH1 Z AH0 N T"},
    "wind": {"VB": "W AY1 N D", "*": "W IH1 N D"},
    "winds": {"VB": "W AY1 N D Z", "*": "W IH1 N D Z"},
    "wound": {"VBD": "W AW1 N D", "VBN": "W AW1 N D", "*": "W UW1 N D"},
    "tear": {"VB": "T EH1 R", "*": "T IH1 R"},
    "tears": {"VB": "T EH1 R Z", "*": "T IH1 R Z"},
    "close": {"VB": "K L OW1 Z", "NN": "K L OW1 Z", "*": "K L OW1 S"},
    "use": {"VB": "Y UW1 Z", "*": "Y UW1 S"},
    "object": {"VB": "AH0 B JH EH1 K T", "*": "AA1 B JH EH0 K T"},
    "desert": {"VB": "D IH0 Z ER1 T", "*": "D EH1 Z ER0 T"},
    "produce": {"VB": "P R AH0 D UW1 S", "*": "P R OW1 D UW0 S"},
    "refuse": {"VB": "R IH0 F Y UW1 Z", "*": "R EH1 F Y UW2 Z"},
    "permit": {"VB": "P ER0 M IH1 T", "*": "P ER1 M IH2 T"},
    "project": {"VB": "P R AA0 JH EH1 K T", "*": "P R AA1 JH EH0 K T"},
    "conduct": {"VB": "K AH0 N D AH1 K T", "*": "K AA1 N D AH0 K T"},
    "subject": {"VB": "S AH0 B JH EH1 K T", "*": "S AH1 B JH IH0 K T"},
    "increase": {"VB": "IH2 N K R IY1 S", "*": "IH1 N K R IY2 S"},
    "excuse": {"VB": "IH0 K S K Y UW1 Z", "*": "IH0 K S K Y UW1 S"},
    "house": {"VB": "HH AW1 Z", "*": "HH AW1 S"},
    "minute": {"JJ": "M AY0 N UW1 T", "*": "M IH1 N AH0 T"},
    "content": {"JJ": "K AH0 N T EH1 N T", "VB": "K AH0 N T EH1 N T", "*": "K AA1 N T EH0 N T"},
    "does": {"VB": "D AH1 Z", "*": "D OW1 Z"},
    "separate": {"VB": "S EH1 P ER0 EY2 T", "*": "S EH1 P ER0 AH0 T"},
    "bass": {"*": "B EY1 S"},
}


def heteronym(word: str, tag: str) -> list[str] | None:
    """The pronunciation of ``word`` for the Penn ``tag``, or None when it is not a heteronym here."""
    rules = HETERONYMS.get(word.lower())
    if rules is None:
        return None
    pron = rules.get(tag) or rules.get(tag[:2]) or rules["*"]
    return pron.split()
