"""The batches an evaluation has scored so far, kept in its output folder so that an interrupted
evaluation (a killed job, a session's end, Ctrl-C) resumes where it stopped instead of from the
first item.

One JSON line per scored batch, keyed by a digest of everything that decides its rows: the
synthesizer (:meth:`~tts.synthesis.Synthesizer.fingerprint`: weights, tokenizer, vocoder), the
inference settings, the meters, and the batch's items (ids, texts, speakers, reference audio). The
batches are those an uninterrupted run makes, and the prenet's noise is seeded per batch, so a
resumed evaluation gives the rows an uninterrupted one gives. A line written under another key
(another checkpoint, other settings) is never reused, and a line cut short by a kill is ignored.
The file is removed when the folder's tables are written (:func:`tts.evaluation.scoring.write_tables`):
an evaluation that scores several groups into one folder (the suites' categories) resumes at its
first unscored batch of any group.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from tts.config import InferenceConfig
from tts.synthesis import Synthesizer

#: the journal's file name inside an evaluation's output folder
JOURNAL = "scored.partial.jsonl"

log = logging.getLogger(__name__)


class JournalItem(Protocol):
    """What keys an item (:class:`tts.evaluation.scoring.Item` is one)."""

    id: str
    text: str
    category: str
    speaker: str
    said_as: str | None
    reference: np.ndarray


def scoring_identity(synthesizer: Synthesizer, settings: InferenceConfig, meters: Sequence[str | None]) -> str:
    """A digest of what decides every scored row except the items themselves (``meters``: the
    meters' identities, None for one not used)."""
    blob = json.dumps([synthesizer.fingerprint(), dataclasses.asdict(settings), list(meters)], default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class ScoringJournal:
    """``key(batch)``: a batch's key under this identity; ``get(key, count)``: the ``count``
    records kept under it, or None; ``put(key, records)``: keep them (appended and flushed at once). A record is one item's
    result as a JSON-ready dict."""

    def __init__(self, out: Path, identity: str):
        self.path = out / JOURNAL
        self.identity = identity
        self._kept: dict[str, list[dict]] = {}
        self.resumed = 0
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                    self._kept[record["key"]] = record["records"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short when the job was killed

    def key(self, batch: Sequence[JournalItem]) -> str:
        digest = hashlib.sha256(self.identity.encode())
        for item in batch:
            digest.update(json.dumps([item.id, item.text, item.category, item.speaker, item.said_as]).encode())
            digest.update(np.ascontiguousarray(item.reference, dtype=np.float32).tobytes())
        return digest.hexdigest()

    def get(self, key: str, count: int) -> list[dict] | None:
        records = self._kept.get(key)
        if records is None or len(records) != count:
            return None
        self.resumed += len(records)
        return records

    def put(self, key: str, records: list[dict]) -> None:
        line = json.dumps({"key": key, "records": records}, default=float)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()

    def report(self) -> None:
        """Say how much was read back, if anything."""
        if self.resumed:
            log.info("resumed: %d scored items read back from %s", self.resumed, self.path)
