"""Content-based attention: Bahdanau's additive score and Luong's dot / general / concat scores."""

from __future__ import annotations

import torch
from torch import nn

from tts.config.attention import AttentionConfig
from tts.models.attention.base import Attention, AttentionState, masked_softmax, register
from tts.models.layers import Gain


@register("content")
class ContentAttention(Attention):
    """Bahdanau et al. (2015): ``e_j = vᵀ tanh(W s + U h_j)``; ``U h`` is computed once."""

    def __init__(self, config: AttentionConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        self.query_layer = nn.Linear(query_dim, config.attention_dim, bias=False)
        self.memory_layer = nn.Linear(memory_dim, config.attention_dim, bias=False)
        self.v = nn.Linear(config.attention_dim, 1, bias=False)

    def xavier_roles(self) -> list[tuple[nn.Module | torch.Tensor, Gain]]:
        return [(self.query_layer, "tanh"), (self.memory_layer, "tanh"), (self.v, "linear")]

    def precompute(self, memory: torch.Tensor) -> torch.Tensor:
        return self.memory_layer(memory)

    def energies(self, query: torch.Tensor, state: AttentionState) -> torch.Tensor:
        """``(B, D_q) → (B, T_text)``."""
        return self.v(torch.tanh(self.query_layer(query).unsqueeze(1) + state.projected)).squeeze(-1)

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        return masked_softmax(self.energies(query, state), mask), state


@register("luong_concat")
class LuongConcatAttention(ContentAttention):
    """Luong et al. (2015) ``concat`` score ``vᵀ tanh(W [s; h_j])``. Splitting W into its query and
    memory halves gives exactly Bahdanau's additive form, so it shares that implementation."""


class _LuongMultiplicativeAttention(Attention):
    """Luong's multiplicative scores: ``e_j = sᵀ M h_j`` with ``M`` learned (general) or identity (dot)."""

    learned = False

    def __init__(self, config: AttentionConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        if self.learned or query_dim != memory_dim:
            # general: W_a; dot with unequal sizes: a projection of the memory into the query space
            self.memory_layer: nn.Module = nn.Linear(memory_dim, query_dim, bias=False)
        else:
            self.memory_layer = nn.Identity()
        self.scale = query_dim ** -0.5

    def precompute(self, memory: torch.Tensor) -> torch.Tensor:
        return self.memory_layer(memory)

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        energies = torch.bmm(state.projected, query.unsqueeze(-1)).squeeze(-1) * self.scale
        return masked_softmax(energies, mask), state


@register("luong_dot")
class LuongDotAttention(_LuongMultiplicativeAttention):
    """Luong ``dot``: ``e_j = sᵀ h_j / √D`` (scaled so the softmax starts soft)."""


@register("luong_general")
class LuongGeneralAttention(_LuongMultiplicativeAttention):
    """Luong ``general``: ``e_j = sᵀ W_a h_j / √D``; ``W_a h`` is computed once."""

    learned = True
