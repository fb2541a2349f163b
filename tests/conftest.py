"""Shared fixtures: speech-like audio the tests make themselves (no downloads)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

SR = 22050


def harmonic_speechlike(seconds: float = 2.0, sr: int = SR, seed: int = 0) -> np.ndarray:
    """A voiced, vibrato-modulated harmonic signal with syllable-like amplitude envelope."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    f0 = 140 + 25 * np.sin(2 * np.pi * 3.0 * t) + 10 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    wav = sum(np.sin(k * phase) / k * (1.0 + 0.6 * np.sin(2 * np.pi * (0.5 + 0.3 * k) * t)) for k in range(1, 25))
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 4.0 * t) ** 2
    wav = wav * envelope + 0.01 * rng.standard_normal(len(t))
    return (0.5 * wav / np.abs(wav).max()).astype(np.float32)


@pytest.fixture(scope="session")
def speech_wav(tmp_path_factory) -> Path:
    """A wav of real (espeak-ng) speech when the engine is installed, else a speech-like signal."""
    import soundfile as sf

    path = tmp_path_factory.mktemp("audio") / "speech.wav"
    if shutil.which("espeak-ng"):
        subprocess.run(["espeak-ng", "-w", str(path), "The birch canoe slid on the smooth planks. "
                        "Glue the sheet to the dark blue background."], check=True, capture_output=True)
    else:
        sf.write(path, harmonic_speechlike(3.0), SR)
    return path
