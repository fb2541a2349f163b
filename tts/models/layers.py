"""Layers shared by the acoustic models: masked conv blocks, prenet, postnet, zoneout LSTM cell."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def sequence_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """``(B,) → (B, T)`` bool, True on positions ``< length``."""
    max_len = int(lengths.max()) if max_len is None else max_len
    return torch.arange(max_len, device=lengths.device)[None] < lengths[:, None]


class ConvBlock(nn.Module):
    """Conv1d → BatchNorm → activation → dropout over ``(B, C, T)``; padded steps are zeroed
    after the block, so an item's output does not depend on how much padding follows it."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dropout: float,
                 activation: str = "relu"):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=(kernel_size - 1) // 2)
        self.norm = nn.BatchNorm1d(out_channels)
        self.activation = {"relu": nn.ReLU(), "tanh": nn.Tanh(), "none": nn.Identity()}[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x ``(B, C_in, T)``, mask ``(B, T)`` → ``(B, C_out, T)``."""
        return self.dropout(self.activation(self.norm(self.conv(x)))) * mask.unsqueeze(1)


class Prenet(nn.Module):
    """Fully connected ReLU layers with dropout that stays on in training and, when asked, at inference."""

    def __init__(self, in_dim: int, dims: list[int], dropout: float, dropout_at_inference: bool = False):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip([in_dim] + dims[:-1], dims))
        self.dropout = dropout
        self.dropout_at_inference = dropout_at_inference

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., in_dim) → (..., dims[-1])``."""
        active = self.training or self.dropout_at_inference
        for layer in self.layers:
            x = F.dropout(F.relu(layer(x)), p=self.dropout, training=active)
        return x


class Postnet(nn.Module):
    """N conv blocks (tanh except the last) predicting a residual for the mel: ``(B, n_mels, T)``."""

    def __init__(self, n_mels: int, channels: int, kernel_size: int, layers: int, dropout: float):
        super().__init__()
        dims = [n_mels] + [channels] * (layers - 1) + [n_mels]
        self.blocks = nn.ModuleList(
            ConvBlock(a, b, kernel_size, dropout, "tanh" if i < layers - 1 else "none")
            for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])))

    def forward(self, mel: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = mel * mask.unsqueeze(1)
        for block in self.blocks:
            x = block(x, mask)
        return x


class ZoneoutLSTMCell(nn.LSTMCell):
    """LSTM cell with zoneout (Krueger et al. 2017): each unit keeps its previous value with
    probability ``zoneout`` in training and by that expected fraction at inference."""

    def __init__(self, input_size: int, hidden_size: int, zoneout: float = 0.0):
        super().__init__(input_size, hidden_size)
        self.zoneout = zoneout

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        h, c = super().forward(x, state)
        if self.zoneout > 0:
            if self.training:
                keep_h = torch.rand_like(h) < self.zoneout
                keep_c = torch.rand_like(c) < self.zoneout
                h = torch.where(keep_h, state[0], h)
                c = torch.where(keep_c, state[1], c)
            else:
                h = self.zoneout * state[0] + (1 - self.zoneout) * h
                c = self.zoneout * state[1] + (1 - self.zoneout) * c
        return h, c
