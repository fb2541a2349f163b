"""Typed experiment configuration, loaded strictly from YAML.

Every option has a default. Unknown keys, wrong types and malformed overrides raise
:class:`~tts.errors.ConfigError` naming the offending key, before any work starts.
A run writes the exact config it used (``config.yaml``) next to its checkpoints.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TypeVar

import yaml

from tts.errors import ConfigError

T = TypeVar("T")


@dataclass
class AudioConfig:
    """Waveform and mel settings; the single source for :class:`tts.audio.MelSpectrogram`."""

    sample_rate: int = 22050
    n_fft: int = 1024
    hop_length: int = 256
    win_length: int = 1024
    n_mels: int = 80
    fmin: float = 0.0
    fmax: Optional[float] = 8000.0
    log_floor: float = 1e-5
    trim_silence: bool = True
    trim_top_db: float = 40.0
    griffin_lim_iters: int = 64
    griffin_lim_momentum: float = 0.99
    griffin_lim_power: float = 1.2


@dataclass
class TextConfig:
    """Frontend settings: ``mode`` is ``phoneme`` (G2P), ``char`` or ``mixed``."""

    mode: str = "phoneme"
    add_eos: bool = True


@dataclass
class DataConfig:
    """Batching and filtering of cached features."""

    max_frames_per_batch: int = 8000
    max_batch_size: int = 64
    max_mel_frames: int = 1000
    max_text_tokens: int = 250
    num_workers: int = 1
    bucket_size_multiplier: int = 8


@dataclass
class AttentionConfig:
    """Attention mechanism (``kind`` picks one from the registry) and its hyper-parameters."""

    kind: str = "location_sensitive"
    attention_dim: int = 128
    location_filters: int = 32
    location_kernel: int = 31
    # forward attention
    transition_agent: bool = False
    # GMM attention
    gmm_mixtures: int = 5
    # dynamic convolution attention
    dca_static_filters: int = 8
    dca_static_kernel: int = 21
    dca_dynamic_filters: int = 8
    dca_dynamic_kernel: int = 21
    dca_prior_length: int = 11
    dca_prior_alpha: float = 0.1
    dca_prior_beta: float = 0.9
    # stepwise monotonic attention
    sigmoid_noise: float = 2.0
    hard_inference: bool = True


@dataclass
class Tacotron2Config:
    """Sizes of every Tacotron2 block (defaults: NVIDIA/tacotron2, 28M parameters).

    ``max_reduction_factor`` (0 = ``reduction_factor``) sizes the frame projection so gradual
    training can switch r up to that value without changing any parameter shape.
    """

    embedding_dim: int = 512
    encoder_conv_layers: int = 3
    encoder_conv_channels: int = 512
    encoder_kernel_size: int = 5
    encoder_dropout: float = 0.5
    encoder_lstm_dim: int = 512
    prenet_dims: list[int] = field(default_factory=lambda: [256, 256])
    prenet_dropout: float = 0.5
    prenet_dropout_at_inference: bool = False
    attention_rnn_dim: int = 1024
    decoder_rnn_dim: int = 1024
    rnn_dropout: float = 0.1
    zoneout: float = 0.0
    reduction_factor: int = 1
    max_reduction_factor: int = 0
    postnet_layers: int = 5
    postnet_channels: int = 512
    postnet_kernel_size: int = 5
    postnet_dropout: float = 0.5
    attention: AttentionConfig = field(default_factory=AttentionConfig)


@dataclass
class TransformerTTSConfig:
    """Transformer-TTS (Li et al. 2019); defaults are the paper's sizes (6+6 layers, 8 heads, d 512).

    ``guided_heads`` lists ``[layer, head]`` pairs of encoder-decoder attention (negative layers
    count from the end) that the guided attention loss is applied to.
    """

    embedding_dim: int = 512
    encoder_prenet_layers: int = 3
    encoder_prenet_kernel_size: int = 5
    encoder_prenet_dropout: float = 0.1
    d_model: int = 512
    heads: int = 8
    encoder_layers: int = 6
    decoder_layers: int = 6
    ffn_dim: int = 2048
    dropout: float = 0.1
    norm_first: bool = True
    decoder_prenet_dims: list[int] = field(default_factory=lambda: [256, 256])
    decoder_prenet_dropout: float = 0.5
    reduction_factor: int = 1
    max_reduction_factor: int = 0
    postnet_layers: int = 5
    postnet_channels: int = 256
    postnet_kernel_size: int = 5
    postnet_dropout: float = 0.5
    positional_alpha: float = 1.0
    guided_heads: list[list[int]] = field(default_factory=lambda: [[-1, 0], [-1, 1], [-2, 0], [-2, 1]])


@dataclass
class ModelConfig:
    """Which acoustic model to build (``tacotron2`` or ``transformer_tts``) and its sizes."""

    name: str = "tacotron2"
    tacotron2: Tacotron2Config = field(default_factory=Tacotron2Config)
    transformer_tts: TransformerTTSConfig = field(default_factory=TransformerTTSConfig)

    @property
    def active(self) -> Tacotron2Config | TransformerTTSConfig:
        """The section of the model named by ``name``."""
        if self.name not in ("tacotron2", "transformer_tts"):
            raise ConfigError(f"model.name must be tacotron2 or transformer_tts, got '{self.name}'")
        return getattr(self, self.name)


@dataclass
class GuidedAttentionConfig:
    """Guided attention loss (Tachibana et al. 2017): weight * decay**step until ``until_step``."""

    enabled: bool = True
    sigma: float = 0.4
    weight: float = 1.0
    decay: float = 1.0
    until_step: int = 0


@dataclass
class LossConfig:
    """Mel reconstruction, stop token and guided attention terms."""

    mel_loss: str = "mse"
    stop_pos_weight: float = 5.0
    stop_weight: float = 1.0
    guided_attention: GuidedAttentionConfig = field(default_factory=GuidedAttentionConfig)


@dataclass
class ScheduleConfig:
    """Learning-rate schedule: ``constant``, ``exponential``, ``step`` or ``noam``."""

    kind: str = "constant"
    warmup_steps: int = 0
    decay_rate: float = 0.5
    decay_steps: int = 50000
    step_size: int = 50000
    gamma: float = 0.5
    min_lr: float = 1e-5


@dataclass
class OptimConfig:
    """Optimizer (``adam`` or ``adamw``) and its schedule."""

    optimizer: str = "adam"
    lr: float = 1e-3
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])
    eps: float = 1e-6
    weight_decay: float = 1e-6
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)


@dataclass
class ReductionStage:
    """Gradual training: from ``step`` on, use reduction factor ``r`` and this frame budget."""

    step: int = 0
    r: int = 1
    max_frames_per_batch: int = 8000


@dataclass
class ScheduledSamplingConfig:
    """Parallel scheduled sampling: feed the decoder its own teacher-forced predictions instead of
    the ground-truth previous frame with ``probability``, ramped linearly from 0 at ``start_step``
    over ``ramp_steps`` (0: at once). 0 disables it (plain teacher forcing)."""

    probability: float = 0.0
    start_step: int = 0
    ramp_steps: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.probability <= 1.0:
            raise ConfigError(f"train.scheduled_sampling.probability must lie in [0, 1], got {self.probability}")
        if self.start_step < 0 or self.ramp_steps < 0:
            raise ConfigError("train.scheduled_sampling.start_step and ramp_steps must not be negative")


@dataclass
class TrainConfig:
    """Trainer settings."""

    max_steps: int = 100000
    seed: int = 1234
    grad_clip: float = 1.0
    grad_accum: int = 1
    amp: str = "auto"
    log_every: int = 50
    validate_every: int = 1000
    checkpoint_every: int = 1000
    keep_last: int = 3
    n_val_audio: int = 2
    max_nan_steps: int = 10
    r_schedule: list[ReductionStage] = field(default_factory=list)
    scheduled_sampling: ScheduledSamplingConfig = field(default_factory=ScheduledSamplingConfig)
    warm_start: str = ""
    ignore_layers: list[str] = field(default_factory=list)


@dataclass
class ExperimentConfig:
    """Everything a run needs; saved verbatim next to its checkpoints."""

    audio: AudioConfig = field(default_factory=AudioConfig)
    text: TextConfig = field(default_factory=TextConfig)
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)


def _convert(value: Any, annotation: Any, key: str) -> Any:
    """Check ``value`` against a type annotation, converting where lossless (int → float)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _convert(value, inner, key)
    if dataclasses.is_dataclass(annotation):
        if not isinstance(value, dict):
            raise ConfigError(f"config key '{key}' must be a mapping, got {type(value).__name__}")
        return _build(annotation, value, key)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"config key '{key}' must be a list, got {type(value).__name__}")
        (inner,) = typing.get_args(annotation)
        return [_convert(v, inner, f"{key}[{i}]") for i, v in enumerate(value)]
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation in (int, float, str, bool) and type(value) is not annotation:
        raise ConfigError(
            f"config key '{key}' must be {annotation.__name__}, got {value!r} ({type(value).__name__})"
        )
    return value


