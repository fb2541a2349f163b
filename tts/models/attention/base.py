"""The one attention interface, shared helpers and the registry.

Every mechanism is an ``nn.Module`` with

* ``init_state(memory (B, T_text, D_m), memory_mask (B, T_text) bool) -> state`` — computes
  everything that depends only on the memory (its projections) once per utterance, and
  the initial alignment;
* ``forward(query (B, D_q), state, window=None) -> (context (B, D_m), weights (B, T_text), state)``
  — one decoder step. ``weights`` sum to 1 over the positions it may attend and are 0 elsewhere:
  the memory mask, narrowed by ``window`` ``(B, T_text)`` bool when the decoding driver
  constrains attention (windowed inference works the same way for every mechanism).

``state`` is a ``dict[str, Tensor]``; the keys every mechanism keeps are ``memory``, ``mask``
(the memory mask), ``weights`` (previous step) and ``cumulative`` (sum of all previous weights).
A registry maps the config's names (:data:`tts.config.AttentionKind`) to classes.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from tts.config import AttentionConfig, AttentionKind, choices
from tts.errors import TTSError

State = dict[str, torch.Tensor]
_REGISTRY: dict[str, type["Attention"]] = {}


def register(name: str) -> Callable[[type["Attention"]], type["Attention"]]:
    """Class decorator: the mechanism the config calls ``name`` (one of :data:`AttentionKind`)."""
    if name not in choices(AttentionKind):
        raise ValueError(f"attention '{name}' is not one of the config's AttentionKind names")

    def wrap(cls: type["Attention"]) -> type["Attention"]:
        _REGISTRY[name] = cls
        return cls

    return wrap


def available() -> list[str]:
    return sorted(_REGISTRY)


def build_attention(config: AttentionConfig, query_dim: int, memory_dim: int) -> "Attention":
    """Instantiate the mechanism named ``config.kind``."""
    if config.kind not in _REGISTRY:
        raise TTSError(f"unknown attention '{config.kind}' (choose one of {', '.join(available())})")
    return _REGISTRY[config.kind](config, query_dim, memory_dim)


def masked_softmax(energies: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over T_text with masked positions at exactly zero. ``(B, T) → (B, T)``."""
    return torch.softmax(energies.masked_fill(~mask, float("-inf")), dim=-1)


def renormalize(weights: torch.Tensor, mask: torch.Tensor, floor: float = 1e-8) -> torch.Tensor:
    """Zero the masked positions and rescale to sum 1 (a tiny floor keeps a lost alignment recoverable)."""
    weights = (weights + floor) * mask
    return weights / weights.sum(dim=-1, keepdim=True)


def first_position(mask: torch.Tensor) -> torch.Tensor:
    """One-hot alignment on the first encoder step, ``(B, T)``."""
    weights = torch.zeros(mask.shape, device=mask.device)
    weights[:, 0] = 1.0
    return weights


def shift_right(weights: torch.Tensor) -> torch.Tensor:
    """``out[:, j] = weights[:, j - 1]``, ``out[:, 0] = 0``."""
    return nn.functional.pad(weights[:, :-1], (1, 0))


class Attention(nn.Module):
    """Base class: subclasses implement :meth:`init_state` extras and :meth:`align`."""

    #: True for mechanisms that can only move forward (their initial alignment is the first token)
    monotonic = False

    def __init__(self, config: AttentionConfig, query_dim: int, memory_dim: int):
        super().__init__()
        self.config = config
        self.query_dim, self.memory_dim = query_dim, memory_dim

    def init_state(self, memory: torch.Tensor, memory_mask: torch.Tensor) -> State:
        if not bool(memory_mask.any(dim=1).all()):
            raise TTSError("attention mask hides every encoder step of some item (empty input?)")
        if self.monotonic or self.config.start_on_first_token:
            start = first_position(memory_mask)
        else:
            start = torch.zeros(memory_mask.shape, device=memory.device)
        state = {"memory": memory, "mask": memory_mask, "weights": start, "cumulative": start.clone()}
        state.update(self.precompute(memory))
        return state

    def precompute(self, memory: torch.Tensor) -> State:
        """Memory-only work done once per utterance (e.g. ``{"processed_memory": U·h}``)."""
        return {}

    def align(self, query: torch.Tensor, state: State, mask: torch.Tensor) -> tuple[torch.Tensor, State]:
        """Weights ``(B, T_text)`` for this step, zero outside ``mask`` ``(B, T_text)``, and any
        mechanism-specific state updates."""
        raise NotImplementedError

    def forward(self, query: torch.Tensor, state: State,
                window: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, State]:
        mask = state["mask"] if window is None else state["mask"] & window
        weights, extra = self.align(query, state, mask)
        context = torch.bmm(weights.unsqueeze(1), state["memory"]).squeeze(1)
        new_state = dict(state)
        new_state.update(extra)
        new_state["weights"] = weights
        new_state["cumulative"] = state["cumulative"] + weights
        return context, weights, new_state
