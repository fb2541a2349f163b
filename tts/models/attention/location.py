"""Location-aware attention: location-based, location-sensitive (Tacotron2) and hybrid.

All three score ``e_j = vᵀ tanh(W s [+ V h_j] + U f_j [+ b])`` where ``f = F * α`` is a
convolution of previous (and, for location-sensitive, cumulative) attention weights.
"""

from __future__ import annotations

import torch
from torch import nn

from tts.config.attention import LocationAttentionConfig
from tts.models.attention.base import Attention, AttentionState, masked_softmax, register
from tts.models.layers import Gain


class LocationLayer(nn.Module):
    """Convolution over attention weights: ``(B, C, T_text) → (B, T_text, attention_dim)``."""

    def __init__(self, in_channels: int, filters: int, kernel_size: int, attention_dim: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, filters, kernel_size, padding=(kernel_size - 1) // 2, bias=False)
        self.dense = nn.Linear(filters, attention_dim, bias=False)

    def forward(self, weights: torch.Tensor) -> torch.Tensor:
        return self.dense(self.conv(weights).transpose(1, 2))


class LocationAwareAttention(Attention):
    """Shared implementation; subclasses choose which terms enter the score."""

    use_content = True
    use_cumulative = True
    use_bias = False

    def __init__(self, config: LocationAttentionConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        dim = config.attention_dim
        self.query_layer = nn.Linear(query_dim, dim, bias=False)
        self.memory_layer = nn.Linear(memory_dim, dim, bias=False) if self.use_content else None
        self.location_layer = LocationLayer(2 if self.use_cumulative else 1, config.filters, config.kernel, dim)
        self.bias = nn.Parameter(torch.zeros(dim)) if self.use_bias else None
        self.v = nn.Linear(dim, 1, bias=False)

    def xavier_roles(self) -> list[tuple[nn.Module | torch.Tensor, Gain]]:
        roles: list[tuple[nn.Module | torch.Tensor, Gain]] = [(self.query_layer, "tanh"), (self.v, "linear"),
                                              (self.location_layer.conv, "linear"),
                                              (self.location_layer.dense, "tanh")]
        return roles + ([(self.memory_layer, "tanh")] if self.memory_layer is not None else [])

    def precompute(self, memory: torch.Tensor) -> torch.Tensor | None:
        return self.memory_layer(memory) if self.memory_layer is not None else None

    def energies(self, query: torch.Tensor, state: AttentionState) -> torch.Tensor:
        """``(B, D_q) → (B, T_text)``."""
        weights = state.weights.unsqueeze(1)
        if self.use_cumulative:
            weights = torch.cat([weights, state.cumulative.unsqueeze(1)], dim=1)
        hidden = self.query_layer(query).unsqueeze(1) + self.location_layer(weights)
        if self.memory_layer is not None:
            hidden = hidden + state.projected
        if self.bias is not None:
            hidden = hidden + self.bias
        return self.v(torch.tanh(hidden)).squeeze(-1)

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        return masked_softmax(self.energies(query, state), mask), state


@register("location")
class LocationAttention(LocationAwareAttention):
    """Location-based (Chorowski et al. 2015): the score sees the query and the previous
    weights only, ``e_j = vᵀ tanh(W s + U f_j)``; the memory enters only through the context."""

    use_content = False
    use_cumulative = False


@register("location_sensitive")
class LocationSensitiveAttention(LocationAwareAttention):
    """Tacotron2 (Shen et al. 2018): content plus a convolution of previous and cumulative weights."""


@register("hybrid")
class HybridAttention(LocationAwareAttention):
    """Hybrid (Chorowski et al. 2015): content plus location features of the previous weights,
    with a bias inside the non-linearity, ``e_j = wᵀ tanh(W s + V h_j + U f_j + b)``."""

    use_cumulative = False
    use_bias = True
