"""Choosing sentences for phonetic breadth: a greedy cover of ARPAbet diphones.

A sentence's diphones are the pairs of consecutive phones of its pronunciation (stress dropped;
across word boundaries too, where speech joins the words). The greedy cover takes, again and again,
the sentence whose diphones still below ``target`` occurrences gain the most per phone, until
``size`` sentences are chosen; :func:`coverage_report` says how much of the inventory is covered.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter

from tts.text import Tokenizer

_PHONE = re.compile(r"^([A-Z]{1,2})[0-2]?$")
#: the 39 ARPAbet phones of CMUdict
ARPABET = ("AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z "
           "ZH").split()


def phones(text: str, tokenizer: Tokenizer) -> list[str]:
    """The ARPAbet phones of ``text`` without stress, in order (punctuation and boundaries dropped)."""
    symbols = tokenizer.ids_to_symbols(tokenizer.encode_verbose(text).ids)
    return [m.group(1) for m in map(_PHONE.match, symbols) if m and m.group(1) in ARPABET]


def diphones(sequence: list[str]) -> Counter:
    return Counter(zip(sequence, sequence[1:]))


def greedy_cover(candidates: dict[str, Counter], lengths: dict[str, int], size: int, target: int) -> list[str]:
    """``size`` candidate keys: each time the one whose diphones still under ``target`` occurrences
    add the most coverage per phone (lazy greedy: a stale gain is recomputed when it surfaces)."""
    counts: Counter = Counter()

    def gain(key: str) -> float:
        covered = sum(min(n, target - counts[d]) for d, n in candidates[key].items() if counts[d] < target)
        return covered / max(lengths[key], 1)

    heap = [(-gain(key), key) for key in sorted(candidates)]
    heapq.heapify(heap)
    chosen: list[str] = []
    while heap and len(chosen) < size:
        negative, key = heapq.heappop(heap)
        fresh = gain(key)
        if heap and fresh < -heap[0][0] - 1e-12:  # another may now gain more: look again
            heapq.heappush(heap, (-fresh, key))
            continue
        chosen.append(key)
        counts.update(candidates[key])
    return chosen


def coverage_report(chosen: list[Counter], thresholds: tuple[int, ...] = (1, 3, 10)) -> dict[str, float | int]:
    """How many of the 39 × 39 ARPAbet diphones the chosen sentences hold at least N times (N in
    ``thresholds``), as counts and shares."""
    total: Counter = Counter()
    for counter in chosen:
        total.update(counter)
    possible = len(ARPABET) ** 2
    report: dict[str, float | int] = {"sentences": len(chosen), "diphone_types": len(total), "possible": possible}
    for n in thresholds:
        seen = sum(1 for count in total.values() if count >= n)
        report[f"seen_{n}x"] = seen
        report[f"share_seen_{n}x"] = round(seen / possible, 4)
    return report
