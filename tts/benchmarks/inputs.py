"""What every benchmark needs: a speech clip, wall-clock timing that waits for the GPU, and peak memory."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tts.audio import load_wav
from tts.commands.options import add_device, add_threads, positive_float, positive_int
from tts.config import AudioConfig
from tts.errors import TTSError

BENCH_TEXT = ("The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with "
              "a single step, and the early bird catches the worm while the cat watches from the porch.")


#: the repository's configs/ (benchmarks default to its configs)
CONFIGS = Path(__file__).resolve().parents[3] / "configs"


def add_clip_options(p: argparse.ArgumentParser, iterations_help: str) -> None:
    """The options of a benchmark on a speech clip: its length, Griffin-Lim's iterations, the clip, threads, device."""
    p.add_argument("--seconds", type=positive_float, default=10.0, help="clip length")
    p.add_argument("--iters", type=positive_int, default=64, help=iterations_help)
    p.add_argument("--wav", help="speech clip to use (default: espeak-ng)")
    add_threads(p)
    add_device(p, "cpu")


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
