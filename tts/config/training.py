"""How an acoustic model is trained: losses, optimizer and schedule, and the training loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tts.config.schema import bounded, bounded_list, only_for
from tts.errors import ConfigError


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
            raise ConfigError.for_key("warmup_steps", "must be > 0 for the noam schedule")


@dataclass
class OptimConfig:
    """Optimizer (``adam`` or ``adamw``) and its schedule."""

    optimizer: Literal["adam", "adamw"] = "adam"
    lr: float = bounded(1e-3, 0.0, low_open=True)
    betas: list[float] = bounded_list([0.9, 0.999], 0.0, 1.0, high_open=True, length=2)
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
class LearningRateScale:
    """Parameters under the module path ``prefix`` learn at ``scale`` times the schedule's rate
    (discriminative fine-tuning: ``{prefix: decoder, scale: 0.1}`` moves the decoder a tenth as fast)."""

    prefix: str = ""
    scale: float = bounded(1.0, 0.0, low_open=True)

    def __post_init__(self) -> None:
        if not self.prefix.strip():
            raise ConfigError.for_key("prefix", "must name a parameter-name prefix (e.g. decoder)")


@dataclass
class WeightAnchor:
    """Parameters under the module path ``prefix`` are pulled back toward the warm start's values
    after every optimizer step: ``θ ← θ − lr · strength · (θ − θ_warm)``, L2-SP (Li et al. 2018,
    "Explicit inductive bias for transfer learning with convolutional networks") in the decoupled
    form of AdamW's decay, whose target is the warm start instead of 0. ``1 / (lr · strength)`` is
    the number of updates in which a parameter left alone would return most of the way (1 − 1/e)."""

    prefix: str = ""
    strength: float = bounded(1.0, 0.0, low_open=True)

    def __post_init__(self) -> None:
        if not self.prefix.strip():
            raise ConfigError.for_key("prefix", "must name a parameter-name prefix (e.g. encoder)")


@dataclass
class ScheduledSamplingConfig:
    """Parallel scheduled sampling: feed the decoder its own teacher-forced predictions instead of
    the ground-truth previous frame with ``probability``, ramped linearly from 0 at ``start_step``
    over ``ramp_steps`` (0: at once). 0 disables it (plain teacher forcing). ``passes``: how many
    gradient-free passes build the inputs, each fed the previous one's mix, so a decoder input can
    carry up to ``passes`` steps of the model's own error (1: Duckworth et al.'s single pass).
    ``min_frames``: utterances with fewer mel frames are always teacher-forced (single words and
    short phrases keep the recordings as inputs)."""

    probability: float = bounded(0.0, 0.0, 1.0)
    start_step: int = bounded(0, 0)
    ramp_steps: int = bounded(0, 0)
    passes: int = bounded(1, 1)
    min_frames: int = bounded(0, 0)


@dataclass
class TrainConfig:
    """Trainer settings. ``amp``: autocast precision (``auto``: bf16 on a GPU that has it, off on
    the CPU; ``bf16`` also on the CPU). ``freeze``: module paths held fixed, their BatchNorm
    statistics included (``[encoder, decoder]`` fine-tunes the postnet without moving the alignment;
    a path names whole modules, so ``decoder.attention`` leaves ``decoder.attention_rnn`` alone).
    ``lr_scales``: per-module-path learning-rate factors (:class:`LearningRateScale`; the longest
    matching path applies). ``anchors``: module paths pulled back toward ``warm_start`` after every
    step (:class:`WeightAnchor`; the longest matching path applies)."""

    max_steps: int = bounded(100000, 1)
    seed: int = 1234
    grad_clip: float = bounded(1.0, 0.0, low_open=True)
    grad_accum: int = only_for("acoustic", bounded(1, 1))
    max_nan_steps: int = bounded(10, 1)
    amp: Literal["auto", "off", "bf16", "fp16"] = "auto"
    # logs, validations (with audio of n_val_audio utterances) and the last keep_last checkpoints
    log_every: int = bounded(50, 1)
    validate_every: int = bounded(1000, 1)
    n_val_audio: int = bounded(2, 0)
    checkpoint_every: int = bounded(1000, 1)
    keep_last: int = bounded(3, 1)
    r_schedule: list[ReductionStage] = only_for("acoustic", field(default_factory=list))
    scheduled_sampling: ScheduledSamplingConfig = only_for("acoustic", field(default_factory=ScheduledSamplingConfig))
    warm_start: str = ""
    ignore_layers: list[str] = only_for("acoustic", field(default_factory=list))
    freeze: list[str] = only_for("acoustic", field(default_factory=list))
    lr_scales: list[LearningRateScale] = only_for("acoustic", field(default_factory=list))
    anchors: list[WeightAnchor] = only_for("acoustic", field(default_factory=list))

    def __post_init__(self) -> None:
        for key, entries in (("lr_scales", self.lr_scales), ("anchors", self.anchors)):
            prefixes = [entry.prefix for entry in entries]
            repeated = sorted({prefix for prefix in prefixes if prefixes.count(prefix) > 1})
            if repeated:
                raise ConfigError.for_key(key, f"names a prefix more than once ({', '.join(repeated)})")
        if self.anchors and not self.warm_start:
            raise ConfigError.for_key("anchors", "pulls parameters back toward the warm start's; set train.warm_start too")
