"""Attention that can only move forward: forward attention (with transition agent),
GMM attention, dynamic convolution attention and stepwise monotonic attention."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from tts.config.attention import (
    DynamicConvolutionConfig,
    ForwardAttentionConfig,
    GMMAttentionConfig,
    StepwiseMonotonicConfig,
)
from tts.models.attention.base import Attention, AttentionState, masked_softmax, register, renormalize, shift_right
from tts.models.attention.content import ContentAttention
from tts.models.attention.location import LocationAwareAttention
from tts.models.layers import sliding_windows


@dataclass
class ForwardAttentionState(AttentionState):
    """Forward attention's state: the probability ``u`` ``(B, 1)`` of moving forward at the next step."""

    transition: torch.Tensor


@dataclass
class GMMAttentionState(AttentionState):
    """GMM attention's state: the mixture means ``(B, K)`` (token positions)."""

    mu: torch.Tensor


@register("forward")
class ForwardAttention(LocationAwareAttention):
    """Forward attention (Zhang et al. 2018).

    ``α̂_t(j) = ((1 − u) α_{t−1}(j) + u α_{t−1}(j−1)) · y_t(j)``, normalized, where ``y_t`` is the
    softmax of the location-sensitive energies. Without the transition agent ``u = ½`` (the
    paper's plain recursion up to a constant); with it, ``u = σ(DNN([context, query]))`` from the
    previous step decides between staying and moving.
    """

    use_cumulative = False
    monotonic = True
    state_class = ForwardAttentionState

    def __init__(self, config: ForwardAttentionConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        self.transition_agent = (nn.Sequential(nn.Linear(query_dim + memory_dim, config.attention_dim), nn.Tanh(),
                                               nn.Linear(config.attention_dim, 1))
                                 if config.transition_agent else None)

    def own_state(self, memory: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"transition": torch.full((memory.shape[0], 1), 0.5, device=memory.device)}

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        y = masked_softmax(self.energies(query, state), mask)
        assert isinstance(state, ForwardAttentionState)
        u = state.transition
        previous = state.weights
        weights = renormalize(((1 - u) * previous + u * shift_right(previous)) * y, mask)
        if self.transition_agent is not None:
            context = torch.bmm(weights.unsqueeze(1), state.memory).squeeze(1)
            transition = torch.sigmoid(self.transition_agent(torch.cat([context, query], dim=-1)))
            state = dataclasses.replace(state, transition=transition)
        return weights, state


@register("gmm")
class GMMAttention(Attention):
    """GMM / Graves attention with monotonic means (Battenberg et al. 2019, "V2").

    An MLP of the query gives K mixture weights ``w = softmax(ŵ)``, step sizes ``Δ = softplus(Δ̂)``
    and scales ``σ = softplus(σ̂)``; ``μ_t = μ_{t−1} + Δ``. Token j gets the mass of the mixture
    between ``j − ½`` and ``j + ½`` (differences of logistic CDFs), renormalized over the mask.
    """

    monotonic = True

    def __init__(self, config: GMMAttentionConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        k = config.mixtures
        self.k = k
        output = nn.Linear(config.attention_dim, 3 * k)
        with torch.no_grad():  # start with small steps (Δ ≈ 0.3 tokens) and σ ≈ 1.5 tokens
            output.bias[k:2 * k].fill_(math.log(math.expm1(0.3)))
            output.bias[2 * k:].fill_(math.log(math.expm1(1.5)))
        self.mlp = nn.Sequential(nn.Linear(query_dim, config.attention_dim), nn.Tanh(), output)

    state_class = GMMAttentionState

    def own_state(self, memory: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"mu": torch.zeros(memory.shape[0], self.k, device=memory.device)}

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        w_hat, delta_hat, sigma_hat = self.mlp(query).chunk(3, dim=-1)
        mix = torch.softmax(w_hat, dim=-1).unsqueeze(-1)                       # (B, K, 1)
        assert isinstance(state, GMMAttentionState)
        mu = state.mu + F.softplus(delta_hat)                               # (B, K)
        sigma = (F.softplus(sigma_hat) + 1e-3).unsqueeze(-1)                   # (B, K, 1)
        positions = torch.arange(mask.shape[1], device=mu.device, dtype=mu.dtype)
        centred = positions.view(1, 1, -1) - mu.unsqueeze(-1)         # (B, K, T)
        mass = torch.sigmoid((centred + 0.5) / sigma) - torch.sigmoid((centred - 0.5) / sigma)
        weights = renormalize((mix * mass).sum(dim=1), mask)
        return weights, dataclasses.replace(state, mu=mu)


def beta_binomial_prior(length: int, alpha: float, beta: float) -> torch.Tensor:
    """Beta-binomial pmf over 0..length−1 (the prior filter of dynamic convolution attention)."""
    n = length - 1
    k = torch.arange(length, dtype=torch.float64)
    log_pmf = (torch.lgamma(torch.tensor(n + 1.0)) - torch.lgamma(k + 1) - torch.lgamma(n - k + 1)
               + torch.lgamma(k + alpha) + torch.lgamma(n - k + beta) - torch.lgamma(torch.tensor(n + alpha + beta))
               - (torch.lgamma(torch.tensor(alpha)) + torch.lgamma(torch.tensor(beta))
                  - torch.lgamma(torch.tensor(alpha + beta))))
    return log_pmf.exp().float()


@register("dynamic_convolution")
class DynamicConvolutionAttention(Attention):
    """Dynamic convolution attention (Battenberg et al. 2019).

    ``e_j = vᵀ tanh(W f_j + U g_j + b) + p_j`` with static filters ``f = F * α_{t−1}``, dynamic
    filters ``g = G(s) * α_{t−1}`` predicted from the query, and a causal beta-binomial prior
    ``p = log(P * α_{t−1})`` that pushes the alignment forward. Purely location-relative: the
    memory enters only through the context, so nothing needs precomputing.
    """

    prior_filter: torch.Tensor

    monotonic = True

    config: DynamicConvolutionConfig

    def __init__(self, config: DynamicConvolutionConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        c = config
        self.static_conv = nn.Conv1d(1, c.static_filters, c.static_kernel,
                                     padding=(c.static_kernel - 1) // 2, bias=False)
        self.static_dense = nn.Linear(c.static_filters, c.attention_dim, bias=False)
        self.dynamic_filters = nn.Sequential(
            nn.Linear(query_dim, c.filter_hidden), nn.Tanh(),
            nn.Linear(c.filter_hidden, c.dynamic_filters * c.dynamic_kernel, bias=False))
        self.dynamic_dense = nn.Linear(c.dynamic_filters, c.attention_dim, bias=True)
        self.v = nn.Linear(c.attention_dim, 1, bias=False)
        prior = beta_binomial_prior(c.prior_length, c.prior_alpha, c.prior_beta)
        self.register_buffer("prior_filter", prior.flip(0).view(1, 1, -1), persistent=False)

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        previous = state.weights.unsqueeze(1)                                    # (B, 1, T)
        batch = previous.shape[0]
        static = self.static_dense(self.static_conv(previous).transpose(1, 2))     # (B, T, A)
        kernel, half = self.config.dynamic_kernel, (self.config.dynamic_kernel - 1) // 2
        filters = self.dynamic_filters(query).view(batch, self.config.dynamic_filters, kernel)      # (B, F_dyn, K)
        # each item's own filters: a product with the item's sliding windows (not a convolution
        # grouped by item, whose group count is the batch size, fixed in an exported graph)
        windows = sliding_windows(F.pad(state.weights, (half, kernel - 1 - half)), kernel)      # (B, T, K)
        dynamic = self.dynamic_dense(windows @ filters.transpose(1, 2))                         # (B, T, A)
        prior = F.conv1d(F.pad(previous, (self.prior_filter.shape[-1] - 1, 0)), self.prior_filter).squeeze(1)
        energies = self.v(torch.tanh(static + dynamic)).squeeze(-1) + torch.log(prior.clamp(min=1e-6))
        return masked_softmax(energies, mask), state


@register("stepwise_monotonic")
class StepwiseMonotonicAttention(ContentAttention):
    """Stepwise monotonic attention (He et al. 2019).

    At each step the alignment either stays on token j (probability ``p_j = σ(e_j + r)``) or
    moves to j+1: ``α_t(j) = α_{t−1}(j) p_j + α_{t−1}(j−1)(1 − p_{j−1})``; the last real token
    keeps its mass. Training uses the soft expectation with Gaussian noise on the energies;
    evaluation takes the hard decision (``hard_inference``).
    """

    monotonic = True
    config: StepwiseMonotonicConfig

    def __init__(self, config: StepwiseMonotonicConfig, query_dim: int, memory_dim: int):
        super().__init__(config, query_dim, memory_dim)
        self.energy_bias = nn.Parameter(torch.tensor(float(config.energy_bias)))

    def align(self, query: torch.Tensor, state: AttentionState, mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        energies = self.energies(query, state) + self.energy_bias
        if self.training and self.config.sigmoid_noise > 0:
            energies = energies + self.config.sigmoid_noise * torch.randn_like(energies)
        stay = torch.sigmoid(energies)
        if not self.training and self.config.hard_inference:
            stay = (stay > 0.5).float()
        last = mask & ~F.pad(mask[:, 1:], (0, 1), value=False)  # last unmasked position of each row
        stay = torch.where(last | ~mask, torch.ones_like(stay), stay)
        previous = state.weights
        weights = (previous * stay + shift_right(previous * (1 - stay))) * mask
        total = weights.sum(dim=-1, keepdim=True)
        # a window that excludes all of the previous mass (never with a window around its peak) restarts uniform
        uniform = mask / mask.sum(dim=-1, keepdim=True)
        return torch.where(total > 0, weights / total.clamp(min=1e-30), uniform), state
