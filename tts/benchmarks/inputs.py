"""What benchmarks feed in: a speech clip (espeak-ng or a given wav), a text, and the repository's configs."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tts.audio import load_wav
from tts.config import AudioConfig
from tts.errors import TTSError

BENCH_TEXT = ("The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with "
              "a single step, and the early bird catches the worm while the cat watches from the porch.")


#: the repository's configs/ (benchmarks default to its configs)
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def speech_clip(seconds: float, config: AudioConfig, wav_path: str | None = None) -> np.ndarray:
    """A speech clip of exactly ``seconds`` ``(T_wav,)``: from ``wav_path``, else spoken by espeak-ng (looped)."""
    if wav_path is None:
        if shutil.which("espeak-ng") is None:
            raise TTSError("espeak-ng is not installed (apt-get install -y espeak-ng) and no --wav was given")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "speech.wav"
            subprocess.run(["espeak-ng", "-w", str(path), BENCH_TEXT], check=True, capture_output=True)
            wav, _ = load_wav(path, config.sample_rate)
    else:
        wav, _ = load_wav(wav_path, config.sample_rate)
    n = int(seconds * config.sample_rate)
    return np.tile(wav, int(np.ceil(n / len(wav))))[:n]
