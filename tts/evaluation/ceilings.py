"""The ceiling's transcripts, kept between evaluations.

Every evaluation that measures WER/CER also sends the reference recording's mel through the same
vocoder and recognizer (the ceiling, :func:`tts.evaluation.scoring.score`). That work is the same
in every evaluation of a corpus: an attention study scores the same 100 test sentences, 104 suite
texts and 40 long-form passages for each of its runs, and the ceiling is nearly half of that
time (a vocoder pass and a transcription per item). Its transcripts are therefore kept, one small
JSON file per item, under a key that holds everything the transcript depends on:

* the reference mel's bytes, ``(n_mels, T_mel)`` float32;
* the vocoder's :meth:`~tts.vocoders.Vocoder.fingerprint` (kind, mel definition, settings, weights);
* the recognizer's ``identity`` (model, libraries, decoding options, seed, threads);
* the numerics of the machine: torch's version, its thread count and the CPU's notable instruction
  sets (:func:`tts.devices.cpu_instructions`), since the same weights give other last bits there.

So a kept transcript is the one this machine would compute again (the recognizer's transcripts
depend on their waveform alone, :class:`tts.metrics.Recognizer`). The folder is
``$TTS_CACHE_DIR/ceilings`` (by default ``$XDG_CACHE_HOME/tts/ceilings``, i.e.
``~/.cache/tts/ceilings``); ``TTS_CACHE_DIR=off`` turns keeping off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

import numpy as np
import torch

from tts.devices import cpu_instructions
from tts.fileio import WriteError, write_text_atomic
from tts.metrics import Recognizer
from tts.vocoders import Vocoder

log = logging.getLogger(__name__)

#: the environment variable that names the cache folder (``off``: keep nothing)
CACHE_ENV = "TTS_CACHE_DIR"


def cache_root() -> Path | None:
    """The project's cache folder (``$TTS_CACHE_DIR``, else ``$XDG_CACHE_HOME/tts``, else
    ``~/.cache/tts``), or None when ``TTS_CACHE_DIR`` is ``off``."""
    value = os.environ.get(CACHE_ENV, "").strip()
    if value.lower() == "off":
        return None
    if value:
        return Path(value).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tts"


class CeilingTranscripts:
    """The kept transcripts of one vocoder heard by one recognizer on this machine, in ``folder``.

    ``get(mel)`` is the transcript kept for a reference mel ``(n_mels, T_mel)``, or None;
    ``put(mel, transcript)`` keeps one. A file that cannot be read counts as absent; a folder that
    cannot be written is reported once and keeping stops (the evaluation goes on)."""

    def __init__(self, folder: Path, vocoder: Vocoder, recognizer: Recognizer):
        self.folder = folder
        numerics = f"torch {torch.__version__}, {torch.get_num_threads()} threads, {cpu_instructions()}"
        self._context = hashlib.sha256(
            f"{vocoder.fingerprint()}|{recognizer.identity}|{numerics}".encode()).hexdigest()
        self.hits = self.misses = 0
        self._writable = True

    def _path(self, mel: np.ndarray) -> Path:
        digest = hashlib.sha256(self._context.encode())
        digest.update(repr(mel.shape).encode())
        digest.update(np.ascontiguousarray(mel, dtype=np.float32).tobytes())
        key = digest.hexdigest()
        return self.folder / key[:2] / f"{key}.json"

    def get(self, mel: np.ndarray) -> str | None:
        try:
            transcript = json.loads(self._path(mel).read_text(encoding="utf-8"))["transcript"]
        except (OSError, ValueError, KeyError, TypeError):
            transcript = None
        if not isinstance(transcript, str):
            self.misses += 1
            return None
        self.hits += 1
        return transcript

    def put(self, mel: np.ndarray, transcript: str) -> None:
        if not self._writable:
            return
        try:
            write_text_atomic(self._path(mel), json.dumps({"transcript": transcript}))
        except WriteError as exc:
            log.warning("the ceiling's transcripts are not kept: %s (set %s to a writable folder, or to off)",
                        exc, CACHE_ENV)
            self._writable = False


def ceiling_transcripts(vocoder: Vocoder, recognizer: Recognizer) -> CeilingTranscripts | None:
    """The kept transcripts for this vocoder and recognizer in the project's cache (None when off)."""
    root = cache_root()
    return None if root is None else CeilingTranscripts(root / "ceilings", vocoder, recognizer)
