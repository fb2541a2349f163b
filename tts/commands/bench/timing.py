"""What every benchmark needs: a speech clip, wall-clock timing that waits for the GPU, and peak memory."""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, TypeVar

import numpy as np
import torch

from tts.audio import load_wav
from tts.commands.options import add_device, add_threads, positive_float, positive_int
from tts.config import AudioConfig, InferenceConfig
from tts.errors import TTSError
from tts.models import AutoregressiveTTS

T = TypeVar("T")

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


def synchronize(device: str) -> None:
    """Wait for queued GPU work, so that a wall-clock timer measures it (nothing on the CPU)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def timed_runs(fn: Callable[[], T], runs: int, device: str, warm_up: bool = True) -> tuple[list[float], T]:
    """Wall seconds of ``runs`` calls of ``fn`` (after one untimed warm-up call), and the last result."""
    out = fn() if warm_up else None
    times = []
    for _ in range(runs):
        synchronize(device)
        start = time.perf_counter()
        out = fn()
        synchronize(device)
        times.append(time.perf_counter() - start)
    return times, out  # type: ignore[return-value]


def peak_memory_mib(device: str) -> float:
    """Peak memory since the last :func:`reset_peak_memory`: allocated GPU memory on CUDA, the
    process's peak resident set on the CPU (which only grows)."""
    if torch.device(device).type == "cuda":
        return round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def reset_peak_memory(device: str) -> None:
    """Start a new peak for :func:`peak_memory_mib` (on CUDA; the CPU's cannot be reset)."""
    if torch.device(device).type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


@torch.no_grad()
def decoder_step_ms(model: AutoregressiveTTS, steps: int = 200, runs: int = 3) -> float:
    """Milliseconds per decoder step at batch 1: the median of ``runs`` decodings of a random
    60-token input forced to ``steps`` steps (encoder and postnet included), fp32, after a warm-up."""
    ids = torch.randint(3, model.n_symbols, (1, 60), generator=torch.Generator().manual_seed(0))
    forced = InferenceConfig(stop_threshold=1.0, max_decoder_steps=steps, max_frames_per_token=1e4)
    times, _ = timed_runs(lambda: model.inference(ids, settings=forced), runs, "cpu")
    return round(1000 * float(np.median(times)) / steps, 3)
