"""Parallel scheduled sampling (Duckworth et al. 2019, "Parallel Scheduled Sampling").

Teacher forcing lets an autoregressive decoder predict the next frame mostly from the previous
ground-truth frame; at inference it then drifts on its own output and ignores the text (the
exposure bias that keeps Transformer-TTS unintelligible long after its attention is diagonal).
Here a first teacher-forced pass without gradients predicts every frame, and each decoder input
frame is replaced by that prediction with some probability; the second pass, whose loss is
trained against the real targets, has to read the text to correct its own mistakes. One pass
teaches it to survive one step of its own error; more passes (each predicting from the previous
pass's mixed inputs) compound the error over as many steps, nearer the drift of free-running.
Works for any model whose forward builds its decoder inputs from ``batch.mels``.
"""

from __future__ import annotations

import dataclasses

import torch

from tts.config import ScheduledSamplingConfig
from tts.data import Batch


def sampling_probability(config: ScheduledSamplingConfig, step: int) -> float:
    """Probability of feeding a predicted frame at ``step``: 0 before ``start_step``, then a linear
    ramp over ``ramp_steps`` up to ``config.probability``."""
    if config.probability <= 0 or step < config.start_step:
        return 0.0
    if config.ramp_steps <= 0:
        return config.probability
    return config.probability * min(1.0, (step - config.start_step) / config.ramp_steps)


@torch.no_grad()
def mix_in_predictions(model: torch.nn.Module, batch: Batch, probability: float, passes: int = 1,
                       min_frames: int = 0) -> Batch:
    """A copy of ``batch`` whose ``mels`` (the decoder inputs, ``(B, n_mels, T_mel)``) hold the
    model's own ``mel_before`` at a random ``probability`` share of real frames, the rest the
    recordings; targets stay in the original batch. The first pass predicts from the recordings,
    each further one from the previous pass's mix (one draw of the chosen frames serves every
    pass). Padding frames, and every frame of an utterance shorter than ``min_frames``, are left
    as they are."""
    chosen = torch.rand(batch.mels.shape[0], batch.mels.shape[2], device=batch.mels.device) < probability
    long_enough = (batch.mel_lengths >= min_frames).to(batch.mels.device)
    chosen = (chosen & batch.mel_mask & long_enough[:, None]).unsqueeze(1)
    if not bool(chosen.any()):  # nothing to replace (a batch of short clips): no passes to run
        return batch
    mixed = batch
    for _ in range(passes):
        predicted = model(mixed).mel_before.to(batch.mels.dtype)
        mixed = dataclasses.replace(batch, mels=torch.where(chosen, predicted, batch.mels))
    return mixed