def _build(cls: type[T], data: dict[str, Any], prefix: str = "") -> T:
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs = {}
    for key, value in data.items():
        full = f"{prefix}.{key}" if prefix else str(key)
        if key not in names:
            raise ConfigError(
                f"unknown config key '{full}' (valid keys here: {', '.join(sorted(names))})"
            )
        kwargs[key] = _convert(value, hints[key], full)
    return cls(**kwargs)


def config_from_dict(data: dict[str, Any]) -> ExperimentConfig:
    """Build an :class:`ExperimentConfig` from nested dicts; unknown keys are errors."""
    return _build(ExperimentConfig, data or {})


def config_to_dict(config: Any) -> dict[str, Any]:
    """Plain nested dicts (YAML/JSON/checkpoint friendly)."""
    return dataclasses.asdict(config)


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``a.b.c=value`` overrides (value parsed as YAML) to nested dicts in place."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override '{item}' must look like key.path=value")
        path, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ConfigError(f"override '{item}': value is not valid YAML ({exc})") from None
        node = data
        parts = path.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override '{item}': '{part}' is not a section")
        node[parts[-1]] = value
    return data


def load_config(path: Optional[str | Path] = None, overrides: Optional[list[str]] = None) -> ExperimentConfig:
    """Read a YAML config (or the defaults when ``path`` is None) and apply overrides."""
    data: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist (see configs/ for examples)")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            first = str(exc).splitlines()[0]
            raise ConfigError(f"config file {path} is not valid YAML: {first}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path} must hold a mapping at the top level")
    apply_overrides(data, overrides or [])
    return config_from_dict(data)


def save_config(config: ExperimentConfig, path: str | Path) -> None:
    """Write the config as YAML (loadable by :func:`load_config`)."""
    Path(path).write_text(yaml.safe_dump(config_to_dict(config), sort_keys=False))
