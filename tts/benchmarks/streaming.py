"""``tts bench streaming``: time to first audio of a sentence, streamed against said whole."""

from __future__ import annotations

import time

import numpy as np
import torch

from tts.streaming import Streamer
from tts.synthesis import Synthesizer

SENTENCE = ("The quick brown fox jumps over the lazy dog while the old farmer watches quietly "
            "from the porch of his house.")  # 20 words


def bench_streaming(text: str = SENTENCE, checkpoint: str | None = None, vocoder: str | None = None,
                    threads: int = 2, runs: int = 3) -> dict:
    """Median seconds to the first chunk of :class:`~tts.streaming.Streamer` and to the whole
    waveform of :class:`~tts.synthesis.Synthesizer`, and the largest difference between the two audios."""
    torch.set_num_threads(threads)
    synthesizer = Synthesizer.from_checkpoint(checkpoint, changes={"vocoder": vocoder} if vocoder else None)
    streamer = Streamer(synthesizer)
    first, streamed_total, whole_total = [], [], []
    streamed = whole = np.zeros(0)
    for _ in range(runs + 1):  # the first run warms up
        start = time.perf_counter()
        chunks: list[np.ndarray] = []
        for chunk in streamer(text):
            if not chunks:
                first.append(time.perf_counter() - start)
            chunks.append(chunk)
        streamed_total.append(time.perf_counter() - start)
        start = time.perf_counter()
        whole = synthesizer([text])[0].waveform
        whole_total.append(time.perf_counter() - start)
        streamed = np.concatenate(chunks)
    return {"words": len(text.split()), "vocoder": synthesizer.settings.vocoder, "threads": threads,
            "audio_seconds": round(len(whole) / synthesizer.config.audio.sample_rate, 2),
            "first_audio_seconds_streamed": round(float(np.median(first[1:])), 3),
            "first_audio_seconds_whole": round(float(np.median(whole_total[1:])), 3),
            "total_seconds_streamed": round(float(np.median(streamed_total[1:])), 3),
            "max_abs_difference": float(np.abs(streamed - whole).max()) if len(streamed) == len(whole) else None}
