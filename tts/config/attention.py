"""Attention settings: what every mechanism shares, and each mechanism's own.

``kind`` names the mechanism; :data:`ATTENTION_KINDS` (the one list of names) maps each name to the
dataclass of its settings, so a config can only set what its mechanism reads. The modules that
implement the mechanisms register under these names (:mod:`tts.models.attention`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tts.config.schema import Variant, bounded, bounded_list, build


@dataclass
class AttentionConfig(Variant):
    """Every mechanism: ``attention_dim`` (its hidden size) and ``start_on_first_token``: the
    alignment before the first step (mechanisms that only move forward always start on the first
    token; for the others it is all zeros unless this is set). Content-based (Bahdanau) and Luong's
    dot / general / concat need nothing else."""

    kind: str = "location_sensitive"
    attention_dim: int = bounded(128, 1)
    start_on_first_token: bool = False
    variants: ClassVar[dict[str, type]] = {}


@dataclass
class LocationAttentionConfig(AttentionConfig):
    """Location-aware scores (location, location-sensitive, hybrid): ``filters`` convolution
    channels of width ``kernel`` over the previous (and cumulative) weights."""

    filters: int = bounded(32, 1)
    kernel: int = bounded(31, 1)


@dataclass
class ForwardAttentionConfig(LocationAttentionConfig):
    """Forward attention (Zhang et al. 2018) over location-sensitive scores; ``transition_agent``
    adds the learned move-forward probability."""

    transition_agent: bool = False


@dataclass
class HardAttentionConfig(LocationAttentionConfig):
    """Gumbel-softmax hard attention: the temperature is annealed exponentially from
    ``temperature[0]`` to ``temperature[1]`` (both above 0, from high to low) over ``anneal_steps``
    training steps."""

    temperature: list[float] = bounded_list([1.0, 0.3], 0.0, low_open=True, length=2, order="non-increasing")
    anneal_steps: int = bounded(10000, 1)


@dataclass
class GMMAttentionConfig(AttentionConfig):
    """GMM attention (Graves 2013): ``mixtures`` Gaussian components."""

    mixtures: int = bounded(5, 1)


@dataclass
class DynamicConvolutionConfig(AttentionConfig):
    """Dynamic convolution attention (Battenberg et al. 2020): static and query-dependent filters
    over the previous weights, and a beta-binomial prior of ``prior_length`` taps."""

    static_filters: int = bounded(8, 1)
    static_kernel: int = bounded(21, 1)
    dynamic_filters: int = bounded(8, 1)
    dynamic_kernel: int = bounded(21, 1)
    filter_hidden: int = bounded(128, 1)
    prior_alpha: float = bounded(0.1, 0.0, low_open=True)
    prior_beta: float = bounded(0.9, 0.0, low_open=True)
    prior_length: int = bounded(11, 2)


@dataclass
class StepwiseMonotonicConfig(AttentionConfig):
    """Stepwise monotonic attention (He et al. 2019): ``sigmoid_noise`` added to the energies in
    training; ``hard_inference`` takes the hard decision at evaluation; ``energy_bias`` the
    learned bias r's initial value (He et al.'s reference code starts at 3.5: staying likely)."""

    sigmoid_noise: float = bounded(2.0, 0.0)
    energy_bias: float = 1.0
    hard_inference: bool = True


@dataclass
class LuongLocalConfig(AttentionConfig):
    """Luong's local attention (monotonic -m, predictive -p): half-width ``window`` of the window
    (the Gaussian of local-p has σ = window / 2)."""

    window: int = bounded(4, 1)


#: every attention mechanism by its config name, with the dataclass of its settings
ATTENTION_KINDS: dict[str, type[AttentionConfig]] = {
    "content": AttentionConfig,
    "luong_dot": AttentionConfig,
    "luong_general": AttentionConfig,
    "luong_concat": AttentionConfig,
    "luong_local_m": LuongLocalConfig,
    "luong_local_p": LuongLocalConfig,
    "location": LocationAttentionConfig,
    "location_sensitive": LocationAttentionConfig,
    "hybrid": LocationAttentionConfig,
    "forward": ForwardAttentionConfig,
    "hard": HardAttentionConfig,
    "gmm": GMMAttentionConfig,
    "dynamic_convolution": DynamicConvolutionConfig,
    "stepwise_monotonic": StepwiseMonotonicConfig,
}
AttentionConfig.variants = ATTENTION_KINDS


def attention_config(kind: str, **settings: object) -> AttentionConfig:
    """The settings of mechanism ``kind``, checked like a config file (e.g. ``attention_config("gmm", mixtures=3)``)."""
    return build(AttentionConfig, {"kind": kind, **settings}, "attention")
