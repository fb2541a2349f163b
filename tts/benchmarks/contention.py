"""``tts bench contention``: what other work on the CPU does to synthesis and training, on all
cores' threads against one per idle core (the default thread choice, :mod:`tts.threads`).

For a few numbers of busy cores (:func:`busy_counts`: none, one, half and all but one, each kept
busy by a process that only spins), in one process: the thread count
:func:`tts.threads.choose_threads` picks then; batch-1 decoder milliseconds per step of the voice;
a sentence synthesized end to end through a vocoder (its real-time factor); and a training update
of the small Tacotron2 on a batch of 2 — each on every core's thread and on one. Run it on an
otherwise idle machine."""

from __future__ import annotations

import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import torch

from tts.benchmarks.inputs import CONFIGS
from tts.benchmarks.model import reference_batch, time_training
from tts.config import load_config
from tts.devices import cpu_instructions, describe_device
from tts.errors import TTSError
from tts.evaluation.timing import decoder_step_ms, timed_runs
from tts.models import AutoregressiveTTS, build_model
from tts.synthesis import Synthesizer
from tts.text import SymbolInventory
from tts.threads import choose_threads, usable_cores
from tts.training.losses import TTSLoss

SENTENCE = "The kettle whistled while the store manager counted the coins by the window."
#: a process that keeps one core busy and does nothing else
SPINNER = "while True:\n    pass\n"


@contextmanager
def busy(cores: int) -> Iterator[None]:
    """``cores`` spinning processes for the duration of the block (given 0.5 s to start)."""
    spinners = [subprocess.Popen([sys.executable, "-c", SPINNER]) for _ in range(cores)]
    try:
        time.sleep(0.5 if spinners else 0.0)
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def busy_counts(cores: int) -> list[int]:
    """The busy-core counts measured on ``cores`` cores: 0, 1, half and all but one, each once
    (``[0, 1]`` on 2 cores, ``[0, 1, 8, 15]`` on 16)."""
    return sorted({0, min(1, cores - 1), cores // 2 if cores > 2 else 0, cores - 1})


def bench_contention(checkpoint: str | None = None, vocoder: str | None = None, steps: int = 200,
                     runs: int = 2, train_steps: int = 2) -> dict:
    """Per busy-core count (:func:`busy_counts`): the default thread choice and, on all cores'
    threads and on one, the median over ``runs`` of decoder ms per step (forced to ``steps``),
    synthesis seconds and RTF of :data:`SENTENCE`, and the median over ``train_steps`` of seconds
    per training update (fp32)."""
    cores = len(usable_cores())
    torch.set_num_threads(cores)
    device = describe_device(torch.device("cpu"))
    synthesizer = Synthesizer.from_checkpoint(checkpoint, changes={"vocoder": vocoder} if vocoder else None)
    model = synthesizer.model
    if not isinstance(model, AutoregressiveTTS):
        raise TTSError("bench contention times a PyTorch checkpoint, not an ONNX export")
    config = load_config(str(CONFIGS / "tacotron2_small.yaml"))
    n_symbols = len(SymbolInventory())
    torch.manual_seed(0)
    trainee = build_model(config.model, n_symbols, config.audio)
    batch = reference_batch(config, n_symbols, config.model.tacotron2.reduction_factor, 0, batch_size=2)
    criterion = TTSLoss(config.loss)
    thread_counts = sorted({cores, 1}, reverse=True)
    results = {}
    for n_busy in busy_counts(cores):
        with busy(n_busy):
            choice = choose_threads(None, environ={})
            row: dict = {"measured_busy_cores": choice.busy, "default_threads": choice.threads}
            for threads in thread_counts:
                torch.set_num_threads(threads)
                times, audio = timed_runs(lambda: synthesizer([SENTENCE])[0].waveform, runs, "cpu")
                seconds = float(np.median(times))
                audio_seconds = len(audio) / synthesizer.config.audio.sample_rate
                row[f"threads_{threads}"] = {
                    "decoder_ms_per_step": decoder_step_ms(model, steps, runs),
                    "synthesis_seconds": round(seconds, 3),
                    "synthesis_rtf": round(seconds / audio_seconds, 4),
                    "training_seconds_per_update": time_training(trainee, batch, criterion, "fp32", train_steps,
                                                                 "cpu")["seconds_per_step"]}
            results[f"busy_{n_busy}"] = row
    return {"device": device, "cpu_instructions": cpu_instructions(), "cores": cores,
            "vocoder": synthesizer.settings.vocoder, "sentence": SENTENCE,
            "training": {"config": "configs/tacotron2_small.yaml", "items": 2,
                         "mel_frames": int(batch.mel_lengths.sum())},
            "results": results}
