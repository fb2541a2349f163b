"""Typed experiment configuration, loaded strictly from YAML.

Every option has a default. Unknown keys, wrong types, values outside a field's documented range
and names outside an enumerated choice raise :class:`~tts.errors.ConfigError` naming the
offending key, before any work starts. A run writes the exact config it used (``config.yaml``)
next to its checkpoints, and every checkpoint carries it.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional, TypeVar

import yaml

from tts.errors import ConfigError

T = TypeVar("T")


def bounded(default: Any, low: float | None = None, high: float | None = None, *, low_open: bool = False,
            high_open: bool = False) -> Any:
    """A dataclass field whose value must lie in ``[low, high]`` (``(`` / ``)`` where open); checked at load."""
    return field(default=default, metadata={"range": (low, high, low_open, high_open)})


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts)


def _in_range(value: Any, low: float | None, high: float | None, low_open: bool, high_open: bool) -> bool:
    if value is None:
        return True
    values = value if isinstance(value, list) else [value]
    for v in values:
        if isinstance(v, float) and not math.isfinite(v):
            return False
        if low is not None and (v < low or (low_open and v == low)):
            return False
        if high is not None and (v > high or (high_open and v == high)):
            return False
    return True


@dataclass
class AudioConfig:
    """Waveform and mel settings; the single source for :class:`tts.audio.MelSpectrogram`.

    Features trim leading and trailing audio quieter than ``trim_top_db`` below the peak (when
    ``trim_silence``), then put ``leading_silence`` seconds of silence before the speech.
    """

    sample_rate: int = bounded(22050, 1000)
    n_fft: int = bounded(1024, 16)
    hop_length: int = bounded(256, 1)
    win_length: int = bounded(1024, 16)
    n_mels: int = bounded(80, 1)
    fmin: float = bounded(0.0, 0.0)
    fmax: Optional[float] = bounded(8000.0, 0.0, low_open=True)
    log_floor: float = bounded(1e-5, 0.0, 1.0, low_open=True, high_open=True)
    trim_silence: bool = True
    trim_top_db: float = bounded(40.0, 0.0, low_open=True)
    leading_silence: float = bounded(0.0, 0.0, 2.0)
    griffin_lim_momentum: float = bounded(0.99, 0.0, 1.0, high_open=True)
    griffin_lim_lookahead: float = bounded(1.1, 0.0, 2.0, high_open=True)
    griffin_lim_relaxation: float = bounded(1.25, 0.0, 1.5, low_open=True, high_open=True)
    griffin_lim_power: float = bounded(1.2, 0.0, low_open=True)

    def __post_init__(self) -> None:
        if self.win_length > self.n_fft:
            raise ConfigError(f"config key 'audio.win_length' ({self.win_length}) must not exceed "
                              f"audio.n_fft ({self.n_fft})")
        if self.fmax is not None and not self.fmin < self.fmax <= self.sample_rate / 2:
            raise ConfigError(f"config key 'audio.fmax' ({self.fmax:g}) must lie above audio.fmin ({self.fmin:g}) "
                              f"and at most at the Nyquist frequency ({self.sample_rate / 2:g} Hz)")

    @property
    def silence(self) -> float:
        """The log-mel value of silence (``log(log_floor)``): padding frames and pauses hold it."""
        return math.log(self.log_floor)

    def mel_differences(self, other: "AudioConfig") -> list[str]:
        """``"field mine vs theirs"`` for each of :data:`MEL_FIELDS` where ``other`` differs."""
        return [f"{k} {getattr(self, k)} vs {getattr(other, k)}" for k in MEL_FIELDS
                if getattr(self, k) != getattr(other, k)]


#: the audio settings that change what a log-mel frame means: a vocoder only fits mels made with the same
MEL_FIELDS = ("sample_rate", "n_fft", "hop_length", "win_length", "n_mels", "fmin", "fmax", "log_floor")


TextMode = Literal["phoneme", "char", "mixed"]


@dataclass
class TextConfig:
    """Frontend settings: ``mode`` is ``phoneme`` (G2P), ``char`` or ``mixed``; ``add_bos`` /
    ``add_eos`` put a start / end symbol around every utterance's ids; ``lexicon`` names a file of
    pronunciations (``WORD AH0 B AW1 T`` per line) that take precedence over the dictionary."""

    mode: TextMode = "phoneme"
    add_eos: bool = True
    add_bos: bool = False
    lexicon: str = ""


@dataclass
class DataConfig:
    """Batching and filtering of cached features.

    ``sampler``: ``length_buckets`` makes batches of similar length within ``max_frames_per_batch``
    (at most ``max_batch_size`` items); ``random`` draws ``batch_size`` utterances at random and
    drops the last incomplete batch (NVIDIA/tacotron2's). Padded mel frames hold silence
    (``audio.silence``) or, with ``pad_mels_with: zeros``, zeros.
    """

    sampler: Literal["length_buckets", "random"] = "length_buckets"
    batch_size: int = bounded(64, 1)
    pad_mels_with: Literal["silence", "zeros"] = "silence"
    max_frames_per_batch: int = bounded(8000, 1)
    max_batch_size: int = bounded(64, 1)
    max_mel_frames: int = bounded(1000, 1)
    max_text_tokens: int = bounded(250, 1)
    num_workers: int = bounded(1, 0)
    bucket_size_multiplier: int = bounded(8, 1)


AttentionKind = Literal["content", "dynamic_convolution", "forward", "gmm", "hard", "hybrid", "location",
                        "location_sensitive", "luong_concat", "luong_dot", "luong_general", "luong_local_m",
                        "luong_local_p", "stepwise_monotonic"]


@dataclass
class AttentionConfig:
    """Attention mechanism (``kind`` picks one from the registry) and its hyper-parameters."""

    kind: AttentionKind = "location_sensitive"
    attention_dim: int = bounded(128, 1)
    location_filters: int = bounded(32, 1)
    location_kernel: int = bounded(31, 1)
    # forward attention
    transition_agent: bool = False
    # GMM attention
    gmm_mixtures: int = bounded(5, 1)
    # dynamic convolution attention
    dca_static_filters: int = bounded(8, 1)
    dca_static_kernel: int = bounded(21, 1)
    dca_dynamic_filters: int = bounded(8, 1)
    dca_dynamic_kernel: int = bounded(21, 1)
    dca_filter_hidden: int = bounded(128, 1)
    dca_prior_length: int = bounded(11, 2)
    dca_prior_alpha: float = bounded(0.1, 0.0, low_open=True)
    dca_prior_beta: float = bounded(0.9, 0.0, low_open=True)
    # stepwise monotonic attention
    sigmoid_noise: float = bounded(2.0, 0.0)
    hard_inference: bool = True
    # Luong local attention: half-width D of the window (the Gaussian of local-p has σ = D / 2)
    local_window: int = bounded(4, 1)
    # hard attention: Gumbel-softmax temperature, annealed exponentially from the first to the
    # second value over gumbel_anneal_steps training steps
    gumbel_temperature: list[float] = field(default_factory=lambda: [1.0, 0.3],
                                            metadata={"range": (0.0, None, True, False)})
    gumbel_anneal_steps: int = bounded(10000, 1)
    # every mechanism: the alignment before the first step (mechanisms that only move forward always
    # start on the first token; for the others it is all zeros unless this is set)
    start_on_first_token: bool = False


@dataclass
class Tacotron2Config:
    """Sizes of every Tacotron2 block (defaults: NVIDIA/tacotron2, 28M parameters).

    ``max_reduction_factor`` (0 = ``reduction_factor``) sizes the frame projection so gradual
    training can switch r up to that value without changing any parameter shape.
    ``mask_padding`` zeroes padded positions after every encoder and postnet layer and keeps the
    padding symbol's embedding at zero, so an item's output does not depend on its batch; off, the
    layers run over the padding as NVIDIA/tacotron2's do. ``initialization``: PyTorch's defaults,
    or NVIDIA's (Xavier-uniform with per-layer gains, uniform embeddings).
    """

    embedding_dim: int = bounded(512, 1)
    encoder_conv_layers: int = bounded(3, 0)
    encoder_conv_channels: int = bounded(512, 1)
    encoder_kernel_size: int = bounded(5, 1)
    encoder_dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)
    encoder_lstm_dim: int = bounded(512, 2)
    prenet_dims: list[int] = field(default_factory=lambda: [256, 256], metadata={"range": (1, None, False, False)})
    prenet_dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)
    prenet_dropout_at_inference: bool = False
    prenet_bias: bool = True
    attention_rnn_dim: int = bounded(1024, 1)
    decoder_rnn_dim: int = bounded(1024, 1)
    rnn_dropout: float = bounded(0.1, 0.0, 1.0, high_open=True)
    zoneout: float = bounded(0.0, 0.0, 1.0, high_open=True)
    reduction_factor: int = bounded(1, 1)
    max_reduction_factor: int = bounded(0, 0)
    postnet_layers: int = bounded(5, 1)
    postnet_channels: int = bounded(512, 1)
    postnet_kernel_size: int = bounded(5, 1)
    postnet_dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)
    mask_padding: bool = True
    initialization: Literal["pytorch", "xavier"] = "pytorch"
    attention: AttentionConfig = field(default_factory=AttentionConfig)


@dataclass
class TransformerTTSConfig:
    """Transformer-TTS (Li et al. 2019); defaults are the paper's sizes (6+6 layers, 8 heads, d 512).

    ``guided_heads`` lists ``[layer, head]`` pairs of encoder-decoder attention (negative layers
    count from the end) that the guided attention loss is applied to.
    """

    embedding_dim: int = bounded(512, 1)
    encoder_prenet_layers: int = bounded(3, 0)
    encoder_prenet_kernel_size: int = bounded(5, 1)
    encoder_prenet_dropout: float = bounded(0.1, 0.0, 1.0, high_open=True)
    d_model: int = bounded(512, 1)
    heads: int = bounded(8, 1)
    encoder_layers: int = bounded(6, 1)
    decoder_layers: int = bounded(6, 1)
    ffn_dim: int = bounded(2048, 1)
    dropout: float = bounded(0.1, 0.0, 1.0, high_open=True)
    norm_first: bool = True
    decoder_prenet_dims: list[int] = field(default_factory=lambda: [256, 256],
                                           metadata={"range": (1, None, False, False)})
    decoder_prenet_dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)
    reduction_factor: int = bounded(1, 1)
    max_reduction_factor: int = bounded(0, 0)
    postnet_layers: int = bounded(5, 1)
    postnet_channels: int = bounded(256, 1)
    postnet_kernel_size: int = bounded(5, 1)
    postnet_dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)
    positional_alpha: float = 1.0
    guided_heads: list[list[int]] = field(default_factory=lambda: [[-1, 0], [-1, 1], [-2, 0], [-2, 1]])


ModelName = Literal["tacotron2", "transformer_tts"]


@dataclass
class ModelConfig:
    """Which acoustic model to build (``tacotron2`` or ``transformer_tts``) and its sizes.
    ``go_frame`` is the decoder's input before the first frame: all zeros (a loud frame in
    log-mel terms, as in NVIDIA/tacotron2) or silence (``audio.silence``)."""

    name: ModelName = "tacotron2"
    go_frame: Literal["zeros", "silence"] = "zeros"
    tacotron2: Tacotron2Config = field(default_factory=Tacotron2Config)
    transformer_tts: TransformerTTSConfig = field(default_factory=TransformerTTSConfig)

    @property
    def active(self) -> Tacotron2Config | TransformerTTSConfig:
        """The section of the model named by ``name``."""
        return getattr(self, self.name)


@dataclass
class GuidedAttentionConfig:
    """Guided attention loss (Tachibana et al. 2017): weight * decay**step until ``until_step``."""

    enabled: bool = True
    sigma: float = bounded(0.4, 0.0, low_open=True)
    weight: float = bounded(1.0, 0.0)
    decay: float = bounded(1.0, 0.0, 1.0, low_open=True)
    until_step: int = bounded(0, 0)


@dataclass
class AdversarialConfig:
    """A least-squares GAN term on the postnet's mels (a GAN postfilter, after Kaneko et al. 2017,
    "Generative adversarial network-based postfilter for statistical parametric speech
    synthesis"): a convolutional discriminator tells ``segment_frames``-long segments of the
    recordings' log-mels from the same segments of the model's, and the model's loss gains
    ``weight`` · adversarial + ``feature_matching_weight`` · feature matching from ``start_step``
    on (before it only the discriminator learns). Off while both weights are 0."""

    weight: float = bounded(0.0, 0.0)
    feature_matching_weight: float = bounded(0.0, 0.0)
    start_step: int = bounded(0, 0)
    segment_frames: int = bounded(64, 8)
    channels: int = bounded(64, 1)
    lr: float = bounded(1e-4, 0.0, low_open=True)

    @property
    def enabled(self) -> bool:
        return self.weight > 0 or self.feature_matching_weight > 0


@dataclass
class LossConfig:
    """Mel reconstruction, stop token and guided attention terms, and the optional adversarial
    term. ``reduction``: means over each item's real frames and steps, or (``padded``,
    NVIDIA/tacotron2's) over the whole padded batch with predictions past each length set to 0
    (mels) and 1000 (stop logits)."""

    mel_loss: Literal["mse", "l1"] = "mse"
    reduction: Literal["real_frames", "padded"] = "real_frames"
    stop_pos_weight: float = bounded(5.0, 0.0, low_open=True)
    stop_weight: float = bounded(1.0, 0.0)
    guided_attention: GuidedAttentionConfig = field(default_factory=GuidedAttentionConfig)
    adversarial: AdversarialConfig = field(default_factory=AdversarialConfig)


@dataclass
class ScheduleConfig:
    """Learning-rate schedule: ``constant``, ``exponential``, ``step`` or ``noam``."""

    kind: Literal["constant", "exponential", "step", "noam"] = "constant"
    warmup_steps: int = bounded(0, 0)
    decay_rate: float = bounded(0.5, 0.0, 1.0, low_open=True)
    decay_steps: int = bounded(50000, 1)
    step_size: int = bounded(50000, 1)
    gamma: float = bounded(0.5, 0.0, 1.0, low_open=True)
    min_lr: float = bounded(1e-5, 0.0)

    def __post_init__(self) -> None:
        if self.kind == "noam" and self.warmup_steps <= 0:
            raise ConfigError("config key 'optim.schedule.warmup_steps' must be > 0 for the noam schedule")


@dataclass
class OptimConfig:
    """Optimizer (``adam`` or ``adamw``) and its schedule."""

    optimizer: Literal["adam", "adamw"] = "adam"
    lr: float = bounded(1e-3, 0.0, low_open=True)
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999], metadata={"range": (0.0, 1.0, False, True)})
    eps: float = bounded(1e-6, 0.0, low_open=True)
    weight_decay: float = bounded(1e-6, 0.0)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)


@dataclass
class ReductionStage:
    """Gradual training: from ``step`` on, use reduction factor ``r`` and this frame budget."""

    step: int = bounded(0, 0)
    r: int = bounded(1, 1)
    max_frames_per_batch: int = bounded(8000, 1)


@dataclass
class ScheduledSamplingConfig:
    """Parallel scheduled sampling: feed the decoder its own teacher-forced predictions instead of
    the ground-truth previous frame with ``probability``, ramped linearly from 0 at ``start_step``
    over ``ramp_steps`` (0: at once). 0 disables it (plain teacher forcing)."""

    probability: float = bounded(0.0, 0.0, 1.0)
    start_step: int = bounded(0, 0)
    ramp_steps: int = bounded(0, 0)


@dataclass
class TrainConfig:
    """Trainer settings. ``freeze``: parameter-name prefixes held fixed, their BatchNorm statistics
    included (``[encoder, decoder]`` fine-tunes the postnet without moving the alignment)."""

    max_steps: int = bounded(100000, 1)
    seed: int = 1234
    grad_clip: float = bounded(1.0, 0.0, low_open=True)
    grad_accum: int = bounded(1, 1)
    amp: Literal["auto", "off", "bf16", "fp16"] = "auto"
    log_every: int = bounded(50, 1)
    validate_every: int = bounded(1000, 1)
    checkpoint_every: int = bounded(1000, 1)
    keep_last: int = bounded(3, 1)
    n_val_audio: int = bounded(2, 0)
    max_nan_steps: int = bounded(10, 1)
    r_schedule: list[ReductionStage] = field(default_factory=list)
    scheduled_sampling: ScheduledSamplingConfig = field(default_factory=ScheduledSamplingConfig)
    warm_start: str = ""
    ignore_layers: list[str] = field(default_factory=list)
    freeze: list[str] = field(default_factory=list)


@dataclass
class InferenceConfig:
    """How a trained model is run: decoding limits, the attention window and the vocoder's
    iterations. Saved in every checkpoint; command-line flags override it.

    An item stops when its stop probability exceeds ``stop_threshold`` or after
    ``min(max_decoder_steps, ceil(text_length · max_frames_per_token / r))`` steps. Safety nets
    (off by default) ignore the stop token before ``ceil(text_length · min_frames_per_token / r)``
    steps, and, with ``stop_after_last_token``, until the alignment's peak has reached the last
    spoken token.
    ``attention_window = [back, ahead]`` keeps attention within that many tokens around the
    previous step's peak, with any mechanism. Synthesis splits each text into sentences (unless
    ``split_sentences`` is off: then a text is said in one go), batches ``batch_size`` of them
    and joins the sentences of one text with ``sentence_pause`` seconds of silence.
    """

    stop_threshold: float = bounded(0.5, 0.0)
    max_decoder_steps: int = bounded(2000, 1)
    max_frames_per_token: float = bounded(20.0, 0.0, low_open=True)
    min_frames_per_token: float = bounded(0.0, 0.0)
    stop_after_last_token: bool = False
    attention_window: Optional[list[int]] = field(default=None, metadata={"range": (0, None, False, False)})
    griffin_lim_iters: int = bounded(64, 1)
    batch_size: int = bounded(8, 1)
    split_sentences: bool = True
    sentence_pause: float = bounded(0.25, 0.0)

    def __post_init__(self) -> None:
        if self.attention_window is not None and len(self.attention_window) != 2:
            raise ConfigError(f"config key 'inference.attention_window' must be [back, ahead], "
                              f"got {self.attention_window}")


@dataclass
class HiFiGANConfig:
    """HiFi-GAN (Kong et al. 2020): the generator (``configs/hifigan_v1.yaml`` … ``v3`` hold the
    paper's three; the upsampling rates must multiply to ``audio.hop_length``) and the multi-period
    discriminator's periods; ``discriminator_channels``: the widest discriminator layer (the
    paper's 1024; the other layers scale with it)."""

    upsample_initial_channel: int = bounded(512, 2)
    upsample_rates: list[int] = field(default_factory=lambda: [8, 8, 2, 2], metadata={"range": (1, None, False, False)})
    upsample_kernel_sizes: list[int] = field(default_factory=lambda: [16, 16, 4, 4],
                                             metadata={"range": (1, None, False, False)})
    resblock: Literal["1", "2"] = "1"
    resblock_kernel_sizes: list[int] = field(default_factory=lambda: [3, 7, 11],
                                             metadata={"range": (1, None, False, False)})
    resblock_dilations: list[list[int]] = field(default_factory=lambda: [[1, 3, 5], [1, 3, 5], [1, 3, 5]])
    discriminator_periods: list[int] = field(default_factory=lambda: [2, 3, 5, 7, 11],
                                             metadata={"range": (2, None, False, False)})
    discriminator_channels: int = bounded(1024, 16)


@dataclass
class VocoderConfig:
    """Training a neural vocoder: random segments of ``segment_frames`` mel frames and the matching
    audio, ``batch_size`` at a time (``num_workers`` loader processes); AdamW(``lr``, ``betas``) for
    generator and discriminators, the learning rate multiplied by ``lr_decay`` every
    ``lr_decay_every`` steps; the generator's loss is adversarial + ``feature_weight`` · feature
    matching + ``mel_weight`` · mel L1. ``mels``: the feature cache's (ground truth), or the
    teacher-forced mels of ``acoustic_checkpoint`` (fine-tuning on what the acoustic model
    really produces, Shen et al. 2018)."""

    kind: Literal["hifigan"] = "hifigan"
    hifigan: HiFiGANConfig = field(default_factory=HiFiGANConfig)
    segment_frames: int = bounded(32, 2)
    batch_size: int = bounded(16, 1)
    num_workers: int = bounded(2, 0)
    lr: float = bounded(2e-4, 0.0, low_open=True)
    betas: list[float] = field(default_factory=lambda: [0.8, 0.99], metadata={"range": (0.0, 1.0, False, True)})
    lr_decay: float = bounded(0.999, 0.0, 1.0, low_open=True)
    lr_decay_every: int = bounded(1000, 1)
    mel_weight: float = bounded(45.0, 0.0)
    feature_weight: float = bounded(2.0, 0.0)
    n_val_utterances: int = bounded(16, 1)
    mels: Literal["ground_truth", "teacher_forced"] = "ground_truth"
    acoustic_checkpoint: str = ""


@dataclass
class VocoderExperimentConfig:
    """A vocoder run: the audio settings its mels are made with, the training loop's settings
    (``train.r_schedule``, ``scheduled_sampling``, ``grad_accum``, ``ignore_layers`` and ``freeze``
    belong to acoustic models and must stay unset) and the vocoder; saved next to its checkpoints and
    inside them."""

    audio: AudioConfig = field(default_factory=AudioConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    vocoder: VocoderConfig = field(default_factory=VocoderConfig)


@dataclass
class ExperimentConfig:
    """Everything a run needs; saved verbatim next to its checkpoints and inside them."""

    audio: AudioConfig = field(default_factory=AudioConfig)
    text: TextConfig = field(default_factory=TextConfig)
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    inference: InferenceConfig = field(default_factory=InferenceConfig)


def choices(annotation: Any) -> tuple[str, ...]:
    """The allowed names of a ``Literal[...]`` option (e.g. ``choices(AttentionKind)``)."""
    return typing.get_args(annotation)


_EXPONENT_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _convert(value: Any, annotation: Any, key: str) -> Any:
    """Check ``value`` against a type annotation, converting where lossless (int → float)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _convert(value, inner, key)
    if origin is Literal:
        allowed = typing.get_args(annotation)
        if value not in allowed:
            raise ConfigError(f"config key '{key}' must be one of {', '.join(allowed)}, got {value!r}")
        return value
    if dataclasses.is_dataclass(annotation):
        if not isinstance(value, dict):
            raise ConfigError(f"config key '{key}' must be a mapping, got {type(value).__name__}")
        return _build(annotation, value, key)
    if origin is list:
        if isinstance(value, tuple):
            value = list(value)
        if not isinstance(value, list):
            raise ConfigError(f"config key '{key}' must be a list, got {type(value).__name__}")
        (inner,) = typing.get_args(annotation)
        return [_convert(v, inner, f"{key}[{i}]") for i, v in enumerate(value)]
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation is float and isinstance(value, str) and _EXPONENT_FLOAT.fullmatch(value.strip()):
        return float(value)  # YAML 1.1 reads "5e-4" (no dot) as a string
    if annotation in (int, float, str, bool) and type(value) is not annotation:
        raise ConfigError(
            f"config key '{key}' must be {annotation.__name__}, got {value!r} ({type(value).__name__})"
        )
    return value


def _build(cls: type[T], data: dict[str, Any], prefix: str = "") -> T:
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs = {}
    for key, value in data.items():
        full = f"{prefix}.{key}" if prefix else str(key)
        if key not in fields:
            raise ConfigError(
                f"unknown config key '{full}' (valid keys here: {', '.join(sorted(fields))})"
            )
        kwargs[key] = _convert(value, hints[key], full)
        limits = fields[key].metadata.get("range")
        if limits and not _in_range(kwargs[key], *limits):
            raise ConfigError(f"config key '{full}' must be {_range_text(*limits)}, got {value!r}")
    return cls(**kwargs)


def config_from_dict(data: dict[str, Any], schema: type[T] = ExperimentConfig) -> T:  # type: ignore[assignment]
    """Build a config (an :class:`ExperimentConfig`, or the ``schema`` given) from nested dicts;
    unknown keys are errors."""
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"a config must be a mapping, got {type(data).__name__}")
    return _build(schema, data or {})


def config_to_dict(config: Any) -> dict[str, Any]:
    """Plain nested dicts (YAML/JSON/checkpoint friendly)."""
    return dataclasses.asdict(config)


def with_overrides(section: T, prefix: str, **overrides: Any) -> T:
    """A copy of a config section with some fields replaced, checked like a loaded file
    (``prefix`` names the section in error messages, e.g. ``inference``)."""
    return _build(type(section), {**config_to_dict(section), **overrides}, prefix)


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


def load_config(path: Optional[str | Path] = None, overrides: Optional[list[str]] = None,
                schema: type[T] = ExperimentConfig) -> T:  # type: ignore[assignment]
    """Read a YAML config (or the defaults when ``path`` is None) and apply overrides; ``schema``:
    :class:`ExperimentConfig` (acoustic models) or :class:`VocoderExperimentConfig`."""
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
        except UnicodeDecodeError:
            raise ConfigError(f"config file {path} is not UTF-8 text") from None
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path} must hold a mapping at the top level")
        if ("vocoder" in data) != (schema is VocoderExperimentConfig):
            raise ConfigError(f"config file {path} is a vocoder config: train it with 'tts train-vocoder'"
                              if "vocoder" in data else
                              f"config file {path} is an acoustic model config; 'tts train-vocoder' takes a "
                              f"vocoder config (configs/hifigan_v1.yaml, _v2, _v3)")
    apply_overrides(data, overrides or [])
    return config_from_dict(data, schema)


def save_config(config: ExperimentConfig | VocoderExperimentConfig, path: str | Path) -> None:
    """Write the config as YAML (loadable by :func:`load_config`)."""
    Path(path).write_text(yaml.safe_dump(config_to_dict(config), sort_keys=False))
