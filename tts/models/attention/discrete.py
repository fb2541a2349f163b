"""Attention that looks at a few tokens only: Luong's local attention (a window around a
predicted or the previous position) and hard attention (one token, straight-through Gumbel-softmax)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from tts.config.attention import HardAttentionConfig, LuongLocalConfig
from tts.models.attention.base import Attention, AttentionState, register, renormalize
from tts.models.attention.location import LocationAwareAttention


@dataclass
class LocalPState(AttentionState):
    """local-p's state: the window's predicted centre ``(B, 1)`` (a token position)."""

    centre: torch.Tensor


class _LuongLocalAttention(Attention):
    """Luong et al. (2015, §3.2): the ``general`` score ``e_j = sᵀ W_a h_j`` softmaxed over a window
    of half-width D around a centre p_t (for monotonic subclasses only its forward half, p_t … p_t + D);
    positions outside the window get nothing. Subclasses
    choose the centre. Weights are renormalized to sum to 1 (Luong leaves local-p's Gaussian-scaled
    weights unnormalized)."""

    gaussian = False

    config: LuongLocalConfig

    def __init__(self, config: LuongLocalConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        self.memory_layer = nn.Linear(memory_dim, query_dim, bias=False)
        self.scale = query_dim ** -0.5
        self.half_width = config.window

    def precompute(self, memory: torch.Tensor) -> torch.Tensor:
        return self.memory_layer(memory)

    def centre(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> torch.Tensor:
        """p_t ``(B, 1)``, a (fractional) token position."""
        raise NotImplementedError

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        return self.window_weights(query, state, mask, self.centre(query, state, mask)), state

    def window_weights(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor,
                       centre: torch.Tensor) -> torch.Tensor:
        """The weights ``(B, T_text)`` of the window around ``centre`` ``(B, 1)``."""
        energies = torch.bmm(state.projected, query.unsqueeze(-1)).squeeze(-1) * self.scale
        positions = torch.arange(mask.shape[1], device=mask.device, dtype=energies.dtype)[None]
        offset = positions - centre
        window = mask & (offset <= self.half_width) & (offset >= (0 if self.monotonic else -self.half_width))
        window = window | (mask & ~window.any(dim=1, keepdim=True))  # an empty window falls back to the mask
        weights = torch.softmax(energies.masked_fill(~window, float("-inf")), dim=-1)
        if self.gaussian:
            sigma = self.half_width / 2
            weights = renormalize(weights * torch.exp(-((positions - centre) ** 2) / (2 * sigma ** 2)), window, 1e-12)
        return weights


@register("luong_local_p")
class LuongLocalPAttention(_LuongLocalAttention):
    """local-p adapted to speech: the window's weights are scaled by a Gaussian
    ``exp(−(j − p_t)² / 2σ²)``, σ = D/2, around a predicted centre, and the centre is predicted as
    an advance over the previous one, ``p_t = min(p_{t−1} + D · σ(v_pᵀ tanh(W_p s_t) + b), S − 1)``
    from ``p_0 = 0``, with ``b`` set so that the first advances are :attr:`initial_advance` tokens a
    step. Luong's ``p_t = S · σ(v_pᵀ tanh(W_p s_t))`` asks the decoder state for an absolute
    position, which it does not know: on the toy benchmark that centre jumps between the middle
    and the ends of the text from step to step and the attention never aligns (diagonal 0.39 after
    400 updates), where the advancing centre aligns in 100 (docs/attention.md)."""

    gaussian = True
    #: tokens per decoder step before training: about speech's pace at r = 2 (12 phonemes a second,
    #: 43 steps a second) and slow enough that a centre does not reach the end before the speech does
    initial_advance = 0.5

    def __init__(self, config: LuongLocalConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        advance = nn.Linear(config.attention_dim, 1)
        nn.init.constant_(advance.bias, math.log(self.initial_advance / (config.window - self.initial_advance)))
        self.position = nn.Sequential(nn.Linear(query_dim, config.attention_dim), nn.Tanh(), advance)

    state_class = LocalPState

    def own_state(self, memory: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"centre": memory.new_zeros(memory.shape[0], 1)}

    def centre(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> torch.Tensor:
        assert isinstance(state, LocalPState)
        last = (state.mask.sum(dim=1, keepdim=True) - 1).to(query.dtype)
        advance = self.half_width * torch.sigmoid(self.position(query))
        return torch.minimum(state.centre.to(query.dtype) + advance, last)

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        assert isinstance(state, LocalPState)
        centre = self.centre(query, state, mask)
        return self.window_weights(query, state, mask, centre), dataclasses.replace(state, centre=centre)


@register("luong_local_m")
class LuongLocalMAttention(_LuongLocalAttention):
    """local-m adapted to speech: the window runs from the previous step's peak (the first token
    before the first step) to D tokens past it, so the alignment never moves back and moves by at
    most D tokens a step. (A window centred on the peak, D back and D ahead, gets stuck on one
    token on the toy benchmark: content energies alone carry no sense of progress.)"""

    monotonic = True

    def centre(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> torch.Tensor:
        return state.weights.argmax(dim=1, keepdim=True).to(query.dtype)


@register("hard")
class HardAttention(LocationAwareAttention):
    """Hard attention: one token per step. Location-sensitive energies are the logits; training
    samples a one-hot with straight-through Gumbel-softmax (the forward pass is the one-hot, the
    gradient that of the soft sample at temperature τ, annealed by :meth:`schedule`); inference
    takes the argmax."""

    config: HardAttentionConfig

    def __init__(self, config: HardAttentionConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        self.temperature = config.temperature[0]

    def schedule(self, step: int) -> None:
        """τ at a training step: exponential from the first to the second configured value."""
        start, end = self.config.temperature
        progress = min(step / self.config.anneal_steps, 1.0)
        self.temperature = start * math.exp(progress * math.log(end / start))

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        logits = self.energies(query, state).masked_fill(~mask, float("-inf"))
        if self.training:
            uniform = torch.rand_like(logits).clamp(1e-10, 1.0 - 1e-7)
            gumbel = -torch.log(-torch.log(uniform))
            soft = torch.softmax((logits + gumbel) / self.temperature, dim=-1)
            hard = F.one_hot(soft.argmax(dim=-1), logits.shape[1]).to(soft.dtype)
            return hard - soft.detach() + soft, state
        return F.one_hot(logits.argmax(dim=-1), logits.shape[1]).to(logits.dtype), state
