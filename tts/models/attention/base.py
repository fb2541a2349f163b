"""The one attention interface, shared helpers and the registry.

Every mechanism is an ``nn.Module`` with

* ``init_state(memory (B, T_text, D_m), memory_mask (B, T_text) bool) -> state`` — computes
  everything that depends only on the memory (its projections) once per utterance, and
  the initial alignment;
* ``forward(query (B, D_q), state, window=None) -> (context (B, D_m), weights (B, T_text), state)``
  — one decoder step. ``weights`` sum to 1 over the positions it may attend and are 0 elsewhere:
  the memory mask, narrowed by ``window`` ``(B, T_text)`` bool when the decoding driver
  constrains attention (windowed inference works the same way for every mechanism).

``state`` is an :class:`AttentionState`: the memory and its mask, the previous step's weights,
their running sum and the memory's projection (computed once); a mechanism that carries more
declares a subclass with those tensors as fields (:attr:`Attention.state_class`).
A registry maps the config's names (:data:`tts.config.ATTENTION_KINDS`, the one list of names) to classes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn

from tts.config.attention import ATTENTION_KINDS, AttentionConfig
from tts.errors import TTSError
from tts.models.layers import Gain, xavier_uniform


@dataclass
class AttentionState:
    """What one utterance's attention carries from step to step.

    memory ``(B, T_text, D_m)`` and mask ``(B, T_text)`` bool; weights ``(B, T_text)`` of the
    previous step and cumulative ``(B, T_text)``, their sum over all previous steps;
    processed_memory ``(B, T_text, A)``, the memory's projection where the mechanism has one.
    Mechanisms that carry more subclass it (:class:`ForwardAttentionState`, ...)."""

    memory: torch.Tensor
    mask: torch.Tensor
    weights: torch.Tensor
    cumulative: torch.Tensor
    processed_memory: torch.Tensor | None

    def tensors(self) -> dict[str, torch.Tensor]:
        """The state as named tensors (:class:`tts.models.decoding.TensorState`), field by field."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_tensors(cls, tensors: dict[str, torch.Tensor]) -> "AttentionState":
        """The state whose :meth:`tensors` are ``tensors``."""
        fields: dict[str, Any] = {f.name: tensors.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**fields)

    @property
    def projected(self) -> torch.Tensor:
        """The memory's projection ``(B, T_text, A)`` (for mechanisms that compute one in ``precompute``)."""
        if self.processed_memory is None:
            raise RuntimeError("this attention mechanism computes no memory projection")
        return self.processed_memory


_REGISTRY: dict[str, type["Attention"]] = {}


def register(name: str) -> Callable[[type["Attention"]], type["Attention"]]:
    """Class decorator: the mechanism the config calls ``name`` (a key of :data:`ATTENTION_KINDS`)."""
    if name not in ATTENTION_KINDS:
        raise ValueError(f"attention '{name}' has no settings in tts.config.attention.ATTENTION_KINDS")

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
    if not isinstance(config, ATTENTION_KINDS[config.kind]):
        raise TTSError(f"attention '{config.kind}' takes {ATTENTION_KINDS[config.kind].__name__}, got "
                       f"{type(config).__name__} (build it with tts.config.attention_config)")
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
    """Base class: subclasses implement :meth:`align` (and, when their state has fields of its
    own, :attr:`state_class` and :meth:`own_state`)."""

    #: True for mechanisms that can only move forward (their initial alignment is the first token)
    monotonic = False
    #: the dataclass of this mechanism's state
    state_class: type[AttentionState] = AttentionState

    def __init__(self, config: AttentionConfig, query_dim: int, memory_dim: int):
        super().__init__()
        self.config = config
        self.query_dim, self.memory_dim = query_dim, memory_dim

    def init_state(self, memory: torch.Tensor, memory_mask: torch.Tensor) -> AttentionState:
        """The state before the first decoder step, for the encoder's output ``(B, T_text, memory_dim)``
        and its padding mask ``(B, T_text)``: monotonic mechanisms (and any with ``start_on_first_token``)
        start on the first token, the others with no weight anywhere; an item whose mask hides every
        step is refused."""
        if not bool(memory_mask.any(dim=1).all()):
            raise TTSError("attention mask hides every encoder step of some item (empty input?)")
        if self.monotonic or self.config.start_on_first_token:
            start = first_position(memory_mask)
        else:
            start = torch.zeros(memory_mask.shape, device=memory.device)
        return self.state_class(memory, memory_mask, start, start.clone(), self.precompute(memory),
                                **self.own_state(memory))

    def xavier_initialization(self) -> None:
        """NVIDIA/tacotron2's initialization of this mechanism's layers (:meth:`xavier_roles`)."""
        xavier_uniform(self.xavier_roles())

    def xavier_roles(self) -> list[tuple[nn.Module | torch.Tensor, Gain]]:
        """The layers NVIDIA's Xavier initialization covers, each with the gain of the non-linearity
        it feeds; none by default."""
        return []

    def precompute(self, memory: torch.Tensor) -> torch.Tensor | None:
        """Memory-only work done once per utterance: the memory's projection ``U·h`` ``(B, T_text, A)``, if any."""
        return None

    def own_state(self, memory: torch.Tensor) -> dict[str, torch.Tensor]:
        """The initial values of the fields :attr:`state_class` adds (none by default)."""
        return {}

    def align(self, query: torch.Tensor, state: AttentionState,
              mask: torch.Tensor) -> tuple[torch.Tensor, AttentionState]:
        """Weights ``(B, T_text)`` for this step, zero outside ``mask`` ``(B, T_text)``, and the
        state with the mechanism's own fields moved on (``state`` itself when it has none)."""
        raise NotImplementedError

    def forward(self, query: torch.Tensor, state: AttentionState,
                window: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, AttentionState]:
        """One decoder step: the query ``(B, query_dim)`` → the context ``(B, memory_dim)``, the weights
        ``(B, T_text)`` and the next state (weights and their running sum recorded); ``window``
        ``(B, T_text)``, when given, confines the weights further than the padding mask."""
        mask = state.mask if window is None else state.mask & window
        weights, state = self.align(query, state, mask)
        context = torch.bmm(weights.unsqueeze(1), state.memory).squeeze(1)
        new_state = dataclasses.replace(state, weights=weights, cumulative=state.cumulative + weights)
        return context, weights, new_state

