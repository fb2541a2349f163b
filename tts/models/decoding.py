"""Pieces every autoregressive decoder shares at inference: per-item stopping under a step
limit, and turning the collected frames into the final (postnet-refined, padded) mel."""

from __future__ import annotations

import logging
import math

import torch
from torch import nn

from tts.models.layers import sequence_mask

log = logging.getLogger(__name__)
MEL_PAD_VALUE = math.log(1e-5)


class StopTracker:
    """Tracks which items of a batch have stopped.

    An item stops when its stop probability exceeds ``threshold`` or after
    ``min(max_decoder_steps, ceil(text_length · max_frames_per_token / r))`` steps.
    """

    def __init__(self, text_lengths: torch.Tensor, r: int, threshold: float, max_decoder_steps: int,
                 max_frames_per_token: float):
        self.r, self.threshold = r, threshold
        self.limits = torch.clamp(torch.ceil(text_lengths.float() * max_frames_per_token / r).long(), 1,
                                  max_decoder_steps)
        self.finished = torch.zeros_like(text_lengths, dtype=torch.bool)
        self.hit_limit = torch.zeros_like(self.finished)
        self.steps = torch.zeros_like(text_lengths)

    @property
    def max_steps(self) -> int:
        return int(self.limits.max())

    def update(self, t: int, stop_prob: torch.Tensor) -> bool:
        """Record step ``t`` (0-based) with stop probabilities ``(B,)``; True when every item is done."""
        stopping = stop_prob > self.threshold
        at_limit = (t + 1) >= self.limits
        ending = ~self.finished & (stopping | at_limit)
        self.hit_limit |= ending & at_limit & ~stopping
        self.steps = torch.where(ending, torch.full_like(self.steps, t + 1), self.steps)
        self.finished |= ending
        return bool(self.finished.all())

    @property
    def frame_lengths(self) -> torch.Tensor:
        return self.steps * self.r

    def warn(self) -> None:
        for i in torch.nonzero(self.hit_limit).flatten().tolist():
            log.warning("item %d hit the decoder step limit (%d steps) without a stop token", i, int(self.limits[i]))


def finish_mel(frames: list[torch.Tensor], postnet: nn.Module, frame_lengths: torch.Tensor) -> torch.Tensor:
    """Per-step frames ``[(B, r, n_mels)] → (B, n_mels, T_mel)`` refined by the postnet; frames past
    each item's length hold the silence value."""
    mel_before = torch.cat(frames, dim=1).transpose(1, 2)
    frame_mask = sequence_mask(frame_lengths, mel_before.shape[2])
    mel = mel_before + postnet(mel_before, frame_mask)
    return mel.masked_fill(~frame_mask.unsqueeze(1), MEL_PAD_VALUE)
