"""Optimizers and learning-rate schedules."""

from __future__ import annotations

import math
from typing import Callable

import torch

from tts.config import OptimConfig, ScheduleConfig


def build_optimizer(params, config: OptimConfig) -> torch.optim.Optimizer:
    kinds = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
    return kinds[config.optimizer](params, lr=config.lr, betas=tuple(config.betas), eps=config.eps,
                                   weight_decay=config.weight_decay)


def lr_multiplier(config: ScheduleConfig, base_lr: float) -> Callable[[int], float]:
    """Multiplier of the base LR at optimizer step ``step`` (0-based), for ``LambdaLR``.

    * ``constant``: 1
    * ``exponential``: ``decay_rate ** (step / decay_steps)``
    * ``step``: ``gamma ** (step // step_size)``
    * ``noam``: ``√warmup · min(s^-½, s · warmup^-1.5)`` with ``s = step + 1`` (peaks at 1 after warmup)

    Non-noam schedules ramp up linearly over ``warmup_steps`` when it is set; all are floored
    at ``min_lr`` (except during warmup).
    """
    floor = config.min_lr / base_lr

    def multiplier(step: int) -> float:
        s = step + 1
        if config.kind == "noam":
            w = config.warmup_steps
            value = math.sqrt(w) * min(s ** -0.5, s * w ** -1.5)
            return value if s < w else max(value, floor)
        if config.kind == "exponential":
            value = config.decay_rate ** (step / config.decay_steps)
        elif config.kind == "step":
            value = config.gamma ** (step // config.step_size)
        else:
            value = 1.0
        value = max(value, floor)
        if config.warmup_steps > 0 and s < config.warmup_steps:
            value *= s / config.warmup_steps
        return value

    return multiplier


def build_scheduler(optimizer: torch.optim.Optimizer, config: OptimConfig) -> torch.optim.lr_scheduler.LambdaLR:
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_multiplier(config.schedule, config.lr))
