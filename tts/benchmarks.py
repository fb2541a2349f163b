"""Speed and quality benchmarks that print JSON (``tts bench <name>``); never run in tests."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from tts.audio import STFT, GriffinLim, load_wav, spectral_convergence
from tts.config import AudioConfig

BENCH_TEXT = ("The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with "
              "a single step, and the early bird catches the worm while the cat watches from the porch.")


def speech_clip(seconds: float, config: AudioConfig, wav_path: str | None = None) -> np.ndarray:
    """A speech clip of exactly ``seconds``: from ``wav_path``, else spoken by espeak-ng (looped)."""
    if wav_path is None:
        if shutil.which("espeak-ng") is None:
            raise RuntimeError("espeak-ng is not installed (apt-get install -y espeak-ng) and no --wav was given")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "speech.wav"
            subprocess.run(["espeak-ng", "-w", str(path), BENCH_TEXT], check=True, capture_output=True)
            wav, _ = load_wav(path, config.sample_rate)
    else:
        wav, _ = load_wav(wav_path, config.sample_rate)
    n = int(seconds * config.sample_rate)
    return np.tile(wav, int(np.ceil(n / len(wav))))[:n]


def bench_griffin_lim(seconds: float = 10.0, iters: int = 64, threads: int = 2,
                      wav_path: str | None = None, repeats: int = 3) -> dict:
    """Our fast Griffin-Lim vs ``librosa.griffinlim`` (60 iterations) on the same magnitude.

    Both reconstruct a waveform from the true STFT magnitude of a speech clip; reports the
    best wall time of ``repeats`` runs and the spectral convergence (lower is better).
    """
    import librosa

    torch.set_num_threads(threads)
    config = AudioConfig()
    wav = speech_clip(seconds, config, wav_path)
    stft = STFT(config.n_fft, config.hop_length, config.win_length)
    magnitude = stft(torch.from_numpy(wav)[None]).abs()
    vocoder = GriffinLim(config)

    def best_time(fn):
        times, out = [], None
        for _ in range(repeats):
            start = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - start)
        return min(times), out

    ours_s, ours = best_time(lambda: vocoder.reconstruct(magnitude, n_iter=iters))
    ref_s, ref = best_time(lambda: librosa.griffinlim(
        magnitude[0].numpy(), n_iter=60, hop_length=config.hop_length, win_length=config.win_length,
        n_fft=config.n_fft, random_state=0))
    ref_wav = torch.from_numpy(ref).float()[None]
    return {
        "clip_seconds": seconds,
        "threads": threads,
        "ours": {"iterations": iters, "seconds": round(ours_s, 4),
                 "spectral_convergence": round(float(spectral_convergence(magnitude, ours, stft)), 5)},
        "librosa": {"iterations": 60, "seconds": round(ref_s, 4),
                    "spectral_convergence": round(float(spectral_convergence(magnitude, ref_wav, stft)), 5)},
        "speedup": round(ref_s / ours_s, 2),
    }
