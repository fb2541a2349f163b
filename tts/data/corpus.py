"""The canonical corpus layout every recipe produces and every later stage reads.

```
<root>/wavs/<id>.wav
<root>/metadata.csv           id|text|normalized text   (LJSpeech format; quotes are literal)
                              id|text|normalized text|speaker   (a corpus of several speakers)
<root>/splits/{train,val,test}.txt   one id per line
```

A multi-speaker corpus names each line's speaker in a fourth field, on every line: LJSpeech's
layout extended as Coqui TTS's multi-speaker LJSpeech-style formatters extend it, with the
information of ESPnet's ``utt2spk`` (one speaker per utterance) in the same file.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from tts.errors import TTSError

SPLITS = ("train", "val", "test")


@dataclass
class Utterance:
    """One line of ``metadata.csv``."""

    id: str
    text: str
    normalized: str
    speaker: str = ""

    def wav_path(self, root: str | Path) -> Path:
        return Path(root) / "wavs" / f"{self.id}.wav"


#: what an utterance id may be: it names ``wavs/<id>.wav`` and the feature cache's files
SAFE_ID = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]*")
SAFE_ID_REPLACE = re.compile(r"[^A-Za-z0-9_.\-]")

def require_corpus(root: str | Path) -> Path:
    """Check that ``root`` looks like a corpus; otherwise say how to get one."""
    root = Path(root)
    if not (root / "metadata.csv").is_file():
        raise TTSError(
            f"no corpus at {root} (missing metadata.csv): build one with "
            f"'python recipes/synthetic/prepare.py --out {root}' or "
            f"'python recipes/ljspeech/prepare.py --out {root}' (see egs/*/run.sh)")
    return root


def read_metadata(root: str | Path) -> list[Utterance]:
    """Parse ``metadata.csv`` (UTF-8): ``id|text`` or ``id|text|normalized text`` per line, split on
    ``|`` only (quotes inside fields are kept); a UTF-8 byte-order mark (spreadsheets write one) is
    dropped. A line with more fields, no id, an id that is not a plain file name (``/``, ``\\``, a
    leading dot: the id names its wav and cache files) or an id seen before is an error naming the
    line; so is a file with no utterance at all."""
    path = require_corpus(root) / "metadata.csv"
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        line_no = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise TTSError(f"{path}:{line_no}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                       f"convert the file to UTF-8") from None
    utterances: list[Utterance] = []
    seen: dict[str, int] = {}
    speaker_lines: dict[bool, int] = {}  # with / without a speaker field → the first such line
    for line_no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        fields = line.split("|")
        if not 2 <= len(fields) <= 4 or not fields[0].strip():
            raise TTSError(f"{path}:{line_no}: expected 'id|text|normalized text' (and '|speaker' in a corpus of "
                           f"several speakers), got {len(fields)} field(s) in {line[:60]!r}")
        speaker = fields[3].strip() if len(fields) == 4 else ""
        if len(fields) == 4 and not speaker:
            raise TTSError(f"{path}:{line_no}: the speaker field is empty in {line[:60]!r}")
        uid = fields[0].strip()
        if not SAFE_ID.fullmatch(uid):
            raise TTSError(f"{path}:{line_no}: id {uid!r} is not a plain file name (it names wavs/<id>.wav and the "
                           f"cache's files): use letters, digits and - _ . without a leading dot, e.g. "
                           f"{SAFE_ID_REPLACE.sub('_', uid).lstrip('.') or 'utt0001'!r}")
        if uid in seen:
            raise TTSError(f"{path}:{line_no}: id {uid} was already used on line {seen[uid]}")
        seen[uid] = line_no
        text = fields[1]
        normalized = fields[2] if len(fields) > 2 and fields[2].strip() else text
        utterances.append(Utterance(uid, text, normalized, speaker))
        speaker_lines.setdefault(bool(speaker), line_no)
    if not utterances:
        raise TTSError(f"{path} holds no utterance (only empty lines): nothing to read; expected "
                       f"'id|text|normalized text' lines")
    if len(speaker_lines) == 2:
        raise TTSError(f"{path}:{speaker_lines[False]}: no speaker field, where line {speaker_lines[True]} names one: "
                       f"in a corpus of several speakers every line ends in '|speaker'")
    return utterances


def write_metadata(root: str | Path, utterances: list[Utterance]) -> None:
    lines = [f"{u.id}|{u.text}|{u.normalized}" + (f"|{u.speaker}" if u.speaker else "") for u in utterances]
    (Path(root) / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def corpus_speakers(root: str | Path) -> dict[str, str]:
    """Utterance id → speaker name of a multi-speaker corpus; empty for a corpus of one speaker."""
    return {u.id: u.speaker for u in read_metadata(root) if u.speaker}


def make_splits(ids: list[str], n_val: int, n_test: int, seed: int) -> dict[str, list[str]]:
    """Deterministic random split of sorted ids: ``n_test`` test, ``n_val`` val, the rest train."""
    if n_val + n_test >= len(ids):
        raise TTSError(f"cannot hold out {n_val} val + {n_test} test utterances from {len(ids)}")
    shuffled = sorted(ids)
    random.Random(seed).shuffle(shuffled)
    return {"test": sorted(shuffled[:n_test]), "val": sorted(shuffled[n_test:n_test + n_val]),
            "train": sorted(shuffled[n_test + n_val:])}


def make_speaker_splits(speaker_of: dict[str, str], n_val: int, n_test: int, seed: int) -> dict[str, list[str]]:
    """:func:`make_splits` within each speaker (``n_val`` and ``n_test`` per speaker), merged: every
    speaker is held out equally and trains on the rest of its utterances."""
    by_speaker: dict[str, list[str]] = {}
    for uid, speaker in speaker_of.items():
        by_speaker.setdefault(speaker, []).append(uid)
    merged: dict[str, list[str]] = {name: [] for name in SPLITS}
    for speaker, ids in sorted(by_speaker.items()):
        if n_val + n_test >= len(ids):
            raise TTSError(f"speaker {speaker} has {len(ids)} utterances: too few to hold out {n_val} val + "
                           f"{n_test} test and train on the rest")
        for name, part in make_splits(ids, n_val, n_test, seed).items():
            merged[name].extend(part)
    return {name: sorted(ids) for name, ids in merged.items()}


def write_splits(root: str | Path, splits: dict[str, list[str]]) -> None:
    folder = Path(root) / "splits"
    folder.mkdir(parents=True, exist_ok=True)
    for name, ids in splits.items():
        (folder / f"{name}.txt").write_text("".join(f"{i}\n" for i in ids))


def read_split(root: str | Path, name: str) -> list[str]:
    path = Path(root) / "splits" / f"{name}.txt"
    if not path.is_file() and name not in SPLITS:
        raise TTSError(f"no split '{name}' in {Path(root) / 'splits'}: the recipes write {', '.join(SPLITS)}")
    if not path.is_file():
        raise TTSError(f"split file {path} is missing: run the corpus recipe (egs/*/run.sh --stop-stage 1)")
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]
