"""Festival's phone timings (:mod:`tts.data.timings`) mapped onto the project's token sequence
and onto the mel frames of the feature cache, for scoring attention against the truth
(:mod:`tts.metrics.true_alignment`).

Both sides speak CMU phones: Festival's lower-case set (``ax`` for the unstressed ``AH0``, ``pau``
for pauses), the tokenizer's ARPAbet with stress. The two phone sequences are aligned by edit
distance. Festival reduces vowels the lexicon keeps full ("to" ``UW`` → ``AH``, "and" ``AE`` →
``AH``): a substituted phone keeps its timing. An utterance maps *cleanly* when every phone of
one side has its partner on the other (substitutions only); an inserted or deleted phone (a word
the lexicons say differently) leaves tokens without timing, and such utterances are not scored. A pause between two
words goes to the punctuation token between them (else their space). Times move onto the feature
clock with the silence the features cut and add (:func:`tts.audio.edge_bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from tts.config import AudioConfig
from tts.data.timings import TIMINGS_DIR, PhoneTiming, read_timings, timings_path
from tts.text.symbols import ARPABET_SET, PUNCTUATION, SPACE

PAUSES = frozenset({"pau", "h#", "brth", "#"})
#: Festival's names that are not the upper-cased ARPAbet base phone
FESTIVAL_TO_ARPABET = {"ax": "AH"}


@dataclass(frozen=True)
class TokenTimings:
    """True token intervals ``(T_text, 2)`` in mel frames (NaN rows: tokens with no timing), and
    how the phones mapped: substituted phones and inserted or deleted ones, out of Festival's."""

    intervals: np.ndarray
    substitutions: int
    indels: int
    phones: int

    @property
    def clean(self) -> bool:
        """Every phone has its partner (substitutions only)."""
        return self.indels == 0


def _base(symbol: str) -> str:
    return symbol.rstrip("012")


def _edit_pairs(ours: list[str], theirs: list[str]) -> tuple[list[tuple[int, int]], int]:
    """Levenshtein alignment: the (our index, their index) pairs it matches or substitutes, and
    the number of edits (substitutions, insertions, deletions)."""
    n, m = len(ours), len(theirs)
    cost = np.zeros((n + 1, m + 1), dtype=np.int64)
    cost[:, 0], cost[0, :] = np.arange(n + 1), np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i, j] = min(cost[i - 1, j - 1] + (ours[i - 1] != theirs[j - 1]), cost[i - 1, j] + 1, cost[i, j - 1] + 1)
    pairs, i, j = [], n, m
    while i > 0 and j > 0:
        if cost[i, j] == cost[i - 1, j - 1] + (ours[i - 1] != theirs[j - 1]):
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif cost[i, j] == cost[i - 1, j] + 1:
            i -= 1
        else:
            j -= 1
    return pairs[::-1], int(cost[n, m])


def map_timings(symbols: list[str], phones: list[PhoneTiming], offset: float, frame_seconds: float) -> TokenTimings:
    """Festival's ``phones`` (seconds in the stored wav) onto the tokens ``symbols``, in frames of
    ``frame_seconds`` on a clock ``offset`` seconds after the wav's (see the module's notes)."""
    intervals = np.full((len(symbols), 2), np.nan)
    spoken = [i for i, s in enumerate(symbols) if s in ARPABET_SET]
    said = [k for k, p in enumerate(phones) if p.phone not in PAUSES]
    names = [FESTIVAL_TO_ARPABET.get(phones[k].phone, phones[k].phone.upper()) for k in said]
    bases = [_base(symbols[i]) for i in spoken]
    pairs, edits = _edit_pairs(bases, names)
    substitutions = sum(bases[i] != names[j] for i, j in pairs)

    def frames(p: PhoneTiming) -> tuple[float, float]:
        return (p.start + offset) / frame_seconds, (p.end + offset) / frame_seconds

    token_of_phone: dict[int, int] = {}
    for ours, theirs in pairs:
        token, phone = spoken[ours], said[theirs]
        intervals[token] = frames(phones[phone])
        token_of_phone[phone] = token
    for k, p in enumerate(phones):
        if p.phone not in PAUSES or k == 0 or (k - 1) not in token_of_phone:
            continue
        after = next((token_of_phone[q] for q in range(k + 1, len(phones)) if q in token_of_phone), len(symbols))
        between = range(token_of_phone[k - 1] + 1, after)
        marks = [t for t in between if symbols[t] in PUNCTUATION] or [t for t in between if symbols[t] == SPACE]
        if marks:
            intervals[marks[-1]] = frames(p)
    return TokenTimings(intervals, substitutions, edits - substitutions, len(said))


def corpus_token_timings(root: str | Path, uid: str, symbols: list[str], audio: AudioConfig) -> TokenTimings | None:
    """The true token intervals of utterance ``uid`` of the corpus at ``root`` on the mel frames
    its features made with ``audio`` have; None when the corpus has no timings for it."""
    from tts.audio import edge_bounds, load_wav

    path = timings_path(root, uid)
    if not path.is_file():
        return None
    wav, _ = load_wav(Path(root) / "wavs" / f"{uid}.wav", audio.sample_rate)
    start, _, lead = edge_bounds(wav, audio)
    return map_timings(symbols, read_timings(path), (lead - start) / audio.sample_rate,
                       audio.hop_length / audio.sample_rate)


class TrueIntervals:
    """``truth(uid, ids)``: the true token intervals (frames) of a corpus's utterance given its
    token ids, or None when it has no timings or does not map cleanly (with ``only_clean``).
    Computed once per utterance. ``available`` says whether the corpus has timings at all."""

    def __init__(self, root: str | Path, audio: AudioConfig, id_to_symbols: Callable[[list[int]], list[str]],
                 only_clean: bool = True):
        self.root, self.audio, self.symbols, self.only_clean = Path(root), audio, id_to_symbols, only_clean
        self.frame_ms = 1000.0 * audio.hop_length / audio.sample_rate
        self.available = (self.root / TIMINGS_DIR).is_dir()
        self._known: dict[str, np.ndarray | None] = {}

    def __call__(self, uid: str, ids: list[int]) -> np.ndarray | None:
        if not self.available:
            return None
        if uid not in self._known:
            timings = corpus_token_timings(self.root, uid, self.symbols(ids), self.audio)
            usable = timings is not None and (timings.clean or not self.only_clean)
            self._known[uid] = timings.intervals if usable and timings is not None else None
        return self._known[uid]
