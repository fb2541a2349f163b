"""``tts bench long-text``: time and peak memory of synthesizing one long paragraph
(``python egs/synthetic/long_paragraph.py`` writes one of 20,000 characters from the synthetic
corpus's test transcripts)."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import torch

from tts.errors import TTSError
from tts.synthesis import Synthesizer


def bench_long_text(text_file: str, checkpoint: str | None = None, vocoder: str | None = None,
                    threads: int = 2) -> dict:
    """Synthesize the file's text as one paragraph (split into sentences as always) and report the
    seconds, the audio's length and the process's peak resident memory (model and imports included)."""
    path = Path(text_file)
    if not path.is_file():
        raise TTSError(f"text file {path} does not exist")
    torch.set_num_threads(threads)
    text = " ".join(path.read_text(encoding="utf-8").split())
    synthesizer = Synthesizer.from_checkpoint(checkpoint, changes={"vocoder": vocoder} if vocoder else None)
    loaded_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    (result,) = synthesizer([text])
    seconds = time.perf_counter() - start
    return {"characters": len(text), "sentences": len(result.segments), "audio_seconds": round(result.duration, 1),
            "seconds": round(seconds, 1), "vocoder": synthesizer.settings.vocoder, "threads": threads,
            "peak_rss_mib_after_loading": round(loaded_mib), "peak_rss_mib": round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
