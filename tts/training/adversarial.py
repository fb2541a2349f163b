"""The adversarial term of acoustic-model training (``loss.adversarial``): a discriminator over
log-mel segments, trained with least squares to tell the recordings' mels from the model's
postnet output, whose judgement and feature maps the model then learns to match. It pulls the
postnet's mels towards the recordings' texture where the frame-wise regression loss averages it
away (over-smoothing).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

from tts.config import AdversarialConfig
from tts.vocoders.hifigan import discriminator_loss, discriminator_stack, feature_matching_loss, generator_adversarial_loss

__all__ = ["MelDiscriminator", "MelAdversary", "matching_segments"]


class MelDiscriminator(nn.Module):
    """2-D convolutions over a log-mel segment ``(B, 1, n_mels, S)``, halving the mel and time
    axes twice and the mel axis once more; returns patch logits ``(B, N)`` and every layer's
    feature map."""

    def __init__(self, channels: int = 64):
        super().__init__()
        widths = [1, channels, channels, 2 * channels, 2 * channels]
        strides = [(1, 1), (2, 2), (2, 2), (2, 1)]
        self.convs = nn.ModuleList(weight_norm(nn.Conv2d(a, b, 3, stride, padding=1))
                                   for a, b, stride in zip(widths[:-1], widths[1:], strides))
        self.post = weight_norm(nn.Conv2d(widths[-1], 1, 3, padding=1))

    def forward(self, mel: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        return discriminator_stack(self.convs, self.post, mel)


def matching_segments(real: torch.Tensor, fake: torch.Tensor, lengths: torch.Tensor,
                      frames: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One segment per item at the same random offset in ``real`` and ``fake`` ``(B, n_mels, T_mel)``,
    inside the item's ``lengths`` ``(B,)``: two tensors ``(B, 1, n_mels, S)`` with
    ``S = min(frames, shortest length)``. Offsets come from the global generator (saved with the
    training state, so a resumed run draws the same ones)."""
    size = min(frames, int(lengths.min()))
    offsets = (torch.rand(lengths.shape[0]) * (lengths.cpu() - size + 1)).long().to(real.device)
    index = (offsets[:, None] + torch.arange(size, device=real.device))[:, None, :].expand(-1, real.shape[1], -1)
    return real.gather(2, index).unsqueeze(1), fake.gather(2, index).unsqueeze(1)


class MelAdversary:
    """The discriminator side of the adversarial term: the :class:`MelDiscriminator` (``ddp``: the
    same, wrapped for distributed training), its AdamW optimizer and its loss scaler."""

    def __init__(self, config: AdversarialConfig, device: torch.device, fp16: bool):
        self.config = config
        self.discriminator = MelDiscriminator(config.channels).to(device)
        self.ddp: nn.Module = self.discriminator
        self.optimizer = torch.optim.AdamW(self.discriminator.parameters(), config.lr, betas=(0.8, 0.99))
        self.scaler = torch.amp.GradScaler("cuda", enabled=fp16)

    def discriminator_loss(self, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
        """Least-squares loss on segments ``(B, 1, n_mels, S)``; ``fake`` is detached. Real and fake
        go through one forward pass (one reduction under DDP)."""
        logits, _ = self.ddp(torch.cat([real, fake.detach()]))
        real_logits, fake_logits = logits.split(real.shape[0])
        return discriminator_loss([(real_logits, None)], [(fake_logits, None)])

    def generator_terms(self, real: torch.Tensor, fake: torch.Tensor) -> dict[str, torch.Tensor]:
        """``adversarial`` and ``feature_matching`` for the model's segments ``fake``; gradients
        reach ``fake`` only, never the discriminator."""
        self.discriminator.requires_grad_(False)
        try:
            fake_output = self.discriminator(fake)
            with torch.no_grad():
                real_output = self.discriminator(real)
        finally:
            self.discriminator.requires_grad_(True)
        return {"adversarial": generator_adversarial_loss([fake_output]),
                "feature_matching": feature_matching_loss([real_output], [fake_output])}

    def state_dict(self) -> dict[str, dict]:
        return {"discriminator": self.discriminator.state_dict(), "optimizer_d": self.optimizer.state_dict(),
                "scaler_d": self.scaler.state_dict()}

    def load_state_dict(self, state: dict[str, dict]) -> None:
        self.discriminator.load_state_dict(state["discriminator"])
        self.optimizer.load_state_dict(state["optimizer_d"])
        self.scaler.load_state_dict(state["scaler_d"])
