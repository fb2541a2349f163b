"""Timing that waits for the GPU, peak memory, and the cost of one decoder step: what the
benchmarks and the study measure with."""

from __future__ import annotations

import dataclasses
import resource
import time
from typing import Callable, TypeVar

import numpy as np
import torch

from tts.config import InferenceConfig
from tts.models import AutoregressiveTTS

T = TypeVar("T")


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


def forced_steps(steps: int, settings: InferenceConfig | None = None) -> InferenceConfig:
    """``settings`` (default: the defaults) with the stop token and the per-token limit off, so that
    every item decodes exactly ``steps`` steps (what speed timings compare)."""
    return dataclasses.replace(settings or InferenceConfig(), stop_threshold=1.0, max_decoder_steps=steps,
                               max_frames_per_token=1e4)


@torch.no_grad()
def decoder_step_ms(model: AutoregressiveTTS, steps: int = 200, runs: int = 3) -> float:
    """Milliseconds per decoder step at batch 1: the median of ``runs`` decodings of a random
    60-token input forced to ``steps`` steps (encoder and postnet included), fp32, after a warm-up."""
    ids = torch.randint(3, model.n_symbols, (1, 60), generator=torch.Generator().manual_seed(0))
    times, _ = timed_runs(lambda: model.inference(ids, settings=forced_steps(steps)), runs, "cpu")
    return round(1000 * float(np.median(times)) / steps, 3)
