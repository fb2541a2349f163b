"""Batching and filtering of cached features."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tts.config.schema import bounded
from tts.errors import ConfigError


@dataclass
class Oversampling:
    """Training utterances whose ids start with ``prefix`` appear ``times`` times in every epoch. A
    corpus joined from several (``recipes/synthetic/combine.py``) keeps each part's id prefix, so
    ``{prefix: SHT, times: 4}`` shows the model the short-utterance part four times as often."""

    prefix: str = ""
    times: int = bounded(1, 1)

    def __post_init__(self) -> None:
        if not self.prefix.strip():
            raise ConfigError.for_key("prefix", "must name an utterance-id prefix (e.g. SHT)")


@dataclass
class DataConfig:
    """``sampler``: ``length_buckets`` makes batches of similar length within ``max_frames_per_batch``
    (at most ``max_batch_size`` items); ``random`` draws ``batch_size`` utterances at random and
    drops the last incomplete batch (NVIDIA/tacotron2's). Padded mel frames hold silence
    (``audio.silence``) or, with ``pad_mels_with: zeros``, zeros. ``oversample``: per-prefix
    repetitions of training utterances in each epoch (:class:`Oversampling`; the longest matching
    prefix applies); validation and test splits are never repeated.
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
    oversample: list[Oversampling] = field(default_factory=list)

    def __post_init__(self) -> None:
        prefixes = [rule.prefix for rule in self.oversample]
        repeated = sorted({prefix for prefix in prefixes if prefixes.count(prefix) > 1})
        if repeated:
            raise ConfigError.for_key("oversample", f"names a prefix more than once ({', '.join(repeated)})")
