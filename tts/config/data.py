"""Batching and filtering of cached features."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tts.config.schema import bounded


@dataclass
class DataConfig:
    """``sampler``: ``length_buckets`` makes batches of similar length within ``max_frames_per_batch``
    (at most ``max_batch_size`` items); ``random`` draws ``batch_size`` utterances at random and
    drops the last incomplete batch (NVIDIA/tacotron2's). Padded mel frames hold silence
    (``audio.silence``) or, with ``pad_mels_with: zeros``, zeros.
    """

    # batching
    sampler: Literal["length_buckets", "random"] = "length_buckets"
    batch_size: int = bounded(64, 1)
    max_frames_per_batch: int = bounded(8000, 1)
    max_batch_size: int = bounded(64, 1)
    bucket_size_multiplier: int = bounded(8, 1)
    pad_mels_with: Literal["silence", "zeros"] = "silence"
    # what is left out, and how it is loaded
    max_mel_frames: int = bounded(1000, 1)
    max_text_tokens: int = bounded(250, 1)
    num_workers: int = bounded(1, 0)
