"""True phone timings of a corpus whose voice is a speech engine: Festival knows where each phone
it spoke starts and ends. A corpus stores them beside its wavs, one file per utterance,
``<root>/timings/<id>.tsv``: a ``phone start end`` line per phone (seconds in the stored wav;
Festival's phone set, ``pau`` for pauses)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tts.errors import TTSError

TIMINGS_DIR = "timings"


@dataclass(frozen=True)
class PhoneTiming:
    """One spoken phone: its name (Festival's lower-case CMU set, ``pau`` a pause) and its
    ``[start, end)`` in seconds."""

    phone: str
    start: float
    end: float


def phones_from_ends(ends: list[tuple[float, str]], offset: float, duration: float) -> list[PhoneTiming]:
    """Festival's segments (each phone's end time, in order) as phones on the clock of audio that
    starts ``offset`` seconds into Festival's and lasts ``duration``: each phone starts where the
    one before ended; what lies outside ``[0, duration]`` is cut, and phones left empty dropped."""
    phones, start = [], 0.0
    for end, phone in ends:
        lo, hi = max(start - offset, 0.0), min(end - offset, duration)
        if hi > lo:
            phones.append(PhoneTiming(phone, round(lo, 5), round(hi, 5)))
        start = end
    return phones


def timings_path(root: str | Path, uid: str) -> Path:
    return Path(root) / TIMINGS_DIR / f"{uid}.tsv"


def write_timings(path: Path, phones: list[PhoneTiming]) -> None:
    """``phone start end`` lines, written atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(f"{p.phone}\t{p.start:.5f}\t{p.end:.5f}\n" for p in phones))
    tmp.replace(path)


def read_timings(path: str | Path) -> list[PhoneTiming]:
    """The phones of one ``timings/<id>.tsv``; a malformed line is an error naming the file and line."""
    phones = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        fields = line.split("\t")
        try:
            phone, start, end = fields[0], float(fields[1]), float(fields[2])
        except (IndexError, ValueError):
            raise TTSError(f"{path}:{number}: expected 'phone<TAB>start<TAB>end', got {line!r}") from None
        if len(fields) != 3 or not 0.0 <= start <= end:
            raise TTSError(f"{path}:{number}: expected 'phone<TAB>start<TAB>end' with 0 <= start <= end, got {line!r}")
        phones.append(PhoneTiming(phone, start, end))
    return phones
